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

import copy
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError

from .errors import InputError, unknown_name

FILE_MODE = 0o666  # before the umask
DIR_MODE = 0o777

M = TypeVar("M", bound=BaseModel)
# pydantic puts the member of a union into an error's location (``latency_ms.float``): not a
# field the user wrote, so it is left out of the field named.
_TYPE_LABEL = re.compile(r"^(?:[a-z]+\[.*\]|float|int|str|bool|none|list|dict|tuple|"
                         r"constrained-[a-z]+|"
                         r"function-[a-z-]+\[.*\]|lax-or-strict\[.*\]|json-or-python\[.*\])$")

# The longest JSONL line read (the shipped files' longest lines are under 1 KiB; a document
# file of `ragassay index` holds a whole document on one line). Longer is an error, so that
# a file without line breaks is not read into memory whole.
MAX_LINE_BYTES = 16 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_log = logging.getLogger("ragassay")


# --- reading ---------------------------------------------------------------------------


def _field_models(annotation: Any) -> list[type[BaseModel]]:
    """The record models inside a field's type (``list[Citation] | None`` → Citation)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _field_models(arg)]


def _model_at(model: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model of the record at ``loc`` (``("answer", "citations", 0)`` → Citation)."""
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        info = current.model_fields.get(part)
        models = _field_models(info.annotation) if info is not None else []
        current = models[0] if models else None
    return current


def _unknown_keys(model: type[BaseModel], errors: list[Any]) -> list[tuple[tuple[Any, ...], str]]:
    """``(location of the key, message)`` of every unknown key among pydantic's errors."""
    out = []
    for err in errors:
        if err.get("type") != "extra_forbidden":
            continue
        loc = tuple(p for p in err.get("loc", ()) if not _TYPE_LABEL.match(str(p)))
        if "key" in (err.get("ctx") or {}):  # a record that allows only some extra keys
            loc = (*loc, err["ctx"]["key"])
        if not loc:
            continue
        owner = _model_at(model, loc[:-1])
        # a record allowing some extra keys names them in ``extra_keys`` (Usage: source)
        known = (sorted({*owner.model_fields, *getattr(owner, "extra_keys", ())})
                 if owner is not None else [])
        out.append((loc, unknown_name("field", str(loc[-1]), known)))
    return out


def _drop(data: Any, loc: Sequence[Any]) -> None:
    """Delete the key at ``loc`` from the decoded record ``data`` (in place)."""
    node = data
    for part in loc[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        node.pop(loc[-1], None)


def _dotted(prefix: str, loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc]
    return ".".join([prefix, *parts] if prefix else parts) or "(record)"


def parse_record(model: type[M], data: Any, path: str | Path, line: int | None = None, *,
                 prefix: str = "", hint: str = "", lenient: bool = False,
                 warnings: list[str] | None = None) -> M:
    """Validate one decoded record; a pydantic error becomes an :class:`InputError` naming
    the first invalid field (``prefix`` + ``.text``, e.g. ``chunks.17.text``), with ``hint``
    (how to fix it) after the message.

    An unknown key is named with the closest known field: ``unknown field 'must_contian';
    did you mean must_contain?``; one with a close match is reported before any other error
    (a misspelt required field is named as a misspelling, not as missing).

    With ``lenient``, unknown keys are dropped instead, each with a warning
    (``file:line: field 'x': unknown field 'x'; ...; ignored``) appended to ``warnings`` (or
    logged on the ``ragassay`` logger when no list is given); every other error still raises.
    """
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object, got {type(data).__name__}{hint}",
                         line=line, field=prefix or None)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        unknown = _unknown_keys(model, errors)
        if unknown and lenient:
            data = copy.deepcopy(data)
            for loc, message in unknown:
                _drop(data, loc)
                where = str(path) if line is None else f"{path}:{line}"
                note = f"{where}: field '{_dotted(prefix, loc)}': {message}; ignored"
                if warnings is None:
                    _log.warning(note)
                else:
                    warnings.append(note)
            return parse_record(model, data, path, line, prefix=prefix, hint=hint)
        # A misspelt key comes first (it explains a "missing" error of the field it means);
        # any other unknown key in pydantic's order, among the other errors.
        misspelt = [u for u in unknown if "did you mean" in u[1]]
        if misspelt or (unknown and errors[0].get("type") == "extra_forbidden"):
            loc, message = (misspelt or unknown)[0]
            raise InputError(path, message + hint, line=line,
                             field=_dotted(prefix, loc)) from None
        err = errors[0]
        where_in = [p for p in err.get("loc", ()) if not _TYPE_LABEL.match(str(p))]
        raise InputError(path, err.get("msg", "invalid value") + hint, line=line,
                         field=_dotted(prefix, where_in)) from None


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


def _decode(data: bytes, path: Path, *, hint: str = "") -> str:
    """UTF-8 text of a whole file (a leading byte order mark dropped); an undecodable byte
    names its line and its offset in the line and in the file."""
    body = data[len(_BOM):] if data.startswith(_BOM) else data
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start + len(data) - len(body)
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise InputError(path, f"not UTF-8 text (byte 0x{data[start]:02x} at byte {column} of "
                         f"the line, byte {start + 1} of the file){hint}", line=line) from None


