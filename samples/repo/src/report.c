/*
 * report.c - plain-text rendering of an invoice.
 */
#include <stdio.h>

#include "invoice.h"

#define RULE "------------------------------------------------------------"

static void print_amount_row(const char *label, money_t amount)
{
    char buf[40];

    money_format(amount, buf, sizeof buf);
    printf("%-44s %15s\n", label, buf);
}

void invoice_print(const invoice *inv)
{
    size_t i;
    char net[40];
    char tax[40];

    printf("Invoice %s (%s)\n%s\n", inv->number, inv->table->jurisdiction,
           RULE);
    for (i = 0; i < inv->line_count; i++) {
        const invoice_line *line = &inv->lines[i];

        money_format(line->net, net, sizeof net);
        printf("%-32.32s %7lld.%03lld %19s\n", line->description,
               (long long)(line->qty_milli / 1000),
               (long long)(line->qty_milli % 1000), net);
    }
    printf("%s\n", RULE);
    for (i = 0; i < inv->totals.category_count; i++) {
        const tax_subtotal *sub = &inv->totals.by_category[i];

        money_format(sub->net, net, sizeof net);
        money_format(sub->tax, tax, sizeof tax);
        printf("  %-14s %3d.%02d%%  net %14s  tax %12s\n",
               tax_category_name(sub->category), sub->rate_bp / 100,
               sub->rate_bp % 100, net, tax);
    }
    print_amount_row("Total net", inv->totals.net);
    print_amount_row("Total tax", inv->totals.tax);
    print_amount_row("Total due", inv->totals.gross);
    if (inv->early_payment_bp > 0) {
        char label[64];

        snprintf(label, sizeof label, "Discount if paid within %d days",
                 LL_EARLY_PAYMENT_DAYS);
        print_amount_row(label, invoice_early_payment_amount(inv));
    }
}
