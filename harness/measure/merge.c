/*
 * merge.c - a run of several passes (--passes P) appends each pass after the first to the results
 * file as pass_case / pass_backend records; at the pass's end this merges it into the records of the
 * passes before: backend records with their best ceilings, one record per case (the worst status
 * wins, else the fastest pass), every pass's medians kept (pass_medians). The merged file is written
 * beside the results file (FILE.tmp, locked), synced and renamed over it: at every moment the
 * results file holds every record measured so far.
 */
#include "measure/internal.h"
#include "core/strmap.h"
#include <stddef.h>
#include <stdint.h>
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

/* One record of the merged file, in first-seen order: a backend record as its struct b or a case record
 * as its struct c (results/record.h), read from json (which their strings point into). */
typedef struct merge_item { json_t *json; hb_rec_case *c; hb_rec_backend *b; } merge_item;
typedef struct merge_list {
    merge_item *v;
    size_t n, cap;
    hb_strmap index;  /* "backend|<name>" and "<case key>#<occurrence>" -> position in v */
} merge_list;

static int list_add(merge_list *l, json_t *json, hb_rec_case *c, hb_rec_backend *b, const char *key)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        merge_item *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    if (hb_strmap_set(&l->index, key, l->n)) return -1;
    l->v[l->n++] = (merge_item){json, c, b};
    return 0;
}

static void item_free(merge_item *it)
{
    if (it->c) hb_rec_case_free(it->c);
    if (it->b) hb_rec_backend_free(it->b);
    free(it->c);
    free(it->b);
    json_decref(it->json);
    *it = (merge_item){NULL, NULL, NULL};
}

/* Key of a case record across passes: its "key" (hb_case_key) and its occurrence in the pass, so a
 * case listed twice in the workloads stays two records ("#2"), as compare matches them. seen counts
 * the keys of the current pass. Writes the key into out (size len); -1 when out of memory. */
static int record_key(const hb_rec_case *c, hb_strmap *seen, char *out, size_t len)
{
    const char *k = c->key ? c->key : "";
    size_t n = hb_strmap_get(seen, k, 0) + 1;
    if (hb_strmap_set(seen, k, n)) return -1;
    snprintf(out, len, "%s#%zu", k, n);
    return 0;
}

/* Append case c's medians of this pass (total and compute; NaN, written null, when the pass is not
 * ok) to the arrays of pm (two hb_rec_nums, total and compute, a copy of which the caller keeps),
 * after padding with NaN for the passes before `pass` that did not run the case. */
static int pass_medians_add(hb_rec_nums pm[2], const hb_rec_case *c, int pass, int ok)
{
    static const int ph[2] = {HB_PH_TOTAL, HB_PH_COMPUTE};
    for (int i = 0; i < 2; i++) {
        size_t n = pm[i].n > (size_t)pass ? pm[i].n : (size_t)pass;
        double *v = realloc(pm[i].v, (n + 1) * sizeof *v);
        if (!v) return -1;
        for (size_t k = pm[i].n; k < n; k++) v[k] = NAN;
        double m = c->phase[ph[i]].median;
        v[n] = ok && isfinite(m) ? m : (double)NAN;
        pm[i] = (hb_rec_nums){v, n + 1, 1};
    }
    return 0;
}

/* c's pass_medians set to pm (taken: c owns the arrays from here), put in c (new members after the
 * record's last, present ones in place). */
static hb_status pass_medians_set(hb_rec_case *c, hb_rec_nums pm[2])
{
    static const int ph[2] = {HB_PH_TOTAL, HB_PH_COMPUTE};
    hb_status st = HB_OK;
    for (int i = 0; i < 2; i++) {
        free(c->pass_medians[ph[i]].v);
        c->pass_medians[ph[i]] = pm[i];
        pm[i] = (hb_rec_nums){NULL, 0, 0};
        if (!st) st = hb_rec_put(&hb_rec_case_table, c, offsetof(hb_rec_case, pass_medians[ph[i]]));
    }
    return st;
}

