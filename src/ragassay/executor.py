# Over 400 lines: three executors and the pickling they share; to split per executor.
"""Where the independent units of an evaluation run: in this process (``local``), in worker
processes of this machine (``process``), or on a Ray cluster (``ray``).

One interface, :meth:`Executor.map`: ``fn(shared, chunk)`` over consecutive chunks of
``items``, results in input order (:meth:`Executor.map_chunks`: one result per chunk).
``fn`` is a module-level function (or a ``functools.partial`` of one) so that it pickles by
name; ``shared`` is what every unit reads (the config and the loaded inputs) and is sent to
each worker once, not with every unit: a worker keeps the last :data:`KEPT_SHARED` shared
objects it received, by key.

A unit's result never depends on the chunk it ran in or on the worker that ran it, so every
executor and worker count gives the same results (the executor-equivalence test checks
it byte for byte).

Ray: ``ray.init(address=...)`` joins an existing cluster (ragassay must be installed on its
nodes); without an address a local Ray is started for the run, on 127.0.0.1 only (its node
address given explicitly, no dashboard, no usage statistics, no cloud metadata probe, no
worker logs echoed: :mod:`.localray`) and shut down at the end. A Ray session already
started in this process is used as it is.
"""

from __future__ import annotations

import gc
import io
import logging
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from .atomic import write_bytes
from .localray import LOCALHOST, start_local_ray

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")
U = TypeVar("U")

ExecutorKind = Literal["local", "process", "ray"]
KINDS: tuple[str, ...] = ("local", "process", "ray")
KEPT_SHARED = 2  # shared objects a worker keeps (a sweep alternates two stages' objects)


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


# --- the worker side -----------------------------------------------------------------

_kept: dict[str, Any] = {}  # in a worker: the shared objects received, by key


def _shared_object(key: str, load: Callable[[], Any]) -> Any:
    """The shared object of ``key``, loaded on first use. A worker only reads it, so it is
    frozen out of the cyclic garbage collector: otherwise every full collection walks its
    millions of objects again, and the results a unit builds trigger many (it made a unit
    several times slower). An object let go is unfrozen first, so that its cycles can go."""
    if key not in _kept:
        while len(_kept) >= KEPT_SHARED:
            _kept.pop(next(iter(_kept)))
            gc.unfreeze()
        _kept[key] = load()
        gc.collect()
        gc.freeze()
    return _kept[key]


# A worker is one core's worth of work: its BLAS (numpy's matrix products) on one thread,
# not on every core of the machine each (N workers x N threads would oversubscribe).
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _one_thread() -> None:
    """The worker process's start: one BLAS thread, unless the user set the variables. The
    variables reach a BLAS loaded later; one already loaded is limited through
    threadpoolctl (forkserver and spawn import the program's ``__main__`` before this, and
    with it numpy, whose BLAS then started a thread per core)."""
    if any(name in os.environ for name in _THREAD_VARIABLES):
        return
    for name in _THREAD_VARIABLES:
        os.environ[name] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


def _read_pickle(path: str) -> Any:
    with open(path, "rb") as fh:
        return pickle.load(fh)


# --- how units and results travel ------------------------------------------------------
#
# A unit's chunk goes to a worker, and its results come back, as bytes pickled here (its
# function as the executor sends it: Ray's cloudpickle may send one by value). The
# questions, predictions and results are pydantic models by the thousand, which pydantic
# pickles one by one through Python-level ``__getstate__``/``__setstate__`` calls (and Ray's
# cloudpickle through a per-object hook of its own): sending and receiving cost the driver
# about a third of the units' own work. :class:`_Pickler` reduces such a model to its four
# attributes directly (what those two methods save and restore, nothing else).


_new = object.__new__
_set = object.__setattr__  # past the model's own __setattr__, as pydantic's __setstate__


def _model(cls: type[BaseModel], fields: dict[str, Any], fields_set: set[str],
           extra: dict[str, Any] | None, private: dict[str, Any] | None) -> BaseModel:
    """A pydantic model rebuilt as ``BaseModel.__setstate__`` does, without validation."""
    model = _new(cls)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", extra)
    _set(model, "__pydantic_private__", private)
    _set(model, "__dict__", fields)
    return model


_plain_models: dict[type, bool] = {}  # model class → pickled by its four attributes


