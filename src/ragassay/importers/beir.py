"""BEIR folders (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``) → an imported set,
and the relevance-judged set every document-level format becomes (TREC: :mod:`.trec`).

BEIR and TREC judge *documents*; ragassay's gold is a chunk. Each relevant document becomes
one label whose ``support_claim`` is the document's lead: the first sentence of its text
(the title is the document's ``title`` and the first line of its text). A hit on another
chunk of a long document is therefore not counted as found. When every document fits in one
chunk (``ragassay index --chunk-size`` at least the longest document, printed by the import
and kept in ``import.json``), a label is its whole document and the judgement is BEIR's.
Grades are the qrels scores; rows with a score ≤ 0 (judged non-relevant) are left out, and
a query without a relevant document in the split is not imported (both counted in the notes).
There are no answers: questions have no ``must_contain``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..ingest.document import normalize_nfc
from ..jsonio import iter_jsonl
from ..schema import GoldEvidence, GoldRecord
from ..sentences import split_sentences
from .common import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_OVERLAP,
    ImportedSet,
    make_question,
    need,
    need_text,
    placed_chunk,
)

Qrels = dict[str, dict[str, int]]  # query id -> document id -> grade


def judged_set(source: str, fmt: str, corpus: Iterator[tuple[str, str, str]],
               queries: dict[str, tuple[str, str]], qrels: Qrels,
               qrels_path: str, *,
               chunking: tuple[int, int] = (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)) -> ImportedSet:
    """The imported set of a document-judged collection.

    ``corpus`` yields ``(doc_id, title, text)``; ``queries`` maps a query id to ``(text,
    where)`` (``where``: its file and line, for errors); ``qrels`` are the judgements.
    """
    out = ImportedSet(source=source, format=fmt, chunking=chunking)
    wanted = {d for judged in qrels.values() for d, g in judged.items() if g > 0}
    leads: dict[str, GoldEvidence] = {}
    longest = 0
    for doc_id, title, body in corpus:
        text = f"{title}\n{body}" if title and body else (body or title)
        longest = max(longest, len(text))
        out.documents.append({"doc_id": doc_id, "title": title, "text": text})
        if doc_id in wanted:
            offset = len(title) + 1 if title and body else 0
            spans = split_sentences(text[offset:])
            a, b = (spans[0][0] + offset, spans[0][1] + offset) if spans else (0, len(text))
            where = placed_chunk(doc_id, text, a, b, chunk_size=chunking[0],
                                 overlap=chunking[1])
            leads[doc_id] = GoldEvidence(chunk_id=where, doc_id=doc_id,
                                         support_claim=text[a:b])
    missing = sorted(wanted - leads.keys())
    if missing:
        raise InputError(qrels_path, f"judges document {missing[0]!r}, which the corpus does "
                         f"not hold ({len(missing)} such documents)", field="corpus-id")
    dropped_rows = sum(1 for judged in qrels.values() for g in judged.values() if g <= 0)
    no_relevant = 0
    for qid in sorted(qrels):
        judged = {d: g for d, g in qrels[qid].items() if g > 0}
        if qid not in queries:
            raise InputError(qrels_path, f"judges query {qid!r}, which the queries file does "
                             "not hold", field="query-id")
        if not judged:
            no_relevant += 1
            continue
        text, where = queries[qid]
        out.questions.append(make_question(
            {"question_id": qid, "question": text, "answerable": True,
             "query_type": "retrieval"}, where, ""))
        out.gold.append(GoldRecord(question_id=qid, gold_evidence=[
            leads[d].model_copy(update={"grade": g}) for d, g in sorted(judged.items())]))
    out.notes.append(f"longest document: {longest} characters; `ragassay index --chunk-size "
                     f"{longest}` keeps one chunk per document (the collection judges "
                     "documents)")
    if dropped_rows:
        out.notes.append(f"{dropped_rows} judgements with a grade ≤ 0 left out (not relevant)")
    if no_relevant:
        out.notes.append(f"{no_relevant} queries without a relevant document left out")
    return out


# --- BEIR ---------------------------------------------------------------------------------


def _jsonl_docs(path: Path, id_keys: tuple[str, ...]) -> Iterator[tuple[int, dict[str, Any], str]]:
    for line, row in iter_jsonl(path):
        need(row, dict, path, "", what="a JSON object", line=line)
        key = next((k for k in id_keys if k in row), id_keys[0])
        value = row.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # numeric ids of some collections
        ident = need(value, str, path, key, what="a string id", line=line)
        if not ident.strip():
            raise InputError(path, "is empty", line=line, field=key)
        yield line, row, ident


def read_corpus(path: Path, id_keys: tuple[str, ...] = ("_id",)) -> Iterator[tuple[str, str, str]]:
    """``(doc_id, title, text)`` of a corpus JSONL (``{_id, title?, text}`` per line)."""
    seen: dict[str, int] = {}
    for line, row, doc_id in _jsonl_docs(path, id_keys):
        if doc_id in seen:
            raise InputError(path, f"duplicate document id {doc_id!r} (first on line "
                             f"{seen[doc_id]})", line=line, field=id_keys[0])
        seen[doc_id] = line
        title = row.get("title") or ""
        need(title, str, path, "title", what="a string", line=line)
        text = row.get("text") or ""
        need(text, str, path, "text", what="a string", line=line)
        if not (title.strip() or text.strip()):
            raise InputError(path, "document has neither text nor title", line=line,
                             field="text")
        yield doc_id, normalize_nfc(title).strip(), normalize_nfc(text).strip()


def read_queries(path: Path) -> dict[str, tuple[str, str]]:
    """Query id → ``(text, "file:line")`` of a BEIR ``queries.jsonl`` (``{_id, text}``)."""
    out: dict[str, tuple[str, str]] = {}
    for line, row, qid in _jsonl_docs(path, ("_id",)):
        if qid in out:
            raise InputError(path, f"duplicate query id {qid!r}", line=line, field="_id")
        out[qid] = (need_text(row.get("text"), path, "text", line=line), f"{path}:{line}")
    return out


def read_qrels_tsv(path: Path) -> Qrels:
    """BEIR qrels: ``query-id<TAB>corpus-id<TAB>score`` with a header line."""
    qrels: Qrels = {}
    for line_no, raw in enumerate(path.read_text(encoding="utf-8-sig").split("\n"), start=1):
        if not raw.strip() or (line_no == 1 and raw.lower().startswith("query-id")):
            continue
        cols = raw.rstrip("\r").split("\t")
        if len(cols) != 3:
            raise InputError(path, f"expected 3 tab-separated columns (query-id, corpus-id, "
                             f"score), got {len(cols)}", line=line_no)
        qid, doc, score = (c.strip() for c in cols)
        try:
            grade = int(score)
        except ValueError:
            raise InputError(path, f"expected an integer score, got {score!r}", line=line_no,
                             field="score") from None
        qrels.setdefault(qid, {})[doc] = grade
    if not qrels:
        raise InputError(path, "no judgements in file")
    return qrels


def read_beir(folder: str | Path, *, split: str = "test",
              chunking: tuple[int, int] = (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)) -> ImportedSet:
    """Read a BEIR folder; ``split`` names ``qrels/<split>.tsv``."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(root, "is not a folder; expected a BEIR folder with corpus.jsonl, "
                         "queries.jsonl and qrels/<split>.tsv")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        have = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        raise InputError(qrels_path, f"no such file (splits here: {', '.join(have) or 'none'}); "
                         "choose one with --split")
    qrels = read_qrels_tsv(qrels_path)
    queries = read_queries(root / "queries.jsonl")
    return judged_set(str(root), f"BEIR ({split})", read_corpus(root / "corpus.jsonl"),
                      queries, qrels, str(qrels_path), chunking=chunking)
