"""Digit numerals: separators, Korean and Latin multipliers, and the quantity they write."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

from .quantity import TIME, Quantity
from .units import PREFIX_CURRENCY_RE, PREFIX_FAMILY, match_unit, match_unit_reference

# --- numerals -------------------------------------------------------------------------

NUMERAL_RE = re.compile(r"(?<![^\W\uac00-\ud7a3]|[.,])\d+(?:[.,]\d+)*")
_DIGIT_RUN = re.compile(r"\d+(?:[.,]\d+)*")  # NUMERAL_RE without its look-behind


def numerals(text: str) -> list[re.Match[str]]:
    """The matches of :data:`NUMERAL_RE` in ``text``, in order.

    Hand-written: the look-behind that opens the pattern is tried at every character
    (5 µs a text); the rest of the pattern starts with a digit, which the regex engine
    finds fast. Filtering its matches is the same: inside a match every character follows
    a digit or a separator, where the look-behind fails too."""
    return [m for m in _DIGIT_RUN.finditer(text) if _may_start_numeral(text, m.start())]


def _may_start_numeral(text: str, start: int) -> bool:
    """NUMERAL_RE's look-behind: not after a separator or a word character but Hangul."""
    if not start:
        return True
    before = text[start - 1]
    return not (before in ".," or ((before.isalnum() or before == "_")
                                   and not "\uac00" <= before <= "\ud7a3"))


def numerals_reference(text: str) -> list[re.Match[str]]:
    """The plain version of :func:`numerals`, kept as the reference its tests compare it
    with."""
    return list(NUMERAL_RE.finditer(text))


def parse_numeral(s: str, lang: str = "en") -> tuple[Decimal, tuple[Decimal, ...]] | None:
    """The value of a digit string with ``.``/``,`` separators and its alternative reading.

    ``"3,000"`` → 3000 (alt 3.000 — German decimal comma), ``"1.000,50"`` → 1000.50,
    ``"99.5"`` → 99.5, ``"0,5"`` → 0.5; ``"1.000"`` → 1.000 (alt 1000), or 1000 (alt 1.000)
    when ``lang == "de"``. ``"1.2.3"``, ``"1,2,3"`` and ``"1.000,5.0"`` → None.
    """
    groups = re.split(r"[.,]", s)
    seps = [c for c in s if c in ".,"]
    if not seps:
        return Decimal(s), ()
    first_ok = 1 <= len(groups[0]) <= 3
    if len(set(seps)) == 2:
        grouping, dec = seps[:-1], seps[-1]
        if (first_ok and len(set(grouping)) == 1 and grouping[0] != dec
                and all(len(g) == 3 for g in groups[1:-1])):
            return Decimal("".join(groups[:-1]) + "." + groups[-1]), ()
        return None
    if len(seps) >= 2:
        if first_ok and all(len(g) == 3 for g in groups[1:]):
            return Decimal("".join(groups)), ()
        return None
    a, b = groups
    as_decimal = Decimal(a + "." + b)
    if len(b) != 3 or not first_ok or not a.strip("0"):
        return as_decimal, ()
    as_thousands = Decimal(a + b)
    if lang == "ko":  # Korean writes "3,000" for three thousand and "1.5" for decimals only
        return (as_thousands, ()) if seps[0] == "," else (as_decimal, ())
    if (seps[0] == ".") == (lang == "de"):
        return as_thousands, (as_decimal,)
    return as_decimal, (as_thousands,)


_KO_SMALL = {"천": 1000, "백": 100}
_KO_BIG = {"만": 10**4, "억": 10**8, "조": 10**12}
_KO_MULT_RE = re.compile(r"([천백])?([만억조])?")
_KO_NEXT_SEGMENT_RE = re.compile(r"[ \t]*(\d+(?:,\d{3})*)([천백])?([만억])?")
_LATIN_MULT_RE = re.compile(
    r"[ \t]+(Mio\.?|Millionen|Million|millions?|Mrd\.?|Milliarden|Milliarde|billions?|"
    r"Tsd\.?|thousand|Tausend)(?![^\W\d_])"
)
_LATIN_MULT = {"mio": 10**6, "million": 10**6, "millionen": 10**6, "millions": 10**6,
               "mrd": 10**9, "milliarde": 10**9, "milliarden": 10**9, "billion": 10**9,
               "billions": 10**9, "tsd": 1000, "thousand": 1000, "tausend": 1000}


def _ko_multiplier(text: str, pos: int) -> tuple[int, int, int]:
    """Korean multiplier attached at ``pos``: ``(multiplier, big_unit, end)``."""
    m = _KO_MULT_RE.match(text, pos)
    small, big = (m.group(1), m.group(2)) if m else (None, None)
    if big == "조" and not text.startswith("원", m.end() if m else pos):
        big = None  # "제3조" is Article 3, not 3 trillion
    mult = _KO_SMALL.get(small or "", 1) * _KO_BIG.get(big or "", 1)
    end = pos + len(small or "") + len(big or "")
    return mult, _KO_BIG.get(big or "", 1), end


