/* status.c - status_str over the table of status.h. Any thread. */
#include "common/status.h"

#include <string.h>

const char *status_str(int st)
{
    switch (st) {
    case ST_OK: return "ok";
#define ST_CASE_ROW(name, value, text)                                                             \
    case name: return text;
        ST_TABLE(ST_CASE_ROW)
#undef ST_CASE_ROW
    default: break;
    }
    if (st < 0 && st >= -ST_ERRNO_MAX) return strerror(-st);
    return "unknown status";
}
