"""What every importer shares: the imported set, its folder, gold placed by its claim.

An imported set is a folder that ``ragassay index`` and ``ragassay run`` take as it is::

    DIR/documents/        documents (``documents.jsonl``, or sectioned ``.json`` files)
    DIR/questions.jsonl   questions (``schema.Question``)
    DIR/gold.jsonl        gold evidence (``schema.GoldRecord``)
    DIR/config.yaml       the naive baseline over ``DIR/index`` (build it with ragassay index)
    DIR/config.bm25.yaml, DIR/config.hybrid.yaml   the same set with another retriever
    DIR/import.json       what was imported, skipped and left unmapped, and why

Gold is placed through its ``support_claim``: the label's ``chunk_id`` is the chunk of the
default chunking (400 / 80 characters) that holds the claim, and a label whose chunk is gone
after re-chunking is re-anchored at run time to the chunk that holds the claim.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import FolderWriter, write_folder
from ..config import CONTRACT_PRESET, PRESETS
from ..errors import InputError, install_line
from ..ingest.chunking import chunk_id, windows
from ..ingest.document import normalize_nfc
from ..ingest.loaders import slugify
from ..jsonio import json_text, jsonl_text, parse_record
from ..schema import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP, GoldEvidence, GoldRecord, Question
from ..sentences import split_sentences

# The chunking `ragassay index` uses by default: labels are placed on its chunk ids.
# The retrieval metrics of an imported set's configs (unless its source names others).
RETRIEVAL_METRICS = ("recall_at_5", "recall_at_10", "mrr_at_5", "ndcg_at_5", "hit_at_5", "map")


@dataclass
class Skipped:
    """A question left out of the set (only with ``--skip-bad``), and why."""

    question_id: str
    where: str  # file and JSON path
    reason: str


@dataclass
class ImportedSet:
    """Records of an imported set, before they are written (:func:`write_set`).

    ``documents`` are ``{doc_id, title, text, metadata}`` rows of ``documents.jsonl``;
    ``files`` are other document files (``name`` → bytes, e.g. sectioned JSON) written
    under ``documents/`` as they are. ``config`` holds keys of ``config.yaml`` beyond the
    paths (``pipeline``, ``metrics``, ``answerer`` ...).
    """

    source: str
    format: str
    documents: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)
    gold: list[GoldRecord] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    # Extra files at the top of the set (``chunks.jsonl`` of an imported index).
    extra: dict[str, str] = field(default_factory=dict)
    # Per config key of the source: how it was mapped (bidmate).
    mapping: list[dict[str, str]] = field(default_factory=list)
    # The chunking the labels were placed for, written to the configs' `index:` section.
    chunking: tuple[int, int] = (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)

    @property
    def answerable(self) -> int:
        return sum(q.answerable for q in self.questions)

    def counts(self) -> dict[str, int]:
        return {"documents": len(self.documents) + len(self.files),
                "questions": len(self.questions), "answerable": self.answerable,
                "unanswerable": len(self.questions) - self.answerable,
                "gold_labels": sum(len(g.gold_evidence) for g in self.gold),
                "skipped": len(self.skipped)}


# --- layout checks: the file and the JSON path of the first offending field --------------


def jpath(*parts: str | int) -> str:
    """The dotted JSON path of a field, the form every ragassay error uses
    (``data.3.paragraphs.0.qas.2.answers.0.answer_start``)."""
    return ".".join(str(p) for p in parts)


def need(value: Any, kind: type | tuple[type, ...], path: str | Path, where: str, *,
         what: str, line: int | None = None) -> Any:
    """``value`` when it is of ``kind`` (a bool is not an int), else an :class:`InputError`
    naming the file, the line (of a JSONL record) and the field's JSON path."""
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in (
        kind if isinstance(kind, tuple) else (kind,)))
    if not ok:
        got = "nothing" if value is None else type(value).__name__
        raise InputError(path, f"expected {what}, got {got}", line=line, field=where or None)
    return value


