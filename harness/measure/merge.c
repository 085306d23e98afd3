/*
 * merge.c - a run of several passes (--passes P) writes each pass into its own file; this merges
 * them into the results file: backend records with their best ceilings, one record per case (the
 * worst status wins, else the fastest pass), every pass's medians kept (pass_medians).
 */
#include "measure/internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Key of a case record across passes: its "key" (hb_case_key) and its occurrence in the pass, so a
 * case listed twice in the workloads stays two records ("#2"), as compare matches them. seen counts
 * the keys of the current pass. Returns a new string, or NULL when out of memory. */
static char *record_key(json_t *r, json_t *seen)
{
    const char *k = json_string_value(json_object_get(r, "key"));
    if (!k) k = "";
    json_int_t n = json_integer_value(json_object_get(seen, k)) + 1;
    json_object_set_new(seen, k, json_integer(n));
    size_t len = strlen(k) + 24;
    char *out = malloc(len);
    if (out) snprintf(out, len, "%s#%lld", k, (long long)n);
    return out;
}

/* Precedence of a status when passes disagree: a wrong or crashed pass decides the merged record
 * (a wrong result is never hidden behind a faster pass); then timeouts, failures, out-of-memory. */
static int status_rank(const char *s)
{
    static const char *order[] = {"ok", "skipped", "no_resource", "failed", "timed_out", "crashed", "wrong"};
    for (int i = 6; i >= 0; i--)
        if (s && !strcmp(s, order[i])) return i;
    return 3; /* unknown non-ok status: as a failure */
}

static double rec_median(json_t *r, const char *phase)
{
    json_t *m = json_object_get(json_object_get(json_object_get(r, "phases"), phase), "median");
    return json_is_number(m) ? json_number_value(m) : (double)NAN;
}

static double rec_total_median(json_t *r)
{
    return rec_median(r, "total");
}

/* Append this pass's medians (total and compute; null when the pass is not ok) to pm, after
 * padding with nulls for the passes before `pass` that did not run the case. */
static void pass_medians_add(json_t *pm, json_t *r, int pass, int ok)
{
    static const char *ph[2] = {"total", "compute"};
    for (int i = 0; i < 2; i++) {
        json_t *a = json_object_get(pm, ph[i]);
        if (!a) { a = json_array(); json_object_set_new(pm, ph[i], a); }
        while ((int)json_array_size(a) < pass) json_array_append_new(a, json_null());
        double m = rec_median(r, ph[i]);
        json_array_append_new(a, ok && isfinite(m) ? json_real(m) : json_null());
    }
}

/* A backend record of pass p: the first one of an instance is kept (in order); later passes' ceilings
 * raise its values to the best measured in any pass (ceilings are best-of figures, and the case
 * records keep their best pass: both estimators then cover the same host states). The record is
 * indexed under "backend|<name>". */
static void merge_backend(json_t *order, json_t *index, json_t *r, int p)
{
    const char *name = json_string_value(json_object_get(r, "backend"));
    if (!name) return;
    char key[300];
    snprintf(key, sizeof key, "backend|%s", name);
    json_t *slot = json_object_get(index, key);
    if (!slot) {
        json_object_set_new(index, key, json_integer((json_int_t)json_array_size(order)));
        json_array_append(order, r);
        return;
    }
    json_t *old = json_array_get(order, (size_t)json_integer_value(slot));
    json_t *oc = json_object_get(old, "ceilings"), *nc = json_object_get(r, "ceilings");
    for (size_t i = 0; i < json_array_size(oc); i++) {
        json_t *c = json_array_get(oc, i);
        const char *cn = json_string_value(json_object_get(c, "name"));
        double v = json_number_value(json_object_get(c, "value"));
        for (size_t k = 0; k < json_array_size(nc) && cn; k++) {
            json_t *d = json_array_get(nc, k);
            const char *dn = json_string_value(json_object_get(d, "name"));
            double w = json_number_value(json_object_get(d, "value"));
            if (dn && !strcmp(dn, cn) && w > v) {
                json_object_set_new(c, "value", json_real(w));
                v = w;
            }
        }
        json_object_set_new(c, "passes", json_integer(p + 1));
    }
}

/* A merged case record: its ceiling_value and fraction from the merged backend ceilings (the
 * fraction is gflops or gbps over the ceiling, as measure_case computes it). */
