/*
 * cuda_algocache.c - the algorithm-choice cache's entries and files (cuda_algocache.h): the strict
 * text format with its FNV-1a sum, lookups, and atomic stores (temporary file + rename). Plain C with
 * no CUDA and no harness call: built into hb_cuda.so and linked alone into tests/test_algocache.
 */
#include "cuda/cuda_algocache.h"
#include "cuda/cuda_config.h"
#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HBAC_FORMAT "hybench-algo-cache"
#define HBAC_VERSION 1

static void say(char *why, size_t whylen, const char *fmt, const char *a, const char *b)
{
    if (why && whylen) snprintf(why, whylen, fmt, a, b);
}

const char *hbac_dir(void)
{
    const char *d = hbc_cfg()->algo_cache;
    return d && *d ? d : NULL;
}

uint64_t hbac_fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* n bytes of s all printable ASCII (0x20..0x7e) */
static int printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) return 0;
    return 1;
}
static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= HBAC_NAME_MAX) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_')) return 0;
    return 1;
}
static int key_ok(const char *k) { size_t n = strlen(k); return n > 0 && n < HBAC_KEY_MAX && printable(k, n); }
static int value_ok(const char *v) { size_t n = strlen(v); return n < HBAC_VALUE_MAX && printable(v, n); }

int hbac_init(hbac_entry *e, const char *key)
{
    if (!e || !key || !key_ok(key)) return -1;
    memset(e, 0, sizeof *e);
    memcpy(e->key, key, strlen(key) + 1);
    return 0;
}

static int find(const hbac_entry *e, const char *name)
{
    for (int i = 0; i < e->n && i < HBAC_MAX_FIELDS; i++)
        if (!strcmp(e->name[i], name)) return i;
    return -1;
}

int hbac_set(hbac_entry *e, const char *name, const char *value)
{
    if (!e || !name || !value || !name_ok(name, strlen(name)) || !value_ok(value)) return -1;
    int i = find(e, name);
    if (i < 0) {
        if (e->n < 0 || e->n >= HBAC_MAX_FIELDS) return -1;
        i = e->n++;
        memcpy(e->name[i], name, strlen(name) + 1);
    }
    memcpy(e->value[i], value, strlen(value) + 1);
    return 0;
}

int hbac_set_i64(hbac_entry *e, const char *name, int64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    return hbac_set(e, name, b);
}

int hbac_set_f(hbac_entry *e, const char *name, double v)
{
    if (!isfinite(v)) return -1;
    char b[40];
    snprintf(b, sizeof b, "%.9g", v);
    return hbac_set(e, name, b);
}

const char *hbac_get(const hbac_entry *e, const char *name)
{
    if (!e || !name) return NULL;
    int i = find(e, name);
    return i < 0 ? NULL : e->value[i];
}

int hbac_get_i64(const hbac_entry *e, const char *name, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = hbac_get(e, name);
    if (!v || !*v || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))) return -1;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*end || errno == ERANGE || x < lo || x > hi) return -1;
    *out = (int64_t)x;
    return 0;
}

