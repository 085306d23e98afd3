/*
 * measure.h - the measure layer's face: run options, the case list a run expands its workload items
 * into (cases.c), one call that measures them all (runner.c), and the run's metadata and host facts
 * (meta.c, clockprobe.h). `hybench run` and `hybench verify` (cli/cmd_run.c) use it. What the files
 * of measure/ share among themselves: internal.h.
 */
#ifndef HB_MEASURE_H
#define HB_MEASURE_H
#include <jansson.h>
#include <stdio.h>
#include "core/backend.h"
#include "results/results.h"
#include "core/stats.h"
#include "workload/item.h"

#define HB_MAX_REPETITIONS 16
#define HB_MAX_PASSES 9

typedef struct hb_options {
    const char *backends;      /* comma list of types/instances; NULL = every available one */
    const char *ops;           /* comma list of op names or families; NULL = all */
    unsigned mode_mask;        /* 0 = per item / default */
    unsigned route_mask;
    unsigned dtype_mask;
    unsigned quick_routes;     /* --quick: routes kept by default */
    const char *filter;        /* substring of the case key or name */
    int quick;
    int verify_only;           /* hybench verify: one poisoned run per case, no sampling */
    int dry_run;
    int cold;                  /* flush caches between samples (backend flush_cache hook) */
    int no_interleave;         /* measure the modes of a case one after another (child.c group_of) */
    double budget_s;           /* sampling budget per case (seconds) */
    double ci_target;          /* target half-width of the median's 95% CI, fraction of the median */
    int min_samples, max_samples;
    int repetitions;           /* sampling windows per case; the best one is kept */
    int passes;                /* passes over the whole case list, each in new processes; best kept */
    double ref_max_gflop;      /* cpu-ref is not timed above this many GFLOP per call */
    double case_timeout_s;     /* a case running longer is killed: timed_out */
    double energy_min_s;       /* --energy: minimum energy window per case in seconds (0: no energy
                                * measured; measure/energy.h) */
    unsigned long long seed;
    const char *out;           /* results path */
    const char *ceilings_from; /* --ceilings-from FILE: reuse the ceilings of FILE's backend records
                                  (same instance name) instead of measuring them; NULL: measure */
    const char *ref_cache;     /* --ref-cache DIR or HB_REF_CACHE: the f64 references kept on disk there
                                  (measure/refcache.h); NULL or "": computed in every process */
    const char *algo_cache;    /* --algo-cache DIR or HB_ALGO_CACHE: the CUDA plugin's algorithm choices
                                  kept on disk there (the plugin reads HB_ALGO_CACHE, which cmd_run.c sets;
                                  kernels/cuda/cuda_algocache.h); here only for the meta record */
    const char *cases_from;    /* --cases-from FILE: only the case keys listed there (hybench ab's later
                                  rounds: the cases not yet decided); NULL: every selected case */
    int serve_rounds;          /* --serve-rounds N: set up every case once, then measure them in up to N
                                  rounds, one results file each (measure/serve.h); 0: a plain run */
    const char *serve_cases;   /* --serve-cases FILE: the case keys a round runs when the controller says
                                  so (lockstep.h HB_LOCKSTEP_CASES); NULL: every round runs every case */
    int instr_calls;           /* --instructions N: calls counted by callgrind per case (measure/instr.h); 0 off */
    const char *callgrind_dir; /* --callgrind-dir DIR: where callgrind writes this process's dumps (cg.PID.k) */
    char *argv_joined;         /* for the metadata record */
    int argc;                  /* the subcommand's arguments, argv[0] = "run" or "verify": a backend */
    char **argv;               /* child that needs another OpenMP wait policy re-executes with them */
} hb_options;

/* ---- the cases of a run (cases.c) ---- */
typedef struct hb_case_list {
    hb_case *v;
    int *item;      /* index of the workload item each case came from (reference cache key) */
    unsigned char *host_route; /* 1 where the case's route is its item's first requested route: a
                                * host-memory backend (one route: its own memory) runs that one */
    const hb_item_list *items;
    char **keys;    /* --cases-from: the full case keys to run (op|shape|instance|mode|route|dtype),
                     * sorted, owned by the list; NULL: every case (hb_case_list_free frees them) */
    size_t nkeys;
    size_t n, cap;
} hb_case_list;
/* Expand workload items into cases (items outermost so that one reference serves all variants):
 * each item over its dtypes, modes and routes (the options' masks, else the item's, else the
 * defaults), kept when --op, --quick and --filter select it. 0, or -1 when out of memory. */
