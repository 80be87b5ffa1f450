"""The scoring fast paths against their plain versions, on seeded generated input and on
hand-written edge cases: the decline test (phrases squashed once, the patterns searched as
one behind a keyword filter), the answer scores' dict, the 3-gram overlap of the similar-
clause detector, the invented-number detector (the cited chunks asked first) and the
answerer's context (ids listed once taken as they are)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from builders import chunk, make_case

from ragassay.config import DiagnoseConfig
from ragassay.diagnose.answer import (
    hallucinated_requirement,
    hallucinated_requirement_reference,
)
from ragassay.diagnose.retrieval import _shared, _shared_reference
from ragassay.metrics.answer import (
    DECLINE_PATTERNS,
    DEFAULT_DECLINE_PHRASES,
    AnswerScores,
    _declines,
    _declines_reference,
)
from ragassay.predictions import context_of, context_of_reference
from ragassay.schema import Answer, Citation, Prediction

# pieces that make declines (and near misses) likely in a generated answer
DECLINE_PIECES = [
    *DEFAULT_DECLINE_PHRASES, "not mentioned in the context", "is not provided in the sources",
    "the documents do not say", "The Sources don't mention", "no information about it in the "
    "given texts", "in den Quellen nicht genannt", "Die Dokumente enthalten keine",
    "제공된 문서에 나와 있지 않습니다", "자료에서는 찾을 수 없", "not included in the price",
    "SOURCES", "ſources", "Kontext", "text", "passage", "chunk", "I DON'T KNOW", "i do not knów",
    "3 days", "99.5%", "[a::chunk-001]", "Quelle", "Unterlagen", "문서", "근거", "weiß ich nicht",
]
WORDS = ["the", "answer", "is", "not", "in", "by", "no", "information", "do", "does", "say",
         "nicht", "den", "keine", "에", "없습니다", "Kaza", "pelili", "2년", "6개월", "\n", "."]


def _answer_text(rng: random.Random) -> str:
    parts = rng.choices(DECLINE_PIECES + WORDS * 2, k=rng.randint(1, 12))
    return "".join(p + rng.choice([" ", " ", "", "  ", "\n"]) for p in parts).strip()


@pytest.mark.parametrize("seed", range(3))
def test_declines_equals_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    phrase_sets = [DEFAULT_DECLINE_PHRASES, (*DEFAULT_DECLINE_PHRASES, "", "  ", "3 Tage",
                                             "keine Angabe 5", "Antwort")]
    declined = 0
    for _ in range(2000):
        text = _answer_text(rng)
        status = rng.choice(["supported", "supported", "insufficient", "abstained"])
        for phrases in phrase_sets:
            fast = _declines(status, text, phrases)
            assert fast == _declines_reference(status, text, phrases), (status, text)
            declined += fast
    assert declined > 1000


def test_declines_hand_checked_cases() -> None:
    phrases = DEFAULT_DECLINE_PHRASES
    for text in ["", "not provided in the ſources",  # long s: IGNORECASE folds it to s
                 "The documents do not contain it", "not included in the price",
                 "제공된 문서에는 관련 내용이 없습니다", "i don't know", "I don't knowledge"]:
        assert _declines("supported", text, phrases) == \
            _declines_reference("supported", text, phrases), text
    # a blank phrase never matches; a phrase ending in a digit is matched as a number
    assert not _declines("supported", "anything", ("", " "))
    assert _declines("supported", "after 3 days", ("3 days",))
    assert not _declines("supported", "after 13 days", ("3 days",))
    # every pattern's match holds a keyword of the filter
    for pattern in DECLINE_PATTERNS:
        assert "sources" in pattern.pattern.lower() or "quellen" in pattern.pattern.lower() \
            or "문서" in pattern.pattern


def test_answer_scores_dict_equals_asdict() -> None:
    rng = random.Random(7)
    for _ in range(300):
        s = AnswerScores(
            cited_ids=rng.sample(["a", "b", "c"], rng.randint(0, 3)),
            unknown_citations=rng.sample(["x::chunk-1", "y"], rng.randint(0, 2)),
            declined=rng.random() < 0.5, faithfulness=rng.randint(0, 1),
            groundedness=rng.randint(0, 1), groundedness_reason=rng.choice(["", "no source"]),
            answer_relevancy=rng.choice([None, 0.5, 1.0]), correct=rng.choice([None, 0, 1]),
            must_contain_found=rng.sample(["x", ["y", "z"], ["w"]], rng.randint(0, 3)),
            citation_accuracy=rng.choice([None, 0.25]),
            hallucination_flag=rng.choice([None, 0, 1]),
            unanswerable_detection_flag=rng.choice([None, 0, 1]),
            unsupported_numbers=rng.sample(["3", "5 Tage"], rng.randint(0, 2)))
        fast, plain = s.to_dict(), s.to_dict_reference()
        assert fast == plain and list(fast) == list(plain)
        # copies, as asdict makes them: changing the dict leaves the record as it was
        for key in ("cited_ids", "must_contain_found", "unsupported_numbers"):
            assert fast[key] is not getattr(s, key)
        for got, was in zip(fast["must_contain_found"], s.must_contain_found, strict=True):
            assert got == was and (isinstance(was, str) or got is not was)


def _grams(rng: random.Random) -> Counter[str]:
    return Counter({g: rng.randint(1, 4) for g in rng.sample("abcdefghij", rng.randint(0, 10))})


def test_shared_grams_equal_the_reference() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        a, b = _grams(rng), _grams(rng)
        assert _shared(a, b) == _shared_reference(a, b) == _shared(b, a)
    assert _shared(Counter(), Counter({"abc": 2})) == 0
    assert _shared(Counter({"abc": 2, "bcd": 1}), Counter({"abc": 5})) == 2


NUMBER_PIECES = ["3", "5 Tage", "2년", "0.5%", "99.5%", "1.000", "1,000", "2026-07-01",
                 "fünf", "three days", "6개월", "12:30", "Kaza", "pelili", "계약", "기간은"]
CHUNKS = [chunk("a", 1, "하자보수 기간은 2년으로 한다. 지체상금률은 0.5%로 한다.", 0),
          chunk("a", 2, "Die Frist beträgt 5 Tage ab 2026-07-01, bis 12:30.", 60),
          chunk("b", 1, "Availability is 99.5% and the fee is 1,000 euro.", 0),
          chunk("b", 2, "Nothing here but words.", 60),
          chunk("c", 1, "three days, drei Tage, 6개월간 1.000 Stück", 0)]
IDS = [c.chunk_id for c in CHUNKS]


def test_invented_numbers_equal_the_reference() -> None:
    rng = random.Random(11)
    cfg = DiagnoseConfig()
    fired = 0
    for _ in range(400):
        ranked = rng.sample(IDS, rng.randint(1, len(IDS)))
        top_k = rng.randint(1, len(ranked))
        cited = rng.sample(IDS, rng.randint(0, 3))  # inside the context or not
        text = " ".join(rng.choices(NUMBER_PIECES, k=rng.randint(1, 6)))
        answer = Answer(text=text + "".join(f" [{c}]" for c in cited[:1]), status="supported",
                        citations=[Citation(chunk_id=c) for c in cited])
        case = make_case(chunks=CHUNKS, ranked=ranked, top_k=top_k, answer=answer,
                         scores={"correct": rng.choice([0, 1]),
                                 "hallucination_flag": rng.choice([0, 1])})
        fast = hallucinated_requirement(case, cfg)
        assert fast == hallucinated_requirement_reference(case, cfg), (text, ranked, cited)
        fired += fast is not None and "numbers_not_in_context" in fast
    assert fired > 50


def test_invented_numbers_hand_checked_cases() -> None:
    cfg = DiagnoseConfig()
    # a number the cited chunk does not hold but another context chunk does: not invented
    answer = Answer(text="0.5%와 99.5% [a::chunk-001]", status="supported",
                    citations=[Citation(chunk_id="a::chunk-001")])
    case = make_case(chunks=CHUNKS, ranked=["a::chunk-001", "b::chunk-001"], top_k=2,
                     answer=answer)
    assert hallucinated_requirement(case, cfg) == \
        hallucinated_requirement_reference(case, cfg) is None
    # a cited chunk outside the context does not vouch for a number
    answer = Answer(text="99.5% [b::chunk-001]", status="supported",
                    citations=[Citation(chunk_id="b::chunk-001")])
    case = make_case(chunks=CHUNKS, ranked=["a::chunk-001", "b::chunk-001"], top_k=1,
                     answer=answer)
    assert hallucinated_requirement(case, cfg) == \
        hallucinated_requirement_reference(case, cfg) == {"numbers_not_in_context": ["99.5%"]}


def _prediction(rng: random.Random) -> Prediction:
    ids = rng.sample([f"d::c{i}" for i in range(30)], rng.randint(0, 12))
    hits = [{"chunk_id": c, "score": rng.choice([None, 0.1, 0.5, 0.9, rng.random()])}
            for c in ids]
    return Prediction(question_id="q1", retrieved=hits, answer=Answer(status="supported"))


@pytest.mark.parametrize("seed", range(5))
def test_context_of_equals_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        pred = _prediction(rng)
        k = rng.randint(-1, 14)
        threshold = rng.choice([None, None, 0.0, 0.5, 0.95])
        assert (context_of(pred, k, threshold)
                == context_of_reference(pred, k, threshold))


def test_context_of_hand_checked_cases() -> None:
    # a context given as text is named "#2" by its position, beside a hit named "#2"
    twice = Prediction(question_id="q1", answer=Answer(status="supported"),
                       retrieved=[{"chunk_id": "#2", "score": 0.9}, {"text": "t", "score": 0.8},
                                  {"chunk_id": "a::c1", "score": None}])
    empty = Prediction(question_id="q1", answer=Answer(status="supported"))
    for pred in (twice, empty):
        for k in (-1, 0, 1, 2, 3, 5):
            for threshold in (None, 0.85):
                assert (context_of(pred, k, threshold)
                        == context_of_reference(pred, k, threshold))
    assert context_of(twice, 5) == ["#2", "a::c1"]
