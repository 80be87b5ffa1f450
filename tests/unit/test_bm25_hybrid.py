"""Tokenisers, BM25 (scores by the formula, Korean particles) and reciprocal rank fusion by hand."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay import tokens
from ragassay.index import Index
from ragassay.retrieve import (
    BM25Retriever,
    Hit,
    HybridRetriever,
    Ranking,
    apply_min_score,
    ranking_from_scores,
)
from ragassay.schema import Chunk, Document


def make_index(texts: Sequence[str]) -> Index:
    """An in-memory index of one document whose chunks are ``texts`` (no embeddings)."""
    chunks = [Chunk(chunk_id=f"d::chunk-{i + 1:03d}", doc_id="d", text=t, seq=i + 1)
              for i, t in enumerate(texts)]
    return Index(Path("mem"), {"embedding": None}, [Document(doc_id="d")], chunks,
                 np.zeros((len(texts), 0), np.float32))


def needs_kiwi() -> None:
    pytest.importorskip("kiwipiepy")


# --- tokenisers ----------------------------------------------------------------------


def test_word_rule() -> None:
    # NFKC folds the full-width letters and digit; numbers keep their inner separators.
    assert tokens.word_tokens("PER-001: ＡＢＣ１ 3,000명, 99.5% Gewährleistung") == [
        "per", "001", "abc", "1", "3,000", "명", "99.5", "gewährleistung"]
    assert tokens.word_tokens("  ") == []
    assert tokens.tokenizer_for("de") is tokens.word_tokens
    assert tokens.tokenizer_for("en") is tokens.word_tokens


def test_unknown_language_is_refused() -> None:
    with pytest.raises(ValueError, match="known: ko, de, en, auto"):
        tokens.tokenizer_for("fr")


def test_korean_particles_and_endings_fall_away() -> None:
    needs_kiwi()
    ko = tokens.tokenizer_for("ko")
    assert ko("하자보수를") == ko("하자보수는") == ["하자", "보수"]
    # Verb stems as dictionary forms: 고쳐 / 고치고 → 고치다; numbers and units kept.
    assert "고치다" in ko("고쳐 주나요?") and "고치다" in ko("고치고")
    assert ko("최종 검수 완료일로부터 2년으로 하며") == ["최종", "검수", "완료", "일", "2", "년",
                                                   "하다"]
    # Latin words and numbers inside Korean text follow the word rule.
    assert ko("PER-001 동시 접속자 3,000명") == ["per", "001", "동시", "접속자", "3,000", "명"]


def test_auto_picks_korean_per_text() -> None:
    needs_kiwi()
    auto = tokens.tokenizer_for("auto")
    assert auto("Availability 99.5 %") == tokens.word_tokens("Availability 99.5 %")
    assert auto("하자보수를") == ["하자", "보수"]
    texts = ["하자보수는 2년", "Gewährleistung 24 Monate", "", "SLA 99.5% 가용성"]
    assert tokens.tokenize_all(texts, "auto") == [auto(t) for t in texts]
    assert tokens.tokenize_all(texts, "ko") == [tokens.korean_tokens(t) for t in texts]


def test_text_without_hangul_never_loads_kiwi() -> None:
    needs_kiwi()
    tokens._kiwi.cache_clear()
    index = make_index(["Warranty of 24 months", "Gewährleistung 24 Monate", "SLA 99.5 %"])
    ranking = BM25Retriever(index, tokenizer="auto").search(["warranty months"], 2)[0]
    assert [h.chunk_id for h in ranking.hits] == ["d::chunk-001"]
    assert tokens._kiwi.cache_info().currsize == 0  # the model was never loaded


def test_korean_terms_do_not_depend_on_what_was_analysed_before() -> None:
    needs_kiwi()
    texts = ["하자보수는 최종 검수 완료일로부터 2년으로 하며", "PER-001 동시 접속자 3,000명",
             "검수 완료일로부터"]
    tokens._EOJEOL_TERMS.clear()
    cold = [tokens.korean_tokens(t) for t in texts]
    tokens._EOJEOL_TERMS.clear()
    batch = tokens.tokenize_all(list(reversed(texts)), "ko")[::-1]
    assert cold == batch == [tokens.korean_tokens(t) for t in texts]  # warm
    assert cold[2] == ["검수", "완료", "일"]



def korean_eojeols(n: int, seed: int = 0) -> list[str]:
    """Generated and real-looking eojeols: nouns with particles and endings, numbers and
    units, mixed Hangul/Latin, punctuation, full-width forms, jamo, URLs."""
    rng = random.Random(seed)
    syllables = "하자보수기간계약상대발주기관검수완료일지체상금액제안서사업유지관리장애조치"
    fixed = ("하자보수는 2년으로 하며, (발주기관) 3,000명 99.5% API를 v2.1에서 한국어English혼합 "
             "ㅋㅋㅋ 먹었어욥 １２３개 “인용” x_y가 제3조(목적) https://example.com/가 고쳐 고치고 "
             "했습니다. 않았다! 것이다? ①항").split()
    ends = ["", *"은 는 이 가 을 를 의 에 로 으로 에서 부터 하고 했다 합니다. , · 와 까지".split()]
    out = list(fixed)
    while len(out) < n:
        word = "".join(rng.choices(syllables, k=rng.randint(1, 4)))
        if rng.random() < 0.1:
            word = rng.choice(["PER-", "SLA", "24", "v", ""]) + word
        out.append(word + rng.choice(ends))
    return out


def test_batched_analysis_equals_each_eojeol_analysed_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    needs_kiwi()
    eojeols = korean_eojeols(3000)
    kiwi = tokens._kiwi()
    # Independent of the module's batching and look-ups: Kiwi called on one eojeol at a time.
    alone = {e: tokens._kiwi_terms(kiwi.tokenize(e)) if tokens.has_hangul(e)
             else tokens.word_tokens(e) for e in eojeols}
    rng = random.Random(1)
    texts = [" ".join(rng.choices(eojeols, k=rng.randint(0, 60))) for _ in range(400)]
    want = [[t for e in text.split() for t in alone[e]] for text in texts]
    tokens._EOJEOL_TERMS.clear()
    assert tokens.tokenize_all(texts, "ko") == want
    assert tokens.tokenize_all(texts, "ko") == want  # every eojeol known now
    # The look-up starting over, within a call and between calls, changes nothing.
    monkeypatch.setattr(tokens, "_EOJEOL_MAX", 50)
    tokens._EOJEOL_TERMS.clear()
    assert [tokens.korean_tokens(t) for t in texts] == want
    assert tokens.tokenize_all(texts, "ko") == want


def test_missing_kiwi_gives_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without kiwipiepy, Korean text is bad setup (exit 2) with the line that installs
    it; English and German text, also under "auto" (the BM25 default), need no Kiwi."""
    from ragassay.errors import MissingPackage

    monkeypatch.setitem(sys.modules, "kiwipiepy", None)  # makes the import fail
    tokens._kiwi.cache_clear()
    try:
        line = r"kiwipiepy, which is not installed: pip install 'kiwipiepy>=0\.24'"
        with pytest.raises(MissingPackage, match=line):
            tokens.tokenizer_for("ko")
        with pytest.raises(MissingPackage, match=line):
            tokens.tokenize_all(["Garantie", "하자보수는 2년"], "auto")
        assert tokens.tokenizer_for("en") is tokens.word_tokens  # no Kiwi needed
        assert tokens.tokenize_all(["Warranty of 24 months", "Gewährleistung 24 Monate"],
                                     "auto") == [["warranty", "of", "24", "months"],
                                                 ["gewährleistung", "24", "monate"]]
        index = make_index(["Warranty of 24 months", "Gewährleistung 24 Monate"])
        hits = BM25Retriever(index).search(["Gewährleistung"], 1)[0].hits
        assert [h.chunk_id for h in hits] == ["d::chunk-002"]
    finally:
        tokens._kiwi.cache_clear()


