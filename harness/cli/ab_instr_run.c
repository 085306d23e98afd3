/* ab_instr_run.c - `hybench ab --instructions`: rounds under callgrind and their table (ab_instr_run.h). */
#include "cli/ab_instr_run.h"
#include "analysis/ab_instr.h"
#include "core/stats.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The environment of a run under callgrind: dispatch that valgrind can run (it has no AVX-512: every
 * library's run-time choice capped at AVX2), one thread that sleeps rather than spins, and the cpu
 * backend's choices by timing (matmul/bmm: OpenBLAS or oneDNN; conv2d: own or oneDNN) fixed, since
 * timings under valgrind mean nothing and a choice that differed between the builds would move the
 * count by far more than a regression. */
char *const hb_ab_vg_env[] = {(char *)"OPENBLAS_CORETYPE=Haswell", (char *)"HB_CPU_ISA=avx2",
                               (char *)"OMP_WAIT_POLICY=passive", (char *)"DNNL_MAX_CPU_ISA=AVX2",
                               (char *)"HB_CPU_GEMM=openblas", (char *)"HB_CPU_CONV=own"};
#define NVG_ENV (int)(sizeof hb_ab_vg_env / sizeof *hb_ab_vg_env)
const int hb_ab_nvg_env = NVG_ENV;

static int has_option(char **fwd, int nfwd, const char *opt)
{
    for (int i = 0; i < nfwd; i++)
        if (!strcmp(fwd[i], opt)) return 1;
    return 0;
}

/* One build's run: wrapped in wrap (NULL: natively) with env[nenv]; its exit status is reported. */
static int one_run(const char *exe, char **fwd, int nfwd, const char *ceilf, const char *path, const char *log,
                   const hb_ab_noise *no, char **env, int nenv, const char *what)
{
    double secs = 0;
    int x = hb_ab_run_build(exe, fwd, nfwd, ceilf, path, log, no, env, nenv, &secs);
    fprintf(stderr, "hybench ab --instructions: %s: exit %d, %.1f s\n", what, x, secs);
    /* wrong (5) and failed cases (8) still count: their records tell; anything else stops the gate */
    if (x != HB_EXIT_OK && x != HB_EXIT_WRONG && x != HB_EXIT_FAILED) {
        fprintf(stderr, "hybench ab --instructions: %s could not run its cases (exit %d): see %s\n", what, x, log);
        return -1;
    }
    return 0;
}

/* key to f, each | escaped for a Markdown table cell. */
static void put_key(FILE *f, const char *key)
{
    for (const char *k = key; *k; k++) {
        if (*k == '|') fputc('\\', f);
        fputc(*k, f);
    }
}

static void write_table(FILE *f, const hb_instr_case *c, size_t n, const hb_ab_instr_opts *o, int rounds, size_t uncounted,
                        double secs, const char *verdict)
{
    fprintf(f, "# hybench ab --instructions: %s\n\n", verdict);
    fprintf(f, "Measure: instructions per timed call (callgrind, %d calls per case, %d round%s per build); a case is "
               "flagged when its count rises by more than %.2f%% and its repeat spread is below that (docs/compare.md, "
               "\"Instruction counts\"). %.0f s.\n\n", o->calls, rounds, rounds == 1 ? "" : "s", 100 * o->threshold, secs);
    size_t cnt[5] = {0};
    for (size_t i = 0; i < n; i++) cnt[c[i].verdict]++;
    fprintf(f, "| verdict | cases |\n| --- | --- |\n");
    for (int v = 0; v < 5; v++) fprintf(f, "| %s | %zu |\n", hb_instr_verdict_name((hb_instr_verdict)v), cnt[v]);
    if (uncounted) fprintf(f, "| not counted (no instruction count: a device backend, or not ok) | %zu |\n", uncounted);
    fprintf(f, "\n| case | BASE instr/call | CUR instr/call | ratio | spread | verdict | flagged by |\n"
               "| --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < n; i++) {
        const hb_instr_case *x = &c[i];
        int flagged = x->verdict == HB_INSTR_REGRESSION || x->verdict == HB_INSTR_IMPROVEMENT;
        fputs("| ", f);
        put_key(f, x->key);
        fprintf(f, " | %.0f | %.0f | %.4f | %.2g%% | %s | %s |\n", x->med_base, x->med_cur, x->ratio,
                100 * x->spread, hb_instr_verdict_name(x->verdict), flagged ? "instructions" : "-");
    }
}