int hbac_get_f(const hbac_entry *e, const char *name, double *out)
{
    const char *v = hbac_get(e, name);
    if (!v || !*v || v[0] == ' ') return -1;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (*end || errno == ERANGE || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

/* The checksummed part of an entry: {"fields": {name: value, ...}, "key": key}, as jansson writes it
 * compact with sorted keys (one text for one content). New reference; NULL when out of memory. */
static json_t *body_of(const hbac_entry *e)
{
    json_t *f = json_object();
    for (int i = 0; f && i < e->n; i++)
        if (json_object_set_new(f, e->name[i], json_string(e->value[i]))) { json_decref(f); return NULL; }
    return f ? json_pack("{s:o,s:s}", "fields", f, "key", e->key) : NULL;
}

static uint64_t body_sum(json_t *body)
{
    char *t = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    uint64_t h = t ? hbac_fnv1a(t, strlen(t), HBAC_FNV_START) : 0;
    free(t);
    return h;
}

long hbac_serialize(const hbac_entry *e, char *buf, size_t len)
{
    if (!e || !buf || len == 0 || e->n < 0 || e->n > HBAC_MAX_FIELDS || memchr(e->key, 0, sizeof e->key) == NULL ||
        !key_ok(e->key))
        return -1;
    for (int i = 0; i < e->n; i++) {
        if (!memchr(e->name[i], 0, HBAC_NAME_MAX) || !memchr(e->value[i], 0, HBAC_VALUE_MAX)) return -1;
        if (!name_ok(e->name[i], strlen(e->name[i])) || !value_ok(e->value[i])) return -1;
        for (int k = 0; k < i; k++)
            if (!strcmp(e->name[k], e->name[i])) return -1;
    }
    json_t *o = body_of(e);
    if (!o) return -1;
    char sum[20];
    snprintf(sum, sizeof sum, "%016" PRIx64, body_sum(o));
    json_object_set_new(o, "format", json_string(HBAC_FORMAT));
    json_object_set_new(o, "version", json_integer(HBAC_VERSION));
    json_object_set_new(o, "sum", json_string(sum));
    char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    size_t n = t ? strlen(t) : 0;
    long r = t && n + 1 <= len && n <= HBAC_FILE_MAX ? (long)n : -1;
    if (r >= 0) memcpy(buf, t, n + 1);
    free(t);
    return r;
}

/* The fields of a parsed entry into out; 0, or -1 with why. */
static int fields_of(json_t *f, hbac_entry *out, char *why, size_t whylen)
{
    const char *name;
    json_t *v;
    if (!json_is_object(f)) { say(why, whylen, "%s%s", "\"fields\" is not an object", ""); return -1; }
    if (json_object_size(f) > HBAC_MAX_FIELDS) { say(why, whylen, "%s%s", "too many fields", ""); return -1; }
    json_object_foreach(f, name, v) {
        const char *val = json_string_value(v);
        if (!name_ok(name, strlen(name))) { say(why, whylen, "%s%s", "a bad field name", ""); return -1; }
        if (!val || json_string_length(v) != strlen(val) || !value_ok(val)) {
            say(why, whylen, "field %s: %s", name, "not a string of printable ASCII shorter than HBAC_VALUE_MAX");
            return -1;
        }
        memcpy(out->name[out->n], name, strlen(name) + 1);
        memcpy(out->value[out->n], val, strlen(val) + 1);
        out->n++;
    }
    return 0;
}

hbac_status hbac_parse(const char *text, size_t n, const char *want_key, hbac_entry *out, char *why, size_t whylen)
{
    if (!text || !out) { say(why, whylen, "%s%s", "no text", ""); return HBAC_CORRUPT; }
    if (n > HBAC_FILE_MAX) { say(why, whylen, "%s%s", "longer than any entry", ""); return HBAC_CORRUPT; }
    /* jansson: the whole text one JSON object, nothing after it, no duplicate member names */
    json_error_t je;
    json_t *o = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    hbac_status st = HBAC_CORRUPT;
    const char *fmt = json_string_value(json_object_get(o, "format")), *key = json_string_value(json_object_get(o, "key")),
               *sum = json_string_value(json_object_get(o, "sum"));
    json_t *ver = json_object_get(o, "version");
    memset(out, 0, sizeof *out);
    if (!o) say(why, whylen, "not a JSON entry: %s%s", je.text, "");
    else if (!json_is_object(o) || json_object_size(o) != 5 || !fmt || strcmp(fmt, HBAC_FORMAT) || !json_is_integer(ver) ||
             json_integer_value(ver) != HBAC_VERSION)
        say(why, whylen, "%s%s", "not an algo-cache entry of this version (format, version, key, fields, sum)", "");
    else if (!key || !key_ok(key) || json_string_length(json_object_get(o, "key")) != strlen(key)) say(why, whylen, "%s%s", "a bad key", "");
    else if (!sum || strlen(sum) != 16 || strspn(sum, "0123456789abcdef") != 16) say(why, whylen, "%s%s", "sum is not 16 lowercase hex digits", "");
    else if (fields_of(json_object_get(o, "fields"), out, why, whylen) == 0) {
        memcpy(out->key, key, strlen(key) + 1);
        json_t *body = body_of(out);
        char want[20];
        snprintf(want, sizeof want, "%016" PRIx64, body ? body_sum(body) : 0);
        json_decref(body);
        if (!body || strcmp(want, sum)) say(why, whylen, "%s%s", "checksum mismatch", "");
        else st = want_key && strcmp(out->key, want_key) ? HBAC_MISS : HBAC_HIT;
    }
    json_decref(o);
    return st;
}

char *hbac_path(const char *dir, const char *key, char *buf, size_t len)
{
    if (!dir || !key || !buf) return NULL;
    int k = snprintf(buf, len, "%s/%016" PRIx64 ".algo", dir, hbac_fnv1a(key, strlen(key), HBAC_FNV_START));
    return k > 0 && (size_t)k < len ? buf : NULL;
}

hbac_status hbac_load(const char *dir, const char *key, hbac_entry *out, char *why, size_t whylen)
{
    char path[4200];
    if (!hbac_path(dir, key, path, sizeof path)) { say(why, whylen, "%s%s", "directory name too long", ""); return HBAC_CORRUPT; }
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return HBAC_MISS;
        say(why, whylen, "cannot read %s: %s", path, strerror(errno));
        return HBAC_CORRUPT;
    }
    char *text = (char *)malloc(HBAC_FILE_MAX + 1);
    if (!text) { fclose(f); say(why, whylen, "%s%s", "out of memory", ""); return HBAC_CORRUPT; }
    size_t n = fread(text, 1, HBAC_FILE_MAX + 1, f);
    int err = ferror(f);
    fclose(f);
    hbac_status st;
    if (err) { say(why, whylen, "cannot read %s%s", path, ""); st = HBAC_CORRUPT; }
    else st = hbac_parse(text, n, key, out, why, whylen);
    free(text);
    return st;
}

/* mkdir -p path (mode 0755); 0 or -1 with errno */
static int make_dirs(const char *dir)
{
    char p[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p) { errno = ENAMETOOLONG; return -1; }
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++)
        if (p[i] == '/' || p[i] == 0) {
            char keep = p[i];
            p[i] = 0;
            if (mkdir(p, 0755) && errno != EEXIST) return -1;
            p[i] = keep;
        }
    struct stat st;
    if (stat(dir, &st)) return -1;
    if (!S_ISDIR(st.st_mode)) { errno = ENOTDIR; return -1; }
    return 0;
}

