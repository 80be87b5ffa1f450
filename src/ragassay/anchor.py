"""Anchoring gold labels in an index: each label checked against the chunks and, when its
chunk is gone or no longer holds its ``support_claim`` (or ``required_terms``), moved to the
chunk(s) that do (:func:`anchor_label`, the states of :data:`ragassay.gold.ANCHOR_STATES`);
:func:`anchor_gold` anchors every question's gold."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .gold import AnchoredEvidence, QuestionGold
from .schema import Chunk, GoldEvidence, GoldRecord, Question
from .store import Index
from .substrings import SubstringIndex
from .text import fold_text, squash, term_pattern


class _AnchorTexts:
    """What anchoring searches in one store, built once per store (``Index.cache``): every
    chunk's text normalised (for claims) and squashed (for required terms), and the same for
    the joined text of each pair of adjacent chunks, in document-then-``seq`` order."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.doc_rank = {d.doc_id: i for i, d in enumerate(index.documents)}
        self._chunks: dict[str, SubstringIndex] = {}
        self._pairs: list[tuple[str, str, str]] | None = None  # (doc_id, chunk a, chunk b)
        self._joined: list[str] = []
        self._doc_pairs: dict[str, range] = {}  # a document's rows of pairs
        self._pair_forms: dict[str, list[str | None]] = {}  # formed on first use
        self._pair_texts: dict[str, SubstringIndex] = {}

    @classmethod
    def of(cls, index: Index) -> _AnchorTexts:
        texts = index.cache.get("gold.anchor_texts")
        if not isinstance(texts, cls) or texts.index is not index:
            texts = index.cache["gold.anchor_texts"] = cls(index)
        return texts

    @staticmethod
    def form_of(by: str) -> Callable[[str], str]:
        return fold_text if by == "support_claim" else squash

    def chunks(self, by: str) -> SubstringIndex:
        if by not in self._chunks:
            form = self.form_of(by)
            self._chunks[by] = SubstringIndex([form(c.text) for c in self.index.chunks])
        return self._chunks[by]

    def pairs(self) -> list[tuple[str, str, str]]:
        if self._pairs is None:
            self._pairs, self._joined = [], []
            for doc_id in dict.fromkeys(c.doc_id for c in self.index.chunks):
                start = len(self._pairs)
                for a, b, joined in _adjacent_pairs(self.index, doc_id):
                    self._pairs.append((doc_id, a, b))
                    self._joined.append(joined)
                self._doc_pairs[doc_id] = range(start, len(self._pairs))
        return self._pairs

    def doc_pairs(self, doc_id: str) -> range:
        """The rows of ``doc_id``'s pairs in :meth:`pairs` (one document's are adjacent)."""
        self.pairs()
        return self._doc_pairs.get(doc_id, range(0))

    def pair_text(self, by: str, row: int) -> str:
        """The joined text of one pair in the form searched by ``by``: formed when first
        read, as most pairs never are (a run is looked for in the labelled document)."""
        self.pairs()
        forms = self._pair_forms.setdefault(by, [None] * len(self._joined))
        text = forms[row]
        if text is None:
            text = forms[row] = self.form_of(by)(self._joined[row])
        return text

    def pair_texts(self, by: str) -> SubstringIndex:
        if by not in self._pair_texts:
            self._pair_texts[by] = SubstringIndex(
                [self.pair_text(by, r) for r in range(len(self.pairs()))])
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
      ``candidates``, with their ``similarity``
      (:meth:`~ragassay.substrings.SubstringIndex.nearest`).

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

    here, elsewhere = _holders(needle, holds, by, index, texts, order)
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
        run = _run_in(first, needle, holds, by, index, texts)
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


def _run_in(doc_id: str, needle: str, holds: Callable[[str], bool], by: str, index: Index,
            texts: _AnchorTexts) -> list[str]:
    """The fewest adjacent chunks of ``doc_id`` that hold the label (``needle`` and
    ``holds``, :func:`_needle`) together, the first such run in ``seq`` order (two chunks,
    then three, …; by ``required_terms``, two only); [] when none. A run's inner chunks lie
    inside the claim, so a run is read only while they fit in it: a short claim costs one
    pass over the document's pairs."""
    pairs = texts.pairs()
    for r in texts.doc_pairs(doc_id):
        text = texts.pair_text(by, r)
        if needle in text and holds(text):
            return [pairs[r][1], pairs[r][2]]
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


def _holders(needle: str, holds: Callable[[str], bool], by: str, index: Index,
             texts: _AnchorTexts, order: Callable[[str], int | None]
             ) -> tuple[list[str], list[str]]:
    """The chunks holding the label (``needle`` and ``holds``, :func:`_needle`) by ``by``:
    those of the first document that has one (``order``: the labelled document first, then
    index order), in ``seq`` order, and those of the other documents, in that order."""
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
