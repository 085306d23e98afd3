/*
 * workload.h - workload files (INI, parsed with inih) and benchdnn problem lists, into a list of
 * case templates. The driver expands each template over backends, and over the dtypes, modes and
 * routes the template allows (masks; 0 = the driver's default).
 * File format: docs/workloads.md. benchdnn lists: harness/benchdnn.h.
 */
#ifndef HB_WORKLOAD_H
#define HB_WORKLOAD_H
#include <stdio.h>
#include "core/hybench.h"

typedef struct hb_item {
    hb_case c;            /* op, shape (normalized), name, source "file:line", model, weight, quick */
    unsigned dtype_mask;  /* bit (1u << hb_dtype); 0 = default (f32 only) */
    unsigned mode_mask;   /* bit (1u << hb_mode);  0 = default */
    unsigned route_mask;  /* bit (1u << hb_route); 0 = default (pageable) */
    /* Non-empty: the problem is listed but cannot be expressed as an hybench case (a 3D benchdnn
     * problem, asymmetric padding, batch broadcasting, pooling avg_p ...). The driver records every
     * expansion of this item as "skipped" with this text as the reason and runs nothing. The shape
     * then holds the closest 2D/plain form (for display only) and may not be normalized. */
    char skip[128];
} hb_item;

typedef struct hb_item_list { hb_item *v; size_t n, cap; } hb_item_list;

/* Append every item of workload file `path` to out. Nothing is appended on error.
 * Errors: HB_EINVAL with "path:line: reason" in err for any malformed line, unknown key, unknown
 * op, bad or absurd shape (a tensor over 2^34 elements, a negative size); HB_EDEVICE when the file
 * (or a benchdnn list it includes with `batch =`) cannot be read; HB_ENOMEM. */
hb_status hb_workload_load(const char *path, hb_item_list *out, char *err, size_t errlen);
/* A benchdnn list given as "conv:FILE", "pool:FILE" or "matmul:FILE" (hybench run --batch); also
 * "maxpool:FILE", "avgpool:FILE" (force the pooling algorithm) and options before the colon:
 * "conv,mb=2:FILE", "pool,alg=avg:FILE". FILE is tried as given, then in $HB_BENCHDNN_DIR and
 * ../shared/external/benchdnn/. Same errors as hb_workload_load. Implemented in benchdnn.c. */
hb_status hb_batch_load(const char *spec, hb_item_list *out, char *err, size_t errlen);
/* Free the list's array and zero it (safe on a zeroed list). */
void hb_item_list_free(hb_item_list *l);
/* Push a copy of *it; HB_ENOMEM on allocation failure (the list is unchanged then). */
hb_status hb_item_list_push(hb_item_list *l, const hb_item *it);
/* One line for `hybench run --dry-run`:
 *   NAME  OP  SHAPE  GFLOP  SOURCE [model=M weight=W] [quick] [skip: REASON]
 * GFLOP is hb_op_flops / 1e9 of one call ("-" for a skipped item). No trailing state. */
void hb_item_print(FILE *f, const hb_item *it);
#endif
