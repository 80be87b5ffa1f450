"""The evaluation config (`configs/eval/*.yaml`): schema, contract checks, file:line errors."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from .endpoint import EndpointConfig, check_api_key, probe_endpoint, redact_url
from .errors import InputError
from .jsonio import parse_record
from .metrics.measures import ANSWER_MEASURES, parse_measure
from .metrics.retrieval import default_retrieval_measures, rag_measure
from .schema import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP, Question
from .system.config import SystemConfig
from .yamlio import read_yaml

# Keys of the contract's config format that no pipeline implements: every preset requires
# exactly these values (checked in one place, `check_contract`), so a config asking for a
# reranker, metadata-first retrieval, a verifier retry or query expansion is refused with the
# key named instead of being silently ignored.
NOT_IMPLEMENTED_KEYS: dict[str, Any] = {
    "metadata_first": False,
    "rerank": False,
    "verifier_retry": False,
    "query_expansion": "identity",
}
# Each preset fixes its pipeline keys: any other value would be a different pipeline. The
# naive baseline is the contract's; the others change the retriever only (a backend of
# `ragassay.retrieve.RETRIEVERS`), so that the same harness compares them question by question.
_NAIVE: dict[str, Any] = {"retrieval_backend": "dense", **NOT_IMPLEMENTED_KEYS}
PRESETS: dict[str, dict[str, Any]] = {
    "naive_baseline": _NAIVE,
    "bm25": {**_NAIVE, "retrieval_backend": "bm25"},
    "hybrid": {**_NAIVE, "retrieval_backend": "hybrid"},
    "dense_use": _NAIVE,  # dense over an index built with the use-multilingual embedder
    "dense_e5": _NAIVE,  # dense over an index built with the e5-small embedder
}
# Presets over the dense backend that need an index built with a given embedder.
PRESET_EMBEDDER: dict[str, str] = {"dense_e5": "e5-small", "dense_use": "use-multilingual"}
KNOWN_PIPELINES = tuple(PRESETS)  # the built-in presets


def register_preset(name: str, *, retrieval_backend: str,
                    embedder: str | None = None) -> None:
    """Add a preset: the naive baseline with another retriever backend (registered with
    :func:`ragassay.retrieve.register_retriever`), and optionally the embedder its index must
    be built with. A name registered twice raises :class:`ValueError`."""
    if name in PRESETS:
        raise ValueError(f"preset {name!r} is registered twice")
    PRESETS[name] = {**_NAIVE, "retrieval_backend": retrieval_backend}
    if embedder is not None:
        PRESET_EMBEDDER[name] = embedder
# The contract's minimums, checked by the contract command for its preset (naive_baseline):
# the baseline is measured at k = 10 on a set with enough questions of both kinds to say
# something. `ragassay run`, the sweep and the other presets are free (any k, any set).
CONTRACT_PRESET = "naive_baseline"
CONTRACT_TOP_K = 10
CONTRACT_MIN_ANSWERABLE = 10
CONTRACT_MIN_UNANSWERABLE = 3

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PipelineConfig(_Strict):
    """``name``: a preset of :data:`PRESETS`, which fixes ``retrieval_backend`` and the keys of
    :data:`NOT_IMPLEMENTED_KEYS` (``metadata_first``, ``rerank``, ``verifier_retry``: false;
    ``query_expansion``: identity). Those four are in the contract's config format but no
    pipeline implements them: they must keep these values, any other is an error naming the
    key."""

    name: str = "naive_baseline"
    top_k: int = Field(10, ge=1)
    retrieval_backend: str = "dense"
    metadata_first: bool = False
    rerank: bool = False
    verifier_retry: bool = False
    query_expansion: str = "identity"


class IndexBuildConfig(_Strict):
    """How `source_dir` is indexed when the index is (re)built for this config."""

    chunk_size: int = Field(DEFAULT_CHUNK_SIZE, ge=1)
    overlap: int = Field(DEFAULT_OVERLAP, ge=0)
    embedder: str = "hashing"
    embedder_params: dict[str, Any] = Field(default_factory=dict)


class AnswererConfig(_Strict):
    """`kind: extractive` (offline default) or `kind: llm` with the endpoint keys of
    :class:`ragassay.endpoint.EndpointConfig` (base_url, model, api_key_env, temperature,
    max_tokens, timeout_s, max_retries, concurrency, run_timeout_s, cache_dir,
    fail_fast_after, prompt_price_per_mtok, completion_price_per_mtok).

    Prices: ``prompt_price_per_mtok`` and ``completion_price_per_mtok`` are the prices of a
    million prompt / completion tokens, currency-agnostic (ragassay neither names nor
    converts a currency: the costs are in whatever unit the prices are). Give both or
    neither. With them each answer's ``usage.cost`` and the run's ``metrics.json`` →
    ``cost.total`` are computed; without them both are ``null`` (unknown, never 0). The
    judge section accepts the same keys, with the same defaults (those of
    :class:`~ragassay.endpoint.EndpointConfig`, for a local CPU server); judge calls are not
    priced yet."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["extractive", "llm"] = "extractive"
    max_sentences: int = Field(2, ge=1)
    min_support: float = Field(0.5, ge=0.0, le=1.0)
    decline_phrase: str = "I don't know"

    @model_validator(mode="after")
    def _endpoint_keys(self) -> AnswererConfig:
        extra = dict(self.model_extra or {})
        if self.kind == "extractive" and extra:
            raise ValueError(f"unknown key {next(iter(extra))!r} for kind: extractive "
                             "(endpoint keys need kind: llm)")
        if self.kind == "llm":
            EndpointConfig.model_validate(extra)  # errors name the endpoint key
        return self

    @model_serializer(mode="wrap")
    def _redacted(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The dump is written to metrics.json (and shown in the report): no key in base_url.
        data: dict[str, Any] = handler(self)
        if isinstance(data.get("base_url"), str):
            data["base_url"] = redact_url(data["base_url"])
        return data

    def endpoint(self) -> EndpointConfig:
        return EndpointConfig.model_validate(dict(self.model_extra or {}))


class MetricsConfig(_Strict):
    # not given: default_retrieval_measures(pipeline.top_k), set by EvalConfig
    retrieval: list[str] = Field(default_factory=lambda: default_retrieval_measures(10))
    answer: list[str] = Field(default_factory=lambda: list(ANSWER_MEASURES))
    hit_policy: Literal["any", "all"] = "any"
    # 100,000 resamples already give CI bounds stable to the fourth decimal; more is minutes
    # of work per metric for nothing
    bootstrap_resamples: int = Field(2000, ge=100, le=100_000)
    # right = claim_recall >= this where a question has no must_contain (None: off)
    right_by_claim_recall: float | None = Field(None, ge=0.0, le=1.0)
    # JSONL of people's values of judged measures ({question_id, measure, value}): the
    # judged means are then corrected by PPI++ (ragassay.metrics.ppi)
    labels_path: Path | None = None


class ClaimsConfig(_Strict):
    """How answers are split into claims (see docs/claims.md): ``sentences`` (the
    deterministic splitter) or ``llm`` (through the judge's endpoint, falling back to the
    splitter when its replies are invalid; needs ``judge:``)."""

    decompose: Literal["sentences", "llm"] = "sentences"


class DiagnoseConfig(_Strict):
    """Thresholds of the failure detectors (see `ragassay.diagnose`)."""

    rank_cutoff: int = Field(5, ge=1)
    weak_evidence_score: float = 0.25
    similar_clause: float = Field(0.6, ge=0.0, le=1.0)
    repeated_line_share: float = Field(0.5, ge=0.0, le=1.0)


class ExecutorConfig(_Strict):
    """Where the independent units of a run (retrieve a batch of questions, answer, score or
    judge one question) run: see :mod:`ragassay.executor`. The results are the same for
    every kind and worker count; only the time changes."""

    kind: Literal["local", "process", "ray"] = "local"
    # None: the cores of this machine (process, a local ray); local always uses 1
    workers: int | None = Field(None, ge=1)
    # ray only: the cluster to join (``ray://host:10001`` or ``host:6379``); None starts a
    # local Ray on 127.0.0.1 for the run
    address: str | None = None

    @field_validator("address")
    @classmethod
    def _address_for_ray(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("kind") != "ray":
            raise ValueError("a cluster address is for kind: ray")
        return value


class EvalConfig(_Strict):
    index_dir: Path | None = None
    source_dir: Path | None = None
    # Bring your own system: its predictions, and optionally a plain chunk file as evidence.
    predictions_path: Path | None = None
    chunks_path: Path | None = None
    questions_path: Path | None = None  # required for a run (checked by check_contract)
    gold_evidence_path: Path | None = None
    output_root: Path = Path("experiments/runs")
    seed: int = Field(0, ge=0, le=2**32 - 1)  # numpy's seeds are unsigned 32-bit
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    index: IndexBuildConfig = Field(default_factory=IndexBuildConfig)
    answerer: AnswererConfig = Field(default_factory=AnswererConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    diagnose: DiagnoseConfig = Field(default_factory=DiagnoseConfig)
    # Unknown keys in question, gold and prediction rows: warnings instead of errors.
    lenient: bool = False
    # Phrases that mark an answer as an honest decline, besides the built-in ko/de/en ones.
    decline_phrases: list[str] = Field(default_factory=list)
    # Optional claim-level judge through an OpenAI-compatible endpoint.
    judge: EndpointConfig | None = None
    # How answers are split into claims (the LLM decomposition goes to the judge's endpoint).
    claims: ClaimsConfig = Field(default_factory=ClaimsConfig)
    # A system under test, called as it runs (URL or package.module:function; docs/system.md)
    system: SystemConfig | None = None
    # Where the run's units run (local, process, ray); not part of what is measured.
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    # CI bars on metric means, e.g. {recall_at_5: ">= 0.8"}; see `ragassay gate`.
    gate: dict[str, Any] = Field(default_factory=dict)

    # Set by load_config: where it came from, for provenance.
    path: Path | None = Field(default=None, exclude=True)
    sha256: str = Field(default="", exclude=True)

    @field_validator("claims")
    @classmethod
    def _llm_decomposition_needs_a_judge(cls, value: ClaimsConfig, info: ValidationInfo,
                                         ) -> ClaimsConfig:
        if value.decompose == "llm" and info.data.get("judge") is None:
            raise ValueError("decompose: llm sends answers to the judge's endpoint: add a "
                             "judge: block (base_url, model) or use decompose: sentences")
        return value

    @model_validator(mode="after")
    def _retrieval_follows_k(self) -> EvalConfig:
        # Not in fields_set: a later validation of this config with another top_k (--k)
        # follows that k too.
        if "retrieval" not in self.metrics.model_fields_set:
            self.metrics.__dict__["retrieval"] = default_retrieval_measures(self.pipeline.top_k)
        return self

    def retrieval_cutoffs(self) -> list[int]:
        """Every k the configured retrieval metrics need, plus the pipeline's top_k."""
        ks = {self.pipeline.top_k}
        for name in self.metrics.retrieval:
            cutoff = rag_measure(name).cutoff
            if cutoff is not None:
                ks.add(int(cutoff))  # a RAG cutoff is a rank
        return sorted(ks)


def _key_lines(path: Path) -> dict[str, int]:
    """Map dotted field paths (`pipeline.top_k`, `metrics.retrieval.2`) to 1-based lines."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return {}
    lines: dict[str, int] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = f"{prefix}{key.value}"
                lines[name] = key.start_mark.line + 1
                walk(value, name + ".")
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[f"{prefix}{i}"] = item.start_mark.line + 1
                walk(item, f"{prefix}{i}.")

    walk(root, "")
    return lines


def _error(path: Path, lines: dict[str, int], field: str, message: str) -> InputError:
    # Point at the field itself, or at its nearest parent that is written in the file.
    probe = field
    while probe and probe not in lines:
        probe = probe.rpartition(".")[0]
    return InputError(path, message, line=lines.get(probe), field=field)


# Keys that hold paths: a relative path written in a config is relative to the config's folder.
PATH_KEYS = ("index_dir", "source_dir", "predictions_path", "chunks_path", "questions_path",
             "gold_evidence_path", "output_root", "answerer.cache_dir", "judge.cache_dir",
             "system.cache_dir", "metrics.labels_path")


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    for dotted in PATH_KEYS:
        *parents, key = dotted.split(".")
        node: Any = data
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(key), str) and node[key]:
            value = Path(node[key]).expanduser()
            node[key] = str(value if value.is_absolute()
                            else Path(os.path.normpath(base / value)))


def locate(exc: InputError) -> InputError:
    """``exc`` with the line of its field added, when it names a field of a config file
    (errors found after loading, e.g. a gate bar checked against a run's metrics)."""
    if exc.line is not None or exc.field is None or not Path(exc.path).is_file():
        return exc
    return _error(Path(exc.path), _key_lines(Path(exc.path)), exc.field, exc.message)


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> EvalConfig:
    """Read and check an evaluation config; errors name the file, line and field.

    Relative paths in the file are relative to the file's folder. ``overrides`` (dotted
    keys such as ``pipeline.top_k``; a value of None removes the key) are applied before
    the config is checked, as given (command-line paths are relative to the working folder).
    """
    p = Path(path)
    data = read_yaml(p)
    lines = _key_lines(p)
    _resolve_paths(data, p.parent)
    for dotted, value in (overrides or {}).items():
        *parents, key = dotted.split(".")
        node = data
        for part in parents:
            child = node.get(part)
            node = node.setdefault(part, {}) if not isinstance(child, dict) else child
        if value is None:
            node.pop(key, None)
        else:
            node[key] = str(value) if isinstance(value, Path) else value
    try:
        cfg = parse_record(EvalConfig, data, p)
    except InputError as exc:
        raise _error(p, lines, exc.field or "", exc.message) from None
    check_contract(cfg, p, lines)
    cfg.path = p
    cfg.sha256 = hashlib.sha256(p.read_bytes()).hexdigest()
    return cfg


def check_contract(cfg: EvalConfig, path: Path, lines: dict[str, int] | None = None) -> None:
    """Refuse a config that is not what its pipeline name promises."""
    lines = lines or {}
    for key in ("questions_path", "gold_evidence_path"):
        if getattr(cfg, key) is None:
            raise _error(path, lines, key, f"give {key}")
    if cfg.index_dir is None and cfg.chunks_path is None:
        raise _error(path, lines, "index_dir", "give index_dir (or chunks_path with "
                     "predictions_path to score another system's predictions)")
    if cfg.index_dir is None and cfg.predictions_path is None and cfg.system is None:
        raise _error(path, lines, "chunks_path", "a chunk file has no embeddings: it can only "
                     "score predictions; add predictions_path or system, or use index_dir")
    pipe = cfg.pipeline
    if pipe.name not in PRESETS:
        raise _error(path, lines, "pipeline.name",
                     f"unknown pipeline {pipe.name!r}; known: {', '.join(PRESETS)}")
    for key, want in PRESETS[pipe.name].items():
        got = getattr(pipe, key)
        if got != want:
            raise _error(
                path, lines, f"pipeline.{key}",
                f"{pipe.name} requires {key}: {_yaml_value(want)} (got {_yaml_value(got)}); "
                "a different setting is a different pipeline",
            )
    if cfg.index.overlap >= cfg.index.chunk_size:
        raise _error(path, lines, "index.overlap", "overlap must be smaller than chunk_size")
    # Metric names as written (`recall@5`, `recall.5`) become their canonical names, the
    # keys of the run folder; an unknown or unsuitable one is an error at its line.
    for group in ("retrieval", "answer"):
        names = getattr(cfg.metrics, group)
        for i, name in enumerate(names):
            try:
                measure = rag_measure(name) if group == "retrieval" else parse_measure(name)
            except ValueError as exc:
                raise _error(path, lines, f"metrics.{group}.{i}", str(exc)) from None
            if measure.group != group:
                raise _error(path, lines, f"metrics.{group}.{i}", f"{measure} is an "
                             f"{measure.group} metric; list it under metrics.{measure.group}")
            names[i] = str(measure)


def check_contract_top_k(cfg: EvalConfig, *, k_option: bool = False) -> None:
    """The contract command measures its preset at ``top_k`` 10 (at least): an error naming
    the config's ``pipeline.top_k`` (or ``--k``) otherwise. Other presets are free."""
    if cfg.pipeline.name != CONTRACT_PRESET or cfg.pipeline.top_k >= CONTRACT_TOP_K:
        return
    message = (f"the contract measures {CONTRACT_PRESET} at top_k {CONTRACT_TOP_K} (got "
               f"{cfg.pipeline.top_k}); use `ragassay run` for another k")
    if k_option:
        raise InputError("--k", message)
    raise locate(InputError(cfg.path or "config", message, field="pipeline.top_k"))


def check_contract_questions(cfg: EvalConfig, questions: Sequence[Question]) -> None:
    """The contract command's set has at least 10 answerable and 3 unanswerable questions:
    an error naming the questions file and the count otherwise. Other presets are free."""
    if cfg.pipeline.name != CONTRACT_PRESET:
        return
    answerable = sum(1 for q in questions if q.answerable)
    for what, have, need in (("answerable", answerable, CONTRACT_MIN_ANSWERABLE),
                             ("unanswerable", len(questions) - answerable,
                              CONTRACT_MIN_UNANSWERABLE)):
        if have < need:
            raise InputError(cfg.questions_path or "questions", f"the contract needs at least "
                             f"{need} {what} questions, the file has {have}; add questions, "
                             "or use `ragassay run` (free of the contract's minimums)",
                             field="answerable")


def _yaml_value(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def check_endpoints(cfg: EvalConfig, *, probe: bool = True,
                    sections: tuple[str, ...] = ("answerer", "judge")) -> None:
    """Before any work of a run: the endpoints the run will call — the LLM answerer (when
    ``answerer.kind`` is ``llm`` and no predictions file replaces it) and the judge (when
    configured) — have their key variable set and, with ``probe``, something answering at
    their ``base_url`` (one short ``GET /models`` per distinct URL; see
    :func:`ragassay.endpoint.probe_endpoint`). Raises :class:`InputError` naming the config
    file, the line and the field (``answerer.api_key_env``, ``judge.base_url`` …).
    ``sections`` limits the check (``("judge",)`` for ``judge-check``)."""
    path: str | Path = cfg.path or "config"
    targets: list[tuple[str, EndpointConfig]] = []
    if ("answerer" in sections and cfg.answerer.kind == "llm"
            and cfg.predictions_path is None and cfg.system is None):
        targets.append(("answerer", cfg.answerer.endpoint()))
    if "judge" in sections and cfg.judge is not None:
        targets.append(("judge", cfg.judge))
    try:
        if "answerer" in sections and cfg.system is not None and cfg.predictions_path is None:
            check_api_key(cfg.system, what="system", path=path)  # the system is not probed
        for what, endpoint in targets:  # all keys first: no network for a missing one
            check_api_key(endpoint, what=what, path=path)
        probed: set[str] = set()
        for what, endpoint in targets:
            if probe and endpoint.base_url not in probed:
                probed.add(endpoint.base_url)
                probe_endpoint(endpoint, what=what, path=path)
    except InputError as exc:
        raise locate(exc) from None

