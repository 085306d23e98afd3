/*
 * test_gguf.c - harness/workload/gguf.c (reader) and gguf_write.c (writer).
 *  - round trips: files written with random metadata (every value type, string arrays, arrays of
 *    every fixed-size type, arrays of arrays) and random tensors of every supported type (f32, f16,
 *    bf16, q8_0, q4_k, q5_k, q6_k) and one that hybench does not compute (q4_0), versions 2 and 3,
 *    alignments 1..256; read back, every field and byte compared, the layout (aligned data,
 *    file size) checked against a size computed here; the typed getters and their refusals;
 *  - truncation: two small files cut at every length, each cut refused with HB_EINVAL and "PATH:
 *    offset N:" where N is the field the cut falls in as a model of the format written here says
 *    (or the header's counts, when the cut leaves them no room), and accepted once the last
 *    tensor's data is whole;
 *  - hand-corrupted files (bytes patched into a valid file): each refused with the offset of the
 *    patched field; the writer's own refusals; files that cannot be read (HB_EDEVICE).
 * Files go to a temporary directory under $TMPDIR (or /tmp), removed at the end.
 */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/quant.h"
#include "test_files.h"
#include "workload/gguf.h"

static char dir[256];
static char path[300];

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static unsigned below(unsigned n) { return (unsigned)(next_u64() % n); }

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hb_gguf.XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.gguf", dir);
    return 0;
}
static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void le32(uint8_t *b, uint32_t v) { for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i)); }
static void le64(uint8_t *b, uint64_t v) { for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i)); }

static uint8_t *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n ? *n : 1);
    assert_true(fread(b, 1, *n, f) == *n);
    fclose(f);
    return b;
}
static void spit(const char *p, const uint8_t *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_true(n == 0 || fwrite(b, 1, n, f) == n);
    assert_int_equal(fclose(f), 0);
}

/* Open path and expect HB_EINVAL with "PATH: offset N: " (N = want). */
static void expect_refused(uint64_t want, const char *what)
{
    hb_gguf *g = (hb_gguf *)0x1;
    char err[512], pre[400];
    memset(err, 'X', sizeof err);
    const hb_status st = hb_gguf_open(path, &g, err, sizeof err);
    assert_null(g);
    snprintf(pre, sizeof pre, "%s: offset %" PRIu64 ": ", path, want);
    if (st != HB_EINVAL || strncmp(err, pre, strlen(pre)) || strlen(err) <= strlen(pre))
        fail_msg("%s: status %d, message \"%s\", wanted HB_EINVAL at offset %" PRIu64, what, (int)st, err, want);
    if (getenv("HB_TEST_VERBOSE")) printf("  %s: %s\n", what, err);
}

/* ---- round trips ---- */
static const uint32_t TYPES[] = { HB_GGUF_F32, HB_GGUF_F16, HB_GGUF_BF16, HB_GGUF_Q8_0, HB_GGUF_Q4_K, HB_GGUF_Q5_K, HB_GGUF_Q6_K, 2 /* q4_0 */ };

typedef struct rkv { char key[40]; uint32_t type; uint8_t enc[512]; size_t len; } rkv;
typedef struct rtensor { char name[64]; int n_dims; int64_t ne[4]; uint32_t type; uint8_t *data; size_t bytes; } rtensor;

/* A random value of type t, encoded (depth: arrays around it). */
static size_t enc_value(uint8_t *b, uint32_t t, int depth)
{
    static const int sz[] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    if (sz[t]) {
        for (int i = 0; i < sz[t]; i++) b[i] = (uint8_t)next_u64();
        if (t == HB_GGUF_V_BOOL) b[0] &= 1;
        return (size_t)sz[t];
    }
    if (t == HB_GGUF_V_STRING) {
        const size_t n = below(12);
        le64(b, n);
        for (size_t i = 0; i < n; i++) b[8 + i] = (uint8_t)(1 + below(255)); /* any bytes but NUL, UTF-8 or not */
        return 8 + n;
    }
    uint32_t et;
    do et = below(HB_GGUF_V_COUNT); while (et == HB_GGUF_V_ARRAY && depth >= 2);
    const size_t n = below(5);
    le32(b, et);
    le64(b + 4, n);
    size_t k = 12;
    for (size_t i = 0; i < n; i++) k += enc_value(b + k, et, depth + 1);
    return k;
}

