"""The words of the generation prompts in each document language (ko, de, en): system
prompts, one-shot examples, the question words per answer frame, the absent attributes of
unanswerable items. Data only; :mod:`.prompts` builds the messages and grammars from it.

A tiny model writes in the language it is spoken to, so every prompt is written in the
chunk's language, with one example exchange in that language.

Question phrases (:func:`wh_phrases`): the frame of an answer (:mod:`.select`: a unit family
of the number reader, ``year_number``, ``count`` or ``term``) gives the phrases that may
replace the answer in its sentence to make the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import Language

_DURATION = frozenset(("month", "year", "week", "day", "business_day", "hour", "minute",
                       "second", "millisecond"))
_MONEY = frozenset(("eur", "usd", "krw", "gbp"))
_PERCENT = frozenset(("percent", "percentage_point"))
_UNIT_WORD = re.compile(r"([^\W\d_]+)\s*$")

_FIXED: dict[Language, dict[str, tuple[str, ...]]] = {
    "en": {"money": ("how much",), "percent": ("what percentage", "how much"),
           "date": ("when", "what date"), "time": ("what time", "when"),
           "year_number": ("what year", "when"), "count": ("how many",),
           "term": ("what", "who", "which", "where")},
    "de": {"money": ("wie viel",), "percent": ("wie viel Prozent",),
           "date": ("wann", "welchem Tag"), "time": ("wann", "wie viel Uhr"),
           "year_number": ("welchem Jahr", "wann"), "count": ("wie viele", "wie vielen"),
           "term": ("was", "wer", "welche", "welchem", "wo")},
    "ko": {"money": ("얼마",), "percent": ("몇 퍼센트",), "date": ("언제",),
           "time": ("몇 시", "언제"), "year_number": ("몇 년", "언제"), "count": ("몇",),
           "term": ("무엇", "누구", "어디")},
}
_HOW_MANY: dict[Language, tuple[str, ...]] = {"en": ("how many {}",),
                                              "de": ("wie viele {}", "wie vielen {}"),
                                              "ko": ("몇 {}",)}
_HOW_LONG: dict[Language, tuple[str, ...]] = {"en": ("how long",), "de": ("wie lange",),
                                              "ko": ("얼마 동안",)}


def wh_phrases(language: Language, frame: str, answer: str) -> tuple[str, ...]:
    """The question phrases that may stand in a question where the answer of ``frame``
    stood in its sentence (:mod:`.grammar`): ``how many months`` / ``how long`` for
    ``12 months`` (the answer's own unit word), ``wie viel`` for ``4,90 Euro``, ``몇 개월``
    for ``24개월``, ``when`` for a date, ``what`` / ``who`` / ``which`` / ``where`` for a
    term."""
    fixed = _FIXED[language]
    if frame in _MONEY:
        return fixed["money"]
    if frame in _PERCENT:
        return fixed["percent"]
    if frame in fixed:
        return fixed[frame]
    unit = _UNIT_WORD.search(answer)
    if unit is not None and unit.group(1) == answer.strip():  # a number word (하루): no unit
        unit = None
    many = tuple(w.format(unit.group(1)) for w in _HOW_MANY[language]) if unit else ()
    if frame in _DURATION:
        many += _HOW_LONG[language]
    return many or fixed["count"]


AND: dict[Language, tuple[str, ...]] = {"en": (" and ",), "de": (" und ",),
                                        "ko": (", 그리고 ",)}
"""What joins the two halves of a two-chunk question."""


KO_ENDINGS = ("인가요", "입니까")
"""The endings a Korean question may take right after its question phrase
(``… 몇 개월인가요?``)."""


@dataclass(frozen=True)
class Absent:
    """An attribute an unanswerable question asks for: ``term`` (what the corpus must not
    hold) and the fixed words of the question around the subject the model writes:
    ``before`` + subject + ``after``."""

    term: str
    before: str
    after: str


def _en(term: str) -> Absent:
    return Absent(term, f"What is the {term} of ", "?")


def _de(article: str, term: str) -> Absent:
    return Absent(term, f"Wie lautet {article} {term} ", "?")


def _ko(term: str, particle: str) -> Absent:
    return Absent(term, "", f"의 {term}{particle} 무엇인가요?")


ABSENT: dict[Language, tuple[Absent, ...]] = {
    "en": tuple(_en(t) for t in ("fax number", "postal code", "phone number", "email address",
                                 "website address")),
    "de": (_de("die", "Faxnummer"), _de("die", "Postleitzahl"), _de("die", "Steuernummer"),
           _de("die", "Handelsregisternummer"), _de("die", "Telefonnummer")),
    "ko": (_ko("팩스 번호", "는"), _ko("우편번호", "는"), _ko("전화번호", "는"),
           _ko("이메일 주소", "는"), _ko("홈페이지 주소", "는")),
}
"""Attributes a question about any subject may ask for, which documents rarely state; an
unanswerable item takes one that no chunk of the corpus holds (:mod:`.select`)."""


@dataclass(frozen=True)
class Words:
    """The fixed text of the prompts in one language."""

    system: str  # the proposal's system prompt
    sentence: str  # the label of the support sentence
    answer: str  # the label of the answer
    ask_for: str  # the label of an unanswerable item's attribute
    example: tuple[str, str, str]  # one-shot: sentence, answer, question
    example_two: tuple[str, str, str, str, str]  # two-chunk: s1, a1, s2, a2, question
    example_absent: tuple[str, str, str]  # unanswerable: sentence, attribute, question
    answer_system: str  # the second call's system prompt
    excerpt: str
    question: str
    answer_example: tuple[str, str, str]  # second call: excerpt, question, answer


WORDS: dict[Language, Words] = {
    "en": Words(
        system="You turn a sentence into an English question for a reading test: replace "
               "the answer given with a question word, and keep the other words you need.",
        sentence="Sentence", answer="Answer", ask_for="Ask for",
        example=("The warranty period is 12 months from acceptance.", "12 months",
                 "The warranty period is how many months from acceptance?"),
        example_two=("The warranty period is 12 months from acceptance.", "12 months",
                     "Faults must be answered within 8 hours.", "8 hours",
                     "The warranty period is how many months and faults must be answered "
                     "within how many hours?"),
        example_absent=("The contractor keeps two engineers on site.", "fax number",
                        "What is the fax number of the contractor?"),
        answer_system="You answer a question from the excerpt with the shortest phrase "
                      "copied from it.",
        excerpt="Excerpt", question="Question",
        answer_example=("The contractor keeps two engineers on site. Faults must be answered "
                        "within 8 hours.", "How fast must faults be answered?", "8 hours")),
    "de": Words(
        system="Du machst aus einem Satz eine deutsche Frage für einen Lesetest: ersetze die "
               "gegebene Antwort durch ein Fragewort und behalte die anderen Wörter, die du "
               "brauchst.",
        sentence="Satz", answer="Antwort", ask_for="Frage nach",
        example=("Der Versand kostet innerhalb Deutschlands 4,90 Euro.", "4,90 Euro",
                 "Der Versand kostet innerhalb Deutschlands wie viel?"),
        example_two=("Der Versand kostet 4,90 Euro.", "4,90 Euro",
                     "Die Lieferung dauert 5 Werktage.", "5 Werktage",
                     "Der Versand kostet wie viel und die Lieferung dauert wie viele "
                     "Werktage?"),
        example_absent=("Der Kundenservice beantwortet Anfragen innerhalb von zwei Tagen.",
                        "Faxnummer", "Wie lautet die Faxnummer des Kundenservice?"),
        answer_system="Du beantwortest eine Frage aus dem Auszug mit der kürzesten Stelle, "
                      "die du aus ihm kopierst.",
        excerpt="Auszug", question="Frage",
        answer_example=("Der Versand kostet 4,90 Euro. Ab 50 Euro ist der Versand kostenlos.",
                        "Wie viel kostet der Versand?", "4,90 Euro")),
    "ko": Words(
        system="당신은 문장을 한국어 읽기 시험 질문으로 바꿉니다. 주어진 답을 의문사로 바꾸고, "
               "필요한 다른 단어는 그대로 두세요.",
        sentence="문장", answer="답", ask_for="물을 것",
        example=("보증기간은 검수 완료일로부터 24개월로 한다.", "24개월",
                 "보증기간은 검수 완료일로부터 몇 개월인가요?"),
        example_two=("보증기간은 24개월로 한다.", "24개월",
                     "장애가 발생하면 4시간 이내에 도착하여야 한다.", "4시간",
                     "보증기간은 몇 개월로 한다, 그리고 장애가 발생하면 몇 시간 이내에 도착하여야 "
                     "한다?"),
        example_absent=("유지보수 인력은 상주 2명을 배치한다.", "팩스 번호",
                        "유지보수 업체의 팩스 번호는 무엇인가요?"),
        answer_system="당신은 발췌문에서 질문의 답을 찾아, 발췌문에서 그대로 복사한 가장 짧은 "
                      "구절로 답합니다.",
        excerpt="발췌문", question="질문",
        answer_example=("유지보수 인력은 상주 2명을 배치한다. 장애가 발생하면 4시간 이내에 현장에 "
                        "도착하여야 한다.", "장애가 발생하면 몇 시간 이내에 도착해야 하나요?",
                        "4시간")),
}
