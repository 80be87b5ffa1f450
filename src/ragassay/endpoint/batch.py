"""Batches of endpoint calls: a deadline and :func:`map_bounded` (bounded concurrency)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from .errors import EndpointError

T = TypeVar("T")
R = TypeVar("R")


def deadline_after(seconds: float | None, clock: Callable[[], float] = time.monotonic,
                   ) -> float | None:
    """The absolute deadline (on ``clock``) ``seconds`` from now; ``None`` for no limit."""
    return None if seconds is None else clock() + seconds


def map_bounded(fn: Callable[[T], R], items: Sequence[T], concurrency: int,
                deadline: float | None = None, *,
                clock: Callable[[], float] = time.monotonic) -> list[R | EndpointError]:
    """``[fn(item) for item in items]`` on at most ``concurrency`` threads, in input order.

    A failing item becomes an :class:`EndpointError` value in its slot (any other exception
    is wrapped in one, with the original as ``__cause__``); the batch itself never raises
    for one item. Items are started in input order; once ``clock() >= deadline`` no new
    item is started and each remaining one becomes ``EndpointError("run timeout …")``.
    Items already running finish (each call has its own timeout).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    results: list[R | EndpointError | None] = [None] * len(items)
    next_index = 0
    lock = threading.Lock()

    def worker() -> None:
        nonlocal next_index
        while True:
            with lock:
                i = next_index
                if i >= len(items):
                    return
                next_index += 1
                expired = deadline is not None and clock() >= deadline
            if expired:
                results[i] = EndpointError("run timeout: the run's deadline passed before "
                                           "this item was started")
                continue
            try:
                results[i] = fn(items[i])
            except EndpointError as exc:
                results[i] = exc
            except Exception as exc:  # one item's bug must not lose the other results
                err = EndpointError(f"{type(exc).__name__}: {exc}")
                err.__cause__ = exc
                results[i] = err

    n_threads = min(concurrency, len(items))
    if n_threads <= 1:
        worker()  # no thread for a sequential run: simpler tracebacks, same results
    else:
        threads = [threading.Thread(target=worker, name=f"ragassay-endpoint-{k}", daemon=True)
                   for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return results  # type: ignore[return-value]  # every slot was filled
