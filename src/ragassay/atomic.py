"""Writing files and folders so that a reader never sees half of one: the one atomic writer.

A file (report, JUnit, cache entry, TREC file) or a whole folder (run folder, index, sweep)
is written under a temporary sibling name, synced, and renamed into place (a folder's large
files streamed through :meth:`FolderWriter.open`); :func:`recover`
finishes or rolls back a replacement a killed process left behind. Temporary files and
folders are created with the modes the user's umask gives (0644 / 0755 under umask 022),
not the private 0600 / 0700 of ``tempfile``, so a CI artifact server or a colleague can read
what ragassay wrote.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import json
import logging
import os
import platform
import re
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from .errors import InputError
from .jsonio import json_text
from .targets import check_file_target, check_folder_target, claim, drop_stale_lock

FILE_MODE = 0o666  # before the umask
DIR_MODE = 0o777


# --- writing ---------------------------------------------------------------------------
#
# Replacing a folder: where Linux has renameat2(RENAME_EXCHANGE), the new folder and the old
# one trade names in one step, so ``dest`` is never missing; the old contents, now under the
# temporary name, are then deleted. Elsewhere (or on a filesystem refusing the call) two
# renames do it, after a journal naming both is synced: a process killed between them leaves
# a state that :func:`recover` finishes later. Every temporary name carries the writer's pid,
# so what an ended process left is told apart from a write in progress.

log = logging.getLogger(__name__)

STALE_SECONDS = 15 * 60  # leftovers of a live pid this old: a reused pid, or another host's
_NAME_MAX = 255  # bytes in one path component (ext4, xfs, btrfs, tmpfs, APFS, NTFS)
_SUFFIX_MAX = 32  # "." + ".swap-<pid>-<8 hex>.json" (pid up to 10 digits) fits
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_SYS_RENAMEAT2 = {"x86_64": 316, "amd64": 316, "aarch64": 276, "arm64": 276}
# renameat2 errors meaning "not here" (no syscall, filesystem without exchange, a seccomp
# filter): the two-rename swap is used instead.
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}


def _stem(name: str) -> str:
    """``name``, or a prefix of it and a hash when a temporary sibling's name would pass
    255 bytes (a run id may be 128 characters, 3 bytes each in Korean)."""
    raw = os.fsencode(name)
    if len(raw) + _SUFFIX_MAX <= _NAME_MAX:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:16]
    return raw[: _NAME_MAX - _SUFFIX_MAX - 17].decode("utf-8", "ignore") + "~" + digest


def _token() -> str:
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def _sibling(dest: Path, kind: str, token: str | None = None) -> Path:
    """``.NAME.tmp-<pid>-<hex>`` (``tmp``, ``old``; ``swap`` is the journal, ``.json``)."""
    name = f".{_stem(dest.name)}.{kind}-{token or _token()}"
    return dest.with_name(name + ".json" if kind == "swap" else name)


def _sync_dir(path: Path) -> None:
    # Makes renames durable; not possible on every platform (Windows), hence best effort.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _open_new(path: Path) -> Iterator[BinaryIO]:
    """Create ``path`` (it must not exist) with the umask's mode; the handle is synced and
    closed when the block ends."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "wb") as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (it must not exist) with the umask's mode, write and sync ``data``."""
    with _open_new(path) as fh:
        fh.write(data)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary sibling, then ``os.replace``. A
    ``path`` that is a folder, or under a file, is refused (:func:`check_file_target`)."""
    path = Path(path)
    check_file_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _sibling(path, "tmp")
    try:
        _write_new(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    """:func:`write_bytes` of UTF-8 text (``\\n`` line ends on every platform)."""
    return write_bytes(path, text.encode("utf-8"))


class FolderWriter:
    """Files of a folder being assembled by :func:`write_folder`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs = {root}

    def bytes(self, name: str, data: bytes) -> Path:
        path = self._new(name)
        _write_new(path, data)
        return path

    def _new(self, name: str) -> Path:
        path = self.root / name
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self._dirs.add(path.parent)
        return path

    @contextlib.contextmanager
    def open(self, name: str) -> Iterator[BinaryIO]:
        """A new file of the folder written through a binary handle, for files too large to
        hold in memory at once (rows of a large run, an index's embeddings): streamed,
        synced when the block ends, and renamed into place with the folder like any other.
        """
        with _open_new(self._new(name)) as fh:
            yield fh

    def text(self, name: str, text: str) -> Path:
        return self.bytes(name, text.encode("utf-8"))

    def _sync(self) -> None:
        for path in sorted(self._dirs, key=lambda p: len(p.parts), reverse=True):
            _sync_dir(path)