# --- BM25 ----------------------------------------------------------------------------


def bm25(tf: int, df: int, n: int, dl: int, avgdl: float, k1: float = 1.5,
         b: float = 0.75) -> float:
    """One term's BM25 (Lucene variant), as in the BM25Retriever docstring."""
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_bm25_scores_by_the_formula() -> None:
    pytest.importorskip("bm25s")
    index = make_index(["apple banana", "apple apple cherry", "durian", "banana"])
    r = BM25Retriever(index, tokenizer="en")
    # N = 4 chunks of 2, 3, 1, 1 terms: avgdl = 7/4. df(apple) = 2, df(cherry) = 1.
    # "apple" twice in the query counts once.
    want = [bm25(1, 2, 4, 2, 7 / 4),
            bm25(2, 2, 4, 3, 7 / 4) + bm25(1, 1, 4, 3, 7 / 4),
            0.0, 0.0]
    np.testing.assert_allclose(r.scores("Apple cherry apple"), want, rtol=1e-6)
    ranking = r.search(["Apple cherry apple"], 10)[0]
    # Only chunks holding a query term are hits.
    assert [h.chunk_id for h in ranking.hits] == ["d::chunk-002", "d::chunk-001"]
    assert ranking.rank_of(1) == 1 and ranking.rank_of(0) == 2