/* Compare a value read back with its encoding (recursively through hb_gguf_array_elem). */
static size_t check_value(const hb_gguf_value *v, const uint8_t *enc, uint32_t t)
{
    assert_int_equal(v->type, t);
    const int sz = hb_gguf_vtype_size(t);
    if (sz) {
        assert_int_equal(v->n, 1);
        assert_memory_equal(v->p, enc, (size_t)sz);
        return (size_t)sz;
    }
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)enc[i] << (8 * i);
    if (t == HB_GGUF_V_STRING) {
        assert_int_equal(v->n, n);
        if (n) assert_memory_equal(v->p, enc + 8, (size_t)n);
        return 8 + (size_t)n;
    }
    const uint32_t et = enc[0] | (uint32_t)enc[1] << 8;
    n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)enc[4 + i] << (8 * i);
    assert_int_equal(v->elem_type, et);
    assert_int_equal(v->n, n);
    size_t k = 12;
    for (uint64_t i = 0; i < n; i++) {
        hb_gguf_value e;
        memset(&e, 0xA5, sizeof e);
        assert_int_equal(hb_gguf_array_elem(v, i, &e), HB_OK);
        k += check_value(&e, enc + k, et);
    }
    hb_gguf_value e;
    assert_int_equal(hb_gguf_array_elem(v, n, &e), HB_EINVAL);
    return k;
}

static void fill_tensor(rtensor *t, int i)
{
    int bb;
    const int blck = hb_gguf_type_block(t->type, &bb);
    snprintf(t->name, sizeof t->name, "blk.%d.w%u", i, (unsigned)below(1000));
    t->n_dims = 1 + (int)below(4);
    int64_t count = 1;
    for (int d = 0; d < 4; d++) {
        t->ne[d] = d >= t->n_dims ? 1 : d == 0 ? blck * (1 + (int64_t)below(blck == 1 ? 40 : 3)) : 1 + (int64_t)below(3);
        count *= t->ne[d];
    }
    t->bytes = (size_t)(count / blck * bb);
    t->data = malloc(t->bytes);
    const int dt = hb_gguf_type_dtype(t->type);
    if (dt >= 0 && hb_dtype_is_quant((hb_dtype)dt))
        assert_int_equal(hb_quant_fill_random((hb_dtype)dt, t->data, count, (unsigned long long)i, 3, 1.0 / 64), HB_OK);
    else
        for (size_t k = 0; k < t->bytes; k++) t->data[k] = (uint8_t)next_u64();
}

