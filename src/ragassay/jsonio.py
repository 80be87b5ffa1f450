"""Writing files and folders so that a reader never sees half of one.

The one atomic writer of the project: a file (report, JUnit, cache entry, index sidecar) or
a whole folder (run folder, index, sweep) is written under a temporary sibling name, synced,
and renamed into place. Temporary files and folders are created with the modes the user's
umask gives (0644 / 0755 under umask 022), not the private 0600 / 0700 of ``tempfile``, so a
CI artifact server or a colleague can read what ragassay wrote.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .schema import InputError

FILE_MODE = 0o666  # before the umask
DIR_MODE = 0o777


def _sibling(dest: Path, kind: str) -> Path:
    return dest.with_name(f".{dest.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}")


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


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (it must not exist) with the umask's mode, write and sync ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary sibling, then ``os.replace``."""
    path = Path(path)
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


def json_text(value: Any) -> str:
    """Indented UTF-8 JSON with a final newline: the form of every JSON file ragassay writes."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def jsonl_text(rows: Iterable[Any]) -> str:
    """One compact JSON value per line, keys in the given order (byte-identical reruns)."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


class FolderWriter:
    """Files of a folder being assembled by :func:`write_folder`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def bytes(self, name: str, data: bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _write_new(path, data)
        return path

    def text(self, name: str, text: str) -> Path:
        return self.bytes(name, text.encode("utf-8"))


def write_folder(dest: str | Path, fill: Callable[[FolderWriter], None], *,
                 force: bool = False) -> Path:
    """Assemble a folder in a temporary sibling with ``fill``, then rename it to ``dest``.

    An existing ``dest`` is refused unless ``force``; with ``force`` it is renamed aside,
    the new folder renamed in, and the old one deleted (renamed back if the second rename
    fails). An interruption leaves ``dest`` as it was: never half-written.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() and not force:
        raise InputError(dest, "already exists; pass --force to replace it")
    if dest.exists() and not dest.is_dir():
        raise InputError(dest, "exists and is not a folder")
    tmp = _sibling(dest, "tmp")
    old = _sibling(dest, "old")
    os.mkdir(tmp, DIR_MODE)
    try:
        fill(FolderWriter(tmp))
        _sync_dir(tmp)
        moved_aside = dest.exists()
        if moved_aside:
            os.rename(dest, old)
        try:
            os.rename(tmp, dest)
        except BaseException:
            if moved_aside:
                os.rename(old, dest)
            raise
        _sync_dir(dest.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    return dest
