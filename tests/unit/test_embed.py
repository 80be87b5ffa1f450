"""The hashing embedder (hand-checkable vectors) and the embedder registry."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from ragassay.embed import (
    Embedder,
    HashingEmbedder,
    embedder_difference,
    embedder_from_meta,
    get_embedder,
    hashing,
    known_embedders,
)
from ragassay.embed.hashing import feature_hash, features, words


def reference(text_words: list[str], dimension: int = 1024, lo: int = 2, hi: int = 4) -> np.ndarray:
    """The module docstring's formula, written out plainly with dicts."""
    counts: Counter[str] = Counter()
    for w in text_words:
        counts.update(features(w, lo, hi))
    vec = np.zeros(dimension)
    for f, c in counts.items():
        h = feature_hash(f)
        vec[h % dimension] += (-1.0 if h >> 63 else 1.0) * (1 + math.log(c))
    return vec / np.linalg.norm(vec)


def test_features_of_a_word() -> None:
    # " ab " → 2-grams " a", "ab", "b "; 3-grams " ab", "ab "; 4-gram " ab ".
    assert features("ab", 2, 4) == ["w:ab", " a", "ab", "b ", " ab", "ab ", " ab "]
    assert features("b", 2, 4) == ["w:b", " b", "b ", " b "]


def test_feature_hash_is_pinned_blake2b() -> None:
    # blake2b(b"w:ab", digest_size=8), little-endian: the same on every machine and run.
    assert feature_hash("w:ab") == 0x8BD6669AA247AA36
    assert feature_hash(" ab") == 0x15A51E0185F5EC21


def test_vector_of_ab_by_hand() -> None:
    # The 7 features of "ab" land in 7 different buckets, each with weight 1 + ln 1 = 1, so
    # every non-zero coordinate is ±1/sqrt(7). "w:ab" → 0x...36 % 1024 = 566, top bit set → -;
    # " ab" → 0x...21 % 1024 = 33, top bit clear → +.
    v = HashingEmbedder().embed_documents(["ab"])[0]
    assert np.count_nonzero(v) == 7
    assert v[566] == pytest.approx(-1 / math.sqrt(7))
    assert v[33] == pytest.approx(1 / math.sqrt(7))
    np.testing.assert_allclose(v, reference(["ab"]), atol=1e-7)


def test_sublinear_tf_counts_features_across_words() -> None:
    # "b " is a feature of both "ab" and "b": count 2, weight 1 + ln 2.
    v = HashingEmbedder().embed_documents(["ab, b"])[0]
    np.testing.assert_allclose(v, reference(["ab", "b"]), atol=1e-7)
    # When every feature has the same count, all weights are equal (1 + ln 3), so repeating
    # one word leaves the normalised vector unchanged.
    e = HashingEmbedder()
    np.testing.assert_allclose(e.embed_documents(["ab ab ab"]), e.embed_documents(["ab"]),
                               atol=1e-7)


def test_nfkc_and_casefold() -> None:
    e = HashingEmbedder()
    same = e.embed_documents(["ＡＢＣ Straße", "abc STRASSE"])
    np.testing.assert_array_equal(same[0], same[1])


def test_shape_dtype_norm_and_empty() -> None:
    e = HashingEmbedder(dimension=64)
    v = e.embed_documents(["하자보수 기간", "", "!!! ...", "x"])
    assert v.shape == (4, 64) and v.dtype == np.float32
    norms = np.linalg.norm(v, axis=1)
    np.testing.assert_allclose(norms[[0, 3]], 1.0, atol=1e-6)
    assert norms[1] == 0 and norms[2] == 0  # no word: zero vector
    assert e.embed_documents([]).shape == (0, 64)
    np.testing.assert_array_equal(e.embed_queries(["x"]), e.embed_documents(["x"]))


def test_deterministic_across_instances_and_batches() -> None:
    texts = [f"문서 {i} 하자보수 기간은 {i}년" for i in range(10)]
    a = HashingEmbedder().embed_documents(texts)
    b = np.vstack([HashingEmbedder().embed_documents([t]) for t in reversed(texts)])[::-1]
    np.testing.assert_array_equal(a, b)