def test_bm25_parameters_change_the_scores() -> None:
    pytest.importorskip("bm25s")
    index = make_index(["apple banana", "apple apple cherry", "durian"])
    r = BM25Retriever(index, tokenizer="en", k1=1.2, b=0.0)
    np.testing.assert_allclose(r.scores("apple")[:2],
                               [bm25(1, 2, 3, 2, 2, 1.2, 0.0), bm25(2, 2, 3, 3, 2, 1.2, 0.0)],
                               rtol=1e-6)
    with pytest.raises(ValueError, match="0 <= b <= 1"):
        BM25Retriever(index, tokenizer="en", b=1.5)


def test_query_without_known_terms_has_no_hits() -> None:
    pytest.importorskip("bm25s")
    r = BM25Retriever(make_index(["apple", "banana"]), tokenizer="en")
    for query in ("kiwi", "", "?!"):
        ranking = r.search([query], 5)[0]
        assert ranking.hits == [] and not r.scores(query).any()


def test_empty_corpus_and_empty_chunks() -> None:
    pytest.importorskip("bm25s")
    assert BM25Retriever(make_index([]), tokenizer="en").search(["a"], 3)[0].hits == []
    r = BM25Retriever(make_index(["", "apple", "  "]), tokenizer="en")
    assert [h.position for h in r.search(["apple"], 3)[0].hits] == [1]


KOREAN = [
    "하자보수는 최종 검수 완료일로부터 2년으로 하며, 결함은 3영업일 이내에 보완한다.",
    "지체상금은 지체일수 1일마다 계약금액의 0.5%로 한다.",
    "제안서는 원본 1부와 사본 5부를 제출한다.",
]


def test_bm25_finds_korean_chunk_across_particles() -> None:
    pytest.importorskip("bm25s")
    needs_kiwi()
    index = make_index(KOREAN)
    question = "하자보수를 얼마 동안 해야 하나요?"  # 를, not the text's 는
    top = BM25Retriever(index, tokenizer="ko").search([question], 3)[0].hits
    assert top[0].chunk_id == "d::chunk-001"
    assert BM25Retriever(index, tokenizer="auto").search([question], 1)[0].hits == top[:1]
    # The word rule sees "하자보수를" and "하자보수는" as two different words: nothing matches.
    assert BM25Retriever(index, tokenizer="en").search([question], 3)[0].hits == []


def test_min_score_drops_hits_but_keeps_ranks() -> None:
    pytest.importorskip("bm25s")
    index = make_index(["apple banana", "apple apple cherry", "durian", "banana"])
    full = BM25Retriever(index, tokenizer="en").search(["apple cherry"], 10)[0]
    cut = full.hits[0].score - 1e-6
    kept = BM25Retriever(index, tokenizer="en", min_score=cut).search(["apple cherry"], 10,
                                                                      track=[[0]])[0]
    assert kept.hits == full.hits[:1]
    assert kept.rank_of(0) == full.rank_of(0) == 2
    assert apply_min_score(full, cut).hits == kept.hits
    assert apply_min_score(full, None) is full


SCRIPT = """
import hashlib, sys
sys.path.insert(0, {tests!r})
from test_bm25_hybrid import make_index
from ragassay.retrieve import BM25Retriever
texts = ["apple banana " * 3, "cherry apple", "banana durian elder", "fig apple cherry banana"]
r = BM25Retriever(make_index(texts), tokenizer="en")
print(hashlib.sha256(b"".join(r.scores(q).tobytes() for q in ("apple", "banana cherry",
      "elder fig apple"))).hexdigest())
"""


