"""Numbers in answers and sources, normalised so that "does the source hold this number?"
can be answered exactly (:func:`number_supported`).

:func:`extract_numbers` finds, in Korean, German and English text:

- numerals with decimal and thousands separators: ``3,000`` → 3000, ``1.000,50`` → 1000.5,
  ``99.5`` → 99.5, ``0,5`` → 0.5. A single separator followed by exactly three digits
  (``1.000``, ``3,000``) is ambiguous; the text's language picks the primary reading
  (German: ``.`` groups thousands and ``,`` is the decimal comma; Korean/English: the other
  way round) and the other reading is kept in ``Quantity.alternatives``, so a number is
  never failed only because the answer and its source were guessed to be in different
  languages (Korean text has no such ambiguity). ``1.2.3`` (a version or section number)
  and ``1,2,3`` are not numbers. Full-width digits and signs fold first (``３，０００`` =
  ``3,000``); the German price notation ``1.000,- €`` is 1000 €.
- units, attached or spaced, with Korean particles after them (``6개월간``, ``6개월의``):
  canonicalised to unit families (``5 Tage`` = ``5 days`` = ``5일`` → ``day``). Korean
  multipliers apply to the value: ``3,000만원`` = ``3천만원`` = 30,000,000 ``krw``;
  ``1억 5천만원`` = 150,000,000. ``3 Mio. €`` = 3,000,000 ``eur``.
- number words with the unit of the next word: German (``fünf``, ``vierundzwanzig``),
  English (``five``, ``twenty-four``), Korean native (``두 달``, ``열두 개월``), Korean day
  words (``하루``, ``이틀``, ``열흘``, ``보름``) and Sino-Korean (``삼개월``, ``일주일``).
  To avoid false positives, articles (``ein``/``eine``/``einen``…, ``one``) and Korean
  native numerals count only when a unit follows (``ein Jahr`` → 1 year, ``eine Frage`` →
  nothing); English ``a``/``an`` never count (``24 hours a day``). Sino-Korean numerals
  count only attached to ``개월``/``주일``/``년`` or before ``개월``; multi-syllable ones
  (``이십사 시간``) also before other time units: a lone ``이``/``일``/``사`` is far more
  often "this"/"work"/"company" than a number.
- dates, as their own kind (unit ``date``, value ``YYYYMMDD`` with 0 for a missing part):
  ``2026-07-01``, ``2026/07/01``, ``2026. 7. 1.``, ``01.07.2026``, ``2026년 7월 1일``,
  ``7월``, ``2026년``, ``1. Juli 2026``, ``July 1, 2026``. Clock times (``09:00``, ``9시
  30분``, ``9 Uhr``) are unit ``time``, value ``HHMM``.

Not numbers (so they cannot fail an answer): identifiers such as ``SFR-003``, ``COVID-19``,
``A4`` or ``2FA``; phone-like digit groups (``02-123-4567``); list markers at the start of a
line (``1.``, ``2)``, ``(3)``).

What the check still cannot see: numbers derived by arithmetic (a sum, "twice", a
percentage of an amount); ranges as a whole (``3-5 Tage`` is 3 and 5 days, each checked
alone); fractions and halves written as words (``half``, ``반``, ``anderthalb``); ordinals
(``1st``, ``dritte``, ``첫째``); unit conversion (``1 Jahr`` is not ``12 Monate``, ``1 GB``
is not ``1024 MB``); 12-hour clock (``6 pm`` vs ``18:00``, ``오후 6시``); and whether the
number belongs to the claim it is written in (a right number from the wrong clause passes).
"""

from .extract import extract_numbers
from .numerals import parse_numeral
from .quantity import DATE, TIME, Quantity
from .support import number_supported

__all__ = ["DATE", "TIME", "Quantity", "extract_numbers", "number_supported", "parse_numeral"]
