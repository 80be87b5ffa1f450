"""The claim checks' fast path (:func:`ragassay.claims.deterministic.decide`: each source
read once, overlaps counted once, numbers read only as far as needed, one verdict per
distinct claim and sources) against the plain version (``decide_reference``) on seeded
generated sources and claims, and on hand-written cases where the shortcuts could go wrong."""

from __future__ import annotations

import random

import pytest

from ragassay.claims import sources
from ragassay.claims.deterministic import Decision, decide, decide_reference
from ragassay.claims.split import split_claims, split_claims_reference
from ragassay.text import content_words

# words that make the checks decide: numbers (with units, dates, number words), names,
# negation markers, German and Korean text, and words shared between sources
PIECES = ["24 months", "12 months", "3 days", "4.90 euros", "1.000 Euro", "50 %", "2026-07-01",
          "1 July 2026", "July 2026", "12:30", "three", "drei", "zwei Wochen", "3년간",
          "2026년 7월 1일", "24개월", "5 km", "1999", "Siemens", "Bosch", "SFR-003", "SFR-004",
          "not", "never", "without", "nicht", "kein", "없다", "않는다", "isn't", "Die", "und",
          "ist", "beträgt", "보증", "기간은", "배송비는", "Kaza", "Rozu"]
WORDS = ["warranty", "period", "pumps", "supplies", "shipping", "costs", "orders", "delivery",
         "Frist", "Lieferung", "Versand", "계약", "검수", "the", "is", "of", "pelili", "fesi",
         "lidotu", "mugi", "toka"]
ENDS = [". ", ". ", "! ", "? ", ".\n", "\n", "; ", ". [doc::chunk-001] "]


def _sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(1, 7)) + rng.choices(PIECES, k=rng.randint(0, 3))
    rng.shuffle(words)
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


def _source(rng: random.Random) -> str:
    return "".join(_sentence(rng) + rng.choice(ENDS) for _ in range(rng.randint(1, 5))).strip()


def _claim(rng: random.Random, chosen: list[str]) -> str:
    """A sentence or pair of the sources (often entailed), changed a little (a number, a
    name or a negation swapped in: often contradicted), or made up."""
    own = sources.source_sentences(chosen)
    roll = rng.random()
    if own and roll < 0.4:
        return rng.choice(own)
    if own and roll < 0.8:
        words = rng.choice(own).split()
        words[rng.randrange(len(words))] = rng.choice(PIECES)
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words) + 1), rng.choice(["not", "nicht", "never"]))
        return " ".join(words)
    return _sentence(rng)


@pytest.mark.parametrize("seed", range(4))
def test_decide_equals_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    pool = [_source(rng) for _ in range(60)]
    seen: dict[str, int] = {}
    for _ in range(1500):
        chosen = rng.sample(pool, rng.randint(0, 6))
        if rng.random() < 0.1:
            chosen += chosen[:1]  # a source given twice
        claim = _claim(rng, chosen)
        fast = decide(claim, chosen)
        assert fast == decide_reference(claim, chosen), (claim, chosen)
        assert decide(claim, chosen) == fast  # the remembered verdict
        key = "none" if fast is None else f"{fast.verdict}/{fast.check}"
        seen[key] = seen.get(key, 0) + 1
    # the generated cases reach every check and verdict
    for key in ("none", "entailed/overlap", "entailed/numbers", "contradicted/numbers",
                "unsupported/numbers", "contradicted/negation", "contradicted/terms"):
        assert seen.get(key, 0) >= 5, (key, seen)


