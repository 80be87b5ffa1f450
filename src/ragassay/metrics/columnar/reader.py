"""The columnar TREC file reader (about 580 lines: the block parser and its exact number reader
belong together): qrels and run files read into numpy columns without a Python object per
line.

A file is read in blocks of whole lines (a few MiB each, read into memory one after the
other, so the file itself is never held whole); each block is split into tokens with array
operations on its bytes (whitespace as ``str.split`` has it in ASCII; line breaks ``\\n``,
``\\r\\n`` and ``\\r`` as ``bytes.splitlines``), so ids stay bytes (``S`` arrays, compared
byte-wise, which is trec_eval's ``strcmp`` order and, for UTF-8, code-point order) and
numbers are read exactly as ``float()`` reads them. Two blocks are parsed at once, in
threads (numpy releases the GIL in most of a block's passes); their rows are joined in file
order, so the result is the same as reading block by block. What the file rules are is
stated in :mod:`ragassay.metrics.trec`; a block with a non-ASCII whitespace character is read
line by line with ``str.split`` so that it splits the same way.

Errors are the line-by-line reader's: the first bad line of the file (by line number) is
reported, whatever is wrong with it, with the file, line and field.
"""

from __future__ import annotations

import math
import os
import sys
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ...errors import InputError
from .keys import duplicate_rows, pair_hash, run_blocks

QRELS_COLUMNS = "qid iter docid grade"
RUN_COLUMNS = "qid Q0 docid rank score tag"
_CHUNK = 2 << 20  # bytes read per block: bounds the temporary arrays, not the result
_THREADS = 2  # blocks parsed at once


@dataclass(frozen=True)
class Table:
    """One TREC file as columns: row i is the i-th data line (comments and blank lines
    skipped). ``qid``/``docid``: ``S`` arrays (bytes ids); ``value``: the grade (qrels) or
    score (run) as float64; ``line``: the 1-based line number, for errors; ``tag``: a
    run's last line's tag (its sixth column: trec_eval's ``runid``)."""

    qid: np.ndarray
    docid: np.ndarray
    value: np.ndarray
    line: np.ndarray
    tag: str = ""

    def __len__(self) -> int:
        return len(self.value)

    @cached_property
    def pairs(self) -> np.ndarray:
        """The 64-bit :func:`pair_hash` of each row's (qid, docid), computed once."""
        return pair_hash(self.qid, self.docid)


def read_table(path: str | Path, kind: str) -> Table:
    """Read a qrels (``kind="qrels"``) or run (``kind="run"``) file; ``-`` is standard input.

    Raises :class:`InputError` naming the file and line for the first bad line: a wrong
    column count, bytes that are not UTF-8, a grade that is not an integer, a score that is
    not a finite number, a document judged or retrieved twice for one query.
    """
    p = Path(path)
    if str(path) == "-":
        return _Reader(p, kind).read(sys.stdin.buffer)
    if not p.is_file():
        raise InputError(p, "file not found")
    with open(p, "rb") as fh:
        return _Reader(p, kind, size=os.fstat(fh.fileno()).st_size).read(fh)


def _blocks(fh: BinaryIO) -> Iterator[bytes]:
    """The bytes of ``fh`` in blocks of whole lines of about :data:`_CHUNK` bytes (a longer
    line is one block of its own; a ``\\r\\n`` pair is never split), each framed as
    :func:`_parse` reads it: a space before, a space and 8 zero bytes after."""
    held: list[bytes] = []  # the start of a line not ended yet
    while more := fh.read(_CHUNK):
        # the last line break, but not a \r at the very end: a \n may follow it
        cut = max(more.rfind(b"\n"), more.rfind(b"\r", 0, len(more) - 1))
        if cut < 0:
            held.append(more)
            continue
        yield b"".join((_BEFORE, *held, memoryview(more)[:cut + 1], _AFTER))
        held = [more[cut + 1:]] if cut + 1 < len(more) else []
    if held:
        yield b"".join((_BEFORE, *held, _AFTER))


# A space on either side of a block, so that every token starts after a space and ends
# before one; 8 zero bytes after, so that a 64-bit word read at any byte stays inside.
_BEFORE, _AFTER = b" ", b" " + bytes(8)


def _has_unicode_space(data: bytes) -> bool:
    """Does the text hold a non-ASCII character that ``str.split`` splits on (U+0085,
    U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000)?"""
    if not any(data.find(lead) >= 0 for lead in (b"\xc2", b"\xe1", b"\xe2", b"\xe3")):
        return False
    return any(data.find(ch.encode()) >= 0 for ch in _unicode_spaces())


