/*
 * test_rendezvous.c - what keeps the ranks of a multi-process collective in step, without a GPU:
 *   - the per-case agreement (core/rendezvous.h) between forked "ranks": run, rebuild, a rank that
 *     skips, a rank that never comes (timeout), a rank whose process has exited, a late rank after
 *     the others gave up, the communicator id hand-over;
 *   - the settle runs before a timed call (measure/prepare.c) agreed through coll_vote: two ranks
 *     whose own settle rules would stop after different numbers of runs make the same number of
 *     calls (the mismatch that paired NCCL calls wrongly and hung two-rank runs).
 * Case numbers, rank counts and reasons are drawn at random; every assertion is on values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/hybench.h"
#include "core/backend.h"
#include "core/rendezvous.h"
#include "measure/prepare.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hb-rdv-test.XXXXXX");
    if (!mkdtemp(dir)) return -1;
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    /* the forked ranks stand for one launch process each, as a run's children do (runner.c sets it) */
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("HB_RANK_PID", pid, 1);
    return 0;
}
static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Run the agreement of case seq in `ranks` forked processes; rank r answers ok[r] with token tok[r]
 * (arrive[r] < 0: rank r never comes; > 0: it comes after that many ms). Each child writes its
 * verdict and reason to a pipe; results in v[] and why[][]. */
static void agree(long long seq, int ranks, const int *ok, const long long *tok, const int *arrive, double timeout_s,
                  hb_rdv_verdict *v, char why[][400])
{
    int fds[8][2];
    pid_t pid[8];
    for (int r = 0; r < ranks; r++) {
        assert_int_equal(pipe(fds[r]), 0);
        pid[r] = fork();
        assert_true(pid[r] >= 0);
        if (pid[r] == 0) {
            close(fds[r][0]);
            hb_rdv_result res = {.verdict = HB_RDV_ERROR};
            if (arrive[r] >= 0) {
                usleep((useconds_t)arrive[r] * 1000);
                char reason[64];
                snprintf(reason, sizeof reason, "reason %d of rank %d", rand() % 1000, r);
                if (hb_rdv_case(dir, seq, r, ranks, ok[r], reason, tok[r], timeout_s, &res) != 0) res.verdict = HB_RDV_ERROR;
            }
            char line[420];
            int n = snprintf(line, sizeof line, "%d %s", (int)res.verdict, res.reason);
            if (write(fds[r][1], line, (size_t)n + 1) < 0) _exit(3);
            _exit(0);
        }
        close(fds[r][1]);
    }
    for (int r = 0; r < ranks; r++) {
        char line[420] = "";
        ssize_t k = read(fds[r][0], line, sizeof line - 1);
        close(fds[r][0]);
        int st = 0;
        waitpid(pid[r], &st, 0);
        assert_true(k > 0);
        v[r] = (hb_rdv_verdict)atoi(line);
        const char *sp = strchr(line, ' ');
        snprintf(why[r], 400, "%s", sp ? sp + 1 : "");
    }
}

static void test_run_and_rebuild(void **state)
{
    (void)state;
    int ranks = 2 + rand() % 3;
    long long seq = 1 + rand() % 100000;
    int ok[8] = {0}, arrive[8] = {0};
    long long tok[8] = {0};
    hb_rdv_verdict v[8];
    char why[8][400];
    for (int r = 0; r < ranks; r++) { ok[r] = 1; arrive[r] = rand() % 30; tok[r] = 0; }
    /* nobody holds a communicator: every rank makes one */
    agree(seq, ranks, ok, tok, arrive, 10, v, why);
    for (int r = 0; r < ranks; r++) assert_int_equal(v[r], HB_RDV_REBUILD);
    /* every rank holds the one made at seq: run on it */
    for (int r = 0; r < ranks; r++) tok[r] = seq;
    agree(seq + 1, ranks, ok, tok, arrive, 10, v, why);
    for (int r = 0; r < ranks; r++) assert_int_equal(v[r], HB_RDV_RUN);
    /* one rank restarted (token 0): every rank makes a new one */
    tok[rand() % ranks] = 0;
    agree(seq + 2, ranks, ok, tok, arrive, 10, v, why);
    for (int r = 0; r < ranks; r++) assert_int_equal(v[r], HB_RDV_REBUILD);
}