def _is_plain_model(cls: type) -> bool:
    """A pydantic model class that pickles through BaseModel's own state methods (one that
    defines its own pickling keeps it)."""
    plain = _plain_models.get(cls)
    if plain is None:
        plain = (issubclass(cls, BaseModel)
                 and getattr(cls, "__getstate__", None) is BaseModel.__getstate__
                 and getattr(cls, "__setstate__", None) is BaseModel.__setstate__
                 and getattr(cls, "__reduce_ex__", None) is object.__reduce_ex__
                 and getattr(cls, "__reduce__", None) is object.__reduce__)
        _plain_models[cls] = plain
    return plain


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if _is_plain_model(type(obj)):
            private = obj.__pydantic_private__
            if private:  # as BaseModel.__getstate__: unset private attributes left out
                private = {k: v for k, v in private.items() if v is not PydanticUndefined}
            return _model, (type(obj), obj.__dict__, obj.__pydantic_fields_set__,
                            obj.__pydantic_extra__, private)
        return NotImplemented


def _dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


def encode_ids(result: Any) -> Any:
    """A unit's result as it travels back: an array as it is (numpy pickles its buffer whole,
    and Ray's object store hands it over without a copy), anything else :func:`_dumps`."""
    return result if isinstance(result, np.ndarray) else _dumps(result)


def _decode(sent: Any) -> Any:
    return pickle.loads(sent) if isinstance(sent, bytes) else sent


def _process_unit(key: str, path: str, fn: Callable[[Any, list[Any]], Any],
                  chunk: bytes) -> Any:
    """A chunk (:func:`_dumps`) in a worker process; the shared object is read from its
    file once."""
    return encode_ids(fn(_shared_object(key, lambda: _read_pickle(path)), pickle.loads(chunk)))


class _RayWorker:
    """A Ray actor: one worker process that keeps the shared objects it was sent."""

    def __init__(self) -> None:
        _one_thread()  # Ray gives a one-CPU actor one thread, unless told otherwise: the same

    def run(self, key: str, box: list[Any], fn: Callable[[Any, list[Any]], Any],
            chunk: bytes) -> Any:
        import ray

        # ``box`` holds the object reference unresolved: fetched only on the first use
        return encode_ids(fn(_shared_object(key, lambda: ray.get(box[0])), pickle.loads(chunk)))


# --- the executors --------------------------------------------------------------------