def _numeral_at(text: str, m: re.Match[str], lang: str) -> tuple[Decimal, tuple[Decimal, ...],
                                                                  int] | None:
    """Value, alternatives and end of the numeral ``m`` with its multipliers."""
    parsed = parse_numeral(m.group(), lang)
    if parsed is None:
        return None
    value, alts = parsed
    if text.startswith((",-", ",–"), m.end()):  # German price notation "1.000,- €"
        return value, alts, m.end() + 2
    mult, big, end = _ko_multiplier(text, m.end())
    if mult > 1:
        value, alts = value * mult, tuple(a * mult for a in alts)
        # "1억 5천만원": add smaller segments that follow a big unit
        while big > 1:
            nxt = _KO_NEXT_SEGMENT_RE.match(text, end)
            if not nxt or not (nxt.group(2) or nxt.group(3)):
                break
            seg_mult = _KO_SMALL.get(nxt.group(2) or "", 1) * _KO_BIG.get(nxt.group(3) or "", 1)
            if seg_mult >= big:
                break
            add = Decimal(nxt.group(1).replace(",", "")) * seg_mult
            value, alts = value + add, tuple(a + add for a in alts)
            big, end = _KO_BIG.get(nxt.group(3) or "", 1), nxt.end()
        return value, alts, end
    lm = _LATIN_MULT_RE.match(text, end)
    if lm:
        factor = _LATIN_MULT[lm.group(1).rstrip(".").casefold()]
        return value * factor, tuple(a * factor for a in alts), lm.end()
    return value, alts, end


_LATIN_LETTERS = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def language_matters(numeral: str) -> bool:
    """Whether :func:`parse_numeral` reads ``numeral`` differently in some language: a single
    separator followed by exactly three digits (``1.000``, ``3,000``), not after ``0``."""
    if numeral.count(".") + numeral.count(",") != 1:
        return False
    a, b = re.split(r"[.,]", numeral)
    return len(b) == 3 and 1 <= len(a) <= 3 and bool(a.strip("0"))


# What can follow a plain integer and change it: a German price dash or a Korean multiplier
# (attached), or a blank and then a Latin multiplier word.
_ATTACHED_MULT = frozenset(",천백만억조")
_BLANK = frozenset(" \t")
_LATIN_MULT_NEXT = frozenset(" \tMTbmt")  # a blank, or the first letter of a multiplier
_CURRENCY_LAST = frozenset("€$₩£RDW \t\n")  # PREFIX_CURRENCY_RE's match ends the window


def numeral_quantity(text: str, m: re.Match[str],
                     language: Callable[[], str]) -> Quantity | None:
    """The quantity the numeral ``m`` writes (with its multipliers and unit), or None when
    it is no number (``1.2.3``, ``2FA``): :func:`numeral_quantity_reference`'s answer, the
    text's language asked for (``language()``) only when the numeral's reading needs it.

    Hand-written for the plain integer without a multiplier (most numerals): the reference
    path cost 0.8 s on a 6,000-question run."""
    digits = m.group()
    start, end = m.span()
    if "." in digits or "," in digits or text[end:end + 1] in _ATTACHED_MULT:
        return numeral_quantity_reference(
            text, m, language() if language_matters(digits) else "en")
    if (text[end:end + 1] in _BLANK and text[end + 1:end + 2] in _LATIN_MULT_NEXT
            and _LATIN_MULT_RE.match(text, end)):
        return numeral_quantity_reference(text, m, "en")
    value = Decimal(digits)
    unit, unit_end = match_unit(text, end)
    if unit is None:
        if _LATIN_LETTERS.match(text, end):
            return None  # "2FA", "5G", "1st": an identifier or ordinal, not a quantity
        if start and text[start - 1] in _CURRENCY_LAST:
            window = text[max(0, start - 4) : start]
            pre = PREFIX_CURRENCY_RE.search(window)
            if pre:
                unit, start = PREFIX_FAMILY[pre.group(1)], start - len(window) + pre.start()
    elif unit == TIME:  # "9 Uhr"
        value = Decimal(int(digits) * 100)
    end = unit_end if unit_end > end else end
    return Quantity(value, unit, text[start:end], (start, end))


def numeral_quantity_reference(text: str, m: re.Match[str], lang: str) -> Quantity | None:
    """The plain version of :func:`numeral_quantity` (every multiplier and unit tried, the
    language given), kept as the reference its tests compare it with."""
    parsed = _numeral_at(text, m, lang)
    if parsed is None:
        return None
    value, alts, end = parsed
    unit, unit_end = match_unit_reference(text, end)
    if unit is None and end == m.end():
        glued = _LATIN_LETTERS.match(text, end)
        if glued:  # "2FA", "5G", "1st": an identifier or ordinal, not a quantity
            return None
    if unit == TIME:  # "9 Uhr", "9.30 Uhr"
        hours, _, minutes = m.group().replace(",", ".").partition(".")
        if hours.isdigit() and (minutes == "" or minutes.isdigit()):
            value, alts = Decimal(int(hours) * 100 + int(minutes or 0)), ()
        else:  # "1.000,509 Uhr" is no clock time: the number alone
            unit, unit_end = None, end
    start = m.start()
    if unit is None:
        window = text[max(0, start - 4) : start]
        pre = PREFIX_CURRENCY_RE.search(window)
        if pre:
            unit, start = PREFIX_FAMILY[pre.group(1)], start - len(window) + pre.start()
    end = unit_end if unit_end > end else end
    return Quantity(value, unit, text[start:end], (start, end), alts)
