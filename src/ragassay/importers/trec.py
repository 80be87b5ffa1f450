"""TREC qrels + topics + a corpus JSONL → an imported set (the BEIR rules of :mod:`.beir`).

- qrels: ``qid iteration docid grade`` per line, whitespace-separated (trec_eval's format);
- topics: either TREC's ``<top> <num> Number: 301 <title> ... <desc> ... </top>`` blocks
  (the question is the ``<title>``, or ``<desc>`` with ``field="desc"``), or a TSV
  ``qid<TAB>query`` per line;
- corpus: ``{_id | doc_id | docno, title?, text}`` per line.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from ..ingest.document import normalize_nfc
from .beir import Qrels, judged_set, read_corpus
from .common import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP, ImportedSet

_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)


def _tag(block: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\s*(?:Description:|Narrative:|Topic:)?(.*?)(?=<[a-z/]|\Z)", block,
                  re.S | re.I)
    return " ".join(m.group(1).split()) if m else ""


def read_topics(path: Path, *, field: str = "title") -> dict[str, tuple[str, str]]:
    """Topic id → ``(question, "file:line")``; see the module docstring for the formats."""
    text = normalize_nfc(path.read_text(encoding="utf-8-sig"))
    out: dict[str, tuple[str, str]] = {}
    blocks = list(_TOP.finditer(text))
    if blocks:
        for m in blocks:
            line = text.count("\n", 0, m.start()) + 1
            num = _NUM.search(m.group(1))
            if not num:
                raise InputError(path, "topic without <num>", line=line, field="num")
            query = _tag(m.group(1), field)
            if not query:
                raise InputError(path, f"topic {num.group(1)!r} has no <{field}>", line=line,
                                 field=field)
            out[num.group(1)] = (query, f"{path}:{line}")
        return out
    for line_no, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        qid, tab, query = raw.partition("\t")
        if not tab or not qid.strip() or not query.strip():
            raise InputError(path, "expected `qid<TAB>query` per line or TREC <top> blocks",
                             line=line_no)
        if qid.strip() in out:
            raise InputError(path, f"duplicate topic id {qid.strip()!r}", line=line_no)
        out[qid.strip()] = (query.strip(), f"{path}:{line_no}")
    if not out:
        raise InputError(path, "no topics in file")
    return out


def read_qrels_trec(path: Path) -> Qrels:
    """``qid iteration docid grade`` lines (trec_eval's qrels)."""
    qrels: Qrels = {}
    for line_no, raw in enumerate(path.read_text(encoding="utf-8-sig").split("\n"), start=1):
        if not raw.strip():
            continue
        cols = raw.split()
        if len(cols) != 4:
            raise InputError(path, f"expected 4 columns (qid iteration docid grade), got "
                             f"{len(cols)}", line=line_no)
        try:
            grade = int(cols[3])
        except ValueError:
            raise InputError(path, f"expected an integer grade, got {cols[3]!r}",
                             line=line_no, field="grade") from None
        qrels.setdefault(cols[0], {})[cols[2]] = grade
    if not qrels:
        raise InputError(path, "no judgements in file")
    return qrels


def read_trec(qrels: str | Path, topics: str | Path, corpus: str | Path, *,
              field: str = "title",
              chunking: tuple[int, int] = (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)) -> ImportedSet:
    """Read TREC qrels, topics and a corpus JSONL into one set."""
    qp, tp, cp = Path(qrels), Path(topics), Path(corpus)
    for p in (qp, tp, cp):
        if not p.is_file():
            raise InputError(p, "no such file")
    return judged_set(str(qp), "TREC", read_corpus(cp, ("_id", "doc_id", "docno")),
                      read_topics(tp, field=field), read_qrels_trec(qp), str(qp),
                      chunking=chunking)
