/*
 * ab_usage.h - the help text of `hybench ab` (cmd_ab.c), apart from its code. docs/compare.md,
 * "hybench ab".
 */
#ifndef HB_AB_USAGE_H
#define HB_AB_USAGE_H
#include <stdio.h>

/* Writes `hybench ab`'s usage, options and exit statuses to f. */
void hb_ab_usage(FILE *f);
#endif
