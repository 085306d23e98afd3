/* TEMPORARY during parallel development: weak entry points replaced by the real ones as they land.
 * Removed before the work is submitted. */
#include "commands.h"
#include "hybench.h"
#include "workload.h"
#include <stdio.h>
#define PENDING(fn) __attribute__((weak)) int fn(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, #fn " not built yet\n"); return 2; }
PENDING(hb_cmd_report) PENDING(hb_cmd_compare) PENDING(hb_cmd_trend) PENDING(hb_cmd_baseline)
