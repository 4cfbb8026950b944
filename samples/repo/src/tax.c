/*
 * tax.c - built-in tax tables and per-line tax computation.
 *
 * The rates below are illustrative sample data for the ledgerlite test
 * suite; they are not tax advice.
 */
#include <string.h>

#include "tax.h"

static const tax_table TAX_TABLES[] = {
    /* jurisdiction, {standard, reduced, super-reduced, zero, exempt}, rounding */
    {"FR", {2000, 1000, 550, 0, 0}, ROUND_HALF_UP},
    {"DE", {1900, 700, 700, 0, 0}, ROUND_HALF_UP},
    {"NL", {2100, 900, 900, 0, 0}, ROUND_HALF_EVEN},
    {"IE", {2300, 1350, 900, 0, 0}, ROUND_HALF_EVEN},
    {"XX", {0, 0, 0, 0, 0}, ROUND_DOWN},   /* no tax: used by tests */
};

#define TAX_TABLE_COUNT (sizeof TAX_TABLES / sizeof TAX_TABLES[0])

static const char *const CATEGORY_NAMES[TAX_CATEGORY_COUNT] = {
    "standard", "reduced", "super-reduced", "zero", "exempt",
};

const tax_table *tax_table_find(const char *jurisdiction)
{
    size_t i;

    for (i = 0; i < TAX_TABLE_COUNT; i++) {
        if (strcmp(TAX_TABLES[i].jurisdiction, jurisdiction) == 0)
            return &TAX_TABLES[i];
    }
    return NULL;
}

int32_t tax_rate_bp(const tax_table *table, tax_category category)
{
    if (category == TAX_ZERO || category == TAX_EXEMPT)
        return 0;
    if ((int)category < 0 || category >= TAX_CATEGORY_COUNT)
        return 0;
    return table->rate_bp[category];
}

/*
 * Taxes one line. The caller (normally invoice_compute_totals) passes the
 * net amount after line discounts; the early-payment discount is never
 * taxed here.
 */
ll_status tax_compute_line(const tax_table *table, tax_category category,
                           money_t net, tax_result *out)
{
    if (table == NULL || out == NULL)
        return LL_ERR_RANGE;
    out->net = net;
    out->rate_bp = tax_rate_bp(table, category);
    out->tax = money_mul_bp(net, out->rate_bp, table->rounding);
    return LL_OK;
}

ll_status tax_category_parse(const char *name, tax_category *out)
{
    int i;

    for (i = 0; i < TAX_CATEGORY_COUNT; i++) {
        if (strcmp(CATEGORY_NAMES[i], name) == 0) {
            *out = (tax_category)i;
            return LL_OK;
        }
    }
    return LL_ERR_PARSE;
}

const char *tax_category_name(tax_category category)
{
    if ((int)category < 0 || category >= TAX_CATEGORY_COUNT)
        return "unknown";
    return CATEGORY_NAMES[category];
}
