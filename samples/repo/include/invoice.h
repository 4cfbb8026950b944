/*
 * invoice.h - invoices, invoice lines and totals.
 *
 * Typical use:
 *   invoice inv;
 *   invoice_init(&inv, "INV-0001", tax_table_find("FR"));
 *   invoice_add_line(&inv, &line);
 *   invoice_compute_totals(&inv);
 *   invoice_free(&inv);
 */
#ifndef LEDGERLITE_INVOICE_H
#define LEDGERLITE_INVOICE_H

#include <stddef.h>

#include "money.h"
#include "status.h"
#include "tax.h"

/* Hard limit on lines per invoice; invoice_add_line() returns LL_ERR_FULL. */
#define LL_MAX_LINES 512

/* Maximum length of a line description, including the terminating NUL. */
#define LL_DESC_MAX 96

/* Early-payment discount applied when paid within this many days. */
#define LL_EARLY_PAYMENT_DAYS 10

typedef struct invoice_line {
    char description[LL_DESC_MAX];
    int64_t qty_milli;          /* quantity in thousandths: 1500 = 1.5 */
    money_t unit_price;         /* net price per unit */
    int32_t discount_bp;        /* line discount, basis points */
    tax_category category;
    /* Filled in by invoice_compute_totals(): */
    money_t net;
    money_t tax;
} invoice_line;

/* Per-category subtotal, as printed in the tax summary of an invoice. */
typedef struct tax_subtotal {
    tax_category category;
    int32_t rate_bp;
    money_t net;
    money_t tax;
} tax_subtotal;

typedef struct invoice_totals {
    money_t net;
    money_t tax;
    money_t gross;
    tax_subtotal by_category[TAX_CATEGORY_COUNT];
    size_t category_count;
} invoice_totals;

typedef struct invoice {
    char number[32];
    const tax_table *table;
    invoice_line *lines;
    size_t line_count;
    size_t line_capacity;
    int32_t early_payment_bp;   /* discount for payment within LL_EARLY_PAYMENT_DAYS */
    invoice_totals totals;
} invoice;

ll_status invoice_init(invoice *inv, const char *number, const tax_table *table);
ll_status invoice_add_line(invoice *inv, const invoice_line *line);
ll_status invoice_compute_totals(invoice *inv);
money_t invoice_early_payment_amount(const invoice *inv);
void invoice_free(invoice *inv);

/* Reads "description;qty;unit_price;discount_bp;category" lines (parse.c). */
ll_status invoice_parse_line(const char *text, invoice_line *out);
ll_status invoice_load_file(invoice *inv, const char *path, size_t *line_no);

/* Writes a plain-text invoice to stdout (report.c). */
void invoice_print(const invoice *inv);

#endif /* LEDGERLITE_INVOICE_H */
