/* synth_history.c - build a synthetic nightly history in a store (results/store.h), for the scale
 * check of docs/history.md (`hybench trend` over 365 nights of 2000 cases) and for trying trend.
 *
 * usage: build/synth_history --store URL [--nights 365] [--cases 2000] [--seed 1] [--samples 20]
 *                            [--noise FILE] [--machines 1] [--planted FILE]
 * Each night is one run with a new host name (an ephemeral CI runner: the fingerprint, not the host,
 * keeps the series together). Case k has a base time, and a night-to-night noise (sd of log time)
 * taken from FILE (default tests/data/vm_pass_noise.txt: this VM's measured spreads, one a line;
 * 0.05 when absent). 1% of cases get a 5% step on a random night, 1% a drift of 1% a night over 20
 * nights; --planted FILE lists them (case key, kind, night). Each case record has `--samples` raw
 * samples of total and compute time (3% spread within a night) and phases computed from them
 * (core/stats.h), like a real run's. Fixed seed: the same store every time. Prints what it built.
 */
#include "core/stats.h"
#include "results/store.h"
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 1;
static double unif(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }

static const char *const ops[] = { "add", "mul", "relu", "gelu", "matmul", "bmm", "conv2d", "maxpool", "sum", "attention" };
static const char *const backends[] = { "cpu", "opencl:0:0" };

