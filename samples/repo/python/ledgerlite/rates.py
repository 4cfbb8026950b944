"""Tax categories and the built-in rate tables (copy of src/tax.c)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .money import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP


class TaxCategory(enum.IntEnum):
    """Same order as enum tax_category in include/tax.h."""

    STANDARD = 0
    REDUCED = 1
    SUPER_REDUCED = 2
    ZERO = 3
    EXEMPT = 4

    @classmethod
    def parse(cls, name: str) -> "TaxCategory":
        try:
            return cls[name.strip().upper().replace("-", "_")]
        except KeyError:
            raise ValueError(f"unknown tax category: {name!r}") from None

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


@dataclass(frozen=True)
class TaxTable:
    jurisdiction: str
    rates_bp: tuple
    rounding: str

    def rate_bp(self, category: TaxCategory) -> int:
        if category in (TaxCategory.ZERO, TaxCategory.EXEMPT):
            return 0
        return self.rates_bp[int(category)]


_TABLES = {
    "FR": TaxTable("FR", (2000, 1000, 550, 0, 0), ROUND_HALF_UP),
    "DE": TaxTable("DE", (1900, 700, 700, 0, 0), ROUND_HALF_UP),
    "NL": TaxTable("NL", (2100, 900, 900, 0, 0), ROUND_HALF_EVEN),
    "IE": TaxTable("IE", (2300, 1350, 900, 0, 0), ROUND_HALF_EVEN),
    "XX": TaxTable("XX", (0, 0, 0, 0, 0), ROUND_DOWN),
}


def find_table(jurisdiction: str) -> TaxTable:
    """Return the table for a code such as 'FR' (like tax_table_find)."""
    try:
        return _TABLES[jurisdiction.upper()]
    except KeyError:
        raise ValueError(f"unknown jurisdiction: {jurisdiction!r}") from None


def jurisdictions() -> list:
    return sorted(_TABLES)
