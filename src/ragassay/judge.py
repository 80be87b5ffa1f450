"""The LLM judge: one claim against sources, with a reply that always parses or is "not
measured" with its reason; and claim-level faithfulness of an answer.

A judge request carries a JSON schema (``response_format: {type: json_schema}``; llama.cpp's
server turns it into a grammar, so even a 135M model replies in shape). The reply is
validated with pydantic (:class:`JudgeReply`: ``verdict`` one of ``entailed`` /
``contradicted`` / ``unsupported``, ``evidence`` a quoted span). A reply that does not
validate is sent back once with the validation error; a second bad reply makes the claim
``unparsable`` with the reason — counted apart, never a score.

The claim goes with the question it answers: alone, a claim such as ``68`` or ``3%`` says
nothing a source could support or contradict. The answer's ``judge_faithfulness`` is
``supported`` (entailed) of the judged claims. A failed call makes the whole answer's
judgement an :class:`EndpointError` — not measured, never turned into a score. The judge is
only as good as its agreement with people: :mod:`ragassay.judgecheck` measures that.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .claims.split import split_claims
from .endpoint import EndpointError, OpenAICompatClient, deadline_after, map_bounded
from .metrics.answer import DECLINED_STATUSES
from .schema import Answer, Chunk

Verdict = Literal["yes", "no", "unparsable"]
ClaimLabel = Literal["entailed", "contradicted", "unsupported"]

JUDGE_QUESTION = ("Does this claim follow from these sources? Reply in JSON: verdict "
                  "entailed (the sources state it), contradicted (the sources state "
                  "otherwise) or unsupported (the sources do not say), and evidence (the "
                  "words of the sources that decide it).")
JUDGE_SYSTEM = ("You check claims against sources. A claim is entailed only if the sources "
                "state it, with the same numbers, units, parties and conditions.")
NO_SOURCE = "(no cited source)"
MAX_EVIDENCE_CHARS = 1000  # what the validation accepts (a server may ignore maxLength)
EVIDENCE_CHARS = 120  # the schema's maxLength: the grammar ends the quote there
# The reply budget covers the longest reply the grammar allows, so a reply is never cut
# mid-string: a character of the quote is at most 6 tokens (a \uXXXX escape, byte-level
# tokens), the JSON around it at most 256 (keys, the verdict, bounded whitespace). With
# 160 tokens, SmolLM2 quoting Korean sources was cut (3 of 15 replies unparsable).
REPLY_TOKENS = 6 * EVIDENCE_CHARS + 256

__all__ = ["JUDGE_QUESTION", "JUDGE_SYSTEM", "NO_SOURCE", "REPLY_SCHEMA", "Judge",
           "JudgeReply", "JudgeResult", "judge_messages", "parse_reply", "parse_verdict",
           "split_claims"]


class JudgeReply(BaseModel):
    """The reply the judge must give (also its JSON schema, :data:`REPLY_SCHEMA`)."""

    model_config = ConfigDict(extra="ignore")

    verdict: ClaimLabel
    evidence: str = Field(default="", max_length=MAX_EVIDENCE_CHARS)


REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["entailed", "contradicted", "unsupported"]},
        "evidence": {"type": "string", "maxLength": EVIDENCE_CHARS},
    },
    "required": ["verdict", "evidence"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {"type": "json_schema",
                   "json_schema": {"name": "claim_verdict", "strict": True,
                                   "schema": REPLY_SCHEMA}}

_WS = re.compile(r"\s+")
_VERDICT_WORD = re.compile(r"\w+")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_YES = frozenset({"yes", "true", "ja", "jawohl", "네", "예", "맞습니다", "맞음"})
_NO = frozenset({"no", "false", "nein", "아니요", "아니오", "아니", "아닙니다", "틀림"})


def parse_verdict(raw: str) -> Verdict:
    """``yes``/``no`` from a free-text reply, in English, German or Korean, with any
    markdown or punctuation around it (``Yes.``, ``**No**``, ``네``, ``Ja``, ``nein``).

    The first word decides when it is a yes- or no-word; otherwise the reply is ``yes``
    (``no``) when it holds yes-words (no-words) only; else ``unparsable``.
    """
    words = _VERDICT_WORD.findall(unicodedata.normalize("NFKC", raw).casefold())
    if not words:
        return "unparsable"
    if words[0] in _YES:
        return "yes"
    if words[0] in _NO:
        return "no"
    has_yes = any(w in _YES for w in words)
    has_no = any(w in _NO for w in words)
    if has_yes != has_no:
        return "yes" if has_yes else "no"
    return "unparsable"


def parse_reply(raw: str) -> JudgeReply:
    """The validated reply (a markdown code fence around the JSON is allowed). Raises
    :class:`ValueError` with what is wrong (not JSON; a field missing or out of range)."""
    text = _FENCE.sub("", raw.strip())
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at character {exc.pos})") from None
    try:
        return JudgeReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise ValueError(f"field {where!r}: {first['msg']}") from None


def judge_messages(claim: str, sources: Sequence[str], question: str | None = None,
                   ) -> list[dict[str, str]]:
    """The chat messages asking whether ``claim`` follows from ``sources``; with
    ``question``, the claim is shown as (part of) the answer to it."""
    listed = "\n".join(f"[{i}] {_WS.sub(' ', s).strip()}" for i, s in enumerate(sources, 1))
    asked = f"Question: {_WS.sub(' ', question).strip()}\n" if question else ""
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": f"Sources:\n{listed}\n\n{asked}Claim: {claim}\n\n"
                                        f"{JUDGE_QUESTION}"}]


@dataclass
class JudgeResult:
    """Judgement of one answer. ``total`` = claims; ``supported`` = claims judged entailed;
    ``unparsable`` = claims whose reply never validated. ``score`` = supported / (total −
    unparsable), ``None`` when no claim got a verdict (nothing measured)."""

    supported: int
    total: int
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    unparsable: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0,
                                                           "completion_tokens": 0})

    @property
    def score(self) -> float | None:
        judged = self.total - self.unparsable
        return self.supported / judged if judged else None

    def to_dict(self) -> dict[str, Any]:
        """The judgement as the run record keeps it: without whether each reply came from
        the cache, so that a rerun served from the cache writes the same record."""
        out = {**asdict(self), "score": self.score}
        out["verdicts"] = [{k: v for k, v in d.items() if k != "cached"} for d in self.verdicts]
        return out


def _add_usage(total: dict[str, int], usage: dict[str, int] | None) -> None:
    for name in ("prompt_tokens", "completion_tokens"):
        total[name] = total.get(name, 0) + int((usage or {}).get(name) or 0)


class Judge:
    """Asks the client's model, claim by claim, for a verdict against sources."""

    def __init__(self, client: OpenAICompatClient) -> None:
        self.client = client

    def claim_verdict(self, claim: str, sources: Sequence[str], question: str | None = None,
                      **params: Any) -> dict[str, Any]:
        """``{claim, label, verdict, evidence, raw, attempts, usage, cached}`` for one claim:
        ``label`` entailed / contradicted / unsupported, or ``None`` with ``reason`` when
        both replies failed validation (``verdict`` is then ``unparsable``); ``verdict``
        is yes (entailed) / no. ``params`` go to the request (``seed``, ``temperature``).
        No sources → unsupported without a call. Raises :class:`EndpointError`."""
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        if not sources:
            return {"claim": claim, "label": "unsupported", "verdict": "no", "evidence": "",
                    "raw": NO_SOURCE, "attempts": 0, "usage": usage, "cached": False}
        messages: list[dict[str, str]] = judge_messages(claim, sources, question)
        request = {"response_format": RESPONSE_FORMAT, "max_tokens": REPLY_TOKENS, **params}
        got = self.client.chat_structured(messages, parse_reply, **request)
        raw = got.text[:2000]
        if got.value is None:
            return {"claim": claim, "label": None, "verdict": "unparsable", "evidence": "",
                    "raw": raw, "attempts": got.attempts, "usage": got.usage,
                    "cached": got.cached, "reason": f"judge reply invalid twice: {got.reason}"}
        reply = got.value
        return {"claim": claim, "label": reply.verdict,
                "verdict": "yes" if reply.verdict == "entailed" else "no",
                "evidence": reply.evidence, "raw": raw, "attempts": got.attempts,
                "usage": got.usage, "cached": got.cached}

    def verdict(self, claim: str, sources: Sequence[str], question: str | None = None,
                ) -> dict[str, Any]:
        """:meth:`claim_verdict` (kept for the yes/no callers)."""
        return self.claim_verdict(claim, sources, question)

    def judge_answer(self, answer: Answer, cited_chunks: Sequence[Chunk],
                     question: str | None = None) -> JudgeResult:
        """Judge each claim of ``answer`` (to ``question``) against the texts of
        ``cited_chunks``.

        A declined answer (status ``insufficient``/``abstained``) claims nothing: ``0/0``.
        Raises :class:`EndpointError` when any call fails, so the whole answer is not
        measured rather than scored on the claims that happened to get through.
        """
        if answer.status in DECLINED_STATUSES:
            return JudgeResult(supported=0, total=0)
        sources = [c.text for c in cited_chunks]
        verdicts = [self.verdict(claim, sources, question)
                    for claim in split_claims(answer.text)]
        result = JudgeResult(supported=sum(v["verdict"] == "yes" for v in verdicts),
                             total=len(verdicts), verdicts=verdicts,
                             unparsable=sum(v["verdict"] == "unparsable" for v in verdicts))
        for v in verdicts:  # a cached reply counts as the call that produced it
            _add_usage(result.usage, v.get("usage"))
        return result

    def judge_many(self, items: Sequence[tuple[Answer, Sequence[Chunk], str | None]],
                   ) -> list[JudgeResult | EndpointError]:
        """:meth:`judge_answer` for each ``(answer, cited_chunks, question)``, in input
        order, on the client's :attr:`~ragassay.endpoint.OpenAICompatClient.concurrency`
        threads within its ``run_timeout_s``; a failed answer is an :class:`EndpointError`."""
        return map_bounded(lambda item: self.judge_answer(*item), items,
                           self.client.concurrency,
                           deadline_after(self.client.cfg.run_timeout_s))
