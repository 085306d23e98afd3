/*
 * runner.c - a run's processes, the parent's side: for each pass and backend type it starts the
 * child process of that type (child.c), which opens its instances, measures their ceilings, then its
 * cases (sample.c) and appends one record per case to the results file (O_APPEND, one write per
 * record). The child reports "begin i"/"end i" on a pipe; when it dies inside case i (signal, abort,
 * OOM kill) or exceeds the per-case time limit, the parent records case i as `crashed` or
 * `timed_out` and starts a new child at case i+1. The parent never initializes a device or OpenMP
 * (so that fork() is safe). Passes, their merge (merge.c), the mode check and the end record close
 * the run.
 */
#include "measure/internal.h"
#include "measure/registry.h"
#include "analysis/modecheck.h"
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct progress {
    int tty;
    double t0;
    size_t done, total_known;
    int counts[HB_STATUS_COUNT];
    json_t *backends;  /* every requested backend: {instance or type: {"cases": n} or {"cases": 0, "why"}} */
    int child_failures; /* backend processes that died outside a case: their remaining cases did not run */
    /* the whole run's progress, across passes and backends (issue 17): */
    int npass, pass;      /* passes of the run; the current one, 0-based */
    size_t ended_all;     /* cases ended in every pass so far (done is recounted by each merge) */
    size_t pass_total;    /* cases of the current pass known so far (instances started) */
    size_t pass1_total;   /* cases of one pass, once pass 1 is complete (0 before) */
    double t_pass, pass1_s; /* when the current pass began; how long pass 1 took (0 before) */
    double last_log;      /* without a terminal: when the last line was printed */
    size_t last_log_done;
    const char *cmd;
    char *host_ceilings;  /* this pass's host ceilings (JSON array, see host_ceilings_send), or NULL */
} progress;

