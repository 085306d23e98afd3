/* appendf.c - formatted text appended to a fixed buffer (core/appendf.h). */
#include "core/appendf.h"
#include <stdarg.h>
#include <stdio.h>

void hb_appendf(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (!len || *at + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (k > 0) *at += (size_t)k;
    if (*at >= len) *at = len - 1;
}