static void refraction(json_t *index, json_t *order, json_t *r)
{
    const char *be = json_string_value(json_object_get(r, "backend"));
    const char *cn = json_string_value(json_object_get(r, "ceiling"));
    if (!be || !cn) return;
    char key[300];
    snprintf(key, sizeof key, "backend|%s", be);
    json_t *slot = json_object_get(index, key);
    if (!slot) return;
    json_t *ca = json_object_get(json_array_get(order, (size_t)json_integer_value(slot)), "ceilings");
    for (size_t i = 0; i < json_array_size(ca); i++) {
        json_t *c = json_array_get(ca, i);
        if (strcmp(json_string_value(json_object_get(c, "name")) ? json_string_value(json_object_get(c, "name")) : "", cn)) continue;
        double v = json_number_value(json_object_get(c, "value"));
        const char *bound = json_string_value(json_object_get(r, "bound")); /* as measure_case: compute-bound ops against GFLOP/s */
        double x = json_number_value(json_object_get(r, bound && !strcmp(bound, "compute") ? "gflops" : "gbps"));
        if (v > 0) {
            json_object_set_new(r, "ceiling_value", json_real(v));
            json_object_set_new(r, "fraction", json_real(x / v));
        }
        return;
    }
}

/* Merge the per-pass files into fd: backend records (merge_backend), then one record per case
 * in first-seen order: among passes that ran it, the worst status decides (status_rank); when all
 * are ok, the pass with the lowest total median is kept (interference only adds time: Chen &
 * Revels 2016), and every pass's medians are recorded (pass_medians: {"total": [...], "compute":
 * [...]}, seconds, null where the pass was not ok), with passes and best_pass (1-based). counts[] gets the merged statuses. Returns 0, or HB_EXIT_IO. */
int hb_merge_passes(int fd, const char *const *paths, int npass, int counts[HB_STATUS_COUNT], size_t *ncases)
{
    json_t *order = json_array(), *index = json_object();
    int rc = 0;
    for (int p = 0; p < npass && !rc; p++) {
        FILE *f = fopen(paths[p], "r");
        if (!f) continue;
        char *line = NULL;
        size_t cap = 0;
        json_t *seen = json_object();
        while (getline(&line, &cap, f) > 0) {
            json_t *r = json_loads(line, 0, NULL);
            if (!r) continue;
            const char *type = json_string_value(json_object_get(r, "type"));
            if (!type || strcmp(type, "case")) {
                if (type && !strcmp(type, "backend")) merge_backend(order, index, r, p);
                json_decref(r);
                continue;
            }
            double med = rec_total_median(r);
            const char *st = json_string_value(json_object_get(r, "status"));
            int ok = st && !strcmp(st, "ok");
            char *key = record_key(r, seen);
            if (!key) { json_decref(r); rc = HB_EXIT_IO; break; }
            json_t *slot = json_object_get(index, key);
            if (!slot) {
                json_t *meds = json_object();
                pass_medians_add(meds, r, p, ok);
                json_object_set_new(r, "pass_medians", meds);
                json_object_set_new(r, "best_pass", json_integer(p + 1));
                json_object_set_new(index, key, json_integer((json_int_t)json_array_size(order)));
                json_array_append_new(order, r);
            } else {
                size_t at = (size_t)json_integer_value(slot);
                json_t *old = json_array_get(order, at);
                json_t *meds = json_incref(json_object_get(old, "pass_medians"));
                pass_medians_add(meds, r, p, ok);
                const char *ost = json_string_value(json_object_get(old, "status"));
                int take = status_rank(st) > status_rank(ost) ||
                           (status_rank(st) == status_rank(ost) && isfinite(med) && med < rec_total_median(old));
                if (take) {
                    json_object_set(r, "pass_medians", meds);
                    json_object_set_new(r, "best_pass", json_integer(p + 1));
                    json_array_set(order, at, r);
                }
                json_decref(meds);
                json_decref(r);
            }
            free(key);
        }
        json_decref(seen);
        free(line);
        fclose(f);
    }
    for (size_t i = 0; i < json_array_size(order) && !rc; i++) {
        json_t *r = json_array_get(order, i);
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && !strcmp(type, "case")) {
            json_object_set_new(r, "passes", json_integer(npass));
            refraction(index, order, r);
            hb_status s = hb_status_from_name(json_string_value(json_object_get(r, "status")));
            if ((unsigned)s < HB_STATUS_COUNT) counts[s]++;
            (*ncases)++;
        }
        if (hb_record_write(fd, json_incref(r)) != HB_OK) rc = HB_EXIT_IO;
    }
    json_decref(order);
    json_decref(index);
    return rc;
}