def _unicode_spaces() -> list[str]:
    return [chr(c) for c in range(0x80, 0x3001) if chr(c).isspace()]


# ASCII whitespace of str.split: \t \n \v \f \r (9..13), \x1c..\x1f (28..31) and space
_SPACE = bytes(int(c in (*range(9, 14), *range(28, 33))) for c in range(256))


@dataclass(frozen=True)
class _Kind:
    """What the lines of one kind of file hold."""

    name: str
    columns: str
    value_at: int  # the token of the grade or score

    @property
    def expected(self) -> int:
        return len(self.columns.split())

    def bad_count(self, count: np.ndarray) -> np.ndarray:
        """A run may have more columns than its six (trec_eval ignores them), qrels not."""
        return count < self.expected if self.name == "run" else count != self.expected

    def count_error(self, count: int) -> str:
        return f"expected {self.expected} columns '{self.columns}', got {count}"


_KINDS = {"qrels": _Kind("qrels", QRELS_COLUMNS, 3), "run": _Kind("run", RUN_COLUMNS, 4)}

_Error = tuple[int, str, str | None]  # (line, message, field): the line within its block


@dataclass(frozen=True)
class _Block:
    """The rows of one block (:func:`_parse`): line numbers count from 1 at the block's
    first line; ``pairs``: the rows' :func:`pair_hash` (hashed here, in the block's thread);
    ``lines``: how many line breaks the block holds; ``error``: its first bad line, the rows
    kept being those before it (and some after it, which are dropped)."""

    qid: np.ndarray
    docid: np.ndarray
    value: np.ndarray
    line: np.ndarray
    pairs: np.ndarray
    lines: int
    error: _Error | None
    tag: bytes = b""  # a run's: the tag of its last row


class _Reader:
    """Reads one file block by block; collects the rows, and raises the first error by
    line."""

    def __init__(self, path: Path, kind: str, size: int | None = None) -> None:
        self.path = path
        self.kind = _KINDS[kind]
        self.lines_before = 0
        # a data line holds at least `expected` one-byte tokens, their separators, a break
        most = None if size is None else size // (2 * self.kind.expected - 1) + 1
        self.rows = _Columns(most)
        self.tag = b""

    def read(self, fh: BinaryIO) -> Table:
        """The table of the file ``fh``: its blocks parsed :data:`_THREADS` at a time and
        added in file order, so the rows and the error are those of a serial read."""
        blocks = _blocks(fh)
        head = list(islice(blocks, 2))
        if len(head) < 2:  # one block: no thread to start
            for block in head:
                self._add(_parse(block, self.kind))
            return self.table()
        with ThreadPoolExecutor(_THREADS) as pool:
            pending: deque[Future[_Block]] = deque(
                pool.submit(_parse, block, self.kind) for block in head)
            try:
                for block in blocks:  # read while the earlier blocks are parsed
                    pending.append(pool.submit(_parse, block, self.kind))
                    while len(pending) > _THREADS:
                        self._add(pending.popleft().result())
                while pending:
                    self._add(pending.popleft().result())
            finally:
                for future in pending:  # after an error: the blocks after it are not needed
                    future.cancel()
        return self.table()

    def _add(self, block: _Block) -> None:
        base = self.lines_before
        self.lines_before += block.lines
        self.rows.append(block.qid, block.docid, block.value, block.line + np.int32(base),
                         block.pairs)
        if len(block.value):
            self.tag = block.tag
        if block.error is not None:
            line, message, field = block.error
            self._duplicates(before=base + line)
            raise InputError(self.path, message, line=base + line, field=field)

    def table(self) -> Table:
        t = self.rows.table()
        self._duplicates(before=None)
        if self.tag:
            t = _table(t.qid, t.docid, t.value, t.line, t.pairs,
                       tag=self.tag.decode("utf-8", "replace"))
        return t

    def _duplicates(self, before: int | None) -> None:
        """Raise the error for the first line (before line ``before``) that repeats a
        (query, document) pair of an earlier line."""
        t = self.rows.table()
        if before is not None:
            keep = t.line < before
            t = _table(t.qid[keep], t.docid[keep], t.value[keep], t.line[keep], t.pairs[keep])
        repeat = duplicate_rows(t)
        if len(repeat):
            i = int(repeat[np.argmin(t.line[repeat])])
            verb = "judged" if self.kind.name == "qrels" else "retrieved"
            raise InputError(self.path, f"document {t.docid[i].decode()!r} {verb} twice for "
                             f"query {t.qid[i].decode()!r}", line=int(t.line[i]),
                             field="docid")


