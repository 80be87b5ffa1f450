"""The built-in naive baseline: dense top-k retrieval, then the extractive answerer.

It produces the same `Prediction` records a user's own system would write, so the built-in
pipeline and any other system are scored by exactly the same code.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .answer.extractive import DECLINE_TEXT, ExtractiveAnswerer
from .answer.prompt import build_prompt, count_tokens
from .config import EvalConfig
from .embed import embedder_from_meta
from .index import Index
from .retrieve import DenseRetriever, Ranking
from .schema import Answer, InputError, Prediction, Question, RetrievedChunk, Usage
from .text import guess_language


class NaivePipeline:
    """Dense top-k over the index; the top-k chunks passed as they are to the answerer."""

    def __init__(self, index: Index, cfg: EvalConfig) -> None:
        if not index.meta.get("embedding"):
            raise InputError(index.path, "the built-in pipeline needs an index with embeddings "
                             "(build one with `ragassay index`); a chunk file can only score "
                             "predictions")
        self.index = index
        self.retriever = DenseRetriever(index, embedder_from_meta(index.meta["embedding"]))
        self.answerer = ExtractiveAnswerer(max_sentences=cfg.answerer.max_sentences,
                                           min_support=cfg.answerer.min_support)
        self.retrieve_ms = 0.0

    def retrieve(self, questions: Sequence[Question], k: int) -> list[Ranking]:
        t0 = time.perf_counter()
        rankings = self.retriever.search([q.question for q in questions], k)
        # Queries are searched in batches: each gets its share of the batch time.
        self.retrieve_ms = (time.perf_counter() - t0) * 1000 / max(len(questions), 1)
        return rankings

    def predict(self, question: Question, ranking: Ranking, k: int,
                threshold: float | None = None) -> Prediction:
        """Answer from the first k hits (those scoring at least `threshold`, when given).

        With no hit left the answerer is not called: the question is declined and costs no
        tokens.
        """
        hits = [h for h in ranking.hits[:k] if threshold is None or h.score >= threshold]
        retrieved = [RetrievedChunk(chunk_id=h.chunk_id, score=h.score) for h in hits]
        if not hits:
            text = DECLINE_TEXT[guess_language(question.question)]
            return Prediction(question_id=question.question_id, retrieved=retrieved,
                              answer=Answer(text=text, status="insufficient"),
                              usage=Usage(),
                              latency_ms={"retrieve": self.retrieve_ms, "answer": 0.0})
        context = [self.index.chunk(h.chunk_id) for h in hits]
        t0 = time.perf_counter()
        answer = self.answerer.answer(question.question, context, [h.score for h in hits])
        ms = (time.perf_counter() - t0) * 1000
        usage = Usage(prompt_tokens=count_tokens(build_prompt(question.question, context)),
                      completion_tokens=count_tokens(answer.text))
        return Prediction(question_id=question.question_id, retrieved=retrieved, answer=answer,
                          usage=usage, latency_ms={"retrieve": self.retrieve_ms, "answer": ms})