def need_text(value: Any, path: str | Path, where: str, *, line: int | None = None) -> str:
    """A non-blank JSON string, NFC-normalised as the document loaders do."""
    text = need(value, str, path, where, what="a string", line=line)
    if not text.strip():
        raise InputError(path, "is empty", line=line, field=where)
    return normalize_nfc(text)


def make_question(data: dict[str, Any], path: str | Path, where: str,
                  line: int | None = None) -> Question:
    """A :class:`Question` from importer-built fields; a value the schema refuses (an empty
    question) is reported at the source's JSON path."""
    return parse_record(Question, {k: v for k, v in data.items() if v is not None}, path, line,
                        prefix=where)


# --- placing gold by its claim ----------------------------------------------------------


def claim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence(s) of ``text`` that hold ``text[start:end]``: from the start of the first
    sentence overlapping the span to the end of the last
    (:func:`ragassay.sentences.split_sentences`). The span itself when no sentence overlaps
    it (whitespace)."""
    hit = [(a, b) for a, b in split_sentences(text) if a < end and b > start]
    if not hit:
        return start, end
    return min(start, hit[0][0]), max(end, hit[-1][1])


def placed_chunk(doc_id: str, text: str, start: int, end: int, *,
                 chunk_size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP) -> str:
    """The id of the first chunk of that chunking that holds ``text[start:end]``; when no
    single chunk holds it (cut by a boundary), the first of the first two adjacent chunks
    that do together (the run reports the label as ``split``), else the last chunk it
    starts in (the first of the fewest chunks that hold it, as anchoring finds them)."""
    spans = windows(len(text), chunk_size, overlap)
    for seq, (a, b) in enumerate(spans, start=1):
        if a <= start and end <= b:
            return chunk_id(doc_id, seq)
    for seq, ((a, _), (_, b)) in enumerate(zip(spans, spans[1:], strict=False), start=1):
        if a <= start and end <= b:
            return chunk_id(doc_id, seq)
    starts_in = [seq for seq, (a, b) in enumerate(spans, start=1) if a <= start < b]
    return chunk_id(doc_id, starts_in[-1] if starts_in else 1)


def claim_label(doc_id: str, text: str, start: int, end: int, *,
                required_terms: list[str] | None = None, grade: int = 1,
                chunking: tuple[int, int] = (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)
                ) -> GoldEvidence:
    """A gold label for the evidence ``text[start:end]`` of document ``doc_id``: its claim is
    the sentence holding it, its chunk the chunk of ``chunking`` (size, overlap) holding the
    claim."""
    a, b = claim_span(text, start, end)
    return GoldEvidence(chunk_id=placed_chunk(doc_id, text, a, b, chunk_size=chunking[0],
                                              overlap=chunking[1]), doc_id=doc_id,
                        support_claim=text[a:b].strip(), required_terms=required_terms or [],
                        grade=grade)


# --- the folder -------------------------------------------------------------------------


def _dump(record: Question | GoldRecord) -> dict[str, Any]:
    # Required fields (answerable, gold_evidence) have no default: always written.
    return record.model_dump(mode="json", exclude_defaults=True)


MAX_FILE_STEM_BYTES = 200  # a file name may have 255 bytes; room for ".json" and a suffix


def document_file_names(doc_ids: Sequence[str], source: str | Path) -> dict[str, str]:
    """A file name (``<slug>.json``) for each document id, never one for two ids: ids that
    slugify alike (``Foo Bar``, ``foo-bar``, ``FOO_BAR`` → ``foo-bar``) keep the slug for
    the first and get ``<slug>-<8 hex of the id's SHA-256>`` after it, so no document
    overwrites another (the id itself stays inside the file). An id whose slug is empty
    (``"!!!"``) or longer than 200 bytes is an error naming the id."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for doc_id in doc_ids:
        if doc_id in names:
            continue
        try:
            slug = slugify(doc_id)
        except InputError:
            raise InputError(source, f"doc_id {doc_id!r} has no letter or digit to name its "
                             "file after; give the document an id with one",
                             field="doc_id") from None
        if len(slug.encode("utf-8")) > MAX_FILE_STEM_BYTES:
            raise InputError(source, f"doc_id {doc_id[:40]!r}... is {len(slug.encode())} "
                             f"bytes as a file name; at most {MAX_FILE_STEM_BYTES}: give the "
                             "document a shorter id", field="doc_id")
        if slug in taken:
            slug = f"{slug}-{hashlib.sha256(doc_id.encode('utf-8')).hexdigest()[:8]}"
        taken.add(slug)
        names[doc_id] = f"{slug}.json"
    return names


