"""Invoice model in pure Python, mirroring src/invoice.c and src/parse.c."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional

from .money import BP_ONE_HUNDRED_PERCENT, ROUND_DOWN, ROUND_HALF_UP, mul_bp, mul_qty, parse_money
from .rates import TaxCategory, TaxTable

MAX_LINES = 512          # LL_MAX_LINES in include/invoice.h
DESC_MAX = 95            # LL_DESC_MAX minus the terminating NUL
EARLY_PAYMENT_DAYS = 10  # LL_EARLY_PAYMENT_DAYS


class LedgerError(Exception):
    """Raised for malformed input, with the file and line number at fault."""

    def __init__(self, message: str, path: Optional[str] = None, line_no: int = 0):
        where = f"{path}:{line_no}: " if path else ""
        super().__init__(where + message)
        self.path = path
        self.line_no = line_no


@dataclass
class InvoiceLine:
    description: str
    qty_milli: int
    unit_price: int
    discount_bp: int = 0
    category: TaxCategory = TaxCategory.STANDARD
    net: int = 0
    tax: int = 0

    @classmethod
    def parse(cls, text: str) -> "InvoiceLine":
        """Parse 'description;qty;unit_price;discount_bp;category'.

        This is the Python twin of invoice_parse_line(); the name appears
        here only in a docstring and is not a call.
        """
        fields = text.rstrip("\r\n").split(";")
        if len(fields) != 5:
            raise LedgerError(f"expected 5 fields, got {len(fields)}")
        description, qty, price, discount, category = fields
        if len(description) > DESC_MAX:
            raise LedgerError("description too long")
        try:
            return cls(
                description=description,
                qty_milli=_parse_qty_milli(qty),
                unit_price=parse_money(price),
                discount_bp=int(discount),
                category=TaxCategory.parse(category),
            )
        except ValueError as exc:
            raise LedgerError(str(exc)) from None

    def compute_net(self) -> int:
        gross = mul_qty(self.unit_price, self.qty_milli)
        return gross - mul_bp(gross, self.discount_bp, ROUND_HALF_UP)


def _parse_qty_milli(text: str) -> int:
    whole, _, frac = text.strip().partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()) or len(frac) > 3:
        raise ValueError(f"not a quantity: {text!r}")
    return int(whole) * 1000 + int(frac.ljust(3, "0") or 0)


@dataclass
class Subtotal:
    category: TaxCategory
    rate_bp: int
    net: int = 0
    tax: int = 0


@dataclass
class Invoice:
    number: str
    table: TaxTable
    early_payment_bp: int = 0
    lines: List[InvoiceLine] = field(default_factory=list)
    net: int = 0
    tax: int = 0
    gross: int = 0
    subtotals: List[Subtotal] = field(default_factory=list)

    def add_line(self, line: InvoiceLine) -> None:
        if not 0 <= line.discount_bp <= BP_ONE_HUNDRED_PERCENT:
            raise LedgerError("discount out of range")
        if len(self.lines) >= MAX_LINES:
            raise LedgerError(f"more than {MAX_LINES} lines")
        self.lines.append(line)

    def load(self, path: str) -> None:
        with open(path, encoding="utf-8") as handle:
            for line_no, text in enumerate(handle, start=1):
                if text.startswith("#") or not text.strip():
                    continue
                try:
                    self.add_line(InvoiceLine.parse(text))
                except LedgerError as exc:
                    raise LedgerError(str(exc), path, line_no) from None

    def compute_totals(self) -> None:
        """Same algorithm as invoice_compute_totals(): tax rounded per line."""
        by_category = {}
        self.net = self.tax = 0
        for line in self.lines:
            line.net = line.compute_net()
            rate = self.table.rate_bp(line.category)
            line.tax = mul_bp(line.net, rate, self.table.rounding)
            sub = by_category.setdefault(line.category, Subtotal(line.category, rate))
            sub.net += line.net
            sub.tax += line.tax
            self.net += line.net
            self.tax += line.tax
        self.gross = self.net + self.tax
        self.subtotals = list(by_category.values())

    def early_payment_amount(self) -> int:
        return mul_bp(self.gross, self.early_payment_bp, ROUND_DOWN)

    def __iter__(self) -> Iterator[InvoiceLine]:
        return iter(self.lines)


def load_invoice(path: str, table: TaxTable, number: str = "INV-0001",
                 early_payment_bp: int = 0) -> Invoice:
    invoice = Invoice(number=number, table=table, early_payment_bp=early_payment_bp)
    invoice.load(path)
    invoice.compute_totals()
    return invoice


def total_of(invoices: Iterable[Invoice]) -> int:
    return sum(inv.gross for inv in invoices)