class _Columns:
    """The rows read so far, in arrays allocated for the most rows the file can hold:
    memory never written is not resident, so the table costs its rows only, and each
    block's rows are copied in and freed (no concatenation at the end). With no size
    known (standard input) the arrays double when full; an id wider than the arrays so far
    widens them."""

    def __init__(self, most: int | None) -> None:
        self.capacity = 0 if most is None else most
        self.count = 0
        self.arrays: list[np.ndarray] = []  # qid, docid, value, line, pairs

    def append(self, *columns: np.ndarray) -> None:
        k = len(columns[2])
        if not self.arrays:
            self.capacity = max(self.capacity, k)
            try:
                self.arrays = [np.empty(self.capacity, dtype=c.dtype) for c in columns]
            except MemoryError:  # more address space than the system lends: grow instead
                self.capacity = k
                self.arrays = [np.empty(k, dtype=c.dtype) for c in columns]
        n = self.count
        if n + k > self.capacity:
            self.capacity = max(2 * self.capacity, n + k)
            self.arrays = [_moved(a, a.dtype, self.capacity, n) for a in self.arrays]
        for i in (0, 1):
            if columns[i].dtype.itemsize > self.arrays[i].dtype.itemsize:
                self.arrays[i] = _moved(self.arrays[i], columns[i].dtype, self.capacity, n)
        for array, column in zip(self.arrays, columns, strict=True):
            array[n:n + k] = column  # a narrower id is padded with zero bytes
        self.count = n + k

    def table(self) -> Table:
        if not self.arrays:
            empty = np.array([], dtype="S8")
            return _table(empty, empty, np.array([], dtype=np.float64),
                          np.array([], dtype=np.int32), np.array([], dtype=np.uint64))
        return _table(*(a[:self.count] for a in self.arrays))


def _moved(array: np.ndarray, dtype: np.dtype, capacity: int, count: int) -> np.ndarray:
    """A new array of ``capacity`` items of ``dtype`` holding the first ``count`` of
    ``array``."""
    out = np.empty(capacity, dtype=dtype)
    out[:count] = array[:count]
    return out


def _table(qid: np.ndarray, docid: np.ndarray, value: np.ndarray, line: np.ndarray,
           pairs: np.ndarray, *, tag: str = "") -> Table:
    """A :class:`Table` whose pair hashes are already known."""
    t = Table(qid, docid, value, line, tag)
    t.__dict__["pairs"] = pairs  # what the cached property would compute
    return t


# --- one block of bytes -------------------------------------------------------------------


def _parse(block: bytes, kind: _Kind) -> _Block:
    """The rows of a block of whole lines (framed as :func:`_blocks` frames it), and its
    first bad line. Runs in a thread."""
    if not block.isascii() and _has_unicode_space(block):
        return _parse_lines(block[len(_BEFORE):-len(_AFTER)], kind)
    n = len(block) - len(_AFTER) + 1  # the bytes up to the space after the lines
    buf = np.frombuffer(block, dtype=np.uint8, count=n)
    space = np.frombuffer(block.translate(_SPACE), dtype=np.bool_, count=n)
    edges = np.flatnonzero(space[1:] != space[:-1])
    # token i is block[before[i] + 1:last[i] + 1]: after a space, up to its last byte
    before, last = edges[0::2], edges[1::2]
    if block.find(b"\r") < 0:
        breaks = np.flatnonzero(buf == 10)
    else:  # \r alone breaks a line too; \r\n breaks it once
        breaks = np.flatnonzero((buf == 10) | ((buf == 13) & (np.append(buf[1:], 0) != 10)))
    errors: list[_Error] = []
    if not block.isascii():
        error = _utf8_error(block[len(_BEFORE):-len(_AFTER)], breaks - len(_BEFORE))
        if error is not None:
            errors.append(error)
    first, count, line = _lines(before, breaks, kind.expected)
    keep = buf[before[first] + 1] != ord("#")
    if not keep.all():
        first, count, line = first[keep], count[keep], line[keep]
    bad = kind.bad_count(count)
    if bad.any():
        i = int(np.argmax(bad))
        errors.append((int(line[i]), kind.count_error(int(count[i])), None))
        first, line = first[:i], line[:i]
    words = np.ndarray((n + 1,), dtype="<u8", buffer=block, strides=(1,))  # at each byte
    qid = _strings(words, before[first] + 1, last[first] + 1)
    docid = _strings(words, before[first + 2] + 1, last[first + 2] + 1)
    at = first + kind.value_at
    value, error = _numbers(*_token_words(words, before[at] + 1, last[at] + 1), line, kind)
    if error is not None:
        errors.append(error)
    k = len(value)
    tag = b""
    if k and kind.name == "run":
        token = first[k - 1] + 5
        tag = block[before[token] + 1:last[token] + 1]
    return _Block(qid[:k], docid[:k], value, line[:k], pair_hash(qid[:k], docid[:k]),
                  len(breaks), min(errors, key=lambda e: e[0]) if errors else None, tag)