def config_name(preset: str) -> str:
    """``config.yaml`` for the naive baseline, ``config.<preset>.yaml`` for another preset."""
    return "config.yaml" if preset == "naive_baseline" else f"config.{preset}.yaml"


def _config_text(imported: ImportedSet, preset: str, command: str) -> str:
    import yaml

    pipeline = {"name": preset, "top_k": 10, **imported.config.get("pipeline", {})}
    pipeline["name"] = preset
    if preset != CONTRACT_PRESET:  # the baseline's backend is the config's default
        pipeline["retrieval_backend"] = PRESETS[preset]["retrieval_backend"]
    body: dict[str, Any] = {
        "index_dir": "index", "source_dir": "documents",
        "questions_path": "questions.jsonl", "gold_evidence_path": "gold.jsonl",
        "output_root": "runs", "seed": 0, "pipeline": pipeline,
        "index": {"chunk_size": imported.chunking[0], "overlap": imported.chunking[1],
                  "embedder": "hashing"},
        "metrics": {"retrieval": list(RETRIEVAL_METRICS)},
        **{k: v for k, v in imported.config.items() if k != "pipeline"},
    }
    size, overlap = imported.chunking
    index_opts = ("" if imported.chunking == (DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP)
                  else f" --chunk-size {size} --overlap {overlap}")
    head = (f"# Imported from {imported.format} ({Path(imported.source).name}) by `{command}`.\n"
            "# Relative paths are relative to this file. Build the index, then run:\n"
            f"#   ragassay index --source DIR/documents --out DIR/index{index_opts}\n"
            f"#   ragassay run -c DIR/{config_name(preset)}\n")
    if preset != "naive_baseline":  # BM25 (alone or in the hybrid) is an optional extra
        head += ("# Needs the bm25 extra (bm25s; kiwipiepy only for Korean text):\n"
                 f"#   {install_line('bm25')}\n")
    return head + yaml.safe_dump(body, allow_unicode=True, sort_keys=False)


def write_set(imported: ImportedSet, out: str | Path, *, command: str,
              force: bool = False, report_name: str | None = "import.json",
              also: Callable[[FolderWriter], None] | None = None) -> Path:
    """Write the set to ``out`` atomically (:func:`ragassay.atomic.write_folder`): an
    existing folder is refused unless ``force``, and is never half-overwritten.

    ``report_name``: the file of the import report (``None``: none, for a set that records
    its making elsewhere, as ``ragassay generate`` does in ``generation.json``); ``also``
    adds further files to the folder before it is renamed into place (a built index)."""
    if not imported.questions:
        raise InputError(imported.source, "no question to import")
    report = {"source": imported.source, "format": imported.format,
              "counts": imported.counts(),
              "skipped": [vars(s) for s in imported.skipped], "notes": imported.notes,
              **({"config_keys": imported.mapping} if imported.mapping else {})}

    def fill(w: FolderWriter) -> None:
        if imported.documents:
            w.text("documents/documents.jsonl", jsonl_text(imported.documents))
        for name, data in imported.files.items():
            w.bytes(f"documents/{name}", data)
        w.text("questions.jsonl", jsonl_text(_dump(q) for q in imported.questions))
        w.text("gold.jsonl", jsonl_text(_dump(g) for g in imported.gold))
        for preset in ("naive_baseline", "bm25", "hybrid"):
            w.text(config_name(preset), _config_text(imported, preset, command))
        for name, text in imported.extra.items():
            w.text(name, text)
        if report_name is not None:
            w.text(report_name, json_text(report))
        if also is not None:
            also(w)

    return write_folder(out, fill, force=force)

