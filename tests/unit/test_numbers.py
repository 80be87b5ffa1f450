"""Number normalisation: separators, units, particles, number words, dates and support."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragassay.metrics.numbers import (
    Quantity,
    extract_numbers,
    number_supported,
    parse_numeral,
)

D = Decimal


def one(text: str) -> tuple[Decimal, str | None, str]:
    """The single quantity in ``text`` as (value, unit, raw)."""
    found = extract_numbers(text)
    assert len(found) == 1, found
    q = found[0]
    return q.value, q.unit, q.raw


def values(text: str) -> list[tuple[Decimal, str | None]]:
    return [(q.value, q.unit) for q in extract_numbers(text)]


def supported(answer: str, source: str) -> bool:
    src = extract_numbers(source)
    found = extract_numbers(answer)
    assert found, f"no number in {answer!r}"
    return all(number_supported(q, src) for q in found)


# --- separators -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("numeral", "lang", "value", "alternatives"),
    [
        ("3", "en", D(3), ()),
        ("3,000", "en", D(3000), (D("3.000"),)),  # alt: German decimal comma
        ("3,000", "ko", D(3000), ()),  # Korean never writes a decimal comma
        ("1.000", "en", D("1.000"), (D(1000),)),  # English: decimal point first
        ("1.000", "de", D(1000), (D("1.000"),)),  # German: thousands first
        ("1.000,50", "en", D("1000.50"), ()),  # unambiguous German
        ("1,000.50", "de", D("1000.50"), ()),  # unambiguous English
        ("1.000.000", "en", D(1_000_000), ()),
        ("99.5", "de", D("99.5"), ()),  # not three digits after the point: a decimal
        ("0,5", "en", D("0.5"), ()),
        ("0,500", "en", D("0.5"), ()),  # "0" cannot start a thousands group
    ],
)
def test_parse_numeral(numeral: str, lang: str, value: Decimal,
                       alternatives: tuple[Decimal, ...]) -> None:
    assert parse_numeral(numeral, lang) == (value, alternatives)


@pytest.mark.parametrize("numeral", ["1.2.3", "1,2,3", "1.000,5.0", "1,00.000"])
def test_parse_numeral_refuses_versions_and_lists(numeral: str) -> None:
    assert parse_numeral(numeral) is None


def test_language_of_the_text_picks_the_reading_of_1_000() -> None:
    assert one("Die Gebühr für alle beträgt 1.000 Euro")[0] == D(1000)
    assert one("The fee is 1.000 EUR")[0] == D("1.000")
    assert one("수수료는 1.000원이다")[0] == D("1.000")


# --- units and particles --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "unit", "raw"),
    [
        ("보증기간은 6개월이다", D(6), "month", "6개월"),
        ("가용성 99.5퍼센트", D("99.5"), "percent", "99.5퍼센트"),
        ("availability 99.5%", D("99.5"), "percent", "99.5%"),
        ("Verfügbarkeit 99,5 %", D("99.5"), "percent", "99,5 %"),
        ("Zuschlag 0,5 %", D("0.5"), "percent", "0,5 %"),
        ("Versand 3 €", D(3), "eur", "3 €"),
        ("Versand 3€", D(3), "eur", "3€"),
        ("shipping €3", D(3), "eur", "€3"),
        ("Versand 3 EUR", D(3), "eur", "3 EUR"),
        ("Versand 3 Euro", D(3), "eur", "3 Euro"),
        ("예산 3,000만원", D(3000 * 10_000), "krw", "3,000만원"),
        ("예산 3천만원", D(3 * 1000 * 10_000), "krw", "3천만원"),
        ("예산 1억 5천만원", D(1 * 10**8 + 5 * 1000 * 10_000), "krw", "1억 5천만원"),
        ("3 Mio. €", D(3 * 10**6), "eur", "3 Mio. €"),
        ("24시간 운영", D(24), "hour", "24시간"),
        ("5영업일 이내", D(5), "business_day", "5영업일"),
        ("1년 이상", D(1), "year", "1년"),
        ("innerhalb von 5 Tagen", D(5), "day", "5 Tagen"),
        ("within 5 days", D(5), "day", "5 days"),
        ("30 Minuten", D(30), "minute", "30 Minuten"),
        ("10 GB Speicher", D(10), "gb", "10 GB"),
        ("2 Stunden", D(2), "hour", "2 Stunden"),
        ("5 Werktage", D(5), "business_day", "5 Werktage"),
        ("5 business days", D(5), "business_day", "5 business days"),
        ("24-hour support", D(24), "hour", "24-hour"),
        ("6개월간 무상", D(6), "month", "6개월"),
        ("6개월의 기간", D(6), "month", "6개월"),
        ("6개월로 한다", D(6), "month", "6개월"),
        ("3 개월 이내", D(3), "month", "3 개월"),
        ("제3조", D(3), None, "3"),  # 조 is a multiplier only before 원
    ],
)
def test_units_and_particles(text: str, value: Decimal, unit: str, raw: str) -> None:
    assert one(text) == (value, unit, raw)


def test_full_width_digits_and_signs() -> None:
    assert one("３，０００원") == (D(3000), "krw", "３，０００원")
    assert one("가용성 ９９.５％") == (D("99.5"), "percent", "９９.５％")


def test_german_price_notation_and_points() -> None:
    assert one("Die Gebühr beträgt 1.000,- Euro") == (D(1000), "eur", "1.000,- Euro")
    assert values("기술평가 80점, 가격평가 20점") == [(D(80), "point"), (D(20), "point")]


def test_korean_large_number_units_agree() -> None:
    assert one("3천만원")[:2] == one("3,000만원")[:2] == one("30,000,000원")[:2]
    assert supported("3천만원", "사업 예산은 3,000만원(부가세 포함)이다.")


def test_unit_after_a_space_must_not_be_the_start_of_another_word() -> None:
    assert values("3 일반 사항") == [(D(3), None)]  # 일반 = "general", not a day


@pytest.mark.parametrize(
    ("texts", "unit"),
    [
        (["5 Tage", "5 days", "5일"], "day"),
        (["6개월", "6 months", "6 Monate"], "month"),
        (["1년", "1 year", "1 Jahr"], "year"),
        (["5%", "5 퍼센트", "5 Prozent", "5 percent"], "percent"),
        (["3 €", "3 EUR", "3 Euro", "3 유로"], "eur"),
        (["3원", "3 KRW", "3 won", "₩3"], "krw"),
        (["2시간", "2 Stunden", "2 hours"], "hour"),
        (["5영업일", "5 Werktage", "5 business days"], "business_day"),
    ],
)
def test_unit_families(texts: list[str], unit: str) -> None:
    assert {one(t)[1] for t in texts} == {unit}


# --- number words ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("두 달 이내", D(2), "month"),
        ("세 번 시도", D(3), "times"),
        ("다섯 개", D(5), "item"),
        ("열두 달", D(12), "month"),
        ("한달간", D(1), "month"),
        ("하루", D(1), "day"),
        ("이틀 이내", D(2), "day"),
        ("보름", D(15), "day"),
        ("삼 개월", D(3), "month"),
        ("삼개월", D(3), "month"),
        ("일주일", D(1), "week"),
        ("이십사 시간", D(24), "hour"),
        ("fünf Werktage", D(5), "business_day"),
        ("vierundzwanzig Stunden", D(24), "hour"),
        ("ein Jahr", D(1), "year"),
        ("einen Monat", D(1), "month"),
        ("zwölf", D(12), None),
        ("five days", D(5), "day"),
        ("twenty-four hours", D(24), "hour"),
        ("one year", D(1), "year"),
        ("two hundred euros", D(200), "eur"),
    ],
)
def test_number_words(text: str, value: Decimal, unit: str | None) -> None:
    assert values(text) == [(value, unit)]


@pytest.mark.parametrize(
    "text",
    [
        "eine Frage",  # article without a unit
        "one of them",
        "available 24/7, a day pass",  # "a" never counts
        "이 시간에는",  # 이 = "this"
        "이 일은",  # "this work"
        "한국 세계 네트워크",  # 한/세/네 without a counter
        "두번째 항목",  # an ordinal
    ],
)
def test_number_words_without_false_positives(text: str) -> None:
    assert [q for q in extract_numbers(text) if not q.raw[:1].isdigit()] == []


def test_number_word_supported_by_digits_and_back() -> None:
    assert supported("fünf Werktage", "Die Lieferung dauert 5 Werktage.")
    assert supported("5 business days", "Die Lieferung dauert fünf Werktage.")
    assert supported("두 달", "기간은 2개월이다.")


# --- dates, times, identifiers --------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["2026-07-01", "2026/07/01", "2026. 7. 1.", "01.07.2026", "2026년 7월 1일",
     "1. Juli 2026", "July 1, 2026", "1 July 2026"],
)
def test_dates_are_one_quantity(text: str) -> None:
    assert values(text) == [(D(20260701), "date")]


def test_dates_compare_part_by_part() -> None:
    assert supported("2026년 7월 1일", "착수일: 2026-07-01")
    assert supported("7월 1일", "착수일: 2026-07-01")
    assert supported("2026년", "착수일: 2026-07-01")
    assert supported("2026", "Start: 2026-07-01")  # a bare number that is the year
    assert not supported("2026-08-01", "착수일: 2026-07-01")
    assert not supported("2026-07-01", "착수일은 2026년이다, 7개월, 1일")


def test_clock_times() -> None:
    assert values("운영 시간 09:00~18:00") == [(D(900), "time"), (D(1800), "time")]
    assert values("9시 30분") == [(D(930), "time")]
    assert values("ab 9 Uhr") == [(D(900), "time")]
    assert supported("9시", "Support ab 09:00")
    assert not supported("9시", "9 Tage")


@pytest.mark.parametrize(
    "text",
    ["SFR-003", "REQ-SEC-012", "COVID-19", "A4 용지", "2FA", "5G", "1st", "02-123-4567",
     "Version 1.2.3", "1. 항목\n2) 항목\n(3) 항목"],
)
def test_identifiers_and_list_markers_are_not_numbers(text: str) -> None:
    assert extract_numbers(text) == []


def test_ranges_share_the_unit_of_their_second_number() -> None:
    assert values("3-5 Tage") == [(D(3), "day"), (D(5), "day")]
    assert values("3~5일") == [(D(3), "day"), (D(5), "day")]
    assert values("2 to 3 weeks") == [(D(2), "week"), (D(3), "week")]


# --- number_supported -----------------------------------------------------------------


def q(value: str, unit: str | None, *alts: str) -> Quantity:
    return Quantity(D(value), unit, value, (0, len(value)), tuple(D(a) for a in alts))


def test_unit_families_must_match_when_both_have_one() -> None:
    assert not supported("5 Tage", "Versand kostet 5 €.")
    assert supported("5 Tage", "Versand dauert 5 Tage.")
    assert supported("5 days", "배송은 5일 걸린다.")


def test_unitless_answer_and_unitless_source_are_lenient() -> None:
    assert number_supported(q("5", None), [q("5", "eur")])  # the answer names no unit
    assert number_supported(q("5", "day"), [q("5", None)])  # the source names no unit
    assert not number_supported(q("5", None), [q("6", None)])


def test_values_compare_exactly() -> None:
    assert number_supported(q("99.5", "percent"), [q("99.50", "percent")])
    assert not number_supported(q("99.5", "percent"), [q("99.55", "percent")])
    assert not supported("99.9%", "가용성은 99.5% 이상")


def test_ambiguous_numerals_match_any_reading_of_each_other() -> None:
    # answer guessed English (1.000 = 1), source German (1.000 = 1000): same text, passes
    assert supported("1.000 Euro", "Die Gebühr für alle beträgt 1.000 Euro.")
    # an unambiguous "1" is not held by the German "1.000 Euro" (one thousand)
    assert not supported("1 Euro", "Die Gebühr für alle beträgt 1.000 Euro.")
    assert supported("1000 Euro", "Die Gebühr für alle beträgt 1.000 Euro.")


def test_number_supported_with_no_source_numbers() -> None:
    assert not number_supported(q("5", None), [])


# --- properties -----------------------------------------------------------------------


@given(st.integers(min_value=1, max_value=10**12),
       st.sampled_from(["원", "개월", " Tage", " days", "%", " €", ""]))
def test_thousands_separated_integers_parse(n: int, unit: str) -> None:
    found = extract_numbers(f"value {n:,}{unit}")
    assert [x.value for x in found] == [D(n)]


@given(st.integers(min_value=0, max_value=99_999), st.integers(min_value=1, max_value=99))
def test_german_decimal_comma(whole: int, cents: int) -> None:
    text = f"Preis {whole:,}".replace(",", ".") + f",{cents:02d} €"
    assert [x.value for x in extract_numbers(text)] == [D(whole) + D(cents) / 100]


@given(st.text(alphabet=st.sampled_from(list("0123456789 .,-~:년월일개월Tage€%abc가\n")),
               max_size=40))
def test_a_text_supports_its_own_numbers(text: str) -> None:
    found = extract_numbers(text)
    for x in found:
        assert text[x.span[0]:x.span[1]] == x.raw
        assert number_supported(x, found)
    spans = [x.span for x in found]
    assert spans == sorted(spans)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_a_numeral_with_several_separators_before_uhr_is_no_clock_time() -> None:
    """``9.30 Uhr`` is 09:30; ``1.000,509 Uhr`` and ``1.000.000 Uhr`` are no clock time (they
    raised ValueError, ending the run): the number alone, without a unit."""
    for text, value in (("um 1.000,509 Uhr", "1000.509"), ("1.000.000 Uhr", "1000000")):
        (q,) = extract_numbers(text)
        assert (q.value, q.unit) == (Decimal(value), None)
    (q,) = extract_numbers("9.30 Uhr")
    assert (q.value, q.unit) == (Decimal(930), "time")