static void roundtrip_once(int round)
{
    const uint32_t version = 2 + (uint32_t)(round & 1);
    const uint32_t aligns[] = { 0, 1, 8, 16, 32, 64, 256 };
    const uint32_t align = aligns[round % 7], A = align ? align : 32;
    hb_gguf_writer *w;
    assert_int_equal(hb_gguf_writer_new(version, align, &w), HB_OK);
    enum { NKV = 24, NT = 10 };
    static rkv kv[NKV];
    rtensor t[NT];
    for (int i = 0; i < NKV; i++) {
        snprintf(kv[i].key, sizeof kv[i].key, "r%d.key_%d.%u", round, i, (unsigned)below(99));
        kv[i].type = i < HB_GGUF_V_COUNT ? (uint32_t)i : below(HB_GGUF_V_COUNT); /* every type at least once */
        kv[i].len = enc_value(kv[i].enc, kv[i].type, 0);
        assert_int_equal(hb_gguf_add_raw(w, kv[i].key, kv[i].type, kv[i].enc, kv[i].len), HB_OK);
    }
    /* the typed adds */
    const char *sv[] = { "alpha", "", "gamma delta" };
    const uint16_t a16[] = { 1, 65535, 300 };
    assert_int_equal(hb_gguf_add_u32(w, "t.u32", 4000000000u), HB_OK);
    assert_int_equal(hb_gguf_add_u64(w, "t.u64", 0x123456789ABCDEFull), HB_OK);
    assert_int_equal(hb_gguf_add_i32(w, "t.i32", -77), HB_OK);
    assert_int_equal(hb_gguf_add_f32(w, "t.f32", 1.5e-5f), HB_OK);
    assert_int_equal(hb_gguf_add_bool(w, "t.bool", 1), HB_OK);
    assert_int_equal(hb_gguf_add_str(w, "t.str", "llama"), HB_OK);
    assert_int_equal(hb_gguf_add_str_array(w, "t.strs", sv, 3), HB_OK);
    assert_int_equal(hb_gguf_add_array(w, "t.u16s", HB_GGUF_V_U16, a16, 3), HB_OK);
    for (int i = 0; i < NT; i++) {
        t[i].type = TYPES[i % 8];
        fill_tensor(&t[i], i);
        assert_int_equal(hb_gguf_add_tensor(w, t[i].name, t[i].n_dims, t[i].ne, t[i].type, t[i].data, t[i].bytes), HB_OK);
    }
    char err[512] = "x";
    assert_int_equal(hb_gguf_write(w, path, err, sizeof err), HB_OK);
    hb_gguf_writer_free(w);

    hb_gguf *g = NULL;
    memset(err, 'X', sizeof err);
    const hb_status st = hb_gguf_open(path, &g, err, sizeof err);
    if (st != HB_OK) fail_msg("round %d: %s", round, err);
    assert_string_equal(err, "");
    assert_int_equal(hb_gguf_version(g), version);
    assert_int_equal(hb_gguf_alignment(g), A);
    const size_t base = align ? 1 : 0; /* general.alignment first when an alignment was given */
    assert_int_equal(hb_gguf_n_kv(g), base + NKV + 8);
    if (align) {
        uint32_t a = 0;
        assert_string_equal(hb_gguf_kv_key(g, 0), "general.alignment");
        assert_int_equal(hb_gguf_get_u32(g, "general.alignment", &a, err, sizeof err), HB_OK);
        assert_int_equal(a, align);
    }
    for (int i = 0; i < NKV; i++) {
        assert_string_equal(hb_gguf_kv_key(g, base + (size_t)i), kv[i].key);
        const hb_gguf_value *v = hb_gguf_find_kv(g, kv[i].key);
        assert_ptr_equal(v, hb_gguf_kv_value(g, base + (size_t)i));
        assert_int_equal(check_value(v, kv[i].enc, kv[i].type), kv[i].len);
    }
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    float f32;
    const char *s;
    size_t sl;
    uint32_t et;
    uint64_t n;
    assert_int_equal(hb_gguf_get_u32(g, "t.u32", &u32, err, sizeof err), HB_OK);
    assert_int_equal(u32, 4000000000u);
    assert_int_equal(hb_gguf_get_u64(g, "t.u64", &u64, err, sizeof err), HB_OK);
    assert_true(u64 == 0x123456789ABCDEFull);
    assert_int_equal(hb_gguf_get_u64(g, "t.u32", &u64, err, sizeof err), HB_OK); /* u32 where u64 is asked: taken */
    assert_true(u64 == 4000000000u);
    assert_int_equal(hb_gguf_get_i32(g, "t.i32", &i32, err, sizeof err), HB_OK);
    assert_int_equal(i32, -77);
    assert_int_equal(hb_gguf_get_f32(g, "t.f32", &f32, err, sizeof err), HB_OK);
    assert_true(f32 == 1.5e-5f);
    assert_int_equal(hb_gguf_get_str(g, "t.str", &s, &sl, err, sizeof err), HB_OK);
    assert_int_equal(sl, 5);
    assert_memory_equal(s, "llama", 5);
    assert_int_equal(hb_gguf_get_array(g, "t.strs", &et, &n, err, sizeof err), HB_OK);
    assert_int_equal(et, HB_GGUF_V_STRING);
    assert_int_equal(n, 3);
    for (uint64_t i = 0; i < 3; i++) {
        hb_gguf_value e;
        assert_int_equal(hb_gguf_array_elem(hb_gguf_find_kv(g, "t.strs"), i, &e), HB_OK);
        assert_int_equal(e.n, strlen(sv[i]));
        assert_memory_equal(e.p, sv[i], e.n);
    }
    hb_gguf_value e;
    assert_int_equal(hb_gguf_array_elem(hb_gguf_find_kv(g, "t.u16s"), 1, &e), HB_OK);
    assert_int_equal(hb_gguf_value_u64(&e, &u64), 0);
    assert_int_equal(u64, 65535);
    int bv = -1;
    assert_int_equal(hb_gguf_value_bool(hb_gguf_find_kv(g, "t.bool"), &bv), 0);
    assert_int_equal(bv, 1);
    /* refusals of the getters: the offset is the value's */
    char want[400];
    u32 = 12345;
    assert_int_equal(hb_gguf_get_u32(g, "t.i32", &u32, err, sizeof err), HB_EINVAL);
    assert_int_equal(u32, 12345);
    snprintf(want, sizeof want, "%s: offset %" PRIu64 ": key t.i32 is i32 -77", path, hb_gguf_find_kv(g, "t.i32")->offset);
    assert_true(strncmp(err, want, strlen(want)) == 0);
    assert_int_equal(hb_gguf_get_u32(g, "t.u64", &u32, err, sizeof err), HB_EINVAL); /* does not fit */
    assert_int_equal(hb_gguf_get_f32(g, "t.u32", &f32, err, sizeof err), HB_EINVAL);
    assert_int_equal(hb_gguf_get_str(g, "t.u32", &s, &sl, err, sizeof err), HB_EINVAL);
    assert_int_equal(hb_gguf_get_array(g, "t.str", &et, &n, err, sizeof err), HB_EINVAL);
    assert_int_equal(hb_gguf_get_u32(g, "no.such.key", &u32, err, sizeof err), HB_EINVAL);
    snprintf(want, sizeof want, "%s: no metadata key no.such.key", path);
    assert_string_equal(err, want);
    assert_null(hb_gguf_find_kv(g, "no.such.key"));
    assert_null(hb_gguf_kv_key(g, hb_gguf_n_kv(g)));

    /* tensors */
    assert_int_equal(hb_gguf_n_tensors(g), NT);
    uint64_t off = 0, info_end = 24;
    for (int i = 0; i < NT; i++) {
        const hb_gguf_tensor *r = hb_gguf_tensor_at(g, (size_t)i);
        assert_string_equal(r->name, t[i].name);
        assert_ptr_equal(hb_gguf_find_tensor(g, t[i].name), r);
        assert_int_equal(r->n_dims, t[i].n_dims);
        for (int d = 0; d < 4; d++) assert_int_equal(r->ne[d], t[i].ne[d]);
        assert_int_equal(r->ggml_type, t[i].type);
        assert_int_equal(r->dtype, hb_gguf_type_dtype(t[i].type));
        assert_int_equal(r->bytes, t[i].bytes);
        assert_int_equal(r->offset, off);
        assert_int_equal(r->file_offset, hb_gguf_data_offset(g) + off);
        assert_int_equal(r->file_offset % A, 0);
        assert_memory_equal(r->data, t[i].data, t[i].bytes);
        off += (t[i].bytes + A - 1) / A * A;
        info_end = r->info_offset + 8 + strlen(r->name) + 4 + 8 * (uint64_t)r->n_dims + 12;
        const hb_gguf_tensor *got = NULL;
        const hb_status gs = hb_gguf_get_tensor(g, t[i].name, -1, &got, err, sizeof err);
        if (t[i].type == 2) {
            assert_int_equal(gs, HB_ESKIP);
            assert_non_null(strstr(err, "q4_0, which hybench does not compute"));
            assert_int_equal(r->dtype, -1);
        } else {
            assert_int_equal(gs, HB_OK);
            assert_ptr_equal(got, r);
            const int other = r->dtype == HB_F32 ? HB_F16 : HB_F32;
            assert_int_equal(hb_gguf_get_tensor(g, t[i].name, other, &got, err, sizeof err), HB_EINVAL);
        }
    }
    assert_int_equal(hb_gguf_data_offset(g), (info_end + A - 1) / A * A);
    assert_null(hb_gguf_find_tensor(g, "nope"));
    assert_null(hb_gguf_tensor_at(g, NT));
    size_t fsize;
    uint8_t *bytes = slurp(path, &fsize);
    free(bytes);
    assert_int_equal(fsize, hb_gguf_data_offset(g) + off); /* padded after the last tensor, as ggml writes */
    hb_gguf_close(g);
    for (int i = 0; i < NT; i++) free(t[i].data);
}

