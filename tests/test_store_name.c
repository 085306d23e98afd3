/*
 * test_store_name.c - no credentials in logs (issue 32 item 6): a history store is named everywhere
 * with its password masked (results/store_name.c: hb_store_safe_name, hb_store_scrub,
 * hb_store_is_postgres). PostgreSQL connection strings with passwords in URI form (in the user
 * info, as a query parameter, percent-encoded special characters, sslpassword, several hosts, IPv6,
 * a Unix socket folder) and in key=value form (quoted, with spaces, quotes and backslashes), without a
 * password, one libpq cannot parse (its own error would quote the password), and SQLite paths: the
 * password's text, decoded or as written, appears nowhere in the name, "***" does where there was
 * one, and the name parses back (PQconninfoParse) to the same options but the password. Then the
 * messages of a store that cannot be reached: hb_store_open's error, `hybench history list|import`,
 * `hybench trend` and `hybench history where` on stdout and stderr.
 */
#include <fcntl.h>
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/commands.h"
#include "results/store.h"

/* A connection string and the secret texts that must not appear in its name (as libpq decodes them
 * and as they are written in it); pw 0: no password at all. */
typedef struct conn { const char *url; const char *secret[3]; int pw; } conn;
static const conn conns[] = {
    {"postgresql://hb:S3cr3t-pw@127.0.0.1/hbhist", {"S3cr3t-pw"}, 1},
    {"postgres://hb:p%40ss%3Aw%2Frd%20%23%26%3F%3D%25x@db.example.org:5433/hbhist?sslmode=require",
     {"p@ss:w/rd #&?=%x", "p%40ss%3Aw%2Frd%20%23%26%3F%3D%25x"}, 1},
    {"postgresql://hb@127.0.0.1/hbhist?password=Q%C3%BCery%27pw&connect_timeout=2", {"Q\xc3\xbc" "ery'pw", "Q%C3%BCery%27pw"}, 1},
    {"postgresql:///hbhist?host=/var/run/postgresql&password=sockpw77", {"sockpw77"}, 1},
    {"postgresql://hb:multi-pw-9@h1:5432,h2:5433/hbhist?target_session_attrs=read-write", {"multi-pw-9"}, 1},
    {"postgresql://hb:v6pw-123@[::1]:5432/hbhist", {"v6pw-123"}, 1},
    {"postgresql://hb:mainpw-1@db/hbhist?sslpassword=keypw-2&sslkey=/k/client.key", {"mainpw-1", "keypw-2"}, 1},
    {"host=db.example.org port=5432 user=hb password=plainpw-42 dbname=hbhist", {"plainpw-42"}, 1},
    {"host=db user=hb password='it\\'s a \\\\secret pw' dbname='my db'", {"it's a \\secret pw", "it\\'s a \\\\secret pw"}, 1},
    {"service=hbhist password=svcpw", {"svcpw"}, 1},
    {"postgresql://hb@127.0.0.1:5432/hbhist", {NULL}, 0},
    {"host=db user=hb dbname=hbhist", {NULL}, 0},
    {"postgresql://?service=hbhist", {NULL}, 0},
};

/* Every option of a (but the secrets) equals b's. */
static void same_options(const char *a, const char *b)
{
    char *e1 = NULL, *e2 = NULL;
    PQconninfoOption *x = PQconninfoParse(a, &e1), *y = PQconninfoParse(b, &e2);
    if (!x || !y) fail_msg("cannot parse %s or %s: %s %s", a, b, e1 ? e1 : "", e2 ? e2 : "");
    for (PQconninfoOption *p = x, *q = y; p->keyword; p++, q++) {
        assert_string_equal(p->keyword, q->keyword);
        if (!strcmp(p->keyword, "password") || !strcmp(p->keyword, "sslpassword")) {
            assert_true((p->val != NULL) == (q->val != NULL));
            if (q->val) assert_string_equal(q->val, "***");
            continue;
        }
        if (!p->val || !q->val) {
            if (p->val || q->val) fail_msg("%s: %s vs %s", p->keyword, p->val ? p->val : "(none)", q->val ? q->val : "(none)");
            continue;
        }
        assert_string_equal(p->val, q->val);
    }
    PQconninfoFree(x);
    PQconninfoFree(y);
}

static void no_secret(const conn *c, const char *text)
{
    for (int k = 0; k < 3 && c->secret[k]; k++)
        if (strstr(text, c->secret[k])) fail_msg("\"%s\" shows the password \"%s\" of %s", text, c->secret[k], c->url);
}

static void test_safe_name(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conns / sizeof *conns; i++) {
        const conn *c = &conns[i];
        char name[1024];
        assert_int_equal(hb_store_is_postgres(c->url), 1);
        assert_ptr_equal(hb_store_safe_name(c->url, name, sizeof name), name);
        print_message("%s\n  -> %s\n", c->url, name);
        no_secret(c, name);
        if (c->pw) assert_non_null(strstr(name, "***"));
        else assert_null(strstr(name, "***"));
        same_options(c->url, name);
        /* the URI form stays a URI, key=value stays key=value */
        assert_int_equal(!strncmp(name, "postgresql://", 13), !strncmp(c->url, "postgres", 8));
        /* a short buffer truncates, it never shows more */
        char small[24];
        hb_store_safe_name(c->url, small, sizeof small);
        assert_true(strlen(small) < sizeof small);
        no_secret(c, small);
    }
}

/* Not PostgreSQL: a SQLite path, even one with '=' in it, is shown as it is. A string libpq cannot
 * parse is not shown at all: libpq's error quotes the bad piece, here the password. */
