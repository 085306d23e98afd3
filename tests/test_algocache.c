/*
 * test_algocache.c - the CUDA plugin's algorithm-choice cache files (kernels/cuda/cuda_algocache.h),
 * without a GPU:
 *   - random entries (key, names, values, integers, numbers) written and read back are identical,
 *     in memory (serialize/parse) and on disk (store/load);
 *   - every single flipped byte and every truncation of an entry is refused (HBAC_CORRUPT), so is
 *     text after the object; an entry with a right sum but outside the format (a duplicate name, a bad
 *     name, a value not a string, an empty key, another format or version, a control byte, a member
 *     more or missing) is refused too: the parse is strict beyond the checksum;
 *   - another key under the file's name is a miss, no file is a miss;
 *   - keys, names and values outside the format are refused when set, and numbers outside their range
 *     or malformed when read;
 *   - concurrent writers of one key (forked processes) never leave a torn entry: every read during
 *     the writes is a hit with one writer's whole value, and no temporary file is left behind.
 * The directory is a new temporary one per test.
 */
#include <dirent.h>
#include <jansson.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda/cuda_algocache.h"
#include "test_config.h"

/* The plugin's settings accessor (cuda_backend.cu, not linked here): the process's configuration,
 * which test_config.h's setenv refreshes. */
const hb_config *hbc_cfg(void) { return hb_config_get(); }

