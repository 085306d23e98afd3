/*
 * meta.c - the run's metadata record (host, CPU topology from hwloc, OpenBLAS, compiler, git commit,
 * clock check), result-record writing, deterministic random inputs and peak-RSS accounting.
 */
#include "core/launch.h"
#include "measure/measure.h"
#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* OpenBLAS extensions (declared in its cblas.h on Debian; repeated here in case of another header). */
char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);
extern char **environ;

#ifndef HB_CFLAGS
#define HB_CFLAGS "unknown"
#endif
#ifndef HB_GIT_COMMIT
#define HB_GIT_COMMIT "unknown"
#endif

static json_t *cpu_json(void)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) || hwloc_topology_load(t)) return json_null();
    json_t *o = json_object();
    hwloc_obj_t root = hwloc_get_root_obj(t);
    const char *model = hwloc_obj_get_info_by_name(root, "CPUModel");
    if (!model) {
        hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
        if (pkg) model = hwloc_obj_get_info_by_name(pkg, "CPUModel");
    }
    json_object_set_new(o, "model", json_string(model ? model : "unknown"));
    json_object_set_new(o, "sockets", json_integer(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE)));
    json_object_set_new(o, "cores", json_integer(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE)));
    json_object_set_new(o, "pus", json_integer(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU)));
    json_object_set_new(o, "numa_nodes", json_integer(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE)));
    static const struct { hwloc_obj_type_t ty; const char *key; } caches[] = {
        {HWLOC_OBJ_L1CACHE, "l1d_bytes"}, {HWLOC_OBJ_L2CACHE, "l2_bytes"}, {HWLOC_OBJ_L3CACHE, "l3_bytes"}};
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, caches[i].ty, 0);
        json_object_set_new(o, caches[i].key, json_integer(c && c->attr ? (json_int_t)c->attr->cache.size : 0));
    }
    hwloc_topology_destroy(t);
    return o;
}

/* The commit the binary was built from (HB_GIT_COMMIT, set by the Makefile). Only a build without
 * one asks git in the working directory, which may be another checkout than the binary's (a bundle
 * run on the GPU machine recorded the commit of the tree it ran in, not the one it was built from). */
static void git_commit(char *buf, size_t len)
{
    snprintf(buf, len, "%s", HB_GIT_COMMIT);
    if (strcmp(HB_GIT_COMMIT, "unknown") != 0) return;
    FILE *p = popen("git rev-parse HEAD 2>/dev/null", "r");
    if (!p) return;
    char line[128];
    if (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (strlen(line) >= 7) snprintf(buf, len, "%s", line);
    }
    pclose(p);
}

/* The thread runtime: OpenMP's settings, the BLAS build's threading model and every OPENBLAS_*,
 * OMP_*, GOMP_*, GOTO_* and KMP_* variable of the environment (they change what the BLAS runs: these
 * VMs set OPENBLAS_CORETYPE=Haswell on AVX-512 CPUs). "one_runtime" is true when OpenBLAS was built
 * with OpenMP (openblas_get_parallel() == 2), i.e. it shares hybench's OpenMP pool. */
json_t *hb_threads_json(void)
{
    static const char *const kinds[] = {"sequential", "pthreads", "openmp"};
    int par = openblas_get_parallel();
    json_t *env = json_object();
    for (char **e = environ; e && *e; e++) {
        static const char *const pre[] = {"OPENBLAS_", "OMP_", "GOMP_", "GOTO_", "KMP_"};
        for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
            size_t l = strlen(pre[i]);
            const char *eq = strchr(*e, '=');
            if (eq && !strncmp(*e, pre[i], l)) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
                json_object_set_new(env, name, json_string(eq + 1));
                break;
            }
        }
    }
    omp_proc_bind_t pb = omp_get_proc_bind();
    static const char *const binds[] = {"false", "true", "master", "close", "spread"};
    return json_pack("{s:s,s:s,s:b,s:i,s:i,s:s,s:i,s:o}", "runtime", "OpenMP (libgomp)", "blas_threading",
                     par >= 0 && par <= 2 ? kinds[par] : "unknown", "one_runtime", par == 2, "omp_max_threads",
                     omp_get_max_threads(), "omp_num_procs", omp_get_num_procs(), "omp_proc_bind",
                     (int)pb >= 0 && (int)pb <= 4 ? binds[pb] : "other", "blas_threads", openblas_get_num_threads(),
                     "env", env);
}

