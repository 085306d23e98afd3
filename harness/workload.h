/*
 * workload.h - workload files (INI, parsed with inih) and benchdnn problem lists, into a list of
 * case templates. The driver expands each template over backends, and over the dtypes, modes and
 * routes the template allows (masks; 0 = the driver's default).
 * File format: docs/workloads.md.
 */
#ifndef HB_WORKLOAD_H
#define HB_WORKLOAD_H
#include "hybench.h"

typedef struct hb_item {
    hb_case c;            /* op, shape (normalized), name, source "file:line", model, weight, quick */
    unsigned dtype_mask;  /* bit (1u << hb_dtype); 0 = default (f32 only) */
    unsigned mode_mask;   /* bit (1u << hb_mode);  0 = default */
    unsigned route_mask;  /* bit (1u << hb_route); 0 = default (pageable) */
} hb_item;

typedef struct hb_item_list { hb_item *v; size_t n, cap; } hb_item_list;

/* Append every item of workload file `path` to out. Nothing is appended on error.
 * Errors: HB_EINVAL with "path:line: reason" in err for any malformed line, unknown key, unknown
 * op, bad or absurd shape; HB_EDEVICE when the file cannot be read. */
hb_status hb_workload_load(const char *path, hb_item_list *out, char *err, size_t errlen);
/* A benchdnn list given as "conv:FILE", "pool:FILE" or "matmul:FILE" (hybench run --batch).
 * Same errors as hb_workload_load. */
hb_status hb_batch_load(const char *spec, hb_item_list *out, char *err, size_t errlen);
void hb_item_list_free(hb_item_list *l);
/* Push a copy of *it; HB_ENOMEM on allocation failure. */
hb_status hb_item_list_push(hb_item_list *l, const hb_item *it);
#endif
