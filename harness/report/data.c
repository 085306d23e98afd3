/* data.c - loading results files into the report's runs, devices and rows; number
 * formatting helpers. See report.h. */
#include "report/report.h"
#include "results/machine.h"
#include "analysis/plan.h"
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>



/* The plan's figures; see report.h for the source of each. */
const hb_plan hb_report_plan = {
    .conv_lo_pct = 10.0, .conv_hi_pct = 30.0,
    .conv_ok_lo_pct = 15.0, .conv_ok_hi_pct = 25.0,
    .f32_of_f16_min_pct = 60.0,
    .ane_f32_of_f16_lo_pct = 50.0, .ane_f32_of_f16_hi_pct = 60.0,
    .mem_lo_pct = 20.0, .mem_hi_pct = 30.0,
    .cpu_below_bytes = 1e6,
    .ane_below_bytes = 1e8,
    .matmul_gpu_above_elems = HB_SEED_MATMUL_GPU_ABOVE_ELEMS, /* analysis/plan.h: the seed's rule, one definition */
    .tensor_elem_bytes = 4.0,
};

static const char *jstr(const char *s) { return s ? s : ""; }

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return 1;
    return 0;
}

void hb_report_free(hb_report *rp)
{
    if (!rp) return;
    for (int i = 0; i < rp->nruns; i++) hb_run_free(&rp->runs[i].r);
    free(rp->runs);
    free(rp->devs);
    free(rp->rows);
    free(rp->plots);
    json_decref(rp->summary);
    json_decref(rp->routing);
    json_decref(rp->doc);
    memset(rp, 0, sizeof *rp);
}

/* Find or add the device (run, backend name). Returns its index or -1 on allocation failure. */
static int dev_find_add(hb_report *rp, int *cap, int run, const char *backend, const hb_rec_backend *rec)
{
    for (int i = 0; i < rp->ndevs; i++)
        if (rp->devs[i].run == run && !strcmp(rp->devs[i].backend, backend)) return i;
    if (rp->ndevs == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        hb_rdev *nd = realloc(rp->devs, (size_t)nc * sizeof *nd);
        if (!nd) return -1;
        rp->devs = nd;
        *cap = nc;
    }
    hb_rdev *d = &rp->devs[rp->ndevs];
    memset(d, 0, sizeof *d);
    d->run = run;
    d->backend = backend;
    d->rec = rec;
    size_t tl = strcspn(backend, ":");
    if (tl >= sizeof d->type) tl = sizeof d->type - 1;
    memcpy(d->type, backend, tl);
    d->type[tl] = 0;
    if (rec) {
        d->available = rec->available != 0; /* absent: available */
        d->host_memory = rec->host_memory;
        d->description = jstr(rec->description);
        d->reason = jstr(rec->reason);
    } else {
        /* a case names a backend without a backend record: it ran, so it was available */
        d->available = 1;
        d->description = "";
        d->reason = "";
        d->host_memory = !strcmp(d->type, "cpu") || !strcmp(d->type, "cpu-ref");
    }
    d->is_reference = !strcmp(d->type, "cpu-ref");
    if (!strcmp(d->type, "cpu") || !strcmp(d->type, "cpu-ref")) {
        d->is_cpu_device = 1;
    } else if (rec) {
        /* an OpenCL platform such as pocl exposes the host CPU as a device */
        const char *dt = jstr(rec->info.device_type);
        d->is_cpu_device = contains_ci(dt, "cpu") || contains_ci(d->description, "pthread") ||
                           (contains_ci(d->description, " cpu") && !contains_ci(d->description, "gpu"));
    }
    return rp->ndevs++;
}

