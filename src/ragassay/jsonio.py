"""Reading JSONL / YAML / JSON input with file:line:field errors, and writing files and
folders so that a reader never sees half of one.

Readers: every malformed line, undecodable byte or pydantic validation error becomes an
:class:`~ragassay.errors.InputError` here, and nowhere else.

The one atomic writer of the project: a file (report, JUnit, cache entry, index sidecar) or
a whole folder (run folder, index, sweep) is written under a temporary sibling name, synced,
and renamed into place. Temporary files and folders are created with the modes the user's
umask gives (0644 / 0755 under umask 022), not the private 0600 / 0700 of ``tempfile``, so a
CI artifact server or a colleague can read what ragassay wrote.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from .errors import InputError

FILE_MODE = 0o666  # before the umask
DIR_MODE = 0o777

M = TypeVar("M", bound=BaseModel)
# pydantic puts the member of a union into an error's location (``latency_ms.float``): not a
# field the user wrote, so it is left out of the field named.
_TYPE_LABEL = re.compile(r"^(?:[a-z]+\[.*\]|float|int|str|bool|none|list|dict|tuple|"
                         r"function-[a-z-]+\[.*\]|lax-or-strict\[.*\]|json-or-python\[.*\])$")


# --- reading ---------------------------------------------------------------------------


def parse_record(model: type[M], data: Any, path: str | Path, line: int | None = None, *,
                 prefix: str = "", hint: str = "") -> M:
    """Validate one decoded record; a pydantic error becomes an :class:`InputError` naming
    the first invalid field (``prefix`` + ``.text``, e.g. ``chunks.17.text``), with ``hint``
    (how to fix it) after the message."""
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object, got {type(data).__name__}{hint}",
                         line=line, field=prefix or None)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err.get("loc", ()) if not _TYPE_LABEL.match(str(p))]
        field = ".".join([prefix, *loc] if prefix else loc) or "(record)"
        raise InputError(path, err.get("msg", "invalid value") + hint, line=line,
                         field=field) from None


def decode_json(text: str, path: str | Path, line: int | None = None, *, hint: str = "") -> Any:
    """``json.loads`` whose error names the file and line (``line``: of a JSONL record)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON ({exc.msg}, column {exc.colno}){hint}",
                         line=exc.lineno if line is None else line) from None


def _need_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    return p


def read_json(path: str | Path, *, hint: str = "") -> Any:
    """One JSON document; malformed JSON or text that is not UTF-8 names file and line."""
    p = _need_file(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(p, f"not UTF-8 text (byte {exc.start}){hint}") from None
    return decode_json(text, p, hint=hint)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, decoded_value)`` for each non-blank line, streaming."""
    p = _need_file(path)
    with p.open("rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(p, f"not UTF-8 text (byte {exc.start + 1} of the line)",
                                 line=line_no) from None
            if text.strip():
                yield line_no, decode_json(text, p, line_no)


def read_jsonl(path: str | Path, model: type[M], *, key: str | None = None) -> list[M]:
    """Read a JSONL file of ``model`` records; with ``key``, refuse duplicate keys.

    Each record remembers its line number (:func:`line_of`) for later errors.
    """
    seen: dict[str, int] = {}
    out: list[M] = []
    for line_no, data in iter_jsonl(path):
        rec = parse_record(model, data, path, line_no)
        if key is not None:
            value = getattr(rec, key)
            if value in seen:
                raise InputError(path, f"duplicate {key} {value!r} (first on line {seen[value]})",
                                 line=line_no, field=key)
            seen[value] = line_no
        if hasattr(rec, "_line"):
            rec._line = line_no
        out.append(rec)
    return out


def line_of(record: BaseModel) -> int | None:
    """The JSONL line a record was read from, when it was read by :func:`read_jsonl`."""
    return getattr(record, "_line", None)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping, with the line of a syntax error."""
    p = _need_file(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(p, f"malformed YAML ({getattr(exc, 'problem', exc)})", line=line) from None
    except UnicodeDecodeError:
        raise InputError(p, "not UTF-8 text") from None
    if not isinstance(data, dict):
        raise InputError(p, "expected a mapping at the top level")
    return data


# --- writing ---------------------------------------------------------------------------


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
