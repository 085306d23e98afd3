/* across.c - one finding stated across devices or runs (across.h): groups by hardware, exceptions
 * by distance from the group's median, the phrase and its JSON. */
#include "report/across.h"
#include "core/appendf.h"
#include "results/machine.h"
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hb_across_init(hb_across *a, double tol)
{
    memset(a, 0, sizeof *a);
    a->tol = tol > 0 ? tol : HB_ACROSS_TOL_PCT;
}

void hb_across_free(hb_across *a)
{
    free(a->it);
    free(a->g);
    memset(a, 0, sizeof *a);
}

static hb_across_item *item_new(hb_across *a)
{
    if (a->n == a->cap) {
        int nc = a->cap ? a->cap * 2 : 16;
        hb_across_item *ni = realloc(a->it, (size_t)nc * sizeof *ni);
        if (!ni) { a->oom = 1; return NULL; }
        a->it = ni;
        a->cap = nc;
    }
    hb_across_item *x = &a->it[a->n++];
    memset(x, 0, sizeof *x);
    free(a->g); /* the grouping is stale */
    a->g = NULL;
    a->ng = 0;
    return x;
}

void hb_across_dev(hb_across *a, const hb_report *rp, int dev, double v, const char *why)
{
    if (dev < 0 || dev >= rp->ndevs) return;
    hb_across_item *x = item_new(a);
    if (!x) return;
    const hb_rdev *d = &rp->devs[dev];
    char model[256];
    /* the device: its info.name (a GPU) or its description */
    const char *dn = d->rec ? (d->rec->info.name ? d->rec->info.name : d->rec->description) : d->description;
    snprintf(model, sizeof model, "%s", dn ? dn : "");
    model[strcspn(model, "\n")] = 0;
    char *paren = strstr(model, " (");
    if (paren) *paren = 0;
    snprintf(x->label, sizeof x->label, "%s", d->id);
    snprintf(x->base, sizeof x->base, "%s", d->backend);
    snprintf(x->group, sizeof x->group, "%.20s|%.200s", d->type, model);
    snprintf(x->model, sizeof x->model, "%.90s", model);
    if (!d->host_memory && !d->is_cpu_device) snprintf(x->noun, sizeof x->noun, "GPU");
    else snprintf(x->noun, sizeof x->noun, "%s device", d->type);
    x->run = d->run;
    x->v = v;
    snprintf(x->why, sizeof x->why, "%s", isfinite(v) ? "" : why ? why : "");
}

void hb_across_run(hb_across *a, const hb_report *rp, int run, double v, const char *why)
{
    if (run < 0 || run >= rp->nruns) return;
    hb_across_item *x = item_new(a);
    if (!x) return;
    snprintf(x->label, sizeof x->label, "%s", rp->runs[run].label);
    snprintf(x->group, sizeof x->group, "run");
    snprintf(x->noun, sizeof x->noun, "run");
    x->run = -1;
    x->v = v;
    snprintf(x->why, sizeof x->why, "%s", isfinite(v) ? "" : why ? why : "");
}

static int cmp_d(const void *p, const void *q)
{
    double x = *(const double *)p, y = *(const double *)q;
    return (x > y) - (x < y);
}

/* the exception rule: farther from the median than tol and than HB_ACROSS_REL of its magnitude */
static int far_from(const hb_across *a, double v, double median)
{
    double d = fabs(v - median);
    return d > a->tol && d > HB_ACROSS_REL * fabs(median);
}

void hb_across_eval(hb_across *a)
{
    if (a->g || !a->n) return;
    a->g = calloc((size_t)a->n, sizeof *a->g);
    double *v = malloc((size_t)a->n * sizeof *v);
    int *runs = malloc((size_t)a->n * sizeof *runs);
    if (!a->g || !v || !runs) { free(a->g); a->g = NULL; free(v); free(runs); a->oom = 1; return; }
    a->ng = 0;
    for (int i = 0; i < a->n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(a->it[j].group, a->it[i].group);
        if (seen) continue;
        hb_across_group *g = &a->g[a->ng++];
        g->first = i;
        int nv = 0, nr = 0;
        for (int j = i; j < a->n; j++) {
            hb_across_item *x = &a->it[j];
            if (strcmp(x->group, a->it[i].group)) continue;
            x->exception = 0;
            g->nitems++;
            if (x->run >= 0) {
                int k = 0;
                while (k < nr && runs[k] != x->run) k++;
                if (k == nr) runs[nr++] = x->run;
            }
            if (isfinite(x->v)) v[nv++] = x->v;
        }
        g->n = nv;
        g->nruns = nr;
        g->lo = g->hi = g->median = (double)NAN;
        if (!nv) continue;
        qsort(v, (size_t)nv, sizeof *v, cmp_d);
        g->median = nv % 2 ? v[nv / 2] : 0.5 * (v[nv / 2 - 1] + v[nv / 2]);
        int nexc = 0;
        if (nv >= 3)
            for (int j = i; j < a->n; j++) {
                const hb_across_item *x = &a->it[j];
                if (!strcmp(x->group, a->it[i].group) && isfinite(x->v) && far_from(a, x->v, g->median)) nexc++;
            }
        if (nexc > nv / 3) nexc = 0; /* too many to be exceptions: the spread is the finding */
        g->nexc = nexc;
        for (int j = i; j < a->n; j++) {
            hb_across_item *x = &a->it[j];
            if (strcmp(x->group, a->it[i].group) || !isfinite(x->v)) continue;
            x->exception = nexc > 0 && far_from(a, x->v, g->median);
            if (x->exception) continue;
            if (!(x->v >= g->lo)) g->lo = x->v;
            if (!(x->v <= g->hi)) g->hi = x->v;
        }
    }
    free(v);
    free(runs);
}


