"""Gold anchoring through the per-store look-ups gives what checking every chunk gave."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from ragassay.gold import AnchoredEvidence, AnchorStatus, _adjacent_pairs, anchor_label
from ragassay.schema import Chunk, Document, GoldEvidence
from ragassay.store import Index
from ragassay.text import contains_term, normalize

# --- the reference: every chunk, every label, as anchoring did it before the look-ups ---


def _holds(label: GoldEvidence, text: str) -> bool:
    if label.support_claim:
        return normalize(label.support_claim) in normalize(text)
    if label.required_terms:
        return all(contains_term(text, t) for t in label.required_terms)
    return True


def anchor_by_scan(label: GoldEvidence, index: Index) -> AnchoredEvidence:
    if index.has(label.chunk_id) and _holds(label, index.chunk(label.chunk_id).text):
        return AnchoredEvidence(label, "ok", [label.chunk_id])
    why = ("chunk id not in the index" if not index.has(label.chunk_id)
           else "chunk no longer holds the support claim")
    if not (label.support_claim or label.required_terms):
        return AnchoredEvidence(label, "unanchored", [], why + "; the label has no "
                                "support_claim or required_terms to re-anchor by")
    by = "support_claim" if label.support_claim else "required_terms"
    doc_ids = [label.doc_id] if label.doc_id and index.has_document(label.doc_id) else []
    doc_ids += [d.doc_id for d in index.documents if d.doc_id not in doc_ids]
    for doc_id in doc_ids:
        holders = [c.chunk_id for c in index.chunks_of(doc_id) if _holds(label, c.text)]
        if holders:
            return AnchoredEvidence(label, "reanchored", [holders[0]],
                                    f"{why}; re-anchored by {by}", holders)
    for doc_id in doc_ids:
        for a, b, joined in _adjacent_pairs(index, doc_id):
            if _holds(label, joined):
                status: AnchorStatus = "split" if label.chunk_id in (a, b) else "reanchored"
                return AnchoredEvidence(label, status, [a, b], f"the {by} spans two "
                                        "adjacent chunks", [a, b], split=True)
    known_doc = bool(label.doc_id) and index.has_document(label.doc_id)
    doc = index.document(label.doc_id) if known_doc else None
    if doc is not None and any(doc.dropped.values()):
        dropped = ", ".join(f"{n} {kind}" for kind, n in sorted(doc.dropped.items()) if n)
        kept = [label.chunk_id] if index.has(label.chunk_id) else []
        return AnchoredEvidence(label, "lost_in_parsing", kept,
                                f"{by} is in no chunk; the loader dropped {dropped} of "
                                f"{doc.doc_id}")
    return AnchoredEvidence(label, "unanchored", [], f"{why}; no chunk holds the {by}")


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


def random_label(rng: random.Random, index: Index) -> GoldEvidence:
    chunk = rng.choice(index.chunks)
    doc_id = rng.choice([chunk.doc_id, "", "nope", f"d{rng.randint(0, 3)}"])
    chunk_id = rng.choice([chunk.chunk_id, "gone::c9", rng.choice(index.chunks).chunk_id])
    kind = rng.random()
    if kind < 0.55:  # a piece of a chunk or of two neighbours, maybe spanning the seam
        joined = [t for _, _, t in _adjacent_pairs(index, chunk.doc_id)] or [chunk.text]
        source = rng.choice(joined)
        a = rng.randint(0, len(source))
        claim = source[a : a + rng.randint(0, 30)]
        return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id, support_claim=claim or " ")
    if kind < 0.7:  # words that may be nowhere
        return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id,
                            support_claim=" ".join(rng.sample(WORDS, rng.randint(1, 4))))
    if kind < 0.95:
        terms = rng.sample(WORDS + ["", "  ", "4", "5 Tage"], rng.randint(1, 3))
        return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id, required_terms=terms)
    return GoldEvidence(chunk_id=chunk_id, doc_id=doc_id)


def test_anchoring_equals_checking_every_chunk() -> None:
    rng = random.Random(7)
    for _ in range(12):
        index = make_store(rng, docs=rng.randint(1, 6), per_doc=rng.randint(1, 12))
        for _ in range(150):
            label = random_label(rng, index)
            assert anchor_label(label, index) == anchor_by_scan(label, index), label


def test_look_ups_are_built_once_per_store() -> None:
    rng = random.Random(1)
    index = make_store(rng, docs=2, per_doc=5)
    anchor_label(GoldEvidence(chunk_id="gone", support_claim="the returns of days"), index)
    texts = index.cache["gold.anchor_texts"]
    anchor_label(GoldEvidence(chunk_id="gone", support_claim="API"), index)
    assert index.cache["gold.anchor_texts"] is texts
