/*
 * invoice.c - invoice lifecycle and totals.
 *
 * Totals are computed line by line: quantity x unit price, minus the line
 * discount, then taxed with tax_compute_line(). Tax is rounded per line,
 * not per invoice, which is what most of the sample jurisdictions expect.
 */
#include <stdlib.h>
#include <string.h>

#include "invoice.h"

#define INITIAL_CAPACITY 8

ll_status invoice_init(invoice *inv, const char *number, const tax_table *table)
{
    if (inv == NULL || number == NULL || table == NULL)
        return LL_ERR_RANGE;
    memset(inv, 0, sizeof *inv);
    if (strlen(number) >= sizeof inv->number)
        return LL_ERR_RANGE;
    strcpy(inv->number, number);
    inv->table = table;
    inv->lines = calloc(INITIAL_CAPACITY, sizeof *inv->lines);
    if (inv->lines == NULL)
        return LL_ERR_NOMEM;
    inv->line_capacity = INITIAL_CAPACITY;
    return LL_OK;
}

/* Doubles the capacity of the line array, up to LL_MAX_LINES. */
static ll_status grow_lines(invoice *inv)
{
    size_t new_capacity = inv->line_capacity * 2;
    invoice_line *grown;

    if (new_capacity > LL_MAX_LINES)
        new_capacity = LL_MAX_LINES;
    if (new_capacity <= inv->line_capacity)
        return LL_ERR_FULL;
    grown = realloc(inv->lines, new_capacity * sizeof *grown);
    if (grown == NULL)
        return LL_ERR_NOMEM;
    inv->lines = grown;
    inv->line_capacity = new_capacity;
    return LL_OK;
}

ll_status invoice_add_line(invoice *inv, const invoice_line *line)
{
    if (line->discount_bp < 0 || line->discount_bp > BP_ONE_HUNDRED_PERCENT)
        return LL_ERR_RANGE;
    if (inv->line_count == inv->line_capacity)
        LL_TRY(grow_lines(inv));
    inv->lines[inv->line_count++] = *line;
    return LL_OK;
}

/* Net amount of one line: qty x unit price, less the line discount. */
static ll_status line_net(const invoice_line *line, money_t *out)
{
    money_t gross;
    money_t discount;

    LL_TRY(money_mul_qty(line->unit_price, line->qty_milli, &gross));
    discount = money_mul_bp(gross, line->discount_bp, ROUND_HALF_UP);
    *out = gross - discount;
    return LL_OK;
}

/* Adds one taxed line to the subtotal of its category. */
static void add_to_subtotal(invoice_totals *totals, tax_category category,
                            const tax_result *taxed)
{
    size_t i;

    for (i = 0; i < totals->category_count; i++) {
        if (totals->by_category[i].category == category)
            break;
    }
    if (i == totals->category_count) {
        totals->by_category[i].category = category;
        totals->by_category[i].rate_bp = taxed->rate_bp;
        totals->by_category[i].net = 0;
        totals->by_category[i].tax = 0;
        totals->category_count++;
    }
    totals->by_category[i].net += taxed->net;
    totals->by_category[i].tax += taxed->tax;
}

ll_status invoice_compute_totals(invoice *inv)
{
    size_t i;
    invoice_totals totals;

    memset(&totals, 0, sizeof totals);
    for (i = 0; i < inv->line_count; i++) {
        invoice_line *line = &inv->lines[i];
        tax_result taxed;

        LL_TRY(line_net(line, &line->net));
        LL_TRY(tax_compute_line(inv->table, line->category, line->net, &taxed));
        line->tax = taxed.tax;
        add_to_subtotal(&totals, line->category, &taxed);
        LL_TRY(money_add(totals.net, taxed.net, &totals.net));
        LL_TRY(money_add(totals.tax, taxed.tax, &totals.tax));
    }
    LL_TRY(money_add(totals.net, totals.tax, &totals.gross));
    inv->totals = totals;
    return LL_OK;
}

/*
 * The early-payment discount is computed on the gross total and is shown
 * as information only; it does not change the totals.
 */
money_t invoice_early_payment_amount(const invoice *inv)
{
    return money_mul_bp(inv->totals.gross, inv->early_payment_bp,
                        ROUND_DOWN);
}

void invoice_free(invoice *inv)
{
    free(inv->lines);
    inv->lines = NULL;
    inv->line_count = 0;
    inv->line_capacity = 0;
}
