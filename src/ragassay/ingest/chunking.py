"""Fixed-size overlapping character windows: the naive baseline's chunker."""

from __future__ import annotations

from bisect import bisect_right

from ..schema import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP, Chunk
from .document import LoadedDocument, PageSpan

STRATEGY = "fixed_chars"


def check_chunking(chunk_size: int, overlap: int) -> None:
    """Raise ``ValueError`` unless ``chunk_size > 0`` and ``0 <= overlap < chunk_size``."""
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be a positive number of characters, got {chunk_size}")
    if not 0 <= overlap < chunk_size:
        raise ValueError(f"overlap must be at least 0 and smaller than chunk_size "
                         f"({chunk_size}), got {overlap}")


def windows(length: int, chunk_size: int, overlap: int) -> list[tuple[int, int]]:
    """Character spans ``[a, b)`` of the windows over a text of ``length`` characters.

    Window i is ``[i*stride, i*stride + chunk_size)`` clipped to ``length``, with
    ``stride = chunk_size - overlap``; the last window is the first one that reaches the
    end, so no window lies wholly inside the one before it. An empty text has none.
    """
    check_chunking(chunk_size, overlap)
    stride = chunk_size - overlap
    out: list[tuple[int, int]] = []
    start = 0
    while start < length:
        end = min(start + chunk_size, length)
        out.append((start, end))
        if end == length:
            break
        start += stride
    return out


def chunk_id(doc_id: str, seq: int) -> str:
    """``<doc_id>::chunk-NNN``: 1-based, zero-padded to 3 digits (wider beyond 999)."""
    return f"{doc_id}::chunk-{seq:03d}"


def chunk_document(doc: LoadedDocument, *, chunk_size: int = DEFAULT_CHUNK_SIZE,
                   overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """Cut ``doc.text`` into fixed-size overlapping windows (see :func:`windows`).

    Each chunk holds ``text == doc.text[a:b]`` with ``char_span = (a, b)``; ``section`` is
    the heading of the section the chunk starts in (``None`` before the first heading);
    ``page_span`` is (first, last) page the span touches, ``None`` for unpaged sources and
    for chunks lying wholly in a part without a page. Whitespace-only windows are kept.
    """
    d = doc.document
    section_starts = [s for s, _ in doc.sections]
    page_ends = [p.end for p in doc.pages]
    out: list[Chunk] = []
    for seq, (a, b) in enumerate(windows(len(doc.text), chunk_size, overlap), start=1):
        out.append(Chunk(
            chunk_id=chunk_id(d.doc_id, seq),
            doc_id=d.doc_id,
            title=d.title,
            section=_section_at(doc.sections, section_starts, a),
            text=doc.text[a:b],
            char_span=(a, b),
            page_span=_pages_touched(doc.pages, page_ends, a, b),
            seq=seq,
        ))
    return out


def _section_at(sections: list[tuple[int, str | None]], starts: list[int],
                offset: int) -> str | None:
    i = bisect_right(starts, offset) - 1
    return sections[i][1] if i >= 0 else None


def _pages_touched(pages: list[PageSpan], ends: list[int], a: int,
                   b: int) -> tuple[int, int] | None:
    """(min, max) page of the spans that share a character with ``[a, b)``."""
    found: list[int] = []
    # Spans are sorted and disjoint: the first one that can touch [a, b) ends after a.
    for span in pages[bisect_right(ends, a):]:
        if span.start >= b:
            break
        if span.page is not None and span.start < span.end:
            found.append(span.page)
    return (min(found), max(found)) if found else None