def _step(name: str) -> None:
    """A point of :func:`write_folder` between two changes on disk; the crash tests stop
    the process here."""


@functools.cache
def _renameat2() -> Callable[[bytes, bytes, int], int] | None:
    """``renameat2(AT_FDCWD, a, AT_FDCWD, b, flags)`` through libc (glibc 2.28+), else the
    raw syscall; ``None`` off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    fn = getattr(libc, "renameat2", None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                       ctypes.c_uint]
        fn.restype = ctypes.c_int
        return lambda a, b, flags: int(fn(_AT_FDCWD, a, _AT_FDCWD, b, flags))
    nr = _SYS_RENAMEAT2.get(platform.machine().lower())
    if nr is None:
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    long = ctypes.c_long
    # syscall() is variadic: every argument passed as a full register
    return lambda a, b, flags: int(syscall(long(nr), long(_AT_FDCWD), ctypes.c_char_p(a),
                                           long(_AT_FDCWD), ctypes.c_char_p(b), long(flags)))


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names of ``a`` and ``b`` atomically; ``False`` when this OS or filesystem
    cannot (nothing changed then)."""
    call = _renameat2()
    if call is None:
        return False
    if call(os.fsencode(a), os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in _NO_EXCHANGE:
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def _rename_new(tmp: Path, dest: Path) -> None:
    """Rename ``tmp`` to ``dest`` only if ``dest`` does not exist (``RENAME_NOREPLACE``;
    where the OS cannot, a check then a plain rename, which refuses a folder that is not
    empty): a folder that appeared meanwhile (another process's) is never replaced."""
    call = _renameat2()
    if call is not None:
        if call(os.fsencode(tmp), os.fsencode(dest), _RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            raise InputError(dest, "was written by another process meanwhile; left as it "
                             "is (choose another name, or pass --force to replace it)")
        if err not in _NO_EXCHANGE:
            raise OSError(err, os.strerror(err), str(tmp), None, str(dest))
    if os.path.lexists(dest):
        raise InputError(dest, "was written by another process meanwhile; left as it is "
                         "(choose another name, or pass --force to replace it)")
    os.rename(tmp, dest)


def _write_journal(path: Path, record: dict[str, Any]) -> None:
    _write_new(path, json_text(record).encode("utf-8"))


def _discard(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _swap_journaled(dest: Path, tmp: Path, token: str) -> None:
    """Replace ``dest`` by ``tmp`` with two renames. The journal, written (and synced) only
    once ``tmp`` is complete, tells :func:`recover` to move ``tmp`` in if a kill leaves no
    ``dest``; it is removed last."""
    old = _sibling(dest, "old", token)
    journal = _sibling(dest, "swap", token)
    try:
        _write_journal(journal, {"dest": dest.name, "old": old.name, "new": tmp.name,
                                 "pid": os.getpid()})
        _sync_dir(dest.parent)
        _step("journaled")
        os.rename(dest, old)
    except BaseException:
        _discard(journal)
        raise
    try:
        _step("moved-aside")
        os.rename(tmp, dest)
    except BaseException:
        os.rename(old, dest)  # if this fails too, the journal stays for recover()
        _discard(journal)
        raise
    _sync_dir(dest.parent)
    _step("moved-in")
    shutil.rmtree(old, ignore_errors=True)
    _step("old-deleted")
    _discard(journal)


def write_folder(dest: str | Path, fill: Callable[[FolderWriter], None], *,
                 force: bool = False) -> Path:
    """Assemble a folder in a temporary sibling with ``fill``, then rename it to ``dest``.

    The destination is claimed for this process first (:func:`ragassay.targets.claim`:
    another process writing it → refused). An existing ``dest`` is refused unless ``force``,
    also one that appeared while ``fill`` ran; with ``force`` the new folder takes
    its place in one atomic exchange (Linux), or two renames recorded in a journal, and the
    old one is deleted. An interruption leaves ``dest`` as it was, or after a kill, a state
    :func:`recover` (called first here) finishes: never half-written, never missing. A
    ``dest`` that is a symbolic link or a file is refused.
    """
    dest = Path(dest)
    check_folder_target(dest.parent)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with claim(dest):
        return _write_folder(dest, fill, force)


def _write_folder(dest: Path, fill: Callable[[FolderWriter], None], force: bool) -> Path:
    recover(dest)
    if dest.is_symlink():
        raise InputError(dest, "is a symbolic link; ragassay does not replace a link "
                               "(remove it, or write to the folder it points to)")
    if dest.exists() and not dest.is_dir():
        raise InputError(dest, "exists and is not a folder")
    if dest.exists() and not force:
        raise InputError(dest, "already exists; pass --force to replace it")
    token = _token()
    tmp = _sibling(dest, "tmp", token)
    os.mkdir(tmp, DIR_MODE)
    try:
        writer = FolderWriter(tmp)
        fill(writer)
        writer._sync()
        _step("filled")
        if not force or not os.path.lexists(dest):
            _rename_new(tmp, dest)
        elif _exchange(tmp, dest):
            _step("exchanged")  # tmp holds the old folder now; deleted below
        else:
            _swap_journaled(dest, tmp, token)
        _sync_dir(dest.parent)
    finally:
        if not _sibling(dest, "swap", token).exists():  # else recover() needs tmp
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


# --- recovery --------------------------------------------------------------------------

_KIND = r"(tmp|old|swap)-(\d+)-([0-9a-f]{8})(\.json)?"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # os.kill(pid, 0) would end it on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    except (OSError, OverflowError):
        return False
    return True


def _changed(paths: Iterable[Path]) -> float:
    """When any of ``paths`` was last written or renamed (ctime moves on a rename)."""
    newest = 0.0
    for path in paths:
        try:
            st = path.lstat()
        except OSError:
            continue
        newest = max(newest, st.st_mtime, st.st_ctime)
    return newest


def _journal_ok(path: Path) -> bool:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # cut short by the kill: written before anything was renamed
    return isinstance(record, dict) and "new" in record


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _recover_one(dest: Path, pid: int, parts: dict[str, Path]) -> list[str]:
    messages: list[str] = []
    tmp, old, journal = parts.get("tmp"), parts.get("old"), parts.get("swap")
    if not os.path.lexists(dest):
        try:
            if journal is not None and tmp is not None and tmp.is_dir() and _journal_ok(journal):
                os.rename(tmp, dest)
                del parts["tmp"]
                messages.append(f"{dest}: finished replacing the folder (the writer, pid {pid}, "
                                "was killed after the new folder was complete)")
            elif old is not None and old.is_dir():
                os.rename(old, dest)
                del parts["old"]
                messages.append(f"{dest}: put the previous folder back from {old.name} (the "
                                f"writer, pid {pid}, was killed while replacing it)")
        except OSError as exc:
            # keep everything: a later call (with write access) can still finish
            return [f"{dest}: folder missing after an interrupted replacement (pid {pid}); "
                    f"could not recover it from {(tmp or old or dest).name}: {exc.strerror}"]
    for kind in ("tmp", "old", "swap"):  # the journal last
        path = parts.get(kind)
        if path is None:
            continue
        try:
            _remove(path)
        except OSError as exc:
            messages.append(f"{path}: could not remove this leftover of an interrupted write "
                            f"(pid {pid}): {exc.strerror}")
        else:
            messages.append(f"{path}: removed, left by an interrupted write (pid {pid})")
    return messages


def recover(dest: str | Path) -> list[str]:
    """Finish or roll back what a killed writer of ``dest`` left next to it.

    When ``dest`` is missing after an interrupted two-rename swap, the new folder is moved
    in if the journal says it was complete, else the old one is put back; then temporary,
    old and journal siblings of ended processes (or older than :data:`STALE_SECONDS`) are
    removed, and a lock file no process holds (:func:`ragassay.targets.claim`). A write in
    progress is left alone. Returns one message per action, each also
    logged as a warning on the ``ragassay.atomic`` logger. Never raises for I/O errors:
    readers of a read-only folder call it too.
    """
    dest = Path(dest)
    pattern = re.compile(re.escape(f".{_stem(dest.name)}.") + _KIND)
    try:
        names = os.listdir(dest.parent)
    except OSError:
        return []
    groups: dict[str, dict[str, Path]] = {}
    for name in names:
        m = pattern.fullmatch(name)
        if m is not None and (m[1] == "swap") == bool(m[4]):
            groups.setdefault(f"{m[2]}-{m[3]}", {})[m[1]] = dest.with_name(name)
    messages: list[str] = []
    # the newest interrupted swap first: it decides what a missing dest becomes
    for token, parts in sorted(groups.items(), key=lambda g: -_changed(g[1].values())):
        pid = int(token.split("-")[0])
        if _pid_alive(pid) and time.time() - _changed(parts.values()) < STALE_SECONDS:
            continue  # a write in progress
        messages += _recover_one(dest, pid, parts)
    if (stale := drop_stale_lock(dest)) is not None:
        messages.append(stale)
    for message in messages:
        log.warning("%s", message)
    return messages