json_t *hb_meta_record(const hb_options *o, const char *run_id, char **workloads, int nworkloads)
{
    json_t *m = json_object();
    char host[256] = "unknown", date[64], commit[128];
    gethostname(host, sizeof host);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    git_commit(commit, sizeof commit);
    struct utsname u;
    uname(&u);
    char os[400];
    snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    struct sysinfo si;
    sysinfo(&si);
    double res_ns, ovh_ns;
    hb_clock_check(&res_ns, &ovh_ns);
    json_t *wl = json_array();
    for (int i = 0; i < nworkloads; i++) json_array_append_new(wl, json_string(workloads[i]));
    json_object_set_new(m, "type", json_string("meta"));
    json_object_set_new(m, "run_id", json_string(run_id));
    json_object_set_new(m, "tool", json_string("hybench"));
    json_object_set_new(m, "tool_version", json_string(HB_VERSION));
    json_object_set_new(m, "date", json_string(date));
    json_object_set_new(m, "command_line", json_string(o->argv_joined ? o->argv_joined : ""));
    json_object_set_new(m, "git_commit", json_string(commit));
    json_object_set_new(m, "host", json_string(host));
    json_object_set_new(m, "cpu", cpu_json());
    json_object_set_new(m, "memory_bytes", json_integer((json_int_t)si.totalram * (json_int_t)si.mem_unit));
    json_object_set_new(m, "os", json_string(os));
    double load[3];
    if (getloadavg(load, 3) == 3)  /* a busy machine makes noisy samples: compare shows it */
        json_object_set_new(m, "load_avg", json_pack("[f,f,f]", load[0], load[1], load[2]));
#ifdef __VERSION__
    json_object_set_new(m, "compiler", json_string("gcc " __VERSION__));
#endif
    json_object_set_new(m, "cflags", json_string(HB_CFLAGS));
    json_object_set_new(m, "openblas", json_pack("{s:s,s:s}", "config", openblas_get_config(), "corename",
                                                 openblas_get_corename()));
    json_t *thr = hb_threads_json();
    if (!json_is_true(json_object_get(thr, "one_runtime")))
        fprintf(stderr, "hybench: warning: OpenBLAS is not the OpenMP build (threading: %s): its threads and "
                        "hybench's OpenMP threads compete for the cores and compute times depend on the mode "
                        "(install libopenblas-openmp-dev and rebuild)\n",
                json_string_value(json_object_get(thr, "blas_threading")));
    json_object_set_new(m, "threads", thr);
    json_object_set_new(m, "options",
                        json_pack("{s:f,s:f,s:i,s:i,s:b,s:b,s:b,s:o,s:I,s:i,s:i}", "budget_s", o->budget_s, "ci_target",
                                  o->ci_target, "min_samples", o->min_samples, "max_samples", o->max_samples,
                                  "quick", o->quick, "verify_only", o->verify_only, "cold", o->cold, "workloads", wl,
                                  "seed", (json_int_t)o->seed, "passes", o->passes, "repetitions", o->repetitions));
    if (o->cases_from) /* a subset of the cases by key (hybench ab's later rounds; ab.c reads it) */
        json_object_set_new(json_object_get(m, "options"), "cases_from", json_string(o->cases_from));
    if (o->instr_calls) /* calls counted per case by callgrind (instr.h) */
        json_object_set_new(json_object_get(m, "options"), "instructions", json_integer(o->instr_calls));
    if (o->ref_cache && *o->ref_cache) /* the f64 references' on-disk cache (refcache.h) */
        json_object_set_new(json_object_get(m, "options"), "ref_cache", json_string(o->ref_cache));
    if (o->algo_cache && *o->algo_cache) /* the CUDA plugin's algorithm choices' cache (HB_ALGO_CACHE) */
        json_object_set_new(json_object_get(m, "options"), "algo_cache", json_string(o->algo_cache));
    /* this process's place in a multi-process launch (core/launch.h): hb_ranks_merge (results/ranks.h)
     * reads it to tell which file is which rank */
    json_object_set_new(m, "launch", json_pack("{s:i,s:i,s:i}", "rank", hb_launch_rank(), "ranks", hb_launch_ranks(),
                                               "local_rank", hb_launch_local_rank()));
    json_object_set_new(m, "clock", json_pack("{s:s,s:f,s:f}", "name", "CLOCK_MONOTONIC", "resolution_ns", res_ns,
                                              "overhead_ns", ovh_ns));
    json_object_set_new(m, "host_clock", hb_clock_selfcheck_json()); /* probe vs kernel vs perf: clockprobe.c */
    return m;
}

