"""The two calls behind an item: the proposal (the question for a sentence and answer the
engine picked, :mod:`.select`) and the second answer from the chunk alone, with their JSON
schemas and the readers of their replies.

A 135M-parameter model cannot copy a sentence or pick an answer span reliably, nor keep to a
language it is told to use; so the engine picks the sentence and the answer, the prompts are
written in the document's language (:mod:`.wording`), and the proposal's schema constrains
the question (:func:`question_pattern`): it starts (or, in Korean, ends) with a question word
that fits the answer, and uses the document's script only.

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
from .grammar import question_pattern
from .select import Pick
from .wording import WORDS

MAX_REPLY_CHARS = 20_000  # a longer reply is not read (the client bounds the body itself)
MAX_ANSWER_CHARS = 120  # llama.cpp turns maxLength into its grammar: a rambling answer stops

FIELDS: dict[str, list[str]] = {
    "factoid": ["question", "answer", "sentence"],
    "numeric": ["question", "answer", "sentence"],
    "distractor": ["question", "answer", "sentence"],
    "two_chunk": ["question", "answer_1", "sentence_1", "answer_2", "sentence_2"],
    "unanswerable": ["question"],
}
"""The fields of a proposal; all but ``question`` come from the engine's picks when the
reply leaves them out (:func:`read_fields`)."""
ARRAYS: dict[str, tuple[str, ...]] = {"unanswerable": ("missing",)}

def _schema(name: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {
        "name": name, "strict": True,
        "schema": {"type": "object", "properties": props, "required": list(props),
                   "additionalProperties": False}}}


def proposal_format(kind: str, picks: list[Pick], language: Language) -> dict[str, Any]:
    """The ``response_format`` of a proposal: the question only (:func:`question_pattern`);
    an unanswerable item's ``missing`` is its absent attribute, as an enum of one."""
    props: dict[str, Any] = {"question": {"type": "string",
                                          "pattern": question_pattern(kind, picks, language)}}
    if kind == "unanswerable":
        props["missing"] = {"type": "array", "minItems": 1, "maxItems": 1,
                            "items": {"type": "string", "enum": [picks[0].answer]}}
    return _schema(f"ragassay_{kind}", props)


ANSWER_FORMAT = _schema("ragassay_answer", {"answer": {"type": "string", "minLength": 1,
                                                       "maxLength": MAX_ANSWER_CHARS}})

def _clean(text: str) -> str:
    return " ".join(text.split())


def _turn(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


def _reply(**fields: Any) -> str:
    return json.dumps(fields, ensure_ascii=False)


def proposal_messages(kind: str, picks: list[Pick], language: Language) -> list[dict[str, str]]:
    """The chat messages asking for the question of one item of ``kind`` whose sentence(s)
    and answer(s) the engine picked (:mod:`.select`): a system prompt and one example
    exchange in ``language`` (:data:`~.wording.WORDS`), then the picks. The chunk itself is
    not shown: the sentence is what the question is about (and a short prompt is fast)."""
    w = WORDS[language]
    msgs = [_turn("system", w.system)]
    if kind == "unanswerable":
        s, a, q = w.example_absent
        msgs += [_turn("user", f"{w.sentence}: {s}\n{w.ask_for}: {a}"),
                 _turn("assistant", _reply(question=q, missing=[a])),
                 _turn("user", f"{w.sentence}: {_clean(picks[0].sentence)}\n"
                               f"{w.ask_for}: {picks[0].answer}")]
    elif kind == "two_chunk":
        s1, a1, s2, a2, q = w.example_two
        msgs += [_turn("user", f"{w.sentence} 1: {s1}\n{w.answer} 1: {a1}\n"
                               f"{w.sentence} 2: {s2}\n{w.answer} 2: {a2}"),
                 _turn("assistant", _reply(question=q)),
                 _turn("user", "\n".join(
                     f"{w.sentence} {i}: {_clean(p.sentence)}\n{w.answer} {i}: {p.answer}"
                     for i, p in enumerate(picks, 1)))]
    else:
        s, a, q = w.example
        msgs += [_turn("user", f"{w.sentence}: {s}\n{w.answer}: {a}"),
                 _turn("assistant", _reply(question=q)),
                 _turn("user", f"{w.sentence}: {_clean(picks[0].sentence)}\n"
                               f"{w.answer}: {picks[0].answer}")]
    return msgs


def answer_messages(question: str, texts: list[str], language: Language
                    ) -> list[dict[str, str]]:
    """The second call: answer ``question`` from the chunk ``texts`` alone, asked in
    ``language`` with one example exchange."""
    w = WORDS[language]
    ex, eq, ea = w.answer_example
    shown = "\n\n".join(_clean(t) for t in texts)
    return [_turn("system", w.answer_system),
            _turn("user", f"{w.excerpt}:\n{ex}\n\n{w.question}: {eq}"),
            _turn("assistant", _reply(answer=ea)),
            _turn("user", f"{w.excerpt}:\n{shown}\n\n{w.question}: {_clean(question)}")]


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


def read_fields(reply: str, kind: str, picks: list[Pick] | None = None
                ) -> dict[str, Any] | None:
    """The fields of a proposal reply for ``kind``: every string field non-blank and every
    list a list of strings; ``None`` otherwise (an unparsable reply). A field the reply
    leaves out is taken from ``picks`` (the sentence and answer the engine chose, an
    unanswerable item's absent attribute); one it holds is read as the model wrote it, and
    checked like any other."""
    obj = read_json_object(reply)
    if obj is None:
        return None
    given = _picked(kind, picks) if picks else {}
    out: dict[str, Any] = {}
    for f in FIELDS[kind]:
        value = obj.get(f, given.get(f))
        if not isinstance(value, str) or not value.strip():
            return None
        out[f] = value.strip()
    for f in ARRAYS.get(kind, ()):
        value = obj.get(f, given.get(f))
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str)
                                                               for v in value):
            return None
        out[f] = [v.strip() for v in value]
    return out


def _picked(kind: str, picks: list[Pick]) -> dict[str, Any]:
    if kind == "unanswerable":
        return {"missing": [picks[0].answer]}
    if kind == "two_chunk":
        return {f"{name}_{i}": getattr(p, name) for i, p in enumerate(picks, 1)
                for name in ("answer", "sentence")}
    return {"answer": picks[0].answer, "sentence": picks[0].sentence}


def read_answer(reply: str) -> str | None:
    """The ``answer`` of a second-call reply (``None`` when unparsable)."""
    obj = read_json_object(reply)
    value = obj.get("answer") if obj is not None else None
    return value.strip() if isinstance(value, str) else None
