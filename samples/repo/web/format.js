// format.js - browser-side helpers for the ledgerlite invoice viewer.
//
// formatMoney() must produce exactly what money_format() in src/money.c
// prints, so that the web view and the text report agree to the cent.

'use strict';

const MONEY_SCALE = 100;

/** Formats an integer amount of cents as "-1,234.56". */
function formatMoney(cents) {
  const negative = cents < 0;
  const abs = Math.abs(cents);
  const units = Math.floor(abs / MONEY_SCALE).toString();
  const grouped = units.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = String(abs % MONEY_SCALE).padStart(2, '0');
  return (negative ? '-' : '') + grouped + '.' + fraction;
}

/** Formats a rate in basis points as "5.50%". */
function formatRate(rateBp) {
  return (rateBp / 100).toFixed(2) + '%';
}

/** Renders the JSON printed by `ledgerlite-py total --json` as table rows. */
function renderTotals(totals) {
  const rows = Object.entries(totals.subtotals).map(
    ([category, tax]) => `<tr><td>${category}</td><td>${formatMoney(tax)}</td></tr>`);
  rows.push(`<tr><th>Total due</th><th>${formatMoney(totals.gross)}</th></tr>`);
  return rows.join('\n');
}

module.exports = { formatMoney, formatRate, renderTotals };
