"""The built-in pipelines: the naive baseline (dense top-k, then the answerer) and the
retriever presets compared against it (bm25, hybrid, dense_use, dense_e5).

It produces the same `Prediction` records a user's own system would write, so the built-in
pipeline and any other system are scored by exactly the same code.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from . import progress as stages
from .answer.extractive import DECLINE_TEXT, ExtractiveAnswerer
from .answer.llm import LLMAnswerer
from .answer.prompt import prompt_tokens
from .collector import collector_paused
from .config import EvalConfig, locate
from .endpoint import (
    EndpointConfig,
    EndpointError,
    OpenAICompatClient,
    check_api_key,
    deadline_after,
    map_bounded,
)
from .errors import InputError
from .index import Index
from .retrieve import Hit, Ranking, build_retriever
from .schema import Answer, Prediction, Question, Usage
from .text import guess_language

RETRIEVE_BATCH = 256  # queries per search call (the dense retriever's own batch size)


def answer_hits(ranking: Ranking, k: int, threshold: float | None = None) -> list[Hit]:
    """The hits the answerer reads: the first ``k`` of ``ranking``, scoring at least
    ``threshold`` when one is given. The scoring of a question whose answer call failed
    rebuilds its retrieved list with the same rule."""
    return [h for h in ranking.hits[:k] if threshold is None or h.score >= threshold]


class Pipeline:
    """The preset's retriever (the naive baseline's: dense top-k); the top-k chunks passed
    as they are to the answerer (the offline extractive one, or an OpenAI-compatible chat
    model). No reranking, rewriting, verification or retry in any preset."""

    def __init__(self, index: Index, cfg: EvalConfig) -> None:
        self.index = index
        self.retriever = build_retriever(index, cfg)
        self.answerer_cfg = cfg.answerer
        self.answerer: Any = None
        if cfg.answerer.kind == "llm":
            # Built now, once, not by the first answering threads: a named but unset key
            # variable is an InputError before the retrieval work (construction makes no
            # request; the connection opens on the first call).
            endpoint = cfg.answerer.endpoint()
            try:
                check_api_key(endpoint, what="answerer", path=cfg.path or "config")
            except InputError as exc:
                raise locate(exc) from None
            self.answerer = LLMAnswerer(OpenAICompatClient(endpoint),
                                        decline_phrase=cfg.answerer.decline_phrase)
        self.retrieve_s = 0.0  # the last retrieve call's time, all its batches

    def retrieve(self, questions: Sequence[Question], k: int,
                 track: Sequence[Iterable[int]] | None = None) -> list[Ranking]:
        """The ranking of each question's text; ``track[i]``: the index rows whose rank in
        the whole index question i's ranking records (its gold chunks)."""
        t0 = time.perf_counter()
        texts = [q.question for q in questions]
        rankings: list[Ranking] = []
        # In batches for the progress bar only: a query's ranking never depends on the
        # other queries of its batch (see retrieve.VectorRetriever, vector.ExactSearch).
        with stages.bar("retrieval", len(texts)) as bar:
            for start in range(0, len(texts), RETRIEVE_BATCH):
                batch = texts[start : start + RETRIEVE_BATCH]
                rankings += self.retriever.search(
                    batch, k, None if track is None else track[start : start + len(batch)])
                bar.advance(len(batch))
        # Queries are searched in batches: the time is the batches', not any one question's
        # (so a prediction's latency_ms holds its answer call only).
        self.retrieve_s = time.perf_counter() - t0
        return rankings

    def _answerer(self) -> Any:
        if self.answerer is None:
            a = self.answerer_cfg
            if a.kind == "llm":
                self.answerer = LLMAnswerer(OpenAICompatClient(a.endpoint()),
                                            decline_phrase=a.decline_phrase)
            else:
                self.answerer = ExtractiveAnswerer(max_sentences=a.max_sentences,
                                                   min_support=a.min_support)
        return self.answerer

    def _answer_one(self, question: Question, hits: list[Hit]) -> Prediction:
        # Validated by the Prediction, as dicts: a record each cost more (60,000 of them).
        retrieved: list[Any] = [{"chunk_id": h.chunk_id, "score": h.score} for h in hits]
        if not hits:  # nothing to read: decline without calling the answerer (no tokens)
            text = DECLINE_TEXT[guess_language(question.question)]
            return Prediction(question_id=question.question_id, retrieved=retrieved,
                              answer=Answer(text=text, status="insufficient"),
                              usage=Usage(source="not called"),
                              latency_ms={"answer": 0.0})
        context = [self.index.chunk(h.chunk_id) for h in hits]
        answerer = self._answerer()
        t0 = time.perf_counter()
        metadata: dict[str, Any] = {}
        if isinstance(answerer, LLMAnswerer):
            answer, reported = answerer.answer_with_usage(question.question, context)
            usage = Usage(prompt_tokens=reported["prompt_tokens"],
                          completion_tokens=reported["completion_tokens"],
                          source=reported["source"])
            if "served_model" in reported:  # noted by the run: not the model it names
                metadata["served_model"] = reported["served_model"]
        else:
            answer, completion_tokens = answerer.answer_counted(question.question, context)
            usage = Usage(prompt_tokens=prompt_tokens(question.question, context),
                          completion_tokens=completion_tokens, source="counted")
        ms = (time.perf_counter() - t0) * 1000
        return Prediction(question_id=question.question_id, retrieved=retrieved, answer=answer,
                          usage=usage, latency_ms={"answer": ms}, metadata=metadata)

    def predict_many(self, questions: Sequence[Question], rankings: Sequence[Ranking], k: int,
                     threshold: float | None = None, progress: bool = False,
                     endpoint: EndpointConfig | None = None,
                     ) -> tuple[dict[str, Prediction], dict[str, str]]:
        """Answer each question from its first k hits (scoring at least `threshold`).

        Returns the predictions and, for questions whose answerer call failed after its
        retries, the error: such a question's answer is reported as not measured, never
        scored (its retrieval is scored from its ranking, see :func:`answer_hits`).
        ``endpoint``: the LLM answerer's concurrency and run timeout to use instead of the
        config's (a worker's share of them, see :func:`ragassay.predict.answer_all`).
        """
        items = [(q, answer_hits(r, k, threshold))
                 for q, r in zip(questions, rankings, strict=True)]
        a = self.answerer_cfg
        on = True if progress else None  # else as the command line says (off in the API)
        if a.kind == "llm":
            cfg = endpoint or a.endpoint()
            # a worker's share, else the config's, else what the server says (/props)
            concurrency = cfg.concurrency or self._answerer().client.concurrency
            with stages.bar("answering", len(items), enabled=on) as bar:
                def answer(item: tuple[Question, list[Hit]]) -> Any:
                    try:  # the same call, counted when it ends (results and errors alike)
                        return self._answer_one(*item)
                    finally:
                        bar.advance()

                results: list[Any] = map_bounded(answer, items, concurrency,
                                                 deadline_after(cfg.run_timeout_s))
        else:
            seq: Iterable[tuple[Question, list[Hit]]] = stages.track(items, "answering",
                                                                     enabled=on)
            with collector_paused():  # see ragassay.collector
                results = [self._answer_one(q, hits) for q, hits in seq]
        preds: dict[str, Prediction] = {}
        errors: dict[str, str] = {}
        for (q, _), res in zip(items, results, strict=True):
            if isinstance(res, EndpointError):
                errors[q.question_id] = f"answerer call failed: {res}"
            else:
                preds[q.question_id] = res
        return preds, errors
