"""Each failure detector, triggered by a small hand-built case (and one that must not fire)."""

from __future__ import annotations

import pytest
from builders import BASE, chunk, make_case

import ragassay.diagnose as diagnose_module
from ragassay.config import DiagnoseConfig
from ragassay.diagnose import (
    DETECTORS,
    LABELS,
    UNOBSERVABLE,
    Case,
    count_labels,
    detector,
    diagnose,
)
from ragassay.schema import Answer, Citation, Document

CFG = DiagnoseConfig()


def labels_of(case: Case) -> set[str]:
    return set(diagnose(case, CFG))


def test_every_label_is_a_detector_or_unobservable_once() -> None:
    assert len(LABELS) == len(set(LABELS))
    assert set(DETECTORS).isdisjoint(UNOBSERVABLE)
    assert set(DETECTORS) | set(UNOBSERVABLE) == set(LABELS)
    counts = count_labels([{"answer_failure.failed_to_abstain": {}}, {}])
    assert list(counts) == list(LABELS)
    assert counts["answer_failure.failed_to_abstain"] == 1 and sum(counts.values()) == 1


def test_detector_looks_up_a_label_and_names_the_nearest_for_a_typo() -> None:
    assert detector("answer_failure.partial_answer") is DETECTORS["answer_failure.partial_answer"]
    assert detector("evaluation_failure.failure_case_not_saved") is None  # unobservable
    with pytest.raises(ValueError, match=r"unknown failure label 'answer_failure\.partial_answr'; "
                       r"did you mean answer_failure\.partial_answer\?"):
        detector("answer_failure.partial_answr")


def test_a_label_registered_twice_or_without_category_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        diagnose_module.detects("answer_failure")(diagnose_module.partial_answer)
    with pytest.raises(ValueError, match="expected 'category.name'"):
        diagnose_module.unobservable("no_category", "why")
    assert diagnose_module.labels() == LABELS  # nothing was added


def test_passing_question_has_no_failure() -> None:
    assert labels_of(make_case()) == set()


def test_gold_not_in_top_k_and_wording_mismatch() -> None:
    case = make_case("고장 나면 공짜로 고쳐주나요?", ranked=["b::chunk-002", "a::chunk-002"],
                     gold=[{"chunk_id": "a::chunk-001", "support_claim": "무상으로 보수한다"}],
                     scores={"correct": 0, "must_contain_found": []})
    found = diagnose(case, CFG)
    assert "retrieval_failure.gold_evidence_not_in_top_k" in found
    assert found["retrieval_failure.gold_evidence_not_in_top_k"]["top_hits"] == [
        "b::chunk-002", "a::chunk-002"]
    assert "retrieval_failure.query_wording_mismatch" in found
    # The same miss with shared wording is not a wording mismatch.
    case = make_case("무상 보수 조건은?", ranked=["b::chunk-002"],
                     gold=[{"chunk_id": "a::chunk-001", "support_claim": "무상으로 보수한다"}])
    assert "retrieval_failure.query_wording_mismatch" not in labels_of(case)


def test_gold_ranked_too_low() -> None:
    filler = [chunk("f", i, f"무관한 문장 {i}", i * 20) for i in range(1, 7)]
    ranked = [c.chunk_id for c in filler] + ["a::chunk-001"]
    case = make_case(chunks=BASE + filler, ranked=ranked, top_k=10)
    found = diagnose(case, CFG)
    assert found["retrieval_failure.gold_evidence_ranked_too_low"]["rank"] == 7
    assert "retrieval_failure.gold_evidence_not_in_top_k" not in found


def test_wrong_similar_clause() -> None:
    case = make_case(ranked=["b::chunk-001", "a::chunk-001"],
                     answer=Answer(text="검수 완료일로부터 1년으로 한다. [b::chunk-001]",
                                   status="supported",
                                   citations=[Citation(chunk_id="b::chunk-001")]),
                     scores={"correct": 0, "must_contain_found": [], "hallucination_flag": 1})
    found = diagnose(case, CFG)
    ev = found["retrieval_failure.wrong_similar_clause"]
    assert ev["top_chunk_id"] == "b::chunk-001" and ev["same_document"] is False
    assert ev["similarity"] >= CFG.similar_clause
    assert "answer_failure.hallucinated_requirement" in found  # another agency's clause as answer


