"""The layout of the project the naive-baseline contract comes from → an imported set.

Read from the project folder ``SRC`` (paths in its config are relative to ``SRC``):

- the config (default ``configs/eval/rag_quality_v1.yaml``): every key is mapped to a
  ragassay key or reported, one by one, in ``import.json`` → ``config_keys`` (see
  :data:`PIPELINE_KEYS` and :func:`map_config`);
- ``questions_path``: its rows are ragassay questions, except that ``answerable`` may be left
  out (it means true there) and other keys are kept in ``metadata``;
- ``gold_evidence_path``: ``{question_id, gold_evidence: [...]}`` rows, or one label per row
  (``{question_id, chunk_id, ...}``), several rows of a question merged; label keys ragassay
  does not know go to the label's ``metadata``. Labels keep their ``chunk_id``s: those are
  the project's section chunks, so a run re-anchors each label by its ``support_claim`` on
  the index the user builds;
- ``index_dir/index.json`` (``schema_version`` 2, or 1): its chunks become ``chunks.jsonl``
  (``{chunk_id, doc_id, title, section, text, page_span}``; token lists, embeddings and other
  keys dropped), so the project's own predictions can be scored against its chunk ids;
- the sectioned JSON documents of the index's ``build.source_dir`` (else ``data/raw``) are
  copied with their extra top-level keys (``agency``, ``project``) moved into ``metadata``;
  without them, the documents are rebuilt from the index (its ``parent_sections``, else its
  chunks in order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..jsonio import iter_jsonl, json_text, jsonl_text, parse_record, read_json
from ..schema import GoldEvidence, GoldRecord, Question
from ..yamlio import read_yaml
from .common import ImportedSet, document_file_names, make_question, need

DEFAULT_CONFIG = "configs/eval/rag_quality_v1.yaml"
# Pipeline keys ragassay has under the same name; their values are checked by the preset.
SAME_PIPELINE_KEYS = ("name", "top_k", "retrieval_backend", "metadata_first", "rerank",
                      "verifier_retry", "query_expansion")
# Keys with no ragassay counterpart, and why; a value listed after the key is what ragassay
# does anyway (then the key is dropped, not unmapped).
PIPELINE_KEYS: dict[str, tuple[str | None, str]] = {
    "retrieval_mode": ("flat", "ragassay ranks every chunk in one flat list"),
    "prompt_profile": ("minimal_grounded_extractive",
                       "ragassay's offline answerer is extractive (answerer.kind: extractive); "
                       "an LLM answerer takes its prompt from ragassay.answer.prompt"),
    "bm25_tokenizer": (None, "ragassay's BM25 tokenizes Korean by morphemes (kiwipiepy) and "
                       "other text by Unicode words; not set in a config"),
    "bm25_backend": (None, "ragassay's BM25 is bm25s; not set in a config"),
}
DESCRIPTIVE = ("schema_version", "name", "description")


def _entry(key: str, status: str, to: str = "", note: str = "") -> dict[str, str]:
    return {"key": key, "status": status, "to": to, "note": note}


def map_config(data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The ragassay config keys of the project's config, and one entry per source key:
    ``mapped`` (to a ragassay key), ``dropped`` (descriptive, or what ragassay does anyway)
    or ``unmapped`` (no counterpart; the reason given)."""
    from ..config import PRESETS
    from ..metrics.measures import parse_measure
    from ..metrics.retrieval import rag_measure

    config: dict[str, Any] = {}
    report: list[dict[str, str]] = []
    for key, value in data.items():
        if key in DESCRIPTIVE:
            report.append(_entry(key, "dropped", note=f"descriptive ({value!r})"))
        elif key in ("index_dir", "questions_path", "gold_evidence_path"):
            to = {"index_dir": "chunks.jsonl (the index read as chunks)",
                  "questions_path": "questions_path: questions.jsonl",
                  "gold_evidence_path": "gold_evidence_path: gold.jsonl"}[key]
            report.append(_entry(key, "mapped", to))
        elif key == "output_root":
            report.append(_entry(key, "mapped", "output_root: runs", "inside the set"))
        elif key == "pipeline" and isinstance(value, dict):
            pipeline: dict[str, Any] = {}
            name = value.get("name", "naive_baseline")
            preset = PRESETS.get(name)
            for sub, v in value.items():
                dotted = f"pipeline.{sub}"
                if sub in SAME_PIPELINE_KEYS:
                    if preset is None and sub == "name":
                        report.append(_entry(dotted, "unmapped", note=f"no ragassay preset "
                                             f"{v!r} (known: {', '.join(PRESETS)})"))
                    elif preset is not None and sub in preset and preset[sub] != v:
                        report.append(_entry(dotted, "unmapped", note=f"{name} requires "
                                             f"{sub}: {preset[sub]!r}, the project has {v!r}"))
                    else:
                        pipeline[sub] = v
                        report.append(_entry(dotted, "mapped", f"{dotted}: {v}"))
                elif sub in PIPELINE_KEYS:
                    same, why = PIPELINE_KEYS[sub]
                    status = "dropped" if same is not None and v == same else "unmapped"
                    report.append(_entry(dotted, status, note=f"{v!r}: {why}"))
                else:
                    report.append(_entry(dotted, "unmapped", note="no ragassay counterpart"))
            if preset is not None:
                pipeline["name"] = name
            config["pipeline"] = pipeline
        elif key == "metrics" and isinstance(value, dict):
            metrics: dict[str, list[str]] = {}
            for group, names in value.items():
                if group not in ("retrieval", "answer") or not isinstance(names, list):
                    report.append(_entry(f"metrics.{group}", "unmapped",
                                         note="no ragassay counterpart"))
                    continue
                kept = []
                for i, name in enumerate(names):
                    try:
                        m = rag_measure(name) if group == "retrieval" else parse_measure(name)
                        kept.append(str(m))
                        report.append(_entry(f"metrics.{group}.{i}", "mapped",
                                             f"metrics.{group}: {m}"))
                    except (ValueError, TypeError) as exc:
                        report.append(_entry(f"metrics.{group}.{i}", "unmapped", note=str(exc)))
                metrics[group] = kept
            config["metrics"] = metrics
        else:
            report.append(_entry(key, "unmapped", note="no ragassay counterpart"))
    return config, report