def read_json(path: str | Path, *, hint: str = "") -> Any:
    """One JSON document; malformed JSON or text that is not UTF-8 names file and line. A
    UTF-8 byte order mark is accepted."""
    p = _need_file(path)
    return decode_json(_decode(p.read_bytes(), p, hint=hint), p, hint=hint)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n} bytes"


def iter_jsonl(path: str | Path, *,
               max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, decoded_value)`` for each non-blank line, streaming.

    A UTF-8 byte order mark before the first line is accepted. A line longer than
    ``max_line_bytes`` (its line break not counted) is an error naming it, found without
    reading more than that much of it.
    """
    p = _need_file(path)
    with p.open("rb") as fh:
        line_no = 0
        while raw := fh.readline(max_line_bytes + 2):
            line_no += 1
            body = raw.rstrip(b"\r\n") if raw.endswith(b"\n") else raw
            if len(body) > max_line_bytes:
                raise InputError(p, f"line longer than {_size(max_line_bytes)} (the longest "
                                 "JSONL line read); is the file one JSON value per line?",
                                 line=line_no)
            skipped = 0
            if line_no == 1 and raw.startswith(_BOM):
                raw, skipped = raw[len(_BOM):], len(_BOM)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(p, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte "
                                 f"{exc.start + skipped + 1} of the line)",
                                 line=line_no) from None
            if text.strip():
                yield line_no, decode_json(text, p, line_no)


def read_jsonl(path: str | Path, model: type[M], *, key: str | None = None,
               lenient: bool = False, warnings: list[str] | None = None) -> list[M]:
    """Read a JSONL file of ``model`` records; with ``key``, refuse duplicate keys.

    Each record remembers its line number (:func:`line_of`) for later errors. ``lenient``
    and ``warnings``: unknown keys become warnings, see :func:`parse_record`.
    """
    seen: dict[str, int] = {}
    out: list[M] = []
    for line_no, data in iter_jsonl(path):
        rec = parse_record(model, data, path, line_no, lenient=lenient, warnings=warnings)
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


def _duplicate_keys(loader: yaml.SafeLoader, node: yaml.Node, path: Path, prefix: str) -> None:
    """Refuse a mapping that names a key twice (PyYAML would keep the last silently)."""
    if isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults`
                _duplicate_keys(loader, value_node, path, prefix)
                continue
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            name = f"{prefix}{key}"
            try:
                if key in first:
                    raise InputError(path, f"duplicate key {key!r} (first on line "
                                     f"{first[key]}); YAML would keep only the last",
                                     line=line, field=name)
                first[key] = line
            except TypeError:  # an unhashable key: PyYAML refuses it when constructing
                pass
            _duplicate_keys(loader, value_node, path, name + ".")
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _duplicate_keys(loader, item, path, f"{prefix}{i}.")


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping, with the line of a syntax error, of a key given twice
    (``file:line: field 'pipeline.top_k': duplicate key``) or of a byte that is not UTF-8. A
    UTF-8 byte order mark is accepted."""
    p = _need_file(path)
    text = _decode(p.read_bytes(), p)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _duplicate_keys(loader, node, p, "")
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(p, f"malformed YAML ({getattr(exc, 'problem', exc)})", line=line) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise InputError(p, "expected a mapping at the top level")
    return data


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
        self._dirs = {root}

    def bytes(self, name: str, data: bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self._dirs.add(path.parent)
        _write_new(path, data)
        return path

    def text(self, name: str, text: str) -> Path:
        return self.bytes(name, text.encode("utf-8"))

    def _sync(self) -> None:
        for path in sorted(self._dirs, key=lambda p: len(p.parts), reverse=True):
            _sync_dir(path)


def _step(name: str) -> None:
    """A point of :func:`write_folder` between two changes on disk; the crash tests stop
    the process here."""


@functools.cache
def _renameat2() -> Callable[[bytes, bytes], int] | None:
    """``renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)`` through libc (glibc 2.28+),
    else the raw syscall; ``None`` off Linux."""
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
        return lambda a, b: int(fn(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE))
    nr = _SYS_RENAMEAT2.get(platform.machine().lower())
    if nr is None:
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    long = ctypes.c_long
    # syscall() is variadic: every argument passed as a full register
    return lambda a, b: int(syscall(long(nr), long(_AT_FDCWD), ctypes.c_char_p(a),
                                    long(_AT_FDCWD), ctypes.c_char_p(b),
                                    long(_RENAME_EXCHANGE)))


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names of ``a`` and ``b`` atomically; ``False`` when this OS or filesystem
    cannot (nothing changed then)."""
    call = _renameat2()
    if call is None:
        return False
    if call(os.fsencode(a), os.fsencode(b)) == 0:
        return True
    err = ctypes.get_errno()
    if err in _NO_EXCHANGE:
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


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

    An existing ``dest`` is refused unless ``force``; with ``force`` the new folder takes
    its place in one atomic exchange (Linux), or two renames recorded in a journal, and the
    old one is deleted. An interruption leaves ``dest`` as it was, or after a kill, a state
    :func:`recover` (called first here) finishes: never half-written, never missing. A
    ``dest`` that is a symbolic link or a file is refused.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
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
        if not os.path.lexists(dest):
            os.rename(tmp, dest)
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
    removed. A write in progress is left alone. Returns one message per action, each also
    logged as a warning on the ``ragassay.jsonio`` logger. Never raises for I/O errors:
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
    for message in messages:
        log.warning("%s", message)
    return messages