static void test_roundtrip(void **state)
{
    (void)state;
    for (int round = 0; round < 28; round++) roundtrip_once(round);
}

/* Arrays nested HB_GGUF_MAX_NEST deep are read, one more is refused at the innermost array. */
static void test_nesting(void **state)
{
    (void)state;
    for (int depth = HB_GGUF_MAX_NEST; depth <= HB_GGUF_MAX_NEST + 1; depth++) {
        uint8_t enc[16 * 12];
        for (int k = 0; k < depth; k++) {
            le32(enc + 12 * k, k + 1 < depth ? HB_GGUF_V_ARRAY : HB_GGUF_V_U8);
            le64(enc + 12 * k + 4, k + 1 < depth ? 1 : 0);
        }
        hb_gguf_writer *w;
        char err[400];
        assert_int_equal(hb_gguf_writer_new(3, 0, &w), HB_OK);
        assert_int_equal(hb_gguf_add_raw(w, "deep", HB_GGUF_V_ARRAY, enc, 12 * (size_t)depth), HB_OK);
        assert_int_equal(hb_gguf_write(w, path, err, sizeof err), HB_OK);
        hb_gguf_writer_free(w);
        const uint64_t v0 = 24 + 8 + 4 + 4;
        if (depth > HB_GGUF_MAX_NEST) { expect_refused(v0 + 12 * HB_GGUF_MAX_NEST, "nesting"); continue; }
        hb_gguf *g;
        assert_int_equal(hb_gguf_open(path, &g, err, sizeof err), HB_OK);
        hb_gguf_value v = *hb_gguf_find_kv(g, "deep"), e;
        for (int k = 0; k + 1 < depth; k++) {
            assert_int_equal(v.n, 1);
            assert_int_equal(hb_gguf_array_elem(&v, 0, &e), HB_OK);
            assert_int_equal(e.offset, v0 + 12 * (uint64_t)(k + 1));
            v = e;
        }
        assert_int_equal(v.elem_type, HB_GGUF_V_U8);
        assert_int_equal(v.n, 0);
        hb_gguf_close(g);
    }
}


