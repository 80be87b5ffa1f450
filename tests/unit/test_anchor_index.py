"""Gold anchoring through the per-store look-ups gives what checking every chunk gave."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from ragassay.gold import (
    ANCHOR_STATES,
    AnchoredEvidence,
    _adjacent_pairs,
    anchor_label,
)
from ragassay.schema import Chunk, Document, GoldEvidence
from ragassay.store import Index
from ragassay.text import contains_term, fold_text

# --- the reference: every chunk, every label, as anchoring did it before the look-ups ---


def _holds(label: GoldEvidence, text: str, by: str) -> bool:
    if by == "support_claim":
        return fold_text(label.support_claim or "") in fold_text(text)
    return all(contains_term(text, t) for t in label.required_terms)


def _holders_by_scan(label: GoldEvidence, index: Index, by: str,
                     doc_ids: list[str]) -> tuple[list[str], list[str]]:
    by_doc = [[c.chunk_id for c in index.chunks_of(d) if _holds(label, c.text, by)]
              for d in doc_ids]
    by_doc = [ids for ids in by_doc if ids]
    return (by_doc[0], [c for ids in by_doc[1:] for c in ids]) if by_doc else ([], [])


def anchor_by_scan(label: GoldEvidence, index: Index) -> AnchoredEvidence:
    """Every state of docs/formats.md, checking every chunk of every document in order."""
    if not (label.support_claim or label.required_terms):
        if index.has(label.chunk_id):
            return AnchoredEvidence(label, "ok", [label.chunk_id])
        return AnchoredEvidence(label, "unanchored", [], "chunk id not in the index; the "
                                "label has no support_claim or required_terms to re-anchor by")
    by = "support_claim" if label.support_claim else "required_terms"
    doc_ids = [label.doc_id] if label.doc_id and index.has_document(label.doc_id) else []
    if index.has(label.chunk_id) and _holds(label, index.chunk(label.chunk_id).text, by):
        doc_ids = [index.chunk(label.chunk_id).doc_id]  # its own document is the place
    labelled = list(doc_ids)
    doc_ids += [d.doc_id for d in index.documents if d.doc_id not in doc_ids]
    here, elsewhere = _holders_by_scan(label, index, by, doc_ids)
    where = "" if not elsewhere else (f"; it also stands in {len(elsewhere)} chunk(s) of "
                                      "other documents (candidates, not gold)")
    if label.chunk_id in here:
        if by == "required_terms" or len(here) == 1:
            return AnchoredEvidence(label, "ok", [label.chunk_id], where.lstrip("; "),
                                    elsewhere)
        others = [c for c in here if c != label.chunk_id]
        return AnchoredEvidence(label, "also_in", [label.chunk_id, *others],
                                f"the support_claim also stands in {', '.join(others)}: "
                                f"every one is gold{where}", elsewhere)
    why = ("chunk id not in the index" if not index.has(label.chunk_id)
           else f"chunk no longer holds the {by}")
    first = labelled[0] if labelled else None
    if first is not None and (not here or index.chunk(here[0]).doc_id != first):
        run = _run_by_scan(label, index, by, first)
        if run:
            return _split_by_scan(label, run, by, why, here + elsewhere)
    if here:
        gold = here if by == "support_claim" else here[:1]
        return AnchoredEvidence(label, "reanchored", gold, f"{why}; re-anchored by {by}{where}",
                                [c for c in here if c not in gold] + elsewhere)
    for doc_id in doc_ids:
        for a, b, joined in _adjacent_pairs(index, doc_id):
            if doc_id != first and _holds(label, joined, by):
                return _split_by_scan(label, [a, b], by, why, [])
    if by == "support_claim" and label.required_terms:
        own = (label.doc_id if label.doc_id and index.has_document(label.doc_id)
               else index.chunk(label.chunk_id).doc_id if index.has(label.chunk_id) else None)
        terms = [c.chunk_id for c in index.chunks_of(own)
                 if _holds(label, c.text, "required_terms")] if own is not None else []
        if terms:
            at = label.chunk_id if label.chunk_id in terms else terms[0]
            return AnchoredEvidence(
                label, "terms_only", [at], "the support_claim stands in no chunk and no run "
                f"of adjacent chunks, but every required_terms item stands in {at}: the "
                "claim is worded unlike the text (a paraphrase?); review the claim",
                [c for c in terms if c != at])
    known_doc = bool(label.doc_id) and index.has_document(label.doc_id)
    doc = index.document(label.doc_id) if known_doc else None
    if doc is not None and any(doc.dropped.values()):
        dropped = ", ".join(f"{n} {kind}" for kind, n in sorted(doc.dropped.items()) if n)
        kept = [label.chunk_id] if index.has(label.chunk_id) else []
        return AnchoredEvidence(label, "lost_in_parsing", kept,
                                f"{by} is in no chunk; the loader dropped {dropped} of "
                                f"{doc.doc_id}")
    near = _nearest_by_scan(label, index)
    return AnchoredEvidence(label, "unanchored", [], f"{why}; no chunk holds the {by}"
                            + ("; the nearest chunks are its candidates" if near else ""),
                            [c for c, _ in near], similarity=[s for _, s in near])


def _run_by_scan(label: GoldEvidence, index: Index, by: str, doc_id: str) -> list[str]:
    """The first run of the fewest adjacent chunks of ``doc_id`` holding the label together
    (by terms, pairs only), reading every run: each chunk's text, then what each next one
    adds beyond the overlap of their spans."""
    chunks = index.chunks_of(doc_id)
    tails = [chunks[0].text] if chunks else []
    for a, b in zip(chunks, chunks[1:], strict=False):
        cut = a.char_span[1] - b.char_span[0] if a.char_span and b.char_span else 0
        tails.append(b.text[max(cut, 0):])
    for size in range(2, len(chunks) + 1 if by == "support_claim" else 3):
        for i in range(len(chunks) - size + 1):
            if _holds(label, chunks[i].text + "".join(tails[i + 1:i + size]), by):
                return [c.chunk_id for c in chunks[i:i + size]]
    return []


def _split_by_scan(label: GoldEvidence, run: list[str], by: str, why: str,
                   elsewhere: list[str]) -> AnchoredEvidence:
    n = "two" if len(run) == 2 else str(len(run))
    held = f"the {by} spans {n} adjacent chunks, no chunk holds it alone"
    where = "" if not elsewhere else (f"; {len(elsewhere)} chunk(s) of other documents hold "
                                      "it alone (candidates, not gold)")
    if label.chunk_id in run:
        return AnchoredEvidence(label, "split", run, held + where, run + elsewhere, split=True)
    return AnchoredEvidence(label, "reanchored", run, f"{why}; {held}{where}", run + elsewhere,
                            split=True)


def _nearest_by_scan(label: GoldEvidence, index: Index) -> list[tuple[str, float]]:
    """The rule of ``_Texts.nearest`` by reading every chunk: count each chunk's shared rare
    words (a word is rare in at most a tenth of the chunks, at least 10; all words when the
    label has no rare one), keep the 150 chunks sharing the most, score them by the share
    of the label's character bigrams they hold, and list the best three."""
    needle = fold_text(label.support_claim or " ".join(label.required_terms))
    texts = [set(fold_text(c.text).split(" ")) for c in index.chunks]
    present = [w for w in set(needle.split(" ")) if any(w in t for t in texts)]
    common = max(len(texts) // 10, 10)
    rare = [w for w in present if sum(w in t for t in texts) <= common] or present
    shared = {row: n for row, t in enumerate(texts) if (n := sum(w in t for w in rare))}
    grams = _grams(needle)
    if not grams:
        return []
    pool = sorted(shared, key=lambda r: (-shared[r], r))[:150]
    scored = [(r, round(len(grams & _grams(fold_text(index.chunks[r].text), len(needle)))
                        / len(grams), 3)) for r in pool]
    scored.sort(key=lambda x: (-x[1], x[0]))
    return [(index.chunks[r].chunk_id, s) for r, s in scored[:3]]


def _grams(text: str, of: int = 2) -> set[str]:
    """The character bigrams of ``text`` without spaces (its one character when that is
    all; with ``of`` = 1, also every single character, to hold a one-character needle)."""
    t = text.replace(" ", "")
    grams = {t[i:i + 2] for i in range(len(t) - 1)}
    if of <= 1 or len(t) <= 1:
        grams |= set(t)
    return grams


# --- a generated store ---------------------------------------------------------------

WORDS = ["the", "Return", "returns", "within", "14", "Tage", "14.5", "6개월", "16개월",
         "API", "연계", "API연계", "Straße", "STRASSE", "ＡＢＣ１", "abc1", "“quoted”", "'quoted'",
         "days", "of", "delivery.", "a", "b", "\u00e9t\u00e9", "e\u0301te\u0301"]
SPACES = [" ", " ", " ", "  ", "\n", "\t ", "\u3000"]


def _text(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        out += [rng.choice(WORDS), rng.choice(SPACES)]
    return "".join(out)


def make_store(rng: random.Random, docs: int, per_doc: int) -> Index:
    documents, chunks = [], []
    for d in range(docs):
        doc_id = f"d{d}"
        dropped = {"tables": 1} if rng.random() < 0.3 else {}
        documents.append(Document(doc_id=doc_id, dropped=dropped))
        text = _text(rng, per_doc * 6)
        at, seqs = 0, list(range(per_doc))
        rng.shuffle(seqs)  # rows are not in seq order
        for i in range(per_doc):
            size = rng.randint(5, 40)
            start = max(at - rng.randint(0, 6), 0)  # overlapping neighbours
            end = min(start + size, len(text)) if i < per_doc - 1 else len(text)
            span = (start, end) if rng.random() < 0.8 else None
            chunks.append(Chunk(chunk_id=f"{doc_id}::c{i}", doc_id=doc_id, seq=seqs[i],
                                text=text[start:end] or "x", char_span=span))
            at = end
    # a chunk of a document the index does not list: never a holder
    chunks.append(Chunk(chunk_id="orphan::c0", doc_id="orphan", text=_text(rng, 10)))
    rng.shuffle(chunks)
    return Index(Path("mem"), {}, documents, chunks, np.zeros((len(chunks), 0), np.float32))


def _run_text(index: Index, doc_id: str) -> str:
    """The text of all the chunks of a document, each overlap read once."""
    chunks = index.chunks_of(doc_id)
    out = chunks[0].text
    for a, b in zip(chunks, chunks[1:], strict=False):
        cut = a.char_span[1] - b.char_span[0] if a.char_span and b.char_span else 0
        out += b.text[max(cut, 0):]
    return out


def random_label(rng: random.Random, index: Index) -> GoldEvidence:
    chunk = rng.choice(index.chunks)
    doc_id = rng.choice([chunk.doc_id, "", "nope", f"d{rng.randint(0, 3)}"])
    chunk_id = rng.choice([chunk.chunk_id, "gone::c9", rng.choice(index.chunks).chunk_id])
    kind = rng.random()
    if kind < 0.55:  # a piece of a chunk or of neighbours, maybe spanning the seams
        joined = [t for _, _, t in _adjacent_pairs(index, chunk.doc_id)] or [chunk.text]
        source = rng.choice(joined)
        if rng.random() < 0.3:  # the document read through: a claim over several chunks
            source = _run_text(index, chunk.doc_id)
        a = rng.randint(0, len(source))
        claim = source[a : a + rng.randint(0, 30 if rng.random() < 0.7 else 120)]
        return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id, support_claim=claim or " ")
    if kind < 0.7:  # words that may be nowhere, maybe with terms to fall back on
        terms = rng.sample(WORDS, rng.randint(1, 2)) if rng.random() < 0.5 else []
        return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id, required_terms=terms,
                            support_claim=" ".join(rng.sample(WORDS, rng.randint(1, 4))))
    if kind < 0.95:
        terms = rng.sample(WORDS + ["", "  ", "4", "5 Tage"], rng.randint(1, 3))
        return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id, required_terms=terms)
    return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id)