def test_a_batch_with_empty_and_repeating_texts_matches_the_formula() -> None:
    # Empty texts first, between and last; texts sharing words and n-grams, a word repeated.
    texts = ["", "aaaa aaaa aa", "", "", "하자보수 하자 보수 하자보수는", "ab ba ab", "  ", ""]
    got = HashingEmbedder().embed_documents(texts)
    for text, vec in zip(texts, got, strict=True):
        words = text.casefold().split()
        if not words:
            np.testing.assert_array_equal(vec, np.zeros(1024, dtype=np.float32))
        else:
            np.testing.assert_allclose(vec, reference(words), atol=1e-7)
        np.testing.assert_array_equal(vec, HashingEmbedder().embed_documents([text])[0])



def exact_reference(text: str, dimension: int, lo: int, hi: int) -> np.ndarray:
    """The formula one text at a time, summed in the order the module's docstring fixes
    (features by ascending hash, float64), so the result must match to the last bit."""
    counts = Counter(feature_hash(f) for w in words(text) for f in features(w, lo, hi))
    vec = np.zeros(dimension)
    hashes = sorted(counts)
    weights = 1.0 + np.log(np.array([counts[h] for h in hashes], dtype=np.float64))
    for h, weight in zip(hashes, weights, strict=True):
        vec[h % dimension] += -weight if h >> 63 else weight
    norm = float(np.linalg.norm(vec))
    return (vec / norm if norm > 0 else vec).astype(np.float32)


def random_texts(n: int, seed: int) -> list[str]:
    """Texts of words sharing n-grams and repeating (Zipf-like), with punctuation, numbers,
    full-width and mixed-script words and empty texts among them."""
    rng = random.Random(seed)
    stems = ["하자", "보수", "기간", "계약", "ab", "ba", "abc", "Straße", "ｆｕｌｌ", "x_y",
             "3,000", "99.5%", "API", "v2", "é", "e\u0301", "가나다라마바사", "Gewährleistung"]
    ends = ["", "", "는", "를", "s", "en", "!", ","]
    out = []
    for _ in range(n):
        k = rng.choice([0, 1, 5, 40, 120])
        out.append(" ".join(rng.choice(stems[: rng.randint(1, len(stems))]) + rng.choice(ends)
                            for _ in range(k)))
    return out


@pytest.mark.parametrize(("dimension", "ngram_range"),
                         [(1024, (2, 4)), (1000, (2, 4)), (64, (1, 3)), (7, (3, 5)), (1, (2, 2))])
def test_batches_equal_the_formula_bit_for_bit(dimension: int,
                                               ngram_range: tuple[int, int]) -> None:
    texts = random_texts(300, seed=dimension)  # more than one batch of 256
    hashing.clear_cache()
    got = HashingEmbedder(dimension, ngram_range).embed_documents(texts)
    want = np.stack([exact_reference(t, dimension, *ngram_range) for t in texts])
    assert got.tobytes() == want.tobytes()


def test_the_caches_starting_over_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = random_texts(300, seed=1)
    hashing.clear_cache()
    want = HashingEmbedder().embed_documents(texts)
    hashing.clear_cache()
    monkeypatch.setattr(hashing, "_CACHE_WORDS", 20)  # fewer than a batch's distinct words
    monkeypatch.setattr(hashing, "_CACHE_SHORT", 30)
    e = HashingEmbedder()
    got = np.concatenate([e.embed_documents(texts[i : i + 7]) for i in range(0, len(texts), 7)])
    assert got.tobytes() == want.tobytes()


