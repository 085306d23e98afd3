/*
 * appendf.h - formatted text appended to a fixed buffer, truncating: the one helper behind the
 * machine description (results/machine.c), the report's cards and runs table (report/across.c,
 * runs_header.c) and the site's machine names (report/site_data.c).
 */
#ifndef HB_APPENDF_H
#define HB_APPENDF_H
#include <stddef.h>

/* Append printf-style text to buf (len bytes, NUL-terminated) at offset *at and advance *at. Never
 * writes past buf[len - 1]: text that does not fit is cut, and *at stops at len - 1 (later calls then
 * append nothing). buf is borrowed; len 0 or a full buffer is a no-op. No errors. */
void hb_appendf(char *buf, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#endif
