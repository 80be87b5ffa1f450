"""The optional LLM decomposition of an answer into claims (``claims: {decompose: llm}``).

The answer goes to the judge's endpoint (the one client, :mod:`ragassay.endpoint`: its
retries, timeouts, cache and redaction) with a JSON schema as ``response_format``
(:data:`DECOMPOSE_SCHEMA`: ``claims``, an array of 1 to :data:`MAX_CLAIMS` strings of
1 to :data:`CLAIM_CHARS` characters; llama.cpp's server turns it into a grammar). The reply
is validated with pydantic (:class:`Decomposition`); an invalid reply is sent back once
with the validation error; a second invalid reply (or an empty list for a non-empty
answer) falls back to the deterministic splitter (:func:`.split.split_claims`), recorded as
``decomposed_by: sentences`` with the reason. A claim the model words differently from the
answer is checked the same way as any other: the checks compare it with the sources, not
with the answer.

A failed call raises :class:`~ragassay.endpoint.EndpointError` (the question's claims are
then not measured, as for a failed judge call), never a silent fallback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from .split import split_claims

MAX_CLAIMS = 8
CLAIM_CHARS = 200
# The longest reply the grammar allows is MAX_CLAIMS quotes of CLAIM_CHARS characters;
# beyond this budget a reply is cut, does not validate and falls back to the splitter.
REPLY_TOKENS = 2048
DECOMPOSE_SYSTEM = ("You split answers into claims. A claim is one short statement of the "
                    "answer that can be checked on its own, in the answer's language and "
                    "words; add nothing the answer does not say.")

__all__ = ["CLAIM_CHARS", "DECOMPOSE_SCHEMA", "MAX_CLAIMS", "Decomposed", "Decomposition",
           "decompose", "decompose_messages", "parse_decomposition"]

Claim = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                         max_length=CLAIM_CHARS)]


class Decomposition(BaseModel):
    """The reply the model must give (also its JSON schema, :data:`DECOMPOSE_SCHEMA`)."""

    model_config = ConfigDict(extra="forbid")

    claims: list[Claim] = Field(max_length=MAX_CLAIMS)


DECOMPOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"claims": {"type": "array", "minItems": 1, "maxItems": MAX_CLAIMS,
                              "items": {"type": "string", "minLength": 1,
                                        "maxLength": CLAIM_CHARS}}},
    "required": ["claims"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {"type": "json_schema",
                   "json_schema": {"name": "answer_claims", "strict": True,
                                   "schema": DECOMPOSE_SCHEMA}}


@dataclass
class Decomposed:
    """An answer's claims and how they were found: ``decomposed_by`` ``llm`` or
    ``sentences`` (the splitter, with ``reason`` when the LLM's replies were invalid)."""

    claims: list[str]
    decomposed_by: Literal["llm", "sentences"]
    reason: str = ""
    attempts: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0,
                                                           "completion_tokens": 0})


def decompose_messages(answer_text: str, question: str | None = None,
                       ) -> list[dict[str, str]]:
    """The chat messages asking for the claims of ``answer_text`` (the answer to
    ``question``, when given)."""
    asked = f"Question: {' '.join(question.split())}\n" if question else ""
    return [{"role": "system", "content": DECOMPOSE_SYSTEM},
            {"role": "user", "content": f"{asked}Answer: {' '.join(answer_text.split())}\n\n"
                                        "List the claims of this answer. Reply in JSON: "
                                        '{"claims": ["...", "..."]}.'}]


def parse_decomposition(raw: str) -> list[str]:
    """The validated claims of a reply. Raises :class:`ValueError` saying what is wrong (not
    JSON; a field missing, too long or too many; no claim at all)."""
    try:
        data = json.loads(raw.strip())
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at character {exc.pos})") from None
    try:
        claims = Decomposition.model_validate(data).claims
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise ValueError(f"field {where!r}: {first['msg']}") from None
    if not claims:
        raise ValueError("field 'claims': no claim listed")
    return claims


def decompose(client: Any, answer_text: str, question: str | None = None) -> Decomposed:
    """The claims of ``answer_text`` through ``client`` (an
    :class:`~ragassay.endpoint.OpenAICompatClient`), see the module docstring. An answer
    without a word (``split_claims`` finds nothing) is not sent: no claims."""
    if not split_claims(answer_text):
        return Decomposed(claims=[], decomposed_by="sentences", reason="the answer is empty")
    messages = decompose_messages(answer_text, question)
    got = client.chat_structured(messages, parse_decomposition,
                                 response_format=RESPONSE_FORMAT, max_tokens=REPLY_TOKENS)
    if got.value is None:
        return Decomposed(claims=split_claims(answer_text), decomposed_by="sentences",
                          reason=f"decomposition reply invalid twice: {got.reason}",
                          attempts=got.attempts, usage=got.usage)
    return Decomposed(claims=got.value, decomposed_by="llm", attempts=got.attempts,
                      usage=got.usage)