static void test_one_rank_skips(void **state)
{
    (void)state;
    int ranks = 2 + rand() % 3, skipper = rand() % ranks;
    long long seq = 200000 + rand() % 100000, tok[8] = {0};
    int ok[8] = {0}, arrive[8] = {0};
    hb_rdv_verdict v[8];
    char why[8][400], want[64];
    for (int r = 0; r < ranks; r++) { ok[r] = r != skipper; arrive[r] = rand() % 20; tok[r] = 7; }
    agree(seq, ranks, ok, tok, arrive, 10, v, why);
    snprintf(want, sizeof want, "rank %d of %d skips it: reason", skipper, ranks);
    for (int r = 0; r < ranks; r++) {
        assert_int_equal(v[r], HB_RDV_SKIP);
        assert_non_null(strstr(why[r], want));
        assert_string_equal(why[r], why[0]); /* the one decision, read by every rank */
    }
}

static void test_missing_rank_times_out_and_late_rank_follows(void **state)
{
    (void)state;
    int ranks = 2 + rand() % 3, absent = rand() % ranks;
    long long seq = 400000 + rand() % 100000, tok[8] = {0};
    int ok[8] = {0}, arrive[8] = {0};
    hb_rdv_verdict v[8];
    char why[8][400], want[64];
    for (int r = 0; r < ranks; r++) { ok[r] = 1; arrive[r] = r == absent ? -1 : 0; tok[r] = 3; }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    agree(seq, ranks, ok, tok, arrive, 0.3, v, why);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_true(el >= 0.3);
    snprintf(want, sizeof want, "rank %d of %d did not reach this case within", absent, ranks);
    for (int r = 0; r < ranks; r++) {
        if (r == absent) continue;
        assert_int_equal(v[r], HB_RDV_ABANDON);
        assert_non_null(strstr(why[r], want));
    }
    /* the late rank, arriving after the others gave up, skips too (it must not run the case alone) */
    hb_rdv_result res;
    assert_int_equal(hb_rdv_case(dir, seq, absent, ranks, 1, "", 3, 5, &res), 0);
    assert_int_equal(res.verdict, HB_RDV_ABANDON);
    assert_non_null(strstr(res.reason, want));
}

static void test_exited_rank_is_not_waited_for(void **state)
{
    (void)state;
    /* rank 1's launch process: a child that has exited (its pid is free) */
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char host[128] = "?", path[400], text[200];
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)
        if (*p == ' ' || *p == '\n') *p = '_';
    snprintf(path, sizeof path, "%s/alive.r1", dir);
    snprintf(text, sizeof text, "%d %s\n", (int)dead, host);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    long long seq = 600000 + rand() % 1000;
    hb_rdv_result res;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(hb_rdv_case(dir, seq, 0, 2, 1, "", 1, 30, &res), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_int_equal(res.verdict, HB_RDV_ABANDON);
    assert_non_null(strstr(res.reason, "rank 1 of 2 did not reach this case: its process has exited"));
    assert_true(el < 10); /* not the 30 s timeout */
    unlink(path);
}