int hbac_store(const char *dir, const hbac_entry *e, char *why, size_t whylen)
{
    static unsigned long counter;
    char *text = (char *)malloc(HBAC_FILE_MAX);
    if (!text) { say(why, whylen, "%s%s", "out of memory", ""); return -1; }
    long n = e ? hbac_serialize(e, text, HBAC_FILE_MAX) : -1;
    if (n < 0) { free(text); say(why, whylen, "%s%s", "entry not valid (a key, name or value not allowed)", ""); return -1; }
    char path[4200], tmp[4300];
    if (!dir || !hbac_path(dir, e->key, path, sizeof path)) { free(text); say(why, whylen, "%s%s", "directory name too long", ""); return -1; }
    if (make_dirs(dir)) { free(text); say(why, whylen, "cannot create %s: %s", dir, strerror(errno)); return -1; }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(tmp, sizeof tmp, "%s/.%016" PRIx64 ".tmp.%ld.%lu.%ld", dir, hbac_fnv1a(e->key, strlen(e->key), HBAC_FNV_START),
             (long)getpid(), __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED), (long)ts.tv_nsec);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) { say(why, whylen, "cannot write %s: %s", tmp, strerror(errno)); free(text); return -1; }
    size_t done = 0;
    int err = 0;
    while (done < (size_t)n) {
        ssize_t w = write(fd, text + done, (size_t)n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { err = w < 0 ? errno : EIO; break; }
        done += (size_t)w;
    }
    if (!err && fsync(fd)) err = errno;
    if (close(fd) && !err) err = errno;
    if (!err && rename(tmp, path)) err = errno;
    free(text);
    if (err) {
        unlink(tmp);
        say(why, whylen, "cannot write %s: %s", path, strerror(err));
        return -1;
    }
    return 0;
}
