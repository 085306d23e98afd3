/*
 * cases.c - workload items expanded into the cases of a run: each item over the dtypes, modes and
 * routes the options and the item allow, filtered by --op, --quick and --filter.
 */
#include "measure/measure.h"
#include <stdlib.h>
#include <string.h>


static int case_push(hb_case_list *l, const hb_case *c, int item, int host_route)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 256;
        hb_case *v = realloc(l->v, nc * sizeof *v);
        if (v) l->v = v;
        int *it = realloc(l->item, nc * sizeof *it);
        if (it) l->item = it;
        unsigned char *hr = realloc(l->host_route, nc);
        if (hr) l->host_route = hr;
        if (!v || !it || !hr) return -1;
        l->cap = nc;
    }
    l->v[l->n] = *c;
    l->item[l->n] = item;
    l->host_route[l->n] = (unsigned char)host_route;
    l->n++;
    return 0;
}

int hb_list_has(const char *list, const char *name)
{
    if (!list) return 1;
    size_t ln = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == ln && !strncmp(p, name, l)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Expand workload items into cases (items outermost so that one reference serves all variants). */
int hb_cases_expand(const hb_item_list *items, const hb_options *o, hb_case_list *out)
{
    for (size_t i = 0; i < items->n; i++) {
        const hb_item *it = &items->v[i];
        const hb_op_info *info = hb_op_get(it->c.op);
        if (o->ops && !hb_list_has(o->ops, info->name) && !hb_list_has(o->ops, hb_family_name(info->family))) continue;
        if (o->quick && !it->c.quick) continue;
        unsigned dm = o->dtype_mask ? o->dtype_mask : it->dtype_mask ? it->dtype_mask : 1u << HB_F32;
        unsigned mm = o->mode_mask ? o->mode_mask : it->mode_mask ? it->mode_mask
                                                                     : (1u << HB_MODE_CONVERT) | (1u << HB_MODE_F32) | (1u << HB_MODE_RESIDENT) | (1u << HB_MODE_CONVERT_DEVICE);
        unsigned rm = o->route_mask ? o->route_mask : it->route_mask ? it->route_mask
                                                                       : (1u << HB_ROUTE_PAGEABLE) | (1u << HB_ROUTE_PINNED) | (1u << HB_ROUTE_MAPPED);
        if (o->quick_routes && (rm & o->quick_routes)) rm &= o->quick_routes;
        for (int d = 0; d < HB_DTYPE_COUNT; d++) {
            if (!(dm & (1u << d))) continue;
            /* routes outside, modes inside: the modes of one case at one route are listed together,
             * so that the runner measures them as one interleaved group (runner.c group_of) */
            for (int r = 0; r < HB_ROUTE_COUNT; r++) {
                if (!(rm & (1u << r))) continue;
                for (int m = 0; m < HB_MODE_COUNT; m++) {
                    if (!(mm & (1u << m))) continue;
                    /* resident keeps data on the device: one route is enough (the first allowed) */
                    if (m == HB_MODE_RESIDENT && (rm & ((1u << r) - 1))) continue;
                    hb_case c = it->c;
                    c.dtype = (hb_dtype)d;
                    c.mode = (hb_mode)m;
                    c.route = (hb_route)r;
                    if (o->filter) {
                        char key[512];
                        hb_case_key(&c, "", key, sizeof key);
                        if (!strstr(key, o->filter) && !strstr(c.name, o->filter)) continue;
                    }
                    if (case_push(out, &c, (int)i, !(rm & ((1u << r) - 1)))) return -1;
                }
            }
        }
    }
    return 0;
}


void hb_case_list_free(hb_case_list *l)
{
    free(l->v);
    free(l->item);
    free(l->host_route);
    memset(l, 0, sizeof *l);
}
