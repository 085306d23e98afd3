/* serve.c - a served run's parent side (serve.h): one child per backend type started and set up once,
 * then rounds asked of them one after the other, each round's file opened, closed and ended here. */
#include "measure/serve.h"
#include "measure/internal.h"
#include "measure/lockstep.h"
#include "measure/registry.h"
#include "analysis/modecheck.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

char *hb_serve_round_path(const char *path, int r, char *buf, size_t len)
{
    size_t n = strlen(path);
    int cut = n > 6 && !strcmp(path + n - 6, ".jsonl");
    snprintf(buf, len, "%.*s-r%02d.jsonl", (int)(cut ? n - 6 : n), path, r);
    return buf;
}

/* One backend type's child. */
typedef struct srv {
    const hb_backend_entry *e;
    pid_t pid;
    FILE *rp;               /* its progress lines */
    int ctl_w;              /* its control pipe */
    int alive;
    char names[MAX_INST][64];
    json_t *dead;           /* the case record of the case it died in during set-up (every round gets a copy) */
    int respawn;            /* it died in a case of a round: started again (set-up included) before the next round */
} srv;

/* the host ceilings a served child measured (JSON array, host_ceilings_send), handed to the next backend's
 * child through fork (child_args.host_ceilings), as runner.c does; NULL before the first */
static char *g_host_ceilings;

static volatile sig_atomic_t g_stop;
static void on_stop(int sig) { (void)sig; g_stop = 1; }

/* Reads child c's lines until "P" (set-up done) or "D" (its round done): 0; or until it ends (its
 * case in flight, if any, recorded crashed or timed_out into fd, or kept in c->dead during set-up
 * (fd < 0)): -1. counts[] gets the statuses of the cases it ended. */
static int pump(srv *c, const hb_options *o, const hb_case_list *cases, int fd, int counts[HB_STATUS_COUNT])
{
    char line[16384];
    int gn = 1, timed_out = 0, werr = 0;
    long cur = -1, cur_inst = 0;
    double t0 = 0;
    int rfd = fileno(c->rp);
    for (;;) {
        struct pollfd pf = {rfd, POLLIN, 0};
        int pr = poll(&pf, 1, 1000);
        if (g_stop) { kill(c->pid, SIGKILL); }
        if (pr == 0) {
            if (cur >= 0 && hb_now() - t0 > o->case_timeout_s * gn) { kill(c->pid, SIGKILL); timed_out = 1; }
            continue;
        }
        if (pr < 0 && errno == EINTR) continue;
        if (!fgets(line, sizeof line, c->rp)) break;
        hb_child_msg m;
        switch (hb_child_msg_parse(line, &m)) {
        case 'P': case 'D': return werr ? -1 : 0;
        case 'K': free(g_host_ceilings); g_host_ceilings = strdup(m.text); break;
        case 'W': werr = m.err; fprintf(stderr, "hybench: %s: a results file could not be written: %s\n", c->e->type, strerror(werr)); break;
        case 'T': snprintf(c->names[m.inst], sizeof c->names[m.inst], "%.63s", m.name); break;
        case 'U': fprintf(stderr, "hybench: %s unavailable: %s\n", c->e->type, m.text); break;
        case 'G': gn = m.gn; break;
        case 'B': cur = (long)m.c; cur_inst = m.inst; gn = 1; t0 = hb_now(); break;
        case 'S': cur = -1; break;
        case 'E': {
            hb_status s = hb_status_from_name(m.name);
            if (s < HB_STATUS_COUNT) counts[s]++;
            if (s != HB_OK && s != HB_ESKIP) {
                char key[512];
                fprintf(stderr, "hybench: %s: %s\n", hb_case_key(&cases->v[m.c], c->names[m.inst], key, sizeof key), m.name);
            }
            cur = -1;
            break;
        }
        default: break;
        }
    }
    int ws = 0;
    waitpid(c->pid, &ws, 0);
    c->alive = 0;
    if (cur < 0) {
        if (!g_stop && (!WIFEXITED(ws) || WEXITSTATUS(ws)))
            fprintf(stderr, "hybench: the %s process ended outside a case (%s %d); it serves no more rounds\n", c->e->type,
                    WIFSIGNALED(ws) ? "signal" : "exit status", WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
        return -1;
    }
    char reason[256];
    hb_status st = timed_out ? HB_ETIMEOUT : HB_ECRASH;
    if (timed_out) snprintf(reason, sizeof reason, "killed after %.0f s (--case-timeout)", o->case_timeout_s);
    else if (WIFSIGNALED(ws)) snprintf(reason, sizeof reason, "child killed by %s", strsignal(WTERMSIG(ws)));
    else snprintf(reason, sizeof reason, "child exited with status %d inside the case", WEXITSTATUS(ws));
    hb_case cc = cases->v[cur];
    json_t *rec = hb_case_status_record(&cc, c->names[cur_inst], st, reason);
    fprintf(stderr, "hybench: %s: case %ld %s: %s%s\n", c->names[cur_inst], cur, hb_status_name(st), reason,
            fd < 0 ? " (in its set-up: the process serves no more rounds)" : " (a new process serves the next round)");
    if (g_stop) { json_decref(rec); return -1; }
    counts[st]++;
    if (fd < 0) c->dead = rec;
    else if (put_record(fd, rec, 1)) return -1;
    return -1;
}

/* Starts backend type e's serving child; 0 or -1 (fork/pipe failed). */
static int start(srv *c, const hb_backend_entry *e, const hb_options *o, const hb_case_list *cases)
{
    int pfd[2], cfd[2];
    memset(c, 0, sizeof *c);
    c->e = e;
    if (pipe(pfd)) return -1;
    if (pipe(cfd)) { close(pfd[0]); close(pfd[1]); return -1; }
    fflush(NULL);
    c->pid = fork();
    if (c->pid < 0) return -1;
    if (c->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1) _exit(HB_EXIT_INTERRUPTED);
        close(pfd[0]);
        close(cfd[1]);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        child_args a = {e, o, cases, -1, pfd[1], 0, 0, 1, 1, -1, cfd[0], g_host_ceilings};
        child_reexec(&a);
        _exit(child_main(&a));
    }
    close(pfd[1]);
    close(cfd[0]);
    fcntl(cfd[1], F_SETFD, FD_CLOEXEC);
    fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
    c->rp = fdopen(pfd[0], "r");
    if (c->rp) setvbuf(c->rp, NULL, _IONBF, 0); /* poll() sees the descriptor: no lines may wait in a buffer */
    c->ctl_w = cfd[1];
    c->alive = 1;
    return 0;
}

