/* gatelist.c - the gate list's rule and its workload-file writer (workload/gatelist.h). */
#include "workload/gatelist.h"
#include <stdlib.h>
#include <string.h>

double hb_gate_cost(const hb_case *c) { return hb_op_flops(c->op, &c->shape) + hb_case_bytes(c); }

/* a kernel path: (op, backend, dtype, mode, impl); a route path: (backend, mode, route) */
static int same_path(int kind, const hb_gate_cand *a, const hb_gate_cand *b)
{
    if (kind == HB_GATE_ROUTE)
        return a->c.mode == b->c.mode && a->c.route == b->c.route && !strcmp(a->backend, b->backend);
    return a->c.op == b->c.op && a->c.dtype == b->c.dtype && a->c.mode == b->c.mode && !strcmp(a->backend, b->backend) &&
           !strcmp(a->impl, b->impl);
}

/* 1 when a candidate of cost a is kept over one of cost b (b listed first): at or above the floor
 * before below it; above it the cheaper, below it the costlier; equals keep the first */
static int better(double a, double b, double min_cost)
{
    if ((a >= min_cost) != (b >= min_cost)) return a >= min_cost;
    return a >= min_cost ? a < b : a > b;
}

hb_status hb_gate_select(const hb_gate_cand *v, size_t n, double min_cost, double max_cost, hb_gate_path **paths, size_t *npaths)
{
    *paths = NULL;
    *npaths = 0;
    if (!n) return HB_OK;
    hb_gate_path *p = malloc(2 * n * sizeof *p);
    if (!p) return HB_ENOMEM;
    size_t np = 0;
    for (int kind = HB_GATE_KERNEL; kind <= HB_GATE_ROUTE; kind++) {
        const size_t first = np;
        for (size_t i = 0; i < n; i++) {
            const double cost = hb_gate_cost(&v[i].c);
            size_t k = first;
            while (k < np && !same_path(kind, &v[p[k].cand], &v[i])) k++;
            if (k == np) { p[np++] = (hb_gate_path){.cand = i, .ncands = 1, .cost = cost, .kind = kind}; continue; }
            p[k].ncands++;
            if (better(cost, p[k].cost, min_cost)) { p[k].cand = i; p[k].cost = cost; }
        }
    }
    for (size_t k = 0; k < np; k++) p[k].over_cut = max_cost > 0 && p[k].cost > max_cost;
    *paths = p;
    *npaths = np;
    return HB_OK;
}

/* the section's case: same op, shape, dtype and route (the modes are the section's list) */
static int same_case(const hb_case *a, const hb_case *b)
{
    return a->op == b->op && a->dtype == b->dtype && a->route == b->route && !memcmp(&a->shape, &b->shape, sizeof a->shape);
}

/* a section name from the case's own name: label characters kept, others '_', made unique by its number */
static void section_name(const hb_case *c, long num, char *out, size_t len)
{
    char base[64];
    snprintf(base, sizeof base, "%.63s", c->name[0] ? c->name : hb_op_get(c->op)->name);
    for (char *q = base; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_' || *q == '-' || *q == '.'))
            *q = '_';
    snprintf(out, len, "g%03ld.%s", num, base);
}

long hb_gate_list_write(FILE *f, const hb_gate_cand *v, const hb_gate_path *p, size_t np, const char *header)
{
    if (header)
        for (const char *h = header; *h;) {
            const char *e = strchr(h, '\n');
            int l = e ? (int)(e - h) : (int)strlen(h);
            fprintf(f, "#%s%.*s\n", l ? " " : "", l, h);
            h += l + (e ? 1 : 0);
        }
    char *done = calloc(np ? np : 1, 1);
    if (!done) return -1;
    long sections = 0;
    for (size_t k = 0; k < np; k++) {
        if (done[k] || p[k].over_cut) continue;
        const hb_case *c = &v[p[k].cand].c;
        unsigned modes = 0;
        fprintf(f, "\n");
        for (size_t j = k; j < np; j++) { /* every kept path whose case is this one, in this section */
            const hb_gate_cand *w = &v[p[j].cand];
            if (done[j] || p[j].over_cut || !same_case(&w->c, c)) continue;
            done[j] = 1;
            modes |= 1u << w->c.mode;
            if (p[j].kind == HB_GATE_ROUTE)
                fprintf(f, "# route: %s %s %s (cheapest of %zu, cost %.4g)\n", w->backend, hb_mode_name(w->c.mode),
                        hb_route_name(w->c.route), p[j].ncands, p[j].cost);
            else
                fprintf(f, "# path: %s %s %s %s %s (cheapest of %zu, cost %.4g)\n", hb_op_get(w->c.op)->name, w->backend,
                        hb_dtype_name(w->c.dtype), hb_mode_name(w->c.mode), w->impl, p[j].ncands, p[j].cost);
        }
        char name[96], shape[256];
        section_name(c, ++sections, name, sizeof name);
        fprintf(f, "[%s]\nop = %s\nshape = %s\ndtypes = %s\nmodes =", name, hb_op_get(c->op)->name,
                hb_shape_format(c->op, &c->shape, shape, sizeof shape), hb_dtype_name(c->dtype));
        for (int m = 0; m < HB_MODE_COUNT; m++)
            if (modes & (1u << m)) fprintf(f, " %s", hb_mode_name((hb_mode)m));
        fprintf(f, "\nroutes = %s\nquick = all\n", hb_route_name(c->route));
    }
    int first = 1;
    for (size_t k = 0; k < np; k++) {
        if (!p[k].over_cut) continue;
        const hb_gate_cand *w = &v[p[k].cand];
        if (first) fprintf(f, "\n# paths over the cut (their cheapest case costs more; not in this list):\n");
        first = 0;
        char shape[256];
        if (p[k].kind == HB_GATE_ROUTE)
            fprintf(f, "# over the cut: route %s %s %s: cheapest %s %s (cost %.4g)\n", w->backend, hb_mode_name(w->c.mode),
                    hb_route_name(w->c.route), hb_op_get(w->c.op)->name, hb_shape_format(w->c.op, &w->c.shape, shape, sizeof shape), p[k].cost);
        else
            fprintf(f, "# over the cut: %s %s %s %s %s: cheapest %s (cost %.4g)\n", hb_op_get(w->c.op)->name, w->backend,
                    hb_dtype_name(w->c.dtype), hb_mode_name(w->c.mode), w->impl,
                    hb_shape_format(w->c.op, &w->c.shape, shape, sizeof shape), p[k].cost);
    }
    free(done);
    return ferror(f) ? -1 : sections;
}

long hb_gate_keys_write(FILE *f, const hb_gate_cand *v, const hb_gate_path *p, size_t np)
{
    long n = 0;
    fprintf(f, "# the gate list's cases per backend (hybench gate-list --keys; run --cases-from)\n");
    for (size_t k = 0; k < np; k++) {
        if (p[k].over_cut) continue;
        char key[512];
        int dup = 0; /* a case kept for two paths (a kernel and a route path) once */
        for (size_t j = 0; j < k && !dup; j++)
            dup = !p[j].over_cut && p[j].cand == p[k].cand;
        if (dup) continue;
        fprintf(f, "%s\n", hb_case_key(&v[p[k].cand].c, v[p[k].cand].backend, key, sizeof key));
        n++;
    }
    return ferror(f) ? -1 : n;
}
