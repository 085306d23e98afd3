/*
 * launch_ranks.c - `hybench run --ranks N` (launch_ranks.h): N copies of this hybench, one per rank,
 * each with the launch's environment and its own results file in results/<run-id>.ranks/, then one
 * merged results file (results/ranks.h).
 */
#include "cli/launch_ranks.h"
#include "core/hybench.h"
#include "core/launch.h"
#include "results/ranks.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RANKS 1024

int hb_ranks_in_launch(void)
{
    const char *r = getenv("HB_RANK");
    return (r && *r) || hb_launch_ranks() > 1;
}

/* ---- signals: forwarded to the ranks still running ---- */
static volatile sig_atomic_t g_sig;
static pid_t g_pids[MAX_RANKS];
static volatile sig_atomic_t g_npids;

static void forward_signal(int sig)
{
    g_sig = sig;
    for (int i = 0; i < g_npids; i++)
        if (g_pids[i] > 0) kill(g_pids[i], sig);
}

/* ---- the ranks' command line ---- */

/* The long option of lo that "--NAME" (len characters of name) selects, as getopt_long picks it: an
 * exact name, else the one option it abbreviates; -1 when none. */
static int find_opt(const struct option *lo, const char *name, size_t len)
{
    int hit = -1, n = 0;
    for (int j = 0; lo[j].name; j++) {
        if (strncmp(lo[j].name, name, len)) continue;
        if (strlen(lo[j].name) == len) return j;
        hit = j;
        n++;
    }
    return n == 1 ? hit : -1;
}

/* argv for rank file rankfile: "hybench", the subcommand, its arguments without --ranks, --out and
 * --force (and their values), then --out rankfile --force before any "--" and the operands after
 * it. Allocated (the strings are borrowed); NULL when out of memory. */
static char **rank_argv(int argc, char **argv, const struct option *lo, char *rankfile)
{
    char **av = calloc((size_t)argc + 8, sizeof *av);
    if (!av) return NULL;
    int k = 0, i = 1;
    av[k++] = "hybench";
    av[k++] = argv[0];
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) break;
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            const char *nm = a + 2;
            size_t len = strcspn(nm, "=");
            int j = find_opt(lo, nm, len);
            int takes_next = j >= 0 && lo[j].has_arg == required_argument && nm[len] != '=';
            const char *canon = j >= 0 ? lo[j].name : "";
            int drop = !strcmp(canon, "ranks") || !strcmp(canon, "out") || !strcmp(canon, "force");
            if (!drop) {
                av[k++] = argv[i];
                if (takes_next && i + 1 < argc) av[k++] = argv[i + 1];
            }
            if (takes_next) i++;
            continue;
        }
        av[k++] = argv[i]; /* an operand, or a short option (none of run's takes a value) */
    }
    av[k++] = "--out";
    av[k++] = rankfile;
    av[k++] = "--force";
    for (; i < argc; i++) av[k++] = argv[i];
    av[k] = NULL;
    return av;
}

/* ---- the folder of the rank files ---- */

/* mkdir that accepts an existing folder. 0 or -1 (errno). */
static int ensure_dir(const char *d)
{
    struct stat sb;
    if (mkdir(d, 0755) == 0) return 0;
    if (errno == EEXIST && stat(d, &sb) == 0 && S_ISDIR(sb.st_mode)) return 0;
    if (errno == EEXIST) errno = ENOTDIR;
    return -1;
}