/* A backend record r (consumed) of pass p, read into its struct (a pass_backend record becomes a
 * backend record: type, without pass): the first one of an instance is kept (in order); later passes'
 * ceilings raise its values to the best measured in any pass (ceilings are best-of figures, and the
 * case records keep their best pass: both estimators then cover the same host states), each
 * ceiling's "passes" set. The record is indexed under "backend|<name>". -1 when out of memory. */
static int merge_backend(merge_list *l, json_t *r, int p)
{
    hb_rec_backend *b = calloc(1, sizeof *b);
    if (!b || hb_rec_backend_parse(r, b)) { free(b); json_decref(r); return -1; }
    merge_item it = {r, NULL, b};
    if (b->type && !strcmp(b->type, "pass_backend") &&
        (HB_REC_SET(hb_rec_backend, b, type, "backend") || hb_rec_remove(&hb_rec_backend_table, b, offsetof(hb_rec_backend, pass))))
        goto oom;
    if (!b->backend) { item_free(&it); return 0; }
    char key[300];
    snprintf(key, sizeof key, "backend|%s", b->backend);
    size_t at = hb_strmap_get(&l->index, key, SIZE_MAX);
    if (at == SIZE_MAX) {
        if (list_add(l, r, NULL, b, key)) goto oom;
        return 0;
    }
    hb_rec_backend *old = l->v[at].b;
    for (size_t i = 0; old && i < old->nceilings; i++) {
        hb_rec_ceiling *c = &old->ceilings[i];
        double v = isnan(c->value) ? 0 : c->value; /* an absent value reads 0 */
        for (size_t k = 0; k < b->nceilings && c->name; k++) {
            const hb_rec_ceiling *d = &b->ceilings[k];
            double w = isnan(d->value) ? 0 : d->value;
            if (d->name && !strcmp(d->name, c->name) && w > v) {
                if (HB_REC_SET(hb_rec_ceiling, c, value, w)) goto oom;
                v = w;
            }
        }
        if (HB_REC_SET(hb_rec_ceiling, c, passes, p + 1)) goto oom;
    }
    item_free(&it);
    return 0;
oom:
    item_free(&it);
    return -1;
}

/* A merged case record: its ceiling_value and fraction from the merged backend ceilings (the
 * fraction is gflops or gbps over the ceiling, as measure_case computes it). */
static hb_status refraction(const merge_list *l, hb_rec_case *c)
{
    if (!c->backend || !c->ceiling) return HB_OK;
    char key[300];
    snprintf(key, sizeof key, "backend|%s", c->backend);
    size_t at = hb_strmap_get(&l->index, key, SIZE_MAX);
    if (at == SIZE_MAX || !l->v[at].b) return HB_OK;
    const hb_rec_backend *b = l->v[at].b;
    for (size_t i = 0; i < b->nceilings; i++) {
        const hb_rec_ceiling *e = &b->ceilings[i];
        if (strcmp(e->name ? e->name : "", c->ceiling)) continue;
        double v = isnan(e->value) ? 0 : e->value; /* as json_number_value read an absent value */
        /* as measure_case: compute-bound ops against GFLOP/s */
        double x = c->bound && !strcmp(c->bound, "compute") ? c->gflops : c->gbps;
        hb_status st = HB_OK;
        if (v > 0 && !(st = HB_REC_SET(hb_rec_case, c, ceiling_value, v))) st = HB_REC_SET(hb_rec_case, c, fraction, x / v);
        return st;
    }
    return HB_OK;
}

/* Fold one case record r (consumed) of pass p (0-based) into l (see hb_merge_file): read into its
 * struct once; a pass_case record becomes a case record (type, without pass). A record that already
 * carries pass_medians is a merged record of the passes before. -1 when out of memory. */
