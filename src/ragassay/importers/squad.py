"""SQuAD v1.1 / v2.0 and KorQuAD v1 files → an imported set.

Layout read (the three share it; v2 adds ``is_impossible``)::

    {"version": ..., "data": [{"title": ..., "paragraphs": [
        {"context": ..., "qas": [{"id": ..., "question": ...,
                                  "answers": [{"text": ..., "answer_start": N}, ...],
                                  "is_impossible": false}]}]}]}

- each paragraph becomes a document ``<slug of the title>-pNNN`` (NNN: the paragraph's
  position in its article, from 1), its title the article's;
- an answerable question gets ``must_contain`` = one answer: the first whose text stands in
  every other answer of the question (``Denver Broncos`` among ``the Denver Broncos``), else
  the first; all answers are kept in ``metadata.answers``; ``expected_answer`` is that text;
- its gold label: the sentence holding that answer is the ``support_claim``, the answer text
  the ``required_terms``, the chunk of the default chunking holding the sentence the
  ``chunk_id`` (:func:`~ragassay.importers.common.claim_label`);
- ``is_impossible: true`` (or no answer at all) → ``answerable: false`` with gold ``[]``.

An answer whose ``text`` is not ``context[answer_start:answer_start + len(text)]`` is bad
input naming the question id; with ``skip_bad`` the question is left out and listed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..ingest.document import normalize_nfc
from ..ingest.loaders import slugify
from ..jsonio import read_json
from ..schema import GoldRecord
from ..text import contains_term
from .common import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_OVERLAP,
    ImportedSet,
    Skipped,
    claim_label,
    jpath,
    make_question,
    need,
    need_text,
)


def _pick_answer(texts: list[str]) -> int:
    """Index of the answer a right reply must contain (see the module docstring)."""
    for i, text in enumerate(texts):
        if all(contains_term(other, text) for other in texts):
            return i
    return 0


def _doc_id(title: str, article: int, paragraph: int) -> str:
    try:
        stem = slugify(title)
    except InputError:  # a title without letters or digits
        stem = f"article-{article + 1:03d}"
    return f"{stem}-p{paragraph + 1:03d}"


def read_squad(path: str | Path, *, skip_bad: bool = False,
               chunking: tuple[int, int] = (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)) -> ImportedSet:
    """Read a SQuAD-layout file (see the module docstring); labels are placed on the chunks
    of ``chunking`` (size, overlap)."""
    p = Path(path)
    root = read_json(p, hint="; expected a SQuAD file {version, data: [...]}")
    need(root, dict, p, "", what="a JSON object {version, data: [...]}")
    articles = need(root.get("data"), list, p, "data", what="a list of articles")
    version = str(root.get("version", ""))
    fmt = "KorQuAD" if "korquad" in version.lower() else "SQuAD"
    out = ImportedSet(source=str(p), format=f"{fmt} {version}".strip(), chunking=chunking)
    seen_docs: dict[str, str] = {}
    seen_ids: dict[str, str] = {}
    for ai, article in enumerate(articles):
        at = jpath("data", ai)
        need(article, dict, p, at, what="an article {title, paragraphs}")
        title = normalize_nfc(need(article.get("title", ""), str, p, jpath(at, "title"),
                               what="a string")).strip()
        paragraphs = need(article.get("paragraphs"), list, p, jpath(at, "paragraphs"),
                          what="a list of paragraphs")
        for pi, para in enumerate(paragraphs):
            pt = jpath(at, "paragraphs", pi)
            need(para, dict, p, pt, what="a paragraph {context, qas}")
            raw_context = need_text(para.get("context"), p, jpath(pt, "context"))
            context = raw_context  # already NFC (need_text), offsets below are into it
            doc_id = _doc_id(title, ai, pi)
            if doc_id in seen_docs:
                raise InputError(p, f"paragraph gives doc_id {doc_id!r} again (first at "
                                 f"{seen_docs[doc_id]}); give the articles distinct titles",
                                 field=pt)
            seen_docs[doc_id] = pt
            out.documents.append({"doc_id": doc_id, "title": title, "text": context,
                                  "metadata": {"article": ai, "paragraph": pi}})
            qas = need(para.get("qas", []), list, p, jpath(pt, "qas"), what="a list of questions")
            for qi, qa in enumerate(qas):
                qt = jpath(pt, "qas", qi)
                _read_question(out, p, qt, qa, doc_id, title, context,
                               raw=para.get("context"), seen=seen_ids, skip_bad=skip_bad)
    return out


def _read_question(out: ImportedSet, p: Path, qt: str, qa: Any, doc_id: str, title: str,
                   context: str, *, raw: str, seen: dict[str, str], skip_bad: bool) -> None:
    need(qa, dict, p, qt, what="a question {id, question, answers}")
    qid = need(qa.get("id"), str, p, jpath(qt, "id"), what="a string id")
    if not qid.strip():
        raise InputError(p, "is empty", field=jpath(qt, "id"))
    if qid in seen:
        raise InputError(p, f"duplicate question id {qid!r} (first at {seen[qid]})",
                         field=jpath(qt, "id"))
    seen[qid] = qt
    impossible = qa.get("is_impossible", False)
    need(impossible, bool, p, jpath(qt, "is_impossible"), what="true or false")
    answers = need(qa.get("answers", []), list, p, jpath(qt, "answers"),
                   what="a list of {text, answer_start}")
    spans: list[tuple[str, int]] = []
    for ni, ans in enumerate(answers):
        at = jpath(qt, "answers", ni)
        need(ans, dict, p, at, what="an answer {text, answer_start}")
        text = need(ans.get("text"), str, p, jpath(at, "text"), what="a string")
        start = need(ans.get("answer_start"), int, p, jpath(at, "answer_start"),
                     what="an integer character offset")
        found = raw[start:start + len(text)] if start >= 0 else ""
        if not text.strip() or found != text:
            reason = (f"question {qid!r}: answer {text!r} does not match the context at "
                      f"answer_start {start} (the context has {found!r} there)")
            if not skip_bad:
                raise InputError(p, reason + "; fix the span or pass --skip-bad",
                                 field=jpath(at, "answer_start"))
            out.skipped.append(Skipped(qid, f"{p}: {at}", reason))
            return
        # Offsets into the NFC text: NFC of the prefix, for the rare decomposed context.
        a = len(normalize_nfc(raw[:start]))
        spans.append((context[a:a + len(normalize_nfc(text))], a))
    question = {"question_id": qid, "question": qa.get("question"),
                "answerable": not impossible and bool(spans), "topic": title or None,
                "query_type": "unanswerable" if impossible or not spans else "extractive"}
    if not isinstance(question["question"], str):
        need(question["question"], str, p, jpath(qt, "question"), what="a string")
    question["question"] = normalize_nfc(question["question"]).strip()
    if question["answerable"]:
        pick = _pick_answer([t for t, _ in spans])
        text, a = spans[pick]
        question.update(must_contain=[text], expected_answer=text,
                        metadata={"answers": list(dict.fromkeys(t for t, _ in spans)),
                                  "doc_id": doc_id})
        label = claim_label(doc_id, context, a, a + len(text), required_terms=[text],
                            chunking=out.chunking)
        gold = GoldRecord(question_id=qid, gold_evidence=[label])
    else:
        gold = GoldRecord(question_id=qid, gold_evidence=[])
    out.questions.append(make_question(question, p, qt))
    out.gold.append(gold)
