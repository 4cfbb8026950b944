"""Fixed-point money helpers, kept identical to src/money.c.

Amounts are integers in minor units (cents); rates are basis points.
"""

from __future__ import annotations

import re

MONEY_SCALE = 100
BP_ONE_HUNDRED_PERCENT = 10_000
MONEY_MAX = 10**13

ROUND_HALF_UP = "half_up"
ROUND_HALF_EVEN = "half_even"
ROUND_DOWN = "down"

_AMOUNT_RE = re.compile(r"^\s*([+-]?)(\d+)(?:\.(\d{0,2}))?\s*$")


def _div_round(num: int, den: int, mode: str) -> int:
    """Divide and round like div_round() in money.c (truncating division)."""
    sign = -1 if num < 0 else 1
    q, r = divmod(abs(num), den)
    q *= sign
    if r == 0 or mode == ROUND_DOWN:
        return q
    twice = 2 * r
    if twice > den:
        return q + sign
    if twice < den:
        return q
    if mode == ROUND_HALF_UP:
        return q + sign
    return q if q % 2 == 0 else q + sign


def mul_bp(amount: int, rate_bp: int, mode: str = ROUND_HALF_EVEN) -> int:
    """Return amount * rate_bp / 10000, rounded (the C money_mul_bp)."""
    return _div_round(amount * rate_bp, BP_ONE_HUNDRED_PERCENT, mode)


def mul_qty(unit_price: int, qty_milli: int) -> int:
    """Multiply a unit price by a quantity in thousandths."""
    if qty_milli < 0 or abs(unit_price) > MONEY_MAX:
        raise ValueError("quantity or price out of range")
    return _div_round(unit_price * qty_milli, 1000, ROUND_HALF_UP)


def parse_money(text: str) -> int:
    """Parse '1234.56' into 123456 minor units; raise ValueError otherwise."""
    match = _AMOUNT_RE.match(text)
    if match is None:
        raise ValueError(f"not an amount: {text!r}")
    sign, units, cents = match.groups()
    cents = (cents or "").ljust(2, "0")
    value = int(units) * MONEY_SCALE + int(cents)
    if value > MONEY_MAX:
        raise ValueError(f"amount too large: {text!r}")
    return -value if sign == "-" else value


def format_money(amount: int) -> str:
    """Format minor units as '-1,234.56' (same output as money_format)."""
    units, cents = divmod(abs(amount), MONEY_SCALE)
    text = f"{units:,}.{cents:02d}"
    return "-" + text if amount < 0 else text
