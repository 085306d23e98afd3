/*
 * refcache.c - the f64 references on disk (refcache.h): keys, entries' files, their checks; and the
 * process's reference of the current workload item (internal.h, hb_ref_cache_get), which reads them.
 */
#include "measure/refcache.h"
#include "measure/internal.h"
#include "cpu_ref/ref.h"
#include "core/quant.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef HB_REF_VERSION /* the Makefile passes a hash of the reference's sources, compiler and flags */
#define HB_REF_VERSION "unversioned-" HB_GIT_COMMIT
#endif
#ifndef HB_GIT_COMMIT
#define HB_GIT_COMMIT "unknown"
#endif

#define REFC_MAGIC "HBREF01"

/* The fixed header of an entry; the key text and the data follow it. */
typedef struct refc_header {
    char magic[8];      /* REFC_MAGIC, NUL-terminated */
    uint64_t keylen;    /* bytes of key text (no NUL) */
    uint64_t nout;      /* f64 elements of data */
    uint64_t sum;       /* hb_refcache_hash of the key text, then of the data */
} refc_header;

const char *hb_refc_state_name(hb_refc_state s)
{
    switch (s) {
    case HB_REFC_HIT: return "hit";
    case HB_REFC_MISS: return "miss";
    case HB_REFC_RECOMPUTED: return "recomputed";
    case HB_REFC_CHEAP: return "cheap";
    default: return "off";
    }
}

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t hb_refcache_hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    const uint64_t k1 = 0x9E3779B97F4A7C15ULL, k2 = 0xC2B2AE3D27D4EB4FULL;
    /* four independent lanes so that the multiplies overlap (several GB/s), then folded */
    uint64_t l[4] = {h ^ k1, h ^ k2, rotl64(h, 17) ^ k1, rotl64(h, 41) ^ k2};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; j++) {
            uint64_t w;
            memcpy(&w, b + i + 8 * (size_t)j, 8);
            l[j] = rotl64(l[j] ^ (w * k2), 31) * k1;
        }
    uint64_t r = (uint64_t)n * k1;
    for (int j = 0; j < 4; j++) r = rotl64(r ^ l[j], 27) * k2 + (uint64_t)j;
    for (; i < n; i++) r = rotl64(r ^ b[i], 11) * k1;
    r ^= r >> 33;
    r *= 0xFF51AFD7ED558CCDULL;
    r ^= r >> 33;
    return r;
}

int hb_refcache_worth(const hb_case *c, int64_t row_step)
{
    double nout = (double)hb_op_output_elems(c->op, &c->shape);
    double f = hb_op_flops(c->op, &c->shape) / (double)(row_step > 0 ? row_step : 1);
    return nout > 0 && f >= 16.0 * nout;
}

char *hb_refcache_key(const hb_case *c, int64_t row_step, unsigned long long seed, unsigned long long stream0,
                      const double *const *in, const size_t *input_elems, int nin, char *buf, size_t len)
{
    char shape[512];
    hb_shape_format(c->op, &c->shape, shape, sizeof shape);
    uint64_t hin = 0;
    for (int i = 0; i < nin; i++) hin = hb_refcache_hash(in[i], input_elems[i] * sizeof(double), hin);
    /* a quantized weight's format: its inputs (random blocks, dequantized) and layout (W[n,k]) are its
     * own; dense dtypes share one reference (their f64 inputs are the same) and keep their keys */
    char wq[32] = "";
    if (hb_dtype_is_quant(c->dtype)) snprintf(wq, sizeof wq, "|weights=%s", hb_dtype_name(c->dtype));
    int w = snprintf(buf, len, "hbref1|op=%s|shape=%s|shape_hash=%016" PRIx64 "|row_step=%lld|seed=%llu|streams=%llu+%d|inputs=%016" PRIx64
                     "%s|ref=%s",
                     hb_op_get(c->op)->name, shape, hb_refcache_hash(&c->shape, sizeof c->shape, 0), (long long)row_step, seed,
                     stream0, nin, hin, wq, HB_REF_VERSION);
    return w < 0 || (size_t)w >= len ? NULL : buf;
}