/* The name of the items of group g that have a value (valued 1) or are n/a (valued 0): one item by
 * its label; one device in several runs "cpu in 2 runs"; else "4 GPUs", "8 GPUs in 2 runs",
 * qualified by the model where another group has the same noun. */
static void group_name(const hb_across *a, const hb_across_group *g, int valued, char *out, size_t len)
{
    const hb_across_item *f = &a->it[g->first], *one = NULL;
    int cnt = 0, same_base = *f->base != 0, nr = 0, runs[64];
    for (int j = g->first; j < a->n; j++) {
        const hb_across_item *x = &a->it[j];
        if (strcmp(x->group, f->group) || (isfinite(x->v) != 0) != (valued != 0)) continue;
        if (!one) one = x;
        cnt++;
        if (strcmp(x->base, one->base)) same_base = 0;
        int k = 0;
        while (k < nr && runs[k] != x->run) k++;
        if (k == nr && nr < 64 && x->run >= 0) runs[nr++] = x->run;
    }
    if (!one) { snprintf(out, len, "?"); return; }
    if (cnt == 1) { snprintf(out, len, "%s", one->label); return; }
    if (same_base) { snprintf(out, len, "%s in %d runs", one->base, nr); return; }
    int clash = 0;
    for (int k = 0; k < a->ng; k++)
        if (&a->g[k] != g && !strcmp(a->it[a->g[k].first].noun, f->noun)) clash = 1;
    snprintf(out, len, "%d %s%s%ss%s", cnt, clash && *f->model ? f->model : "", clash && *f->model ? " " : "", f->noun,
             nr > 1 ? hb_report_fmt(" in %d runs", nr) : "");
}

/* "52–58%" when both ends share the unit after their last digit, "-5.0% to 12%" with a signed end,
 * one value when both ends read the same */
static void range_text(double lo, double hi, const char *(*fmt)(double), char *out, size_t len)
{
    char l[128], h[128];
    snprintf(l, sizeof l, "%s", fmt(lo));
    snprintf(h, sizeof h, "%s", fmt(hi));
    if (!strcmp(l, h)) { snprintf(out, len, "%s", l); return; }
    size_t hl = strlen(h), ll = strlen(l), sh = hl, sl = ll;
    while (sh > 0 && !isdigit((unsigned char)h[sh - 1])) sh--;
    while (sl > 0 && !isdigit((unsigned char)l[sl - 1])) sl--;
    if (l[0] != '-' && h[0] != '-' && l[0] != '+' && h[0] != '+' && sh > 0 && sl > 0 && !strcmp(l + sl, h + sh))
        snprintf(out, len, "%.*s\u2013%.100s", (int)(sl < 100 ? sl : 100), l, h);
    else
        snprintf(out, len, "%.100s to %.100s", l, h);
}

