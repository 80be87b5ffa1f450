"""Claim-level faithfulness with an LLM judge, and a check of the judge on labelled claims.

An answer is split into claims (its sentences without citation markers); the judge model
is asked, for each claim, whether it follows from the chunks the answer cites. The claim
goes with the question it answers: alone, a claim such as ``68`` or ``3%`` says nothing
that a source could support or contradict. The
answer's judgement is ``supported`` of ``total`` claims. The judge is optional and only as
good as its agreement with people: :func:`judge_check` measures that agreement on a
labelled set (accuracy and Cohen's kappa) before anyone trusts its numbers.

A failed call makes the whole answer's judgement an :class:`EndpointError` — reported as
not measured, never turned into a score.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .endpoint import EndpointError, OpenAICompatClient, deadline_after, map_bounded
from .jsonio import read_jsonl
from .metrics.answer import DECLINED_STATUSES
from .schema import Answer, Chunk
from .text import split_sentences

Verdict = Literal["yes", "no", "unparsable"]

JUDGE_QUESTION = "Does this claim follow from these sources? Answer yes or no."
JUDGE_SYSTEM = ("You check claims against sources. A claim follows from the sources only "
                "if the sources state it, with the same numbers, units, parties and "
                "conditions. Reply with one word: yes or no.")
NO_SOURCE = "(no cited source)"

_MARKER = re.compile(r"\s*\[[^\[\]\n]+\]")
_WS = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?。])")
_HAS_WORD = re.compile(r"\w")
_VERDICT_WORD = re.compile(r"\w+")
_YES = frozenset({"yes", "true", "ja", "jawohl", "네", "예", "맞습니다", "맞음"})
_NO = frozenset({"no", "false", "nein", "아니요", "아니오", "아니", "아닙니다", "틀림"})


def split_claims(answer_text: str) -> list[str]:
    """The claims of an answer: its sentences (:func:`ragassay.text.split_sentences`) with
    inline ``[...]`` markers removed and whitespace collapsed; sentences left without a
    word character (a citation alone) are dropped. Empty text → ``[]``."""
    text = _MARKER.sub("", answer_text)
    claims = []
    for a, b in split_sentences(text):
        claim = _SPACE_BEFORE_PUNCT.sub(r"\1", _WS.sub(" ", text[a:b]).strip())
        if _HAS_WORD.search(claim):
            claims.append(claim)
    return claims


def parse_verdict(raw: str) -> Verdict:
    """``yes``/``no`` from a judge reply, in English, German or Korean, with any markdown
    or punctuation around it (``Yes.``, ``**No**``, ``네``, ``아니요``, ``Ja``, ``nein``).

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
    """Judgement of one answer. ``total`` = claims; ``supported`` = claims judged ``yes``;
    ``unparsable`` = claims whose reply was neither. ``score`` = supported / (total −
    unparsable), ``None`` when no claim got a yes/no (nothing measured)."""

    supported: int
    total: int
    verdicts: list[dict[str, str]] = field(default_factory=list)
    unparsable: int = 0

    @property
    def score(self) -> float | None:
        judged = self.total - self.unparsable
        return self.supported / judged if judged else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": self.score}


class Judge:
    """Asks the client's model, claim by claim, whether a claim follows from sources."""

    def __init__(self, client: OpenAICompatClient) -> None:
        self.client = client

    def verdict(self, claim: str, sources: Sequence[str], question: str | None = None,
                ) -> dict[str, str]:
        """``{claim, verdict, raw}`` for one claim (an answer to ``question``, when given).
        No sources → ``no`` without a call. Raises :class:`EndpointError` when the call
        fails."""
        if not sources:
            return {"claim": claim, "verdict": "no", "raw": NO_SOURCE}
        raw = self.client.chat(judge_messages(claim, sources, question)).text
        return {"claim": claim, "verdict": parse_verdict(raw), "raw": raw}

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
        return JudgeResult(supported=sum(v["verdict"] == "yes" for v in verdicts),
                           total=len(verdicts), verdicts=verdicts,
                           unparsable=sum(v["verdict"] == "unparsable" for v in verdicts))

    def judge_many(self, items: Sequence[tuple[Answer, Sequence[Chunk], str | None]],
                   ) -> list[JudgeResult | EndpointError]:
        """:meth:`judge_answer` for each ``(answer, cited_chunks, question)``, in input
        order, on the client's :attr:`~ragassay.endpoint.OpenAICompatClient.concurrency`
        threads within its ``run_timeout_s``; a failed answer is an :class:`EndpointError`."""
        return map_bounded(lambda item: self.judge_answer(*item), items,
                           self.client.concurrency,
                           deadline_after(self.client.cfg.run_timeout_s))


# --- checking the judge against people ---------------------------------------------------


class LabelledClaim(BaseModel):
    """One line of a judge check file: a claim, its sources, a person's label, and the
    question the claim answers when there is one (sent to the judge with the claim)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    sources: list[str]
    label: Literal["yes", "no"]
    question: str | None = None
    lang: str | None = None
    note: str | None = None


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa of two raters on a yes/no 2x2 table (judge = rows, label = columns):

        n   = tp + fp + fn + tn
        p_o = (tp + tn) / n                                       observed agreement
        p_e = ((tp + fp)(tp + fn) + (fn + tn)(fp + tn)) / n²      agreement by chance
        κ   = (p_o − p_e) / (1 − p_e)

    ``None`` when undefined: an empty table, or ``p_e = 1`` (both raters gave one and the
    same label to everything, so agreement cannot be told from chance).
    """
    n = tp + fp + fn + tn
    if n == 0:
        return None
    p_o = (tp + tn) / n
    p_e = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def judge_check(labelled_path: str | Path, judge: Judge) -> dict[str, Any]:
    """How well ``judge`` agrees with the labels of a JSONL file of :class:`LabelledClaim`.

    Returns ``{n, measured, accuracy, cohen_kappa, confusion: {tp, fp, fn, tn},
    not_measured, not_measured_ids, disagreements}`` with "yes" as the positive class
    (``fp`` = judge yes, label no). Items whose call failed or whose reply was unparsable
    are not measured: counted and listed, left out of accuracy and kappa. ``accuracy`` is
    ``None`` when nothing was measured. Bad lines raise :class:`ragassay.schema.InputError`.
    """
    items = read_jsonl(labelled_path, LabelledClaim, key="id")
    results = map_bounded(lambda it: judge.verdict(it.claim, it.sources, it.question), items,
                          judge.client.concurrency,
                          deadline_after(judge.client.cfg.run_timeout_s))
    confusion = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    not_measured: list[str] = []
    disagreements: list[str] = []
    for item, res in zip(items, results, strict=True):
        if isinstance(res, EndpointError) or res["verdict"] == "unparsable":
            not_measured.append(item.id)
            continue
        said_yes, is_yes = res["verdict"] == "yes", item.label == "yes"
        cell = {(True, True): "tp", (True, False): "fp",
                (False, True): "fn", (False, False): "tn"}[(said_yes, is_yes)]
        confusion[cell] += 1
        if said_yes != is_yes:
            disagreements.append(item.id)
    measured = len(items) - len(not_measured)
    return {
        "n": len(items),
        "measured": measured,
        "accuracy": (confusion["tp"] + confusion["tn"]) / measured if measured else None,
        "cohen_kappa": cohen_kappa(**confusion),
        "confusion": confusion,
        "not_measured": len(not_measured),
        "not_measured_ids": not_measured,
        "disagreements": disagreements,
    }
