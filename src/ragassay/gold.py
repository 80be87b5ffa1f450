# Over 400 lines: reading, anchoring, audit and fix share the anchoring look-ups; to split.
"""Questions and gold evidence: reading, cross-checks, and re-anchoring stale labels.

Gold labels name chunk ids, and chunk ids change whenever documents are re-chunked. A label
that carries its `support_claim` (or `required_terms`) can be found again: each label is
checked against the index and, when its chunk is gone or no longer holds the claim, moved to
the chunk(s) that do. Every label gets a state with its evidence (:func:`anchor_label`);
a label that cannot be placed fails its question as an evaluation failure instead of
silently scoring it. :func:`gold_audit` reports the states (``ragassay gold audit``, and
every run's record); :func:`label_fixes` and :func:`fixed_gold_text` write repaired labels
(``ragassay gold fix``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from .errors import InputError
from .jsonio import line_of, read_jsonl
from .schema import Chunk, GoldEvidence, GoldRecord, Question
from .store import Index
from .text import fold_text, squash, term_pattern

AnchorStatus = Literal["ok", "also_in", "reanchored", "terms_only", "split", "lost_in_parsing",
                       "unanchored"]
ANCHOR_STATES: tuple[str, ...] = ("ok", "also_in", "reanchored", "terms_only", "split",
                                  "lost_in_parsing", "unanchored")
"""Every state a label can be in, in the order anchoring tries them (docs/formats.md)."""


@dataclass
class AnchoredEvidence:
    """One gold label after checking it against the index: its state and the evidence for it.

    ``chunk_ids`` are where the evidence is now: the chunks that each hold it alone
    (alternatives: a hit on any of them finds the label), or, for a ``split`` claim, the
    adjacent chunks (two or more) that hold it together; none when it is nowhere.
    ``candidates`` are the other chunks worth a look (holders in other documents, the
    nearest chunks of an unanchored label), with ``similarity`` beside them when they only
    resemble the label.
    """

    label: GoldEvidence
    status: AnchorStatus
    chunk_ids: list[str]
    reason: str = ""
    candidates: list[str] = field(default_factory=list)
    split: bool = False  # the claim is held only by adjacent chunks together
    similarity: list[float] = field(default_factory=list)  # one per candidate, or none

    @property
    def alternatives(self) -> bool:
        """True when the label has several chunks and each holds it alone."""
        return not self.split and len(self.chunk_ids) > 1

    def report(self, question_id: str) -> dict[str, object]:
        return {
            "question_id": question_id,
            "labelled_chunk_id": self.label.chunk_id,
            "status": self.status,
            "chunk_ids": self.chunk_ids,
            "reason": self.reason,
            "candidates": self.candidates,
            "similarity": self.similarity,
            "split": self.split,
        }


@dataclass
class QuestionGold:
    """The gold of one question, anchored: relevant chunk ids with grades."""

    question_id: str
    evidence: list[AnchoredEvidence]
    has_record: bool = True

    @property
    def grades(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for ev in self.evidence:
            for cid in ev.chunk_ids:
                out[cid] = max(out.get(cid, 0), ev.label.grade)
        return out

    @property
    def alternatives(self) -> dict[str, str]:
        """Gold chunk → the gold chunk it stands for, for every chunk that is one of several
        holders of a relevant label (grade >= 1; ``also_in``, a ``reanchored`` claim with
        several holders): the chunks of a label, and of labels that share a chunk, are one
        relevant item, counted under the first of them
        (:func:`ragassay.metrics.retrieval.retrieval_scores`)."""
        order: dict[str, int] = {}
        for ev in self.evidence:
            for cid in ev.chunk_ids:
                order.setdefault(cid, len(order))
        parent = {c: c for c in order}

        def root(c: str) -> str:
            while parent[c] != c:
                c = parent[c]
            return c
        for ev in self.evidence:
            if ev.alternatives and ev.label.grade >= 1:  # a judged-non-relevant label: apart
                for cid in ev.chunk_ids[1:]:
                    a, b = root(ev.chunk_ids[0]), root(cid)
                    if a != b:  # the chunk seen first stands for the group
                        lo, hi = sorted((a, b), key=order.__getitem__)
                        parent[hi] = lo
        return {c: r for c in order if (r := root(c)) != c}

    @property
    def usable(self) -> bool:
        """True when every label could be placed (its question can be scored)."""
        return bool(self.evidence) and all(ev.chunk_ids for ev in self.evidence) and not any(
            ev.status == "unanchored" for ev in self.evidence
        )


    def problem(self) -> str | None:
        """Why an answerable question's gold does not count (``None`` when it does): the
        text after ``q07: `` in :func:`gold_warnings`."""
        if self.usable:
            return None
        if not self.has_record:
            return "no gold record"
        if not self.evidence:
            return "gold_evidence is []"
        lost = [ev for ev in self.evidence if not ev.chunk_ids or ev.status == "unanchored"]
        if len(lost) == 1:
            why = f" ({lost[0].reason})" if lost[0].reason else ""
            return f"gold label {lost[0].label.chunk_id} is in no chunk{why}"
        ids = ", ".join(ev.label.chunk_id for ev in lost)
        why = ", ".join(f"{ev.label.chunk_id}: {ev.reason}" for ev in lost if ev.reason)
        return f"gold labels {ids} are in no chunk" + (f" ({why})" if why else "")


def gold_warnings(questions: Sequence[Question], gold: dict[str, QuestionGold]) -> list[str]:
    """One line per answerable question whose gold changes a denominator, in question
    order: no gold record, ``gold_evidence: []``, or a label that names an unknown chunk
    (or one that no longer holds its claim) and could not be re-anchored, e.g.
    ``q07: gold label daeyang::chunk-099 is in no chunk (chunk id not in the index; no chunk
    holds the support_claim); the question is not measured for retrieval``.

    ``gold`` is :func:`anchor_gold`'s result. Unanswerable questions have no gold to miss.
    """
    out: list[str] = []
    for q in questions:
        qgold = gold.get(q.question_id)
        if not q.answerable:
            continue
        problem = "no gold record" if qgold is None else qgold.problem()
        if problem is not None:
            out.append(f"{q.question_id}: {problem}; the question is not measured for "
                       "retrieval")
    return out


def read_questions(path: str | Path, *, lenient: bool = False,
                   warnings: list[str] | None = None) -> list[Question]:
    """The questions of a JSONL file (file:line:field errors); a file without any question
    is an error too, since an evaluation over nothing could only pass. ``lenient``: unknown
    keys become ``warnings`` instead of errors (:func:`ragassay.jsonio.parse_record`)."""
    questions = read_jsonl(path, Question, key="question_id", lenient=lenient,
                           warnings=warnings)
    if not questions:
        raise InputError(path, "holds no questions")
    return questions


def read_gold(path: str | Path, *, lenient: bool = False,
              warnings: list[str] | None = None) -> list[GoldRecord]:
    """The gold evidence records of a JSONL file (file:line:field errors)."""
    return read_jsonl(path, GoldRecord, key="question_id", lenient=lenient, warnings=warnings)


def load_gold(path: str | Path, questions: Sequence[Question], *, lenient: bool = False,
              warnings: list[str] | None = None) -> dict[str, GoldRecord]:
    """Read gold evidence and check it against the questions (file:line errors)."""
    return check_gold(read_gold(path, lenient=lenient, warnings=warnings), questions, path)


def check_gold(records: Iterable[GoldRecord], questions: Sequence[Question],
               source: str | Path = "gold") -> dict[str, GoldRecord]:
    """Gold records by question id; gold for an unknown question, a duplicate, or evidence
    for an unanswerable question is an :class:`InputError` at ``source`` (and line)."""
    by_id = {q.question_id: q for q in questions}
    out: dict[str, GoldRecord] = {}
    for rec in records:
        q = by_id.get(rec.question_id)
        if q is None:
            raise InputError(source, f"gold for unknown question {rec.question_id!r} "
                             "(not in the questions file)", line=line_of(rec), field="question_id")
        if rec.question_id in out:
            raise InputError(source, f"duplicate question_id {rec.question_id!r}",
                             line=line_of(rec), field="question_id")
        if not q.answerable and rec.gold_evidence:
            raise InputError(source, f"question {rec.question_id!r} is unanswerable but has "
                             "gold evidence; use []", line=line_of(rec), field="gold_evidence")
        out[rec.question_id] = rec
    return out


class _Texts:
    """Texts searched for needles (one per row), with look-ups built on first use: each
    space-separated word → the rows holding it; the distinct words sorted, and sorted by
    their reversed spelling, to find the words beginning or ending with a piece; and all
    texts joined by NUL with each row's start offset. :meth:`rows_with` finds the rows
    holding a needle as a substring without reading every text."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self._words: dict[str, list[int]] | None = None
        self._affixes: tuple[_Affixes, _Affixes] | None = None
        self._joined: tuple[str, list[int]] | None = None

    def words(self) -> dict[str, list[int]]:
        if self._words is None:
            words: dict[str, list[int]] = {}
            for row, text in enumerate(self.texts):
                for w in set(text.split(" ")):
                    words.setdefault(w, []).append(row)
            self._words = words
        return self._words

    def affixes(self) -> tuple[_Affixes, _Affixes]:
        """The look-ups of words by their beginning and by their end."""
        if self._affixes is None:
            words = self.words()
            self._affixes = (_Affixes(words), _Affixes(words, reverse=True))
        return self._affixes

    def joined(self) -> tuple[str, list[int]]:
        if self._joined is None:
            starts, at = [], 0
            for text in self.texts:
                starts.append(at)
                at += len(text) + 1
            self._joined = ("\0".join(self.texts), starts)
        return self._joined

    def rows_with(self, needle: str) -> list[int]:
        """The rows whose text holds ``needle``, ascending.

        A needle of two or more words: a text holding it holds each inner word as a whole
        word, a word ending with the needle's first word and one beginning with its last
        (texts and needle have single spaces), so only the rows meeting the most selective
        of these, then the others while they stay selective, are checked. A single word:
        every occurrence in the joined text, one per row. A needle holding the separator
        (or none at all, or only spaces): every row checked.
        """
        if not needle or "\0" in needle:
            return [r for r, t in enumerate(self.texts) if needle in t]
        parts = needle.split(" ")
        if len(parts) == 1:
            return self._rows_in_joined(needle)
        words = self.words()
        starts_with, ends_with = self.affixes()
        # (how many rows at most, the rows): a word's exact postings, or the postings of
        # every word ending with the first piece / beginning with the last one.
        sets: list[tuple[int, Callable[[], Iterable[int]]]] = [
            (len(words[w]), partial(words.__getitem__, w)) if w in words else (0, list)
            for w in set(parts[1:-1])]  # a word no text has: no row
        for affix, piece in ((ends_with, parts[0]), (starts_with, parts[-1])):
            if piece:  # an empty piece (a needle starting or ending with a space) says nothing
                sets.append((affix.size(piece), partial(affix.rows, piece)))
        if not sets:
            return [r for r, t in enumerate(self.texts) if needle in t]
        sets.sort(key=lambda x: x[0])
        rows = set(sets[0][1]())
        for size, getter in sets[1:]:
            if len(rows) * 8 < size:  # reading the few texts costs less than this
                break
            rows.intersection_update(getter())
        return sorted(r for r in rows if needle in self.texts[r])

    def _rows_in_joined(self, needle: str) -> list[int]:
        text, starts = self.joined()
        out: list[int] = []
        at = text.find(needle)
        while at >= 0:
            row = bisect_right(starts, at) - 1
            out.append(row)
            if row + 1 >= len(starts):
                break
            at = text.find(needle, starts[row + 1])
        return out

    def nearest(self, needle: str, n: int) -> list[tuple[int, float]]:
        """The ``n`` rows most like ``needle`` with their similarity, best first (ties in
        row order); rows sharing no word with it are never listed.

        similarity = |bigrams(needle) ∩ bigrams(text)| / |bigrams(needle)|, the share of the
        needle's character bigrams (spaces dropped) found in the text, rounded to 3 places:
        1.0 when every piece of a claim stands somewhere in the chunk, so a reworded or
        re-numbered claim scores high. Only the rows sharing the most words with the needle
        are scored (at most ``50·n``), and words held by more than a tenth of the rows are
        not counted unless the needle has no other, so a label costs its rare words'
        postings, not every row.
        """
        words = self.words()
        needle_words = [w for w in set(needle.split(" ")) if w in words]
        common = max(len(self.texts) // 10, 10)
        rare = [w for w in needle_words if len(words[w]) <= common] or needle_words
        hits: dict[int, int] = {}
        for w in rare:
            for row in words[w]:
                hits[row] = hits.get(row, 0) + 1
        if not hits:
            return []
        grams = _bigrams(needle)
        if not grams:
            return []
        pool = sorted(hits, key=lambda r: (-hits[r], r))[: 50 * n]
        scored = []
        for r in pool:
            squeezed = self.texts[r].replace(" ", "")
            scored.append((r, round(sum(g in squeezed for g in grams) / len(grams), 3)))
        return sorted(scored, key=lambda x: (-x[1], x[0]))[:n]


def _bigrams(text: str) -> set[str]:
    squeezed = text.replace(" ", "")
    return {squeezed[i:i + 2] for i in range(len(squeezed) - 1)} or ({squeezed} if squeezed
                                                                       else set())


class _Affixes:
    """The distinct words of some texts sorted by their spelling (or, ``reverse``, by their
    reversed spelling), so that the words beginning (ending) with a piece are one range,
    found by bisection, with the running count of their rows to size it without reading it."""

    def __init__(self, postings: dict[str, list[int]], *, reverse: bool = False) -> None:
        self.reverse, self.postings = reverse, postings
        keyed = sorted((w[::-1] if reverse else w, w) for w in postings)
        self.keys = [k for k, _ in keyed]
        self.words = [w for _, w in keyed]
        self.counts = [0]
        for w in self.words:
            self.counts.append(self.counts[-1] + len(postings[w]))

    def _range(self, piece: str) -> tuple[int, int]:
        key = piece[::-1] if self.reverse else piece
        lo = bisect_left(self.keys, key)
        # The first string after every one beginning with ``key``: its last character
        # raised by one (characters at the top of Unicode dropped first).
        top = key.rstrip("\U0010ffff")
        if not top:
            return lo, len(self.keys)
        return lo, bisect_left(self.keys, top[:-1] + chr(ord(top[-1]) + 1), lo)

    def size(self, piece: str) -> int:
        """An upper bound of the rows holding a word with this beginning (end)."""
        lo, hi = self._range(piece)
        return self.counts[hi] - self.counts[lo]

    def rows(self, piece: str) -> set[int]:
        lo, hi = self._range(piece)
        return {r for w in self.words[lo:hi] for r in self.postings[w]}


class _AnchorTexts:
    """What anchoring searches in one store, built once per store (``Index.cache``): every
    chunk's text normalised (for claims) and squashed (for required terms), and the same for
    the joined text of each pair of adjacent chunks, in document-then-``seq`` order."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.doc_rank = {d.doc_id: i for i, d in enumerate(index.documents)}
        self._chunks: dict[str, _Texts] = {}
        self._pairs: list[tuple[str, str, str]] | None = None  # (doc_id, chunk a, chunk b)
        self._joined: list[str] = []
        self._pair_texts: dict[str, _Texts] = {}

    @classmethod
    def of(cls, index: Index) -> _AnchorTexts:
        texts = index.cache.get("gold.anchor_texts")
        if not isinstance(texts, cls) or texts.index is not index:
            texts = index.cache["gold.anchor_texts"] = cls(index)
        return texts

    @staticmethod
    def form_of(by: str) -> Callable[[str], str]:
        return fold_text if by == "support_claim" else squash

    def chunks(self, by: str) -> _Texts:
        if by not in self._chunks:
            form = self.form_of(by)
            self._chunks[by] = _Texts([form(c.text) for c in self.index.chunks])
        return self._chunks[by]

    def pairs(self) -> list[tuple[str, str, str]]:
        if self._pairs is None:
            self._pairs, self._joined = [], []
            for doc_id in dict.fromkeys(c.doc_id for c in self.index.chunks):
                for a, b, joined in _adjacent_pairs(self.index, doc_id):
                    self._pairs.append((doc_id, a, b))
                    self._joined.append(joined)
        return self._pairs

    def pair_texts(self, by: str) -> _Texts:
        if by not in self._pair_texts:
            self.pairs()
            form = self.form_of(by)
            self._pair_texts[by] = _Texts([form(t) for t in self._joined])
        return self._pair_texts[by]


def _needle(label: GoldEvidence, by: str) -> tuple[str, Callable[[str], bool]]:
    """What a label's text must hold, by its ``support_claim`` or its ``required_terms``: the
    literal every holding text contains, and the exact test on a text in that form
    (normalised for a claim, squashed for terms)."""
    if by == "support_claim" and label.support_claim:
        claim = fold_text(label.support_claim)
        return claim, lambda text: claim in text
    patterns = [term_pattern(t) for t in label.required_terms]
    if any(p is None for p in patterns):  # a blank term never matches
        return "\0", lambda text: False
    literals = [squash(t) for t in label.required_terms]

    def holds(text: str) -> bool:
        return all(p is not None and p.search(text) is not None for p in patterns)
    return max(literals, key=len), holds


def _adjacent_pairs(index: Index, doc_id: str) -> list[tuple[str, str, str]]:
    """(chunk_a, chunk_b, their joined text) for neighbouring chunks of a document."""
    chunks = index.chunks_of(doc_id)
    tails = chunk_tails(chunks)
    return [(a.chunk_id, b.chunk_id, a.text + tail)
            for a, b, tail in zip(chunks, chunks[1:], tails[1:], strict=False)]


NEAREST = 3  # candidates an unanchored label lists


def anchor_label(label: GoldEvidence, index: Index) -> AnchoredEvidence:
    """Place one gold label in the index: the first of these states that applies.

    A label *holds* in a text when its ``support_claim`` (normalised) stands in the text
    (normalised); without a claim, when the text holds every ``required_terms`` item.

    - ``ok``: the labelled chunk holds it, and (by claim) no other chunk of its document.
    - ``also_in``: the labelled chunk holds the claim and so do further chunks of its
      document (overlapping windows): all of them are gold, as alternatives.
    - ``reanchored``: the labelled chunk is gone or does not hold it; the chunks of one
      document that do become its gold (the label's ``doc_id`` first, then index order;
      by ``required_terms``, the first of them only). Also a run of adjacent chunks that
      hold it together when the labelled chunk is not one of them.
    - ``split``: no chunk holds it alone, but a run of adjacent chunks holding the labelled
      chunk does: the fewest such chunks (two, three, …; by ``required_terms``, two).

    - ``terms_only``: the claim stands in no chunk or run, but a chunk of the labelled
      document holds every ``required_terms`` item (the labelled chunk first, else the first
      in ``seq`` order): anchored there, flagged as a paraphrase to review.
    - ``lost_in_parsing``: nothing holds it and the loader dropped content of the labelled
      document (the labelled chunk is kept if it exists).
    - ``unanchored``: none of these; the :data:`NEAREST` chunks most like the label are its
      ``candidates``, with their ``similarity`` (:meth:`_Texts.nearest`).

    The labelled document (its chunk's, else its ``doc_id``) is searched first, for single
    holders and then for runs; another document's chunks, alone then in pairs, only when it
    has neither: a claim across two chunks of its paragraph stays there even when another
    article repeats it in one chunk.

    Holders in other documents than the anchored one are ``candidates``, never gold. The
    search goes through look-ups built once per store (:class:`_AnchorTexts`), so a label
    costs the chunks that could hold it, not every chunk; the result is that of checking
    every chunk in that order (``tests/unit/test_anchor_index.py``).
    """
    if not (label.support_claim or label.required_terms):
        if index.has(label.chunk_id):
            return AnchoredEvidence(label, "ok", [label.chunk_id])
        return AnchoredEvidence(label, "unanchored", [], "chunk id not in the index; the "
                                "label has no support_claim or required_terms to re-anchor by")
    by = "support_claim" if label.support_claim else "required_terms"
    texts = _AnchorTexts.of(index)
    needle, holds = _needle(label, by)
    if index.has(label.chunk_id) and holds(texts.chunks(by).texts[index.position(
            label.chunk_id)]):  # the labelled chunk holds it: its document is the place
        first: str | None = index.chunk(label.chunk_id).doc_id
    else:
        first = label.doc_id if label.doc_id and index.has_document(label.doc_id) else None

    def order(doc_id: str) -> int | None:  # the labelled document first, then index order
        return -1 if doc_id == first else texts.doc_rank.get(doc_id)

    here, elsewhere = _holders(label, by, index, texts, order)
    where = "" if not elsewhere else f"; it also stands in {len(elsewhere)} chunk(s) of other " \
        "documents (candidates, not gold)"
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
    here_doc = index.chunk(here[0]).doc_id if here else None
    if first is not None and here_doc != first:
        # The labelled document holds it in no single chunk: across its adjacent chunks
        # before any chunk of another document (those are about another document).
        run = _run_in(first, label, by, index, texts)
        if run:
            return _split(label, run, by, why, here + elsewhere)
    if here:
        gold = here if by == "support_claim" else here[:1]
        return AnchoredEvidence(label, "reanchored", gold, f"{why}; re-anchored by {by}{where}",
                                here[len(gold):] + elsewhere)
    pair_texts = texts.pair_texts(by)
    pairs = texts.pairs()
    split = [(o, r) for r in pair_texts.rows_with(needle)
             if (o := order(pairs[r][0])) is not None and pairs[r][0] != first
             and holds(pair_texts.texts[r])]
    if split:
        _, a, b = pairs[min(split)[1]]
        return _split(label, [a, b], by, why, [])
    if by == "support_claim" and label.required_terms:
        by_terms = _term_holders(label, index, texts)
        if by_terms:
            at = label.chunk_id if label.chunk_id in by_terms else by_terms[0]
            return AnchoredEvidence(
                label, "terms_only", [at], "the support_claim stands in no chunk and no run "
                f"of adjacent chunks, but every required_terms item stands in {at}: the "
                "claim is worded unlike the text (a paraphrase?); review the claim",
                [c for c in by_terms if c != at])
    known_doc = bool(label.doc_id) and index.has_document(label.doc_id)
    doc = index.document(label.doc_id) if known_doc else None
    if doc is not None and any(doc.dropped.values()):
        dropped = ", ".join(f"{n} {kind}" for kind, n in sorted(doc.dropped.items()) if n)
        kept = [label.chunk_id] if index.has(label.chunk_id) else []
        return AnchoredEvidence(label, "lost_in_parsing", kept,
                                f"{by} is in no chunk; the loader dropped {dropped} of "
                                f"{doc.doc_id}")
    near = texts.chunks("support_claim").nearest(
        fold_text(label.support_claim or " ".join(label.required_terms)), NEAREST)
    return AnchoredEvidence(label, "unanchored", [], f"{why}; no chunk holds the {by}"
                            + ("; the nearest chunks are its candidates" if near else ""),
                            [index.chunks[r].chunk_id for r, _ in near],
                            similarity=[sim for _, sim in near])


def _split(label: GoldEvidence, run: list[str], by: str, why: str,
           elsewhere: list[str]) -> AnchoredEvidence:
    """The label held by ``run``, adjacent chunks of one document together: ``split`` when
    the labelled chunk is one of them, else ``reanchored`` onto them."""
    n = "two" if len(run) == 2 else str(len(run))
    held = f"the {by} spans {n} adjacent chunks, no chunk holds it alone"
    where = "" if not elsewhere else (f"; {len(elsewhere)} chunk(s) of other documents hold "
                                      "it alone (candidates, not gold)")
    if label.chunk_id in run:
        return AnchoredEvidence(label, "split", run, held + where, run + elsewhere, split=True)
    return AnchoredEvidence(label, "reanchored", run, f"{why}; {held}{where}", run + elsewhere,
                            split=True)


def chunk_tails(chunks: Sequence[Chunk]) -> list[str]:
    """Each chunk's text without the part it shares with the chunk before it (by their
    ``char_span``; the whole text when a span is unknown): the first chunk's text, then
    what each next one adds. Joined, consecutive chunks read as the document does."""
    out = []
    for prev, c in zip([None, *chunks], chunks, strict=False):
        tail = c.text
        if prev is not None and prev.char_span and c.char_span:
            tail = c.text[max(prev.char_span[1] - c.char_span[0], 0):]
        out.append(tail)
    return out


def _run_in(doc_id: str, label: GoldEvidence, by: str, index: Index,
            texts: _AnchorTexts) -> list[str]:
    """The fewest adjacent chunks of ``doc_id`` that hold the label together, the first such
    run in ``seq`` order (two chunks, then three, …; by ``required_terms``, two only); []
    when none. A run's inner chunks lie inside the claim, so a run is read only while
    they fit in it: a short claim costs one pass over the document's pairs."""
    needle, holds = _needle(label, by)
    pairs, pair_texts = texts.pairs(), texts.pair_texts(by)
    two = [r for r in pair_texts.rows_with(needle)
           if pairs[r][0] == doc_id and holds(pair_texts.texts[r])]
    if two:
        return [pairs[min(two)][1], pairs[min(two)][2]]
    if by != "support_claim":
        return []
    chunks = index.chunks_of(doc_id)
    tails = chunk_tails(chunks)
    form = texts.form_of(by)
    inner = [len(form(t)) for t in tails]
    for size in range(3, len(chunks) + 1):
        read = False
        for i in range(len(chunks) - size + 1):
            if sum(inner[i + 1:i + size - 1]) > len(needle) + 2 * size:
                continue  # the inner chunks alone are longer than the claim
            read = True
            if holds(form(chunks[i].text + "".join(tails[i + 1:i + size]))):
                return [c.chunk_id for c in chunks[i:i + size]]
        if not read:
            break
    return []


def _term_holders(label: GoldEvidence, index: Index, texts: _AnchorTexts) -> list[str]:
    """The chunks of the labelled document (its ``doc_id`` if the index has it, else the
    labelled chunk's) that hold every ``required_terms`` item, in ``seq`` order. Terms are
    weak evidence, so a paraphrased claim is looked for only where the label points."""
    if label.doc_id and index.has_document(label.doc_id):
        doc_id = label.doc_id
    elif index.has(label.chunk_id):
        doc_id = index.chunk(label.chunk_id).doc_id
    else:
        return []
    _, holds = _needle(label, "required_terms")
    squashed = texts.chunks("required_terms").texts
    return [c.chunk_id for c in index.chunks_of(doc_id)
            if holds(squashed[index.position(c.chunk_id)])]


def _holders(label: GoldEvidence, by: str, index: Index, texts: _AnchorTexts,
             order: Callable[[str], int | None]) -> tuple[list[str], list[str]]:
    """The chunks holding the label by ``by``: those of the first document that has one
    (``order``: the labelled document first, then index order), in ``seq`` order, and those
    of the other documents, in that order."""
    needle, holds = _needle(label, by)
    chunk_texts = texts.chunks(by)
    found = {r for r in chunk_texts.rows_with(needle) if holds(chunk_texts.texts[r])}
    docs = sorted((o, d) for d in {index.chunks[r].doc_id for r in found}
                  if (o := order(d)) is not None)
    by_doc = [[c.chunk_id for c in index.chunks_of(d) if index.position(c.chunk_id) in found]
              for _, d in docs]
    return (by_doc[0], [c for ids in by_doc[1:] for c in ids]) if by_doc else ([], [])


def anchor_gold(questions: Sequence[Question], gold: dict[str, GoldRecord],
                index: Index) -> dict[str, QuestionGold]:
    """Anchor the gold of every question (unanswerable questions get an empty gold)."""
    out: dict[str, QuestionGold] = {}
    for q in questions:
        rec = gold.get(q.question_id)
        evidence = [anchor_label(lbl, index) for lbl in rec.gold_evidence] if rec else []
        out[q.question_id] = QuestionGold(q.question_id, evidence, has_record=rec is not None)
    return out


# --- audit and repair --------------------------------------------------------------------


def gold_audit(questions: Sequence[Question], gold: dict[str, QuestionGold]
               ) -> dict[str, Any]:
    """The state of every gold label, as ``ragassay gold audit`` reports it and a run
    records it (``metrics.json`` → ``gold``):

    - ``labels``: the number of labels; ``states``: state → labels in it (every state of
      :data:`ANCHOR_STATES`, 0 where none);
    - ``unusable``: ``[{question_id, problem}]``, the answerable questions whose gold does
      not count (:meth:`QuestionGold.problem`), in question order;
    - ``reanchored``: every label not ``ok``, and ``ok``: the others, each as
      :meth:`AnchoredEvidence.report` with ``label``, its position in the record, in
      question id then label order (a shuffled questions file records the same lists).

    ``gold`` is :func:`anchor_gold`'s result.
    """
    states = dict.fromkeys(ANCHOR_STATES, 0)
    moved: list[dict[str, object]] = []
    ok: list[dict[str, object]] = []
    unusable: list[dict[str, str]] = []
    for q in questions:
        qgold = gold.get(q.question_id)
        if qgold is None:
            continue
        for i, ev in enumerate(qgold.evidence):
            states[ev.status] += 1
            (ok if ev.status == "ok" else moved).append({**ev.report(q.question_id), "label": i})
        problem = qgold.problem() if q.answerable else None
        if problem is not None:
            unusable.append({"question_id": q.question_id, "problem": problem})
    def by_id(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return sorted(rows, key=lambda r: (str(r["question_id"]), int(str(r["label"]))))

    return {"labels": sum(states.values()), "states": states, "unusable": unusable,
            "reanchored": by_id(moved), "ok": by_id(ok)}


@dataclass(frozen=True)
class LabelFix:
    """One label ``gold fix`` moves: question, position in its record, the old and new chunk."""

    question_id: str
    label: int
    status: str
    chunk_id: str
    new_chunk_id: str
    reason: str

    def line(self) -> str:
        return (f"{self.question_id} label {self.label}: {self.chunk_id} → {self.new_chunk_id} "
                f"({self.status}: {self.reason})")


def label_fixes(questions: Sequence[Question], gold: dict[str, QuestionGold]) -> list[LabelFix]:
    """The labels whose ``chunk_id`` ``gold fix`` changes, in question then label order: a
    ``reanchored`` label moves to its first chunk (the first of a pair for a claim now split
    across two chunks, so it reads ``split`` afterwards), a ``terms_only`` label to the chunk
    holding its terms. Every other state keeps its chunk: ``ok``, ``also_in`` and ``split``
    labels are right, and ``lost_in_parsing`` / ``unanchored`` ones need a person (the audit
    lists their candidates). Fixing a fixed file changes nothing: each moved label holds in
    its new chunk, which is the first place anchoring looks.
    """
    out = []
    for q in questions:
        qgold = gold.get(q.question_id)
        for i, ev in enumerate(qgold.evidence if qgold else []):
            if ev.status in ("reanchored", "terms_only") and ev.chunk_ids[0] != ev.label.chunk_id:
                out.append(LabelFix(q.question_id, i, ev.status, ev.label.chunk_id,
                                    ev.chunk_ids[0], ev.reason))
    return out


def fixed_gold_text(path: str | Path, fixes: Sequence[LabelFix], index: Index) -> str:
    """The text of the gold file at ``path`` with ``fixes`` applied: each moved label gets
    its new ``chunk_id`` and that chunk's ``doc_id``, and keeps the id it had in
    ``previous_chunk_id`` (the first one, when it was moved before). Lines without a fix are
    kept byte for byte; a changed line is written as compact JSON in its key order."""
    import json

    by_line: dict[str, list[LabelFix]] = {}
    for fix in fixes:
        by_line.setdefault(fix.question_id, []).append(fix)
    content = Path(path).read_text(encoding="utf-8-sig")
    lines = [line + "\n" for line in content.split("\n")]  # JSON strings may hold U+2028
    lines[-1] = lines[-1][:-1]
    out = []
    for text in lines:
        if not text.strip(" \t\r\n"):
            out.append(text)
            continue
        row = json.loads(text)
        todo = by_line.get(str(row.get("question_id"))) if isinstance(row, dict) else None
        if not todo:
            out.append(text)
            continue
        for fix in todo:
            label = row["gold_evidence"][fix.label]
            label.setdefault("previous_chunk_id", fix.chunk_id)
            label["chunk_id"] = fix.new_chunk_id
            label["doc_id"] = index.chunk(fix.new_chunk_id).doc_id
        ending = text[len(text.rstrip("\r\n")):] or "\n"
        out.append(json.dumps(row, ensure_ascii=False) + ending)
    return "".join(out)


def run_gold(questions: Sequence[Question], gold: dict[str, QuestionGold]) -> dict[str, Any]:
    """What a run records of its gold (``metrics.json`` → ``gold``): :func:`gold_audit`
    without the list of ``ok`` labels (their number is in ``states``)."""
    audit = gold_audit(questions, gold)
    del audit["ok"]
    return audit
