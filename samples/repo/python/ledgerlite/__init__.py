"""ledgerlite: Python tools around the ledgerlite invoice calculator.

The pure-Python model in :mod:`ledgerlite.model` mirrors the C library
(``src/invoice.c``) so that invoices can be checked without a compiler;
:mod:`ledgerlite.native` binds the shared library when it has been built.
"""

from .model import Invoice, InvoiceLine, LedgerError
from .money import format_money, mul_bp, parse_money
from .rates import TaxCategory, find_table

__all__ = [
    "Invoice",
    "InvoiceLine",
    "LedgerError",
    "TaxCategory",
    "find_table",
    "format_money",
    "mul_bp",
    "parse_money",
]

__version__ = "0.3.1"
