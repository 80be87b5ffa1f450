"""What every unit of an evaluation reads (:class:`Work`: the config and the inputs, sent to
each worker once), and how an endpoint's calls in flight and the run's deadline are shared
out among the workers of a stage (:mod:`ragassay.predict`, :mod:`ragassay.scoring`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .config import EvalConfig
from .executor import Executor
from .inputs import Inputs

if TYPE_CHECKING:  # the pipeline pulls in retrievers and embedders: imported when used
    from .endpoint import EndpointConfig
    from .pipeline import Pipeline


@dataclass
class Work:
    """What every unit of an evaluation reads: the config and the inputs. An executor sends
    it to each worker once (:mod:`ragassay.executor`); a worker builds its own pipeline
    from it, when a unit first needs one (the pipeline is not sent: its clients and search
    structures are rebuilt, not pickled)."""

    cfg: EvalConfig
    inputs: Inputs
    built: Pipeline | None = None

    def pipeline(self) -> Pipeline:
        if self.built is None:
            from .pipeline import Pipeline

            self.built = Pipeline(self.inputs.store, self.cfg)
        return self.built

    def __getstate__(self) -> dict[str, Any]:
        return {"cfg": self.cfg, "inputs": self.inputs, "built": None}


def work_of(executor: Executor, cfg: EvalConfig, inputs: Inputs,
            pipeline: Pipeline | None = None) -> Work:
    """The one :class:`Work` of ``cfg`` and ``inputs`` for ``executor``'s life (so that a
    sweep's settings send it to the workers once); ``pipeline``, when given, is the one the
    local executor's units use."""
    work: Work = executor.keep(("work", id(cfg), id(inputs)), lambda: Work(cfg, inputs))
    if pipeline is not None and work.built is None:
        work.built = pipeline
    return work


def served_concurrency(endpoint: EndpointConfig) -> int:
    """The calls in flight an endpoint takes: its ``concurrency``, else what the server says
    (:attr:`~ragassay.endpoint.OpenAICompatClient.concurrency`), asked once by the driver so
    that the workers share out one number."""
    if endpoint.concurrency is not None:
        return endpoint.concurrency
    from .endpoint import OpenAICompatClient

    with OpenAICompatClient(endpoint) as client:
        return client.concurrency


def deadline_s(seconds: float | None) -> float | None:
    """The run's deadline as wall-clock time: the one clock every worker (and machine)
    shares; each worker turns what is left of it into its own ``run_timeout_s``."""
    return None if seconds is None else time.time() + seconds