def test_chunk_boundary_split() -> None:
    chunks = [chunk("s", 1, "제안서는 기술평가 80점과 가격평가", 0),
              chunk("s", 2, "가격평가 20점으로 평가한다.", 15)]
    case = make_case("평가 배점은?", chunks=chunks, must=["80점", "20점"],
                     gold=[{"chunk_id": "s::chunk-001", "doc_id": "s",
                            "support_claim": "기술평가 80점과 가격평가 20점"}],
                     ranked=["s::chunk-001"], top_k=1,
                     answer=Answer(text="기술평가 80점 [s::chunk-001]", status="supported",
                                   citations=[Citation(chunk_id="s::chunk-001")]),
                     scores={"correct": 0, "must_contain_found": ["80점"]})
    found = diagnose(case, CFG)
    assert case.gold.evidence[0].split and case.gold.evidence[0].chunk_ids == [
        "s::chunk-001", "s::chunk-002"]
    assert found["retrieval_failure.chunk_boundary_split"]["claims"][0]["chunk_ids"] == [
        "s::chunk-001", "s::chunk-002"]
    assert found["retrieval_failure.multi_chunk_evidence_missing"] == {
        "found": ["s::chunk-001"], "missing": ["s::chunk-002"]}
    assert found["answer_failure.partial_answer"] == {"found": ["80점"], "missing": ["20점"]}


def test_table_and_figure_lost_in_parsing() -> None:
    docs = [Document(doc_id="a"), Document(doc_id="b", dropped={"tables": 1})]
    case = make_case(docs=docs, gold=[{"chunk_id": "b::chunk-002", "doc_id": "b",
                                       "support_claim": "유지관리 인력 3명"}],
                     scores={"correct": 0, "must_contain_found": []})
    found = diagnose(case, CFG)
    assert found["parsing_failure.table_content_lost"]["evidence"][0]["doc_id"] == "b"
    assert "parsing_failure.figure_content_ignored" not in found
    docs = [Document(doc_id="a"), Document(doc_id="b", dropped={"images": 2})]
    case = make_case(docs=docs, gold=[{"chunk_id": "b::chunk-002", "doc_id": "b",
                                       "support_claim": "구성도 참조"}])
    assert "parsing_failure.figure_content_ignored" in labels_of(case)


def test_stale_label_without_explanation_is_an_evaluation_failure() -> None:
    case = make_case(gold=[{"chunk_id": "zz::chunk-009", "support_claim": "없는 문장"}])
    found = diagnose(case, CFG)
    assert found["evaluation_failure.no_gold_evidence"]["reason"].startswith("gold label could")
    case = make_case(gold=[])
    assert diagnose(case, CFG)["evaluation_failure.no_gold_evidence"] == {
        "reason": "gold_evidence is empty"}


def test_page_metadata_missing_and_missing_page_number() -> None:
    chunks = [chunk("p", 1, "하자보수 기간은 검수 완료일로부터 2년으로 한다.", 0, page=None)]
    docs = [Document(doc_id="p", num_pages=12)]
    case = make_case(chunks=chunks, docs=docs, ranked=["p::chunk-001"],
                     gold=[{"chunk_id": "p::chunk-001", "support_claim": "2년으로 한다"}],
                     answer=Answer(text="2년 [p::chunk-001]", status="supported",
                                   citations=[Citation(chunk_id="p::chunk-001")]))
    found = diagnose(case, CFG)
    assert found["parsing_failure.page_metadata_missing"]["chunks"][0]["num_pages"] == 12
    assert found["citation_failure.missing_page_number"]["citations"][0]["chunk_id"] == (
        "p::chunk-001")


def test_header_footer_noise() -> None:
    header = "Harbor City Port Authority - RFP 7 - Confidential"
    body = [f"{header}\nPage {i} of 4\nSection {i} text about cranes and berths.\n"
            for i in range(1, 5)]
    text = "".join(body)
    noisy = f"{header}\nPage 9 of 4\n{header}\n"
    chunks = [chunk("h", 1, text, 0), chunk("h", 2, noisy, len(text)),
              chunk("g", 1, "Berth 4 accepts vessels up to 300 m.", 0)]
    case = make_case("How long may vessels at berth 4 be?", chunks=chunks, must=["300 m"],
                     gold=[{"chunk_id": "g::chunk-001", "support_claim": "up to 300 m"}],
                     ranked=["h::chunk-002", "g::chunk-001"],
                     scores={"correct": 0, "must_contain_found": []})
    found = diagnose(case, CFG)
    assert found["parsing_failure.header_footer_noise"]["noisy_hits"][0]["chunk_id"] == (
        "h::chunk-002")