/* splitmix64 (Steele, Lea, Flood 2014): a well-mixed 64-bit stream from any seed. */
static unsigned long long splitmix64(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void hb_fill_random(double *x, size_t n, unsigned long long seed, unsigned long long stream)
{
    /* chunked so that it can run in parallel and stay deterministic */
    const size_t chunk = 1 << 16;
    long nchunks = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (long c = 0; c < nchunks; c++) {
        unsigned long long s = seed * 0x2545F4914F6CDD1DULL + stream * 0x9E3779B97F4A7C15ULL + (unsigned long long)c;
        size_t end = ((size_t)c + 1) * chunk < n ? ((size_t)c + 1) * chunk : n;
        for (size_t i = (size_t)c * chunk; i < end; i++) {
            /* 24 random bits -> (0, 1] scaled to [-1, 1] with a gap around 0: never zero, exact in f32 */
            unsigned long long r = splitmix64(&s) >> 40;
            float v = (float)((double)(r + 1) / 16777216.0);  /* (0, 1] */
            v = 2.0f * v - 1.0f;
            if (fabsf(v) < 1e-3f) v = v < 0 ? -1e-3f : 1e-3f;
            x[i] = (double)v;
        }
    }
}

void hb_rss_reset(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, "5", 1) < 0) { /* older kernels: peak stays process-wide */ }
        close(fd);
    }
}

/* A "Vm...:" field of /proc/self/status (kB) in bytes, or -1. */
static long long status_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    size_t fl = strlen(field);
    long long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, fl)) { kb = atoll(line + fl); break; }
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

long long hb_rss_peak(void) { return status_bytes("VmHWM:"); }
long long hb_rss_now(void) { return status_bytes("VmRSS:"); }

json_t *hb_backend_record(hb_instance *inst, const hb_ceiling *cl, int ncl)
{
    hb_rec_backend b;
    json_t *info = NULL, *out = NULL;
    memset(&b, 0, sizeof b);
    hb_rec_clear(&hb_rec_backend_table, &b);
    hb_status st = HB_OK;
#define SET(m, x) (st = st ? st : HB_REC_SET(hb_rec_backend, &b, m, x))
    SET(type, "backend");
    SET(backend, inst->name);
    SET(available, 1);
    SET(description, inst->description);
    SET(host_memory, inst->host_memory != 0);
    SET(omp_wait.policy, getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "unset");
    SET(omp_wait.spincount, getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "unset (libgomp: 300000)");
    if (inst->ops->describe) {
        char buf[8192];
        if (inst->ops->describe(inst, buf, sizeof buf) == HB_OK && (info = json_loads(buf, 0, NULL))) SET(info_json, info);
    }
    if (cl) {
        if (ncl > 0 && !(b.ceilings = calloc((size_t)ncl, sizeof *b.ceilings))) st = HB_ENOMEM;
        for (int k = 0; !st && k < ncl; k++) {
            hb_rec_ceiling *c = &b.ceilings[b.nceilings++];
            hb_rec_clear(&hb_rec_ceiling_table, c);
            st = HB_REC_SET(hb_rec_ceiling, c, name, cl[k].name);
            if (!st) st = HB_REC_SET(hb_rec_ceiling, c, value, cl[k].value);
            if (!st) st = HB_REC_SET(hb_rec_ceiling, c, unit, cl[k].unit);
            if (!st) st = HB_REC_SET(hb_rec_ceiling, c, how, cl[k].how);
        }
        if (!st) st = hb_rec_put(&hb_rec_backend_table, &b, offsetof(hb_rec_backend, ceilings));
    }
#undef SET
    if (!st) out = hb_rec_backend_json(&b);
    hb_rec_backend_free(&b);
    json_decref(info);
    return out;
}

json_t *hb_backend_record_unavailable(const char *type, const char *reason)
{
    hb_rec_backend b;
    json_t *out = NULL;
    memset(&b, 0, sizeof b);
    hb_rec_clear(&hb_rec_backend_table, &b);
    if (!HB_REC_SET(hb_rec_backend, &b, type, "backend") && !HB_REC_SET(hb_rec_backend, &b, backend, type) &&
        !HB_REC_SET(hb_rec_backend, &b, available, 0) && !HB_REC_SET(hb_rec_backend, &b, reason, reason))
        out = hb_rec_backend_json(&b);
    hb_rec_backend_free(&b);
    return out;
}
