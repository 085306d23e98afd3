/* ab_builds.c - the two builds of `hybench ab` as processes (cli/ab_builds.h): their executables,
 * their `run`s started with the noise controls, one after the other or in lockstep, and the ceilings
 * the later rounds reuse. */
#include "cli/ab_builds.h"
#include "core/hybench.h"
#include "core/stats.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 when `exe run --help` lists opt. */
int hb_ab_exe_has_option(const char *exe, const char *opt)
{
    char cmd[4200], line[512];
    snprintf(cmd, sizeof cmd, "'%s' run --help 2>/dev/null", exe);
    FILE *p = popen(cmd, "r");
    int has = 0;
    if (!p) return 0;
    while (fgets(line, sizeof line, p)) has |= strstr(line, opt) != NULL;
    pclose(p);
    return has;
}

/* The meta and backend records of results file src, copied to dst (the ceilings the later runs
 * reuse). 0, or -1 (dst not written). */
int hb_ab_copy_ceilings(const char *src, const char *dst)
{
    FILE *in = fopen(src, "r"), *out = in ? fopen(dst, "w") : NULL;
    char *line = NULL;
    size_t cap = 0;
    int n = 0;
    if (!in || !out) { if (in) fclose(in); return -1; }
    while (getline(&line, &cap, in) > 0)
        if (strstr(line, "\"type\":\"meta\"") || strstr(line, "\"type\":\"backend\"")) { fputs(line, out); n++; }
    free(line);
    fclose(in);
    if (fclose(out) || n < 2) { unlink(dst); return -1; }
    return 0;
}

/* An executable for BASE/CUR: the file itself, or DIR/build/hybench, or DIR/hybench. */
int hb_ab_resolve_exe(const char *arg, char *out, size_t len)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(out, len, "%s/build/hybench", arg);
        if (access(out, X_OK) == 0) goto abs;
        snprintf(out, len, "%s/hybench", arg);
        if (access(out, X_OK) == 0) goto abs;
        return -1;
    }
    snprintf(out, len, "%s", arg);
    if (access(out, X_OK) != 0) return -1;
abs:;
    char *rp = realpath(out, NULL);
    if (!rp) return -1;
    snprintf(out, len, "%s", rp);
    free(rp);
    return 0;
}

/* Parse a CPU list "0", "0-1", "0,2-3" into set. 0 or -1. */
int hb_ab_parse_cpulist(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *e;
        long a = strtol(t, &e, 10), b = a;
        if (e == t) return -1;
        if (*e == '-') { char *e2; b = strtol(e + 1, &e2, 10); if (e2 == e + 1 || *e2) return -1; }
        else if (*e) return -1;
        if (a < 0 || b < a || b >= CPU_SETSIZE) return -1;
        for (long c = a; c <= b; c++) CPU_SET((int)c, set);
    }
    return CPU_COUNT(set) ? 0 : -1;
}

/* Start `exe run ARGS --out path` with stderr to log; returns its pid, or -1 when it could not fork.
 * ls: NULL, or the two pipe ends the run takes turns through (HB_LOCKSTEP, measure/lockstep.h: ls[0]
 * the end it reads the token from, ls[1] the end it hands it back on). Every other descriptor of
 * the controller is close-on-exec, so the run holds no end of the other build's pipes. */
static pid_t spawn_build(const char *exe, char **fwd, int nfwd, const char *ceilf, const char *path, const char *log,
                         const hb_ab_noise *no, char **env, int nenv, const int *ls)
{
    char *av[AB_MAX_FWD + 48];
    int k = 0;
    for (int i = 0; no->wrap && no->wrap[i] && i < 30; i++) av[k++] = no->wrap[i];
    if (k) av[k++] = (char *)exe;
    else av[k++] = (char *)"hybench";
    av[k++] = (char *)"run";
    for (int i = 0; i < nfwd; i++) av[k++] = fwd[i];
    if (ceilf) { av[k++] = (char *)"--ceilings-from"; av[k++] = (char *)ceilf; }
    av[k++] = (char *)"--out";
    av[k++] = (char *)path;
    av[k++] = (char *)"--force";
    av[k] = NULL;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;
    /* a gate that is killed takes its runs along (SIGTERM: the run keeps what it measured and stops) */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(HB_EXIT_INTERRUPTED);
    int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), nul = open("/dev/null", O_WRONLY);
    if (lf >= 0) dup2(lf, 2);
    if (nul >= 0) dup2(nul, 1);
    if (!no->aslr && personality(0xffffffff) >= 0) personality((unsigned long)personality(0xffffffff) | ADDR_NO_RANDOMIZE);
    if (no->threads > 0) {
        char t[16];
        snprintf(t, sizeof t, "%d", no->threads);
        setenv("OMP_NUM_THREADS", t, 1);
        setenv("OPENBLAS_NUM_THREADS", t, 1);
        setenv("POCL_CPU_MAX_CU_COUNT", t, 1);  /* PoCL's CPU device: worker threads (PoCL >= 1.6) */
        setenv("POCL_MAX_PTHREAD_COUNT", t, 1); /* the same for older PoCL */
    }
    if (no->hugepages) {
        const char *g = getenv("GLIBC_TUNABLES");
        char buf[1024];
        snprintf(buf, sizeof buf, "%s%sglibc.malloc.hugetlb=1", g ? g : "", g && *g ? ":" : "");
        setenv("GLIBC_TUNABLES", buf, 1);
    }
    if (no->have_pin) {
        sched_setaffinity(0, sizeof no->pin, &no->pin);
        /* PoCL's own binding (the opencl plugin sets POCL_AFFINITY=1) numbers CPUs from 0 and could move
         * a worker off the pinned set: the pinned runs keep the inherited mask instead */
        setenv("POCL_AFFINITY", "0", 1);
    }
    for (int i = 0; i < nenv; i++) putenv(env[i]);
    if (ls) {
        char v[32];
        snprintf(v, sizeof v, "%d,%d", ls[0], ls[1]);
        fcntl(ls[0], F_SETFD, 0);
        fcntl(ls[1], F_SETFD, 0);
        setenv("HB_LOCKSTEP", v, 1);
    } else unsetenv("HB_LOCKSTEP");
    signal(SIGPIPE, SIG_DFL);
    if (no->wrap && no->wrap[0]) execvp(av[0], av);
    else execv(exe, av);
    fprintf(stderr, "hybench ab: cannot run %s: %s\n", no->wrap && no->wrap[0] ? av[0] : exe, strerror(errno));
    _exit(127);
}