static void fmt_time(double s, char *buf, size_t len)
{
    if (s < 0 || !isfinite(s)) { snprintf(buf, len, "--:--"); return; }
    long t = (long)s;
    if (t >= 3600) snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* Cases of the whole run (every pass, every backend) and the seconds left, estimated. In pass 1 the
 * parent knows the case counts only of the backend types started so far (a later type may turn out
 * unavailable, with no case: the parent never probes a device), so the total is a lower bound (shown
 * as ">=") and the rate so far holds for the rest; from pass 2 on the total is exact and every pass
 * takes as long as pass 1 did (the same cases and budget). */
static void progress_estimate(const progress *p, size_t *total, double *left)
{
    double now = hb_now();
    if (p->pass1_total) {
        *total = p->pass1_total * (size_t)p->npass;
        double in_pass = now - p->t_pass;
        double cur = p->pass1_s - in_pass;
        *left = (cur > 0 ? cur : 0) + p->pass1_s * (double)(p->npass - p->pass - 1);
        return;
    }
    *total = p->pass_total * (size_t)p->npass;
    double el = now - p->t0;
    *left = p->ended_all ? el / (double)p->ended_all * (double)(*total > p->ended_all ? *total - p->ended_all : 0) : -1;
}

/* The progress of the run: on a terminal one line, rewritten in place (the case in flight, cases
 * ended / all cases of the run, elapsed, time left); without one, a line every 30 s or every 5% of
 * the run's cases, for CI logs. inst/c: the case in flight, or NULL. */
static void progress_line(progress *p, const char *inst, const hb_case *c, size_t i, size_t n)
{
    (void)i;
    (void)n;
    double now = hb_now(), el = now - p->t0, left;
    size_t total;
    progress_estimate(p, &total, &left);
    char e[32], r[32], sh[128] = "";
    fmt_time(el, e, sizeof e);
    fmt_time(left, r, sizeof r);
    size_t shown = p->ended_all + (c ? 1 : 0);
    if (shown > total) total = shown;
    if (p->tty) {
        if (c) hb_shape_format(c->op, &c->shape, sh, sizeof sh);
        fprintf(stderr, "\r\033[K[%s] %s %.40s %s | case %zu/%s%zu | pass %d/%d | elapsed %s | left ~%s", inst ? inst : "",
                c ? hb_op_get(c->op)->name : "", sh, c ? hb_mode_name(c->mode) : "", shown,
                p->pass1_total ? "" : ">=", total, p->pass + 1, p->npass, e, r);
        fflush(stderr);
        return;
    }
    size_t step = total / 20 ? total / 20 : 1;
    if (now - p->last_log < 30 && p->ended_all < p->last_log_done + step) return;
    p->last_log = now;
    p->last_log_done = p->ended_all;
    fprintf(stderr, "hybench %s: %zu of %s%zu cases ended (%.0f%%), pass %d of %d, %s%s, elapsed %s, ~%s left%s\n",
            p->cmd ? p->cmd : "run", p->ended_all, p->pass1_total ? "" : ">=", total,
            total ? 100.0 * (double)p->ended_all / (double)total : 0.0, p->pass + 1, p->npass, inst ? "on " : "",
            inst ? inst : "", e, r, p->pass1_total ? "" : " (backends started so far)");
    fflush(stderr);
}

/* SIGINT/SIGTERM in the parent: stop after killing the child in flight, keep what was measured. */
static volatile sig_atomic_t g_stop;
static void on_stop_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* The name of a signal ("SIGSEGV"), or NULL. */
static const char *signal_name(int sig)
{
    static const struct { int n; const char *s; } t[] = {
        {SIGHUP, "SIGHUP"}, {SIGINT, "SIGINT"}, {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"}, {SIGTRAP, "SIGTRAP"},
        {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
        {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
        {SIGSYS, "SIGSYS"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].n == sig) return t[i].s;
    return NULL;
}

/* The value of the line "KEY N" of a file, or -1. */
static long long read_counter(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    if (!f) return -1;
    char line[256];
    long long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ' ') { v = strtoll(line + kl + 1, NULL, 10); break; }
    fclose(f);
    return v;
}

/* How many processes the out-of-memory killer has killed, as the kernel counts them: the counter of
 * this process's cgroup (v2 memory.events "oom_kill", v1 memory.oom_control "oom_kill": kills of its
 * processes, the backend children included, by any OOM killer), else the system-wide one
 * (/proc/vmstat "oom_kill"). -1 when none can be read; *src names the one read. */
static long long oom_kill_count(const char **src)
{
    char line[512], file[700];
    FILE *f = fopen("/proc/self/cgroup", "r");
    long long v = -1;
    if (f) {
        while (v < 0 && fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            const char *v1 = strstr(line, ":memory:");
            if (!strncmp(line, "0::", 3)) { /* cgroup v2 */
                snprintf(file, sizeof file, "/sys/fs/cgroup%s/memory.events", line + 3);
                if ((v = read_counter(file, "oom_kill")) >= 0) *src = "the cgroup's memory.events oom_kill";
            } else if (v1) { /* cgroup v1 memory controller (kernel 4.13+) */
                snprintf(file, sizeof file, "/sys/fs/cgroup/memory%s/memory.oom_control", v1 + 8);
                if ((v = read_counter(file, "oom_kill")) >= 0) *src = "the cgroup's memory.oom_control oom_kill";
            }
        }
        fclose(f);
    }
    if (v >= 0) return v;
    *src = "/proc/vmstat oom_kill";
    return read_counter("/proc/vmstat", "oom_kill");
}

/* Run one backend type in child processes until its case list is done (pass: 1-based, see
 * put_record). Returns 0, or HB_EXIT_IO after a message naming path and the error. */
static int run_backend(const hb_backend_entry *e, const hb_options *o, const hb_case_list *cases, int fd, const char *path,
                       int pass, progress *pg, int *unavailable)
{
    *unavailable = 0;
    int start_inst = 0, start_case = 0, first = 1, nogroup_until = -1;
    char inst_names[MAX_INST][64];
    memset(inst_names, 0, sizeof inst_names);
    for (;;) {
        int pfd[2];
        const char *oom_src = NULL;
        long long oom0 = oom_kill_count(&oom_src);
        if (pipe(pfd)) { perror("pipe"); return HB_EXIT_IO; }
        /* for the ranks' per-case agreement (core/rendezvous.h): the process that stands for this
         * rank (children come and go with crashes; this one lives as long as the rank) and how long
         * a rank waits for the others, at a case's start and inside it (the backend's watchdog) */
        if (!getenv("HB_RANK_PID")) {
            char pidtxt[32];
            snprintf(pidtxt, sizeof pidtxt, "%d", (int)getpid());
            setenv("HB_RANK_PID", pidtxt, 1);
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return HB_EXIT_IO; }
        if (pid == 0) {
            /* a run killed with SIGKILL takes its measuring child along (no orphan appends to the file) */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() == 1) _exit(HB_EXIT_INTERRUPTED);
            close(pfd[0]);
            child_args a = {e, o, cases, fd, pfd[1], start_inst, start_case, first, pass, nogroup_until, -1, pg->host_ceilings};
            child_reexec(&a); /* returns when this backend keeps the inherited OpenMP wait policy */
            _exit(child_main(&a));
        }
        close(pfd[1]);
        FILE *rp = fdopen(pfd[0], "r");
        static char line[16384];
        int cur_inst = -1;
        long cur_case = -1, group_last = -1; /* group_last: the last case of the mode group in flight */
        int group_n = 1;
        size_t inst_total = 0, inst_done = 0;
        double case_t0 = 0;
        int timed_out = 0, stopped = 0, write_errno = 0;
        size_t ended = 0; /* cases this process ended */
        for (;;) {
            struct pollfd pf = {pfd[0], POLLIN, 0};
            int pr = poll(&pf, 1, 1000); /* wake every second: progress line and the case time limit */
            if (g_stop) { kill(pid, SIGKILL); stopped = 1; }
            if (pr == 0) {
                if (cur_case >= 0 && hb_now() - case_t0 > o->case_timeout_s * group_n) { kill(pid, SIGKILL); timed_out = 1; }
                if (cur_case >= 0) progress_line(pg, inst_names[cur_inst], &cases->v[cur_case], inst_done + 1, inst_total);
                else if (!pg->tty) progress_line(pg, cur_inst >= 0 ? inst_names[cur_inst] : e->type, NULL, 0, 0);
                continue;
            }
            if (pr < 0 && errno == EINTR) continue;
            if (!fgets(line, sizeof line, rp)) break;
            hb_child_msg m;
            switch (hb_child_msg_parse(line, &m)) {
            case 'K': /* the host's ceilings, measured by this pass's first host-memory child */
                free(pg->host_ceilings);
                pg->host_ceilings = strdup(m.text);
                break;
            case 'W': write_errno = m.err; break; /* the child could not write the results file: HB_EXIT_IO below */
            case 'T':
                snprintf(inst_names[m.inst], sizeof inst_names[m.inst], "%.63s", m.name);
                if (!json_object_get(pg->backends, m.name))
                    json_object_set_new(pg->backends, m.name, json_pack("{s:I}", "cases", (json_int_t)m.n));
                cur_inst = m.inst;
                inst_total = m.n;
                if (m.inst == start_inst && !first) inst_done = 0; /* resumed: count restarts, fine */
                pg->total_known += first || m.inst != start_inst ? m.n : 0;
                pg->pass_total += first || m.inst != start_inst ? m.n : 0;
                if (pg->tty) fprintf(stderr, "\r\033[K[%s] measuring ceilings...", m.name);
                break;
            case 'G':
                group_last = (long)m.c; /* the mode group of cur_case runs to case c, gn cases */
                group_n = m.gn;
                break;
            case 'B':
                cur_inst = m.inst;
                cur_case = (long)m.c;
                group_last = -1;
                group_n = 1;
                case_t0 = hb_now();
                progress_line(pg, inst_names[m.inst], &cases->v[m.c], inst_done + 1, inst_total);
                break;
            case 'E': {
                hb_status s = hb_status_from_name(m.name);
                if (o->verify_only || (s != HB_OK && s != HB_ESKIP)) {
                    const hb_case *vc = &cases->v[m.c];
                    char sh[160];
                    if (pg->tty) fprintf(stderr, "\r\033[K");
                    printf("%-12s %-9s %-48s %-8s %-8s %-5s %-11s rel_err %s%.2g\n", inst_names[m.inst], hb_op_get(vc->op)->name,
                           hb_shape_format(vc->op, &vc->shape, sh, sizeof sh), hb_mode_name(vc->mode), hb_route_name(vc->route),
                           hb_dtype_name(vc->dtype), m.name, m.rel < 0 ? "n/a " : "", m.rel < 0 ? 0.0 : m.rel);
                }
                if (s < HB_STATUS_COUNT) pg->counts[s]++;
                pg->done++;
                pg->ended_all++;
                inst_done++;
                ended++;
                cur_case = -1;
                group_n = 1;
                if (!pg->tty) progress_line(pg, inst_names[m.inst], NULL, 0, 0);
                break;
            }
            case 'U':
                *unavailable = 1;
                if (!json_object_get(pg->backends, e->type)) { /* once per run, not once per pass */
                    if (pg->tty) fprintf(stderr, "\r\033[K");
                    fprintf(stderr, "hybench: %s unavailable: %s\n", e->type, m.text);
                    json_object_set_new(pg->backends, e->type, json_pack("{s:i,s:b,s:s}", "cases", 0, "available", 0, "why", m.text));
                }
                break;
            case 'N': { /* "N <instance index> <name>: none of the requested cases: <why>" */
                const char *why = strstr(m.text, ": none of the requested cases: ");
                json_t *b = json_object_get(pg->backends, m.name);
                if (b && why && !json_object_get(b, "why")) {
                    if (pg->tty) fprintf(stderr, "\r\033[K");
                    fprintf(stderr, "hybench: %s\n", m.text);
                    json_object_set_new(b, "why", json_string(why + strlen(": none of the requested cases: ")));
                }
                break;
            }
            default: break;
            }
        }
        fclose(rp);
        int wst = 0;
        waitpid(pid, &wst, 0);
        if (write_errno || (WIFEXITED(wst) && WEXITSTATUS(wst) == HB_EXIT_IO)) {
            if (pg->tty) fprintf(stderr, "\r\033[K");
            fprintf(stderr, "hybench: cannot write %s: %s (the %s process stopped; the records before are kept)\n", path,
                    strerror(write_errno ? write_errno : EIO), e->type);
            return HB_EXIT_IO;
        }
        if (stopped || g_stop) return 0; /* interrupted: the case in flight is not recorded */
        if (cur_case < 0) {
            if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
                /* not attributable to a case, but never silent: the run exits HB_EXIT_FAILED */
                char how[96];
                const char *sn = WIFSIGNALED(wst) ? signal_name(WTERMSIG(wst)) : NULL;
                if (WIFSIGNALED(wst)) snprintf(how, sizeof how, "killed by %s", sn ? sn : "a signal");
                else snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(wst));
                if (pg->tty) fprintf(stderr, "\r\033[K");
                fprintf(stderr, "hybench: the %s process died outside a case (%s) after ending %zu; its remaining cases "
                        "did not run\n", e->type, how, ended);
                pg->child_failures++;
            }
            return 0;
        }
        if (group_last > cur_case && !timed_out) {
            /* died inside a mode group: measure its cases again one by one, so that the death is
             * recorded against the case that caused it (and the others are measured) */
            start_inst = cur_inst;
            start_case = (int)cur_case;
            nogroup_until = (int)group_last;
            first = 0;
            continue;
        }
        /* died inside case cur_case: record it and resume after it */
        const hb_case *c = &cases->v[cur_case];
        char reason[256];
        hb_status st = HB_ECRASH;
        if (timed_out) { st = HB_ETIMEOUT; snprintf(reason, sizeof reason, "killed after %.0f s (--case-timeout)", o->case_timeout_s); }
        else if (WIFSIGNALED(wst)) {
            /* a signal is a crash; only a SIGKILL the kernel counts as an out-of-memory kill is no_resource */
            int sig = WTERMSIG(wst);
            const char *sn = signal_name(sig);
            char sbuf[32];
            if (!sn) { snprintf(sbuf, sizeof sbuf, "signal %d", sig); sn = sbuf; }
            long long oom1 = sig == SIGKILL ? oom_kill_count(&oom_src) : -1;
            if (sig == SIGKILL && oom0 >= 0 && oom1 > oom0) {
                st = HB_ENOMEM;
                snprintf(reason, sizeof reason, "child killed by SIGKILL from the out-of-memory killer (%s rose by %lld during the case)",
                         oom_src, oom1 - oom0);
            } else if (sig == SIGKILL && oom0 >= 0 && oom1 >= 0)
                snprintf(reason, sizeof reason, "child killed by SIGKILL from outside (not the out-of-memory killer: %s unchanged)",
                         oom_src);
            else if (sig == SIGKILL)
                snprintf(reason, sizeof reason, "child killed by SIGKILL (the out-of-memory killer or another process)");
            else snprintf(reason, sizeof reason, "child killed by %s (%s)", sn, strsignal(sig));
        } else snprintf(reason, sizeof reason, "child exited with status %d inside the case", WEXITSTATUS(wst));
        if (pg->tty) fprintf(stderr, "\r\033[K");
        fprintf(stderr, "hybench: %s: case %ld %s: %s\n", inst_names[cur_inst], cur_case, hb_status_name(st), reason);
        int we = put_record(fd, hb_case_status_record(c, inst_names[cur_inst], st, reason), pass);
        if (we) { fprintf(stderr, "hybench: cannot write %s: %s\n", path, strerror(we)); return HB_EXIT_IO; }
        pg->counts[st]++;
        pg->done++;
        pg->ended_all++;
        start_inst = cur_inst;
        start_case = (int)cur_case + 1;
        first = 0;
    }
}