def _check_rows(rows: Any, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if not isinstance(rows, np.ndarray) or rows.shape != shape or rows.dtype != dtype:
        got = (f"shape {rows.shape}, {rows.dtype}" if isinstance(rows, np.ndarray)
               else type(rows).__name__)
        raise ValueError(f"a unit returned {got} for {shape[0]} items; expected shape "
                         f"{shape}, {dtype}")


def _rows_unit(fn: Callable[[Any, list[Any]], np.ndarray], path: str, shape: tuple[int, ...],
               dtype: str, shared: Any, chunk: list[tuple[int, Any]]) -> list[None]:
    """A chunk of ``(row, item)`` pairs on a worker process: ``fn``'s rows for the items
    written in place into the array file at ``path`` (shared with the driver), from the
    chunk's first row on."""
    rows = fn(shared, [item for _, item in chunk])
    _check_rows(rows, (len(chunk), *shape[1:]), np.dtype(dtype))
    out = np.memmap(path, dtype=dtype, mode="r+", shape=shape)
    out[chunk[0][0] : chunk[0][0] + len(chunk)] = rows
    del out  # unmapped: the rows are in the file's pages, which the driver maps too
    return [None] * len(chunk)


def _rows_folder(size: int, fallback: Path) -> Path:
    """Where an array shared with the workers lives: /dev/shm (memory, never written to a
    disk) when it has room for it twice over, else the executor's temporary folder."""
    shm = Path("/dev/shm")
    try:
        stat = os.statvfs(shm)
    except OSError:  # not on every OS
        return fallback
    return shm if stat.f_bavail * stat.f_frsize > 2 * size else fallback


@contextmanager
def _collector_paused(pause: bool) -> Iterator[None]:
    """The cyclic garbage collector off for the block when ``pause`` (and it was on). While
    a map runs on workers this process only unpickles results, objects without cycles that
    reference counting frees; each full collection would walk every object of the loaded
    inputs again, for no garbage (it doubled the cost of receiving the results)."""
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class _Failed:
    """A chunk whose unit raised ``error``."""

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
        with _collector_paused(self.receives):
            for i, out in self._run(fn, list(chunks), shared):
                if isinstance(out, _Failed):
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
            _check_rows(rows, (len(chunk), *row_shape), out.dtype)
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
        """``(chunk index, its results or a _Failed)`` for every chunk, in any order."""
        for i, chunk in enumerate(chunks):
            try:
                out = fn(shared, chunk)
            except Exception as exc:  # map raises it
                yield i, _Failed(exc)
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


def _rows_in_file(executor: Executor, fn: Callable[[S, list[T]], np.ndarray],
                  chunks: Sequence[list[T]], shared: S, *, row_shape: tuple[int, ...],
                  dtype: Any, done: Callable[[int], None] | None, fallback: Path
                  ) -> np.ndarray:
    """:meth:`Executor.map_rows` for workers on this machine: each unit writes its rows in
    place into one array file (:func:`_rows_folder`) that this process maps, so no row
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
                                dir=_rows_folder(size, fallback))
    try:
        os.ftruncate(fd, size)
        numbered, start = [], 0
        for chunk in chunks:
            numbered.append(list(zip(range(start, start + len(chunk)), chunk, strict=True)))
            start += len(chunk)
        executor.map_chunks(partial(_rows_unit, fn, name, shape, dtype.str), numbered, shared,
                            done=done)
        return np.asarray(np.memmap(name, dtype=dtype, mode="r+", shape=shape))
    finally:
        os.close(fd)
        os.unlink(name)


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
                                         initializer=_one_thread)
        self._dir = Path(tempfile.mkdtemp(prefix="ragassay-shared-"))
        self._paths: dict[str, str] = {}

    def _run(self, fn: Callable[[Any, list[Any]], Any], chunks: list[list[Any]],
             shared: Any) -> Any:
        key, new = self._key(shared)
        if new:
            path = self._dir / f"{key}.pickle"
            write_bytes(path, _dumps(shared))
            self._paths[key] = str(path)
        futures: dict[Future[Any], int] = {
            self._pool.submit(_process_unit, key, self._paths[key], fn, _dumps(chunk)): i
            for i, chunk in enumerate(chunks)}
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in sorted(finished, key=futures.__getitem__):
                    error = f.exception()
                    yield futures[f], (_decode(f.result()) if error is None
                                      else _Failed(error))
        finally:
            for f in pending:
                f.cancel()

    def map_rows(self, fn: Callable[[S, list[T]], np.ndarray], chunks: Sequence[list[T]],
                 shared: S, *, row_shape: tuple[int, ...], dtype: Any,
                 done: Callable[[int], None] | None = None) -> np.ndarray:
        """As :meth:`Executor.map_rows`, the workers writing their rows in place into one
        array file mapped by this process too (:func:`_rows_in_file`)."""
        return _rows_in_file(self, fn, chunks, shared, row_shape=row_shape, dtype=dtype,
                             done=done, fallback=self._dir)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._dir, ignore_errors=True)
        super().close()


class RayExecutor(Executor):
    """``workers`` Ray actors (one CPU each) on the cluster at ``address``, or on a local
    Ray started for this executor (:func:`start_local_ray`) when there is no address and no
    Ray session in this process. Each shared object is put in Ray's object store once and
    fetched once by each actor."""

    kind = "ray"
    receives = True

    def __init__(self, workers: int, address: str | None = None) -> None:
        super().__init__(workers)
        self.address = address
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            import ray
        except ImportError:
            from .errors import MissingPackage

            raise MissingPackage("executor.kind: ray", "ray", "ray", "the ray executor") from None
        self._started = False
        if not ray.is_initialized():
            if address:
                ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            else:
                start_local_ray(workers)
            self._started = True
        actor = ray.remote(num_cpus=1)(_RayWorker)
        self._actors = [actor.remote() for _ in range(workers)]
        self._refs: dict[str, Any] = {}
        # every node on the loopback (a local Ray): the actors share this machine's files
        self._here = all(node.get("NodeManagerAddress") == LOCALHOST
                         for node in ray.nodes() if node.get("Alive"))

    def map_rows(self, fn: Callable[[S, list[T]], np.ndarray], chunks: Sequence[list[T]],
                 shared: S, *, row_shape: tuple[int, ...], dtype: Any,
                 done: Callable[[int], None] | None = None) -> np.ndarray:
        """As :meth:`Executor.map_rows`; on a local Ray the actors write their rows in place
        into one array file mapped by this process too (:func:`_rows_in_file`)."""
        if not self._here:
            return super().map_rows(fn, chunks, shared, row_shape=row_shape, dtype=dtype,
                                    done=done)
        return _rows_in_file(self, fn, chunks, shared, row_shape=row_shape, dtype=dtype,
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
            while todo and free:
                i, chunk = todo.pop()
                actor = free.pop()
                task = getattr(actor, "run").remote(key, box, fn,  # noqa: B009
                                                    _dumps(chunk))
                running[task] = (i, actor)
            finished, _ = ray.wait(list(running), num_returns=1)
            for ref in finished:
                i, actor = running.pop(ref)
                free.append(actor)
                try:
                    out = _decode(_unwrap(ray, ref))
                except Exception as exc:  # map raises the first in input order
                    out = _Failed(exc)
                yield i, out

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


def _unwrap(ray: Any, ref: Any) -> Any:
    """The result of a finished task; a task's exception raised as itself (Ray wraps it)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(exc.cause, BaseException) else None
        if cause is not None:
            raise cause from None
        raise


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