/* ---- truncation and corruption: a model of two small files ----
 * The model lists the file's fields in order as [start, end) with the offset an error inside them
 * must name: the field's own start, or (for a string's bytes) its length's, (for a fixed-size
 * array's elements) its count's. Extra rules, from docs/gguf.md: the header's counts are refused
 * first when the bytes after the header cannot hold tensor_count x 24 + metadata_kv_count x 13; a
 * string array whose count x 8 exceeds the bytes left after the count is refused at the count. */
typedef struct span { uint64_t a, b, rep; } span;
typedef struct model {
    span s[64];
    int n;
    uint64_t cur, nt, nkv, valid_from;
    uint64_t sa_first, sa_n, sa_count; /* the string array rule */
} model;
static uint64_t F(model *m, uint64_t len, uint64_t rep) /* rep ~0: the field's start */
{
    const uint64_t a = m->cur;
    m->s[m->n++] = (span){ a, a + len, rep == ~0ull ? a : rep };
    m->cur += len;
    return a;
}
static uint64_t expected(const model *m, uint64_t L)
{
    if (L >= 24) {
        if (m->nt > (L - 24) / 24) return 8;
        if (m->nkv > (L - 24 - 24 * m->nt) / 13) return 16;
    }
    if (m->sa_n && L >= m->sa_first && L - m->sa_first < 8 * m->sa_n) return m->sa_count;
    for (int i = 0; i < m->n; i++)
        if (L >= m->s[i].a && L < m->s[i].b) return m->s[i].rep;
    fail_msg("no field holds byte %" PRIu64, L);
    return 0;
}

/* File A's positions the corruptions patch */
typedef struct posA { uint64_t kl[3], ktype[3], vlen_a, et_b, cnt_b, nl[2], nd[2], ne[2][2], ty[2], off[2], end, D; } posA;

static void write_A(model *m, posA *P)
{
    hb_gguf_writer *w;
    char err[400];
    const uint32_t u[3] = { 0x201, 2, 3 }; /* bytes 01 02 00 00 ...: as bools, element 1 is bad */
    const char *sv[2] = { "p", "qq" };
    static float t0[8];
    static uint8_t t1[68];
    hb_quant_fill_random(HB_Q8_0, t1, 64, 1, 1, 1.0);
    assert_int_equal(hb_gguf_writer_new(3, 0, &w), HB_OK);
    assert_int_equal(hb_gguf_add_str(w, "k.a", "xyz"), HB_OK);
    assert_int_equal(hb_gguf_add_array(w, "k.b", HB_GGUF_V_U32, u, 3), HB_OK);
    assert_int_equal(hb_gguf_add_str_array(w, "k.c", sv, 2), HB_OK);
    assert_int_equal(hb_gguf_add_tensor(w, "t0", 1, (int64_t[]){ 8 }, HB_GGUF_F32, t0, 32), HB_OK);
    assert_int_equal(hb_gguf_add_tensor(w, "t1", 2, (int64_t[]){ 32, 2 }, HB_GGUF_Q8_0, t1, 68), HB_OK);
    assert_int_equal(hb_gguf_write(w, path, err, sizeof err), HB_OK);
    hb_gguf_writer_free(w);
    memset(m, 0, sizeof *m);
    m->nt = 2, m->nkv = 3;
    const uint64_t S = ~0ull;
    F(m, 4, S), F(m, 4, S), F(m, 8, S), F(m, 8, S);
    P->kl[0] = F(m, 8, S), F(m, 3, P->kl[0]), P->ktype[0] = F(m, 4, S);
    P->vlen_a = F(m, 8, S), F(m, 3, P->vlen_a);
    P->kl[1] = F(m, 8, S), F(m, 3, P->kl[1]), P->ktype[1] = F(m, 4, S);
    P->et_b = F(m, 4, S), P->cnt_b = F(m, 8, S), F(m, 12, P->cnt_b);
    P->kl[2] = F(m, 8, S), F(m, 3, P->kl[2]), P->ktype[2] = F(m, 4, S);
    F(m, 4, S), m->sa_count = F(m, 8, S), m->sa_n = 2, m->sa_first = m->cur;
    uint64_t e = F(m, 8, S);
    F(m, 1, e), e = F(m, 8, S), F(m, 2, e);
    for (int t = 0; t < 2; t++) {
        P->nl[t] = F(m, 8, S), F(m, 2, P->nl[t]), P->nd[t] = F(m, 4, S);
        for (int d = 0; d <= t; d++) P->ne[t][d] = F(m, 8, S);
        P->ty[t] = F(m, 4, S), P->off[t] = F(m, 8, S);
    }
    P->end = m->cur, P->D = (m->cur + 31) / 32 * 32;
    if (P->D > P->end) F(m, P->D - P->end, P->end);
    F(m, 32, P->off[0]), F(m, 68, P->off[1]);
    m->valid_from = m->cur;
}
static void write_B(model *m)
{
    hb_gguf_writer *w;
    char err[400];
    const char *sv[6] = { "tok_zero__", "tok_one___", "tok_two___", "tok_three_", "tok_four__", "tok_five__" };
    assert_int_equal(hb_gguf_writer_new(2, 0, &w), HB_OK);
    assert_int_equal(hb_gguf_add_str_array(w, "tokenizer.ggml.tokens", sv, 6), HB_OK);
    assert_int_equal(hb_gguf_write(w, path, err, sizeof err), HB_OK);
    hb_gguf_writer_free(w);
    memset(m, 0, sizeof *m);
    m->nt = 0, m->nkv = 1;
    const uint64_t S = ~0ull;
    F(m, 4, S), F(m, 4, S), F(m, 8, S), F(m, 8, S);
    const uint64_t kl = F(m, 8, S);
    F(m, 21, kl), F(m, 4, S), F(m, 4, S), m->sa_count = F(m, 8, S), m->sa_n = 6, m->sa_first = m->cur;
    for (int i = 0; i < 6; i++) {
        const uint64_t e = F(m, 8, S);
        F(m, 10, e);
    }
    m->valid_from = m->cur;
}