const char *hb_across_text(hb_across *a, const char *(*fmt)(double), char *buf, size_t len)
{
    size_t o = 0;
    if (!len) return buf;
    buf[0] = 0;
    hb_across_eval(a);
    if (!a->g) return buf;
    char name[256], r[256];
    int parts = 0;
    for (int k = 0; k < a->ng; k++) {
        const hb_across_group *g = &a->g[k];
        if (!g->n) continue;
        group_name(a, g, 1, name, sizeof name);
        range_text(g->lo, g->hi, fmt, r, sizeof r);
        hb_appendf(buf, len, &o, "%s%s %s %s", parts++ ? ", " : "", r, a->it[g->first].run < 0 ? "in" : "on", name); /* "in 2 runs" */
        int e = 0;
        for (int j = g->first; j < a->n; j++) {
            const hb_across_item *x = &a->it[j];
            if (!strcmp(x->group, a->it[g->first].group) && x->exception)
                hb_appendf(buf, len, &o, "%s%s at %s", e++ ? ", " : " except ", x->label, fmt(x->v));
        }
    }
    int na = 0;
    for (int k = 0; k < a->ng; k++) {
        const hb_across_group *g = &a->g[k];
        const hb_across_item *f = &a->it[g->first];
        if (g->n == g->nitems) continue;
        /* a whole group n/a for one reason: named once */
        int one_why = g->n == 0;
        const char *why = NULL;
        for (int j = g->first; j < a->n && one_why; j++) {
            if (strcmp(a->it[j].group, f->group)) continue;
            if (!why) why = a->it[j].why;
            else if (strcmp(why, a->it[j].why)) one_why = 0;
        }
        if (one_why && g->nitems > 1) {
            group_name(a, g, 0, name, sizeof name);
            hb_appendf(buf, len, &o, "%s%s%s%s%s", na++ ? ", " : parts ? "; n/a on " : "n/a on ", name, *why ? " (" : "", why, *why ? ")" : "");
            continue;
        }
        /* the rest by reason: up to two devices by name, more as a count (the names are in the table) */
        for (int j = g->first; j < a->n; j++) {
            const hb_across_item *x = &a->it[j];
            if (strcmp(x->group, f->group) || isfinite(x->v)) continue;
            int seen = 0, cnt = 0;
            for (int i = g->first; i < j && !seen; i++)
                seen = !strcmp(a->it[i].group, f->group) && !isfinite(a->it[i].v) && !strcmp(a->it[i].why, x->why);
            if (seen) continue;
            for (int i = j; i < a->n; i++)
                cnt += !strcmp(a->it[i].group, f->group) && !isfinite(a->it[i].v) && !strcmp(a->it[i].why, x->why);
            const char *lead = na++ ? ", " : parts ? "; n/a on " : "n/a on ";
            if (cnt > 2) {
                hb_appendf(buf, len, &o, "%s%d %ss%s%s%s", lead, cnt, f->noun, *x->why ? " (" : "", x->why, *x->why ? ")" : "");
                continue;
            }
            for (int i = j, e = 0; i < a->n; i++) {
                const hb_across_item *y = &a->it[i];
                if (strcmp(y->group, f->group) || isfinite(y->v) || strcmp(y->why, x->why)) continue;
                hb_appendf(buf, len, &o, "%s%s", e++ ? (cnt == 2 ? " and " : ", ") : lead, y->label);
            }
            hb_appendf(buf, len, &o, "%s%s%s", *x->why ? " (" : "", x->why, *x->why ? ")" : "");
        }
    }
    return buf;
}

json_t *hb_across_json(hb_across *a)
{
    hb_across_eval(a);
    json_t *j = json_object(), *gs = json_array(), *na = json_array();
    if (!j || !gs || !na) { json_decref(j); json_decref(gs); json_decref(na); return NULL; }
    json_object_set_new(j, "groups", gs);
    json_object_set_new(j, "na", na);
    char name[256];
    for (int k = 0; k < a->ng; k++) {
        const hb_across_group *g = &a->g[k];
        const hb_across_item *f = &a->it[g->first];
        json_t *ex = json_array();
        for (int i = g->first; i < a->n; i++) {
            const hb_across_item *x = &a->it[i];
            if (strcmp(x->group, f->group)) continue;
            if (x->exception) json_array_append_new(ex, json_pack("{s:s,s:o}", "label", x->label, "value", hb_json_num(x->v)));
            if (!isfinite(x->v)) json_array_append_new(na, json_pack("{s:s,s:s}", "label", x->label, "why", x->why));
        }
        if (!g->n) { json_decref(ex); continue; }
        group_name(a, g, 1, name, sizeof name);
        json_array_append_new(gs, json_pack("{s:s,s:i,s:o,s:o,s:o,s:o}", "name", name, "devices", g->n, "lo", hb_json_num(g->lo),
                                            "hi", hb_json_num(g->hi), "median", hb_json_num(g->median), "exceptions", ex));
    }
    return j;
}

void hb_across_card(json_t *cards, const char *what, hb_across *a)
{
    json_t *card = json_array_get(cards, json_array_size(cards) - 1), *f = hb_across_json(a);
    if (!card || !f) { json_decref(f); return; }
    json_object_set_new(f, "what", json_string(what));
    json_t *fs = json_object_get(card, "findings");
    if (!fs) json_object_set_new(card, "findings", fs = json_array());
    json_array_append_new(fs, f);
}

json_t *hb_across_card_table(json_t *cards, const char *caption, int ncols, ...)
{
    json_t *card = json_array_get(cards, json_array_size(cards) - 1);
    if (!card) return NULL;
    json_t *rows;
    va_list ap;
    va_start(ap, ncols);
    json_object_set_new(card, "details", hb_doc_table_v(caption, 1, ncols, ap, &rows));
    va_end(ap);
    return rows;
}