static char g_dir[256];
static uint64_t g_rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int rnd_int(int lo, int hi) { return lo + (int)(rnd() % (uint64_t)(hi - lo + 1)); }

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}
static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/hb_test_algocache.XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}
static int teardown(void **state)
{
    (void)state;
    nftw(g_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* random printable text of length n (0x20..0x7e) */
static void rnd_text(char *buf, int n)
{
    for (int i = 0; i < n; i++) buf[i] = (char)rnd_int(0x20, 0x7e);
    buf[n] = 0;
}
static void rnd_name(char *buf, int n)
{
    static const char al[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
    for (int i = 0; i < n; i++) buf[i] = al[rnd() % (sizeof al - 1)];
    buf[n] = 0;
}

/* A random valid entry: a key of 1..HBAC_KEY_MAX-1 bytes, up to HBAC_MAX_FIELDS fields of random
 * kinds (text, integer, number), names unique. */
static void rnd_entry(hbac_entry *e)
{
    char key[HBAC_KEY_MAX];
    rnd_text(key, rnd_int(1, HBAC_KEY_MAX - 1));
    assert_int_equal(hbac_init(e, key), 0);
    const int nf = rnd_int(0, HBAC_MAX_FIELDS);
    while (e->n < nf) {
        char nm[HBAC_NAME_MAX], val[HBAC_VALUE_MAX];
        rnd_name(nm, rnd_int(1, HBAC_NAME_MAX - 1));
        if (hbac_get(e, nm)) continue;
        switch (rnd_int(0, 2)) {
        case 0: rnd_text(val, rnd_int(0, HBAC_VALUE_MAX - 1)); assert_int_equal(hbac_set(e, nm, val), 0); break;
        case 1: assert_int_equal(hbac_set_i64(e, nm, (int64_t)rnd()), 0); break;
        default: assert_int_equal(hbac_set_f(e, nm, ldexp((double)(rnd() >> 11) - 0x1p52, rnd_int(-60, 60))), 0); break;
        }
    }
}

/* the same key and the same named fields (a set: the file keeps them sorted by name) */
static void assert_same(const hbac_entry *a, const hbac_entry *b)
{
    assert_string_equal(a->key, b->key);
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        const char *v = hbac_get(b, a->name[i]);
        if (!v) fail_msg("field %s lost", a->name[i]);
        assert_string_equal(a->value[i], v);
    }
}

static void test_roundtrip_random(void **state)
{
    (void)state;
    static char text[HBAC_FILE_MAX];
    for (int it = 0; it < 200; it++) {
        hbac_entry e, back, disk;
        rnd_entry(&e);
        const long n = hbac_serialize(&e, text, sizeof text);
        assert_true(n > 0);
        assert_int_equal(hbac_parse(text, (size_t)n, e.key, &back, NULL, 0), HBAC_HIT);
        assert_same(&e, &back);
        assert_int_equal(hbac_parse(text, (size_t)n, NULL, &back, NULL, 0), HBAC_HIT);
        char why[300] = "";
        assert_int_equal(hbac_store(g_dir, &e, why, sizeof why), 0);
        assert_int_equal(hbac_load(g_dir, e.key, &disk, why, sizeof why), HBAC_HIT);
        assert_same(&e, &disk);
    }
}

static void test_numbers_read_back(void **state)
{
    (void)state;
    for (int it = 0; it < 2000; it++) {
        hbac_entry e;
        assert_int_equal(hbac_init(&e, "k"), 0);
        const int64_t i = (int64_t)rnd();
        const double f = ldexp((double)(rnd() >> 11) - 0x1p52, rnd_int(-80, 80));
        assert_int_equal(hbac_set_i64(&e, "i", i), 0);
        assert_int_equal(hbac_set_f(&e, "f", f), 0);
        int64_t gi = 0;
        double gf = 0;
        assert_int_equal(hbac_get_i64(&e, "i", INT64_MIN, INT64_MAX, &gi), 0);
        assert_true(gi == i);
        assert_int_equal(hbac_get_f(&e, "f", &gf), 0);
        assert_true(fabs(gf - f) <= 1e-8 * fabs(f)); /* "%.9g": 9 significant digits */
        /* out of the caller's range: refused, out untouched */
        int64_t keep = 7;
        if (i > INT64_MIN) {
            assert_int_equal(hbac_get_i64(&e, "i", INT64_MIN, i - 1, &keep), -1);
            assert_true(keep == 7);
        }
        assert_int_equal(hbac_get_i64(&e, "nope", INT64_MIN, INT64_MAX, &keep), -1);
    }
    hbac_entry e;
    assert_int_equal(hbac_init(&e, "k"), 0);
    static const char *const bad_int[] = {"", "12x", " 1", "+", "1.5", "99999999999999999999", "0x10"};
    for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++) {
        int64_t v = 3;
        assert_int_equal(hbac_set(&e, "v", bad_int[i]), 0);
        assert_int_equal(hbac_get_i64(&e, "v", INT64_MIN, INT64_MAX, &v), -1);
        assert_true(v == 3);
    }
    static const char *const bad_f[] = {"", "nan", "inf", "-inf", "1e999", "1.0x", " 2"};
    for (size_t i = 0; i < sizeof bad_f / sizeof *bad_f; i++) {
        double v = 3;
        assert_int_equal(hbac_set(&e, "v", bad_f[i]), 0);
        assert_int_equal(hbac_get_f(&e, "v", &v), -1);
        assert_true(v == 3);
    }
    assert_int_equal(hbac_set_f(&e, "v", NAN), -1);
    assert_int_equal(hbac_set_f(&e, "v", INFINITY), -1);
}

static void test_every_flip_and_truncation_refused(void **state)
{
    (void)state;
    static char text[HBAC_FILE_MAX], bad[HBAC_FILE_MAX + 16];
    for (int it = 0; it < 12; it++) {
        hbac_entry e, out;
        rnd_entry(&e);
        const long n = hbac_serialize(&e, text, sizeof text);
        assert_true(n > 0);
        for (long i = 0; i < n; i++) { /* one byte changed, anywhere */
            memcpy(bad, text, (size_t)n);
            bad[i] ^= (char)rnd_int(1, 255);
            assert_int_equal(hbac_parse(bad, (size_t)n, e.key, &out, NULL, 0), HBAC_CORRUPT);
        }
        for (long m = 0; m < n; m++) /* every truncation */
            assert_int_equal(hbac_parse(text, (size_t)m, e.key, &out, NULL, 0), HBAC_CORRUPT);
        memcpy(bad, text, (size_t)n); /* text after the sum */
        memcpy(bad + n, "x\n", 2);
        assert_int_equal(hbac_parse(bad, (size_t)n + 2, e.key, &out, NULL, 0), HBAC_CORRUPT);
    }
}

/* An entry's text as a writer that skipped the checks would make it: fields_json (raw, kept as it is
 * in the text), key, format and version as given, and the sum of what a parse of the fields (the last
 * of duplicate names) and the key give. */
static size_t entry_text(const char *fields_json, const char *key, const char *format, int version, char *out, size_t len)
{
    json_t *f = json_loads(fields_json, JSON_ALLOW_NUL, NULL);
    assert_non_null(f);
    json_t *body = json_pack("{s:o,s:s}", "fields", f, "key", key);
    char *bt = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(bt);
    int k = snprintf(out, len, "{\"fields\":%s,\"format\":\"%s\",\"key\":\"%s\",\"sum\":\"%016" PRIx64 "\",\"version\":%d}", fields_json, format,
                     key, hbac_fnv1a(bt, strlen(bt), HBAC_FNV_START), version);
    free(bt);
    json_decref(body);
    assert_true(k > 0 && (size_t)k < len);
    return (size_t)k;
}

static void test_strict_beyond_sum(void **state)
{
    (void)state;
    char t[4096];
    hbac_entry out;
    char why[200];
    size_t n = entry_text("{\"name\":\"eng0\",\"plan\":\"3\"}", "abc", "hybench-algo-cache", 1, t, sizeof t);
    assert_int_equal(hbac_parse(t, n, "abc", &out, why, sizeof why), HBAC_HIT);
    assert_string_equal(hbac_get(&out, "name"), "eng0");
    static const struct { const char *fields, *key, *format; int version; } bad[] = {
        {"{\"plan\":\"3\",\"plan\":\"4\"}", "abc", "hybench-algo-cache", 1}, /* duplicate name */
        {"{\"Plan\":\"3\"}", "abc", "hybench-algo-cache", 1},                  /* bad name */
        {"{\"plan\":3}", "abc", "hybench-algo-cache", 1},                      /* a value not a string */
        {"{}", "", "hybench-algo-cache", 1},                                   /* empty key */
        {"{}", "abc", "hybench-algo-cache", 2},                                /* another version */
        {"{}", "abc", "hybench-algo-cache-x", 1},                              /* another format */
        {"{\"name\":\"a\\tb\"}", "abc", "hybench-algo-cache", 1},             /* a control byte */
        {"{\"name\":\"\xc3\xa9\"}", "abc", "hybench-algo-cache", 1},          /* not ASCII */
        {"{\"name\":\"a\\u0000b\"}", "abc", "hybench-algo-cache", 1},         /* a NUL inside */
        {"[]", "abc", "hybench-algo-cache", 1},                                /* fields not an object */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        n = entry_text(bad[i].fields, bad[i].key, bad[i].format, bad[i].version, t, sizeof t);
        why[0] = 0;
        if (hbac_parse(t, n, "abc", &out, why, sizeof why) != HBAC_CORRUPT) fail_msg("accepted: %s", t);
        assert_true(why[0] != 0);
    }
    /* a member more, or one missing */
    n = entry_text("{}", "abc", "hybench-algo-cache", 1, t, sizeof t);
    char more[4200];
    snprintf(more, sizeof more, "%.*s,\"x\":1}", (int)n - 1, t);
    assert_int_equal(hbac_parse(more, strlen(more), "abc", &out, why, sizeof why), HBAC_CORRUPT);
    static const char no_sum[] = "{\"fields\":{},\"format\":\"hybench-algo-cache\",\"key\":\"abc\",\"version\":1}";
    assert_int_equal(hbac_parse(no_sum, strlen(no_sum), "abc", &out, why, sizeof why), HBAC_CORRUPT);
    /* a sound entry of another key: a miss, not corrupt */
    n = entry_text("{\"plan\":\"3\"}", "abd", "hybench-algo-cache", 1, t, sizeof t);
    assert_int_equal(hbac_parse(t, n, "abc", &out, why, sizeof why), HBAC_MISS);
}

static void write_file(const char *path, const char *t, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(t, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_files_on_disk(void **state)
{
    (void)state;
    hbac_entry e, out;
    char why[300], path[600], other[600];
    rnd_entry(&e);
    assert_int_equal(hbac_load(g_dir, e.key, &out, why, sizeof why), HBAC_MISS); /* no file */
    assert_int_equal(hbac_store(g_dir, &e, why, sizeof why), 0);
    assert_non_null(hbac_path(g_dir, e.key, path, sizeof path));
    static char t[HBAC_FILE_MAX];
    long n = hbac_serialize(&e, t, sizeof t);
    assert_true(n > 0);
    /* a flipped byte on disk */
    const long i = rnd_int(0, (int)n - 1);
    t[i] ^= 0x10;
    write_file(path, t, (size_t)n);
    why[0] = 0;
    assert_int_equal(hbac_load(g_dir, e.key, &out, why, sizeof why), HBAC_CORRUPT);
    assert_true(why[0] != 0);
    /* a truncated file */
    t[i] ^= 0x10;
    write_file(path, t, (size_t)rnd_int(0, (int)n - 1));
    assert_int_equal(hbac_load(g_dir, e.key, &out, why, sizeof why), HBAC_CORRUPT);
    /* rewritten whole: a hit again */
    assert_int_equal(hbac_store(g_dir, &e, why, sizeof why), 0);
    assert_int_equal(hbac_load(g_dir, e.key, &out, why, sizeof why), HBAC_HIT);
    assert_same(&e, &out);
    /* another key's sound entry under this key's name (a hash collision): a miss */
    hbac_entry f;
    assert_int_equal(hbac_init(&f, "another key"), 0);
    assert_int_equal(hbac_set(&f, "plan", "1"), 0);
    assert_int_equal(hbac_store(g_dir, &f, why, sizeof why), 0);
    assert_non_null(hbac_path(g_dir, f.key, other, sizeof other));
    assert_int_equal(rename(other, path), 0);
    assert_int_equal(hbac_load(g_dir, e.key, &out, why, sizeof why), HBAC_MISS);
    /* an over-long file is refused */
    static char big[HBAC_FILE_MAX + 100];
    memset(big, 'a', sizeof big);
    write_file(path, big, sizeof big);
    assert_int_equal(hbac_load(g_dir, e.key, &out, why, sizeof why), HBAC_CORRUPT);
    /* the directory is made, parents too */
    char deep[600];
    snprintf(deep, sizeof deep, "%s/a/b/c", g_dir);
    assert_int_equal(hbac_store(deep, &e, why, sizeof why), 0);
    assert_int_equal(hbac_load(deep, e.key, &out, why, sizeof why), HBAC_HIT);
    /* a directory that cannot be made (a file in the way): -1 with a reason */
    char blocker[600], below[700];
    snprintf(blocker, sizeof blocker, "%s/blocker", g_dir);
    write_file(blocker, "x", 1);
    snprintf(below, sizeof below, "%s/sub", blocker);
    why[0] = 0;
    assert_int_equal(hbac_store(below, &e, why, sizeof why), -1);
    assert_true(why[0] != 0);
}

static void test_refused_inputs(void **state)
{
    (void)state;
    hbac_entry e;
    char longkey[HBAC_KEY_MAX + 1];
    memset(longkey, 'k', HBAC_KEY_MAX);
    longkey[HBAC_KEY_MAX] = 0;
    assert_int_equal(hbac_init(&e, ""), -1);
    assert_int_equal(hbac_init(&e, "a\nb"), -1);
    assert_int_equal(hbac_init(&e, longkey), -1);
    longkey[HBAC_KEY_MAX - 1] = 0;
    assert_int_equal(hbac_init(&e, longkey), 0);
    static const char *const names[] = {"", "Plan", "a b", "a-b", "abcdefghijklmnopqrstuvwxyz012345"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) assert_int_equal(hbac_set(&e, names[i], "1"), -1);
    assert_int_equal(hbac_set(&e, "abcdefghijklmnopqrstuvwxyz01234", "1"), 0); /* 31: the longest */
    char longval[HBAC_VALUE_MAX + 1];
    memset(longval, 'v', HBAC_VALUE_MAX);
    longval[HBAC_VALUE_MAX] = 0;
    assert_int_equal(hbac_set(&e, "v", longval), -1);
    assert_int_equal(hbac_set(&e, "v", "a\nb"), -1);
    assert_int_equal(hbac_set(&e, "v", "\x7f"), -1);
    assert_null(hbac_get(&e, "v"));
    assert_int_equal(hbac_set(&e, "v", "x"), 0);
    assert_int_equal(hbac_set(&e, "v", "y"), 0); /* replaced, not added */
    assert_string_equal(hbac_get(&e, "v"), "y");
    assert_int_equal(e.n, 2);
    while (e.n < HBAC_MAX_FIELDS) {
        char nm[16];
        snprintf(nm, sizeof nm, "f%d", e.n);
        assert_int_equal(hbac_set(&e, nm, "1"), 0);
    }
    assert_int_equal(hbac_set(&e, "one_more", "1"), -1);
    /* a hand-damaged entry is not serialized or stored */
    char t[HBAC_FILE_MAX], why[200];
    e.name[3][0] = 'X';
    assert_int_equal(hbac_serialize(&e, t, sizeof t), -1);
    assert_int_equal(hbac_store(g_dir, &e, why, sizeof why), -1);
    /* a buffer too small */
    hbac_entry s;
    assert_int_equal(hbac_init(&s, "key"), 0);
    assert_int_equal(hbac_serialize(&s, t, 10), -1);
    /* HB_ALGO_CACHE: empty or unset is off */
    setenv("HB_ALGO_CACHE", "", 1);
    assert_null(hbac_dir());
    unsetenv("HB_ALGO_CACHE");
    assert_null(hbac_dir());
    setenv("HB_ALGO_CACHE", g_dir, 1);
    assert_string_equal(hbac_dir(), g_dir);
    unsetenv("HB_ALGO_CACHE");
}

/* Writer w stores key's entry `rounds` times with value "w<w>-<i>" padded by a random length. */
static void writer(const char *key, int w, int rounds)
{
    g_rng ^= (uint64_t)getpid() * 0x2545f4914f6cdd1dULL;
    for (int i = 0; i < rounds; i++) {
        hbac_entry e;
        char v[HBAC_VALUE_MAX], pad[200];
        rnd_text(pad, rnd_int(0, 150));
        for (char *p = pad; *p; p++) if (*p == ' ') *p = '.';
        snprintf(v, sizeof v, "w%d-%d %s", w, i, pad);
        if (hbac_init(&e, key) || hbac_set(&e, "who", v) || hbac_set_i64(&e, "round", i)) _exit(2);
        char why[300];
        if (hbac_store(g_dir, &e, why, sizeof why)) { fprintf(stderr, "writer %d: %s\n", w, why); _exit(3); }
    }
    _exit(0);
}

static void test_concurrent_writers(void **state)
{
    (void)state;
    const char *key = "hbac1;dev=test;op=conv2d;shape=concurrent";
    enum { NW = 3, ROUNDS = 400 };
    pid_t pid[NW];
    for (int w = 0; w < NW; w++) {
        pid[w] = fork();
        assert_true(pid[w] >= 0);
        if (pid[w] == 0) writer(key, w, ROUNDS);
    }
    int hits = 0, misses = 0, running = NW;
    int status[NW] = {0}, done[NW] = {0};
    while (running > 0) { /* read while they write, until all have exited */
        hbac_entry e;
        char why[300] = "";
        hbac_status st = hbac_load(g_dir, key, &e, why, sizeof why);
        if (st == HBAC_CORRUPT) fprintf(stderr, "torn read: %s\n", why);
        assert_int_not_equal(st, HBAC_CORRUPT);
        if (st == HBAC_MISS) {
            misses++;
            assert_int_equal(hits, 0); /* only before the first store */
        } else {
            hits++;
            const char *who = hbac_get(&e, "who");
            int64_t round = -1;
            assert_non_null(who);
            assert_int_equal(hbac_get_i64(&e, "round", 0, ROUNDS - 1, &round), 0);
            int w = -1, r = -1;
            assert_int_equal(sscanf(who, "w%d-%d", &w, &r), 2);
            assert_true(w >= 0 && w < NW && r == (int)round); /* one writer's whole entry */
        }
        for (int w = 0; w < NW; w++)
            if (!done[w] && waitpid(pid[w], &status[w], WNOHANG) == pid[w]) { done[w] = 1; running--; }
    }
    for (int w = 0; w < NW; w++) assert_true(WIFEXITED(status[w]) && WEXITSTATUS(status[w]) == 0);
    assert_true(hits > 0);
    hbac_entry e;
    char why[300];
    assert_int_equal(hbac_load(g_dir, key, &e, why, sizeof why), HBAC_HIT);
    int64_t round = -1;
    assert_int_equal(hbac_get_i64(&e, "round", 0, ROUNDS - 1, &round), 0);
    assert_true(round == ROUNDS - 1); /* each writer's last store is its round ROUNDS-1 */
    /* one entry, no temporary file left */
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int files = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            files++;
            assert_non_null(strstr(de->d_name, ".algo"));
            assert_null(strstr(de->d_name, ".tmp"));
        }
    closedir(d);
    assert_int_equal(files, 1);
    fprintf(stderr, "concurrent writers: %d reads during the writes were hits, %d misses before the first\n", hits, misses);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip_random, setup, teardown),
        cmocka_unit_test(test_numbers_read_back),
        cmocka_unit_test(test_every_flip_and_truncation_refused),
        cmocka_unit_test(test_strict_beyond_sum),
        cmocka_unit_test_setup_teardown(test_files_on_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