# --- questions and gold -----------------------------------------------------------------


def _questions(path: Path, out: ImportedSet) -> None:
    known = set(Question.model_fields)
    defaulted = 0
    seen: dict[str, int] = {}
    for line, row in iter_jsonl(path):
        need(row, dict, path, "", what="a JSON object", line=line)
        data = {k: v for k, v in row.items() if k in known}
        extra = {k: v for k, v in row.items() if k not in known}
        if "answerable" not in data:
            data["answerable"] = True  # the project's default
            defaulted += 1
        if isinstance(data.get("question_id"), str):
            data["question_id"] = data["question_id"].strip()
        if extra:
            data["metadata"] = {**extra, **(data.get("metadata") or {})}
        question = make_question(data, path, "", line)
        if question.question_id in seen:
            raise InputError(path, f"duplicate question_id {question.question_id!r} (first on "
                             f"line {seen[question.question_id]})", line=line,
                             field="question_id")
        seen[question.question_id] = line
        out.questions.append(question)
    if defaulted:
        out.notes.append(f"{path.name}: {defaulted} questions without `answerable` imported "
                         "as answerable (the project's default)")


def _label(item: Any, path: Path, line: int, where: str) -> GoldEvidence:
    need(item, dict, path, where, what="a gold label object", line=line)
    known = set(GoldEvidence.model_fields)
    data = {k: v for k, v in item.items() if k in known and k != "question_id"}
    extra = {k: v for k, v in item.items() if k not in known and k != "question_id"}
    if extra:
        data["metadata"] = {**extra, **(data.get("metadata") or {})}
    return parse_record(GoldEvidence, data, path, line, prefix=where)


def _gold(path: Path, out: ImportedSet) -> None:
    by_q: dict[str, list[GoldEvidence]] = {}
    answerable = {q.question_id: q.answerable for q in out.questions}
    for line, row in iter_jsonl(path):
        need(row, dict, path, "", what="a JSON object", line=line)
        qid = need(row.get("question_id"), str, path, "question_id", what="a string",
                   line=line).strip()
        if qid not in answerable:
            raise InputError(path, f"gold for unknown question {qid!r}", line=line,
                             field="question_id")
        if "gold_evidence" in row:
            items = need(row["gold_evidence"], list, path, "gold_evidence",
                         what="a list of labels", line=line)
            labels = [_label(it, path, line, f"gold_evidence.{i}") for i, it in enumerate(items)]
        else:  # the project's flat form: the row is one label
            labels = [_label(row, path, line, "")]
        if labels and not answerable[qid]:
            raise InputError(path, f"question {qid!r} is unanswerable but has gold evidence",
                             line=line, field="gold_evidence")
        by_q.setdefault(qid, []).extend(labels)
    out.gold = [GoldRecord(question_id=q.question_id, gold_evidence=by_q[q.question_id])
                for q in out.questions if q.question_id in by_q]


