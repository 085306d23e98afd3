/*
 * test_rounds.c - the rounds driver (measure/rounds.h): participants with random scripts of answers;
 * every round each live participant takes one call, in a fresh order (no participant always follows
 * the same one); a participant that is
 * satisfied (HB_ROUND_ENOUGH) keeps taking calls while another wants more; the rounds end when none
 * wants more; a participant that answered HB_ROUND_DONE is never called again; one that is done at
 * once is called exactly once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "measure/rounds.h"

#define NP 5
#define MAXC 64

typedef struct script {
    int id;
    int ans[MAXC]; /* the answer to call k */
    int calls;
} script;

static int log_ids[NP * MAXC], nlog;

static int scripted(void *ctx)
{
    script *s = ctx;
    assert_true(s->calls < MAXC);
    log_ids[nlog++] = s->id;
    return s->ans[s->calls++];
}

/* A script: MORE for `more` calls, then ENOUGH for the rest, ending DONE at call `done` (or never
 * within MAXC when done < 0). */
static void make(script *s, int id, int more, int done)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    for (int k = 0; k < MAXC; k++) s->ans[k] = k < more ? HB_ROUND_MORE : HB_ROUND_ENOUGH;
    if (done >= 0 && done < MAXC) s->ans[done] = HB_ROUND_DONE;
}

static void test_random_scripts(void **state)
{
    (void)state;
    srand(12345);
    for (int trial = 0; trial < 200; trial++) {
        script s[NP];
        hb_round_part p[NP];
        int n = 1 + rand() % NP;
        for (int k = 0; k < n; k++) {
            int more = rand() % 12, done = rand() % 3 ? -1 : rand() % 16;
            make(&s[k], k, more, done);
            p[k] = (hb_round_part){.ctx = &s[k], .sample = scripted, .state = -1};
        }
        nlog = 0;
        int rounds = hb_rounds_run(p, n);
        /* the schedule, checked round by round from the scripts: every live participant exactly once
         * per round, in some order */
        int calls[NP] = {0}, last[NP], pos = 0;
        for (int k = 0; k < n; k++) last[k] = HB_ROUND_MORE;
        int r = 0;
        for (;; r++) {
            int live[NP] = {0}, nlive = 0, more = 0;
            for (int k = 0; k < n; k++) if (last[k] != HB_ROUND_DONE) { live[k] = 1; nlive++; }
            for (int j = 0; j < nlive; j++) {
                assert_true(pos < nlog);
                int k = log_ids[pos++];
                assert_true(k >= 0 && k < n);
                assert_true(live[k]); /* live, and not twice in the round */
                live[k] = 0;
                last[k] = s[k].ans[calls[k]++];
                more |= last[k] == HB_ROUND_MORE;
            }
            if (!more) break;
        }
        assert_int_equal(pos, nlog); /* no call beyond the end of the rounds */
        assert_int_equal(rounds, r + 1);
        for (int k = 0; k < n; k++) {
            assert_int_equal(s[k].calls, calls[k]);
            assert_int_equal(p[k].state, last[k]);
            /* a participant's calls stop at its first DONE */
            for (int c = 0; c + 1 < s[k].calls; c++) assert_int_not_equal(s[k].ans[c], HB_ROUND_DONE);
            assert_true(s[k].calls >= 1);
        }
        /* the participant that wanted most calls before it was satisfied or done got them all */
        for (int k = 0; k < n; k++) {
            int want = 0;
            while (want < MAXC && s[k].ans[want] == HB_ROUND_MORE) want++;
            assert_true(s[k].calls >= want + 1 || s[k].ans[s[k].calls - 1] == HB_ROUND_DONE);
        }
    }
}

/* Satisfied participants follow the one that wants more: all three take the same number of calls. */
static void test_followers(void **state)
{
    (void)state;
    script s[3];
    make(&s[0], 0, 0, -1);
    make(&s[1], 1, 9, -1);
    make(&s[2], 2, 0, 4); /* done at its 5th call */
    hb_round_part p[3];
    for (int k = 0; k < 3; k++) p[k] = (hb_round_part){.ctx = &s[k], .sample = scripted};
    nlog = 0;
    assert_int_equal(hb_rounds_run(p, 3), 10);
    assert_int_equal(s[0].calls, 10);
    assert_int_equal(s[1].calls, 10);
    assert_int_equal(s[2].calls, 5);
    assert_int_equal(p[2].state, HB_ROUND_DONE);
    assert_int_equal(p[1].state, HB_ROUND_ENOUGH);
    assert_int_equal(hb_rounds_run(p, 0), 0);
}

/* The order changes from round to round: over 60 rounds of four participants, each one follows at
 * least two different others (with the order only rotating, each followed the same one every round). */
static void test_order_varies(void **state)
{
    (void)state;
    script s[4];
    hb_round_part p[4];
    for (int k = 0; k < 4; k++) {
        make(&s[k], k, 59, -1);
        p[k] = (hb_round_part){.ctx = &s[k], .sample = scripted};
    }
    nlog = 0;
    assert_int_equal(hb_rounds_run(p, 4), 60);
    assert_int_equal(nlog, 240);
    for (int k = 0; k < 4; k++) {
        int seen[4] = {0}, kinds = 0;
        for (int q = 1; q < nlog; q++)
            if (log_ids[q] == k && q % 4) seen[log_ids[q - 1]] = 1; /* its predecessor within a round */
        for (int j = 0; j < 4; j++) kinds += seen[j];
        assert_true(kinds >= 2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_scripts),
        cmocka_unit_test(test_followers),
        cmocka_unit_test(test_order_varies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