static void truncate_all(const model *m, const char *name)
{
    size_t n;
    uint8_t *b = slurp(path, &n);
    assert_true(n >= m->valid_from);
    char what[64];
    for (size_t L = 0; L <= n; L++) {
        spit(path, b, L);
        if (L >= m->valid_from) {
            hb_gguf *g;
            char err[400];
            if (hb_gguf_open(path, &g, err, sizeof err) != HB_OK) fail_msg("%s cut at %zu (valid): %s", name, L, err);
            hb_gguf_close(g);
            continue;
        }
        snprintf(what, sizeof what, "%s cut at %zu", name, L);
        expect_refused(expected(m, L), what);
    }
    free(b);
}

static void test_truncation(void **state)
{
    (void)state;
    model m;
    posA P;
    write_A(&m, &P);
    truncate_all(&m, "A");
    write_B(&m);
    truncate_all(&m, "B");
}

/* Write file A with one patch (n bytes at off, little-endian value v) and expect a refusal at want. */
static void patchA(uint64_t off, int n, uint64_t v, uint64_t want, const char *what)
{
    model m;
    posA P;
    write_A(&m, &P);
    size_t sz;
    uint8_t *b = slurp(path, &sz);
    for (int i = 0; i < n; i++) b[off + (uint64_t)i] = (uint8_t)(v >> (8 * i));
    spit(path, b, sz);
    free(b);
    expect_refused(want, what);
}