def test_korean_english_mixed_text_issue() -> None:
    chunks = [chunk("m", 1, "외부 시스템과 API연계 방식으로 통신한다.", 0)]
    case = make_case("API 연계 방식은?", chunks=chunks, ranked=["m::chunk-001"], must=["API 연계"],
                     gold=[{"chunk_id": "m::chunk-001", "required_terms": ["API 연계"]}],
                     scores={"correct": 0, "must_contain_found": []})
    assert diagnose(case, CFG)["parsing_failure.korean_english_mixed_text_issue"] == {
        "terms": [{"chunk_id": "m::chunk-001", "term": "API 연계"}]}


def test_correct_answer_wrong_citation() -> None:
    case = make_case(answer=Answer(text="2년 [a::chunk-002]", status="supported",
                                   citations=[Citation(chunk_id="a::chunk-002")]),
                     scores={"hallucination_flag": 1})
    found = labels_of(case)
    assert "citation_failure.correct_answer_wrong_citation" in found
    assert "answer_failure.hallucinated_requirement" not in found  # the answer is right


def test_insufficient_citation() -> None:
    case = make_case(answer=Answer(text="2년입니다.", status="supported"),
                     scores={"groundedness": 0, "groundedness_reason": "no source"})
    found = diagnose(case, CFG)
    assert found["citation_failure.insufficient_citation"] == {
        "reason": "supported answer cites nothing"}
    assert "citation_failure.citation_does_not_support_claim" not in found


def test_citation_does_not_support_claim() -> None:
    case = make_case(answer=Answer(text="3년 [a::chunk-001]", status="supported",
                                   citations=[Citation(chunk_id="a::chunk-001")]),
                     scores={"groundedness": 0, "groundedness_reason": "number 3년 not in source",
                             "correct": 0, "must_contain_found": []})
    found = diagnose(case, CFG)
    assert found["citation_failure.citation_does_not_support_claim"]["groundedness_reason"] == (
        "number 3년 not in source")
    assert found["answer_failure.hallucinated_requirement"] == {"numbers_not_in_context": ["3년"]}


def test_vague_citation_for_multiple_claims() -> None:
    answer = Answer(text="하자보수는 2년이다. 지체상금률은 0.5%이다.", status="supported",
                    citations=[Citation(chunk_id="a::chunk-001"),
                               Citation(chunk_id="a::chunk-002")])
    case = make_case(answer=answer)
    assert diagnose(case, CFG)["citation_failure.vague_citation_for_multiple_claims"] == {
        "sentences": 2, "cited": ["a::chunk-001", "a::chunk-002"]}


def test_numbered_inline_markers_say_which_source_backs_which_sentence() -> None:
    # the LLM answerer's "[1]", "[2]": read from the text, so each citation carries raw
    answer = Answer(text="하자보수는 2년이다 [1]. 지체상금률은 0.5%이다 [2].", status="supported",
                    citations=[Citation(chunk_id="a::chunk-001", raw="1"),
                               Citation(chunk_id="a::chunk-002", raw="2")])
    case = make_case(answer=answer)
    assert "citation_failure.vague_citation_for_multiple_claims" not in diagnose(case, CFG)


def test_overconfident_weak_evidence() -> None:
    case = make_case(hit_scores=[0.1, 0.05, 0.01])
    assert diagnose(case, CFG)["answer_failure.overconfident_weak_evidence"] == {
        "best_score": 0.1, "threshold": CFG.weak_evidence_score}


def test_wrong_synthesis_covers_a_decline_with_gold_in_context() -> None:
    answer = Answer(text="제공된 문서에서 답을 찾을 수 없습니다.", status="insufficient")
    case = make_case(answer=answer, scores={"correct": 0, "must_contain_found": []})
    assert diagnose(case, CFG)["answer_failure.wrong_synthesis"] == {
        "declined": True, "gold_in_context": ["a::chunk-001"]}


def test_failed_to_abstain() -> None:
    case = make_case("예산 총액은?", answerable=False,
                     answer=Answer(text="지체상금률은 0.5%로 한다. [a::chunk-002]",
                                   status="supported",
                                   citations=[Citation(chunk_id="a::chunk-002")]),
                     scores={"correct": 0, "must_contain_found": [], "hallucination_flag": 1})
    found = labels_of(case)
    assert "answer_failure.failed_to_abstain" in found
    assert "evaluation_failure.no_gold_evidence" not in found  # unanswerable: no gold expected


