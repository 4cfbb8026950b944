/*
 * money.c - fixed-point money arithmetic (see money.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "money.h"

/* Absolute value that cannot overflow for values within MONEY_MAX. */
#define MONEY_ABS(x) ((x) < 0 ? -(x) : (x))

/*
 * Divides num by den (den > 0) and rounds the quotient with the given mode.
 * This is the single place where ledgerlite rounds money.
 */
static money_t div_round(money_t num, money_t den, money_rounding mode)
{
    money_t q = num / den;
    money_t r = num % den;
    money_t twice = MONEY_ABS(r) * 2;
    int sign = (num < 0) ? -1 : 1;

    if (r == 0 || mode == ROUND_DOWN)
        return q;
    if (twice > den)
        return q + sign;
    if (twice < den)
        return q;
    /* exactly half a minor unit */
    if (mode == ROUND_HALF_UP)
        return q + sign;
    return (q % 2 == 0) ? q : q + sign;    /* ROUND_HALF_EVEN */
}

money_t money_mul_bp(money_t amount, int32_t rate_bp, money_rounding mode)
{
    return div_round(amount * (money_t)rate_bp, BP_ONE_HUNDRED_PERCENT, mode);
}

ll_status money_mul_qty(money_t unit_price, int64_t qty_milli, money_t *out)
{
    if (MONEY_ABS(unit_price) > MONEY_MAX || qty_milli < 0 ||
        qty_milli > 1000000000LL)
        return LL_ERR_RANGE;
    *out = div_round(unit_price * qty_milli, 1000, ROUND_HALF_UP);
    if (MONEY_ABS(*out) > MONEY_MAX)
        return LL_ERR_RANGE;
    return LL_OK;
}

ll_status money_add(money_t a, money_t b, money_t *out)
{
    money_t sum = a + b;
    if (MONEY_ABS(sum) > MONEY_MAX)
        return LL_ERR_RANGE;
    *out = sum;
    return LL_OK;
}

ll_status money_parse(const char *text, money_t *out)
{
    money_t units = 0;
    money_t cents = 0;
    int negative = 0;
    int decimals = 0;
    const char *p = text;

    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-' || *p == '+') {
        negative = (*p == '-');
        p++;
    }
    if (!isdigit((unsigned char)*p))
        return LL_ERR_PARSE;
    while (isdigit((unsigned char)*p)) {
        units = units * 10 + (*p - '0');
        if (units > MONEY_MAX / MONEY_SCALE)
            return LL_ERR_RANGE;
        p++;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            if (decimals == 2)
                return LL_ERR_PARSE;    /* more precision than a cent */
            cents = cents * 10 + (*p - '0');
            decimals++;
            p++;
        }
        if (decimals == 1)
            cents *= 10;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '\0')
        return LL_ERR_PARSE;
    *out = MONEY(units, cents);
    if (negative)
        *out = -*out;
    return LL_OK;
}

size_t money_format(money_t amount, char *buf, size_t buflen)
{
    char digits[32];
    char tmp[48];
    money_t abs_amount = MONEY_ABS(amount);
    size_t n, i, j = 0;
    int len;

    len = snprintf(digits, sizeof digits, "%lld",
                   (long long)(abs_amount / MONEY_SCALE));
    if (len < 0)
        return 0;
    n = (size_t)len;
    if (amount < 0)
        tmp[j++] = '-';
    for (i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            tmp[j++] = ',';                 /* thousands separator */
        tmp[j++] = digits[i];
    }
    j += (size_t)snprintf(tmp + j, sizeof tmp - j, ".%02lld",
                          (long long)(abs_amount % MONEY_SCALE));
    if (buflen == 0)
        return j;
    snprintf(buf, buflen, "%s", tmp);
    return j;
}