char *hb_refcache_path(const char *dir, const char *key, char *path, size_t len)
{
    snprintf(path, len, "%s/%016" PRIx64 ".ref", dir, hb_refcache_hash(key, strlen(key), 0));
    return path;
}

hb_refc_state hb_refcache_load(const char *dir, const char *key, double *out, size_t nout, char *why, size_t wlen)
{
    char path[4200];
    hb_refcache_path(dir, key, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return HB_REFC_MISS;
        snprintf(why, wlen, "%s: %s", path, strerror(errno));
        return HB_REFC_RECOMPUTED;
    }
    refc_header h;
    size_t klen = strlen(key);
    hb_refc_state st = HB_REFC_RECOMPUTED;
    char *k = NULL;
    if (fread(&h, sizeof h, 1, f) != 1) { snprintf(why, wlen, "%s: shorter than its header", path); goto out; }
    if (memcmp(h.magic, REFC_MAGIC, sizeof REFC_MAGIC)) { snprintf(why, wlen, "%s: not a reference cache entry (magic)", path); goto out; }
    if (h.keylen != klen) { snprintf(why, wlen, "%s: holds another key (length %" PRIu64 ", not %zu)", path, h.keylen, klen); goto out; }
    if (h.nout != nout) { snprintf(why, wlen, "%s: holds %" PRIu64 " elements, the case has %zu", path, h.nout, nout); goto out; }
    k = malloc(klen + 1);
    if (!k) { snprintf(why, wlen, "%s: out of memory", path); goto out; }
    if (fread(k, 1, klen, f) != klen) { snprintf(why, wlen, "%s: truncated in its key", path); goto out; }
    if (memcmp(k, key, klen)) { snprintf(why, wlen, "%s: holds another key", path); goto out; }
    if (fread(out, sizeof(double), nout, f) != nout) { snprintf(why, wlen, "%s: truncated in its data", path); goto out; }
    if (fgetc(f) != EOF) { snprintf(why, wlen, "%s: longer than its header says", path); goto out; }
    uint64_t sum = hb_refcache_hash(out, nout * sizeof(double), hb_refcache_hash(key, klen, 0));
    if (sum != h.sum) { snprintf(why, wlen, "%s: checksum mismatch (stored %016" PRIx64 ", data %016" PRIx64 ")", path, h.sum, sum); goto out; }
    st = HB_REFC_HIT;
out:
    free(k);
    fclose(f);
    return st;
}