/* Measure every case of `cases`, o->passes times (see measure.h). Every record goes to the one
 * results file as it is measured: pass 1's as case and backend records, a later pass's as pass_case
 * and pass_backend records, merged at the pass's end (hb_merge_file: the file rewritten beside it
 * and renamed over it) so that the file holds, at any moment, every record measured so far and reads
 * completely as the passes merged so far. */
int hb_measure_run(const hb_options *o, const hb_case_list *cases, int *fdp, const char *path, const char *cmd,
                   hb_run_totals *t)
{
    progress pg = {.tty = isatty(2), .t0 = hb_now(), .backends = json_object(), .cmd = cmd};
    pg.last_log = pg.t0;
    fprintf(stderr, "hybench %s: %zu cases per backend -> %s\n", cmd, cases->n, path);
    int rc = 0, unavailable_named = 0;
    const int npass = o->verify_only ? 1 : o->passes;
    pg.npass = npass;
    /* the backend types this run measures (--backend, else every registered one) */
    int selected[64] = {0};
    for (int b = 0; b < hb_nbackends && b < 64; b++) {
        const hb_backend_entry *e = &hb_backends[b];
        int sel = !o->backends;
        if (o->backends) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", o->backends);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) sel |= hb_backend_find(tok) == e;
        }
        selected[b] = sel;
    }
    hb_options op = *o;
    op.budget_s = o->budget_s / npass;
    int passes_done = 0;
    g_stop = 0;
    struct sigaction sa_new = {0}, sa_int, sa_term;
    sa_new.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa_new, &sa_int);
    sigaction(SIGTERM, &sa_new, &sa_term);
    for (int pass = 0; pass < npass && !rc && !g_stop; pass++) {
        if (npass > 1) {
            if (pg.tty) fprintf(stderr, "\r\033[K");
            fprintf(stderr, "hybench %s: pass %d of %d (budget %.3g s per case)\n", cmd, pass + 1, npass, op.budget_s);
        }
        passes_done = pass + 1;
        pg.pass = pass;
        pg.t_pass = hb_now();
        pg.pass_total = 0;
        for (int b = 0; b < hb_nbackends && !rc && !g_stop; b++) {
            const hb_backend_entry *e = &hb_backends[b];
            if (b >= 64 || !selected[b]) continue;
            int unavailable = 0;
            rc = run_backend(e, &op, cases, *fdp, path, pass + 1, &pg, &unavailable);
            unavailable_named |= unavailable && o->backends;
        }
        if (pass == 0 && !g_stop) { pg.pass1_total = pg.pass_total; pg.pass1_s = hb_now() - pg.t_pass; }
        if (pass > 0 && !rc) {
            /* merge this pass (complete, or as far as an interrupt let it go) into the file; the
             * statuses are recounted from the merged records */
            int counts[HB_STATUS_COUNT] = {0};
            size_t n = 0;
            char err[1024];
            int mrc = hb_merge_file(path, fdp, pass + 1, counts, &n, err, sizeof err);
            if (mrc) {
                if (pg.tty) fprintf(stderr, "\r\033[K");
                fprintf(stderr, "hybench %s: %s\n", cmd, err);
                rc = mrc;
            } else {
                memcpy(pg.counts, counts, sizeof counts);
                pg.done = n;
            }
        }
    }
    free(pg.host_ceilings);
    pg.host_ceilings = NULL;
    if (g_stop) fprintf(stderr, "\nhybench %s: interrupted; keeping what was measured\n", cmd);
    sigaction(SIGINT, &sa_int, NULL);
    sigaction(SIGTERM, &sa_term, NULL);
    if (pg.tty) fprintf(stderr, "\r\033[K");
    /* mode invariance: the run's case records read back, one mode_check record per pair appended,
     * the summary put in the end record (modecheck.h); verify runs time nothing, so not there */
    json_t *mode_inv = NULL;
    if (!o->verify_only && pg.done && !rc) hb_mc_append_run(path, *fdp, &mode_inv, stderr);
    double el = hb_now() - pg.t0;
    json_t *endr = hb_end_record(pg.done, pg.counts, el, passes_done, g_stop != 0, -1, pg.backends, mode_inv);
    json_decref(pg.backends); /* endr holds its own references */
    json_decref(mode_inv);
    /* the end record says the run ended; not after a write failure (the file then ends where the
     * disk let it: every record before is whole) */
    if (rc) json_decref(endr);
    else {
        int we = put_record(*fdp, endr, 1);
        if (we) { fprintf(stderr, "hybench %s: cannot write %s: %s\n", cmd, path, strerror(we)); rc = HB_EXIT_IO; }
    }
    t->cases = pg.done;
    memcpy(t->counts, pg.counts, sizeof t->counts);
    t->elapsed_s = el;
    t->passes = passes_done;
    t->interrupted = g_stop != 0;
    t->unavailable_named = unavailable_named;
    t->child_failures = pg.child_failures;
    return rc;
}
