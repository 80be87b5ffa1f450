"""Contexts as text: a system's returned texts scored like chunks, its gold placed in them.

A system under test has its own chunking and ids. When a prediction's hits carry their
``text`` (docs/formats.md, "Contexts as text"), :func:`place_texts` turns them into chunks
that every measure reads as it reads ours, and places each gold label in them with the
anchoring of :mod:`ragassay.anchor` — the same code and the same states as the audit:

- a hit whose ``chunk_id`` is a chunk of the evidence is that chunk (ids win: its own text,
  whatever text the hit carries), and so is a hit whose text is a chunk's text word for
  word (normalised; the first such chunk in index order); any other hit is a *returned
  text*, a chunk of its own
  with the id ``<id>@<question_id>`` (``#2@q07`` for the second hit of q07 given without an
  id), in one document of its own (:data:`RETURNED_DOC`; the system's ``doc_id`` is its
  title, its ``page`` its page span); two hits with the same id, or with the same text
  once normalised, are one item, counted where it first stands (the ranking's
  first-occurrence rule); hits keep the system's order, scores tied or not;
- a question is placed only when at least one of its hits is a returned text; its gold
  counts when its labels could be placed in the evidence (the run's gold audit, as for
  every question), so a broken label is never charged to the system;
- each label is then looked for in the question's hits, read as one document in rank
  order (adjacent hits are neighbours): ``ok`` — one hit holds it (its ``support_claim``,
  else all its ``required_terms``); ``also_in`` — several hits hold it, each alone
  (alternatives: finding any finds the label); ``split`` — two consecutive hits hold it
  together; ``terms_only`` — no hit holds the claim, one holds every required term (a
  paraphrase to review); a label whose chunks of the evidence were returned (by id or
  word for word) keeps the state it has there (``split``, ``lost_in_parsing`` …);
  ``unanchored`` — no hit holds it: the label is missed, and stays
  gold at its place in the evidence (a relevant item the ranking does not have), so
  recall, MRR and nDCG count it as missed.

Citations name hits by their ids (``#1`` or the system's own) and are mapped with them; a
citation of an id neither in the evidence nor among the hits is kept, and fails as a
source not in the context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .anchor import anchor_label
from .gold import ANCHOR_STATES, AnchoredEvidence, QuestionGold
from .schema import Chunk, Citation, Document, Prediction, Question, RetrievedChunk
from .store import Index
from .text import fold_text

RETURNED_DOC = "(returned by the system)"
"""The document of every returned text that names no document of the evidence."""


@dataclass
class Placement:
    """What :func:`place_texts` made: the evidence with the returned texts added, the gold
    with each placed question's labels in them, the predictions by those ids, and the
    audit of the placement (``None`` when no prediction returned a text)."""

    store: Index
    gold: dict[str, QuestionGold]
    predictions: dict[str, Prediction]
    audit: dict[str, Any] | None = None
    placed: list[str] = field(default_factory=list)  # question ids, in question order


def _item_id(base: str, question_id: str, taken: Index, used: set[str]) -> str:
    sid = f"{base}@{question_id}"
    n = 1
    while taken.has(sid) or sid in used:  # a chunk file that has such ids already
        n += 1
        sid = f"{base}@{question_id}~{n}"
    return sid


def _items(pred: Prediction, store: Index, used: set[str]
           ) -> tuple[list[RetrievedChunk], dict[str, str], list[Chunk]]:
    """The prediction's hits by placed ids, the map of its ids to them, its new chunks."""
    ids: dict[str, str] = {}
    by_text: dict[str, str] = {}
    hits: list[RetrievedChunk] = []
    chunks: list[Chunk] = []
    for hit in pred.retrieved:
        if store.has(hit.chunk_id):  # ids win
            sid = hit.chunk_id
        elif hit.chunk_id in ids:
            sid = ids[hit.chunk_id]
        else:
            text = hit.text or ""  # check_predictions refused an unknown id without text
            norm = fold_text(text)
            sid = by_text.get(norm, "") or chunk_of_text(store, norm)
            if not sid:
                sid = _item_id(hit.chunk_id, pred.question_id, store, used)
                used.add(sid)
                by_text[norm] = sid
                # one document for all returned texts: never a neighbour of our chunks
                chunks.append(Chunk(chunk_id=sid, doc_id=RETURNED_DOC, title=hit.doc_id or "",
                                    text=text, seq=len(chunks) + 1,
                                    page_span=(hit.page, hit.page) if hit.page else None))
        ids.setdefault(hit.chunk_id, sid)
        hits.append(RetrievedChunk(chunk_id=sid, score=hit.score))
    return hits, ids, chunks


