"""`Quantity`, a number found in text, and the value encoding of dates and clock times."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

DATE = "date"
TIME = "time"


@dataclass(frozen=True)
class Quantity:
    """A number found in text.

    ``value`` is in the base unit (Korean/Latin multipliers applied); ``unit`` is a unit
    family (``day``, ``month``, ``percent``, ``eur``, ``date``, ...) or None; ``raw`` is the
    text as written (number and unit); ``span`` is ``(start, end)`` into the text;
    ``alternatives`` holds the other reading of an ambiguous numeral (``1.000``).
    """

    value: Decimal
    unit: str | None
    raw: str
    span: tuple[int, int]
    alternatives: tuple[Decimal, ...] = ()

    @property
    def values(self) -> tuple[Decimal, ...]:
        """Every reading of the numeral: the primary value first."""
        return (self.value, *self.alternatives)


def date_parts(value: Decimal) -> tuple[int, int, int]:
    v = int(value)
    return v // 10000, v // 100 % 100, v % 100
