"""The generation loop: sample, pick, propose (one call), check, answer again (a second call),
keep.

Each seed of :func:`~.sampling.seeds` gets its support sentence(s) and answer span(s) picked
deterministically (:func:`~.select.candidates`; a seed without one is skipped, no call made);
the model is asked only for the question.

Rounds, until every kind has its quota (:func:`~.sampling.quotas`) or the candidate budget
(``oversample · n``) or the chunks run out: each round takes, per kind still short, twice the
missing number of seeds; their proposal calls run on the client's concurrency; the
deterministic checks (:func:`~.checks.check_candidate`) run on the replies; the survivors'
second calls run; then, in sampling order, each survivor is tested against the questions
kept before it (near-duplicates) and kept while its kind is short. An item passing every
check after its kind is full is ``surplus`` (listed, not a drop). The order of keeping
depends on the sampling order only, never on thread scheduling, so the same seed, model and
chunks give the same set — and with the client's cache, without a single new call.

A failed call is the item's ``endpoint_error``; when the client stops (fail fast: the
endpoint went away), no further round starts and the result says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..answer.prompt import TOKENIZER, count_tokens
from ..endpoint import EndpointError, OpenAICompatClient, deadline_after, map_bounded
from ..schema import Chunk
from .checks import (
    DROP_REASONS,
    Candidate,
    Drop,
    Support,
    answers_match,
    check_candidate,
    document_language,
    near_duplicate,
)
from .prompts import (
    ANSWER_FORMAT,
    answer_messages,
    proposal_format,
    proposal_messages,
    read_answer,
    read_fields,
)
from .sampling import DEFAULT_MIX, KINDS, Corpus, quotas
from .select import Pick, candidates

OVERSAMPLE = 4


@dataclass
class Options:
    """What was asked: ``n`` items, the ``mix`` of kinds, the ``seed`` of sampling, at most
    ``oversample · n`` candidates, and whether structured output is asked for."""

    n: int
    seed: int = 0
    mix: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    oversample: int = OVERSAMPLE
    structured: bool = True


@dataclass
class Usage:
    """Calls and tokens of a generation (cached calls count their original tokens)."""

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    counted: int = 0  # calls whose tokens were counted (the server reported none)
    cost: float | None = None
    models: set[str] = field(default_factory=set)  # the model names the replies carried

    def add(self, result: Any, messages: list[dict[str, str]], price: Callable[..., Any]
            ) -> None:
        self.calls += 1
        self.cached += bool(result.cached)
        if result.raw_model:
            self.models.add(result.raw_model)
        if result.usage is not None:
            p, c = result.usage["prompt_tokens"], result.usage["completion_tokens"]
        else:
            self.counted += 1
            p = sum(count_tokens(m["content"]) for m in messages)
            c = count_tokens(result.text)
        self.prompt_tokens += p
        self.completion_tokens += c
        cost = price(p, c)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "cached_calls": self.cached,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "counted_calls": self.counted, "tokenizer": TOKENIZER if self.counted else None,
                "cost": self.cost}


@dataclass
class Record:
    """One candidate and what became of it: ``kept``, ``dropped`` (with ``drop``) or
    ``surplus``; the replies as received."""

    candidate: Candidate
    status: str = "dropped"
    drop: Drop | None = None
    replies: list[str] = field(default_factory=list)
    second_answer: str | None = None


@dataclass
class Generation:
    """The outcome: every candidate's :class:`Record` in sampling order, the kept ones, the
    quotas, the usage, the model's identity and why the loop stopped early (if it did)."""

    corpus: Corpus
    options: Options
    records: list[Record]
    quotas: dict[str, int]
    usage: Usage
    model: dict[str, Any]
    seconds: float
    stopped: str | None = None

    @property
    def kept(self) -> list[Record]:
        return [r for r in self.records if r.status == "kept"]

    @property
    def short(self) -> bool:
        """Fewer items kept than asked for."""
        return len(self.kept) < self.options.n


def _candidate(item_id: str, kind: str, chunks: list[Chunk], fields: dict[str, Any]
               ) -> Candidate:
    ids = [c.chunk_id for c in chunks]
    c = Candidate(item_id, kind, ids, fields["question"])
    if kind == "two_chunk":
        c.supports = [Support(ids[0], fields["answer_1"], fields["sentence_1"]),
                      Support(ids[1], fields["answer_2"], fields["sentence_2"])]
    elif kind == "unanswerable":
        c.missing = list(fields["missing"])
    else:
        c.supports = [Support(ids[0], fields["answer"], fields["sentence"])]
        if kind == "distractor":
            c.chunk_ids, c.distractor = ids[:1], ids[1]
    return c