/* Wait for pid; its exit status (128+signal when killed), or -1. */
static int wait_build(pid_t pid)
{
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Run `exe run ARGS --out path` alone; returns its exit status, or -1 when it could not start.
 * *secs gets its wall time. */
int hb_ab_run_build(const char *exe, char **fwd, int nfwd, const char *ceilf, const char *path, const char *log,
                     const hb_ab_noise *no, char **env, int nenv, double *secs)
{
    double t0 = hb_now();
    pid_t pid = spawn_build(exe, fwd, nfwd, ceilf, path, log, no, env, nenv, NULL);
    if (pid < 0) return -1;
    int x = wait_build(pid);
    *secs = hb_now() - t0;
    return x;
}

/* One lockstep round: both builds' runs started at once, the token handed to one at a time (measure/
 * lockstep.h), in steps: in each step each build runs up to its next hand-back (before its next
 * case group; the first step is its set-up), the build that goes first alternating from step to step
 * (ABBA: `first` leads steps 0, 3, 4, 7, ...; the other steps 1, 2, 5, 6, ...), so that the two
 * measure the same case group within a fraction of a second of each other. A build that does not
 * take turns (an older hybench) runs to its end within its first step, the other then alone.
 * duet: both hold the token at once (each on its own CPU: no[s].pin) and a step ends when both have
 * handed it back, so both measure the same case group at the same time.
 * x[s]: exit status per side (-1: could not start); secs[s]: the time it held the token; steps[s]:
 * its hand-backs (0: it did not take turns). args[s] describes side s's run, no[s] its noise options. */
void hb_ab_run_lockstep(const hb_ab_build *args, char **fwd, int nfwd, const hb_ab_noise no[2], int first, int duet,
                         int x[2], double secs[2], long steps[2])
{
    int go[2][2] = {{-1, -1}, {-1, -1}}, done[2][2] = {{-1, -1}, {-1, -1}};
    pid_t pid[2] = {-1, -1};
    int active[2] = {0, 0};
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    for (int s = 0; s < 2; s++) {
        x[s] = -1;
        secs[s] = 0;
        steps[s] = 0;
        if (pipe2(go[s], O_CLOEXEC) || pipe2(done[s], O_CLOEXEC)) continue;
        int ls[2] = {go[s][0], done[s][1]};
        const hb_ab_build *a = &args[s];
        pid[s] = spawn_build(a->exe, fwd, nfwd, a->ceilf, a->path, a->log, &no[s], a->env, a->nenv, ls);
        close(go[s][0]);
        close(done[s][1]);
        go[s][0] = done[s][1] = -1;
        active[s] = pid[s] > 0;
    }
    for (long step = 0; duet && (active[0] || active[1]); step++) {
        /* duet: both hold the token at once, each on its own CPU, and the step ends when both have
         * reached their next hand-back: the two builds measure the same case group at the same time */
        double t0 = hb_now();
        char c = 'g';
        ssize_t n[2] = {0, 0};
        const int was[2] = {active[0], active[1]};
        for (int s = 0; s < 2; s++) {
            if (!active[s]) continue;
            do n[s] = write(go[s][1], &c, 1); while (n[s] < 0 && errno == EINTR);
        }
        for (int s = 0; s < 2; s++) {
            if (!active[s]) continue;
            if (n[s] == 1) {
                do n[s] = read(done[s][0], &c, 1); while (n[s] < 0 && errno == EINTR);
            }
            if (n[s] == 1) steps[s]++;
            else active[s] = 0;
        }
        for (int s = 0; s < 2; s++)
            if (was[s]) secs[s] += hb_now() - t0;
    }
    for (long step = 0; !duet && (active[0] || active[1]); step++) {
        int lead = (step % 4 == 0 || step % 4 == 3) ? first : !first;
        for (int k = 0; k < 2; k++) {
            int s = k == 0 ? lead : !lead;
            if (!active[s]) continue;
            double t0 = hb_now();
            char c = 'g';
            ssize_t n;
            do n = write(go[s][1], &c, 1); while (n < 0 && errno == EINTR);
            if (n == 1) {
                do n = read(done[s][0], &c, 1); while (n < 0 && errno == EINTR);
            }
            secs[s] += hb_now() - t0;
            if (n == 1) steps[s]++;
            else active[s] = 0; /* the run ended (every write end closed) or its pipe failed */
        }
    }
    for (int s = 0; s < 2; s++) {
        if (go[s][1] >= 0) close(go[s][1]);
        if (done[s][0] >= 0) close(done[s][0]);
        if (pid[s] > 0) x[s] = wait_build(pid[s]);
    }
    signal(SIGPIPE, old_pipe);
}

/* ---- served rounds (ab_builds.h) ---- */
void hb_ab_serve_start(hb_ab_served *sv, const hb_ab_build *args, char **fwd, int nfwd, const hb_ab_noise no[2], int rounds,
                       const char *casesf)
{
    char rtxt[16], *f2[AB_MAX_FWD + 8];
    int n = 0;
    snprintf(rtxt, sizeof rtxt, "%d", rounds);
    for (int i = 0; i < nfwd && n < AB_MAX_FWD; i++) f2[n++] = fwd[i];
    f2[n++] = (char *)"--serve-rounds";
    f2[n++] = rtxt;
    f2[n++] = (char *)"--serve-cases";
    f2[n++] = (char *)casesf;
    signal(SIGPIPE, SIG_IGN); /* a run that ended: EPIPE on its pipe, not this process's death */
    for (int s = 0; s < 2; s++) {
        sv->pid[s] = -1;
        sv->go[s] = sv->done[s] = -1;
        sv->active[s] = 0;
        int go[2], done[2];
        if (pipe2(go, O_CLOEXEC)) continue;
        if (pipe2(done, O_CLOEXEC)) { close(go[0]); close(go[1]); continue; }
        int ls[2] = {go[0], done[1]};
        const hb_ab_build *a = &args[s];
        sv->pid[s] = spawn_build(a->exe, f2, n, NULL, a->path, a->log, &no[s], a->env, a->nenv, ls);
        close(go[0]);
        close(done[1]);
        sv->go[s] = go[1];
        sv->done[s] = done[0];
        sv->active[s] = sv->pid[s] > 0;
    }
}

void hb_ab_serve_step(hb_ab_served *sv, int first, char tok, char mark[2], double secs[2], long steps[2])
{
    int sent[2] = {0, 0};
    for (int s = 0; s < 2; s++) { mark[s] = 0; secs[s] = 0; steps[s] = 0; }
    for (long step = 0; (sv->active[0] && !mark[0]) || (sv->active[1] && !mark[1]); step++) {
        int lead = (step % 4 == 0 || step % 4 == 3) ? first : !first;
        for (int k = 0; k < 2; k++) {
            int s = k == 0 ? lead : !lead;
            if (!sv->active[s] || mark[s]) continue;
            double t0 = hb_now();
            char c = sent[s]++ ? 'g' : tok;
            ssize_t r;
            do r = write(sv->go[s], &c, 1); while (r < 0 && errno == EINTR);
            if (r == 1) {
                do r = read(sv->done[s], &c, 1); while (r < 0 && errno == EINTR);
            }
            secs[s] += hb_now() - t0;
            if (r != 1) sv->active[s] = 0; /* the run ended */
            else if (c == 'y') steps[s]++;
            else mark[s] = c;
        }
    }
}

void hb_ab_serve_end(hb_ab_served *sv, int x[2])
{
    for (int s = 0; s < 2; s++) {
        x[s] = -1;
        if (sv->go[s] >= 0) {
            char c = 'q';
            if (sv->active[s] && write(sv->go[s], &c, 1) < 0) { /* it ended already */ }
            close(sv->go[s]);
            sv->go[s] = -1;
        }
        if (sv->done[s] >= 0) {
            char c;
            while (read(sv->done[s], &c, 1) > 0) { } /* until its write ends close: the run is over */
            close(sv->done[s]);
            sv->done[s] = -1;
        }
        if (sv->pid[s] > 0) x[s] = wait_build(sv->pid[s]);
        sv->pid[s] = -1;
        sv->active[s] = 0;
    }
}
