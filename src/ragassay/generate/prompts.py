"""The two calls behind an item: the proposal (question, answer, sentence) and the second
answer from the chunk alone, with their JSON schemas and the readers of their replies.

Structured output is asked for with ``response_format: {"type": "json_schema", ...}``
(llama.cpp's server, vLLM and OpenAI constrain the reply to the schema); a server that
ignores it may still send JSON inside prose or a code fence, which :func:`read_json_object`
finds. A reply that holds no such object, or lacks a field, is ``None``: counted as
unparsable, never an exception.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..text import Language

LANGUAGE_NAMES: dict[str, str] = {"ko": "Korean (한국어)", "de": "German (Deutsch)",
                                  "en": "English"}
SYSTEM = ("You write test questions for a document search system. Copy text from the "
          "excerpts exactly, character for character. Reply with one JSON object only.")
ANSWER_SYSTEM = ("You answer a question from the excerpt given, with the shortest phrase "
                 "copied from it. If the excerpt does not answer it, answer with an empty "
                 "string. Reply with one JSON object only.")
MAX_REPLY_CHARS = 20_000  # a longer reply is not read (the client bounds the body itself)


# Longest value of a field, in characters: llama.cpp turns ``maxLength`` into its grammar, so
# a small model that starts to ramble is cut off instead of filling max_tokens.
MAX_CHARS = {"question": 250, "answer": 120, "sentence": 400, "missing": 60}


def _schema(name: str, fields: list[str], arrays: tuple[str, ...] = ()) -> dict[str, Any]:
    props: dict[str, Any] = {
        f: {"type": "string", "minLength": 1, "maxLength": MAX_CHARS[f.split("_")[0]]}
        for f in fields}
    for f in arrays:
        props[f] = {"type": "array", "minItems": 1, "maxItems": 2,
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_CHARS[f]}}
    return {"type": "json_schema", "json_schema": {
        "name": name, "strict": True,
        "schema": {"type": "object", "properties": props, "required": [*fields, *arrays],
                   "additionalProperties": False}}}


FIELDS: dict[str, list[str]] = {
    "factoid": ["question", "answer", "sentence"],
    "numeric": ["question", "answer", "sentence"],
    "distractor": ["question", "answer", "sentence"],
    "two_chunk": ["question", "answer_1", "sentence_1", "answer_2", "sentence_2"],
    "unanswerable": ["question"],
}
ARRAYS: dict[str, tuple[str, ...]] = {"unanswerable": ("missing",)}
FORMATS: dict[str, dict[str, Any]] = {
    kind: _schema(f"ragassay_{kind}", fields, ARRAYS.get(kind, ()))
    for kind, fields in FIELDS.items()}
ANSWER_FORMAT = _schema("ragassay_answer", ["answer"])

_TASKS = {
    "factoid": "Write one question that the excerpt answers with a short fact (a name, a "
               "term, a date, a place). Give the answer as a short phrase copied exactly "
               "from the excerpt, and the whole sentence of the excerpt that holds it, "
               "copied exactly.",
    "numeric": "Write one question whose answer is a number with its unit, as the excerpt "
               "states it (for example \"24 months\", \"3,000만원\", \"5 Werktage\"). Give the "
               "answer copied exactly from the excerpt, and the whole sentence of the "
               "excerpt that holds it, copied exactly.",
    "distractor": "Write one question that excerpt A answers. Excerpt B is from another "
                  "document and looks similar: the question must be about a value that "
                  "excerpt A states and excerpt B states differently or not at all. Give "
                  "the answer as a short phrase copied exactly from excerpt A, and the whole "
                  "sentence of excerpt A that holds it, copied exactly.",
    "two_chunk": "Write one question that needs both excerpts to be answered: one part of "
                 "the answer is in excerpt 1, the other in excerpt 2. Give each part "
                 "copied exactly (answer_1 from excerpt 1, answer_2 from excerpt 2), and the "
                 "whole sentence of each excerpt that holds it, copied exactly.",
    "unanswerable": "Write one question on the topic of the excerpt about a detail that the "
                    "excerpt does not state (an attribute it does not give, or a person, "
                    "place or product it does not mention). List in \"missing\" the one or two "
                    "words of the question, as written in it, that name what is not stated.",
}


def _clean(text: str) -> str:
    return " ".join(text.split())


def proposal_messages(kind: str, texts: list[str], language: Language) -> list[dict[str, str]]:
    """The chat messages asking for one item of ``kind`` from the chunk ``texts`` (one;
    two for ``two_chunk`` and ``distractor``), the question in ``language``."""
    if kind == "two_chunk":
        shown = f"Excerpt 1:\n{_clean(texts[0])}\n\nExcerpt 2:\n{_clean(texts[1])}"
    elif kind == "distractor":
        shown = f"Excerpt A:\n{_clean(texts[0])}\n\nExcerpt B:\n{_clean(texts[1])}"
    else:
        shown = f"Excerpt:\n{_clean(texts[0])}"
    keys = ", ".join(f'"{f}"' for f in [*FIELDS[kind], *ARRAYS.get(kind, ())])
    ask = (f"{shown}\n\n{_TASKS[kind]} Write the question in {LANGUAGE_NAMES[language]}. "
           "The question must not contain the answer. Reply with a JSON object with the "
           f"keys {keys}.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}]


def answer_messages(question: str, texts: list[str]) -> list[dict[str, str]]:
    """The second call: answer ``question`` from the chunk ``texts`` alone."""
    shown = "\n\n".join(_clean(t) for t in texts)
    return [{"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"Excerpt:\n{shown}\n\nQuestion: {_clean(question)}\n\n"
                                        'Reply with a JSON object with the key "answer".'}]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def read_json_object(reply: str) -> dict[str, Any] | None:
    """The first JSON object of a reply: the whole reply, else a fenced block, else the
    text from the first ``{`` to its matching ``}``; ``None`` when there is none."""
    text = reply[:MAX_REPLY_CHARS].strip()
    tries = [text, *(m.group(1) for m in _FENCE.finditer(text))]
    start = text.find("{")
    if start >= 0:
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[start:])
            tries.append(json.dumps(obj))
        except ValueError:
            pass
    for t in tries:
        try:
            value = json.loads(t)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def read_fields(reply: str, kind: str) -> dict[str, Any] | None:
    """The fields of a proposal reply for ``kind``: every string field non-blank and every
    list a list of strings; ``None`` otherwise (an unparsable reply)."""
    obj = read_json_object(reply)
    if obj is None:
        return None
    out: dict[str, Any] = {}
    for f in FIELDS[kind]:
        value = obj.get(f)
        if not isinstance(value, str) or not value.strip():
            return None
        out[f] = value.strip()
    for f in ARRAYS.get(kind, ()):
        value = obj.get(f)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str)
                                                               for v in value):
            return None
        out[f] = [v.strip() for v in value]
    return out


def read_answer(reply: str) -> str | None:
    """The ``answer`` of a second-call reply (``None`` when unparsable)."""
    obj = read_json_object(reply)
    value = obj.get("answer") if obj is not None else None
    return value.strip() if isinstance(value, str) else None