int hb_refcache_store(const char *dir, const char *key, const double *out, size_t nout, char *why, size_t wlen)
{
    char path[4200], tmp[4300];
    if (mkdir(dir, 0755) && errno != EEXIST) { snprintf(why, wlen, "cannot create %s: %s", dir, strerror(errno)); return -1; }
    hb_refcache_path(dir, key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    size_t klen = strlen(key);
    refc_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, REFC_MAGIC, sizeof REFC_MAGIC);
    h.keylen = klen;
    h.nout = nout;
    h.sum = hb_refcache_hash(out, nout * sizeof(double), hb_refcache_hash(key, klen, 0));
    FILE *f = fopen(tmp, "wb");
    if (!f) { snprintf(why, wlen, "cannot write %s: %s", tmp, strerror(errno)); return -1; }
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(key, 1, klen, f) == klen && fwrite(out, sizeof(double), nout, f) == nout;
    int e = errno;
    if (fclose(f)) { ok = 0; e = errno; }
    if (!ok || rename(tmp, path)) {
        if (ok) e = errno;
        snprintf(why, wlen, "cannot write %s: %s", path, strerror(e));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---- the process's reference of the current item (internal.h) ---- */
void hb_ref_cache_free(hb_ref_cache *r)
{
    for (int i = 0; i < HB_MAX_INPUTS; i++) { free(r->in[i]); r->in[i] = NULL; }
    free(r->out);
    r->out = NULL;
    free(r->qw);
    r->qw = NULL;
    r->qw_bytes = 0;
    r->item = -1;
    r->wq = HB_F32;
}

static long g_ref_gets; /* references obtained (read or computed) in this process: hb_ref_gets */
long hb_ref_gets(void) { return g_ref_gets; }

hb_status hb_ref_cache_get(hb_ref_cache *r, const hb_case *c, int item, const hb_options *o)
{
    const int qi = hb_quant_input(c->op, c->dtype); /* the input held in blocks, or -1 */
    const hb_dtype wq = qi >= 0 ? c->dtype : HB_F32;
    if (r->item == item && r->out && r->wq == wq) return HB_OK;
    g_ref_gets++;
    hb_ref_cache_free(r);
    r->wq = wq;
    unsigned long long seed = o->seed, stream0 = (unsigned long long)item * 8;
    const hb_op_info *info = hb_op_get(c->op);
    size_t nel[HB_MAX_INPUTS] = {0};
    r->nin = info->ninputs;
    for (int i = 0; i < r->nin; i++) {
        nel[i] = (size_t)hb_op_input_elems(c->op, &c->shape, i);
        r->in[i] = malloc(nel[i] * sizeof(double));
        if (!r->in[i]) { hb_ref_cache_free(r); return HB_ENOMEM; }
        if (i == qi) {
            /* the weight: random blocks of the format, and for the reference their exact values */
            r->qw_bytes = hb_case_input_bytes(c, i);
            r->qw = r->qw_bytes ? malloc(r->qw_bytes) : NULL;
            if (!r->qw) { hb_ref_cache_free(r); return r->qw_bytes ? HB_ENOMEM : HB_EINVAL; }
            if (hb_quant_fill_random(wq, r->qw, (int64_t)nel[i], seed, stream0 + (unsigned long long)i, HB_QUANT_FILL_SCALE) != HB_OK ||
                hb_quant_dequantize_f64(wq, r->qw, r->in[i], (int64_t)nel[i]) != HB_OK) {
                hb_ref_cache_free(r);
                return HB_EINVAL;
            }
            continue;
        }
        hb_fill_random(r->in[i], nel[i], seed, stream0 + (unsigned long long)i);
    }
    size_t no = (size_t)hb_op_output_elems(c->op, &c->shape);
    r->out = malloc(no * sizeof(double));
    if (!r->out) { hb_ref_cache_free(r); return HB_ENOMEM; }
    /* The reference is f64 plain C: subsample rows beyond ~4 GFLOP so that verifying a GPU-sized case
     * takes seconds, not minutes. */
    r->row_step = hb_ref_row_step(c, 4e9);
    r->cstate = HB_REFC_OFF;
    char key[2048] = "", why[4400] = "";
    if (o->ref_cache && *o->ref_cache) {
        if (!hb_refcache_worth(c, r->row_step)) r->cstate = HB_REFC_CHEAP;
        else if (!hb_refcache_key(c, r->row_step, seed, stream0, (const double *const *)r->in, nel, r->nin, key, sizeof key))
            r->cstate = HB_REFC_OFF;
        else {
            r->cstate = hb_refcache_load(o->ref_cache, key, r->out, no, why, sizeof why);
            if (r->cstate == HB_REFC_HIT) { r->item = item; return HB_OK; }
            if (r->cstate == HB_REFC_RECOMPUTED)
                fprintf(stderr, "hybench: reference cache: %s; the reference is computed again and the entry replaced\n", why);
        }
    }
    hb_status st = hb_ref_compute(c, (const double *const *)r->in, r->out, r->row_step);
    if (st != HB_OK) { hb_ref_cache_free(r); return st; }
    if ((r->cstate == HB_REFC_MISS || r->cstate == HB_REFC_RECOMPUTED) &&
        hb_refcache_store(o->ref_cache, key, r->out, no, why, sizeof why))
        fprintf(stderr, "hybench: reference cache: %s (the run goes on without it)\n", why);
    r->item = item;
    return HB_OK;
}

