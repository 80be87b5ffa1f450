"""Answer with an LLM behind any OpenAI-compatible endpoint, citing numbered sources.

The model gets two messages: a system message with the rules (answer from the sources
only, cite the sources' numbers, and reply exactly with the configured decline phrase when
the sources do not answer), and a user message that is
:func:`ragassay.answer.prompt.build_prompt` (the sources numbered ``[1]``, ``[2]``, … with
their ids, then the question and the language to answer in) — the same prompt whose tokens
the sweep counts.

The reply is parsed, not trusted:

- citations are the reply's markers mapped back to chunk ids by
  :mod:`ragassay.answer.citations` (``[1]``, ``[Source 1]``, ``[chunk-001]``, the full
  ``[doc::chunk-001]``), in order of first appearance, each with the chunk's first page
  when known and the marker as written (``raw``). A marker shaped like a citation that
  names no context chunk, or more than one, stays a citation under the id it was written
  with: a source the model never saw, failed by the metrics. Other brackets stay text;
- status is ``insufficient`` when the reply holds the decline phrase (or any of
  :data:`ragassay.metrics.answer.DEFAULT_DECLINE_PHRASES`) and cites nothing, or when it
  is nothing but citations (no word outside its markers: it states nothing); else
  ``supported`` — an empty reply is therefore a supported answer with no source, which
  the metrics fail as ungrounded, never credited as an abstention.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..endpoint import EndpointError, OpenAICompatClient, deadline_after, map_bounded
from ..metrics.answer import DEFAULT_DECLINE_PHRASES, strip_markers
from ..schema import Answer, Chunk
from ..text import contains_term
from .citations import citations_of, reply_markers
from .prompt import TOKENIZER, build_prompt, count_tokens

_WORD = re.compile(r"\w")

Messages = list[dict[str, str]]
PromptBuilder = Callable[[str, Sequence[Chunk]], str | Messages]
UsageDict = dict[str, Any]


def system_message(decline_phrase: str) -> str:
    """The rules the model gets; its last line carries the exact decline phrase."""
    return ("You answer questions about documents. Use only the sources in the user's "
            "message. After each statement, cite the source it comes from by its number in "
            "square brackets, like [1] or [2]. Answer in the language of the question. Do "
            "not add facts, numbers or requirements that the sources do not state.\n"
            f"If the sources do not answer the question, reply exactly: {decline_phrase}")


def parse_reply(text: str, context: Sequence[Chunk], decline_phrases: Sequence[str]) -> Answer:
    """An :class:`Answer` from a model reply (see the module docstring for the rules)."""
    reply = text.strip()
    citations = citations_of(reply_markers(reply, context), context)
    declined = not citations and any(contains_term(reply, p) for p in decline_phrases)
    only_citations = bool(citations) and not _WORD.search(strip_markers(reply))
    return Answer(text=reply, status="insufficient" if declined or only_citations
                  else "supported", citations=citations)


class LLMAnswerer:
    """Answer from the retrieved chunks with a chat model; same interface as
    :class:`ragassay.answer.extractive.ExtractiveAnswerer`, plus batch and usage methods.

    ``prompt_builder(question, context)`` may replace the user message (return a string)
    or the whole message list (return a list of ``{role, content}``). Deterministic when
    the endpoint is (temperature 0, a fixed model) and always with the client's cache.
    """

    def __init__(self, client: OpenAICompatClient, decline_phrase: str = "I don't know",
                 prompt_builder: PromptBuilder | None = None) -> None:
        if not decline_phrase.strip():
            raise ValueError("decline_phrase must not be blank")
        self.client = client
        self.decline_phrase = decline_phrase
        self.prompt_builder = prompt_builder
        self.decline_phrases: tuple[str, ...] = (decline_phrase, *DEFAULT_DECLINE_PHRASES)

    def messages(self, question: str, context: Sequence[Chunk]) -> Messages:
        """The chat messages sent for one question."""
        built: str | Messages = (self.prompt_builder or build_prompt)(question, context)
        if isinstance(built, list):
            return built
        return [{"role": "system", "content": system_message(self.decline_phrase)},
                {"role": "user", "content": built}]

    def answer(self, question: str, context: Sequence[Chunk],
               scores: Sequence[float] | None = None) -> Answer:
        """Answer one question (``scores`` is accepted and ignored). Raises
        :class:`EndpointError` when the endpoint fails after its retries."""
        return self.answer_with_usage(question, context)[0]

    def answer_with_usage(self, question: str, context: Sequence[Chunk],
                          ) -> tuple[Answer, UsageDict]:
        """The answer and its token usage: ``{prompt_tokens, completion_tokens, source,
        cached}`` where ``source`` is ``"reported"`` (the server's counts) or ``"counted"``
        (:data:`ragassay.answer.prompt.TOKENIZER` over the message contents and the reply;
        then ``tokenizer`` names it). ``cached`` is True when the reply came from the cache
        (the counts are those of the original call); ``served_model``, only when the
        reply names another model than the configured one, is that name."""
        messages = self.messages(question, context)
        result = self.client.chat(messages)
        answer = parse_reply(result.text, context, self.decline_phrases)
        usage: UsageDict
        # a server's count that is not a count (prompt_tokens: -5) is not believed: the
        # answer is kept and its tokens are counted here instead
        if result.usage is not None and all(
                type(v) is int and v >= 0 for v in result.usage.values()):
            usage = {**result.usage, "source": "reported"}
        else:
            usage = {"prompt_tokens": sum(count_tokens(m.get("content", "")) for m in messages),
                     "completion_tokens": count_tokens(result.text),
                     "source": "counted", "tokenizer": TOKENIZER}
        usage["cached"] = result.cached
        if result.raw_model is not None and result.raw_model != self.client.cfg.model:
            usage["served_model"] = result.raw_model  # not the model the config names
        return answer, usage

    def answer_many_with_usage(self, items: Sequence[tuple[str, Sequence[Chunk]]],
                               ) -> list[tuple[Answer, UsageDict] | EndpointError]:
        """:meth:`answer_with_usage` for each ``(question, context)``, in input order, on
        the client's :attr:`~ragassay.endpoint.OpenAICompatClient.concurrency` threads,
        within its ``run_timeout_s``; a failed item
        is an :class:`EndpointError` in its slot."""
        return map_bounded(lambda item: self.answer_with_usage(item[0], item[1]), items,
                           self.client.concurrency,
                           deadline_after(self.client.cfg.run_timeout_s))

    def answer_many(self, items: Sequence[tuple[str, Sequence[Chunk]]],
                    ) -> list[Answer | EndpointError]:
        """Like :meth:`answer_many_with_usage`, answers only."""
        return [r if isinstance(r, EndpointError) else r[0]
                for r in self.answer_many_with_usage(items)]