hb_status hb_report_load(hb_report *rp, char *const *paths, int npaths, char *err, size_t errlen)
{
    if (npaths <= 0) { snprintf(err, errlen, "no results files given"); return HB_EINVAL; }
    rp->runs = calloc((size_t)npaths, sizeof *rp->runs);
    if (!rp->runs) return HB_ENOMEM;
    size_t ncases = 0;
    for (int i = 0; i < npaths; i++) {
        hb_status st = hb_run_load(paths[i], &rp->runs[i].r, err, errlen);
        if (st != HB_OK) return st;
        rp->nruns = i + 1;
        hb_rrun *ru = &rp->runs[i];
        const hb_rec_meta *m = ru->r.meta_rec;
        ru->host = m && *jstr(m->host) ? m->host : "?";
        ru->commit = m && *jstr(m->git_commit) ? m->git_commit : "?";
        ru->run_id = m && *jstr(m->run_id) ? m->run_id : "?";
        ru->date = m && *jstr(m->date) ? m->date : "?";
        ncases += ru->r.ncase_recs;
    }
    /* labels: the host; host/<first 8 hex digits of the fingerprint> where two different machines share a host name (the machine
     * fingerprint, results/machine.h: CPU, GPU, driver and library versions); then @commit7 where
     * those repeat; #i where both repeat. The fingerprint of every run is in the runs table (runs_header.c). */
    char (*fps)[32] = calloc((size_t)rp->nruns + 1, sizeof *fps);
    if (!fps) return HB_ENOMEM;
    for (int i = 0; i < rp->nruns; i++) hb_run_fingerprint(&rp->runs[i].r, NULL, 0, fps[i], sizeof fps[i]);
    char (*base)[96] = calloc((size_t)rp->nruns + 1, sizeof *base);
    if (!base) { free(fps); return HB_ENOMEM; }
    for (int i = 0; i < rp->nruns; i++) {
        int other_machine = 0; /* another run of the same host name on a different machine */
        for (int j = 0; j < rp->nruns; j++)
            if (j != i && !strcmp(rp->runs[j].host, rp->runs[i].host) && strcmp(fps[j], fps[i])) other_machine = 1;
        if (other_machine) snprintf(base[i], sizeof base[i], "%.40s/%.8s", rp->runs[i].host, fps[i]);
        else snprintf(base[i], sizeof base[i], "%.60s", rp->runs[i].host);
    }
    for (int i = 0; i < rp->nruns; i++) {
        hb_rrun *ru = &rp->runs[i];
        int same_base = 0, same_both = 0;
        for (int j = 0; j < rp->nruns; j++) {
            if (j == i || strcmp(base[j], base[i])) continue;
            same_base = 1;
            if (!strcmp(rp->runs[j].commit, ru->commit)) same_both = 1;
        }
        if (!same_base) snprintf(ru->label, sizeof ru->label, "%s", base[i]);
        else if (!same_both) snprintf(ru->label, sizeof ru->label, "%s@%.7s", base[i], ru->commit);
        else snprintf(ru->label, sizeof ru->label, "%s@%.7s#%d", base[i], ru->commit, i + 1);
    }
    free(base);
    free(fps);
    int devcap = 0;
    for (int i = 0; i < rp->nruns; i++) {
        for (size_t k = 0; k < rp->runs[i].r.nbackend_recs; k++) {
            const hb_rec_backend *b = &rp->runs[i].r.backend_recs[k];
            const char *name = jstr(b->backend);
            if (!*name) continue;
            if (dev_find_add(rp, &devcap, i, name, b) < 0) return HB_ENOMEM;
        }
    }
    rp->rows = calloc(ncases ? ncases : 1, sizeof *rp->rows);
    if (!rp->rows) return HB_ENOMEM;
    for (int i = 0; i < rp->nruns; i++) {
        for (size_t k = 0; k < rp->runs[i].r.ncase_recs; k++) {
            const hb_rec_case *c = &rp->runs[i].r.case_recs[k];
            const char *bk = jstr(c->backend);
            if (!*bk || !*jstr(c->op)) continue; /* not a usable case record */
            int d = dev_find_add(rp, &devcap, i, bk, NULL);
            if (d < 0) return HB_ENOMEM;
            hb_rrow *w = &rp->rows[rp->nrows++];
            w->rec = c;
            w->run = i;
            w->dev = d;
            w->op = jstr(c->op);
            w->family = jstr(c->family);
            w->shape = jstr(c->shape_str);
            w->name = jstr(c->name);
            w->model = jstr(c->model);
            w->dtype = *jstr(c->dtype) ? c->dtype : "f32";
            w->mode = jstr(c->mode);
            w->route = *jstr(c->route) ? c->route : "pageable";
            w->status = jstr(c->status);
            w->bound = jstr(c->bound);
            w->size = c->size;
            w->flops = c->flops;
            w->bytes = c->bytes;
            w->weight = c->weight;
            if (!isfinite(w->weight) || w->weight <= 0) w->weight = 1;
            for (int p = 0; p < HB_PH_COUNT; p++) w->t[p] = c->phase[p].median;
            w->ci_lo = c->phase[HB_PH_TOTAL].ci_lo;
            w->ci_hi = c->phase[HB_PH_TOTAL].ci_hi;
            w->ci_met = c->ci_met;
            w->gflops = c->gflops;
            w->gbps = c->gbps;
            w->gflops_total = c->gflops_total;
            w->gbps_total = c->gbps_total;
            w->host_bytes = c->mem.host_bytes;
            w->device_bytes = c->mem.device_bytes;
            w->rss = c->mem.peak_rss_bytes;
            w->ok = !strcmp(w->status, "ok") && isfinite(w->t[HB_PH_TOTAL]) && w->t[HB_PH_TOTAL] > 0;
        }
    }
    /* device ids, after every device is known */
    for (int i = 0; i < rp->ndevs; i++) {
        hb_rdev *d = &rp->devs[i];
        if (rp->nruns == 1) snprintf(d->id, sizeof d->id, "%s", d->backend);
        else snprintf(d->id, sizeof d->id, "%s@%s", d->backend, rp->runs[d->run].label);
    }
    return HB_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hb_report_median(double *v, size_t n)
{
    if (n == 0) return DNAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define FMT_RING 32
static char *fmt_slot(void)
{
    static char ring[FMT_RING][512];
    static int next;
    char *s = ring[next];
    next = (next + 1) % FMT_RING;
    return s;
}

const char *hb_report_fmt(const char *fmt, ...)
{
    char *s = fmt_slot();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, 512, fmt, ap);
    va_end(ap);
    return s;
}

const char *hb_report_fmt_time(double t)
{
    if (!isfinite(t)) return "n/a";
    double a = fabs(t);
    if (a == 0) return "0";
    if (a < 1e-6) return hb_report_fmt("%.0f ns", t * 1e9);
    if (a < 1e-3) return hb_report_fmt("%.3g µs", t * 1e6);
    if (a < 1) return hb_report_fmt("%.3g ms", t * 1e3);
    return hb_report_fmt("%.3g s", t);
}

const char *hb_report_fmt_count(double n)
{
    static const char *const pre[] = { "", "Ki", "Mi", "Gi", "Ti" };
    if (!isfinite(n)) return "n/a";
    int i = 0;
    double v = n;
    while (fabs(v) >= 1024 && i < 4) { v /= 1024; i++; }
    if (i == 0) return hb_report_fmt("%.0f", v);
    if (v == floor(v)) return hb_report_fmt("%.0f%s", v, pre[i]);
    return hb_report_fmt("%.3g%s", v, pre[i]);
}

const char *hb_report_fmt_bytes(double b)
{
    static const char *const pre[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    if (!isfinite(b)) return "n/a";
    int i = 0;
    double v = b;
    while (fabs(v) >= 1024 && i < 4) { v /= 1024; i++; }
    return i ? hb_report_fmt("%.3g %s", v, pre[i]) : hb_report_fmt("%.0f B", v);
}

const char *hb_report_fmt_pct(double p)
{
    if (!isfinite(p)) return "n/a";
    return hb_report_fmt(fabs(p) < 10 ? "%.1f%%" : "%.0f%%", p);
}

const char *hb_report_fmt_num(double x)
{
    if (!isfinite(x)) return "n/a";
    return hb_report_fmt("%.3g", x);
}