int hb_ab_instructions(const char *const exe[2], char **fwd, int nfwd, const hb_ab_noise *no, char **cur_env, int ncur,
                       const char *dir, const hb_ab_instr_opts *o, hb_instr_case **keep, size_t *nkeep)
{
    if (keep) *keep = NULL, *nkeep = 0;
    if (system("valgrind --version > /dev/null 2>&1") != 0) {
        fprintf(stderr, "hybench ab --instructions: valgrind is not installed (Debian package valgrind; "
                        "tools/install_deps.sh installs it)\n");
        return HB_EXIT_NO_PACKAGE;
    }
    double t0 = hb_now();
    char cgdir[1200], refdir[1200], ceilf[1200], calls[16];
    snprintf(cgdir, sizeof cgdir, "%s/callgrind", dir);
    snprintf(refdir, sizeof refdir, "%s/refcache", dir);
    snprintf(ceilf, sizeof ceilf, "%s/ceilings.jsonl", dir);
    snprintf(calls, sizeof calls, "%d", o->calls);
    if ((mkdir(cgdir, 0755) && errno != EEXIST) || (mkdir(refdir, 0755) && errno != EEXIST)) {
        fprintf(stderr, "hybench ab --instructions: cannot create %s: %s\n", cgdir, strerror(errno));
        return HB_EXIT_IO;
    }
    /* the run options: the caller's, the host backends unless named, one sample (its time is no measure here) */
    char *av[AB_MAX_FWD];
    int n = 0;
    for (int i = 0; i < nfwd && n < AB_MAX_FWD - 16; i++) av[n++] = fwd[i];
    if (!has_option(fwd, nfwd, "--backend")) { av[n++] = (char *)"--backend"; av[n++] = (char *)"cpu-ref,cpu"; }
    av[n++] = (char *)"--min-samples"; av[n++] = (char *)"1";
    av[n++] = (char *)"--max-samples"; av[n++] = (char *)"1";
    av[n++] = (char *)"--ref-cache"; av[n++] = refdir;
    int nnative = n;
    av[n++] = (char *)"--instructions"; av[n++] = calls;
    av[n++] = (char *)"--callgrind-dir"; av[n++] = cgdir;
    char outopt[1300];
    snprintf(outopt, sizeof outopt, "--callgrind-out-file=%s/cg.%%p", cgdir);
    char *wrap[] = {(char *)"valgrind", (char *)"--tool=callgrind", (char *)"--collect-atstart=no",
                    (char *)"--trace-children=yes", (char *)"-q", outopt, o->cache_sim ? (char *)"--cache-sim=yes" : NULL, NULL};
    hb_ab_noise vg = *no;
    vg.threads = 1;
    vg.wrap = wrap;
    char path[1300], log[1300];
    /* the ceilings and the references, natively, once */
    snprintf(path, sizeof path, "%s/rounds/base-i00.jsonl", dir);
    snprintf(log, sizeof log, "%s/rounds/base-i00.log", dir);
    if (one_run(exe[0], av, nnative, NULL, path, log, no, NULL, 0, "BASE, native (ceilings, references)")) return HB_EXIT_USAGE;
    const char *cf = hb_ab_copy_ceilings(path, ceilf) == 0 ? ceilf : NULL;
    char *env[2][NVG_ENV + 16];
    int nenv[2] = {0, 0};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NVG_ENV; i++) env[s][nenv[s]++] = hb_ab_vg_env[i];
    for (int i = 0; i < ncur && i < 16; i++) env[1][nenv[1]++] = cur_env[i];
    hb_run runs[2][16];
    const hb_run *rp[2][16];
    memset(runs, 0, sizeof runs);
    int rounds = 0, rc = HB_EXIT_OK;
    char err[1024];
    for (int r = 1; r <= o->rounds && r <= 16 && rc == HB_EXIT_OK; r++) {
        for (int s = 0; s < 2 && rc == HB_EXIT_OK; s++) {
            const char *nm = s ? "cur" : "base";
            char what[64];
            snprintf(path, sizeof path, "%s/rounds/%s-i%02d.jsonl", dir, nm, r);
            snprintf(log, sizeof log, "%s/rounds/%s-i%02d.log", dir, nm, r);
            snprintf(what, sizeof what, "round %d %s under callgrind", r, s ? "CUR" : "BASE");
            if (one_run(exe[s], av, n, cf, path, log, &vg, env[s], nenv[s], what)) { rc = HB_EXIT_USAGE; break; }
            if (hb_run_load(path, &runs[s][r - 1], err, sizeof err) != HB_OK ||
                hb_run_check_comparable(&runs[s][r - 1], path, err, sizeof err) != HB_OK) {
                fprintf(stderr, "hybench ab --instructions: %s\n", err);
                rc = HB_EXIT_INCOMPARABLE;
            }
            rp[s][r - 1] = &runs[s][r - 1];
        }
        if (rc == HB_EXIT_OK) rounds = r;
    }
    hb_instr_case *c = NULL;
    size_t nc = 0, uncounted = 0;
    if (rc == HB_EXIT_OK && hb_instr_gate(rp[0], rp[1], rounds, o->threshold, &c, &nc, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench ab --instructions: %s\n", err);
        rc = HB_EXIT_USAGE;
    }
    if (rc == HB_EXIT_OK) {
        size_t cnt[5] = {0};
        for (size_t i = 0; i < nc; i++) cnt[c[i].verdict]++;
        uncounted = json_array_size(runs[1][0].cases) > nc ? json_array_size(runs[1][0].cases) - nc : 0;
        const char *verdict = cnt[HB_INSTR_REGRESSION] ? "FAIL" : (cnt[HB_INSTR_NOISY] || cnt[HB_INSTR_MISSING] || !nc) ? "INCONCLUSIVE" : "PASS";
        rc = cnt[HB_INSTR_REGRESSION] ? HB_EXIT_REGRESSION : strcmp(verdict, "PASS") ? HB_EXIT_INCONCLUSIVE : HB_EXIT_OK;
        FILE *f = !o->markdown || !strcmp(o->markdown, "-") ? (o->quiet ? NULL : stdout) : fopen(o->markdown, "w");
        if (o->markdown && strcmp(o->markdown, "-") && !f) {
            fprintf(stderr, "hybench ab --instructions: --markdown %s: %s\n", o->markdown, strerror(errno));
            rc = HB_EXIT_IO;
        } else if (f) {
            write_table(f, c, nc, o, rounds, uncounted, hb_now() - t0, verdict);
            if (f != stdout && fclose(f)) rc = HB_EXIT_IO;
        }
        fprintf(stderr, "hybench ab --instructions: %s: %zu regression, %zu improvement, %zu unchanged, %zu noisy, %zu missing "
                "(%d rounds, %.0f s)\n", verdict, cnt[HB_INSTR_REGRESSION], cnt[HB_INSTR_IMPROVEMENT], cnt[HB_INSTR_UNCHANGED],
                cnt[HB_INSTR_NOISY], cnt[HB_INSTR_MISSING], rounds, hb_now() - t0);
    }
    if (keep && rc != HB_EXIT_USAGE && rc != HB_EXIT_INCOMPARABLE) *keep = c, *nkeep = nc, c = NULL;
    free(c);
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 16; r++) hb_run_free(&runs[s][r]);
    return rc;
}

