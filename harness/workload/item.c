/* item.c - the list of workload items (workload/item.h) that workload files and benchdnn lists fill. */
#include "workload/item.h"
#include <stdlib.h>

hb_status hb_item_list_push(hb_item_list *l, const hb_item *it)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        hb_item *v = realloc(l->v, cap * sizeof *v);
        if (!v) return HB_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *it;
    return HB_OK;
}

void hb_item_list_free(hb_item_list *l)
{
    if (!l) return;
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void hb_item_print(FILE *f, const hb_item *it)
{
    const hb_op_info *oi = hb_op_get(it->c.op);
    char sh[256], gf[32];
    hb_shape_format(it->c.op, &it->c.shape, sh, sizeof sh);
    if (it->skip[0]) snprintf(gf, sizeof gf, "-");
    else snprintf(gf, sizeof gf, "%.4g", hb_op_flops(it->c.op, &it->c.shape) / 1e9);
    fprintf(f, "%-36s %-9s %-58s GFLOP=%-9s %s", it->c.name[0] ? it->c.name : "-", oi ? oi->name : "?", sh, gf,
            it->c.source);
    if (it->c.model[0]) fprintf(f, " model=%s weight=%g", it->c.model, it->c.weight);
    else if (it->c.weight != 1) fprintf(f, " weight=%g", it->c.weight);
    if (it->c.quick) fputs(" quick", f);
    if (it->skip[0]) fprintf(f, " skip: %s", it->skip);
    fputc('\n', f);
}
