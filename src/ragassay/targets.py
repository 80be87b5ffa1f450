"""Where ragassay may write: output paths checked before any work, and a claim on a
destination folder so that two processes never assemble the same one at once.

:func:`check_file_target` / :func:`check_folder_target` refuse an output path of the wrong
kind (a folder given to ``--junit``, a file given to ``export-trec --out``) with the option
named, before a minute of work is spent. :func:`claim` holds an advisory lock
(``.NAME.lock`` next to the destination, ``flock``: released by the kernel when the process
ends, however it ends) from the first check of a run folder to its rename: a second
``ragassay run`` with the same run id is refused at once instead of replacing the first one's
folder. The final rename refuses to replace an existing folder too
(:func:`ragassay.atomic.write_folder`), so the lock is a fast refusal, not the only guard.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import InputError


def _file_above(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` that is not a folder, if any."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_file_target(path: str | Path, what: str | None = None) -> None:
    """Refuse, before any work, an output *file* path that is a folder or lies under a
    file: ``--junit: out is a folder where a file is expected; give a file name (e.g.
    out/junit.xml)``. ``what`` is the option named (``--junit``); the path itself when not
    given."""
    path = Path(path)
    name = what or str(path)
    if path.is_dir():
        raise InputError(name, f"{path} is a folder where a file is expected; give a file "
                         "name inside it or elsewhere")
    above = _file_above(path)
    if above is not None:
        raise InputError(name, f"{above} is a file where a folder is expected in {path}; "
                         "choose another path")


def check_folder_target(path: str | Path, what: str | None = None) -> None:
    """Refuse, before any work, an output *folder* path that is a file or lies under one:
    ``--out: runs/x.trec is a file where a folder is expected; give a folder``."""
    path = Path(path)
    name = what or str(path)
    if path.exists() and not path.is_dir():
        raise InputError(name, f"{path} is a file where a folder is expected; give a folder "
                         "(it is created if missing)")
    above = _file_above(path)
    if above is not None:
        raise InputError(name, f"{above} is a file where a folder is expected in {path}; "
                         "choose another path")


_held: dict[str, int] = {}  # destinations this process holds → depth (claims nest)


def _lock_path(dest: Path) -> Path:
    raw = os.fsencode(dest.name)
    name = dest.name if len(raw) <= 200 else hashlib.sha256(raw).hexdigest()[:16]
    return dest.with_name(f".{name}.lock")


@contextlib.contextmanager
def claim(dest: str | Path) -> Iterator[None]:
    """Hold ``dest`` for this process while the block runs; another process holding it →
    :class:`InputError` (``runs/r: another ragassay process (pid 4242) is writing this
    folder now; wait for it to end, or choose another name``). Claims of one destination
    nest within a process. Where there is no ``flock`` (Windows) nothing is locked."""
    given = Path(dest)
    dest = Path(os.path.abspath(dest))
    key = str(dest)
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    try:
        import fcntl
    except ImportError:  # Windows: the final rename still refuses to replace a folder
        yield
        return
    lock = _lock_path(dest)
    check_folder_target(given.parent)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise InputError(given, f"another ragassay process (pid {holder}) is writing this "
                         "folder now; wait for it to end, or choose another name") from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    _held[key] = 1
    try:
        yield
    finally:
        del _held[key]
        try:
            lock.unlink()  # a process that opened it before may still lock it: the
            # final rename (which never replaces without --force) refuses it then
        except OSError:
            pass
        finally:
            os.close(fd)  # releases the lock, as the kernel does when a process dies


def drop_stale_lock(dest: str | Path) -> str | None:
    """Remove the lock file of ``dest`` when no process holds it (its holder was killed
    before it could remove it); the message said, or ``None``. Never raises for I/O
    errors: readers of a read-only folder call it too."""
    lock = _lock_path(Path(os.path.abspath(dest)))
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.unlink()
    except OSError:
        return None  # held: a write in progress (or not ours to remove)
    finally:
        os.close(fd)
    return f"{lock}: removed, left by an interrupted write (its holder had ended)"
