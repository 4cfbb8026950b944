/*
 * status.h - status codes shared by every ledgerlite module.
 *
 * Every public function that can fail returns an ll_status. Use
 * ll_strerror() to turn a code into a message for the user.
 */
#ifndef LEDGERLITE_STATUS_H
#define LEDGERLITE_STATUS_H

typedef enum ll_status {
    LL_OK = 0,
    LL_ERR_NOMEM,      /* an allocation failed */
    LL_ERR_RANGE,      /* a value is outside its allowed range */
    LL_ERR_PARSE,      /* malformed input line */
    LL_ERR_IO,         /* a file could not be read or written */
    LL_ERR_FULL        /* an invoice has reached LL_MAX_LINES */
} ll_status;

/* Returns a static, human-readable message for a status code. */
const char *ll_strerror(ll_status status);

/* Evaluates expr; returns its status from the calling function on failure. */
#define LL_TRY(expr)                          \
    do {                                      \
        ll_status ll_try_status_ = (expr);    \
        if (ll_try_status_ != LL_OK)          \
            return ll_try_status_;            \
    } while (0)

#endif /* LEDGERLITE_STATUS_H */
