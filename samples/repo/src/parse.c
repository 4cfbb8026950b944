/*
 * parse.c - reading invoice lines from semicolon-separated text files.
 *
 * Format, one line per invoice line ('#' starts a comment line):
 *   description;quantity;unit_price;discount_bp;category
 * Example:
 *   Consulting day;2.5;850.00;0;standard
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invoice.h"

#define FIELD_COUNT 5
#define LINE_BUF 512

/* Splits text in place at ';'. Returns the number of fields found. */
static int split_fields(char *text, char *fields[], int max_fields)
{
    int n = 0;
    char *p = text;

    fields[n++] = p;
    while (*p != '\0' && n <= max_fields) {
        if (*p == ';') {
            *p = '\0';
            if (n == max_fields)
                return n + 1;           /* too many fields */
            fields[n++] = p + 1;
        }
        p++;
    }
    return n;
}

/* Parses a decimal quantity with up to three decimals into thousandths. */
static ll_status parse_qty_milli(const char *text, int64_t *out)
{
    money_t hundredths;
    char buf[40];
    size_t len = strlen(text);
    const char *dot = strchr(text, '.');

    /* money_parse() accepts two decimals; a third one is handled here. */
    if (dot != NULL && strlen(dot + 1) == 3) {
        if (len >= sizeof buf)
            return LL_ERR_PARSE;
        memcpy(buf, text, len - 1);
        buf[len - 1] = '\0';
        LL_TRY(money_parse(buf, &hundredths));
        *out = hundredths * 10 + (text[len - 1] - '0');
        return LL_OK;
    }
    LL_TRY(money_parse(text, &hundredths));
    *out = hundredths * 10;
    return LL_OK;
}

ll_status invoice_parse_line(const char *text, invoice_line *out)
{
    char buf[LINE_BUF];
    char *fields[FIELD_COUNT + 1];
    char *end;
    long discount;

    if (strlen(text) >= sizeof buf)
        return LL_ERR_PARSE;
    strcpy(buf, text);
    buf[strcspn(buf, "\r\n")] = '\0';
    if (split_fields(buf, fields, FIELD_COUNT) != FIELD_COUNT)
        return LL_ERR_PARSE;

    memset(out, 0, sizeof *out);
    if (strlen(fields[0]) >= sizeof out->description)
        return LL_ERR_RANGE;
    strcpy(out->description, fields[0]);
    LL_TRY(parse_qty_milli(fields[1], &out->qty_milli));
    LL_TRY(money_parse(fields[2], &out->unit_price));
    errno = 0;
    discount = strtol(fields[3], &end, 10);
    if (errno != 0 || *end != '\0' || end == fields[3])
        return LL_ERR_PARSE;
    out->discount_bp = (int32_t)discount;
    return tax_category_parse(fields[4], &out->category);
}

ll_status invoice_load_file(invoice *inv, const char *path, size_t *line_no)
{
    char text[LINE_BUF];
    FILE *fp = fopen(path, "r");
    ll_status status = LL_OK;

    *line_no = 0;
    if (fp == NULL)
        return LL_ERR_IO;
    while (fgets(text, sizeof text, fp) != NULL) {
        invoice_line line;

        (*line_no)++;
        if (text[0] == '#' || text[0] == '\n')
            continue;
        status = invoice_parse_line(text, &line);
        if (status == LL_OK)
            status = invoice_add_line(inv, &line);
        if (status != LL_OK)
            break;
    }
    if (status == LL_OK && ferror(fp))
        status = LL_ERR_IO;
    fclose(fp);
    return status;
}
