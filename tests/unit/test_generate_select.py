"""What `ragassay generate` decides before it asks the model: the support sentence and the
answer span (:mod:`ragassay.generate.select`), the question phrase that replaces the answer
(:mod:`ragassay.generate.wording`) and the grammar of the question
(:mod:`ragassay.generate.grammar`), on hand-written sentences whose picks can be read off."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragassay.generate.checks import Candidate, Support, check_candidate
from ragassay.generate.grammar import question_pattern
from ragassay.generate.prompts import proposal_format, proposal_messages, read_fields
from ragassay.generate.sampling import load_corpus
from ragassay.generate.select import Pick, absent_pick, answer_tiers, candidates, pick
from ragassay.generate.wording import ABSENT, wh_phrases
from ragassay.text import contains_term

KO = ("보증기간은 검수 완료일로부터 24개월로 한다. 유지보수 인력은 상주 2명을 배치한다. "
      "장애가 발생하면 4시간 이내에 현장에 도착하여야 한다.")
DE = ("Die Lieferung dauert innerhalb Deutschlands 3 bis 5 Werktage. Der Versand kostet "
      "4,90 Euro. Ab 50 Euro Bestellwert ist der Versand kostenlos.")
EN = ("Super Bowl 50 was played on February 7, 2016, at Levi's Stadium in Santa Clara, "
      "California. The warranty period is 12 months from acceptance.")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    docs = tmp_path_factory.mktemp("docs")
    for name, text in (("ko.txt", KO), ("de.txt", DE), ("en.txt", EN)):
        (docs / name).write_text(text, encoding="utf-8")
    return load_corpus(docs)


def test_answer_spans_best_tier_first() -> None:
    s = ("Super Bowl 50 was played on February 7, 2016, at Levi's Stadium in Santa Clara, "
         "California.")
    tiers = answer_tiers("factoid", s)
    assert tiers[0] == [("Super Bowl", "term"), ("Levi's Stadium", "term"),
                        ("Santa Clara", "term")]  # names of two or more capitalised words
    assert tiers[1] == [("February 7, 2016", "date")]  # then dates
    assert answer_tiers("numeric", "Der Versand kostet 4,90 Euro.") == [
        [("4,90 Euro", "eur")], []]
    # Korean: no capitals, no Latin term, no date: the number with its unit
    assert answer_tiers("factoid", "보증기간은 검수 완료일로부터 24개월로 한다.")[:3] == [
        [], [], [("24개월", "month")]]
    # German capitalises every noun: an article is stripped, a noun run is no name
    assert answer_tiers("factoid", "Die Zahlung per PayPal ist kostenlos.")[0] == [
        ("PayPal", "term")]
    # an identifier whose digits are no number (SFR-003) is never an answer
    assert all(span != "SFR-003" for tier in answer_tiers("factoid", "Die Anforderung "
                                                          "SFR-003 gilt für alle Nutzer.")
               for span, _ in tier)


def test_a_pick_passes_the_sentence_and_answer_checks(corpus) -> None:  # type: ignore[no-untyped-def]
    index = corpus.index
    for kind in ("numeric", "factoid"):
        for chunks, picks in candidates(kind, index, seed=0):
            p = picks[0]
            assert p.sentence in chunks[0].text and contains_term(p.sentence, p.answer)
            item = Candidate("c1", kind, [chunks[0].chunk_id], "x?",
                             supports=[Support(p.chunk_id, p.answer, p.sentence)])
            drop = check_candidate(item, index)
            # the question "x?" is in no language: only the question's checks may fail
            assert drop is not None and drop.reason == "wrong_language", drop
    de = index.chunk("de::chunk-001")
    p = pick("numeric", de, index, seed=0)
    assert p is not None and p.answer in ("3 bis 5 Werktage", "5 Werktage", "4,90 Euro",
                                          "50 Euro")
    assert pick("numeric", de, index, seed=0) == p  # seeded: the same pick again


def test_a_distractor_answer_is_not_in_the_other_chunk(corpus) -> None:  # type: ignore[no-untyped-def]
    index = corpus.index
    de = index.chunk("de::chunk-001")
    p = pick("distractor", de, index, seed=0, avoid=de)  # against itself: nothing is left
    assert p is None


def test_an_absent_attribute_is_in_no_chunk(corpus) -> None:  # type: ignore[no-untyped-def]
    index = corpus.index
    p = absent_pick(index.chunk("de::chunk-001"), index, seed=0)
    assert p is not None and p.frame == "absent"
    assert p.answer in {a.term for a in ABSENT["de"]}
    assert not any(contains_term(c.text, p.answer) for c in index.chunks)


def test_question_phrases_fit_the_answer() -> None:
    assert wh_phrases("en", "month", "12 months") == ("how many months", "how long")
    assert wh_phrases("de", "day", "30 Tagen") == ("wie viele Tagen", "wie vielen Tagen",
                                                   "wie lange")
    assert wh_phrases("ko", "month", "24개월") == ("몇 개월", "얼마 동안")
    assert wh_phrases("ko", "day", "하루") == ("얼마 동안",)  # a number word has no unit word
    assert wh_phrases("de", "eur", "4,90 Euro") == ("wie viel",)
    assert wh_phrases("en", "date", "February 7, 2016") == ("when", "what date")
    assert wh_phrases("ko", "term", "PayPal") == ("무엇", "누구", "어디")


def test_the_question_grammar_is_the_sentence_with_a_question_phrase() -> None:
    de = Pick("c", "Der Versand kostet 4,90 Euro.", "4,90 Euro", "eur")
    pattern = question_pattern("numeric", [de], "de")
    assert pattern == r"^(Der )?(Versand )?(kostet )?(wie viel)\?$"
    assert re.fullmatch(pattern, "Der Versand kostet wie viel?")
    assert not re.fullmatch(pattern, "Der Versand kostet 4,90 Euro?")  # never the answer
    assert not re.fullmatch(pattern, "Was kostet the shipping?")  # no other word
    ko = Pick("c", "보증기간은 검수 완료일로부터 24개월로 한다.", "24개월", "month")
    pattern = question_pattern("numeric", [ko], "ko")
    assert re.fullmatch(pattern, "보증기간은 몇 개월인가요?")  # a question ending instead
    # or the sentence's end, the particle glued to the question phrase
    assert re.fullmatch(pattern, "보증기간은 검수 완료일로부터 몇 개월로 한다?")
    en = Pick("c", "The warranty period is 12 months from acceptance.", "12 months", "month")
    pattern = question_pattern("numeric", [en], "en")
    assert re.fullmatch(pattern, "The warranty period is how long?")
    quoted = Pick("c", 'Drucken Sie unter "Meine Bestellungen" aus.', "Bestellungen", "term")
    assert '"' not in question_pattern("factoid", [quoted], "de")  # JSON-safe


def test_the_unanswerable_grammar_asks_for_the_absent_attribute() -> None:
    p = Pick("c", "Der Versand kostet 4,90 Euro.", "Faxnummer", "absent")
    pattern = question_pattern("unanswerable", [p], "de")
    assert re.fullmatch(pattern, "Wie lautet die Faxnummer der Versand?")
    assert not re.fullmatch(pattern, "Wie lautet die Faxnummer?")  # a subject is written
    fmt = proposal_format("unanswerable", [p], "de")["json_schema"]["schema"]
    assert fmt["properties"]["missing"]["items"]["enum"] == ["Faxnummer"]


def test_prompts_are_in_the_documents_language() -> None:
    p = Pick("c", "보증기간은 검수 완료일로부터 24개월로 한다.", "24개월", "month")
    msgs = proposal_messages("numeric", [p], "ko")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[0]["content"].startswith("당신은") and msgs[-1]["content"] == (
        "문장: 보증기간은 검수 완료일로부터 24개월로 한다.\n답: 24개월")
    assert json.loads(msgs[2]["content"]) == {
        "question": "보증기간은 검수 완료일로부터 몇 개월인가요?"}


def test_a_reply_with_the_question_only_takes_the_picks() -> None:
    p = Pick("de::chunk-001", "Der Versand kostet 4,90 Euro.", "4,90 Euro", "eur")
    assert read_fields('{"question": "Der Versand kostet wie viel?"}', "numeric", [p]) == {
        "question": "Der Versand kostet wie viel?", "answer": "4,90 Euro",
        "sentence": "Der Versand kostet 4,90 Euro."}
    # what the reply holds is read as written (and checked like any other)
    assert read_fields('{"question": "Q?", "answer": "5 Euro"}', "numeric", [p])[
        "answer"] == "5 Euro"
    assert read_fields('{"question": "Q?", "answer": 5}', "numeric", [p]) is None
    u = Pick("c", "Der Versand kostet 4,90 Euro.", "Faxnummer", "absent")
    assert read_fields('{"question": "Q?"}', "unanswerable", [u]) == {
        "question": "Q?", "missing": ["Faxnummer"]}


def test_candidates_skip_chunks_without_a_pick(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Just a line without any number or name at all here ok.",
                                    encoding="utf-8")
    (tmp_path / "b.txt").write_text("The fee is 20 euros per month for every user.",
                                    encoding="utf-8")
    index = load_corpus(tmp_path).index
    got = [(chunks[0].doc_id, picks[0].answer) for chunks, picks in
           candidates("numeric", index, seed=0)]
    assert got == [("b", "20 euros")]
