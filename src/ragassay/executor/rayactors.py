"""The ``ray`` executor: Ray actors on a cluster, or on a local Ray started for the run.

Faults of the user's environment are bad input (exit 2), never a bug: a Ray that does not
start or a cluster that cannot be joined (:class:`~ragassay.errors.InputError` naming
``executor.address`` or ``executor.kind``), and an actor that dies before its unit ends
(killed, out of memory, its node lost: :class:`~ragassay.executor.base.WorkerLost`).
"""

from __future__ import annotations

import logging
import os
import pickle
import re
import socket
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..errors import InputError
from ..localray import LOCALHOST, quiet_raylet_errors, start_local_ray
from .base import Executor, Failed, WorkerLost
from .process import rows_in_file
from .travel import decode, dumps, encode_ids, one_thread, shared_object

T = TypeVar("T")
S = TypeVar("S")

# Ray's errors for a unit that ended with its actor, not with its own exception
_LOST = ("RayActorError", "WorkerCrashedError", "OutOfMemoryError", "NodeDiedError",
         "ObjectLostError", "OwnerDiedError")


class RayWorker:
    """A Ray actor: one worker process that keeps the shared objects it was sent."""

    def __init__(self) -> None:
        one_thread()  # Ray gives a one-CPU actor one thread, unless told otherwise: the same

    def run(self, key: str, box: list[Any], fn: Callable[[Any, list[Any]], Any],
            chunk: bytes) -> Any:
        import ray

        # ``box`` holds the object reference unresolved: fetched only on the first use
        return encode_ids(fn(shared_object(key, lambda: ray.get(box[0])), pickle.loads(chunk)))


def first_line(exc: BaseException, most: int = 300) -> str:
    """The first non-empty line of an exception's text (Ray's run to dozens of lines, with
    log excerpts), at most ``most`` characters; its type's name when it has no text."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= most else text[: most - 1] + "…"


# ``host:port`` or ``ray://host:port`` (host a name, an IPv4 address or ``[IPv6]``)
_HOST_PORT = re.compile(r"(?:ray://)?(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(\d{1,5})")
PROBE_TIMEOUT_S = 5.0


def probe_address(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Refuse a cluster address where nothing accepts a connection, before ``ray.init``:
    Ray's own connect loop retries for minutes there (and a shorter limit of its own ends
    the process from C++). Any other form (``auto``) is left to Ray."""
    m = _HOST_PORT.fullmatch(address.strip())
    if m is None:
        return
    host, port = m.group(1).strip("[]"), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        why = f"no answer within {timeout_s:g} s" if isinstance(exc, TimeoutError) else \
            (exc.strerror or type(exc).__name__)
        raise InputError("executor.address", f"could not join the Ray cluster at {address}: "
                         f"nothing accepts a connection at {host}:{port} ({why}): check that "
                         "the cluster runs and the address, or use --executor process") from None


def start_ray(workers: int, address: str | None) -> None:
    """Join the cluster at ``address``, or start a local Ray with ``workers`` CPUs. Any
    failure is the user's environment: an :class:`InputError` (exit 2) naming the field
    and what to do, with the first line of Ray's own message."""
    import ray

    if address:
        probe_address(address)
    try:
        if address:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            quiet_raylet_errors()
        else:
            start_local_ray(workers)
    except InputError:
        raise
    except Exception as exc:  # whatever Ray raises: the user's cluster or machine
        ray.shutdown()  # what a failed start left half-done
        if address:
            raise InputError("executor.address", f"could not join the Ray cluster at "
                             f"{address}: {first_line(exc)}: check that the cluster runs "
                             "and the address, or use --executor process") from None
        raise InputError("executor.kind", f"could not start a local Ray: {first_line(exc)}: "
                         "see the logs of Ray's session folder, or use "
                         "--executor process") from None


def is_lost(ray: Any, exc: BaseException) -> bool:
    """Whether ``exc`` (from ``ray.get``) says that the actor or its node died, rather than
    the unit raising."""
    kinds = tuple(getattr(ray.exceptions, name) for name in _LOST
                  if isinstance(getattr(ray.exceptions, name, None), type))
    return isinstance(exc, kinds)