/* The rendezvous folder made empty: what a previous launch left there (its files) is removed. */
static int fresh_dir(const char *d)
{
    if (ensure_dir(d)) return -1;
    DIR *dp = opendir(d);
    if (!dp) return -1;
    struct dirent *e;
    char p[4200 + 512];
    while ((e = readdir(dp)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", d, e->d_name);
            unlink(p); /* a folder inside is left alone */
        }
    closedir(dp);
    return 0;
}

/* The last `lines` lines of file path, each indented, on stderr. */
static void print_tail(const char *path, int lines)
{
    FILE *f = fopen(path, "r");
    if (!f) return;
    char buf[8192];
    if (fseek(f, 0, SEEK_END) == 0) {
        long sz = ftell(f);
        fseek(f, sz > (long)sizeof buf - 1 ? sz - (long)sizeof buf + 1 : 0, SEEK_SET);
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && buf[n - 1] == '\n') buf[--n] = 0;
    char *start = buf + n;
    for (int k = 0; start > buf; start--)
        if (start[-1] == '\n' && ++k == lines) break;
    for (char *sv = NULL, *l = strtok_r(start, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) fprintf(stderr, "    %s\n", l);
}

/* How bad an exit status is (launch_ranks.h); unknown statuses as failed. */
static int severity(int code)
{
    switch (code) {
    case HB_EXIT_OK: return 0;
    case HB_EXIT_WRONG: return 2;
    case HB_EXIT_NO_BACKEND: return 3;
    case HB_EXIT_INTERRUPTED: return 4;
    case HB_EXIT_BAD_WORKLOAD: return 5;
    case HB_EXIT_USAGE: return 6;
    case HB_EXIT_IO: return 7;
    default: return 1;
    }
}

static int worse(int a, int b)
{
    int sa = severity(a), sb = severity(b);
    int w = sb > sa ? b : a;
    return severity(w) == 1 ? HB_EXIT_FAILED : w;
}

/* The child's side of fork: rank r's environment and output, then exec. Never returns. */
static void exec_rank(int r, int nranks, char **av, const char *dir, const char *log, const sigset_t *mask)
{
    char v[32], p[4200];
    snprintf(v, sizeof v, "%d", nranks);
    setenv("HB_NRANKS", v, 1);
    snprintf(v, sizeof v, "%d", r);
    setenv("HB_RANK", v, 1);
    setenv("HB_LOCAL_RANK", v, 1);
    snprintf(p, sizeof p, "%s/rdv", dir);
    setenv("HB_RDV_DIR", p, 1);
    snprintf(p, sizeof p, "%s/nccl-id", dir);
    setenv("HB_NCCL_ID_FILE", p, 1);
    unsetenv("HB_RANK_PID"); /* each rank's run names itself there (measure/runner.c, core/rendezvous.h) */
    if (r > 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), nul = open("/dev/null", O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "hybench: rank %d: cannot write %s: %s\n", r, log, strerror(errno));
            _exit(HB_EXIT_IO);
        }
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (nul >= 0) dup2(nul, STDIN_FILENO);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execv("/proc/self/exe", av);
    fprintf(stderr, "hybench: rank %d: cannot run /proc/self/exe: %s\n", r, strerror(errno));
    _exit(HB_EXIT_FAILED);
}

int hb_ranks_launch(int nranks, int argc, char **argv, const struct option *lo, const char *cmd, const char *out_path)
{
    if (nranks < 2 || nranks > MAX_RANKS) {
        fprintf(stderr, "hybench %s: --ranks wants an integer in [1, %d], not %d\n", cmd, MAX_RANKS, nranks);
        return HB_EXIT_USAGE;
    }
    /* results/<run-id>.ranks/: the rank files, the logs of ranks 1.., the rendezvous */
    char dir[4096], rdv[4200], idf[4200];
    size_t ol = strlen(out_path);
    int cut = ol > 6 && !strcmp(out_path + ol - 6, ".jsonl") ? 6 : 0;
    snprintf(dir, sizeof dir, "%.*s.ranks", (int)(ol - (size_t)cut), out_path);
    snprintf(rdv, sizeof rdv, "%s/rdv", dir);
    snprintf(idf, sizeof idf, "%s/nccl-id", dir);
    if (ensure_dir(dir) || fresh_dir(rdv) || (unlink(idf) && errno != ENOENT)) {
        fprintf(stderr, "hybench %s: cannot prepare %s for the ranks' files: %s\n", cmd, dir, strerror(errno));
        return HB_EXIT_IO;
    }
    char (*files)[4200] = calloc((size_t)nranks, sizeof *files);
    char (*logs)[4200] = calloc((size_t)nranks, sizeof *logs);
    const char **fv = calloc((size_t)nranks, sizeof *fv);
    if (!files || !logs || !fv) {
        free(files); free(logs); free(fv);
        fprintf(stderr, "hybench %s: out of memory\n", cmd);
        return HB_EXIT_IO;
    }
    for (int r = 0; r < nranks; r++) {
        snprintf(files[r], sizeof files[r], "%s/rank%d.jsonl", dir, r);
        snprintf(logs[r], sizeof logs[r], "%s/rank%d.log", dir, r);
        fv[r] = files[r];
    }
    fprintf(stderr, "hybench %s: %d ranks, one process each (rank files and the logs of ranks 1..%d in %s/)\n", cmd, nranks,
            nranks - 1, dir);
    fflush(stdout);
    fflush(stderr);
    /* SIGINT/SIGTERM: held while the ranks start, then forwarded to them */
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigset_t stop, prev;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &prev);
    g_sig = 0;
    g_npids = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = HB_EXIT_OK, running = 0;
    for (int r = 0; r < nranks; r++) {
        char **av = rank_argv(argc, argv, lo, files[r]);
        pid_t pid = av ? fork() : -1;
        if (pid == 0) exec_rank(r, nranks, av, dir, logs[r], &prev);
        free(av);
        g_pids[r] = pid > 0 ? pid : 0;
        g_npids = r + 1;
        if (pid < 0) {
            fprintf(stderr, "hybench %s: cannot start rank %d: %s\n", cmd, r, strerror(av ? errno : ENOMEM));
            rc = worse(rc, HB_EXIT_FAILED);
        } else {
            running++;
        }
    }
    sigprocmask(SIG_SETMASK, &prev, NULL);
    /* wait for every rank; a rank that ends does not stop the others */
    while (running > 0) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "hybench %s: waiting for the ranks: %s\n", cmd, strerror(errno));
            break;
        }
        int r = -1;
        for (int i = 0; i < g_npids; i++)
            if (g_pids[i] == si.si_pid) r = i;
        int wst = 0;
        sigprocmask(SIG_BLOCK, &stop, NULL); /* no forwarding to a pid once it is reaped */
        if (r >= 0) g_pids[r] = 0;
        while (waitpid(si.si_pid, &wst, 0) < 0 && errno == EINTR) {}
        sigprocmask(SIG_SETMASK, &prev, NULL);
        if (r < 0) continue;
        running--;
        int code;
        if (WIFEXITED(wst)) {
            code = WEXITSTATUS(wst);
            if (code) fprintf(stderr, "hybench %s: rank %d exited with status %d\n", cmd, r, code);
        } else {
            int sig = WIFSIGNALED(wst) ? WTERMSIG(wst) : 0;
            code = g_sig && (sig == SIGINT || sig == SIGTERM) ? HB_EXIT_INTERRUPTED : HB_EXIT_FAILED;
            fprintf(stderr, "hybench %s: rank %d was killed by signal %d (%s); the other ranks go on and its file is merged "
                            "as far as it got\n", cmd, r, sig, strsignal(sig));
        }
        if (code && r > 0) {
            fprintf(stderr, "hybench %s: the end of rank %d's log %s:\n", cmd, r, logs[r]);
            print_tail(logs[r], 20);
        }
        rc = worse(rc, code);
    }
    /* one results file: the ranks' files merged (a rank that wrote nothing counts as absent) */
    hb_ranks_opts mo = {.absent_ok = 1};
    hb_ranks_summary s;
    char err[1600];
    hb_status st = hb_ranks_merge(fv, nranks, out_path, &mo, &s, err, sizeof err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (st != HB_OK) {
        fprintf(stderr, "hybench %s: cannot merge the ranks' files (kept in %s/): %s\n", cmd, dir, err);
        struct stat sb;
        if (stat(out_path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0) unlink(out_path); /* left empty by the caller */
        rc = worse(rc, st == HB_EINVAL ? HB_EXIT_USAGE : HB_EXIT_IO);
    } else {
        fprintf(stderr, "hybench %s: %d ranks merged: %zu cases: %d ok, %d wrong, %d failed, %d skipped, %d crashed, %d no_resource, "
                        "%d timed_out; %zu rank-cases missing, %zu duplicate records dropped (meta.ranks)\n",
                cmd, s.nranks, s.cases, s.counts[HB_OK], s.counts[HB_EWRONG], s.counts[HB_EDEVICE] + s.counts[HB_EINVAL],
                s.counts[HB_ESKIP], s.counts[HB_ECRASH], s.counts[HB_ENOMEM], s.counts[HB_ETIMEOUT], s.missing,
                s.dup_cases + s.dup_backends);
        printf("%s\n", out_path);
        fflush(stdout);
    }
    if (g_sig) rc = worse(rc, HB_EXIT_INTERRUPTED);
    free(files);
    free(logs);
    free(fv);
    return rc;
}