/* The instruction case of key in ic[n] (sorted by key), or NULL. */
static const hb_instr_case *instr_find(const hb_instr_case *ic, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ic[i].key, key)) return &ic[i];
    return NULL;
}

void hb_ab_write_measures(FILE *f, const hb_cmp_result *res, const hb_instr_case *ic, size_t n)
{
    size_t t_only = 0, i_only = 0, both = 0;
    fprintf(f, "\n## Measures: time and instructions\n\n| case | time | instructions | flagged by |\n| --- | --- | --- | --- |\n");
    for (size_t i = 0; i < res->n; i++) {
        const hb_cmp_case *c = &res->cases[i];
        const hb_instr_case *x = instr_find(ic, n, c->key);
        int ft = c->verdict == HB_CMP_REGRESSION, fi = x && x->verdict == HB_INSTR_REGRESSION;
        if (!ft && !fi) continue;
        t_only += ft && !fi, i_only += fi && !ft, both += ft && fi;
        fputs("| ", f);
        put_key(f, c->key);
        fprintf(f, " | %s | %s | %s |\n", hb_cmp_verdict_name(c->verdict),
                x ? hb_instr_verdict_name(x->verdict) : "not judged", ft && fi ? "both" : ft ? "time" : "instructions");
    }
    for (size_t i = 0; i < n; i++) { /* counted, but not among the time gate's cases */
        int in_time = 0;
        for (size_t j = 0; j < res->n && !in_time; j++) in_time = !strcmp(res->cases[j].key, ic[i].key);
        if (in_time || ic[i].verdict != HB_INSTR_REGRESSION) continue;
        i_only++;
        fputs("| ", f);
        put_key(f, ic[i].key);
        fprintf(f, " | not judged | %s | instructions |\n", hb_instr_verdict_name(ic[i].verdict));
    }
    fprintf(f, "\nFlagged by time only: %zu; by instructions only: %zu; by both: %zu (the instruction table: "
               "instructions.md beside the rounds).\n", t_only, i_only, both);
}