static int fold_case(merge_list *l, hb_strmap *seen, json_t *r, int p)
{
    hb_rec_case *c = calloc(1, sizeof *c);
    hb_rec_nums meds[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
    char key[600];
    if (!c || hb_rec_case_parse(r, c)) { free(c); json_decref(r); return -1; }
    merge_item it = {r, c, NULL};
    int bad = 0;
    if (c->type && !strcmp(c->type, "pass_case"))
        bad = HB_REC_SET(hb_rec_case, c, type, "case") || hb_rec_remove(&hb_rec_case_table, c, offsetof(hb_rec_case, pass));
    double med = c->phase[HB_PH_TOTAL].median;
    int ok = c->status && !strcmp(c->status, "ok");
    if (bad || record_key(c, seen, key, sizeof key)) goto oom;
    size_t at = hb_strmap_get(&l->index, key, SIZE_MAX);
    if (at == SIZE_MAX) {
        if (!hb_rec_entry_at(&hb_rec_case_table, c, offsetof(hb_rec_case, pass_medians_keys))) {
            if (pass_medians_add(meds, c, p, ok) || pass_medians_set(c, meds) || HB_REC_SET(hb_rec_case, c, best_pass, p + 1))
                goto oom;
        }
        if (list_add(l, r, c, NULL, key)) goto oom;
        return 0;
    }
    hb_rec_case *old = l->v[at].c;
    for (int i = 0; i < 2; i++) { /* old's medians, this pass's added */
        const hb_rec_nums *o = &old->pass_medians[i ? HB_PH_COMPUTE : HB_PH_TOTAL];
        if (o->n && !(meds[i].v = malloc(o->n * sizeof *meds[i].v))) goto oom;
        if (o->n) memcpy(meds[i].v, o->v, o->n * sizeof *meds[i].v);
        meds[i].n = o->n;
    }
    if (pass_medians_add(meds, c, p, ok)) goto oom;
    int take = hb_status_severity(c->status) > hb_status_severity(old->status) ||
               (hb_status_severity(c->status) == hb_status_severity(old->status) && isfinite(med) &&
                med < old->phase[HB_PH_TOTAL].median);
    if (take) {
        if (pass_medians_set(c, meds) || HB_REC_SET(hb_rec_case, c, best_pass, p + 1)) goto oom;
        item_free(&l->v[at]);
        l->v[at] = it;
    } else {
        if (pass_medians_set(old, meds)) goto oom;
        item_free(&it);
    }
    return 0;
oom:
    free(meds[0].v);
    free(meds[1].v);
    item_free(&it);
    return -1;
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
    merge_list l = {NULL, 0, 0, {NULL, NULL, 0, 0}};
    hb_strmap seen_old = {NULL, NULL, 0, 0}, seen_new = {NULL, NULL, 0, 0};
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
            if (p != pass) { json_decref(r); continue; } /* not this pass: cannot happen (each pass is merged at its end) */
            if (!strcmp(type, "pass_backend")) { if (merge_backend(&l, r, pass - 1)) rc = HB_EXIT_IO; }
            else if (fold_case(&l, &seen_new, r, pass - 1)) rc = HB_EXIT_IO;
        } else if (!strcmp(type, "backend")) { if (merge_backend(&l, r, 0)) rc = HB_EXIT_IO; }
        else if (!strcmp(type, "case")) { if (fold_case(&l, &seen_old, r, 0)) rc = HB_EXIT_IO; }
        else if (!strcmp(type, "end") || !strcmp(type, "mode_check")) json_decref(r); /* written after the last merge */
        else json_array_append_new(head, r);
    }
    free(line);
    fclose(f);
    hb_strmap_free(&seen_old);
    hb_strmap_free(&seen_new);
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
    for (size_t i = 0; i < l.n && !rc; i++) {
        hb_rec_case *c = l.v[i].c;
        json_t *r = NULL;
        if (l.v[i].b && !(r = hb_rec_backend_json(l.v[i].b))) { rc = ENOMEM; break; }
        if (c) {
            if (c->type && !strcmp(c->type, "case")) {
                hb_status s = hb_status_from_name(c->status);
                if ((unsigned)s < HB_STATUS_COUNT) counts[s]++;
                (*ncases)++;
                if (HB_REC_SET(hb_rec_case, c, passes, pass) || refraction(&l, c)) { rc = ENOMEM; break; }
            }
            if (!(r = hb_rec_case_json(c))) { rc = ENOMEM; break; }
        }
        errno = 0;
        if (hb_record_write(tfd, r) != HB_OK) rc = errno ? errno : EIO;
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
    for (size_t i = 0; i < l.n; i++) item_free(&l.v[i]);
    free(l.v);
    hb_strmap_free(&l.index);
    return rc;
}