def _lines(before: np.ndarray, breaks: np.ndarray, expected: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each line holding a token: its first token, its number of tokens, its line
    number (from 1). ``before``: the byte before each token (a space: a token starts
    before a line break ``b`` exactly when ``before < b``); ``breaks``: the line breaks."""
    t, m = len(before), len(breaks)
    rows = t // expected
    if t and t % expected == 0 and rows in (m, m + 1):  # maybe the usual file: no blank
        heads, tails = before[::expected], before[expected - 1::expected]  # line, no
        if bool((tails[:m] < breaks[:rows]).all()) and bool(  # extra column, no comment
                (heads[1:] >= breaks[:rows - 1]).all()):  # of another length
            return (np.arange(0, t, expected), np.full(rows, expected),
                    np.arange(1, rows + 1, dtype=np.int32))
    # line k holds the tokens from line_first[k] to line_first[k + 1]
    line_first = np.concatenate(([0], np.searchsorted(before, breaks), [t]))
    count = np.diff(line_first)
    line = np.flatnonzero(count)  # not blank
    # 2**31 lines would be a 100 GB file
    return line_first[line], count[line], (line + 1).astype(np.int32)


def _utf8_error(data: bytes, breaks: np.ndarray) -> _Error | None:
    """The first line of ``data`` that is not UTF-8 (``breaks``: its line breaks)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start
        i = int(np.searchsorted(breaks, at))  # the breaks before byte `at`
        line_start = int(breaks[i - 1]) + 1 if i else 0
        return (i + 1, f"not UTF-8 text (byte 0x{data[at]:02x} at column "
                       f"{at - line_start + 1})", None)
    return None


def _parse_lines(data: bytes, kind: _Kind) -> _Block:
    """:func:`_parse` for a block with non-ASCII whitespace: line by line, ``str.split``."""
    rows: list[tuple[str, str, str, int]] = []
    tags: list[str] = []
    raw_lines = data.splitlines()
    error: _Error | None = None
    for line_no, raw in enumerate(raw_lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            error = (line_no, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column "
                              f"{exc.start + 1})", None)
            break
        fields = text.split()
        if not fields or fields[0].startswith("#"):
            continue
        if kind.bad_count(np.array([len(fields)]))[0]:
            error = (line_no, kind.count_error(len(fields)), None)
            break
        rows.append((fields[0], fields[2], fields[kind.value_at], line_no))
        tags.append(fields[5] if kind.name == "run" else "")
    qid, docid, token, line = (list(c) for c in zip(*rows, strict=True)) if rows else (
        [], [], [], [])
    line_arr = np.array(line, dtype=np.int32)
    texts = encode_ids(token)
    lengths = np.array([len(t.encode()) for t in token], dtype=np.int64)
    words = texts.view("<u8").reshape(len(texts), -1)
    values, value_error = _numbers(words, lengths, line_arr, kind)
    if value_error is not None:
        error = value_error  # it comes before the line that stopped the loop
    k = len(values)
    qids, docids = encode_ids(qid)[:k], encode_ids(docid)[:k]
    return _Block(qids, docids, values, line_arr[:k], pair_hash(qids, docids),
                  len(raw_lines), error, tags[k - 1].encode() if k else b"")


def _token_words(words: np.ndarray, starts: np.ndarray, ends: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The tokens ``[starts[i], ends[i])`` as rows of little-endian 64-bit words (zero
    bytes after the token: ``S`` ids whose width is a multiple of 8, readable as words for
    hashing), and their lengths. ``words``: a word at every byte of the block (the last
    one in bounds)."""
    lengths = ends - starts
    width = max(1, -(-int(lengths.max()) // 8)) if len(lengths) else 1
    out = np.empty((len(starts), width), dtype="<u8")
    for j in range(width):
        at = starts if j == 0 else np.minimum(starts + 8 * j, len(words) - 1)
        np.bitwise_and(words[at], _low_bytes(lengths - 8 * j), out=out[:, j])
    return out, lengths


def _low_bytes(count: np.ndarray) -> np.ndarray:
    """The 64-bit masks of the low ``count`` bytes (none below 0, all above 8)."""
    bits = np.minimum(np.maximum(count, 0), 8).astype(np.uint64) << np.uint64(3)
    return ~(_ONES << bits)  # numpy shifts by 64 to 0


_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


def _strings(words: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The tokens ``[starts[i], ends[i])`` as an ``S`` array (see :func:`_token_words`)."""
    out, _ = _token_words(words, starts, ends)
    return out.view(f"S{8 * out.shape[1]}").ravel()


def _numbers(words: np.ndarray, lengths: np.ndarray, line: np.ndarray, kind: _Kind
             ) -> tuple[np.ndarray, _Error | None]:
    """The grade or score column (tokens as :func:`_token_words` rows) as float64, and
    the first line whose text is not a finite number (a score) or not an integer (a
    grade), if any: what Python's ``float()`` reads (:func:`_decimals` for the usual
    decimals, numpy's parser else, Python's for what numpy refuses)."""
    texts = words.view(f"S{8 * words.shape[1]}").ravel()
    values, fast = _decimals(words, lengths)
    if not fast.all():
        rest = np.flatnonzero(~fast)
        try:
            values[rest] = texts[rest].astype(np.float64)
        except (ValueError, UnicodeDecodeError):  # numpy refused one: Python decides
            values[rest] = [_python_float(t) for t in texts[rest].tolist()]
        # a token with a zero byte: float() refuses it ('S' arrays drop trailing zeros)
        values[rest[np.char.str_len(texts[rest]) != lengths[rest]]] = math.nan
    ok = np.isfinite(values)
    if kind.name == "qrels":
        ok &= values == np.floor(np.where(ok, values, 0))
    if ok.all():
        return values, None
    i = int(np.argmax(~ok))
    text = texts[i].decode("utf-8", "replace")
    if kind.name == "qrels":
        message, field = f"grade {text!r} is not an integer", "grade"
    else:
        message, field = f"score {text!r} is not a finite number", "score"
    return values[:i], (int(line[i]), message, field)


def _python_float(text: bytes) -> float:
    try:
        return float(text.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return math.nan


_POW10 = np.array([1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
                   1e14, 1e15])
_TEN_POW8 = np.array([10 ** k for k in range(9)], dtype=np.uint64)
_ZEROS = np.uint64(0x3030303030303030)  # '0' in every byte


def _decimals(words: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values of the tokens written ``[+-]digits[.digits]`` with 1 to 15 digits in at most
    16 bytes, and which tokens are so written (the others are left to numpy's and Python's
    parsers). ``words``/``lengths``: as :func:`_token_words` gives them.

    Exactly what ``float()`` gives: the digits form an integer below 2**53 and a power of
    ten up to 1e15 is exact, so their quotient is the correctly rounded value (Clinger's
    fast path of strtod). The digits are read 8 at a time from a 64-bit word (the sign and
    the dot taken out, the digits moved to the word's top, then pairs, fours and eights
    of digits combined by multiplying), so nothing loops over the characters."""
    nw = min(2, words.shape[1])  # a token of more than 16 bytes is not a fast one
    chars = np.ascontiguousarray(words[:, :nw]).view(np.uint8)  # (rows, 8 * nw) bytes
    digit_w = _bytes_set((chars - np.uint8(48)) <= 9)
    dot_w = _bytes_set(chars == 46)
    digits = np.bitwise_count(digit_w).sum(axis=1, dtype=np.int64)
    dots = np.bitwise_count(dot_w).sum(axis=1, dtype=np.int64)
    minus = chars[:, 0] == 45
    sign = minus | (chars[:, 0] == 43)
    fast = ((digits + dots + sign == lengths) & (dots <= 1) & (digits >= 1) & (digits <= 15)
            & (lengths <= 16))
    # the dot's byte (16: none): a word with one byte set has 8 * its position bits below
    below = np.bitwise_count(dot_w - np.uint64(1)).astype(np.int64)  # 64 with no dot
    at = below[:, 0] // 8 if nw == 1 else np.where(dot_w[:, 0] != 0, below[:, 0] // 8,
                                                   8 + below[:, 1] // 8)
    at = np.where(dots == 1, at, 16)
    lo = words[:, 0].astype(np.uint64)
    hi = words[:, 1].astype(np.uint64) if nw == 2 else None
    lo, hi = _drop_byte(lo, hi, at)
    lo, hi = _drop_byte(lo, hi, np.where(sign, 0, 16))
    k_lo = np.minimum(digits, 8)
    with np.errstate(over="ignore"):
        mantissa = _eight_digits(lo - (_ZEROS & _low_bytes(k_lo)), k_lo)
        if hi is not None:
            k_hi = digits - k_lo
            mantissa = mantissa * _TEN_POW8[k_hi] + _eight_digits(
                hi - (_ZEROS & _low_bytes(k_hi)), k_hi)
    fraction = np.where(fast & (dots == 1), lengths - 1 - at, 0)
    values = mantissa.astype(np.float64) / _POW10[fraction]
    return np.where(minus, -values, values), fast


def _bytes_set(mask: np.ndarray) -> np.ndarray:
    """A (rows, 8 * n) bool array as (rows, n) words, one byte (0 or 1) per character."""
    return mask.view("<u8").astype(np.uint64, copy=False)


def _drop_byte(lo: np.ndarray, hi: np.ndarray | None, at: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray | None]:
    """Take byte ``at`` (0..15; 16: none) out of the 16 bytes ``lo`` + ``hi`` (``hi``
    None: zeros), the bytes after it moving one down."""
    eight = np.uint64(8)
    keep_lo = _low_bytes(at)  # the bytes of lo below `at`
    if hi is None:
        return (lo & keep_lo) | ((lo >> eight) & ~keep_lo), None
    keep_hi = _low_bytes(at - 8)
    new_lo = (lo & keep_lo) | (((lo >> eight) | (hi << np.uint64(56))) & ~keep_lo)
    return new_lo, (hi & keep_hi) | ((hi >> eight) & ~keep_hi)


def _eight_digits(word: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The integer of the ``count`` (0..8) digit values in the low bytes of ``word``, the
    first digit lowest (as read from text): moved to the word's top bytes, then combined
    pairwise (each step's lanes hold at most 99, 9999, 99999999: nothing carries over)."""
    word = word << ((np.uint64(8) - count.astype(np.uint64)) << np.uint64(3))  # 64: zero
    word = (word * np.uint64(10) + (word >> np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    word = (word * np.uint64(100) + (word >> np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    return (word * np.uint64(10000) + (word >> np.uint64(32))) & np.uint64(0xFFFFFFFF)


def encode_ids(values: object) -> np.ndarray:
    """Ids of any kind (str, bytes, numbers; a list, array or data-frame column) as a
    UTF-8 ``S`` array whose width is a multiple of 8."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "SU":
        arr = arr.astype(str)
    if arr.dtype.kind == "S":
        return arr.astype(f"S{max(8, -(-arr.dtype.itemsize // 8) * 8)}")
    n, width = len(arr), max(1, arr.dtype.itemsize // 4)
    points = np.ascontiguousarray(arr, dtype=f"U{width}").view(np.uint32).reshape(n, width)
    out = np.zeros((n, max(8, -(-width // 8) * 8)), dtype=np.uint8)
    step = max(1, (1 << 18) // width)  # rows per round: the narrowed copy stays in cache
    for lo in range(0, n, step):
        part = points[lo:lo + step]
        if int(part.max()) >= 0x80:  # not ASCII: UTF-8 takes 1 to 4 bytes
            encoded = np.char.encode(arr, "utf-8")
            return encoded.astype(f"S{max(8, -(-encoded.dtype.itemsize // 8) * 8)}")
        # ASCII: one byte per code point (numpy's own cast to bytes is 30x slower)
        out[lo:lo + step, :width] = part.astype(np.uint8)
    return out.view(f"S{out.shape[1]}").ravel()


def encode_repeated(values: object) -> np.ndarray:
    """:func:`encode_ids` for a column whose values come in runs (a query id per row, rows of
    one query together): only the first value of each run is encoded."""
    arr = np.asarray(values)
    if arr.dtype.kind == "O" or arr.ndim != 1:
        return encode_ids(arr)
    starts = run_blocks(arr)
    if len(starts) * 4 > len(arr):
        return encode_ids(arr)
    return np.repeat(encode_ids(arr[starts]), np.diff(np.append(starts, len(arr))))