def test_bm25_scores_are_identical_across_hash_seeds() -> None:
    pytest.importorskip("bm25s")
    # bm25s numbers terms by iterating a set; the retriever gives its own ids, so the
    # scores must not change with Python's string hashing.
    code = SCRIPT.format(tests=str(Path(__file__).parent))
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={"PYTHONHASHSEED": seed,
                                               "PATH": "/usr/bin:/bin",  # the tree under test:
                                               "PYTHONPATH": os.environ.get("PYTHONPATH", "")
                                               }).stdout
               for seed in ("1", "2")}
    assert len(digests) == 1


def test_korean_bm25_is_deterministic() -> None:
    pytest.importorskip("bm25s")
    needs_kiwi()
    every = [range(len(KOREAN))] * 2
    a = BM25Retriever(make_index(KOREAN)).search(["하자보수 기간", "지체상금률"], 3, every)
    b = BM25Retriever(make_index(KOREAN)).search(["하자보수 기간", "지체상금률"], 3, every)
    assert [r.hits for r in a] == [r.hits for r in b]
    assert [r.ranks for r in a] == [r.ranks for r in b]
    x, y = (BM25Retriever(make_index(KOREAN)).scores("지체상금률") for _ in range(2))
    assert x.tobytes() == y.tobytes()


# --- reciprocal rank fusion ----------------------------------------------------------


class Fixed:
    """A retriever that returns the same positions (best first) for every query."""

    def __init__(self, index: Index, positions: list[int], backend: str = "fixed") -> None:
        self.index, self.positions, self.backend = index, positions, backend

    def search(self, queries: Sequence[str], k: int) -> list[Ranking]:
        hits = [Hit(self.index.chunks[p].chunk_id, p, float(len(self.positions) - i))
                for i, p in enumerate(self.positions[:k])]
        return [Ranking(hits) for _ in queries]


def test_rrf_by_hand() -> None:
    index = make_index(["a", "b", "c", "d", "e"])
    fused = HybridRetriever([Fixed(index, [2, 0, 1]), Fixed(index, [0, 3])], k_rrf=60)
    ranking = fused.search(["q"], 10, track=[[4]])[0]
    want = [1 / 61 + 1 / 62,  # row 0: 2nd in the first list, 1st in the second
            1 / 63,           # row 1: 3rd in the first list
            1 / 61,           # row 2: 1st in the first list
            1 / 62,           # row 3: 2nd in the second list
            0.0]              # row 4: in no list
    np.testing.assert_allclose(fused.scores("q"), want, rtol=1e-12)
    assert [h.position for h in ranking.hits] == [0, 2, 3, 1]  # row 4 is no hit
    assert ranking.hits[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert ranking.rank_of(4) == 5
    assert [h.position for h in fused.search(["q"], 2)[0].hits] == [0, 2]


def test_rrf_ties_go_to_the_lower_index_position() -> None:
    index = make_index(["a", "b", "c"])
    # Rows 2 and 1 are both first in one list: equal fused scores 1/61.
    ranking = HybridRetriever([Fixed(index, [2]), Fixed(index, [1])]).search(["q"], 3)[0]
    assert [h.position for h in ranking.hits] == [1, 2]


def test_rrf_depth_and_min_score() -> None:
    index = make_index(["a", "b", "c", "d"])
    lists = [Fixed(index, [0, 1, 2]), Fixed(index, [3, 2])]
    shallow = HybridRetriever(lists, k_rrf=0, depth=1)
    # Only each list's first hit counts: rows 0 and 3 at 1/(0 + 1) each.
    np.testing.assert_allclose(shallow.scores("q"), [1, 0, 0, 1])
    assert [h.position for h in shallow.search(["q"], 4)[0].hits] == [0, 3]
    cut = HybridRetriever(lists, k_rrf=0, min_score=0.5).search(["q"], 4)[0]
    # Row 2: 1/3 + 1/2; row 0: 1; row 3: 1; row 1: 1/2.
    assert [(h.position, h.score) for h in cut.hits] == [(0, 1.0), (3, 1.0), (2, 1 / 3 + 1 / 2),
                                                        (1, 0.5)]
    assert len(HybridRetriever(lists, k_rrf=0, min_score=0.6).search(["q"], 4)[0].hits) == 3


def test_rrf_refuses_bad_settings_and_other_indexes() -> None:
    index = make_index(["a", "b"])
    with pytest.raises(ValueError, match="at least one"):
        HybridRetriever([])
    with pytest.raises(ValueError, match="depth >= 1"):
        HybridRetriever([Fixed(index, [0])], depth=0)
    with pytest.raises(ValueError, match="another index"):
        HybridRetriever([Fixed(index, [0]), Fixed(make_index(["x", "y", "z"]), [1], "other")])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.permutations(range(6)).map(list).flatmap(
           lambda p: st.integers(0, 6).map(lambda n: p[:n])), min_size=1, max_size=3),
       st.integers(0, 100), st.integers(1, 6), st.integers(1, 8))
