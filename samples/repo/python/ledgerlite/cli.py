"""Command-line interface: `python -m ledgerlite.cli total FILE`.

Sub-commands:
  total FILE   print the totals of an invoice file
  check        compare the Python model with libledgerlite.so
  rates        list the built-in tax tables
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from . import native
from .model import EARLY_PAYMENT_DAYS, LedgerError, load_invoice
from .money import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, format_money, mul_bp
from .rates import TaxCategory, find_table, jurisdictions


class Command:
    """Base class of sub-commands; subclasses implement run()."""

    name = ""
    help = ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        pass

    def run(self, args: argparse.Namespace) -> int:
        raise NotImplementedError


class TotalCommand(Command):
    name = "total"
    help = "print the totals of an invoice file"

    def configure(self, parser):
        parser.add_argument("file")
        parser.add_argument("-j", "--jurisdiction", default="FR")
        parser.add_argument("-e", "--early-bp", type=int, default=0)
        parser.add_argument("--json", action="store_true")

    def run(self, args):
        invoice = load_invoice(args.file, find_table(args.jurisdiction),
                               early_payment_bp=args.early_bp)
        if args.json:
            json.dump({"net": invoice.net, "tax": invoice.tax, "gross": invoice.gross,
                       "subtotals": {s.category.label: s.tax for s in invoice.subtotals}},
                      sys.stdout)
            sys.stdout.write("\n")
            return 0
        for sub in invoice.subtotals:
            print(f"{sub.category.label:<14} {sub.rate_bp / 100:6.2f}%  "
                  f"net {format_money(sub.net):>14}  tax {format_money(sub.tax):>12}")
        print(f"Total due {format_money(invoice.gross)}")
        if invoice.early_payment_bp:
            print(f"Discount if paid within {EARLY_PAYMENT_DAYS} days: "
                  f"{format_money(invoice.early_payment_amount())}")
        return 0


class CheckCommand(Command):
    name = "check"
    help = "compare rounding in Python and in libledgerlite.so"

    def run(self, args):
        lib = native.load()
        if lib is None:
            print("libledgerlite.so not found; run make first", file=sys.stderr)
            return 2
        mismatches = 0
        for amount in range(-2005, 2006, 7):
            for rate in (550, 700, 1000, 1950, 2000, 2100):
                for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN, ROUND_DOWN):
                    if lib.mul_bp(amount, rate, mode) != mul_bp(amount, rate, mode):
                        mismatches += 1
            if lib.format_money(amount * 1013) != format_money(amount * 1013):
                mismatches += 1
        print(f"{mismatches} mismatches against {lib.path}")
        return 1 if mismatches else 0


class RatesCommand(Command):
    name = "rates"
    help = "list the built-in tax tables"

    def run(self, args):
        for code in jurisdictions():
            table = find_table(code)
            rates = ", ".join(f"{c.label} {table.rate_bp(c) / 100:.2f}%" for c in TaxCategory)
            print(f"{code}: {rates} (rounding: {table.rounding})")
        return 0


COMMANDS = [TotalCommand(), CheckCommand(), RatesCommand()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ledgerlite-py")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.configure(sub.add_parser(command.name, help=command.help))
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    command = next(c for c in COMMANDS if c.name == args.command)
    try:
        return command.run(args)
    except (LedgerError, ValueError, OSError) as exc:
        print(f"ledgerlite-py: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