def chunk_of_text(store: Index, normalized: str) -> str:
    """The id of the evidence's first chunk (index order) whose text, normalised, is
    ``normalized``; ``""`` when none is. A returned text that is one of our chunks word for
    word is that chunk, as if the system had named it."""
    by_text: dict[str, str] | None = store.cache.get("chunk_by_normalized_text")
    if by_text is None:
        by_text = {}
        for c in store.chunks:
            by_text.setdefault(fold_text(c.text), c.chunk_id)
        store.cache["chunk_by_normalized_text"] = by_text
    return by_text.get(normalized, "")


def _mini(hits: Sequence[RetrievedChunk], lookup: Mapping[str, Chunk]) -> Index:
    """The question's hits as one document in rank order, each item once."""
    order = list(dict.fromkeys(h.chunk_id for h in hits))
    # a space after each text: two neighbours join as "… lasts" + " 2 years", not "lasts2"
    # (normalising strips it from a text read alone)
    chunks = [Chunk(chunk_id=c, doc_id=RETURNED_DOC, text=lookup[c].text + " ", seq=i)
              for i, c in enumerate(order, 1)]
    return Index(Path("(returned texts)"), {}, [Document(doc_id=RETURNED_DOC)], chunks,
                 np.zeros((len(chunks), 0), np.float32))


def place_label(ev: AnchoredEvidence, mini: Index) -> AnchoredEvidence:
    """``ev``'s label placed in the hits of ``mini`` (:func:`_mini`), by
    :func:`ragassay.anchor.anchor_label`: first to find the hits that hold it, then again
    at the first of them, so that the state says how it holds there (``ok``, ``also_in``,
    ``split``, ``terms_only``); ``unanchored`` with no chunk when no hit holds it."""
    probe = ev.label.model_copy(update={"doc_id": RETURNED_DOC})
    found = anchor_label(probe, mini)
    if found.status == "unanchored" or not found.chunk_ids:
        return AnchoredEvidence(ev.label, "unanchored", [], "in none of the returned texts")
    if found.status not in ("ok", "also_in", "split"):
        found = anchor_label(probe.model_copy(update={"chunk_id": found.chunk_ids[0]}), mini)
    return AnchoredEvidence(ev.label, found.status, found.chunk_ids, found.reason,
                            split=found.split)


def place_texts(questions: Sequence[Question], gold: Mapping[str, QuestionGold],
                store: Index, predictions: Mapping[str, Prediction]) -> Placement:
    """Place every prediction that returned texts (see the module docstring); the others,
    and everything when none did, come back as they are."""
    if not any(p.has_texts for p in predictions.values()):
        return Placement(store, dict(gold), dict(predictions))
    used: set[str] = set()
    new_chunks: list[Chunk] = []
    preds = dict(predictions)
    placed_gold = dict(gold)
    states = dict.fromkeys(ANCHOR_STATES, 0)
    labels: list[dict[str, Any]] = []
    placed: list[str] = []
    lookup: dict[str, Chunk] = {}
    for q in questions:
        pred = predictions.get(q.question_id)
        if pred is None or all(store.has(h.chunk_id) for h in pred.retrieved):
            continue
        hits, ids, chunks = _items(pred, store, used)
        new_chunks += chunks
        lookup.update({c.chunk_id: c for c in chunks})
        for h in hits:
            if h.chunk_id not in lookup:
                lookup[h.chunk_id] = store.chunk(h.chunk_id)
        cites = [Citation(chunk_id=ids.get(c.chunk_id, c.chunk_id), page=c.page, raw=c.raw)
                 for c in pred.answer.citations]
        preds[q.question_id] = pred.model_copy(update={
            "retrieved": hits,
            "answer": pred.answer.model_copy(update={"citations": cites})})
        placed.append(q.question_id)
        qgold = gold.get(q.question_id)
        if qgold is None or not qgold.usable:
            continue  # its gold does not count, for the system as for any other
        mini = _mini(hits, lookup)
        evidence = []
        for i, ev in enumerate(qgold.evidence):
            where = place_label(ev, mini)
            if not where.chunk_ids and any(mini.has(c) for c in ev.chunk_ids):
                # returned as the evidence's own chunks: placed as the evidence has it
                where = AnchoredEvidence(ev.label, ev.status, ev.chunk_ids, "returned as "
                                         "the evidence's own chunks", split=ev.split)
            states[where.status] += 1
            labels.append({**where.report(q.question_id), "label": i})
            # missed: stays gold where the evidence has it, a relevant item not retrieved
            evidence.append(where if where.chunk_ids else ev)
        placed_gold[q.question_id] = QuestionGold(q.question_id, evidence, qgold.has_record)
    docs = store.documents + [Document(doc_id=RETURNED_DOC, format="returned")]
    chunks_all = store.chunks + new_chunks
    extended = Index(store.path, store.meta, docs, chunks_all,
                     np.zeros((len(chunks_all), 0), np.float32))
    audit = {"questions": len(placed), "labels": sum(states.values()), "states": states,
             "placements": labels}
    return Placement(extended, placed_gold, preds, audit, placed)
