/*
 * meta.c - the run's metadata record (host, CPU topology from hwloc, OpenBLAS, compiler, git commit,
 * clock check) filled into its struct (results/record.h hb_rec_meta; results/write.c writes it), the
 * backend records, deterministic random inputs and peak-RSS accounting.
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

/* M: member m of the meta record's struct *m (a member of one of its objects too: cpu.model) set to v
 * and put (results/record.h HB_REC_SET); st keeps the first failure. */
#define M(m_, v) (st = st ? st : HB_REC_SET(hb_rec_meta, m, m_, v))

/* The host's CPU topology from hwloc into m->cpu (absent on entry); the model string copied into
 * model[0..len). Leaves cpu absent when hwloc cannot load the topology. HB_OK or HB_ENOMEM. */
static hb_status cpu_fill(hb_rec_meta *m, char *model, size_t len)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t)) return HB_OK;
    if (hwloc_topology_load(t)) { hwloc_topology_destroy(t); return HB_OK; }
    hb_status st = HB_OK;
    hwloc_obj_t root = hwloc_get_root_obj(t);
    const char *cm = hwloc_obj_get_info_by_name(root, "CPUModel");
    if (!cm) {
        hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
        if (pkg) cm = hwloc_obj_get_info_by_name(pkg, "CPUModel");
    }
    snprintf(model, len, "%s", cm ? cm : "unknown");
    M(cpu.model, model);
    M(cpu.sockets, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE));
    M(cpu.cores, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE));
    M(cpu.pus, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
    M(cpu.numa_nodes, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE));
    static const hwloc_obj_type_t caches[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE};
    double bytes[3];
    for (int i = 0; i < 3; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t, caches[i], 0);
        bytes[i] = o && o->attr ? (double)o->attr->cache.size : 0;
    }
    M(cpu.l1d_bytes, bytes[0]);
    M(cpu.l2_bytes, bytes[1]);
    M(cpu.l3_bytes, bytes[2]);
    hwloc_topology_destroy(t);
    return st;
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

/* The thread runtime into m->threads (absent on entry): OpenMP's settings, the BLAS build's threading
 * model and every OPENBLAS_*, OMP_*, GOMP_*, GOTO_* and KMP_* variable of the environment (they change
 * what the BLAS runs: these VMs set OPENBLAS_CORETYPE=Haswell on AVX-512 CPUs), as a new JSON object
 * in *env (the caller's, m->threads.env points to it). "one_runtime" is true when OpenBLAS was built with
 * OpenMP (openblas_get_parallel() == 2), i.e. it shares hybench's OpenMP pool. HB_OK or HB_ENOMEM. */
static hb_status threads_fill(hb_rec_meta *m, json_t **env)
{
    static const char *const kinds[] = {"sequential", "pthreads", "openmp"};
    int par = openblas_get_parallel();
    if (!(*env = json_object())) return HB_ENOMEM;
    for (char **e = environ; e && *e; e++) {
        static const char *const pre[] = {"OPENBLAS_", "OMP_", "GOMP_", "GOTO_", "KMP_"};
        for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
            size_t l = strlen(pre[i]);
            const char *eq = strchr(*e, '=');
            if (eq && !strncmp(*e, pre[i], l)) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
                json_object_set_new(*env, name, json_string(eq + 1));
                break;
            }
        }
    }
    omp_proc_bind_t pb = omp_get_proc_bind();
    static const char *const binds[] = {"false", "true", "master", "close", "spread"};
    hb_status st = HB_OK;
    M(threads.runtime, "OpenMP (libgomp)");
    M(threads.blas_threading, par >= 0 && par <= 2 ? kinds[par] : "unknown");
    M(threads.one_runtime, par == 2);
    M(threads.omp_max_threads, omp_get_max_threads());
    M(threads.omp_num_procs, omp_get_num_procs());
    M(threads.omp_proc_bind, (int)pb >= 0 && (int)pb <= 4 ? binds[pb] : "other");
    M(threads.blas_threads, openblas_get_num_threads());
    M(threads.env, *env);
    return st;
}

/* The run's options into m->options (absent on entry); options.workloads' array is the struct's, its
 * strings borrowed from workloads. HB_OK or HB_ENOMEM. */