static void test_corrupt(void **state)
{
    (void)state;
    model m;
    posA P;
    write_A(&m, &P);
    patchA(0, 1, 'X', 0, "magic");
    patchA(4, 4, 1, 4, "version 1");
    patchA(4, 4, 4, 4, "version 4");
    patchA(4, 4, 0x03000000u, 4, "big-endian");
    patchA(8, 8, 1ull << 40, 8, "tensor_count");
    patchA(16, 8, 1ull << 40, 16, "metadata_kv_count");
    patchA(16, 8, UINT64_MAX, 16, "metadata_kv_count max");
    if (P.D - P.end >= 8) patchA(8, 8, 3, P.end, "one tensor more than written (its name length 0 from the padding)");
    patchA(P.vlen_a, 8, 1ull << 50, P.vlen_a, "string length");
    patchA(P.vlen_a, 8, UINT64_MAX, P.vlen_a, "string length max");
    patchA(P.cnt_b, 8, 1ull << 60, P.cnt_b, "array count");
    patchA(P.cnt_b, 8, UINT64_MAX, P.cnt_b, "array count max");
    patchA(P.et_b, 4, 13, P.et_b, "array element type");
    patchA(P.ktype[0], 4, 13, P.ktype[0], "value type");
    patchA(P.ktype[0], 4, HB_GGUF_V_BOOL, P.vlen_a, "bool of value 3");
    patchA(P.et_b, 4, HB_GGUF_V_BOOL, P.cnt_b + 8 + 1, "bool array element 1 of value 2");
    patchA(P.kl[0], 8, 0, P.kl[0], "empty key");
    patchA(P.kl[0], 8, 70000, P.kl[0], "key over 65535 bytes (runs past the end first)");
    patchA(P.kl[0] + 8, 1, ' ', P.kl[0] + 8, "key byte");
    patchA(P.kl[1] + 8 + 2, 1, 'a', P.kl[1], "duplicate key");
    patchA(P.nd[0], 4, 5, P.nd[0], "n_dims 5");
    patchA(P.nd[0], 4, 0, P.nd[0], "n_dims 0");
    patchA(P.ne[0][0], 8, 0, P.ne[0][0], "zero dim");
    patchA(P.ne[1][1], 8, 1ull << 62, P.ne[1][1], "dims overflow");
    patchA(P.ne[1][0], 8, (1ull << 63) + 32, P.ne[1][0], "a dim over INT64_MAX");
    patchA(P.ne[1][0], 8, 48, P.ne[1][0], "ne0 not a multiple of the block");
    patchA(P.ty[0], 4, 4, P.ty[0], "removed ggml type 4");
    patchA(P.ty[0], 4, 31, P.ty[0], "removed ggml type 31");
    patchA(P.ty[0], 4, 1000, P.ty[0], "unknown ggml type");
    patchA(P.off[1], 8, 33, P.off[1], "unaligned offset");
    patchA(P.off[1], 8, 1ull << 20, P.off[1], "offset past the data");
    patchA(P.off[1], 8, UINT64_MAX - 31, P.off[1], "offset near 2^64");
    patchA(P.off[1], 8, 64, P.off[1], "data running past the end");
    patchA(P.off[1], 8, 0, P.off[1], "overlap, same start");
    patchA(P.off[0], 8, 32, P.off[1], "overlap, t0 inside t1");
    patchA(P.nl[1] + 9, 1, '0', P.nl[1], "duplicate tensor name");
    patchA(P.nl[0] + 9, 1, 0, P.nl[0] + 9, "NUL in a tensor name");
    patchA(P.nl[0], 8, 65, P.nl[0], "tensor name of 65 bytes");
    patchA(P.nl[0], 8, 0, P.nl[0], "empty tensor name");
    /* alignment: file C with general.alignment 64 (the first key: its value at 24 + 8 + 17 + 4 = 53), one
     * tensor info (33 bytes, ending at 90), the data at 128, 64 bytes: 192 in all */
    for (int k = 0; k < 5; k++) {
        hb_gguf_writer *w;
        char err[400];
        static float x[16];
        assert_int_equal(hb_gguf_writer_new(3, 64, &w), HB_OK);
        assert_int_equal(hb_gguf_add_tensor(w, "x", 1, (int64_t[]){ 16 }, HB_GGUF_F32, x, 64), HB_OK);
        assert_int_equal(hb_gguf_write(w, path, err, sizeof err), HB_OK);
        hb_gguf_writer_free(w);
        size_t sz;
        uint8_t *b = slurp(path, &sz);
        assert_int_equal(sz, 192);
        assert_memory_equal(b + 32, "general.alignment", 17);
        if (k == 0) le32(b + 53, 24);             /* not a power of two */
        if (k == 1) le32(b + 53, 0);
        if (k == 2) le32(b + 49, HB_GGUF_V_I32);  /* the right value, the wrong type */
        if (k == 3) le32(b + 53, 128);            /* valid: the data still starts at 128 */
        if (k == 4) le32(b + 53, 256);            /* the data would start at 256, past the end */
        spit(path, b, sz);
        free(b);
        if (k < 3) { expect_refused(53, "general.alignment"); continue; }
        if (k == 4) { expect_refused(90, "data section past the end"); continue; }
        hb_gguf *g;
        assert_int_equal(hb_gguf_open(path, &g, err, sizeof err), HB_OK);
        assert_int_equal(hb_gguf_alignment(g), 128);
        assert_int_equal(hb_gguf_data_offset(g), 128);
        hb_gguf_close(g);
    }
}