int hb_measure_serve(const hb_options *o, const hb_case_list *cases, const char *path, const char *run_id, char **workloads,
                     int nworkloads, int force, const char *cmd, hb_run_totals *t)
{
    srv kids[64];
    int nk = 0, rc = 0, tok = HB_LOCKSTEP_GO;
    double t_start = hb_now();
    memset(t, 0, sizeof *t);
    char rp[4200];
    for (int r = 1; r <= o->serve_rounds && !force; r++)
        if (access(hb_serve_round_path(path, r, rp, sizeof rp), F_OK) == 0) {
            fprintf(stderr, "hybench %s: %s exists; --force replaces it, or choose another --out\n", cmd, rp);
            return HB_EXIT_USAGE;
        }
    g_stop = 0;
    struct sigaction sa = {0}, sa_int, sa_term;
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, &sa_int);
    sigaction(SIGTERM, &sa, &sa_term);
    signal(SIGPIPE, SIG_IGN);
    /* set-up: the backend types one after the other (each child's set-up ends with "P"; its cases end
     * in the rounds, so set-up counts no status) */
    int setup_counts[HB_STATUS_COUNT] = {0};
    for (int b = 0; b < hb_nbackends && nk < 64 && !g_stop; b++) {
        const hb_backend_entry *e = &hb_backends[b];
        int sel = !o->backends;
        if (o->backends) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", o->backends);
            for (char *sv = NULL, *tk = strtok_r(buf, ",", &sv); tk; tk = strtok_r(NULL, ",", &sv)) sel |= hb_backend_find(tk) == e;
        }
        if (!sel) continue;
        if (start(&kids[nk], e, o, cases)) { perror("hybench: fork"); rc = HB_EXIT_IO; break; }
        if (pump(&kids[nk], o, cases, -1, setup_counts) && !kids[nk].alive && !kids[nk].dead) {
            fclose(kids[nk].rp);
            close(kids[nk].ctl_w);
            continue; /* unavailable, or ended outside a case (said) */
        }
        nk++;
    }
    double setup_s = hb_now() - t_start;
    fprintf(stderr, "hybench %s: every case set up in %.1f s; serving up to %d rounds\n", cmd, setup_s, o->serve_rounds);
    if (!rc && !g_stop) tok = hb_lockstep_mark(HB_LOCKSTEP_PREPARED);
    int r = 0;
    for (r = 1; r <= o->serve_rounds && !rc && !g_stop && tok != HB_LOCKSTEP_QUIT; r++) {
        double tr = hb_now();
        hb_serve_round_path(path, r, rp, sizeof rp);
        int fd = open(rp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) { fprintf(stderr, "hybench %s: cannot write %s: %s\n", cmd, rp, strerror(errno)); rc = HB_EXIT_IO; break; }
        hb_meta mfill;
        json_t *meta = NULL;
        if (hb_meta_fill(&mfill, o, run_id, workloads, nworkloads) == HB_OK) {
            hb_rec_meta *m = &mfill.rec;
            if (HB_REC_SET(hb_rec_meta, m, serve.round, r) == HB_OK &&
                HB_REC_SET(hb_rec_meta, m, serve.rounds, o->serve_rounds) == HB_OK &&
                HB_REC_SET(hb_rec_meta, m, serve.setup_s, setup_s) == HB_OK)
                meta = hb_rec_meta_json(m);
            hb_meta_release(&mfill);
        }
        if (put_record(fd, meta, 1)) { fprintf(stderr, "hybench %s: cannot write %s\n", cmd, rp); close(fd); rc = HB_EXIT_IO; break; }
        int counts[HB_STATUS_COUNT] = {0};
        const int subset = tok == HB_LOCKSTEP_CASES && o->serve_cases;
        for (int k = 0; k < nk && !g_stop; k++) {
            srv *c = &kids[k];
            if (c->dead && !subset) { put_record(fd, json_deep_copy(c->dead), 1); counts[HB_ECRASH]++; }
            if (!c->alive && c->respawn) {
                /* it died in a case of the previous round (recorded there): a new process sets every case
                 * up again, inside this build's turn, so that this round measures its cases too */
                const hb_backend_entry *e = c->e;
                fclose(c->rp);
                close(c->ctl_w);
                int sc[HB_STATUS_COUNT] = {0};
                if (start(c, e, o, cases) == 0 && pump(c, o, cases, -1, sc) == 0)
                    fprintf(stderr, "hybench %s: the %s process, ended in round %d, started again (set-up repeated)\n", cmd, e->type, r - 1);
                else
                    c->alive = 0;
            }
            if (!c->alive) continue;
            char msg[4400];
            int ml = snprintf(msg, sizeof msg, "%c %d %s\n", subset ? 'C' : 'R', r, rp);
            if (write(c->ctl_w, msg, (size_t)ml) != ml) { c->alive = 0; continue; }
            if (pump(c, o, cases, fd, counts) && c->alive) rc = HB_EXIT_IO; /* a write failed (said) */
            else if (!c->alive && !c->dead) c->respawn = 1;
        }
        size_t n = 0;
        for (int s = 0; s < HB_STATUS_COUNT; s++) { n += (size_t)counts[s]; t->counts[s] += counts[s]; }
        t->cases += n;
        json_t *mi = NULL;
        if (!rc && n) hb_mc_append_run(rp, fd, &mi, stderr);
        json_t *endr = hb_end_record(n, counts, hb_now() - tr, 1, g_stop != 0, r, NULL, mi);
        json_decref(mi);
        if (!rc && put_record(fd, endr, 1)) rc = HB_EXIT_IO;
        else if (rc) json_decref(endr);
        close(fd);
        t->passes = r;
        fprintf(stderr, "hybench %s: round %d: %zu cases in %.1f s -> %s\n", cmd, r, n, hb_now() - tr, rp);
        printf("%s\n", rp);
        fflush(stdout);
        if (!rc && !g_stop) tok = hb_lockstep_mark(HB_LOCKSTEP_ROUND);
    }
    for (int k = 0; k < nk; k++) {
        /* "Q": the child frees its groups and ends (a later child inherited this pipe's write end, so
         * closing it here alone would not end the file) */
        if (kids[k].alive && write(kids[k].ctl_w, "Q\n", 2) != 2) { /* it ended already */ }
        close(kids[k].ctl_w);
        if (kids[k].alive) {
            char line[512];
            while (fgets(line, sizeof line, kids[k].rp)) { }
            waitpid(kids[k].pid, NULL, 0);
        }
        fclose(kids[k].rp);
        json_decref(kids[k].dead);
    }
    free(g_host_ceilings);
    g_host_ceilings = NULL;
    sigaction(SIGINT, &sa_int, NULL);
    sigaction(SIGTERM, &sa_term, NULL);
    t->elapsed_s = hb_now() - t_start;
    t->interrupted = g_stop != 0;
    return rc;
}