static hb_status options_fill(hb_rec_meta *m, const hb_options *o, char **workloads, int nworkloads)
{
    hb_status st = HB_OK;
    M(options.budget_s, o->budget_s);
    M(options.ci_target, o->ci_target);
    M(options.min_samples, o->min_samples);
    M(options.max_samples, o->max_samples);
    M(options.quick, o->quick != 0);
    M(options.verify_only, o->verify_only != 0);
    M(options.cold, o->cold != 0);
    size_t n = nworkloads > 0 ? (size_t)nworkloads : 0;
    const char **wl = n ? malloc(n * sizeof *wl) : NULL;
    if (n && !wl) return HB_ENOMEM;
    for (size_t i = 0; i < n; i++) wl[i] = workloads[i];
    if (st) { free(wl); return st; }
    M(options.workloads, ((hb_rec_strs){wl, n, 1})); /* assigned (st was HB_OK): the struct owns wl from here */
    M(options.seed, (long long)o->seed);
    M(options.passes, o->passes);
    M(options.repetitions, o->repetitions);
    if (o->cases_from) M(options.cases_from, o->cases_from); /* a subset of the cases by key (hybench ab's later rounds) */
    if (o->instr_calls) M(options.instructions, o->instr_calls); /* calls counted per case by callgrind (instr.h) */
    if (o->ref_cache && *o->ref_cache) M(options.ref_cache, o->ref_cache); /* the f64 references' cache (refcache.h) */
    if (o->algo_cache && *o->algo_cache) M(options.algo_cache, o->algo_cache); /* the CUDA plugin's choices' cache */
    return st;
}

hb_status hb_meta_fill(hb_meta *mi, const hb_options *o, const char *run_id, char **workloads, int nworkloads)
{
    memset(mi, 0, sizeof *mi);
    hb_rec_meta *m = &mi->rec;
    hb_rec_clear(&hb_rec_meta_table, m);
    snprintf(mi->host, sizeof mi->host, "unknown");
    gethostname(mi->host, sizeof mi->host);
    mi->host[sizeof mi->host - 1] = 0;
    time_t now = time(NULL);
    strftime(mi->date, sizeof mi->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    git_commit(mi->commit, sizeof mi->commit);
    struct utsname u;
    uname(&u);
    snprintf(mi->os, sizeof mi->os, "%s %s %s", u.sysname, u.release, u.machine);
    struct sysinfo si;
    sysinfo(&si);
    double res_ns, ovh_ns;
    hb_clock_check(&res_ns, &ovh_ns);
    hb_status st = HB_OK;
    M(type, "meta");
    M(run_id, run_id);
    M(tool, "hybench");
    M(tool_version, HB_VERSION);
    M(date, mi->date);
    M(command_line, o->argv_joined ? o->argv_joined : "");
    M(git_commit, mi->commit);
    M(host, mi->host);
    if (!st) st = cpu_fill(m, mi->cpu_model, sizeof mi->cpu_model);
    M(memory_bytes, (double)si.totalram * (double)si.mem_unit);
    M(os, mi->os);
    double load[3];
    if (!st && getloadavg(load, 3) == 3) { /* a busy machine makes noisy samples: compare shows it */
        st = hb_rec_nums_set(&m->load_avg, load, 3);
        if (!st) st = hb_rec_put(&hb_rec_meta_table, m, offsetof(hb_rec_meta, load_avg));
    }
#ifdef __VERSION__
    M(compiler, "gcc " __VERSION__);
#endif
    M(cflags, HB_CFLAGS);
    M(openblas.config, openblas_get_config());
    M(openblas.corename, openblas_get_corename());
    if (!st) st = threads_fill(m, &mi->env);
    if (!st && m->threads.one_runtime != 1)
        fprintf(stderr, "hybench: warning: OpenBLAS is not the OpenMP build (threading: %s): its threads and "
                        "hybench's OpenMP threads compete for the cores and compute times depend on the mode "
                        "(install libopenblas-openmp-dev and rebuild)\n",
                m->threads.blas_threading);
    if (!st) st = options_fill(m, o, workloads, nworkloads);
    /* this process's place in a multi-process launch (core/launch.h): hb_ranks_merge (results/ranks.h)
     * reads it to tell which file is which rank */
    M(launch.rank, hb_launch_rank());
    M(launch.ranks, hb_launch_ranks());
    M(launch.local_rank, hb_launch_local_rank());
    M(clock.name, "CLOCK_MONOTONIC");
    M(clock.resolution_ns, res_ns);
    M(clock.overhead_ns, ovh_ns);
    /* probe vs kernel vs perf: clockprobe.c */
    if (!st) st = hb_clock_selfcheck(&m->host_clock, &mi->clock, mi->clock_why, sizeof mi->clock_why);
    if (!st) st = hb_rec_put(&hb_rec_meta_table, m, offsetof(hb_rec_meta, host_clock));
    if (st) hb_meta_release(mi);
    return st;
}

void hb_meta_release(hb_meta *mi)
{
    if (!mi) return;
    hb_rec_release(&hb_rec_meta_table, &mi->rec);
    json_decref(mi->env);
    mi->env = NULL;
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