def test_rrf_is_the_formula_and_sorted(lists: list[list[int]], k_rrf: int, depth: int,
                                       k: int) -> None:
    index = make_index([str(i) for i in range(6)])
    hybrid = HybridRetriever([Fixed(index, p) for p in lists], k_rrf=k_rrf, depth=depth)
    ranking = hybrid.search(["q"], k, track=[range(6)])[0]
    scores = hybrid.scores("q")
    for row in range(6):
        want = sum(1 / (k_rrf + p.index(row) + 1) for p in lists if row in p[:depth])
        assert scores[row] == pytest.approx(want, rel=1e-12)
    expected = sorted((r for r in range(6) if scores[r] > 0), key=lambda r: (-scores[r], r))[:k]
    assert [h.position for h in ranking.hits] == expected
    order = sorted(range(6), key=lambda r: (-scores[r], r))
    assert ranking.ranks == {r: order.index(r) + 1 for r in range(6)}


def test_bm25_and_dense_style_lists_fuse() -> None:
    pytest.importorskip("bm25s")
    index = make_index(["apple banana", "apple apple cherry", "durian", "banana"])
    bm = BM25Retriever(index, tokenizer="en")
    hybrid = HybridRetriever([bm, Fixed(index, [2, 1])])
    ranking = hybrid.search(["apple cherry"], 4)[0]
    # bm25: row 1 then row 0; fixed: row 2 then row 1.
    np.testing.assert_allclose(hybrid.scores("apple cherry"),
                               [1 / 62, 1 / 61 + 1 / 62, 1 / 61, 0])
    # 1/61 + 1/62 > 1/61 > 1/62: rows 1, 2, 0; row 3 is in no list.
    assert [h.chunk_id for h in ranking.hits] == ["d::chunk-002", "d::chunk-003",
                                                  "d::chunk-001"]


def test_ranking_from_scores_rules() -> None:
    index = make_index(["a", "b", "c", "d"])
    scores = np.array([0.5, 0.0, 0.5, -1.0], dtype=np.float32)
    assert [h.position for h in ranking_from_scores(index, scores, 4).hits] == [0, 2, 1, 3]
    assert [h.position for h in ranking_from_scores(index, scores, 4,
                                                    positive_only=True).hits] == [0, 2]
    assert [h.position for h in ranking_from_scores(index, scores, 4,
                                                    min_score=0.0).hits] == [0, 2, 1]


def test_bm25_and_hybrid_scores_do_not_depend_on_batch_or_threads() -> None:
    """A query's lexical and fused scores are computed from that query alone (no BLAS)."""
    pytest.importorskip("bm25s")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(3)
    words = ["apple", "banana", "cherry", "durian", "elder", "fig", "grape", "hazel"]
    index = make_index([" ".join(rng.choice(words, 6)) for _ in range(200)])
    queries = [" ".join(rng.choice(words, 3)) for _ in range(40)]
    bm25 = BM25Retriever(index, tokenizer="en")
    hybrid = HybridRetriever([bm25, BM25Retriever(index, tokenizer="en", k1=0.9, b=0.4)],
                             depth=20)

    def digest(retriever: BM25Retriever | HybridRetriever, order: list[int]) -> list[bytes]:
        found = retriever.search([queries[i] for i in order], 10, [range(200)] * len(order))
        back = dict(zip(order, found, strict=True))
        return [str(back[i].ranks).encode() + str(back[i].hits).encode()
                for i in range(len(queries))]

    for retriever in (bm25, hybrid):
        want = digest(retriever, list(range(len(queries))))
        with threadpoolctl.threadpool_limits(limits=1):
            assert digest(retriever, list(range(len(queries)))) == want
        assert digest(retriever, [int(i) for i in rng.permutation(len(queries))]) == want
        alone = [retriever.search([q], 10, [range(200)])[0] for q in queries]
        assert [str(a.ranks).encode() + str(a.hits).encode() for a in alone] == want
        assert [retriever.scores(q).tobytes() for q in queries] == \
            [retriever.scores(q).tobytes() for q in reversed(queries)][::-1]
