/*
 * energy.c - energy counters and energy windows (energy.h, docs/energy.md).
 */
#include "measure/energy.h"
#include "measure/measure.h"
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_double_file(const char *path, double *v, char *why, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, len, "cannot read %.120s: %s%s", path, strerror(errno),
                 errno == EACCES ? " (RAPL's energy_uj is root-only since Linux 5.10)" : "");
        return 0;
    }
    int ok = fscanf(f, "%lf", v) == 1;
    fclose(f);
    if (!ok) snprintf(why, len, "%.120s holds no number", path);
    return ok;
}

static int cmp_str(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static void rapl_open(hb_energy_src *s, const char *root)
{
    snprintf(s->name, sizeof s->name, "rapl_package");
    DIR *d = opendir(root);
    if (!d) {
        snprintf(s->reason, sizeof s->reason, "no RAPL: %.100s cannot be opened (%s)", root, strerror(errno));
        return;
    }
    char found[8][64];
    int nf = 0;
    struct dirent *e;
    /* top-level package domains: intel-rapl:N (Intel and, since Linux 5.8, AMD); not intel-rapl:N:M */
    while ((e = readdir(d)) && nf < 8) {
        const char *p = e->d_name;
        if (strncmp(p, "intel-rapl:", 11) || strchr(p + 11, ':')) continue;
        size_t l = strlen(p);
        if (l >= sizeof found[0]) continue;
        memcpy(found[nf++], p, l + 1);
    }
    closedir(d);
    qsort(found, (size_t)nf, sizeof found[0], cmp_str);
    if (!nf) {
        snprintf(s->reason, sizeof s->reason, "no RAPL package domain under %.100s (the host or hypervisor exposes none)", root);
        return;
    }
    for (int i = 0; i < nf; i++) {
        char path[256];
        double max_uj = 0, v;
        snprintf(path, sizeof path, "%s/%s/max_energy_range_uj", root, found[i]);
        if (!read_double_file(path, &max_uj, s->reason, sizeof s->reason)) max_uj = 0;
        snprintf(s->rapl[i], sizeof s->rapl[i], "%s/%s/energy_uj", root, found[i]);
        if (!read_double_file(s->rapl[i], &v, s->reason, sizeof s->reason)) { s->nrapl = 0; return; }
        s->rapl_max_j[i] = max_uj * 1e-6;
        s->rapl_last_j[i] = v * 1e-6;
        s->rapl_acc_j[i] = 0;
        s->nrapl = i + 1;
    }
    s->available = 1;
    s->reason[0] = 0;
}

void hb_energy_open(hb_energy_src *src, hb_instance *inst, const char *rapl_root)
{
    memset(src, 0, sizeof *src);
    src->inst = inst;
    if (inst && inst->ops && inst->ops->energy_read) {
        snprintf(src->name, sizeof src->name, "%s", !strcmp(inst->ops->type, "cuda") ? "nvml_total_energy" : "backend");
        double j;
        char why[160] = "";
        if (inst->ops->energy_read(inst, &j, why, sizeof why) == HB_OK) src->available = 1;
        else snprintf(src->reason, sizeof src->reason, "%s", why[0] ? why : "the backend's energy counter cannot be read");
        return;
    }
    if (inst && !inst->host_memory) {
        snprintf(src->name, sizeof src->name, "none");
        snprintf(src->reason, sizeof src->reason, "backend %s has no energy counter", inst->ops ? inst->ops->type : "?");
        return;
    }
    rapl_open(src, rapl_root ? rapl_root : "/sys/class/powercap");
}

hb_status hb_energy_read(hb_energy_src *src, double *joules)
{
    if (!src->available) return HB_EDEVICE;
    if (src->inst && src->inst->ops && src->inst->ops->energy_read) {
        char why[160] = "";
        hb_status st = src->inst->ops->energy_read(src->inst, joules, why, sizeof why);
        if (st != HB_OK) snprintf(src->reason, sizeof src->reason, "%s", why);
        return st == HB_OK ? HB_OK : HB_EDEVICE;
    }
    double sum = 0;
    for (int i = 0; i < src->nrapl; i++) {
        double v;
        if (!read_double_file(src->rapl[i], &v, src->reason, sizeof src->reason)) return HB_EDEVICE;
        v *= 1e-6;
        double d = v - src->rapl_last_j[i];
        if (d < 0) d += src->rapl_max_j[i]; /* the counter wrapped */
        src->rapl_acc_j[i] += d;
        src->rapl_last_j[i] = v;
        sum += src->rapl_acc_j[i];
    }
    *joules = sum;
    return HB_OK;
}

#define HB_ENERGY_STALL_S 2.0 /* a counter that does not change for this long while calls run: broken */

hb_status hb_energy_window(hb_energy_src *src, hb_status (*call)(void *), void *arg, int (*vote)(void *, int),
                           void *varg, double min_s, hb_energy_result *r)
{
    memset(r, 0, sizeof *r);
    double e, e0 = 0, t0 = 0, last;
    hb_status st = hb_energy_read(src, &last);
    if (st != HB_OK) return st;
    int open = 0;
    long calls = 0;
    int updates = 0;
    double t_change = hb_now();
    for (;;) {
        if (call) {
            st = call(arg);
            if (st != HB_OK) return st;
        } else {
            usleep(2000);
        }
        calls++;
        st = hb_energy_read(src, &e);
        if (st != HB_OK) return st;
        double t = hb_now();
        int changed = e != last;
        if (changed) { last = e; t_change = t; }
        int want = 0; /* 1: close the window here; 2: the counter is stuck */
        if (changed && !open) {
            open = 1; e0 = e; t0 = t; calls = 0;
        } else if (changed) {
            updates++;
            if (t - t0 >= min_s && calls >= 3) want = 1;
        }
        if (t - t_change > HB_ENERGY_STALL_S) want = 2;
        /* several ranks stop together; a rank whose counter did not change at this call closes its
         * window on its last reading (an edge up to one counter period stale) */
        int stop = vote ? vote(varg, want != 0) : want != 0;
        if (!stop) continue;
        if (want == 2 || !open) {
            snprintf(src->reason, sizeof src->reason, "the %s counter did not change for %.1f s", src->name, t - t_change);
            return HB_EDEVICE;
        }
        r->joules = e - e0;
        r->seconds = t - t0;
        r->calls = calls;
        r->updates = updates;
        return HB_OK;
    }
}

double hb_energy_idle(hb_energy_src *src, double min_s)
{
    hb_energy_result r;
    if (hb_energy_window(src, NULL, NULL, NULL, NULL, min_s, &r) != HB_OK || !(r.seconds > 0)) return NAN;
    return r.joules / r.seconds;
}

hb_status hb_energy_fill(hb_rec_energy *e, const hb_energy_src *src, const hb_energy_result *r, double min_s, double idle_w,
                         double flops, double bytes)
{
    hb_status st = HB_OK;
#define SET(m, x) (st = st ? st : HB_REC_SET(hb_rec_energy, e, m, x))
    SET(source, src->name);
    SET(available, src->available && r);
    if (!src->available || !r) {
        SET(reason, src->reason[0] ? src->reason : "not measured");
        return st;
    }
    double jop = r->calls > 0 ? r->joules / (double)r->calls : (double)NAN;
    SET(window_s, r->seconds);
    SET(min_window_s, min_s);
    SET(calls, (double)r->calls);
    SET(counter_updates, (double)r->updates);
    SET(joules, r->joules);
    SET(power_w, r->seconds > 0 ? r->joules / r->seconds : (double)NAN);
    SET(j_per_op, jop);
    SET(s_per_op, r->calls > 0 ? r->seconds / (double)r->calls : (double)NAN);
    SET(idle_power_w, idle_w);
    if (isfinite(idle_w)) SET(j_per_op_net, r->calls > 0 ? (r->joules - idle_w * r->seconds) / (double)r->calls : (double)NAN);
    if (flops > 0 && jop > 0) SET(gflop_per_j, flops / 1e9 / jop);
    if (bytes > 0 && jop > 0) SET(gb_per_j, bytes / 1e9 / jop);
#undef SET
    return st;
}
