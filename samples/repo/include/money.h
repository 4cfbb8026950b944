/*
 * money.h - fixed-point money arithmetic.
 *
 * Amounts are stored as a signed count of minor units (cents). Rates are
 * expressed in basis points (1 bp = 0.01 %), so 20 % VAT is 2000 bp.
 * Floating point is never used for money in ledgerlite.
 */
#ifndef LEDGERLITE_MONEY_H
#define LEDGERLITE_MONEY_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* A money amount in minor units (for EUR and USD: cents). */
typedef int64_t money_t;

/* Number of minor units in one major unit. */
#define MONEY_SCALE 100

/* Basis points in 100 %. */
#define BP_ONE_HUNDRED_PERCENT 10000

/* Largest amount accepted anywhere: 10^13 minor units (100 billion units). */
#define MONEY_MAX ((money_t)10000000000000LL)

/* Converts whole units and cents to a money_t, e.g. MONEY(12, 50) = 1250. */
#define MONEY(units, cents) ((money_t)(units) * MONEY_SCALE + (money_t)(cents))

/* Rounding modes supported by money_mul_bp(). */
typedef enum money_rounding {
    ROUND_HALF_UP,      /* 0.5 cent goes away from zero */
    ROUND_HALF_EVEN,    /* banker's rounding, the default for tax */
    ROUND_DOWN          /* truncate toward zero */
} money_rounding;

/* Multiplies amount by rate_bp / 10000 and rounds with the given mode. */
money_t money_mul_bp(money_t amount, int32_t rate_bp, money_rounding mode);

/* Multiplies a unit price by a quantity given in thousandths (3 decimals). */
ll_status money_mul_qty(money_t unit_price, int64_t qty_milli, money_t *out);

/* Adds two amounts, failing with LL_ERR_RANGE above MONEY_MAX. */
ll_status money_add(money_t a, money_t b, money_t *out);

/* Parses "1234.56" or "-0.5" into minor units. */
ll_status money_parse(const char *text, money_t *out);

/* Formats as "-1,234.56"; returns the number of characters written. */
size_t money_format(money_t amount, char *buf, size_t buflen);

#endif /* LEDGERLITE_MONEY_H */
