"""The header of a run's views: what was measured, read from the run record in one place.

``report.html``, ``summary.md``, the terminal and the comparison page all show
:func:`run_facts`, so they name the same system:

- a run of predictions from a file: ``system: predictions from a file, judged at k=3``
  (and, when the file is one a live run wrote, whose replies they are);
- a run of a live system: ``system: HTTP system at http://127.0.0.1:8000/ask, asked for k=3``
  or ``system: Python callable shop.rag:answer, asked for k=3`` (from ``system.json``, the
  identity the run recorded in ``metrics.json`` → ``provenance.system``);
- a run of the built-in pipeline: ``pipeline: naive_baseline (k=10, dense retrieval,
  extractive answerer)``.

The evidence is the index (embedding model, chunking) or the chunk file the predictions
name. Values a record does not hold read ``—``.
"""

from __future__ import annotations

from typing import Any

from ..runfolder import RunMetrics

NONE = "—"


def _get(d: dict[str, Any] | None, key: str) -> Any:
    value = (d or {}).get(key)
    return NONE if value is None or value == "" else value


def system_text(identity: dict[str, Any] | None) -> str | None:
    """A system's identity (``system.json``) as words: ``HTTP system at URL``, ``Python
    callable NAME`` (with its ``system_version`` values when it reported any); None when
    there is none."""
    if not isinstance(identity, dict) or not identity:
        return None
    kind = identity.get("kind")
    if kind == "http":
        text = f"HTTP system at {_get(identity, 'url')}"
    elif kind == "python":
        text = f"Python callable {_get(identity, 'callable')}"
    else:
        text = f"{kind or 'a'} system"
    versions = [str(v) for v in identity.get("system_version") or []]
    return text + (f" (version {', '.join(versions)})" if versions else "")


def system_fact(m: RunMetrics) -> tuple[str, str]:
    """``("system", ...)`` for predictions and live systems, ``("pipeline", ...)`` for the
    built-in pipeline (see the module docstring)."""
    k = m.checks.k
    identity = system_text(getattr(m.provenance, "system", None))
    if m.mode == "predictions":
        return "system", (f"predictions from a file, judged at k={k}"
                          + (f" (replies of the {identity})" if identity else ""))
    if m.mode == "system":
        return "system", f"{identity or 'a live system'}, asked for k={k}"
    pipe = m.pipeline
    answerer = (m.answerer or {}).get("kind")
    return "pipeline", (f"{_get(pipe, 'name')} (k={k}, {_get(pipe, 'retrieval_backend')} "
                        "retrieval" + (f", {answerer} answerer)" if answerer else ")"))


def evidence_fact(m: RunMetrics) -> tuple[str, str]:
    """``("index", ...)`` (embedding model and chunking) or ``("evidence", ...)`` (a chunk
    file), with the chunk and document counts."""
    index = m.provenance.index or {}
    emb = index.get("embedding") or {}
    build = index.get("build") or {}
    chunking = build.get("chunking") or {}
    counts = (f"{_get(build, 'num_chunks')} chunks from {_get(build, 'num_documents')} "
              "documents")
    if not emb:
        return "evidence", f"chunk file {_get(build, 'source_dir')}, {counts}"
    return "index", (f"{_get(emb, 'backend')} {_get(emb, 'model')} (dimension "
                     f"{_get(emb, 'dimension')}), {_get(chunking, 'strategy')} chunks of "
                     f"{_get(chunking, 'chunk_size')} chars with {_get(chunking, 'overlap')} "
                     f"overlap; {counts}")


def run_facts(m: RunMetrics) -> list[tuple[str, str]]:
    """The header of a run as ``(label, text)`` pairs: system or pipeline, index or
    evidence, questions, seed, config, package, and when it was made."""
    c = m.counts
    prov = m.provenance
    facts = [system_fact(m), evidence_fact(m),
             ("questions", f"{c.questions} ({c.answerable} answerable, {c.unanswerable} "
                           "unanswerable)"),
             ("seed", f"{prov.seed} (bootstrap 95% confidence intervals)")]
    if prov.config_path:
        facts.append(("config", f"{prov.config_path} (sha256 {prov.config_sha256[:12]})"))
    facts.append(("package", f"ragassay {_get(prov.package, 'version')}"))
    created = (m.timings or {}).get("created_at")
    if created:
        facts.append(("created", str(created)))
    return facts