def generate(corpus: Corpus, client: OpenAICompatClient, options: Options, *,
             progress: Callable[[int], None] | None = None) -> Generation:
    """Build up to ``options.n`` verified items from ``corpus`` with ``client``'s model (see
    the module docstring). ``progress(k)`` is told of every ``k`` calls done. Never raises
    for a reply or a failed call: both are recorded."""
    t0 = time.perf_counter()
    index = corpus.index
    want = quotas(options.n, options.mix)
    used: set[tuple[str, str]] = set()  # the (sentence, answer) pairs asked about
    pending = {k: candidates(k, index, options.seed, used) for k in KINDS if want.get(k)}
    kept: dict[str, int] = dict.fromkeys(want, 0)
    kept_questions: list[str] = []
    records: list[Record] = []
    usage = Usage()
    budget = options.oversample * options.n
    stopped: str | None = None
    concurrency = client.concurrency
    deadline = deadline_after(client.cfg.run_timeout_s)

    def call(messages: list[dict[str, str]], fmt: dict[str, Any]) -> Any:
        params = {"response_format": fmt} if options.structured else {}
        result = client.chat(messages, **params)
        return result, messages

    def texts(chunk_ids: list[str]) -> list[str]:
        return [index.chunk(c).text for c in chunk_ids]

    def done(results: list[Any]) -> None:
        for r in results:
            if not isinstance(r, EndpointError):
                usage.add(r[0], r[1], client.cfg.price_of)
        if progress is not None:
            progress(len(results))

    while budget > 0 and stopped is None:
        batch: list[tuple[str, list[Chunk], list[Pick]]] = []
        for kind in pending:
            need = want[kind] - kept[kind]
            for _ in range(min(2 * need, budget - len(batch)) if need > 0 else 0):
                seed = next(pending[kind], None)
                if seed is None:
                    break
                batch.append((kind, *seed))
        if not batch:
            break
        budget -= len(batch)
        jobs = []
        for kind, chunks, picks in batch:
            lang = document_language(chunks[0].text)
            jobs.append((proposal_messages(kind, picks, lang),
                         proposal_format(kind, picks, lang)))
        replies = map_bounded(lambda job: call(*job), jobs, concurrency, deadline)
        done(replies)
        fresh: list[Record] = []
        for (kind, chunks, picks), reply in zip(batch, replies, strict=True):
            item_id = f"c{len(records) + len(fresh) + 1:04d}"
            if isinstance(reply, EndpointError):
                rec = Record(Candidate(item_id, kind, [c.chunk_id for c in chunks], ""),
                             drop=Drop("endpoint_error", str(reply)))
            else:
                text = reply[0].text
                fields = read_fields(text, kind, picks)
                if fields is None:
                    rec = Record(Candidate(item_id, kind, [c.chunk_id for c in chunks], ""),
                                 drop=Drop("unparsable_reply", text[:300]), replies=[text])
                else:
                    cand = _candidate(item_id, kind, chunks, fields)
                    rec = Record(cand, drop=check_candidate(cand, index), replies=[text])
            fresh.append(rec)
        second = [r for r in fresh if r.drop is None and r.candidate.kind != "unanswerable"]
        checks = map_bounded(
            lambda r: call(answer_messages(r.candidate.question, texts(r.candidate.chunk_ids),
                                           document_language(texts(r.candidate.chunk_ids)[0])),
                           ANSWER_FORMAT), second, concurrency, deadline)
        done(checks)
        for r, res in zip(second, checks, strict=True):
            if isinstance(res, EndpointError):
                r.drop = Drop("endpoint_error", str(res))
                continue
            r.replies.append(res[0].text)
            r.second_answer = read_answer(res[0].text)
            if r.second_answer is None:
                r.drop = Drop("unparsable_reply", "second call: " + res[0].text[:300])
            elif not answers_match(r.candidate.answers, r.second_answer):
                r.drop = Drop("not_answerable_from_chunk",
                              f"the second call answered {r.second_answer!r}, expected "
                              f"{' + '.join(repr(a) for a in r.candidate.answers)}")
        for r in fresh:
            if r.drop is None:
                r.drop = near_duplicate(r.candidate.question, kept_questions)
            if r.drop is None:
                if kept[r.candidate.kind] < want[r.candidate.kind]:
                    r.status = "kept"
                    kept[r.candidate.kind] += 1
                    kept_questions.append(r.candidate.question)
                else:
                    r.status = "surplus"
        records.extend(fresh)
        if client.unreachable is not None:
            stopped = client.unreachable
    if stopped is None and any(kept[k] < want[k] for k in want):
        stopped = ("candidate budget spent" if budget <= 0
                   else "no more chunks to sample for " + ", ".join(
                       k for k in want if kept[k] < want[k]))
    model = {"model": client.cfg.model, "base_url": client.shown_url,
             "served": client.server_model if client.unreachable is None else None,
             "reply_models": sorted(usage.models)}
    return Generation(corpus, options, records, want, usage, model,
                      time.perf_counter() - t0, stopped)


def drop_counts(records: list[Record]) -> dict[str, int]:
    """Dropped candidates per reason (every reason of :data:`DROP_REASONS`, 0 where none)."""
    out = dict.fromkeys(DROP_REASONS, 0)
    for r in records:
        if r.status == "dropped" and r.drop is not None:
            out[r.drop.reason] += 1
    return out
