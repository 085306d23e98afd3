/*
 * ab_builds.h - the two builds of `hybench ab` as processes (cmd_ab.c's only helper): finding their
 * executables, starting their `run`s with the noise controls (ASLR, threads, pinning, huge pages),
 * one after the other or in lockstep (measure/lockstep.h), and the ceilings the later rounds reuse.
 * docs/compare.md, "hybench ab". Used by cmd_ab.c only.
 */
#ifndef HB_AB_BUILDS_H
#define HB_AB_BUILDS_H
#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

/* At most this many run arguments are passed on to a build (cmd_ab.c's fwd[]). */
#define AB_MAX_FWD 160

/* The noise controls of a build's processes (docs/compare.md, "Between-process noise").
 * aslr: 1 keeps address-space layout randomisation (0: personality(ADDR_NO_RANDOMIZE)); threads: 0
 * inherits the environment, else OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and PoCL's CPU device get it;
 * pin/have_pin: the CPUs the run may use (sched_setaffinity); hugepages: 1 sets
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1. */
/* wrap: NULL, or a command (NULL-terminated argv, e.g. valgrind and its options) the run is started
 * under: `wrap... EXE run ...`, wrap[0] found on PATH (the instruction gate, cli/ab_instr_run.c). */
typedef struct hb_ab_noise { int aslr; int threads; cpu_set_t pin; int have_pin; int hugepages; char *const *wrap; } hb_ab_noise;

/* One side's run of a lockstep round: its executable, --ceilings-from file (NULL: none), --out path,
 * the log its stderr goes to, and env[nenv] ("VAR=VALUE", set in its process only). All borrowed. */
typedef struct hb_ab_build { const char *exe, *ceilf, *path, *log; char **env; int nenv; } hb_ab_build;

/* 1 when `exe run --help` lists opt (a string such as "--cases-from"), else 0 (also when exe cannot
 * run). */
int hb_ab_exe_has_option(const char *exe, const char *opt);

/* The meta and backend records of results file src copied to dst (the ceilings later runs reuse with
 * `run --ceilings-from`). 0, or -1 when src cannot be read, dst cannot be written or src has fewer
 * than two such records (dst is then removed). */
int hb_ab_copy_ceilings(const char *src, const char *dst);

/* The executable for BASE/CUR argument arg: arg itself, or DIR/build/hybench, or DIR/hybench, made
 * absolute (realpath) into out (size len). 0, or -1 when none is executable. */
int hb_ab_resolve_exe(const char *arg, char *out, size_t len);

/* Parse a CPU list "0", "0-1", "0,2-3" into set. 0, or -1 (malformed, a CPU >= CPU_SETSIZE, or
 * empty). */
int hb_ab_parse_cpulist(const char *s, cpu_set_t *set);

/* Run `exe run fwd[0..nfwd) [--ceilings-from ceilf] --out path --force` alone (ceilf may be NULL), its
 * stderr to log, stdout to /dev/null, with the noise controls no and env[nenv] ("VAR=VALUE", borrowed);
 * it is sent SIGTERM when this process dies. Returns its exit status (128 + signal when killed), or -1
 * when it could not start; *secs gets its wall time in seconds. */
int hb_ab_run_build(const char *exe, char **fwd, int nfwd, const char *ceilf, const char *path, const char *log,
                    const hb_ab_noise *no, char **env, int nenv, double *secs);

/* One lockstep round: both builds' runs (args[0] base, args[1] cur; noise controls no[s]) started at
 * once, the token handed to one at a time (measure/lockstep.h, HB_LOCKSTEP), in steps: in each step
 * each build runs up to its next hand-back (before its next case group; the first step is its
 * set-up), the build that goes first alternating from step to step (ABBA: side `first` leads steps 0,
 * 3, 4, 7, ...; the other steps 1, 2, 5, 6, ...), so that the two measure the same case group within a
 * fraction of a second of each other. A build that does not take turns (an older hybench) runs to its
 * end within its first step, the other then alone. duet 1: both hold the token at once (each on its
 * own CPU: no[s].pin) and a step ends when both have handed it back.
 * Outputs per side s: x[s] its exit status (-1: could not start); secs[s] the seconds it held the
 * token; steps[s] its hand-backs (0: it did not take turns). */
void hb_ab_run_lockstep(const hb_ab_build *args, char **fwd, int nfwd, const hb_ab_noise no[2], int first, int duet,
                        int x[2], double secs[2], long steps[2]);

/* ---- served rounds (`run --serve-rounds`, measure/serve.h; docs/compare.md "Served rounds") ----
 * Both builds' runs started once, each setting every case up once and then measuring a round each
 * time the gate asks, in lockstep as hb_ab_run_lockstep's rounds. */
typedef struct hb_ab_served { pid_t pid[2]; int go[2], done[2], active[2]; } hb_ab_served;

/* Starts both sides' `exe run fwd... --serve-rounds rounds --serve-cases casesf --out args[s].path
 * --force` (round r's file: measure/serve.h hb_serve_round_path of that path), waiting for the
 * token; sv->active[s] 0 when side s could not start. */
void hb_ab_serve_start(hb_ab_served *sv, const hb_ab_build *args, char **fwd, int nfwd, const hb_ab_noise no[2], int rounds,
                       const char *casesf);

/* Runs both sides up to their next mark (lockstep.h: HB_LOCKSTEP_PREPARED after set-up,
 * HB_LOCKSTEP_ROUND after a round), taking turns group by group in ABBA steps led by side `first` as
 * hb_ab_run_lockstep's; tok is the byte each side gets the token with first (HB_LOCKSTEP_GO, or
 * HB_LOCKSTEP_CASES: the round runs the keys of casesf). mark[s] gets the mark side s reached (0: it
 * ended, sv->active[s] then 0); secs[s] the seconds it held the token; steps[s] its hand-backs. */
void hb_ab_serve_step(hb_ab_served *sv, int first, char tok, char mark[2], double secs[2], long steps[2]);

/* Ends both runs (HB_LOCKSTEP_QUIT, then end of file) and waits for them: x[s] its exit status
 * (-1: it did not start; 128 + signal when killed). */
void hb_ab_serve_end(hb_ab_served *sv, int x[2]);
#endif