@pytest.mark.parametrize(("claim", "sources"), [
    ("The warranty period is 24 months.", []),  # no source
    ("The warranty period is 24 months.", ["", "---"]),  # sources without a sentence
    ("24 months.", ["The warranty is 24 months."]),  # a number and no content word
    ("The warranty is 24 months.", ["The warranty is long. It holds 24 months."]),
    # the number only in the pair of two sentences, not in either alone
    ("The period ends 1 July 2026.", ["The period ends 1. July 2026 is late."]),
    ("Siemens supplies pumps.", ["Pumps are made. Bosch supplies pumps."]),
    # a term found only across the join of two sentences is not found
    ("Sie mens supplies pumps.", ["Supplies come from Sie. Mens supplies pumps."]),
    ("The warranty is not 24 months.", ["The warranty is 24 months."]),
    ("보증 기간은 24개월이 아니다.", ["보증 기간은 24개월이다."]),
    ("Die Frist beträgt 3 Tage.", ["Die Frist beträgt 4 Tage. Die Lieferung dauert 3 Tage."]),
    ("Orders over 50 euros ship free.", ["Shipping costs 4.90 euros.",
                                         "Orders over 50 euros ship free."]),
    # equally close sentences (and pairs) with a clashing number: the first is the evidence
    ("The warranty period is 12 months.", ["The warranty period is 24 months.",
                                           "The warranty period is 36 months."]),
    ("The warranty period is 12 months.", ["The warranty period is 24 months. The "
                                           "warranty period is 36 months."]),
    # the number held only by a later, less close sentence; a pair before a closer one
    ("The warranty period is 12 months.", ["The warranty is long. Its period is 12 months. "
                                           "The warranty period of pumps is 24 months."]),
    # a named term only in the second source; one split across the line between two
    ("Siemens supplies pumps.", ["Pumps are made.", "Siemens supplies pumps."]),
    ("Siemens supplies pumps.", ["Pumps are made by Sie", "mens supplies pumps."]),
])
def test_hand_cases_equal_the_reference(claim: str, sources: list[str]) -> None:
    assert decide(claim, sources) == decide_reference(claim, sources)


def test_the_hand_checked_verdicts() -> None:
    src = ["The warranty period is 24 months from acceptance. Siemens supplies the pumps."]
    assert decide("The warranty period is 12 months.", src) == Decision(
        "contradicted", "numbers", "The warranty period is 24 months from acceptance.",
        "'12 months' where the source says '24 months'")
    assert decide("Bosch supplies the pumps.", src) == Decision(
        "contradicted", "terms", "Siemens supplies the pumps.",
        "'bosch' where the source names 'siemens'")
    assert decide("The pumps come fast.", []) == Decision("unsupported", "overlap", "",
                                                          "no source text")


@pytest.mark.parametrize("seed", range(3))
def test_a_pairs_words_are_its_sentences_words(seed: int) -> None:
    rng = random.Random(seed)
    odd = ["ＡＢＣ", "´x", "¨", "3,000만원", "99.5", "ß", "Ǆ", "\u1100\u1161", "\u0308a", "…"]
    for _ in range(500):
        text = _source(rng) + " " + " ".join(rng.choices(odd, k=3)) + ". " + _source(rng)
        view = sources.source_view(text)
        for pair, words in zip(view.pairs, view.pair_words, strict=True):
            assert words == frozenset(content_words(pair)), pair
        joined = " ".join(view.own + view.pairs).casefold()
        for term in {w.casefold() for w in text.split()}:
            assert (term in view.folded) == (term in joined), term


@pytest.mark.parametrize("seed", range(3))
def test_split_claims_equals_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    joins = [", and ", ", but ", ", und ", ", aber ", "; ", "；", ", ", " ", "이고, ", "하며 ",
             "지만 ", "으나, ", " [doc::chunk-002] ", "[x]", "\u00a0", "\u2003", "\x1c", " . "]
    cut = 0
    for _ in range(1500):
        text = "".join(_sentence(rng) + rng.choice(joins + ENDS) for _ in range(rng.randint(0, 4)))
        fast = split_claims(text)
        assert fast == split_claims_reference(text), text
        cut += len(fast) > text.count(". ") + 1
    assert cut > 100  # the texts do get cut into clauses


@pytest.mark.parametrize("text", ["", " ", "[faq::chunk-002]", "a , b", "x\u2028y. z",
                                  "Rot, und blau und grün, und gelb sind Farben hier.",
                                  "보증 기간은 24개월이고 배송비는 4,900원입니다.",
                                  "One two three; four five six.", "Zero\x1cspace ; here."])
def test_split_claims_hand_cases(text: str) -> None:
    assert split_claims(text) == split_claims_reference(text)