def test_anchoring_equals_checking_every_chunk() -> None:
    rng = random.Random(7)
    seen: set[str] = set()
    runs: set[int] = set()
    for _ in range(12):
        index = make_store(rng, docs=rng.randint(1, 6), per_doc=rng.randint(1, 12))
        for _ in range(150):
            label = random_label(rng, index)
            anchored = anchor_label(label, index)
            assert anchored == anchor_by_scan(label, index), label
            seen.add(anchored.status)
            if anchored.split:
                runs.add(min(len(anchored.chunk_ids), 3))
    assert seen == set(ANCHOR_STATES)  # the generated labels reach every state
    assert runs == {2, 3}  # and claims across two chunks, and across three or more


def test_look_ups_are_built_once_per_store() -> None:
    rng = random.Random(1)
    index = make_store(rng, docs=2, per_doc=5)
    anchor_label(GoldEvidence(chunk_id="gone", support_claim="the returns of days"), index)
    texts = index.cache["gold.anchor_texts"]
    anchor_label(GoldEvidence(chunk_id="gone", support_claim="API"), index)
    assert index.cache["gold.anchor_texts"] is texts


def test_rows_with_finds_what_a_scan_finds() -> None:
    """The word look-ups (inner words whole, the first piece ending a word, the last
    beginning one) against `needle in text` on every row, for needles cut anywhere."""
    from ragassay.gold import _Texts
    rng = random.Random(7)
    vocab = ["하자보수", "기간은", "시스템의", "ab", "abc", "bca", "ca", "a", "b", "c",
             "12개월", "개월", "Frist", "frist", "\U0010ffff", "x\U0010ffff"]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 9))) for _ in range(300)]
    texts += ["", " ", "ab  ca", " ab"]
    look = _Texts(texts)
    for _ in range(1500):
        source = rng.choice(texts)
        if source and rng.random() < 0.8:
            i = rng.randrange(len(source))
            needle = source[i : i + rng.randint(1, 25)]
        else:
            needle = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 3)))
        assert look.rows_with(needle) == [r for r, t in enumerate(texts) if needle in t], needle
