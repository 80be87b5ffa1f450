"""The ``process`` executor: worker processes of this machine, and the array file that the
workers of this machine (processes, a local Ray's actors) write their rows into.

A worker that ends without returning its unit's result (killed by a signal, the
out-of-memory killer, ``os._exit``) breaks the pool: every unit not yet ended fails with
:class:`~ragassay.executor.base.WorkerLost`, the user's environment, not a bug (exit 2).
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..atomic import write_bytes
from .base import Executor, Failed, WorkerLost, check_rows
from .travel import decode, dumps, encode_ids, one_thread, read_pickle, shared_object

T = TypeVar("T")
S = TypeVar("S")


def process_unit(key: str, path: str, fn: Callable[[Any, list[Any]], Any],
                 chunk: bytes) -> Any:
    """A chunk (:func:`~.travel.dumps`) in a worker process; the shared object is read from
    its file once."""
    return encode_ids(fn(shared_object(key, lambda: read_pickle(path)), pickle.loads(chunk)))


def rows_unit(fn: Callable[[Any, list[Any]], np.ndarray], path: str, shape: tuple[int, ...],
              dtype: str, shared: Any, chunk: list[tuple[int, Any]]) -> list[None]:
    """A chunk of ``(row, item)`` pairs on a worker process: ``fn``'s rows for the items
    written in place into the array file at ``path`` (shared with the driver), from the
    chunk's first row on."""
    rows = fn(shared, [item for _, item in chunk])
    check_rows(rows, (len(chunk), *shape[1:]), np.dtype(dtype))
    out = np.memmap(path, dtype=dtype, mode="r+", shape=shape)
    out[chunk[0][0] : chunk[0][0] + len(chunk)] = rows
    del out  # unmapped: the rows are in the file's pages, which the driver maps too
    return [None] * len(chunk)


def rows_folder(size: int, fallback: Path) -> Path:
    """Where an array shared with the workers lives: /dev/shm (memory, never written to a
    disk) when it has room for it twice over, else the executor's temporary folder."""
    shm = Path("/dev/shm")
    try:
        stat = os.statvfs(shm)
    except OSError:  # not on every OS
        return fallback
    return shm if stat.f_bavail * stat.f_frsize > 2 * size else fallback


def rows_in_file(executor: Executor, fn: Callable[[S, list[T]], np.ndarray],
                 chunks: Sequence[list[T]], shared: S, *, row_shape: tuple[int, ...],
                 dtype: Any, done: Callable[[int], None] | None, fallback: Path
                 ) -> np.ndarray:
    """:meth:`Executor.map_rows` for workers on this machine: each unit writes its rows in
    place into one array file (:func:`rows_folder`) that this process maps, so no row
    travels back (80 MB of embeddings through a pipe cost this process as much CPU as the
    workers' embedding of them). The file's name is gone when this returns; the mapping
    stays the array's."""
    n = sum(map(len, chunks))
    shape = (n, *row_shape)
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    if size == 0:
        return np.empty(shape, dtype=dtype)
    fd, name = tempfile.mkstemp(prefix="ragassay-rows-", suffix=".array",
                                dir=rows_folder(size, fallback))
    try:
        os.ftruncate(fd, size)
        numbered, start = [], 0
        for chunk in chunks:
            numbered.append(list(zip(range(start, start + len(chunk)), chunk, strict=True)))
            start += len(chunk)
        executor.map_chunks(partial(rows_unit, fn, name, shape, dtype.str), numbered, shared,
                            done=done)
        return np.asarray(np.memmap(name, dtype=dtype, mode="r+", shape=shape))
    finally:
        os.close(fd)
        os.unlink(name)


def how_it_ended(exitcode: int | None) -> str:
    """A worker's end in words: ``killed by SIGKILL`` (a negative exit code is the signal),
    ``exited with code 1``, or ``ended`` when the code is unknown."""
    if exitcode is None:
        return "ended"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


class ProcessExecutor(Executor):
    """``workers`` processes of this machine (``forkserver`` where the OS has it, else
    ``spawn``: no fork of a process holding threads), each with one BLAS thread (as Ray
    gives a one-CPU actor). Each shared object is pickled once to a private temporary
    folder, and each worker reads it once."""

    kind = "process"
    receives = True

    def __init__(self, workers: int) -> None:
        import multiprocessing

        super().__init__(workers)
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
            else "spawn"
        self._pool = ProcessPoolExecutor(max_workers=workers,
                                         mp_context=multiprocessing.get_context(method),
                                         initializer=one_thread)
        self._dir = Path(tempfile.mkdtemp(prefix="ragassay-shared-"))
        self._paths: dict[str, str] = {}
        self._lost: WorkerLost | None = None  # once a worker is lost, the pool is broken

    def _run(self, fn: Callable[[Any, list[Any]], Any], chunks: list[list[Any]],
             shared: Any) -> Any:
        if self._lost is not None:
            raise self._lost
        key, new = self._key(shared)
        if new:
            path = self._dir / f"{key}.pickle"
            write_bytes(path, dumps(shared))
            self._paths[key] = str(path)
        futures: dict[Future[Any], int] = {
            self._pool.submit(process_unit, key, self._paths[key], fn, dumps(chunk)): i
            for i, chunk in enumerate(chunks)}
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in sorted(finished, key=futures.__getitem__):
                    error = f.exception()
                    if isinstance(error, BrokenProcessPool):
                        error = self._worker_lost()
                    yield futures[f], (decode(f.result()) if error is None else Failed(error))
        finally:
            for f in pending:
                f.cancel()

    def _worker_lost(self) -> WorkerLost:
        """The error of every unit a broken pool did not end: how its worker ended (the
        exit code of the first worker that ended, read from the pool's processes)."""
        if self._lost is None:
            processes = list((getattr(self._pool, "_processes", None) or {}).values())
            # the pool is unusable: its workers joined first, so that each exit code is the
            # one the pool's own thread read (two readers of a worker's status can race)
            self._pool.shutdown(wait=True, cancel_futures=True)
            codes = [p.exitcode for p in processes]
            # the pool terminates the other workers itself (SIGTERM) once one is lost; a
            # signal says more than the exit code of a worker whose peer took it down
            dead = sorted((c for c in codes if c and c != -signal.SIGTERM),
                          key=lambda c: c > 0)
            self._lost = WorkerLost(
                f"a worker process {how_it_ended(dead[0] if dead else None)} before its "
                "unit ended (the out-of-memory killer, or a signal sent to it): rerun, with "
                "fewer workers (--workers) or --executor local if memory is short")
        return self._lost

    def map_rows(self, fn: Callable[[S, list[T]], np.ndarray], chunks: Sequence[list[T]],
                 shared: S, *, row_shape: tuple[int, ...], dtype: Any,
                 done: Callable[[int], None] | None = None) -> np.ndarray:
        """As :meth:`Executor.map_rows`, the workers writing their rows in place into one
        array file mapped by this process too (:func:`rows_in_file`)."""
        return rows_in_file(self, fn, chunks, shared, row_shape=row_shape, dtype=dtype,
                            done=done, fallback=self._dir)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._dir, ignore_errors=True)
        super().close()
