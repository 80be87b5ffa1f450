"""Columnar qrels and runs: TREC files and arrays read into numpy columns, ranked and joined
without a Python object per line.

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

from ..errors import InputError
from .kernels import Relevance, _pad

QRELS_COLUMNS = "qid iter docid grade"
RUN_COLUMNS = "qid Q0 docid rank score tag"
_CHUNK = 2 << 20  # bytes read per block: bounds the temporary arrays, not the result
_THREADS = 2  # blocks parsed at once


@dataclass(frozen=True)
class Table:
    """One TREC file as columns: row i is the i-th data line (comments and blank lines
    skipped). ``qid``/``docid``: ``S`` arrays (bytes ids); ``value``: the grade (qrels) or
    score (run) as float64; ``line``: the 1-based line number, for errors."""

    qid: np.ndarray
    docid: np.ndarray
    value: np.ndarray
    line: np.ndarray

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
        if block.error is not None:
            line, message, field = block.error
            self._duplicates(before=base + line)
            raise InputError(self.path, message, line=base + line, field=field)

    def table(self) -> Table:
        t = self.rows.table()
        self._duplicates(before=None)
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
           pairs: np.ndarray) -> Table:
    """A :class:`Table` whose pair hashes are already known."""
    t = Table(qid, docid, value, line)
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
    return _Block(qid[:k], docid[:k], value, line[:k], pair_hash(qid[:k], docid[:k]),
                  len(breaks), min(errors, key=lambda e: e[0]) if errors else None)


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
    qid, docid, token, line = (list(c) for c in zip(*rows, strict=True)) if rows else (
        [], [], [], [])
    line_arr = np.array(line, dtype=np.int32)
    texts = _encode(token)
    lengths = np.array([len(t.encode()) for t in token], dtype=np.int64)
    words = texts.view("<u8").reshape(len(texts), -1)
    values, value_error = _numbers(words, lengths, line_arr, kind)
    if value_error is not None:
        error = value_error  # it comes before the line that stopped the loop
    k = len(values)
    qids, docids = _encode(qid)[:k], _encode(docid)[:k]
    return _Block(qids, docids, values, line_arr[:k], pair_hash(qids, docids),
                  len(raw_lines), error)


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


def _encode(values: object) -> np.ndarray:
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


def _encode_repeated(values: object) -> np.ndarray:
    """:func:`_encode` for a column whose values come in runs (a query id per row, rows of
    one query together): only the first value of each run is encoded."""
    arr = np.asarray(values)
    if arr.dtype.kind == "O" or arr.ndim != 1:
        return _encode(arr)
    starts = run_blocks(arr)
    if len(starts) * 4 > len(arr):
        return _encode(arr)
    return np.repeat(_encode(arr[starts]), np.diff(np.append(starts, len(arr))))


# --- keys: ids as integers --------------------------------------------------------------


def pair_hash(qid: np.ndarray, docid: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each (qid, docid) pair of ``S`` arrays; equal pairs hash equal,
    whatever the arrays' widths (multiples of 8): all-zero words, the padding, are skipped."""
    with np.errstate(over="ignore"):
        h = np.full(len(qid), 0x9E3779B97F4A7C15, dtype=np.uint64)
        for ids, salt in ((qid, 0x100000001B3), (docid, 0xC2B2AE3D27D4EB4F)):
            words = np.ascontiguousarray(ids).view(np.uint64).reshape(
                len(ids), ids.dtype.itemsize // 8)  # (also with no row)
            for col in words.T:
                mixed = (h ^ col) * np.uint64(salt)
                h = np.where(col != 0, mixed ^ (mixed >> np.uint64(29)), h)
            h = (h ^ (h >> np.uint64(31))) * np.uint64(0xFF51AFD7ED558CCD)  # ends the qid
    return h


def duplicate_rows(t: Table) -> np.ndarray:
    """Indices of the rows of ``t`` that repeat the (qid, docid) of an earlier row."""
    if len(t) < 2:
        return np.array([], dtype=np.int64)
    h = t.pairs
    ordered = np.sort(h)
    if not bool((ordered[1:] == ordered[:-1]).any()):
        return np.array([], dtype=np.int64)  # the usual case, found without an argsort
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same = np.flatnonzero(hs[1:] == hs[:-1])
    a, b = order[same], order[same + 1]
    if bool(((t.qid[a] == t.qid[b]) & (t.docid[a] == t.docid[b])).all()):
        return b  # stable: b is the later row of each equal pair
    pairs = np.char.add(np.char.add(t.qid.astype(bytes), b"\0"), t.docid.astype(bytes))
    _, first = np.unique(pairs, return_index=True)  # a hash collision: compare the bytes
    later = np.ones(len(t), dtype=bool)
    later[first] = False
    return np.flatnonzero(later)


def qid_codes(*columns: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted distinct ids of the columns and each column's codes (index into them)."""
    distinct, heads = _head_codes(*columns)
    return distinct, [np.repeat(codes, np.diff(np.append(starts, len(col))))
                      for col, (starts, codes) in zip(columns, heads, strict=True)]


def _head_codes(*columns: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """:func:`qid_codes` per block of equal ids: each column's block starts and their codes.

    Rows of one query usually come together, so only the first id of each block is sorted.
    """
    heads, starts = [], []
    for col in columns:
        starts.append(run_blocks(col))
        heads.append(col[starts[-1]])
    width = max([8, *(h.dtype.itemsize for h in heads)])
    distinct, inverse = np.unique(np.concatenate([h.astype(f"S{width}") for h in heads]),
                                  return_inverse=True)
    codes, at = [], 0
    for head, first in zip(heads, starts, strict=True):
        codes.append((first, inverse[at:at + len(head)].astype(np.int64)))
        at += len(head)
    return distinct, codes


def judged_rows(run: Table, qrels: Table, run_q: np.ndarray, qrels_q: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The (run row, qrels row) pairs of the same (query, document), run rows ascending.
    ``run_q``/``qrels_q``: the query codes of one :func:`qid_codes` call; neither table
    repeats a pair.

    The run's pair hashes (computed once per table, also for the duplicate check) are
    sorted and each judgment is looked up in them (a run has ~100x more rows than
    judgments); the ids of every match are compared, and a hash collision falls back to
    comparing sorted bytes."""
    none = np.array([], dtype=np.int64)
    if not len(qrels) or not len(run):
        return none, none
    order = np.argsort(run.pairs)
    sorted_h = run.pairs[order]
    if bool((sorted_h[1:] == sorted_h[:-1]).any()):  # a collision (no pair repeats)
        return _judged_rows_exact(run_q, run.docid, qrels_q, qrels.docid)
    qh = qrels.pairs
    pos = np.minimum(np.searchsorted(sorted_h, qh), len(sorted_h) - 1)
    hit = np.flatnonzero(sorted_h[pos] == qh)
    rows = order[pos[hit]]
    if not bool(((run_q[rows] == qrels_q[hit]) & (run.docid[rows] == qrels.docid[hit])).all()):
        return _judged_rows_exact(run_q, run.docid, qrels_q, qrels.docid)
    by_row = np.argsort(rows)
    return rows[by_row], hit[by_row]


def _judged_rows_exact(run_q: np.ndarray, run_doc: np.ndarray, qrels_q: np.ndarray,
                       qrels_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`judged_rows` by sorting the documents' bytes (after a hash collision)."""
    width = max(run_doc.dtype.itemsize, qrels_doc.dtype.itemsize, 8)
    docs, inverse = np.unique(np.concatenate([run_doc.astype(f"S{width}"),
                                              qrels_doc.astype(f"S{width}")]),
                              return_inverse=True)
    n = len(docs)
    rk = run_q * n + inverse[:len(run_q)]
    qk = qrels_q * n + inverse[len(run_q):]
    order = np.argsort(qk)
    pos = np.minimum(np.searchsorted(qk[order], rk), len(qk) - 1)
    rows = np.flatnonzero(qk[order][pos] == rk)
    return rows, order[pos[rows]]


def rank_rows(qcode: np.ndarray, score: np.ndarray, docid: np.ndarray) -> np.ndarray:
    """The permutation that puts run rows in trec_eval's order: query code ascending, score
    descending, ties by document id descending (byte-wise)."""
    n = len(qcode)
    if n < 2:
        return np.arange(n)
    order = _blocks_by_query(qcode)  # a run file lists each query's rows together
    q, s = qcode[order], score[order]
    dq, ds = np.diff(q), np.diff(s)
    if not bool(((dq > 0) | ((dq == 0) & (ds <= 0))).all()):  # not ranked by score yet
        order = np.lexsort((-score, qcode))
        q, s = qcode[order], score[order]
    tied = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not tied.any():
        return order
    # Sort each run of tied rows by document id, descending.
    in_tie = np.zeros(n, dtype=bool)
    in_tie[1:] |= tied
    in_tie[:-1] |= tied
    idx = np.flatnonzero(in_tie)
    group = np.cumsum(np.concatenate(([1], ~tied)))[idx]  # one number per tied run
    _, doc_rank = np.unique(docid[order[idx]], return_inverse=True)
    within = np.lexsort((-doc_rank.astype(np.int64), group))
    order[idx] = order[idx][within]
    return order


def _blocks_by_query(qcode: np.ndarray) -> np.ndarray:
    """The permutation that sorts the blocks of equal codes by code, each block's rows kept
    in their order (the usual file lists a query's documents together, ranked)."""
    n = len(qcode)
    if n < 2:
        return np.arange(n)
    start = np.concatenate(([0], np.flatnonzero(qcode[1:] != qcode[:-1]) + 1))
    codes = qcode[start]
    if bool((codes[1:] >= codes[:-1]).all()):
        return np.arange(n)
    size = np.diff(np.append(start, n))
    by_code = np.argsort(codes, kind="stable")
    start, size = start[by_code], size[by_code]
    new_start = np.cumsum(size) - size
    return np.repeat(start - new_start, size) + np.arange(n)


def block_starts(sorted_codes: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """For codes sorted ascending: each code's first row and number of rows (0..count-1)."""
    sizes = np.bincount(sorted_codes, minlength=count)
    return np.cumsum(sizes) - sizes, sizes


@dataclass(frozen=True)
class Joined:
    """A run joined with its qrels. ``qids``: the distinct ids of both (``S``, sorted, so a
    code is also trec_eval's query order); per code: judged, in the run, number of run rows;
    the judged run rows (code, grade, rank from 0 in trec_eval's order); the qrels rows."""

    qids: np.ndarray
    judged_query: np.ndarray
    in_run: np.ndarray
    size: np.ndarray
    hit_q: np.ndarray
    hit_grade: np.ndarray
    hit_rank: np.ndarray
    qrels_q: np.ndarray
    qrels_grade: np.ndarray


def join(qrels: Table, run: Table, *, keep_order: bool = False,
         run_queries: np.ndarray | None = None) -> Joined:
    """Look up each run row's grade in ``qrels`` and rank the judged rows within their
    query (see :func:`rank_rows`; ``keep_order``: the rows' order is the ranking).
    ``run_queries`` adds ids of queries present in the run with an empty ranking.

    Only judged rows are ranked, each by counting its query's rows scored above it: no
    measure reads the order of unjudged documents, so the run is not sorted (a query where
    a judged row's score is tied is sorted, for the doc-id tie-break). A run grouped by
    query takes :func:`join_grouped`, any other :func:`join_sorted`; both give the same
    judged rows (perhaps in another order)."""
    if not keep_order:
        grouped = join_grouped(qrels, run, run_queries)
        if grouped is not None:
            return grouped
    return join_sorted(qrels, run, keep_order=keep_order, run_queries=run_queries)


def join_sorted(qrels: Table, run: Table, *, keep_order: bool = False,
                run_queries: np.ndarray | None = None) -> Joined:
    """:func:`join` for any run, by sorting the 64-bit hashes of its (query, document)
    pairs."""
    extra = [] if run_queries is None else [run_queries]
    qids, codes = qid_codes(qrels.qid, run.qid, *extra)
    qrels_q, run_q = codes[0], codes[1]
    n = len(qids)
    hits, judgment = judged_rows(run, qrels, run_q, qrels_q)
    rank = _ranks(run_q, run.value, run.docid, hits, n, keep_order)
    size = np.bincount(run_q, minlength=n)
    in_run = size > 0
    if extra:
        in_run[codes[2]] = True
    return Joined(qids, np.bincount(qrels_q, minlength=n) > 0, in_run, size, run_q[hits],
                  qrels.value[judgment], rank, qrels_q, qrels.value)


def _ranks(run_q: np.ndarray, score: np.ndarray, docid: np.ndarray, rows: np.ndarray,
           n: int, keep_order: bool) -> np.ndarray:
    """The rank (from 0) of each of ``rows`` within its query, in trec_eval's order."""
    order = (np.argsort(run_q, kind="stable") if keep_order else _blocks_by_query(run_q))
    grouped = run_q[order]
    first, size = block_starts(grouped, n)
    width = int(size.max()) if len(size) else 0
    if keep_order or n * width > 4 * len(run_q) + 4096:  # the positions in a full sort
        if not keep_order:
            order = rank_rows(run_q, score, docid)
        position = np.empty(len(run_q), dtype=np.int64)
        position[order] = np.arange(len(run_q)) - first[run_q[order]]
        return position[rows]
    scores = np.full((n, max(width, 1)), -np.inf)  # no finite score is below -inf
    scores[grouped, np.arange(len(run_q)) - first[grouped]] = score[order]
    q, s = run_q[rows], score[rows]
    rank = np.zeros(len(rows), dtype=np.int64)
    tied = np.zeros(len(rows), dtype=bool)
    step = max(1, 4_000_000 // max(width, 1))  # bounds the (rows, width) comparison
    for lo in range(0, len(rows), step):
        block, at = scores[q[lo:lo + step]], s[lo:lo + step, None]
        rank[lo:lo + step] = (block > at).sum(axis=1)
        tied[lo:lo + step] = (block == at).sum(axis=1) > 1
    if tied.any():  # sort the queries with ties, to break them by doc id
        ties = np.zeros(n, dtype=bool)
        ties[q[tied]] = True
        sub = np.flatnonzero(ties[run_q])
        sub_order = sub[rank_rows(run_q[sub], score[sub], docid[sub])]
        sub_first, _ = block_starts(run_q[sub_order], n)
        position = np.empty(len(run_q), dtype=np.int64)
        position[sub_order] = np.arange(len(sub)) - sub_first[run_q[sub_order]]
        redo = ties[q]
        rank[redo] = position[rows[redo]]
    return rank


def by_query_and_rank(query: np.ndarray, rank: np.ndarray) -> np.ndarray | None:
    """The permutation that sorts rows by (query, rank), None when they already are (a run
    listed in rank order, the usual file, is: one pass instead of a sort). Queries and
    ranks are integers from 0; no (query, rank) repeats."""
    if len(query) < 2:
        return None
    dq, dr = np.diff(query), np.diff(rank)
    if bool(((dq > 0) | ((dq == 0) & (dr > 0))).all()):
        return None
    span = int(rank.max()) + 1
    if (int(query.max()) + 1) * span < 1 << 62:
        return np.argsort(query * span + rank)  # the keys are distinct: any sort will do
    return np.lexsort((rank, query))


def ideal_grades(query: np.ndarray, grade: np.ndarray, num_rel: np.ndarray) -> np.ndarray:
    """The ideal ranking of each query (0..len(num_rel)-1) as a zero-padded matrix: its
    relevant ``grade``s (one per judged relevant document) descending."""
    if not len(grade):
        return _pad(grade, num_rel)
    top = float(grade.max())
    span = top - float(grade.min()) + 1
    if (int(query.max()) + 1) * span < 2.0 ** 52 and bool((grade == np.floor(grade)).all()):
        order = np.argsort(query * span + (top - grade))  # integers, exact: one sort
    else:
        order = np.lexsort((-grade, query))
    return _pad(grade[order], num_rel)


def relevance_rows(j: Joined, evaluated: np.ndarray, *, level: float = 1,
                   max_docs: int | None = None, judged_only: bool = False,
                   graded: bool = True) -> tuple[Relevance, np.ndarray, np.ndarray, np.ndarray]:
    """The :class:`~ragassay.metrics.kernels.Relevance` of the query codes
    ``evaluated`` (ascending), and per query the number retrieved, relevant, and relevant
    retrieved.

    ``max_docs`` keeps each query's top documents (trec_eval ``-M``), then ``judged_only``
    drops the unjudged and negatively judged ones (``-J``); a grade below ``level`` counts 0
    (``-l``) unless ``graded`` (nDCG keeps every positive grade as gain, as trec_eval). Only
    grades >= 1 are kept as hits: every kernel reads a lower grade as 0."""
    n = len(j.qids)
    chosen = np.zeros(n, dtype=bool)
    chosen[evaluated] = True
    q, g, r = j.hit_q, j.hit_grade, j.hit_rank
    keep = chosen[q]
    depth = j.size if max_docs is None else np.minimum(j.size, max_docs)
    if max_docs is not None:
        keep &= r < max_docs
    if judged_only:  # trec_eval drops a negative grade with the unjudged documents
        keep &= g >= 0
    q, g, r = q[keep], g[keep], r[keep]
    if judged_only:  # ranks among the documents kept
        by_rank = np.lexsort((r, q))
        q, g = q[by_rank], g[by_rank]
        first, _ = block_starts(q, n)
        r = np.arange(len(q)) - first[q]
        depth = np.bincount(q, minlength=n)
    qrels_grade = j.qrels_grade
    if not graded:
        g = np.where(g >= level, g, 0.0)
        qrels_grade = np.where(qrels_grade >= level, qrels_grade, 0.0)
    row = np.full(n, -1, dtype=np.int64)
    row[evaluated] = np.arange(len(evaluated))
    depths = depth[evaluated]
    found = g >= 1
    hit_q, hit_r, hit_g = row[q[found]], r[found], g[found]
    in_order = by_query_and_rank(hit_q, hit_r)
    if in_order is not None:
        hit_q, hit_r, hit_g = hit_q[in_order], hit_r[in_order], hit_g[in_order]
    rel = chosen[j.qrels_q] & (qrels_grade >= 1)
    rel_q = j.qrels_q[rel]
    num_rel_all = np.bincount(rel_q, minlength=n)
    num_rel = num_rel_all[evaluated]
    relevance = Relevance(hit_q, hit_r, hit_g, int(depths.max()) if len(depths) else 0,
                          ideal_grades(rel_q, qrels_grade[rel], num_rel_all)[evaluated],
                          num_rel.astype(np.float64))
    return (relevance, depths, num_rel,
            np.bincount(hit_q, minlength=len(evaluated)).astype(np.int64))


# --- the grouped layout: each query's rows together (a run file, a run's arrays) --------


def run_blocks(ids: np.ndarray) -> np.ndarray:
    """The first row of each run of equal ids (rows of one query usually come together).
    Ids of 4 or 8 bytes' multiples (``S``, ``U``, numbers) are compared as 32- or 64-bit
    words, several times faster than numpy's string comparison; equal bytes are equal ids
    (and two blocks of equal ids that differ in their bytes, as 0.0 and -0.0, are two)."""
    n = len(ids)
    if n == 0:
        return np.array([], dtype=np.int64)
    size = ids.dtype.itemsize
    if ids.dtype.kind in "SUiufb" and size and size % 4 == 0:
        word = np.uint64 if size % 8 == 0 else np.uint32
        words = np.ascontiguousarray(ids).view(word).reshape(n, -1)
        change = words[1:, 0] != words[:-1, 0]
        for j in range(1, words.shape[1]):
            change |= words[1:, j] != words[:-1, j]
    else:
        change = ids[1:] != ids[:-1]
    return np.concatenate(([0], np.flatnonzero(change) + 1))


_ROUND = 1 << 17  # keys per round of the grouped join: its temporaries stay in the cache

_WORD_SALT = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                       0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53,
                       0x27D4EB2F165667C5, 0x94D049BB133111EB], dtype=np.uint64)


def id_hash(ids: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each id of an ``S`` array whose width is a multiple of 8: the sum of
    its 64-bit words, each times an odd constant (modulo 2**64), whose high bits depend on
    every bit of the id. Equal ids hash equal whatever the widths (the zero words of the
    padding add 0); unequal ids rarely do, and every use compares the ids of equal hashes."""
    h = np.zeros(len(ids), dtype=np.uint64)
    if not len(ids):
        return h
    words = np.ascontiguousarray(ids).view(np.uint64).reshape(len(ids), -1)
    step = 1 << 16  # rows per round: the product stays in cache
    product = np.empty(min(step, len(ids)), dtype=np.uint64)
    for lo in range(0, len(ids), step):
        part, tmp = h[lo:lo + step], product[:min(step, len(ids) - lo)]
        for j in range(words.shape[1]):
            salt = _WORD_SALT[j % len(_WORD_SALT)] + np.uint64(2 * (j // len(_WORD_SALT)))
            np.multiply(words[lo:lo + step, j], salt, out=tmp)  # uint64 wraps silently
            part += tmp
    return h


def _padded(values: np.ndarray, starts: np.ndarray, sizes: np.ndarray, width: int,
            fill: float) -> np.ndarray:
    """The rows of consecutive blocks as a (blocks, width) matrix, ``fill`` after a block's
    end (a view, no copy, when every block has ``width`` rows)."""
    if len(values) == len(starts) * width:
        return values.reshape(len(starts), width)
    out = np.full((len(starts), width), fill, dtype=values.dtype)
    place = np.arange(len(values)) - np.repeat(starts, sizes)
    out[np.repeat(np.arange(len(starts)), sizes), place] = values
    return out


def _search_rows(matrix: np.ndarray, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted(matrix[r], v, side="right")`` for each (r, v) of ``rows``/``values``,
    each row of ``matrix`` sorted ascending: one branch-free binary search for all,
    log2(width) rounds of one gather each."""
    width = matrix.shape[1]
    flat = matrix.reshape(-1)
    base = rows * width - 1
    count = np.zeros(len(rows), dtype=np.int64)  # elements known to be <= the value
    probe, at = np.empty_like(count), np.empty(len(rows), dtype=matrix.dtype)
    below = np.empty(len(rows), dtype=bool)
    step = 1 << (width.bit_length() - 1)
    while step:
        np.add(count, step, out=probe)
        np.minimum(probe, width, out=probe)
        flat.take(np.add(base, probe), out=at)
        np.less_equal(at, values, out=below)
        np.copyto(count, probe, where=below)
        step >>= 1
    return count


def join_grouped(qrels: Table, run: Table, run_queries: np.ndarray | None = None
                 ) -> Joined | None:
    """:func:`join` for a run whose rows of one query come together (the usual layout) with
    about as many rows for each query; None for any other run, and for a run that repeats
    a (query, document) pair: both are left to :func:`join`.

    Nothing is sorted over the whole run. Per query, the documents' hashes are sorted, to
    find a repeat and each judgment's row (by binary search; the ids of equal hashes are
    compared), and so are the scores: a judged row's rank is the number of its query's rows
    scored above it, also a binary search. A query where a judged row's score is tied is
    ranked in full by :func:`rank_rows`, for the doc-id tie-break."""
    n_run = len(run)
    if not n_run or not len(qrels):
        return None
    starts = run_blocks(run.qid)
    sizes = np.diff(np.append(starts, n_run))
    width = int(sizes.max())
    if len(starts) * width > 2 * n_run + 4096 or width > 1 << 24:
        return None  # ragged: a padded matrix would cost more than sorting
    extra = [] if run_queries is None else [run_queries]
    qids, heads = _head_codes(qrels.qid, run.qid[starts], *extra)
    n = len(qids)
    block_code = heads[1][1]
    if len(np.unique(block_code)) < len(block_code):
        return None  # a query in two places of the run
    block_of = np.full(n, -1, dtype=np.int64)
    block_of[block_code] = np.arange(len(starts))
    n_blocks = len(starts)
    place_bits = max(1, (width - 1).bit_length())
    if 64 - max(1, (n_blocks - 1).bit_length()) - place_bits < 24:
        return None  # too few bits left for the hash in a 64-bit key
    # Judgments, by block: each qrels row's key with place 0
    qrels_starts, qrels_heads = heads[0]
    qrels_q = np.repeat(qrels_heads, np.diff(np.append(qrels_starts, len(qrels))))
    judgment = np.flatnonzero(block_of[qrels_q] >= 0)
    j_block = block_of[qrels_q[judgment]]
    if len(j_block) > 1 and not bool((np.diff(j_block) >= 0).all()):
        by_block = np.argsort(j_block, kind="stable")
        judgment, j_block = judgment[by_block], j_block[by_block]
    wanted = _keys(id_hash(qrels.docid[judgment]), j_block, n_blocks, place_bits, 0)
    # The run in rounds of blocks, each round's keys and scores small enough for the cache
    step = max(1, _ROUND // width)
    firsts = np.arange(0, n_blocks, step)
    edges = np.append(np.searchsorted(j_block, firsts), len(j_block))
    places = np.arange(width, dtype=np.uint64)
    parts: list[tuple[np.ndarray, ...]] = []
    for c, lo in enumerate(firsts.tolist()):
        hi = min(lo + step, n_blocks)
        r0, r1 = int(starts[lo]), (int(starts[hi]) if hi < n_blocks else n_run)
        begin, count = starts[lo:hi], sizes[lo:hi]
        keys = _padded(id_hash(run.docid[r0:r1]), begin - r0, count, width,
                       np.iinfo(np.uint64).max)
        _keys(keys, np.arange(lo, hi)[:, None], n_blocks, place_bits, places)
        keys.sort(axis=1)  # the round's keys read flat are sorted: rows are in the key
        if _repeats(keys, place_bits, begin, count, run.docid):
            return None
        j0, j1 = int(edges[c]), int(edges[c + 1])
        if j0 == j1:
            continue
        row, judged, block = _find(keys.reshape(-1), wanted[j0:j1], judgment[j0:j1],
                                   j_block[j0:j1] - lo, place_bits, begin, count,
                                   run.docid, qrels.docid)
        rank, tied = rank_in_rows(_padded(run.value[r0:r1], begin - r0, count, width,
                                          -np.inf), block, run.value[row])
        parts.append((row, judged, block + lo, rank, tied))
    if not parts:
        none = np.array([], dtype=np.int64)
        parts.append((none, none, none, none, np.array([], dtype=bool)))
    hit_row, hit_judgment, hit_block, rank, tied = (np.concatenate(c)
                                                    for c in zip(*parts, strict=True))
    if tied.any():
        _rank_ties(run, starts, sizes, hit_block, hit_row, rank, tied)
    size = np.zeros(n, dtype=np.int64)
    size[block_code] = sizes
    in_run = size > 0
    if extra:
        in_run[heads[2][1]] = True
    return Joined(qids, np.bincount(qrels_q, minlength=n) > 0, in_run, size,
                  qrels_q[hit_judgment], qrels.value[hit_judgment], rank, qrels_q,
                  qrels.value)


def _keys(hashes: np.ndarray, rows: np.ndarray | int, n_rows: int, place_bits: int,
          place: np.ndarray | int) -> np.ndarray:
    """64-bit keys ordered by (row, hash, place): the row in the high bits, then the high
    bits of the hash, then ``place_bits`` bits of the place (modified in place)."""
    row_bits = max(1, (n_rows - 1).bit_length())
    hashes >>= np.uint64(row_bits + place_bits)
    hashes <<= np.uint64(place_bits)
    hashes |= np.asarray(place, dtype=np.uint64)
    hashes |= np.asarray(rows, dtype=np.uint64) << np.uint64(64 - row_bits)
    return hashes


def _repeats(keys: np.ndarray, place_bits: int, begin: np.ndarray, count: np.ndarray,
             docid: np.ndarray) -> bool:
    """Does a block repeat a document? ``keys``: the sorted :func:`_keys` of blocks whose
    rows start at ``begin`` (``count`` rows each, the rest padding). Equal hashes next to
    each other are a repeat when their ids are equal (else two hashes alike in their
    bits)."""
    low = np.uint64((1 << place_bits) - 1)
    same = (keys[:, 1:] ^ keys[:, :-1]) <= low  # equal row and hash
    if not same.any():
        return False
    b, c = np.nonzero(same)
    ra, rb = (keys[b, c] & low).astype(np.int64), (keys[b, c + 1] & low).astype(np.int64)
    real = (ra < count[b]) & (rb < count[b])  # not the padding
    ra, rb = begin[b[real]] + ra[real], begin[b[real]] + rb[real]
    return bool((docid[ra] == docid[rb]).any())


def _find(flat: np.ndarray, wanted: np.ndarray, judgment: np.ndarray, block: np.ndarray,
          place_bits: int, begin: np.ndarray, count: np.ndarray, docid: np.ndarray,
          judged_docid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The run rows of the ``judgment`` rows found among sorted keys: (run row, judgment
    row, block) for each found. ``wanted``: their keys with place 0; ``block``: their block
    (a row of the keys), whose run rows start at ``begin``."""
    low = np.uint64((1 << place_bits) - 1)
    at = np.searchsorted(flat, wanted)
    found = []
    while len(judgment):  # one candidate of equal hash per round (more are rare)
        key = flat[np.minimum(at, len(flat) - 1)]
        place = (key & low).astype(np.int64)
        maybe = (at < len(flat)) & ((key ^ wanted) <= low) & (place < count[block])
        judgment, block, wanted, at = judgment[maybe], block[maybe], wanted[maybe], at[maybe]
        row = begin[block] + place[maybe]
        equal = docid[row] == judged_docid[judgment]
        found.append((row[equal], judgment[equal], block[equal]))
        judgment, block, wanted, at = (judgment[~equal], block[~equal], wanted[~equal],
                                       at[~equal] + 1)
    if not found:
        none = np.array([], dtype=np.int64)
        return none, none, none
    row, judged, blocks = (np.concatenate(c) for c in zip(*found, strict=True))
    return row, judged, blocks


def rank_in_rows(scores: np.ndarray, rows: np.ndarray, values: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """For each value of ``rows``/``values`` (a score in that row of ``scores``, a matrix
    padded with -inf): how many scores of its row are above it (its rank from 0 when it
    is not tied), and whether another score of its row equals it.

    Rows ascending (the usual order) are done in rounds of :data:`_ROUND` scores, so the
    sorted copy of each round stays in the cache."""
    width = scores.shape[1]
    step = max(1, _ROUND // width)
    if len(scores) <= step or (len(rows) > 1 and not bool((np.diff(rows) >= 0).all())):
        return _rank_in_rows(scores, rows, values)
    rank = np.empty(len(rows), dtype=np.int64)
    tied = np.empty(len(rows), dtype=bool)
    edges = np.searchsorted(rows, np.arange(0, len(scores) + step, step))
    for c, lo in enumerate(range(0, len(scores), step)):
        a, b = int(edges[c]), int(edges[c + 1])
        if a < b:
            rank[a:b], tied[a:b] = _rank_in_rows(scores[lo:lo + step], rows[a:b] - lo,
                                                 values[a:b])
    return rank, tied


def _rank_in_rows(scores: np.ndarray, rows: np.ndarray, values: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    width = scores.shape[1]
    ordered = np.sort(scores, axis=1)
    not_above = _search_rows(ordered, rows, values)  # the padding -inf is below
    # the scores equal to the value end at not_above: tied when the one before is equal too
    tied = (not_above >= 2) & (ordered.reshape(-1).take(
        rows * width + np.maximum(not_above - 2, 0)) == values)
    return width - not_above, tied


def _rank_ties(run: Table, starts: np.ndarray, sizes: np.ndarray, blocks: np.ndarray,
               rows: np.ndarray, rank: np.ndarray, tied: np.ndarray) -> None:
    """Set ``rank`` of ``rows`` (run rows of ``blocks``) in each block where one is
    ``tied``: its place after :func:`rank_rows` has ranked the block in full."""
    tied_blocks = np.unique(blocks[tied])
    counts = sizes[tied_blocks]
    first = np.cumsum(counts) - counts
    sub = np.repeat(starts[tied_blocks] - first, counts) + np.arange(int(counts.sum()))
    local = np.repeat(np.arange(len(tied_blocks)), counts)
    order = rank_rows(local, run.value[sub], run.docid[sub])
    place = np.empty(len(sub), dtype=np.int64)
    place[order] = np.arange(len(sub)) - first[local[order]]
    redo = np.flatnonzero(np.isin(blocks, tied_blocks))
    rank[redo] = place[np.searchsorted(sub, rows[redo])]