static void test_id_handover(void **state)
{
    (void)state;
    long long seq = 700000 + rand() % 1000;
    char id[300], got[300] = "", why[400];
    for (int i = 0; i < 256; i++) id[i] = "0123456789abcdef"[rand() % 16];
    id[256] = 0;
    pid_t p = fork();
    if (p == 0) {
        usleep(50000);
        char mine[300];
        snprintf(mine, sizeof mine, "%s", id);
        _exit(hb_rdv_id(dir, seq, 0, mine, sizeof mine, 5, why, sizeof why) == 0 ? 0 : 1);
    }
    assert_int_equal(hb_rdv_id(dir, seq, 1, got, sizeof got, 5, why, sizeof why), 0);
    int st = 0;
    waitpid(p, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_string_equal(got, id);
    /* nobody writes the id of another case: the wait ends with the reason */
    assert_int_equal(hb_rdv_id(dir, seq + 1, 1, got, sizeof got, 0.2, why, sizeof why), -1);
    assert_non_null(strstr(why, "waited"));
}

/* ---- the settle runs agreed across two ranks (measure/prepare.c) ---- */
static int vote_fd = -1, calls_made, rank_of_proc;
static long long votes;

static hb_status fake_run(hb_instance *inst, const hb_case *c, hb_buf *const *in, hb_buf *out)
{
    (void)inst; (void)c; (void)in; (void)out;
    /* rank 0 runs in a constant time (settles at its second run); rank 1's first run ever is fast and
     * every later one 2.5x slower, beyond the settle rule's far bound (its own rule never calls it
     * settled: it would run HB_SETTLE_MAX times per timed call) */
    static int ever;
    int us = rank_of_proc == 0 ? 3000 : ever == 0 ? 2000 : 5000;
    ever++;
    calls_made++;
    usleep((useconds_t)us);
    return HB_OK;
}
/* both processes exchange (vote number, stop) and take the max: a two-rank ncclMax all-reduce; a
 * vote number that differs means the two made different sequences of calls */
static int fake_vote(hb_instance *inst, const hb_case *c, int stop)
{
    (void)inst; (void)c;
    long long mine[2] = {votes++, stop}, theirs[2] = {-1, 0};
    if (write(vote_fd, mine, sizeof mine) != (ssize_t)sizeof mine || read(vote_fd, theirs, sizeof theirs) != (ssize_t)sizeof theirs) _exit(5);
    if (theirs[0] != mine[0]) _exit(6);
    return stop || theirs[1];
}

static void test_settle_runs_agreed(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int fds[2][2];
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        assert_int_equal(pipe(fds[r]), 0);
        pid[r] = fork();
        if (pid[r] == 0) {
            rank_of_proc = r;
            vote_fd = sv[r];
            hb_backend_ops ops;
            memset(&ops, 0, sizeof ops);
            ops.run = fake_run;
            ops.coll_vote = fake_vote;
            hb_instance inst;
            memset(&inst, 0, sizeof inst);
            inst.ops = &ops;
            inst.host_memory = 1;
            hb_case c;
            memset(&c, 0, sizeof c);
            c.op = (hb_op)hb_op_parse("all_reduce");
            c.shape.n = 16;
            c.shape.ranks = 2;
            hb_prep_state ps;
            memset(&ps, 0, sizeof ps);
            int total = 0;
            for (int k = 0; k < 3; k++) { /* three timed calls, each with its settle runs */
                double spent;
                calls_made = 0;
                if (hb_compute_prepare(&inst, 0, &c, NULL, NULL, &ps, &spent) != HB_OK) _exit(7);
                total += calls_made;
            }
            if (write(fds[r][1], &total, sizeof total) < 0) _exit(8);
            _exit(0);
        }
        close(fds[r][1]);
    }
    int tot[2] = {-1, -2};
    for (int r = 0; r < 2; r++) {
        int st = 0;
        assert_int_equal(read(fds[r][0], &tot[r], sizeof tot[r]), (ssize_t)sizeof tot[r]);
        waitpid(pid[r], &st, 0);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0); /* 6: the ranks' vote sequences diverged */
        close(fds[r][0]);
    }
    close(sv[0]);
    close(sv[1]);
    assert_true(tot[0] >= 3);
    assert_int_equal(tot[0], tot[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_and_rebuild),
        cmocka_unit_test(test_one_rank_skips),
        cmocka_unit_test(test_missing_rank_times_out_and_late_rank_follows),
        cmocka_unit_test(test_exited_rank_is_not_waited_for),
        cmocka_unit_test(test_id_handover),
        cmocka_unit_test(test_settle_runs_agreed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
