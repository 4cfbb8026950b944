/* status.c - messages for ll_status codes. */
#include "status.h"

const char *ll_strerror(ll_status status)
{
    switch (status) {
    case LL_OK:
        return "ok";
    case LL_ERR_NOMEM:
        return "out of memory";
    case LL_ERR_RANGE:
        return "value out of range";
    case LL_ERR_PARSE:
        return "malformed line";
    case LL_ERR_IO:
        return "cannot read or write file";
    case LL_ERR_FULL:
        return "invoice has too many lines";
    }
    return "unknown status";
}
