"""What every executor is: :class:`Executor` (its interface, :meth:`Executor.map`), the
``local`` one, and the error of a worker lost (:class:`WorkerLost`).

One interface, :meth:`Executor.map`: ``fn(shared, chunk)`` over consecutive chunks of
``items``, results in input order (:meth:`Executor.map_chunks`: one result per chunk).
``fn`` is a module-level function (or a ``functools.partial`` of one) so that it pickles by
name; ``shared`` is what every unit reads (the config and the loaded inputs) and is sent to
each worker once, not with every unit (:mod:`.travel`).

A unit's result never depends on the chunk it ran in or on the worker that ran it, so every
executor and worker count gives the same results (the executor-equivalence test checks
it byte for byte).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..collector import collector_paused
from ..errors import InputError

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")
U = TypeVar("U")


def cpu_count() -> int:
    """The cores this process may use (its affinity mask where the OS has one)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on every OS
        return os.cpu_count() or 1


def chunked(items: Sequence[T], size: int) -> list[list[T]]:
    """``items`` in consecutive lists of ``size`` (the last one shorter)."""
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def split(items: Sequence[T], parts: int) -> list[list[T]]:
    """``items`` in at most ``parts`` consecutive lists whose sizes differ by at most one."""
    parts = max(1, min(parts, len(items)))
    base, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + base + (i < extra)
        out.append(list(items[start:end]))
        start = end
    return [p for p in out if p]


# --- the executors --------------------------------------------------------------------


def check_rows(rows: Any, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """Raise ``ValueError`` unless ``rows`` is an array of ``shape`` and ``dtype`` (what a
    unit of :meth:`Executor.map_rows` must return)."""
    if not isinstance(rows, np.ndarray) or rows.shape != shape or rows.dtype != dtype:
        got = (f"shape {rows.shape}, {rows.dtype}" if isinstance(rows, np.ndarray)
               else type(rows).__name__)
        raise ValueError(f"a unit returned {got} for {shape[0]} items; expected shape "
                         f"{shape}, {dtype}")


class WorkerLost(InputError):
    """A worker (process or Ray actor) that ended before its unit did: killed by a signal or
    the out-of-memory killer, or its node lost. The user's environment, not a bug: bad input
    (exit 2), since the units it held have no result and the run stops. ``message`` says how
    it ended and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__("--executor", message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (WorkerLost, (self.message,))


class Failed:
    """A chunk whose unit raised ``error`` (what :meth:`Executor._run` yields for it)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Executor:
    """Runs ``fn(shared, chunk)`` over chunks of items; :class:`LocalExecutor` in process."""

    kind: str = "local"
    # Whether the units run elsewhere and this process only receives their results
    receives: bool = False

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self._keys: dict[int, tuple[Any, str]] = {}  # id(shared) → (shared, key)
        self._kept: dict[Any, Any] = {}

    def keep(self, key: Any, make: Callable[[], S]) -> S:
        """One object per ``key`` for the executor's life, made by ``make`` on first use:
        the shared object of several maps (sent to the workers once)."""
        if key not in self._kept:
            self._kept[key] = make()
        return self._kept[key]

    def map(self, fn: Callable[[S, list[T]], list[R]], items: Sequence[T], shared: S, *,
            chunk_size: int | None = None, chunks: list[list[T]] | None = None,
            done: Callable[[int], None] | None = None) -> list[R]:
        """``fn(shared, chunk)`` for consecutive chunks of ``items`` (``chunk_size`` each; by
        default about four chunks per worker), or for the given ``chunks`` (which must be
        ``items`` split in order); the results concatenated in input order. ``fn`` returns one
        result per item. ``done`` and errors: as :meth:`map_chunks`."""
        if not items:
            return []
        if chunks is None:
            chunks = chunked(items, chunk_size or self.unit_size(len(items)))
        parts = self.map_chunks(fn, chunks, shared, done=done)
        for part, chunk in zip(parts, chunks, strict=True):
            if len(part) != len(chunk):
                raise RuntimeError(f"{fn!r} returned {len(part)} results for {len(chunk)} "
                                   "items")
        return [r for part in parts for r in part]

    def unit_size(self, n: int, *, multiple: int = 1, most: int | None = None) -> int:
        """Items per unit for ``n`` items: about four units per worker (few round trips to
        the workers, each costing this process, and still more units for a worker that ends
        early), rounded up to a multiple of ``multiple`` (a unit of whole batches), at most
        ``most`` (a multiple of ``multiple``) when given."""
        size = max(1, -(-n // (4 * self.workers)))
        size = -(-size // multiple) * multiple
        return min(size, most) if most is not None else size

    def map_chunks(self, fn: Callable[[S, list[T]], U], chunks: Sequence[list[T]], shared: S,
                   *, done: Callable[[int], None] | None = None) -> list[U]:
        """``fn(shared, chunk)`` for each chunk, what each returned in the chunks' order (for
        a unit whose result is one object for its chunk, such as an array with a row per
        item: one object travels back, not one per item). ``done(n)`` is called in this
        process as each chunk of n items ends (for progress). When units raise, the
        exception of the first failing chunk in order is raised, once every chunk has ended:
        the same error on every executor."""
        results: dict[int, U] = {}
        failed: dict[int, BaseException] = {}
        with collector_paused(self.receives):
            for i, out in self._run(fn, list(chunks), shared):
                if isinstance(out, Failed):
                    failed[i] = out.error
                    continue
                results[i] = out
                if done is not None:
                    done(len(chunks[i]))
        if failed:
            raise failed[min(failed)]
        return [results[i] for i in range(len(chunks))]

    def map_rows(self, fn: Callable[[S, list[T]], np.ndarray], chunks: Sequence[list[T]],
                 shared: S, *, row_shape: tuple[int, ...], dtype: Any,
                 done: Callable[[int], None] | None = None) -> np.ndarray:
        """:meth:`map_chunks` for a unit that returns an array of ``dtype`` with a row of
        ``row_shape`` per item (embeddings): the rows of every chunk in one array, in order.
        A unit whose array has another shape or dtype raises ``ValueError``."""
        out = np.empty((sum(map(len, chunks)), *row_shape), dtype=dtype)
        start = 0
        for chunk, rows in zip(chunks, self.map_chunks(fn, chunks, shared, done=done),
                               strict=True):
            check_rows(rows, (len(chunk), *row_shape), out.dtype)
            out[start : start + len(chunk)] = rows
            start += len(chunk)
        return out

    def _key(self, shared: Any) -> tuple[str, bool]:
        """The key of ``shared`` and whether it is new to this executor. The object is kept
        referenced so that its ``id`` is not reused by another one."""
        known = self._keys.get(id(shared))
        if known is not None:
            return known[1], False
        key = f"{os.getpid()}-{len(self._keys)}"
        self._keys[id(shared)] = (shared, key)
        return key, True

    def _run(self, fn: Callable[[Any, list[Any]], Any], chunks: list[list[Any]],
             shared: Any) -> Any:
        """``(chunk index, its results or a Failed)`` for every chunk, in any order."""
        for i, chunk in enumerate(chunks):
            try:
                out = fn(shared, chunk)
            except Exception as exc:  # map raises it
                yield i, Failed(exc)
                return  # in this process, in order: the later chunks are not needed
            yield i, out

    def describe(self) -> dict[str, Any]:
        """How the units ran (kind and workers), for the run's timings."""
        return {"kind": self.kind, "workers": self.workers}

    def close(self) -> None:
        self._keys.clear()
        self._kept.clear()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalExecutor(Executor):
    """Every unit in this process, one after the other."""
