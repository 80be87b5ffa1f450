"""How units, their shared object and their results travel between this process and a
worker (of a process pool or a Ray actor), and what a worker does when it starts.

A unit's chunk goes to a worker, and its results come back, as bytes pickled here (its
function as the executor sends it: Ray's cloudpickle may send one by value). The
questions, predictions and results are pydantic models by the thousand, which pydantic
pickles one by one through Python-level ``__getstate__``/``__setstate__`` calls (and Ray's
cloudpickle through a per-object hook of its own): sending and receiving cost the driver
about a third of the units' own work. :func:`dumps` reduces such a model to its four
attributes directly (what those two methods save and restore, nothing else).
"""

from __future__ import annotations

import gc
import io
import os
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

KEPT_SHARED = 2  # shared objects a worker keeps (a sweep alternates two stages' objects)

# --- the worker side -----------------------------------------------------------------

_kept: dict[str, Any] = {}  # in a worker: the shared objects received, by key


def shared_object(key: str, load: Callable[[], Any]) -> Any:
    """The shared object of ``key`` in a worker, loaded on first use (the worker keeps the
    last :data:`KEPT_SHARED`). A worker only reads it, so it is frozen out of the cyclic
    garbage collector: otherwise every full collection walks its millions of objects again,
    and the results a unit builds trigger many (it made a unit several times slower). An
    object let go is unfrozen first, so that its cycles can go."""
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


def one_thread() -> None:
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


def read_pickle(path: str) -> Any:
    """The object pickled in the file at ``path`` (a shared object, written by the driver)."""
    with open(path, "rb") as fh:
        return pickle.load(fh)


# --- pickling --------------------------------------------------------------------------

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


def dumps(obj: Any) -> bytes:
    """``obj`` pickled (highest protocol), each plain pydantic model by its four attributes:
    ``pickle.loads`` gives back equal models, with the same fields set, extra and private
    attributes; a model with its own pickling keeps it."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


def encode_ids(result: Any) -> Any:
    """A unit's result as it travels back: an array as it is (numpy pickles its buffer whole,
    and Ray's object store hands it over without a copy), anything else :func:`dumps`."""
    return result if isinstance(result, np.ndarray) else dumps(result)


def decode(sent: Any) -> Any:
    """What :func:`encode_ids` sent, as the unit returned it."""
    return pickle.loads(sent) if isinstance(sent, bytes) else sent
