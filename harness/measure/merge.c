/*
 * merge.c - a run of several passes (--passes P) appends each pass after the first to the results
 * file as pass_case / pass_backend records; at the pass's end this merges it into the records of the
 * passes before: backend records with their best ceilings, one record per case (the worst status
 * wins, else the fastest pass), every pass's medians kept (pass_medians). The merged file is written
 * beside the results file (FILE.tmp, locked), synced and renamed over it: at every moment the
 * results file holds every record measured so far.
 */
#include "measure/internal.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Precedence of a status when passes disagree (hb_status_severity, results.h): a wrong or crashed
 * pass decides the merged record (a wrong result is never hidden behind a faster pass); then
 * timeouts, failures, out-of-memory. */
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

/* Fold one case record r (consumed) of pass p (0-based) into order/index (see hb_merge_file). A
 * record that already carries pass_medians is a merged record of the passes before. */
static int fold_case(json_t *order, json_t *index, json_t *seen, json_t *r, int p)
{
    double med = rec_total_median(r);
    const char *st = json_string_value(json_object_get(r, "status"));
    int ok = st && !strcmp(st, "ok");
    char *key = record_key(r, seen);
    if (!key) { json_decref(r); return -1; }
    json_t *slot = json_object_get(index, key);
    if (!slot) {
        if (!json_object_get(r, "pass_medians")) {
            json_t *meds = json_object();
            pass_medians_add(meds, r, p, ok);
            json_object_set_new(r, "pass_medians", meds);
            json_object_set_new(r, "best_pass", json_integer(p + 1));
        }
        json_object_set_new(index, key, json_integer((json_int_t)json_array_size(order)));
        json_array_append_new(order, r);
    } else {
        size_t at = (size_t)json_integer_value(slot);
        json_t *old = json_array_get(order, at);
        json_t *meds = json_incref(json_object_get(old, "pass_medians"));
        if (!meds) meds = json_object();
        pass_medians_add(meds, r, p, ok);
        const char *ost = json_string_value(json_object_get(old, "status"));
        int take = hb_status_severity(st) > hb_status_severity(ost) ||
                   (hb_status_severity(st) == hb_status_severity(ost) && isfinite(med) && med < rec_total_median(old));
        if (take) {
            json_object_set(r, "pass_medians", meds);
            json_object_set_new(r, "best_pass", json_integer(p + 1));
            json_array_set(order, at, r);
        }
        json_decref(meds);
        json_decref(r);
    }
    free(key);
    return 0;
}

/* Merge pass `pass` into the results file (see internal.h). The file holds the meta record, the
 * case and backend records of the passes merged so far (pass 1's as measured) and this pass's
 * pass_case / pass_backend records. Backend records: merge_backend. Case records, in first-seen
 * order: among the passes that ran a case the worst status decides (status_rank); when all are ok
 * the pass with the lowest total median is kept (interference only adds time: Chen & Revels 2016),
 * and every pass's medians are recorded (pass_medians: {"total": [...], "compute": [...]}, seconds,
 * null where the pass was not ok), with passes and best_pass (1-based). */