PARAGRAPHS = [
    "하자보수 기간은 최종 검수 완료일로부터 2년으로 하며, 계약상대자는 무상으로 보수한다.",
    "지체상금률은 계약금액의 1천분의 0.5로 하고, 지체일수에 따라 부과한다.",
    "서버 가용성은 월 99.5% 이상이어야 하며, 장애 발생 시 4시간 이내에 복구한다.",
    "제안서는 전자조달시스템으로 제출하며, 제안 발표는 20분 이내로 진행한다.",
    "Die Kundenportalanmeldung erfolgt über die Zwei-Faktor-Authentifizierung.",
    "The contractor shall maintain the fare collection system for 36 months.",
]


@pytest.mark.parametrize(("query", "want"), [
    ("하자보수 기간은 얼마인가요?", 0),
    ("지체상금률이 어떻게 되나요", 1),
    ("장애 복구 시간", 2),
    ("Wie melde ich mich im Kundenportal an?", 4),
    ("How long must the contractor maintain the fare system?", 5),
])
def test_query_retrieves_its_own_paragraph(query: str, want: int) -> None:
    e = HashingEmbedder()
    scores = e.embed_documents(PARAGRAPHS) @ e.embed_queries([query])[0]
    assert int(np.argmax(scores)) == want


def test_parameters_and_model_name() -> None:
    e = HashingEmbedder(dimension=256, ngram_range=(3, 5))
    assert (e.name, e.model, e.dimension, e.normalized) == (
        "hashing", "hashing-char-3-5-d256", 256, True)
    assert e.params == {"dimension": 256, "ngram_range": [3, 5]}
    assert e.describe() == {"backend": "hashing", "model": "hashing-char-3-5-d256",
                            "dimension": 256, "normalized": True,
                            "params": {"dimension": 256, "ngram_range": [3, 5]}}
    with pytest.raises(ValueError, match="dimension"):
        HashingEmbedder(dimension=0)
    with pytest.raises(ValueError, match="ngram_range"):
        HashingEmbedder(ngram_range=(4, 2))


def test_registry() -> None:
    assert "hashing" in known_embedders()
    e = get_embedder("hashing", dimension=128)
    assert isinstance(e, Embedder) and e.dimension == 128
    with pytest.raises(ValueError, match=r"unknown embedder 'e5'.*known: .*hashing"):
        get_embedder("e5")
    with pytest.raises(ValueError, match="bad parameters for embedder 'hashing'"):
        get_embedder("hashing", dims=3)


def test_unknown_embedder_suggests_the_closest_name() -> None:
    known = ", ".join(known_embedders())
    with pytest.raises(ValueError) as exc:
        get_embedder("hashng")
    assert str(exc.value) == f"unknown embedder 'hashng'; did you mean hashing? (known: {known})"
    with pytest.raises(ValueError) as exc:
        get_embedder("zzz")
    assert str(exc.value) == f"unknown embedder 'zzz'; known: {known}"


def test_embedder_from_meta_round_trip_and_mismatch() -> None:
    meta = HashingEmbedder(dimension=128).describe()
    again = embedder_from_meta(meta)
    assert again.model == "hashing-char-2-4-d128"
    np.testing.assert_array_equal(again.embed_queries(["q"]),
                                  HashingEmbedder(dimension=128).embed_queries(["q"]))
    with pytest.raises(ValueError, match="the index records"):
        embedder_from_meta({**meta, "model": "hashing-char-2-4-d999"})
    with pytest.raises(ValueError, match="backend"):
        embedder_from_meta({"model": "x"})


def test_embedder_difference_names_the_first_differing_field() -> None:
    recorded = get_embedder("hashing").describe()
    recorded["params"] = {**recorded["params"], "ngram_range": [2, 4]}  # as in index.json
    assert embedder_difference(recorded, get_embedder("hashing")) is None
    assert embedder_difference(recorded, get_embedder("hashing", dimension=8)) == "model"
    assert embedder_difference({**recorded, "backend": "x"}, get_embedder("hashing")) == "backend"
    assert embedder_difference({**recorded, "params": {}}, get_embedder("hashing")) == "params"
    assert embedder_difference({**recorded, "params": {}}, get_embedder("hashing"),
                               keys=("model", "dimension")) is None