# --- index and documents ----------------------------------------------------------------


def _index_chunks(index_dir: Path, out: ImportedSet) -> dict[str, Any]:
    path = index_dir / "index.json"
    meta = need(read_json(path), dict, path, "", what="a JSON object")
    version = meta.get("schema_version")
    if version not in (1, 2):
        raise InputError(path, f"expected schema_version 2 (or 1), got {version!r}",
                         field="schema_version")
    chunks = need(meta.get("chunks"), list, path, "chunks", what="a list of chunks")
    rows = []
    for i, ch in enumerate(chunks):
        need(ch, dict, path, f"chunks.{i}", what="a chunk object")
        row: dict[str, Any] = {}
        for key in ("chunk_id", "doc_id", "text"):
            row[key] = need(ch.get(key), str, path, f"chunks.{i}.{key}", what="a string")
        for key in ("title", "section"):
            if isinstance(ch.get(key), str):
                row[key] = ch[key]
        span = ch.get("page_span")
        if isinstance(span, list) and len(span) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in span):
            row["page_span"] = span
        rows.append(row)
    out.extra["chunks.jsonl"] = jsonl_text(rows)
    out.notes.append(f"{path}: schema_version {version}, {len(rows)} chunks → chunks.jsonl")
    return meta


def _copy_documents(folder: Path, out: ImportedSet) -> None:
    for p in sorted(folder.glob("*.json")):
        doc = need(read_json(p), dict, p, "", what="a sectioned document {doc_id, sections}")
        need(doc.get("doc_id"), str, p, "doc_id", what="a string")
        need(doc.get("sections"), list, p, "sections", what="a list of sections")
        keep = {k: doc[k] for k in ("doc_id", "title", "sections") if k in doc}
        extra = {k: v for k, v in doc.items() if k not in (*keep, "metadata")}
        keep["metadata"] = {**(doc.get("metadata") or {}), **extra}
        out.files[p.name] = json_text(keep).encode("utf-8")


def _rebuild_documents(meta: dict[str, Any], out: ImportedSet) -> None:
    parts = meta.get("parent_sections") or meta.get("chunks") or []
    docs: dict[str, dict[str, Any]] = {}
    for part in parts:
        doc = docs.setdefault(part["doc_id"], {"doc_id": part["doc_id"],
                                               "title": part.get("title") or "",
                                               "sections": []})
        section: dict[str, Any] = {"heading": part.get("heading") or part.get("section") or "",
                                   "text": part["text"]}
        span = part.get("page_span")
        if isinstance(span, list) and span and isinstance(span[0], int) and span[0] >= 1:
            section["page"] = span[0]
        doc["sections"].append(section)
    names = document_file_names(list(docs), out.source)
    for doc_id, doc in docs.items():
        out.files[names[doc_id]] = json_text(doc).encode("utf-8")
    out.notes.append(f"documents rebuilt from the index ({len(docs)}): no source documents "
                     "found")


def read_bidmate(src: str | Path, *, config: str | Path | None = None) -> ImportedSet:
    """Read the project at ``src`` (see the module docstring)."""
    root = Path(src)
    if not root.is_dir():
        raise InputError(root, "is not a folder; give the project's root folder")
    given = Path(config or DEFAULT_CONFIG)
    cfg_path = given if given.is_absolute() else root / given
    data = read_yaml(cfg_path)
    out = ImportedSet(source=str(root), format="bidmate")
    out.config, out.mapping = map_config(data)
    for key in ("questions_path", "gold_evidence_path"):
        if not isinstance(data.get(key), str):
            raise InputError(cfg_path, "expected a path", field=key)
    _questions(root / data["questions_path"], out)
    _gold(root / data["gold_evidence_path"], out)
    meta: dict[str, Any] = {}
    index_dir = root / str(data.get("index_dir", "data/index"))
    if (index_dir / "index.json").is_file():
        meta = _index_chunks(index_dir, out)
    build = meta.get("build") if isinstance(meta.get("build"), dict) else {}
    source = root / str((build or {}).get("source_dir") or "data/raw")
    if source.is_dir() and any(source.glob("*.json")):
        _copy_documents(source, out)
    elif meta:
        _rebuild_documents(meta, out)
    else:
        raise InputError(source, "no sectioned JSON documents here and no index to rebuild "
                         "them from")
    return out
