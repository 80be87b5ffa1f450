"""Reading JSONL / JSON input with file:line:field errors, and the JSON text form of what
ragassay writes (files are written by :mod:`ragassay.atomic`); YAML configs are read by
:mod:`ragassay.yamlio` with the same limits and errors.

Every malformed line, undecodable byte or pydantic validation error becomes an
:class:`~ragassay.errors.InputError` here (or in :mod:`ragassay.yamlio`), and nowhere else.

Limits (documented in docs/formats.md, "Limits"): a JSONL line of at most
:data:`MAX_LINE_BYTES`; JSON (and YAML) nested at most :data:`MAX_DEPTH` levels; a JSON
object names each key once (JSON parsers would keep the last silently).
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from .errors import InputError, unknown_name

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
# pydantic puts the member of a union into an error's location (``latency_ms.float``): not a
# field the user wrote, so it is left out of the field named.
_TYPE_LABEL = re.compile(r"^(?:[a-z]+\[.*\]|float|int|str|bool|none|list|dict|tuple|"
                         r"constrained-[a-z]+|"
                         r"function-[a-z-]+\[.*\]|lax-or-strict\[.*\]|json-or-python\[.*\])$")

# The longest JSONL line read (the shipped files' longest lines are under 1 KiB; a document
# file of `ragassay index` holds a whole document on one line). Longer is an error, so that
# a file without line breaks is not read into memory whole.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Nesting of a JSON value or a YAML document (records nest 3-4 levels; Python's parsers
# recurse and would crash past ~1,000).
MAX_DEPTH = 64
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


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def decode_json(text: str, path: str | Path, line: int | None = None, *, hint: str = "") -> Any:
    """``json.loads`` whose error names the file and line (``line``: of a JSONL record).
    A key given twice in one object, or nesting deeper than :data:`MAX_DEPTH`, is an
    error too."""
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON ({exc.msg}, column {exc.colno}){hint}",
                         line=exc.lineno if line is None else line) from None
    except _DuplicateKey as exc:
        raise InputError(path, f"key {exc.key!r} given twice in one object (JSON readers "
                         f"would keep only the last){hint}", line=line,
                         field=exc.key) from None
    except RecursionError:  # beyond what Python's parser reads: deeper than the limit too
        deep = True
    else:
        # more openers than the limit is the only way to nest deeper (cheap to count)
        deep = text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH
    if deep:
        raise InputError(path, f"JSON nested deeper than {MAX_DEPTH} levels (the limit "
                         f"ragassay reads){hint}", line=line)
    return value


def _need_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    return p


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


def read_limited(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of a file of at most ``limit`` bytes; a larger one is refused by its size
    before it is read (``docs/big.txt: a document of 2 GiB; the largest document read is
    256 MiB: split it``). ``what``: the kind of file, for the message."""
    p = _need_file(path)
    size = p.stat().st_size
    if size > limit:
        raise InputError(p, f"{what} of {_human(size)}; the largest {what} read is "
                         f"{_human(limit)}: split it into smaller files")
    with p.open("rb") as fh:
        data = fh.read(limit + 1)  # a file growing while it is read is cut at the limit
    if len(data) > limit:
        raise InputError(p, f"{what} larger than {_human(limit)} (it grew while read)")
    return data


def decode_text(data: bytes, path: Path, *, hint: str = "") -> str:
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
    return decode_json(decode_text(p.read_bytes(), p, hint=hint), p, hint=hint)


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


# --- the JSON text ragassay writes ------------------------------------------------------


def json_text(value: Any) -> str:
    """Indented UTF-8 JSON with a final newline: the form of every JSON file ragassay writes."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def _line_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False)`` with one encoder for many values:
    ``json.dumps`` makes a JSON encoder, and the C encoder under it, for every value (40 ms
    of the 18,000 rows of a 6,000-question run folder). Made for one call, never shared:
    while it runs, the encoder holds the containers it is inside (to refuse a circular
    reference)."""
    plain = json.JSONEncoder(ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without the C encoder
        return plain.encode
    encode = make({}, plain.default, json.encoder.encode_basestring, None,
                  plain.key_separator, plain.item_separator, False, False, True)
    return lambda value: "".join(encode(value, 0))


def jsonl_text(rows: Iterable[Any]) -> str:
    """One compact JSON value per line, keys in the given order (byte-identical reruns)."""
    dumps = _line_encoder()
    lines = [dumps(row) for row in rows]
    lines.append("")  # the last line's break, without copying the text once more
    return "\n".join(lines)


def write_jsonl(fh: BinaryIO, rows: Iterable[Any], *, batch: int = 1000) -> int:
    """Write ``rows`` to a binary handle as :func:`jsonl_text` would, ``batch`` rows at a
    time, so that memory holds one batch of text and not the file; returns the rows
    written."""
    n = 0
    for part in batched(rows, batch):
        fh.write(jsonl_text(part).encode("utf-8"))
        n += len(part)
    return n


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last one shorter); ``size`` >= 1."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
