/* kernel_paths.c - the gate list's candidates: the cases each backend instance would run, with the
 * implementation it names for them before a run (measure/kernel_paths.h). */
#include "measure/kernel_paths.h"
#include "measure/internal.h"
#include "measure/registry.h"
#include <stdlib.h>
#include <string.h>

/* 1 when instance inst runs case j of l: not refused for its class, and the checks a run makes before
 * its first call (internal.h hb_case_precheck, the same function sample.c calls) */
static int runs_case(hb_instance *inst, const hb_case_list *l, size_t j, const hb_options *o)
{
    const hb_case *c = &l->v[j];
    char why[512];
    if (hb_case_refusal(inst, l, j)) return 0;
    return hb_case_precheck(inst, c, l->items ? l->items->v[l->item[j]].skip : NULL, o, why, sizeof why) == HB_OK;
}

hb_status hb_kernel_paths(const hb_case_list *l, const hb_options *o, hb_gate_cand **out, size_t *n, int *ninst, char *err,
                          size_t errlen)
{
    size_t cap = 0, m = 0;
    hb_gate_cand *v = NULL;
    int opened = 0;
    hb_status st = HB_OK;
    *out = NULL;
    *n = 0;
    for (int b = 0; b < hb_nbackends && st == HB_OK; b++) {
        hb_instance inst[16];
        char reason[512];
        int ni = hb_backend_open(&hb_backends[b], inst, 16, reason, sizeof reason);
        for (int i = 0; i < ni; i++) {
            int sel = !o->backends || hb_list_has(o->backends, inst[i].name) || hb_list_has(o->backends, inst[i].ops->type);
            for (size_t j = 0; sel && st == HB_OK && j < l->n; j++) {
                if (!runs_case(&inst[i], l, j, o)) continue;
                if (m == cap) {
                    size_t nc = cap ? 2 * cap : 1024;
                    hb_gate_cand *w = realloc(v, nc * sizeof *w);
                    if (!w) { st = HB_ENOMEM; break; }
                    v = w;
                    cap = nc;
                }
                hb_gate_cand *g = &v[m++];
                memset(g, 0, sizeof *g);
                g->c = l->v[j];
                if (inst[i].host_memory) g->c.route = HB_ROUTE_PAGEABLE;
                snprintf(g->backend, sizeof g->backend, "%.47s", inst[i].name);
                const char *im = g->c.op == HB_OP_CHAIN ? "chain" : inst[i].ops->impl_of ? inst[i].ops->impl_of(&inst[i], &g->c) : NULL;
                snprintf(g->impl, sizeof g->impl, "%s", im && *im ? im : "unnamed");
            }
            opened += sel;
            inst[i].ops->close(&inst[i]);
        }
    }
    if (st != HB_OK) { free(v); snprintf(err, errlen, "out of memory"); return st; }
    if (!opened) { free(v); snprintf(err, errlen, "no backend instance available%s%s", o->backends ? " among " : "", o->backends ? o->backends : ""); return HB_EINVAL; }
    *out = v;
    *n = m;
    if (ninst) *ninst = opened;
    return HB_OK;
}
