"""Where the independent units of an evaluation run: in this process (``local``), in worker
processes of this machine (``process``), or on a Ray cluster (``ray``).

- :mod:`.base`: the interface every executor has (:meth:`Executor.map`), the local
  executor, and :class:`WorkerLost`;
- :mod:`.travel`: how units, their shared object and results travel to and from a worker;
- :mod:`.process`: worker processes of this machine;
- :mod:`.rayactors`: Ray actors (:mod:`ragassay.localray` starts a local Ray).

Ray: ``ray.init(address=...)`` joins an existing cluster (ragassay must be installed on its
nodes); without an address a local Ray is started for the run, on 127.0.0.1 only (its node
address given explicitly, no dashboard, no usage statistics, no cloud metadata probe, no
worker logs echoed: :mod:`ragassay.localray`) and shut down at the end. A Ray session
already started in this process is used as it is.

Faults of the environment are bad input (exit 2), never "a bug": a worker process or actor
that dies before its unit ends (:class:`WorkerLost`), a Ray that does not start or a
cluster that cannot be joined.
"""

from __future__ import annotations

from typing import Literal

from .base import Executor, LocalExecutor, WorkerLost, chunked, cpu_count, split
from .process import ProcessExecutor
from .rayactors import RayExecutor

__all__ = ["KINDS", "Executor", "ExecutorKind", "LocalExecutor", "ProcessExecutor",
           "RayExecutor", "WorkerLost", "chunked", "cpu_count", "open_executor", "split"]

ExecutorKind = Literal["local", "process", "ray"]
KINDS: tuple[str, ...] = ("local", "process", "ray")


def open_executor(kind: str = "local", workers: int | None = None,
                  address: str | None = None) -> Executor:
    """The executor of ``kind`` with ``workers`` workers (default: the cores of this
    machine for ``process`` and a local ``ray``; 1 for ``local``, which has no other).
    ``address``: the Ray cluster to join (``ray`` only). Use it as a context manager: the
    workers (and a Ray it started) end with the block."""
    if kind == "local":
        return LocalExecutor(1)
    if kind == "process":
        return ProcessExecutor(workers or cpu_count())
    if kind == "ray":
        return RayExecutor(workers or cpu_count(), address)
    raise ValueError(f"unknown executor {kind!r}; known: {', '.join(KINDS)}")