class RayExecutor(Executor):
    """``workers`` Ray actors (one CPU each) on the cluster at ``address``, or on a local
    Ray started for this executor (:func:`start_local_ray`) when there is no address and no
    Ray session in this process. Each shared object is put in Ray's object store once and
    fetched once by each actor. Once an actor is lost, the units not yet ended fail with
    :class:`WorkerLost` (no unit is run twice), and so does every later map."""

    kind = "ray"
    receives = True

    def __init__(self, workers: int, address: str | None = None) -> None:
        super().__init__(workers)
        self.address = address
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            import ray
        except ImportError:
            from ..errors import MissingPackage

            raise MissingPackage("executor.kind: ray", "ray", "ray", "the ray executor") from None
        self._started = False
        self._lost: WorkerLost | None = None
        if not ray.is_initialized():
            start_ray(workers, address)
            self._started = True
        actor = ray.remote(num_cpus=1)(RayWorker)
        self._actors = [actor.remote() for _ in range(workers)]
        self._refs: dict[str, Any] = {}
        # every node on the loopback (a local Ray): the actors share this machine's files
        self._here = all(node.get("NodeManagerAddress") == LOCALHOST
                         for node in ray.nodes() if node.get("Alive"))

    def map_rows(self, fn: Callable[[S, list[T]], np.ndarray], chunks: Sequence[list[T]],
                 shared: S, *, row_shape: tuple[int, ...], dtype: Any,
                 done: Callable[[int], None] | None = None) -> np.ndarray:
        """As :meth:`Executor.map_rows`; on a local Ray the actors write their rows in place
        into one array file mapped by this process too (:func:`rows_in_file`)."""
        if not self._here:
            return super().map_rows(fn, chunks, shared, row_shape=row_shape, dtype=dtype,
                                    done=done)
        return rows_in_file(self, fn, chunks, shared, row_shape=row_shape, dtype=dtype,
                            done=done, fallback=Path(tempfile.gettempdir()))

    def _run(self, fn: Callable[[Any, list[Any]], Any], chunks: list[list[Any]],
             shared: Any) -> Any:
        import ray

        key, new = self._key(shared)
        if new:
            self._refs[key] = ray.put(shared)
        box = [self._refs[key]]
        todo = list(enumerate(chunks))[::-1]
        running: dict[Any, tuple[int, Any]] = {}  # object ref → (chunk index, actor)
        free = list(self._actors)
        while todo or running:
            if self._lost is not None:  # nothing more is started; what runs ends first
                while todo:
                    yield todo.pop()[0], Failed(self._lost)
                if not running:
                    return
            while todo and free:
                i, chunk = todo.pop()
                actor = free.pop()
                task = getattr(actor, "run").remote(key, box, fn,  # noqa: B009
                                                    dumps(chunk))
                running[task] = (i, actor)
            finished, _ = ray.wait(list(running), num_returns=1)
            for ref in finished:
                i, actor = running.pop(ref)
                try:
                    out = decode(unwrap(ray, ref))
                except Exception as exc:  # map raises the first in input order
                    if is_lost(ray, exc):
                        out = Failed(self._actor_lost(exc))
                        self._actors.remove(actor)
                    else:
                        out = Failed(exc)
                        free.append(actor)
                else:
                    free.append(actor)
                yield i, out

    def _actor_lost(self, exc: BaseException) -> WorkerLost:
        if self._lost is None:
            self._lost = WorkerLost(
                f"a Ray actor died before its unit ended ({type(exc).__name__}: killed, out "
                "of memory, or its node lost): rerun, with fewer workers (--workers) or "
                "--executor process")
        return self._lost

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "workers": self.workers}

    def close(self) -> None:
        import ray

        for actor in getattr(self, "_actors", []):
            ray.kill(actor)
        self._actors = []
        self._refs.clear()
        if getattr(self, "_started", False):
            ray.shutdown()
            self._started = False
        super().close()


def unwrap(ray: Any, ref: Any) -> Any:
    """The result of a finished task; a task's exception raised as itself (Ray wraps it)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(exc.cause, BaseException) else None
        if cause is not None:
            raise cause from None
        raise
