/*
 * workload.h - workload files (INI, parsed with inih) into a list of case templates (item.h), which
 * measure/cases.c expands over the dtypes, modes and routes each allows (masks; 0 = the default).
 * File format: docs/workloads.md. benchdnn lists: workload/benchdnn.h. The items: workload/item.h.
 */
#ifndef HB_WORKLOAD_H
#define HB_WORKLOAD_H
#include <stdio.h>
#include "workload/item.h"

/* Append every item of workload file `path` to out. Nothing is appended on error.
 * Errors: HB_EINVAL with "path:line: reason" in err for any malformed line, unknown key, unknown
 * op, bad or absurd shape (a tensor over 2^34 elements, a negative size); HB_EDEVICE when the file
 * (or a benchdnn list it includes with `batch =`) cannot be read; HB_ENOMEM. */
hb_status hb_workload_load(const char *path, hb_item_list *out, char *err, size_t errlen);
#endif