def test_metric_missing_is_for_what_the_system_prevented() -> None:
    case = make_case(missing={"citation_accuracy": "the answer cites no chunk"})
    assert diagnose(case, CFG)["evaluation_failure.metric_missing"] == {"missing": {
        "citation_accuracy": "the answer cites no chunk"}}


def test_fields_the_data_set_lacks_are_not_metric_missing() -> None:
    case = make_case(must=[], scores={"correct": None, "answer_relevancy": None})
    assert "evaluation_failure.metric_missing" not in diagnose(case, CFG)


@pytest.mark.parametrize("label", sorted(UNOBSERVABLE))
def test_unobservable_labels_are_documented(label: str) -> None:
    assert len(UNOBSERVABLE[label]) > 40


# --- a label split across chunks is one piece of evidence ------------------------------

SPLIT = [chunk("h", 1, "The oldest towers were lit by open wood fires, which burned", 0),
         chunk("h", 2, "which burned through several cords of wood in a winter.", 47),
         chunk("h", 3, "Later keepers used oil lamps.", 104)]
SPLIT_LABEL = {"chunk_id": "h::chunk-001", "doc_id": "h", "support_claim":
               "The oldest towers were lit by open wood fires, which burned through several "
               "cords of wood in a winter.", "required_terms": ["open wood fires"]}


def split_case(text: str, cited: list[str], ranked: list[str], correct: int,
               must: list[str] | None = None) -> Case:
    marks = " ".join(f"[{c}]" for c in cited)
    return make_case("What did the oldest towers burn?", chunks=SPLIT, gold=[SPLIT_LABEL],
                     must=must or ["open wood fires"], ranked=ranked, top_k=2,
                     answer=Answer(text=f"{text} {marks}", status="supported",
                                   citations=[Citation(chunk_id=c) for c in cited]),
                     scores={"correct": correct})


def test_a_right_answer_citing_the_part_of_a_split_label_that_holds_it_is_no_failure() -> None:
    # Before: both detectors fired on this right answer (each chunk of the run an item).
    case = split_case("Open wood fires.", ["h::chunk-001"], ["h::chunk-001", "h::chunk-003"], 1)
    assert case.gold.evidence[0].split
    found = labels_of(case)
    assert "citation_failure.insufficient_citation" not in found
    assert "retrieval_failure.multi_chunk_evidence_missing" not in found
    # Both chunks retrieved, the one holding the answer cited: the citation is enough.
    case = split_case("Open wood fires.", ["h::chunk-001"], ["h::chunk-001", "h::chunk-002"], 1)
    assert "citation_failure.insufficient_citation" not in labels_of(case)


def test_a_split_label_whose_found_part_misses_the_answer_still_fires() -> None:
    # The answer needs "several cords" too, which only the unretrieved second chunk holds.
    case = split_case("Open wood fires.", ["h::chunk-001"], ["h::chunk-001", "h::chunk-003"],
                      0, must=["open wood fires", "several cords"])
    found = diagnose(case, CFG)
    assert found["retrieval_failure.multi_chunk_evidence_missing"] == {
        "found": ["h::chunk-001"], "missing": ["h::chunk-002"]}
    # Retrieved but left uncited, the second chunk is insufficient citation.
    case = split_case("Open wood fires.", ["h::chunk-001"], ["h::chunk-001", "h::chunk-002"],
                      0, must=["open wood fires", "several cords"])
    assert diagnose(case, CFG)["citation_failure.insufficient_citation"] == {
        "reason": "part of the multi-chunk evidence is in the context but not cited",
        "uncited_gold": ["h::chunk-002"]}


def test_two_labels_one_cited_fire_unless_the_cited_chunk_holds_the_answer() -> None:
    gold = [{"chunk_id": "a::chunk-001", "doc_id": "a", "support_claim": "검수 완료일로부터 2년"},
            {"chunk_id": "a::chunk-002", "doc_id": "a", "support_claim": "계약금액의 0.5%"}]
    answer = Answer(text="2년, 0.5% [a::chunk-001]", status="supported",
                    citations=[Citation(chunk_id="a::chunk-001")])
    case = make_case(gold=gold, must=["2년", "0.5%"], answer=answer)
    assert diagnose(case, CFG)["citation_failure.insufficient_citation"]["uncited_gold"] == [
        "a::chunk-002"]  # 0.5% is in the answer, not in what it cites
    case = make_case(gold=gold, must=["2년"], answer=answer)
    assert "citation_failure.insufficient_citation" not in labels_of(case)
