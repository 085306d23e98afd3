/*
 * workload_lex.c - the reading primitives of workload files (workload.c): an error naming
 * file:line (fail), blanks and label characters, integers with the suffixes hb_shape_parse accepts,
 * and the shape's fields by name. Shared through workload_internal.h.
 */
#include "workload/workload_internal.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fail(wl_ctx *x, int line, hb_status st, const char *fmt, ...)
{
    if (x->failed) return;
    x->failed = 1;
    x->st = st;
    if (!x->err || !x->errlen) return;
    int n = line > 0 ? snprintf(x->err, x->errlen, "%s:%d: ", x->path, line) : snprintf(x->err, x->errlen, "%s: ", x->path);
    if (n < 0 || (size_t)n >= x->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

int is_label_char(int c) { return isalnum(c) || c == '_' || c == '-' || c == '.'; }

const char *skip_ws(const char *p)
{
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

/* Integer with the suffixes hb_shape_parse accepts: Ki, Mi, Gi, or 2^N. */
int parse_int(const char *s, const char **endp, int64_t *v)
{
    if (!isdigit((unsigned char)*s)) return 0;
    errno = 0;
    char *end;
    long long x = strtoll(s, &end, 10);
    if (errno) return 0;
    if (*end == '^' && x == 2) {
        char *e2;
        long long ex = strtoll(end + 1, &e2, 10);
        if (e2 == end + 1 || ex < 0 || ex > 62) return 0;
        x = 1LL << ex;
        end = e2;
    } else if ((end[0] == 'K' || end[0] == 'M' || end[0] == 'G') && end[1] == 'i') {
        int sh = end[0] == 'K' ? 10 : end[0] == 'M' ? 20 : 30;
        if (x > (INT64_MAX >> sh)) return 0;
        x <<= sh;
        end += 2;
    }
    *v = x;
    *endp = end;
    return 1;
}

int field_index(const char *name, size_t len)
{
    for (int i = 0; i < hb_shape_nfields; i++)
        if (strlen(hb_shape_fields[i].name) == len && !strncmp(hb_shape_fields[i].name, name, len)) return i;
    return -1;
}
int64_t *fieldp(hb_shape *s, int i) { return (int64_t *)((char *)s + hb_shape_fields[i].offset); }
int64_t fieldv(const hb_shape *s, int i) { return *(const int64_t *)((const char *)s + hb_shape_fields[i].offset); }