int hb_cases_expand(const hb_item_list *items, const hb_options *o, hb_case_list *out);
void hb_case_list_free(hb_case_list *l);
/* Read a --cases-from file into l->keys (sorted, duplicates removed): one full case key per line
 * as results records spell them ("matmul|m=1 n=2048 k=2048|opencl:0:0|f32|pageable|f32"); blank
 * lines and lines starting with '#' are skipped, a trailing "#N" (a repeated key's suffix in
 * hybench ab) is dropped. After hb_cases_expand: a key whose case (backend field aside) is not in l
 * is named on stderr and ignored. 0; -1 with the reason in err (file unreadable,
 * a line of 512 characters or more: "FILE:LINE: ...", no key at all, out of memory). */
int hb_cases_keys_load(const char *path, hb_case_list *l, char *err, size_t errlen);
/* 1 when case j of l runs on the instance named inst_name (always, without --cases-from);
 * host_memory: the instance's one route, recorded as pageable, is the key's route. */
int hb_case_listed(const hb_case_list *l, size_t j, const char *inst_name, int host_memory);
/* Whether instance inst runs case j of l at all (before its supports hook is asked): NULL, or why not, a
 * reason shared by a whole class of cases (a host-memory backend's resident mode or second route,
 * convert-device without the device conversion hooks, a key not listed by --cases-from). */
const char *hb_case_refusal(const hb_instance *inst, const hb_case_list *l, size_t j);
/* 1 when the comma list `list` names `name` exactly. */
int hb_list_has(const char *list, const char *name);

/* ---- the run (runner.c; the child processes: child.c) ---- */
typedef struct hb_run_totals {
    size_t cases;                 /* case records written (merged when there were passes) */
    int counts[HB_STATUS_COUNT];  /* their statuses */
    double elapsed_s;
    int passes;                   /* passes run */
    int interrupted;              /* SIGINT/SIGTERM stopped the run */
    int unavailable_named;        /* a backend named by --backend was unavailable */
    int child_failures;           /* backend processes that died outside a case (message on stderr) */
} hb_run_totals;
/* Measure every case of `cases` on every selected backend, o->passes times (each pass in new
 * processes), appending every record to *fd (the results file `path`, opened O_APPEND, locked and
 * holding the meta record) as it is measured; a pass after the first is merged into the file at its
 * end (merge.c: the merged file is written beside it and renamed over it, *fd then names the new
 * file, locked). Then the mode_check records (not for verify) and the end record are appended. cmd
 * ("run" or "verify") prefixes the progress lines on stderr. SIGINT/SIGTERM stop it after the case
 * in flight. Returns 0, or HB_EXIT_IO (a write failed: the message names the file and the error);
 * *t gets the totals. */
int hb_measure_run(const hb_options *o, const hb_case_list *cases, int *fd, const char *path, const char *cmd,
                   hb_run_totals *t);
/* The child side of a re-executed backend process (see child.c, "OpenMP wait policy"): when the
 * environment holds HB_CHILD (set by the parent run before it re-executed this process with the same
 * arguments), run that backend's part of the case list exactly as a forked child would and return
 * its exit status; the caller exits with it. Returns -1 when HB_CHILD is absent (a normal run). */
int hb_measure_child_from_env(const hb_options *o, const hb_case_list *cases);

/* ---- the run's metadata and host facts (meta.c) ---- */
#include "measure/clockprobe.h"
/* The "meta" record of this run (docs/results-schema.md) as its struct (results/record.h hb_rec_meta),
 * whose strings point into the buffers beside it (and into o, run_id and workloads, which must outlive
 * it). hb_meta_fill fills rec: type, run_id, tool, tool_version, date (UTC, ISO 8601), command_line,
 * git_commit, host, cpu (hwloc: counts, cache bytes), memory_bytes, os, load_avg (1/5/15 min), compiler,
 * cflags, openblas, threads (OpenMP and the BLAS's threading, the thread environment), options, launch
 * (core/launch.h), clock (CLOCK_MONOTONIC's resolution and reading overhead, ns) and host_clock
 * (clockprobe.h hb_clock_selfcheck). It warns on stderr when OpenBLAS is not the OpenMP build. The
 * caller may put more (HB_REC_SET(hb_rec_meta, &mi.rec, serve.round, r), replay_of), writes it with
 * hb_record_write(fd, hb_rec_meta_json(&mi.rec)) and frees it with hb_meta_release. HB_OK, or
 * HB_ENOMEM (mi released). */