int hb_merge_file(const char *path, int *fd, int pass, int counts[HB_STATUS_COUNT], size_t *ncases, char *err,
                  size_t errlen)
{
    char real[4096], tmp[4200];
    if (!realpath(path, real)) { snprintf(err, errlen, "cannot merge pass %d into %s: %s", pass, path, strerror(errno)); return HB_EXIT_IO; }
    snprintf(tmp, sizeof tmp, "%s.tmp", real);
    FILE *f = fopen(real, "r");
    if (!f) { snprintf(err, errlen, "cannot read %s to merge pass %d: %s", path, pass, strerror(errno)); return HB_EXIT_IO; }
    json_t *order = json_array(), *index = json_object(), *seen_old = json_object(), *seen_new = json_object();
    json_t *head = json_array(); /* the meta record and any record type merge does not know, kept in order */
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0 && !rc) {
        json_t *r = json_loads(line, 0, NULL);
        if (!r) continue; /* never written by put_record (a failed write is cut back); not a record */
        const char *tv = json_string_value(json_object_get(r, "type"));
        char type[32];
        snprintf(type, sizeof type, "%s", tv ? tv : "");
        if (!strcmp(type, "pass_case") || !strcmp(type, "pass_backend")) {
            int p = (int)json_integer_value(json_object_get(r, "pass"));
            json_object_set_new(r, "type", json_string(type + 5));
            json_object_del(r, "pass");
            if (p != pass) { json_decref(r); continue; } /* not this pass: cannot happen (each pass is merged at its end) */
            if (!strcmp(type, "pass_backend")) { merge_backend(order, index, r, pass - 1); json_decref(r); }
            else if (fold_case(order, index, seen_new, r, pass - 1)) rc = HB_EXIT_IO;
        } else if (!strcmp(type, "backend")) { merge_backend(order, index, r, 0); json_decref(r); }
        else if (!strcmp(type, "case")) { if (fold_case(order, index, seen_old, r, 0)) rc = HB_EXIT_IO; }
        else if (!strcmp(type, "end") || !strcmp(type, "mode_check")) json_decref(r); /* written after the last merge */
        else json_array_append_new(head, r);
    }
    free(line);
    fclose(f);
    json_decref(seen_old);
    json_decref(seen_new);
    if (rc) snprintf(err, errlen, "out of memory merging pass %d into %s", pass, path);
    struct stat st;
    int tfd = -1;
    if (!rc) {
        mode_t mode = fstat(*fd, &st) == 0 ? (st.st_mode & 0777) : 0644;
        tfd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, mode);
        if (tfd < 0 || flock(tfd, LOCK_EX | LOCK_NB) < 0) {
            snprintf(err, errlen, "cannot write %s (merging pass %d; %s keeps every record): %s", tmp, pass, path, strerror(errno));
            rc = HB_EXIT_IO;
        }
    }
    for (size_t i = 0; i < json_array_size(head) && !rc; i++) {
        errno = 0;
        if (hb_record_write(tfd, json_incref(json_array_get(head, i))) != HB_OK) rc = errno ? errno : EIO;
    }
    for (size_t i = 0; i < json_array_size(order) && !rc; i++) {
        json_t *r = json_array_get(order, i);
        const char *type = json_string_value(json_object_get(r, "type"));
        if (type && !strcmp(type, "case")) {
            json_object_set_new(r, "passes", json_integer(pass));
            refraction(index, order, r);
            hb_status s = hb_status_from_name(json_string_value(json_object_get(r, "status")));
            if ((unsigned)s < HB_STATUS_COUNT) counts[s]++;
            (*ncases)++;
        }
        errno = 0;
        if (hb_record_write(tfd, json_incref(r)) != HB_OK) rc = errno ? errno : EIO;
    }
    if (rc && rc != HB_EXIT_IO) {
        snprintf(err, errlen, "cannot write %s (merging pass %d; %s keeps every record): %s", tmp, pass, path, strerror(rc));
        rc = HB_EXIT_IO;
    }
    if (!rc && fsync(tfd) < 0) {
        snprintf(err, errlen, "cannot write %s (merging pass %d; %s keeps every record): %s", tmp, pass, path, strerror(errno));
        rc = HB_EXIT_IO;
    }
    if (!rc && rename(tmp, real) < 0) {
        snprintf(err, errlen, "cannot rename %s to %s (merging pass %d; %s keeps every record): %s", tmp, real, pass, path,
                 strerror(errno));
        rc = HB_EXIT_IO;
    }
    if (rc) {
        if (tfd >= 0) { close(tfd); unlink(tmp); }
    } else {
        close(*fd); /* the old file, now unlinked: its lock goes with it; tfd holds the new file's */
        *fd = tfd;
    }
    json_decref(head);
    json_decref(order);
    json_decref(index);
    return rc;
}