static void test_other_names(void **state)
{
    (void)state;
    char name[1024];
    static const char *const paths[] = {"results/history.db", "/tmp/a=b/history.db", "run=1.db", "", NULL};
    for (int i = 0; paths[i]; i++) {
        assert_int_equal(hb_store_is_postgres(paths[i]), 0);
        assert_string_equal(hb_store_safe_name(paths[i], name, sizeof name), paths[i]);
    }
    const char *bad = "postgresql://hb:p%zzUnparsedPw@db/hbhist";
    char *em = NULL;
    PQconninfoOption *o = PQconninfoParse(bad, &em);
    assert_null(o);
    assert_non_null(strstr(em, "UnparsedPw")); /* why libpq's message is not shown */
    PQfreemem(em);
    hb_store_safe_name(bad, name, sizeof name);
    assert_null(strstr(name, "UnparsedPw"));
    assert_non_null(strstr(name, "not shown"));
}

static void test_scrub(void **state)
{
    (void)state;
    char t[256];
    snprintf(t, sizeof t, "FATAL: password \"S3cr3t-pw\" rejected for user hb (S3cr3t-pw)");
    hb_store_scrub(conns[0].url, t, sizeof t);
    assert_string_equal(t, "FATAL: password \"***\" rejected for user hb (***)");
    snprintf(t, sizeof t, "keypw-2 and mainpw-1");
    hb_store_scrub(conns[6].url, t, sizeof t);
    assert_string_equal(t, "*** and ***");
    snprintf(t, sizeof t, "nothing to hide");
    hb_store_scrub(conns[10].url, t, sizeof t);
    assert_string_equal(t, "nothing to hide");
    hb_store_scrub("results/history.db", t, sizeof t);
    assert_string_equal(t, "nothing to hide");
    char tiny[6] = "ab-pw";
    hb_store_scrub("postgresql://u:ab-pw@h/d", tiny, sizeof tiny); /* room for the mask only */
    assert_string_equal(tiny, "***");
}

typedef int (*cmd_fn)(int, char **);

/* Run cmd with stdout and stderr both captured into buf (size len). */
static int run_cmd(cmd_fn cmd, int argc, char **argv, char *buf, size_t len)
{
    fflush(stdout);
    fflush(stderr);
    int save2 = dup(2), save1 = dup(1);
    FILE *t = tmpfile();
    assert_non_null(t);
    dup2(fileno(t), 2);
    dup2(fileno(t), 1);
    int rc = cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(save2, 2);
    dup2(save1, 1);
    close(save2);
    close(save1);
    rewind(t);
    size_t n = fread(buf, 1, len - 1, t);
    buf[n] = 0;
    fclose(t);
    return rc;
}

/* A store that cannot be reached (nothing listens on port 1; a socket folder that does not exist):
 * the open fails with the store named, password masked, in the error and in every command's output. */
static void test_unreachable(void **state)
{
    (void)state;
    static const conn down[] = {
        {"postgresql://hb:Unreach%40ble-1@127.0.0.1:1/hbhist?connect_timeout=2", {"Unreach@ble-1", "Unreach%40ble-1"}, 1},
        {"host=127.0.0.1 port=1 user=hb password='Unreach able-2' dbname=hbhist connect_timeout=2",
         {"Unreach able-2"}, 1},
        {"postgresql:///hbhist?host=/nonexistent-hb-dir&password=Unreachable-3", {"Unreachable-3"}, 1},
        {"postgresql://hb:p%zzUnreachable-4@127.0.0.1:1/hbhist", {"Unreachable-4", "p%zzUnreachable-4"}, 1},
    };
    for (size_t i = 0; i < sizeof down / sizeof *down; i++) {
        const conn *c = &down[i];
        char err[2048] = "", buf[8192];
        hb_store *s = NULL;
        assert_int_equal(hb_store_open(c->url, &s, err, sizeof err), HB_EDEVICE);
        assert_null(s);
        print_message("%s\n", err);
        no_secret(c, err);
        assert_non_null(strstr(err, "cannot connect to"));
        assert_true(strstr(err, "***") || strstr(err, "not shown"));
        char *list[] = {"history", "list", "--store", (char *)c->url, NULL};
        assert_int_equal(run_cmd(hb_cmd_history, 4, list, buf, sizeof buf), HB_EXIT_IO);
        no_secret(c, buf);
        char *imp[] = {"history", "import", "--store", (char *)c->url, "tests/data/cpu_small.jsonl", NULL};
        assert_int_equal(run_cmd(hb_cmd_history, 5, imp, buf, sizeof buf), HB_EXIT_IO);
        no_secret(c, buf);
        char *tr[] = {"trend", "--store", (char *)c->url, "--no-plot", "--out", "/tmp/hb-store-name-trend", NULL};
        assert_int_equal(run_cmd(hb_cmd_trend, 6, tr, buf, sizeof buf), HB_EXIT_IO);
        no_secret(c, buf);
        char *wh[] = {"history", "where", "--store", (char *)c->url, NULL};
        assert_int_equal(run_cmd(hb_cmd_history, 4, wh, buf, sizeof buf), HB_EXIT_OK);
        no_secret(c, buf);
        assert_int_equal(strncmp(buf, "postgresql ", 11), 0);
        /* $HB_STORE the same */
        setenv("HB_STORE", c->url, 1);
        char *list2[] = {"history", "list", NULL};
        assert_int_equal(run_cmd(hb_cmd_history, 2, list2, buf, sizeof buf), HB_EXIT_IO);
        no_secret(c, buf);
        unsetenv("HB_STORE");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_safe_name),
        cmocka_unit_test(test_other_names),
        cmocka_unit_test(test_scrub),
        cmocka_unit_test(test_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