static void test_writer_refusals(void **state)
{
    (void)state;
    hb_gguf_writer *w;
    static float x[64];
    char err[400];
    assert_int_equal(hb_gguf_writer_new(1, 0, &w), HB_EINVAL);
    assert_int_equal(hb_gguf_writer_new(4, 0, &w), HB_EINVAL);
    assert_int_equal(hb_gguf_writer_new(3, 24, &w), HB_EINVAL);
    assert_int_equal(hb_gguf_writer_new(3, 0, &w), HB_OK);
    assert_int_equal(hb_gguf_add_u32(w, "a", 1), HB_OK);
    assert_int_equal(hb_gguf_add_u32(w, "a", 2), HB_EINVAL);
    assert_int_equal(hb_gguf_add_u32(w, "general.alignment", 64), HB_EINVAL);
    assert_int_equal(hb_gguf_add_u32(w, "", 1), HB_EINVAL);
    assert_int_equal(hb_gguf_add_u32(w, "a b", 1), HB_EINVAL);
    assert_int_equal(hb_gguf_add_bool(w, "b", 2), HB_EINVAL);
    assert_int_equal(hb_gguf_add_array(w, "c", HB_GGUF_V_STRING, x, 1), HB_EINVAL);
    assert_int_equal(hb_gguf_add_array(w, "c", HB_GGUF_V_BOOL, (uint8_t[]){ 0, 2 }, 2), HB_EINVAL);
    char n64[65];
    memset(n64, 'n', 64);
    n64[64] = 0;
    assert_int_equal(hb_gguf_add_tensor(w, n64, 1, (int64_t[]){ 4 }, HB_GGUF_F32, x, 16), HB_EINVAL);
    n64[63] = 0;
    assert_int_equal(hb_gguf_add_tensor(w, n64, 1, (int64_t[]){ 4 }, HB_GGUF_F32, x, 16), HB_OK); /* 63: ggml's limit */
    assert_int_equal(hb_gguf_add_tensor(w, n64, 1, (int64_t[]){ 4 }, HB_GGUF_F32, x, 16), HB_EINVAL);
    assert_int_equal(hb_gguf_add_tensor(w, "t", 0, (int64_t[]){ 4 }, HB_GGUF_F32, x, 16), HB_EINVAL);
    assert_int_equal(hb_gguf_add_tensor(w, "t", 5, (int64_t[]){ 4, 1, 1, 1, 1 }, HB_GGUF_F32, x, 16), HB_EINVAL);
    assert_int_equal(hb_gguf_add_tensor(w, "t", 1, (int64_t[]){ 0 }, HB_GGUF_F32, x, 0), HB_EINVAL);
    assert_int_equal(hb_gguf_add_tensor(w, "t", 1, (int64_t[]){ 4 }, HB_GGUF_F32, x, 12), HB_EINVAL);
    assert_int_equal(hb_gguf_add_tensor(w, "t", 1, (int64_t[]){ 16 }, HB_GGUF_Q8_0, x, 34), HB_EINVAL);
    assert_int_equal(hb_gguf_add_tensor(w, "t", 1, (int64_t[]){ 4 }, 4, x, 16), HB_EINVAL);
    assert_int_equal(hb_gguf_add_tensor(w, "t", 2, (int64_t[]){ INT64_MAX, 2 }, HB_GGUF_F32, x, 16), HB_EINVAL);
    unlink(path);
    assert_int_equal(hb_gguf_write(w, path, err, sizeof err), HB_EINVAL); /* the first error */
    assert_non_null(strstr(err, "given twice"));
    assert_int_equal(access(path, F_OK), -1); /* nothing written */
    hb_gguf_writer_free(w);
    /* an unwritable path */
    assert_int_equal(hb_gguf_writer_new(3, 0, &w), HB_OK);
    assert_int_equal(hb_gguf_write(w, "/nonexistent-dir/x.gguf", err, sizeof err), HB_EDEVICE);
    assert_non_null(strstr(err, "/nonexistent-dir/x.gguf: cannot write"));
    hb_gguf_writer_free(w);
}

static void test_unreadable(void **state)
{
    (void)state;
    hb_gguf *g = (hb_gguf *)0x1;
    char err[400];
    char p2[320];
    snprintf(p2, sizeof p2, "%s/missing.gguf", dir);
    assert_int_equal(hb_gguf_open(p2, &g, err, sizeof err), HB_EDEVICE);
    assert_null(g);
    assert_non_null(strstr(err, "missing.gguf: offset 0: cannot open"));
    assert_int_equal(hb_gguf_open(dir, &g, err, sizeof err), HB_EDEVICE);
    assert_non_null(strstr(err, "not a regular file"));
    spit(path, (const uint8_t *)"", 0);
    expect_refused(0, "empty file");
    /* an empty but valid file: header only */
    uint8_t h[24] = { 'G', 'G', 'U', 'F', 3 };
    spit(path, h, 24);
    assert_int_equal(hb_gguf_open(path, &g, err, sizeof err), HB_OK);
    assert_int_equal(hb_gguf_n_tensors(g), 0);
    assert_int_equal(hb_gguf_n_kv(g), 0);
    assert_null(hb_gguf_find_kv(g, "x"));
    assert_null(hb_gguf_find_tensor(g, "x"));
    hb_gguf_close(g);
    hb_gguf_close(NULL);
    /* a tiny err buffer is never overrun */
    char tiny[8];
    memset(tiny, 'Z', sizeof tiny);
    spit(path, (const uint8_t *)"GGUF", 4);
    assert_int_equal(hb_gguf_open(path, &g, tiny, 5), HB_EINVAL);
    assert_int_equal(tiny[4], 0);
    assert_int_equal(tiny[5], 'Z');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_writer_refusals),
        cmocka_unit_test(test_unreadable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
