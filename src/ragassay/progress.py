"""Progress on stderr for every stage that can take more than a second: one helper for all.

Off by default (library calls draw nothing); the command line turns it on with
``--progress`` (the default when stderr is a terminal) through :func:`enabled_for`.
On a terminal each stage is a transient rich bar (stages inside a stage, such as the
answering of one sweep setting, are bars under it); when stderr is not a terminal a
stage prints one line when it ends (``scoring: 2000/2000 in 1.3s``). :meth:`Bar.advance`
may be called from worker threads.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

_state: dict[str, Any] = {"enabled": False, "live": None, "depth": 0}


def is_enabled() -> bool:
    """Whether stages draw progress (the command line's ``--progress``)."""
    return bool(_state["enabled"])


@contextmanager
def enabled_for(on: bool) -> Iterator[None]:
    """Stages inside the block draw progress when ``on``; the previous setting after it."""
    before = _state["enabled"]
    _state["enabled"] = on
    try:
        yield
    finally:
        _state["enabled"] = before


def stderr_is_terminal() -> bool:
    """The default of ``--progress``: on when stderr is a terminal."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


class Bar:
    """One stage: :meth:`advance` it as items are done (a no-op when progress is off)."""

    def __init__(self, description: str, total: int | None, task: Any = None,
                 live: Any = None) -> None:
        self.description = description
        self.total = total
        self.done = 0
        self._task = task
        self._live = live
        self._lock = threading.Lock()

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
        if self._live is not None:
            self._live.advance(self._task, n)


class _Off(Bar):
    def advance(self, n: int = 1) -> None:
        return None


def _rich_progress() -> Any:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    # stdout is left alone: a JSON document or table printed meanwhile goes where it belongs
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), transient=True, redirect_stdout=False)


@contextmanager
def bar(description: str, total: int | None, *, enabled: bool | None = None
        ) -> Iterator[Bar]:
    """A stage of ``total`` items on stderr; ``enabled`` overrides the command line's
    setting (``None``: :func:`is_enabled`)."""
    on = is_enabled() if enabled is None else enabled
    if not on:
        yield _Off(description, total)
        return
    if not stderr_is_terminal():
        t0 = time.perf_counter()
        stage = Bar(description, total)
        try:
            yield stage
        finally:
            of = f"/{total}" if total is not None else ""
            sys.stderr.write(f"{description}: {stage.done}{of} in "
                             f"{time.perf_counter() - t0:.1f}s\n")
            sys.stderr.flush()
        return
    live = _state["live"]
    if live is None:
        live = _state["live"] = _rich_progress()
        live.start()
    _state["depth"] += 1
    task = live.add_task(description, total=total)
    try:
        yield Bar(description, total, task, live)
    finally:
        live.remove_task(task)
        _state["depth"] -= 1
        if _state["depth"] == 0:
            _state["live"] = None
            live.stop()


def track(items: Iterable[T], description: str, *, total: int | None = None,
          enabled: bool | None = None) -> Iterator[T]:
    """``items``, advancing a :func:`bar` as each one is taken."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with bar(description, total, enabled=enabled) as stage:
        for item in items:
            yield item
            stage.advance()
