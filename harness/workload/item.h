/*
 * item.h - a workload item: a case template with the dtypes, modes and routes it allows, or the
 * reason it cannot run; and the list of them that workload files (workload.c) and benchdnn lists
 * (benchdnn.c) fill and measure/ expands into cases.
 */
#ifndef HB_ITEM_H
#define HB_ITEM_H
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

/* Free the list's array and zero it (safe on a zeroed list). */
void hb_item_list_free(hb_item_list *l);
/* Push a copy of *it; HB_ENOMEM on allocation failure (the list is unchanged then). */
hb_status hb_item_list_push(hb_item_list *l, const hb_item *it);
/* One line for `hybench run --dry-run`:
 *   NAME  OP  SHAPE  GFLOP  SOURCE [model=M weight=W] [quick] [skip: REASON]
 * GFLOP is hb_op_flops / 1e9 of one call ("-" for a skipped item). No trailing state. */
void hb_item_print(FILE *f, const hb_item *it);
#endif
