"""The question rows embedded in the report page as JSON: compact rows and :func:`decode_row`."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..runfolder import RunResult
from ..runrows import QuestionResult
from ..termsafe import UNSAFE, visible
from .cells import evidence_text, rank_text
from .charts import CATEGORY_COLORS, esc, is_number
from .claims import claim_rows

STATIC_ROWS = 50  # questions written as static HTML (failing first), for a page without JS
RETRIEVED_SHOWN = 20  # retrieved chunks per question embedded in the page (k cut-off drawn)


def shown(data: Any) -> Any:
    """``data`` with every string (keys too) as a page may show it
    (:func:`ragassay.termsafe.visible`: no control or bidi control character)."""
    if isinstance(data, str):
        return visible(data)
    if isinstance(data, dict):
        return {shown(key): shown(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [shown(value) for value in data]
    return data


def json_script_reference(element_id: str, data: Any) -> str:
    """The plain version of :func:`json_script`: every string walked through :func:`shown`."""
    text = json.dumps(shown(data), ensure_ascii=False, separators=(",", ":")).replace(
        "<", "\\u003c")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# In JSON written with ensure_ascii=False a character below U+0020 appears only escaped:
# the escapes of those visible() removes (\t and \n it keeps). A backslash written \\
# before such a letter matches too: the walk then runs for nothing, which is only slower.
_CONTROL_ESCAPE = re.compile(r"\\(?:[bfr]|u00[01])")


def json_script(element_id: str, data: Any) -> str:
    """``data`` as a ``<script type="application/json">`` element, its strings as the page
    shows them (:func:`shown`). Every ``<`` is written ``\u003c`` (JSON allows it only inside
    strings), so no text closes the element or opens a comment (``</script>``, ``<!--``).

    The JSON text is read for a character :func:`shown` would change (one unsafe character
    itself, or the escape of one); only when there is one are the strings walked (the walk
    of every string cost 0.5 s of a 6,000-question page, for texts that hold none)."""
    text = _COMPACT.encode(data)
    # (JSON holds no raw control character, so an ASCII text no unsafe one but DEL)
    unsafe = "\x7f" in text if text.isascii() else UNSAFE.search(text)
    if unsafe or _CONTROL_ESCAPE.search(text):
        text = _COMPACT.encode(shown(data))
    text = text.replace("<", "\\u003c")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


def failing_first(questions: list[QuestionResult]) -> list[QuestionResult]:
    """Questions with a failure label first, each group in record order."""
    return [q for q in questions if q.failures] + [q for q in questions if not q.failures]


def _score(value: Any) -> float | None:
    return round(float(value), 4) if is_number(value) else None


class Strings:
    """A table of repeated strings (chunk ids, labels, topics, statuses): rows refer to them by
    position, which keeps 10,000 questions within a few megabytes."""

    def __init__(self) -> None:
        self.positions: dict[str, int] = {}  # string → its position, in the table's order

    @property
    def table(self) -> list[str]:
        return list(self.positions)

    def __call__(self, text: str | None) -> int | None:
        if text is None:
            return None
        return self.positions.setdefault(text, len(self.positions))


# A row is a list in this field order (trailing empty fields left off); see decode_row.
ROW_FIELDS = ("id", "q", "topic", "ans", "st", "c", "gr", "rank", "top", "lab", "ret", "nret",
              "gold", "gri", "text", "cit", "cited", "nm", "ev", "cl")
_CHECK_CHAR = {True: "y", False: "n", None: "-"}


def _tilde(value: Any, s: Strings) -> Any:
    """Failure evidence with its longer strings (and keys) as ``"~<position>"`` in ``s``
    (every string starting with ``~`` is written so, so the reading is unambiguous)."""
    def short(text: str) -> str:
        return f"~{s(text)}" if len(text) > 6 or text.startswith("~") else text
    if isinstance(value, str):
        return short(value)
    if isinstance(value, dict):
        return {short(str(key)): _tilde(v, s) for key, v in value.items()}
    if isinstance(value, list):
        return [_tilde(v, s) for v in value]
    return value


def retrieved_entries_reference(q: QuestionResult, k: int, s: Strings) -> list[list[Any]]:
    """The plain version of :func:`retrieved_entries`."""
    gold_ids = set(q.gold_chunk_ids)
    ret = []
    for i, h in enumerate(q.retrieved[:max(k, RETRIEVED_SHOWN)]):
        entry: list[Any] = [s(h.chunk_id), _score(h.score)]
        plain = h.rank == i + 1 and h.gold == (h.chunk_id in gold_ids)
        ret.append(entry if plain else [*entry, 1 if h.gold else 0, h.rank])
    return ret


def retrieved_entries(q: QuestionResult, k: int, s: Strings) -> list[list[Any]]:
    """``ret`` of a question's row: ``[chunk, score]`` for each of the first
    ``max(k, RETRIEVED_SHOWN)`` retrieved chunks (the chunk's position in ``s``, the score
    rounded to 4 places, None when it is not a finite number), with ``gold, rank`` appended
    when they are not "in the gold list" and the position. Hand-written: through ``s`` and
    :func:`_score`, the 66,000 entries of a 6,000-question page took 0.15 s."""
    positions, gold = s.positions, q.gold_grades
    ret = []
    for i, h in enumerate(q.retrieved[:max(k, RETRIEVED_SHOWN)], 1):
        cid, score = h.chunk_id, h.score
        entry: list[Any] = [positions.setdefault(cid, len(positions)),
                            round(score, 4) if type(score) is float and math.isfinite(score)
                            else _score(score)]
        if h.rank != i or h.gold != (cid in gold):
            entry += [1 if h.gold else 0, h.rank]
        ret.append(entry)
    return ret


def question_row(q: QuestionResult, k: int, s: Strings) -> list[Any]:
    """A question as one compact JSON row of the page (the script decodes it with the string
    table ``s`` and renders it on demand; :func:`decode_row` reads it back). Chunk ids,
    labels, topic, status and reasons are positions in ``s``; ``c`` is the three checks as
    ``y`` / ``n`` / ``-``; ``ret`` holds ``[chunk, score]`` per retrieved chunk, with
    ``gold, rank`` appended when they are not "in the gold list" and the position; ``ev`` the
    evidence per label in ``lab`` order, as text (:func:`~.cells.evidence_text`); ``cl`` the
    claim list (:func:`.claims.claim_rows` without the question id, every cell a position in
    ``s``)."""
    cited = q.scores.get("cited_ids")
    ret = retrieved_entries(q, k, s)
    c = q.checks
    values: dict[str, Any] = {
        "id": q.question_id, "q": q.question, "topic": s(q.topic), "ans": int(q.answerable),
        "st": s(q.answer.status) if q.answer is not None else None,
        "c": "".join(_CHECK_CHAR[v] for v in (c.found, c.grounded, c.right)),
        "gr": s(q.scores.get("groundedness_reason") or None),
        "rank": q.retrieval.get("rank"),
        "top": _score(q.retrieved[0].score) if q.retrieved else None,
        "lab": [s(label) for label in q.failures], "ret": ret,
        "nret": len(q.retrieved) if len(q.retrieved) != len(ret) else None,
        "gold": [s(cid) for cid in q.gold_chunk_ids],
        "gri": q.gold_rank_in_index or None,
    }
    if q.answer is not None:
        values["text"] = q.answer.text
        values["cit"] = [[s(x.chunk_id), x.page] for x in q.answer.citations]
        values["cited"] = [s(str(x)) for x in cited] if isinstance(cited, list) else []
    values["nm"] = s(q.not_measured)
    values["ev"] = (_tilde([evidence_text(ev) for ev in q.failures.values()], s)
                    if q.failures else None)
    values["cl"] = [[s(cell) for cell in row[1:]] for row in claim_rows(q)] or None
    row = [values.get(name) for name in ROW_FIELDS]
    while row and row[-1] is None:
        row.pop()
    return row


def decode_row(row: list[Any], strings: list[str]) -> dict[str, Any]:
    """A row as the page's script reads it: ``{field: value}`` with strings resolved, checks
    as True / False / None, ``ret`` as ``[rank, chunk_id, score, gold]``, ``ev`` as
    ``{label: evidence}``, ``cl`` as the claim rows' cells (``[]`` without claims)."""
    r = dict(zip(ROW_FIELDS, row + [None] * (len(ROW_FIELDS) - len(row)), strict=True))

    def at(i: int | None) -> str | None:
        return None if i is None else strings[i]

    def untilde(v: Any) -> Any:
        if isinstance(v, str):
            return strings[int(v[1:])] if v.startswith("~") else v
        if isinstance(v, dict):
            return {untilde(key): untilde(x) for key, x in v.items()}
        return [untilde(x) for x in v] if isinstance(v, list) else v

    gold = [at(i) for i in r["gold"] or []]
    r.update(topic=at(r["topic"]), st=at(r["st"]), gr=at(r["gr"]) or "", nm=at(r["nm"]),
             ans=bool(r["ans"]), gold=gold, lab=[at(i) for i in r["lab"] or []],
             c=[{"y": True, "n": False, "-": None}[x] for x in r["c"]])
    r["ret"] = [[e[3] if len(e) > 2 else i + 1, at(e[0]), e[1],
                 bool(e[2]) if len(e) > 2 else at(e[0]) in gold]
                for i, e in enumerate(r["ret"] or [])]
    r["nret"] = len(r["ret"]) if r["nret"] is None else r["nret"]
    if r["cit"] is not None:
        r["cit"] = [[at(x[0]), x[1]] for x in r["cit"]]
        r["cited"] = [at(x) for x in r["cited"] or []]
    r["ev"] = dict(zip(r["lab"], untilde(r["ev"]), strict=True)) if r["ev"] else None
    r["cl"] = [[at(cell) for cell in row] for row in r["cl"] or []]
    return r


def rows_json(result: RunResult) -> dict[str, Any]:
    k = result.totals.k
    strings = Strings()
    rows = [question_row(q, k, strings) for q in failing_first(result.questions)]
    return {"k": k, "static": min(STATIC_ROWS, len(result.questions)), "colors": CATEGORY_COLORS,
            "ranks": rank_texts(result.questions, k), "strings": strings.table, "rows": rows}


def rank_texts(questions: list[QuestionResult], k: int) -> dict[str, str]:
    """``{rank: text}`` (:func:`~.cells.rank_text`) of every rank the questions hold, keyed
    as the script reads the row's number (``"null"`` for no gold): the script shows these
    texts, so the drawn rows read as the static ones and as the terminal."""
    ranks = {q.retrieval.get("rank") for q in questions}
    return {"null" if r is None else str(r): rank_text(r, k) for r in ranks}


def chunks_json(result: RunResult) -> dict[str, str]:
    return result.chunk_texts
