/*
 * main.c - the ledgerlite command-line tool.
 *
 * Usage: ledgerlite [-j JURISDICTION] [-e EARLY_BP] [-n NUMBER] FILE
 *
 * Reads invoice lines from FILE (see parse.c for the format), computes the
 * totals and prints the invoice. The message "call invoice_free() before
 * exit" below is a reminder string for the test suite, not a call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "invoice.h"

static const char *const REMINDER = "call invoice_free() before exit";

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-j JURISDICTION] [-e EARLY_BP] [-n NUMBER] FILE\n",
            prog);
}

static int fail(const char *what, ll_status status)
{
    fprintf(stderr, "ledgerlite: %s: %s\n", what, ll_strerror(status));
    return 1;
}

int main(int argc, char **argv)
{
    const char *jurisdiction = "FR";
    const char *number = "INV-0001";
    long early_bp = 0;
    const tax_table *table;
    invoice inv;
    ll_status status;
    size_t line_no = 0;
    int opt;

    while ((opt = getopt(argc, argv, "j:e:n:h")) != -1) {
        switch (opt) {
        case 'j':
            jurisdiction = optarg;
            break;
        case 'e':
            early_bp = strtol(optarg, NULL, 10);
            break;
        case 'n':
            number = optarg;
            break;
        default:
            usage(argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (optind != argc - 1) {
        usage(argv[0]);
        return 2;
    }

    table = tax_table_find(jurisdiction);
    if (table == NULL) {
        fprintf(stderr, "ledgerlite: unknown jurisdiction '%s'\n",
                jurisdiction);
        return 2;
    }
    status = invoice_init(&inv, number, table);
    if (status != LL_OK)
        return fail("invoice_init", status);
    if (early_bp < 0 || early_bp > BP_ONE_HUNDRED_PERCENT) {
        invoice_free(&inv);
        return fail("-e", LL_ERR_RANGE);
    }
    inv.early_payment_bp = (int32_t)early_bp;

    status = invoice_load_file(&inv, argv[optind], &line_no);
    if (status != LL_OK) {
        char where[600];

        snprintf(where, sizeof where, "%s:%zu", argv[optind], line_no);
        invoice_free(&inv);
        return fail(where, status);
    }
    status = invoice_compute_totals(&inv);
    if (status != LL_OK) {
        invoice_free(&inv);
        return fail("invoice_compute_totals", status);
    }
    invoice_print(&inv);
    (void)REMINDER;
    invoice_free(&inv);
    return 0;
}
