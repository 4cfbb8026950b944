/*
 * tax.h - tax categories and the rules that map them to rates.
 */
#ifndef LEDGERLITE_TAX_H
#define LEDGERLITE_TAX_H

#include "money.h"
#include "status.h"

/* The tax category of one invoice line. */
typedef enum tax_category {
    TAX_STANDARD = 0,
    TAX_REDUCED,
    TAX_SUPER_REDUCED,
    TAX_ZERO,
    TAX_EXEMPT,
    TAX_CATEGORY_COUNT
} tax_category;

/* A rate table for one jurisdiction, in basis points per category. */
typedef struct tax_table {
    char jurisdiction[8];                   /* e.g. "FR", "DE", "NL" */
    int32_t rate_bp[TAX_CATEGORY_COUNT];    /* rate for each category */
    money_rounding rounding;                /* how tax amounts are rounded */
} tax_table;

/* Result of taxing one line. */
typedef struct tax_result {
    money_t net;
    money_t tax;
    int32_t rate_bp;
} tax_result;

/* Looks up the built-in table for a two-letter jurisdiction code. */
const tax_table *tax_table_find(const char *jurisdiction);

/* Returns the rate for a category; TAX_EXEMPT and TAX_ZERO give 0. */
int32_t tax_rate_bp(const tax_table *table, tax_category category);

/* Computes the tax on one net amount. */
ll_status tax_compute_line(const tax_table *table, tax_category category,
                           money_t net, tax_result *out);

/* Parses "standard", "reduced", "super-reduced", "zero" or "exempt". */
ll_status tax_category_parse(const char *name, tax_category *out);

/* Returns the lower-case name of a category. */
const char *tax_category_name(tax_category category);

#endif /* LEDGERLITE_TAX_H */