typedef struct hb_meta {
    hb_rec_meta rec;
    char host[256], date[64], commit[128], os[400], cpu_model[256], clock_why[400];
    hb_clock_reading clock;           /* the clock self-check's reading: rec.host_clock.kernel_source points into it */
    json_t *env;                      /* rec.threads.env, owned */
} hb_meta;
hb_status hb_meta_fill(hb_meta *mi, const hb_options *o, const char *run_id, char **workloads, int nworkloads);
/* Frees what hb_meta_fill allocated (the struct's arrays, the environment object). NULL is a no-op. */
void hb_meta_release(hb_meta *mi);
/* Timer agreement of a device case (docs/measurement.md, "Self-checks"): the host monotonic clock and
 * the device's events time the same compute. host_s, device_s: their medians in seconds; enqueue_s:
 * the backend's host-side time spent before its device work started (NaN when it does not report one).
 * Fills t (results/record.h hb_rec_timer, absent members on entry; each member put, in this order):
 * host_s, device_s, diff = host/device - 1, agree = |diff| <= HB_TIMER_AGREE, host_enqueue_s when
 * finite, and when they disagree why (written into why[0..whylen), which t->why then points to: the
 * caller keeps it until the record is written) and explained. HB_OK or HB_ENOMEM.
 * When the timers disagree, `why` says whether the device time is too
 * short for the host timer (< HB_TIMER_MIN_S), or the gap is the host-side enqueue time plus launch
 * and synchronization latency, or that latency alone (the rest within HB_TIMER_AGREE of the device
 * time plus HB_TIMER_SYNC_S), or unexplained. */
#define HB_TIMER_AGREE 0.03   /* 3%: the agreement the design asks of cases of 100 us and more */
#define HB_TIMER_MIN_S 100e-6
#define HB_TIMER_SYNC_S 20e-6 /* launch + event-synchronize latency allowance: the H100 reference run's
                              * 4 us add n=65536 cases read 25 us on the host clock (about 20 us gap) */
hb_status hb_timer_agreement(hb_rec_timer *t, char *why, size_t whylen, double host_s, double device_s, double enqueue_s);
/* The "backend" record of an open instance (docs/results-schema.md): type, backend (its name),
 * available, description, host_memory and, from its describe hook where it has one, "info" (the
 * facts that name the device and its software, which the machine fingerprint hashes,
 * results/machine.h), so that every file written on one machine names it alike (a run's, a replay's).
 * The OpenMP wait policy of this process ("omp_wait") too, and when cl is non-NULL "ceilings":
 * cl[0..ncl-1] as {name, value, unit, how}. Filled into the record's struct (results/record.h
 * hb_rec_backend) and written from it: a new object, NULL when out of memory. */
json_t *hb_backend_record(hb_instance *inst, const hb_ceiling *cl, int ncl);
/* The "backend" record of a backend type that could not be opened: type, backend (the type),
 * available false and the reason. A new object, NULL when out of memory. */
json_t *hb_backend_record_unavailable(const char *type, const char *reason);
/* Fill deterministic random inputs in [-1, 1] (never zeros), exactly representable in f32, from a
 * seed and a stream id (splitmix64/xoshiro). */
void hb_fill_random(double *x, size_t n, unsigned long long seed, unsigned long long stream);
/* Peak RSS since the last reset, in bytes (VmHWM); hb_rss_reset() resets it via /proc/self/clear_refs. */
long long hb_rss_peak(void);
/* Resident set size now, in bytes (VmRSS of /proc/self/status), or -1 where unreadable. */
long long hb_rss_now(void);

/* The host CPU's effective clock: hb_clock_probe(&ghz_min, &ghz_max) (an imul chain on each online
 * CPU, GHz, NAN outside [0.2, 7] GHz), hb_clock_probe_ex, hb_kernel_cpu_ghz, hb_clock_ghz_valid,
 * hb_clock_selfcheck: declared and documented in clockprobe.h (included above). */
void hb_rss_reset(void);
#endif
