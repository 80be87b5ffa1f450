"""Mapping what a model cites back to chunk ids (ragassay.answer.citations), by hand."""

from __future__ import annotations

import pytest

from ragassay.answer.citations import Mapped, citations_of, map_citation, reply_markers
from ragassay.schema import Chunk, Citation


def chunk(cid: str, pages: tuple[int, int] | None = None) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=cid.split("::")[0], text="t", page_span=pages)


CONTEXT = [chunk("rfp::chunk-001", (2, 2)), chunk("faq::chunk-002"), chunk("rfp::chunk-003")]


@pytest.mark.parametrize(("raw", "chunk_id"), [
    ("1", "rfp::chunk-001"),
    ("3", "rfp::chunk-003"),
    ("Source 2", "faq::chunk-002"),
    ("source2", "faq::chunk-002"),
    ("Source #2", "faq::chunk-002"),
    ("#2", "faq::chunk-002"),
    ("출처 1", "rfp::chunk-001"),
    ("Quelle 3", "rfp::chunk-003"),
    ("doc 1", "rfp::chunk-001"),
    ("１", "rfp::chunk-001"),  # a full-width digit (NFKC)
    ("rfp::chunk-003", "rfp::chunk-003"),
    ("chunk-002", "faq::chunk-002"),
    ("CHUNK-002", "faq::chunk-002"),
    (" `chunk-003` ", "rfp::chunk-003"),
])
def test_a_marker_that_names_one_source_maps_to_it(raw: str, chunk_id: str) -> None:
    assert map_citation(raw, CONTEXT) == Mapped(raw=raw.strip(), chunk_id=chunk_id)


@pytest.mark.parametrize("raw", ["4", "0", "Source 9", "chunk-009", "other::chunk-001"])
def test_a_citation_shaped_marker_that_names_no_source_is_unmapped(raw: str) -> None:
    assert map_citation(raw, CONTEXT) == Mapped(raw=raw, chunk_id=None)


@pytest.mark.parametrize("raw", ["sic", "Note", "see above", "", "a", "2024-01-01"])
def test_other_brackets_are_not_citations(raw: str) -> None:
    assert map_citation(raw, CONTEXT) is None


def test_an_ambiguous_short_id_is_not_guessed() -> None:
    both = [chunk("a::chunk-001"), chunk("b::chunk-001")]
    assert map_citation("chunk-001", both) == Mapped(raw="chunk-001", chunk_id=None)
    assert map_citation("a::chunk-001", both) == Mapped(raw="a::chunk-001",
                                                        chunk_id="a::chunk-001")
    assert map_citation("2", both) == Mapped(raw="2", chunk_id="b::chunk-001")


def test_a_number_that_is_also_another_chunks_id_is_ambiguous() -> None:
    # chunk ids from a user's chunk file may be plain numbers: "[2]" could mean source 2
    # ("7") or the chunk whose id is "2" (source 1)
    ctx = [chunk("2"), chunk("7")]
    assert map_citation("2", ctx) == Mapped(raw="2", chunk_id=None)
    assert map_citation("1", ctx) == Mapped(raw="1", chunk_id="2")  # source 1 only
    assert map_citation("7", ctx) == Mapped(raw="7", chunk_id="7")  # the id only


def test_markers_of_a_reply_in_order_with_lists_split() -> None:
    text = "A [1, 2]. B [Source 1 and Source 3]. C [sic] [9]."
    assert [(m.raw, m.chunk_id) for m in reply_markers(text, CONTEXT)] == [
        ("1", "rfp::chunk-001"), ("2", "faq::chunk-002"), ("Source 1", "rfp::chunk-001"),
        ("Source 3", "rfp::chunk-003"), ("9", None)]


def test_citations_once_per_chunk_with_the_first_raw_and_page() -> None:
    markers = reply_markers("A [2]. B [faq::chunk-002] [1] [9] [9].", CONTEXT)
    assert citations_of(markers, CONTEXT) == [
        Citation(chunk_id="faq::chunk-002", raw="2"),
        Citation(chunk_id="rfp::chunk-001", page=2, raw="1"),
        Citation(chunk_id="[9]", raw="9")]


def test_an_unmapped_marker_is_never_taken_for_a_chunk() -> None:
    # "[2]" could be source 2 ("7") or the chunk whose id is "2": its citation is "[2]",
    # not the context chunk "2"
    ctx = [chunk("2"), chunk("7")]
    assert citations_of(reply_markers("A [2].", ctx), ctx) == [Citation(chunk_id="[2]",
                                                                        raw="2")]


def test_a_citation_without_raw_dumps_as_before() -> None:
    assert Citation(chunk_id="a", page=1).model_dump() == {"chunk_id": "a", "page": 1}
    assert Citation(chunk_id="a", raw="1").model_dump() == {"chunk_id": "a", "page": None,
                                                           "raw": "1"}
    assert Citation.model_validate({"chunk_id": "a", "page": None}).raw is None
