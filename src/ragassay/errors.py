"""Bad input and the exit codes every command shares.

| code | meaning |
|---|---|
| 0 | ok |
| 1 | the gate failed (a bar missed, a regression, too many questions not measured) |
| 2 | bad input: the message names the file, line and field |
| 3 | questions not measured (e.g. the answerer endpoint failed); the run folder is written |
| 4 | internal error: a bug in ragassay (the traceback is printed with ``--debug``) |
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OK = 0
GATE_FAILED = 1
BAD_INPUT = 2
NOT_MEASURED = 3
INTERNAL_ERROR = 4


class InputError(Exception):
    """Bad user input: where it is (file, line, field) and what is wrong with it."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': {message}" if field else message
        super().__init__(f"{where}: {what}")

    def __reduce__(self) -> tuple[Any, ...]:
        # raised in a worker process, re-raised here as the same error
        return (_input_error, (self.path, self.message, self.line, self.field))


def _input_error(path: str, message: str, line: int | None, field: str | None) -> InputError:
    return InputError(path, message, line=line, field=field)


def unknown_name(kind: str, name: str, known: Sequence[str], *, known_as: str = "known") -> str:
    """``unknown embedder 'hashng'; did you mean hashing? (known: e5-small, hashing, ...)``,
    or without the hint when nothing is close: the message of every name look-up."""
    listed = ", ".join(known) if known else "(none)"
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if close:
        return f"unknown {kind} {name!r}; did you mean {close[0]}? ({known_as}: {listed})"
    return f"unknown {kind} {name!r}; {known_as}: {listed}"