int main(int argc, char **argv)
{
    const char *url = NULL, *noise_file = "tests/data/vm_pass_noise.txt", *planted = NULL;
    long nights = 365, ncases = 2000, seed = 1, nsamples = 20, machines = 1;
    static const struct option lo[] = { { "store", 1, 0, 's' }, { "nights", 1, 0, 'n' }, { "cases", 1, 0, 'c' },
                                        { "seed", 1, 0, 'S' }, { "samples", 1, 0, 'k' }, { "noise", 1, 0, 'N' },
                                        { "machines", 1, 0, 'm' }, { "planted", 1, 0, 'p' }, { 0, 0, 0, 0 } };
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 's': url = optarg; break;
        case 'n': nights = atol(optarg); break;
        case 'c': ncases = atol(optarg); break;
        case 'S': seed = atol(optarg); break;
        case 'k': nsamples = atol(optarg); break;
        case 'N': noise_file = optarg; break;
        case 'm': machines = atol(optarg); break;
        case 'p': planted = optarg; break;
        default: fprintf(stderr, "synth_history: bad option (see the header of tools/synth_history.c)\n"); return 2;
        }
    }
    if (!url || nights < 1 || ncases < 1 || nsamples < 1 || machines < 1) {
        fprintf(stderr, "usage: synth_history --store URL [--nights N] [--cases N] [--seed S] [--samples N] [--noise FILE] [--machines N] [--planted FILE]\n");
        return 2;
    }
    double noise[4096];
    size_t nn = 0;
    FILE *nf = fopen(noise_file, "r");
    char line[256];
    while (nf && fgets(line, sizeof line, nf) && nn < 4096)
        if (line[0] != '#') noise[nn++] = strtod(line, NULL);
    if (nf) fclose(nf);
    if (!nn) noise[nn++] = 0.05;
    char err[1024];
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err)) { fprintf(stderr, "synth_history: %s\n", err); return 7; }
    FILE *pf = planted ? fopen(planted, "w") : NULL;
    double *x = malloc((size_t)nsamples * sizeof *x);
    long nstep = 0, ndrift = 0;
    for (long mach = 0; mach < machines; mach++) {
        rng = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)mach + 1;
        /* per case: base, noise, planted change */
        double *base = malloc((size_t)ncases * sizeof *base), *sd = malloc((size_t)ncases * sizeof *sd);
        long *kind = malloc((size_t)ncases * sizeof *kind), *at = malloc((size_t)ncases * sizeof *at);
        for (long k = 0; k < ncases; k++) {
            base[k] = 1e-5 * exp(6 * unif());
            sd[k] = noise[(size_t)(unif() * (double)nn) % nn];
            double u = unif();
            kind[k] = u < 0.01 ? 1 : u < 0.02 ? 2 : 0;
            at[k] = 10 + (long)(unif() * (double)(nights > 40 ? nights - 30 : 1));
            if (kind[k] && pf) fprintf(pf, "machine %ld case %ld %s night %ld\n", mach, k, kind[k] == 1 ? "step+5%" : "drift+1%/night*20", at[k]);
            nstep += kind[k] == 1;
            ndrift += kind[k] == 2;
        }
        if (hb_store_begin(s, err, sizeof err)) { fprintf(stderr, "synth_history: %s\n", err); return 7; }
        for (long night = 0; night < nights; night++) {
            hb_run r = { 0 };
            char id[96], date[64], host[64], commit[48];
            /* 2026-01-01 plus night days */
            int y = 2026, d = (int)night, mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }, mo = 0;
            while (d >= (mo == 1 && y % 4 == 0 ? 29 : mdays[mo])) { d -= mo == 1 && y % 4 == 0 ? 29 : mdays[mo]; if (++mo == 12) { mo = 0; y++; } }
            snprintf(date, sizeof date, "%04d-%02d-%02dT02:00:00Z", y, mo + 1, d + 1);
            snprintf(host, sizeof host, "runner-%08llx", (unsigned long long)(rng & 0xffffffff));
            snprintf(id, sizeof id, "%04d%02d%02d-020000-m%ld", y, mo + 1, d + 1, mach);
            snprintf(commit, sizeof commit, "%040lx", (unsigned long)(night * 7919 + 1));
            r.meta = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i}, s:s, s:{s:s}, s:i}", "type", "meta",
                               "run_id", id, "date", date, "git_commit", commit, "host", host, "cpu", "model",
                               mach ? "Synthetic CPU B" : "Synthetic CPU A", "sockets", 1, "cores", 16, "pus", 32,
                               "compiler", "gcc 12.2.0", "openblas", "config", "OpenBLAS 0.3.21", "schema", 1);
            r.backends = json_array();
            for (int b = 0; b < 2; b++)
                json_array_append_new(r.backends, json_pack("{s:s, s:s, s:b, s:s, s:i}", "type", "backend", "backend", backends[b],
                                                             "available", 1, "description", b ? "synthetic OpenCL device" : "synthetic CPU",
                                                             "schema", 1));
            r.cases = json_array();
            for (long k = 0; k < ncases; k++) {
                const char *op = ops[(k / 2) % 10], *be = backends[k % 2];
                char key[160], shape[64];
                snprintf(shape, sizeof shape, "n=%ld", 1024 * (k / 20 + 1));
                snprintf(key, sizeof key, "%s|%s|%s|f32|pageable|f32", op, shape, be);
                double lt = log(base[k]) + sd[k] * gauss();
                if (kind[k] == 1 && night >= at[k]) lt += log(1.05);
                if (kind[k] == 2 && night >= at[k]) lt += (double)(night - at[k] + 1 < 20 ? night - at[k] + 1 : 20) * log(1.01);
                double med = exp(lt);
                json_t *cr = json_pack("{s:s, s:s, s:s, s:s, s:{s:i}, s:s, s:i, s:s, s:s, s:s, s:s, s:f, s:f, s:s, s:s, s:b}",
                                      "type", "case", "key", key, "backend", be, "op", op, "shape", "n", 1024 * (k / 20 + 1),
                                      "shape_str", shape, "size", 1024 * (k / 20 + 1), "dtype", "f32", "mode", "f32", "route",
                                      "pageable", "bound", "memory", "flops", 1024.0 * (double)(k / 20 + 1),
                                      "bytes", 12288.0 * (double)(k / 20 + 1), "family", "synthetic", "status", "ok",
                                      "ci_met", unif() < 0.85);
                json_t *ph = json_object(), *smp = json_object();
                for (int m = 0; m < 2; m++) {
                    double scale = m ? 0.7 : 1.0;
                    json_t *a = json_array();
                    for (long i = 0; i < nsamples; i++) {
                        x[i] = med * scale * exp(0.03 * gauss());
                        json_array_append_new(a, json_real((double)(float)x[i]));
                        x[i] = (double)(float)x[i];
                    }
                    hb_stats st;
                    hb_stats_compute(x, (size_t)nsamples, &st);
                    json_object_set_new(ph, m ? "compute" : "total", hb_stats_json(&st));
                    json_object_set_new(smp, m ? "compute" : "total", a);
                }
                json_object_set_new(cr, "phases", ph);
                json_object_set_new(cr, "samples", smp);
                json_object_set_new(cr, "schema", json_integer(1));
                json_array_append_new(r.cases, cr);
            }
            r.end = json_pack("{s:s, s:i}", "type", "end", "schema", 1);
            int dup;
            if (hb_store_import(s, &r, &dup, err, sizeof err)) { fprintf(stderr, "synth_history: %s\n", err); return 7; }
            hb_run_free(&r);
            if (night % 30 == 29) {
                if (hb_store_commit(s, err, sizeof err) || hb_store_begin(s, err, sizeof err)) {
                    fprintf(stderr, "synth_history: %s\n", err);
                    return 7;
                }
            }
        }
        if (hb_store_commit(s, err, sizeof err)) { fprintf(stderr, "synth_history: %s\n", err); return 7; }
        free(base); free(sd); free(kind); free(at);
    }
    free(x);
    if (pf) fclose(pf);
    hb_store_close(s);
    printf("synth_history: %s: %ld machine(s) x %ld nights x %ld cases, %ld samples each; planted %ld steps of +5%%, "
           "%ld drifts of +1%%/night over 20 nights (seed %ld, noise from %s, %zu values)\n",
           url, machines, nights, ncases, nsamples, nstep, ndrift, seed, noise_file, nn);
    return 0;
}
