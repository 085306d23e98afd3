/*
 * cases.c - workload items expanded into the cases of a run: each item over the dtypes, modes and
 * routes the options and the item allow, filtered by --op, --quick and --filter.
 */
#include "measure/measure.h"
#include <errno.h>
#include <stdio.h>
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
             * so that the runner measures them as one interleaved group (child.c group_of) */
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
    for (size_t i = 0; i < l->nkeys; i++) free(l->keys[i]);
    free(l->keys);
    free(l->v);
    free(l->item);
    free(l->host_route);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* key with its third field (the backend instance) removed, into out */
static void key_sans_backend(const char *key, char *out, size_t len)
{
    const char *p = key;
    for (int f = 0; f < 2 && p; f++) p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
    const char *q = p ? strchr(p, '|') : NULL;
    if (!p || !q) { snprintf(out, len, "%s", key); return; }
    snprintf(out, len, "%.*s%s", (int)(p - key), key, q + 1);
}

int hb_cases_keys_load(const char *path, hb_case_list *l, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "--cases-from %s: %s", path, strerror(errno)); return -1; }
    char *line = NULL, **v = NULL;
    size_t cap = 0, n = 0, vcap = 0;
    ssize_t len;
    long ln = 0;
    int rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        ln++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0 || line[0] == '#') continue;
        if (len >= 512) { snprintf(err, errlen, "%s:%ld: a case key of 512 characters or more", path, ln); rc = -1; break; }
        char *h = strrchr(line, '#');
        if (h && h[1] && strspn(h + 1, "0123456789") == strlen(h + 1)) *h = 0;
        if (n == vcap) {
            size_t nc = vcap ? 2 * vcap : 256;
            char **v2 = realloc(v, nc * sizeof *v);
            if (!v2) { snprintf(err, errlen, "out of memory"); rc = -1; break; }
            v = v2;
            vcap = nc;
        }
        if (!(v[n] = strdup(line))) { snprintf(err, errlen, "out of memory"); rc = -1; break; }
        n++;
    }
    free(line);
    fclose(f);
    if (!rc && n == 0) { snprintf(err, errlen, "--cases-from %s: no case key in the file", path); rc = -1; }
    if (rc) {
        for (size_t i = 0; i < n; i++) free(v[i]);
        free(v);
        return -1;
    }
    qsort(v, n, sizeof *v, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && !strcmp(v[u - 1], v[i])) { free(v[i]); continue; }
        v[u++] = v[i];
    }
    l->keys = v;
    l->nkeys = u;
    /* every listed key should name a case of the workloads (any backend): say which do not. The
     * cases' keys without their backend field, as listed for any route and for the one route of a
     * host-memory backend (pageable), sorted once and searched per listed key. */
    char **have = malloc(2 * (l->n ? l->n : 1) * sizeof *have);
    size_t nh = 0;
    for (size_t j = 0; have && !rc && j < l->n; j++)
        for (int host = 0; host < 2; host++) {
            hb_case c = l->v[j];
            if (host) c.route = HB_ROUTE_PAGEABLE;
            char k[512], sans[512];
            key_sans_backend(hb_case_key(&c, "-", k, sizeof k), sans, sizeof sans);
            if (!(have[nh] = strdup(sans))) { snprintf(err, errlen, "out of memory"); rc = -1; break; }
            nh++;
        }
    if (!have || rc) {
        if (!have) snprintf(err, errlen, "out of memory");
        for (size_t i = 0; i < nh; i++) free(have[i]);
        free(have);
        return -1; /* l->keys stays set: hb_case_list_free frees it */
    }
    qsort(have, nh, sizeof *have, cmp_str);
    for (size_t i = 0; i < u; i++) {
        char want[512];
        const char *wp = want;
        key_sans_backend(v[i], want, sizeof want);
        if (!bsearch(&wp, have, nh, sizeof *have, cmp_str))
            fprintf(stderr, "hybench: --cases-from %s: \"%s\" is no case of the workloads and options (ignored)\n", path, v[i]);
    }
    for (size_t i = 0; i < nh; i++) free(have[i]);
    free(have);
    return 0;
}

/* Whether instance inst runs case j of the list; NULL, or why not (a reason shared by a whole class
 * of cases, reported when an instance is left with none). Host-memory backends (cpu-ref, cpu) have
 * one route, their own memory, recorded as `pageable`: they run each case once, at its item's first
 * requested route (so `--route pinned` still measures them), and have no resident mode (their data
 * never leaves host memory: f32 is that path). */
const char *hb_case_refusal(const hb_instance *inst, const hb_case_list *l, size_t j)
{
    const hb_case *c = &l->v[j];
    if (inst->host_memory && c->mode == HB_MODE_RESIDENT)
        return "a host-memory backend has no resident mode (its data never leaves host memory; f32 is that path)";
    if (inst->host_memory && !l->host_route[j]) return "a host-memory backend runs each case once, at its one route";
    /* convert-device exists only where the backend converts on the device (upload_f64 hook) */
    if (c->mode == HB_MODE_CONVERT_DEVICE && (!inst->ops->upload_f64 || !inst->ops->download_f64))
        return "convert-device needs a backend that converts on the device (upload_f64/download_f64 hooks)";
    if (c->mode == HB_MODE_CONVERT_DEVICE && c->op == HB_OP_CHAIN) return "the decoder-layer chain has no convert-device mode";
    if (!hb_case_listed(l, j, inst->name, inst->host_memory)) return "not listed by --cases-from";
    return NULL;
}
int hb_case_listed(const hb_case_list *l, size_t j, const char *inst_name, int host_memory)
{
    if (!l->keys) return 1;
    hb_case c = l->v[j];
    if (host_memory) c.route = HB_ROUTE_PAGEABLE;
    char key[512];
    const char *kp = hb_case_key(&c, inst_name, key, sizeof key);
    return bsearch(&kp, l->keys, l->nkeys, sizeof *l->keys, cmp_str) != NULL;
}
