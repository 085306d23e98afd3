/*
 * benchdnn.c - oneDNN benchdnn problem lists (conv, pool, matmul) read as hybench workload items.
 * Grammar, defaults and the deduction rules: benchdnn.h; the mapping onto hybench ops and the
 * cases that become skipped items: docs/workloads.md ("benchdnn problem lists").
 */
#include "workload/benchdnn.h"
#include <stdint.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One tensor of more than 2^34 elements (64 GiB of f32) is "absurd", as in hb_shape_normalize. */
#define BD_MAX_ELEMS 17179869184.0
#define BD_MAX_DEPTH 8
#define BD_MAX_MM_DIMS 12

static const char *const kind_names[HB_BATCH_KIND_COUNT] = {"conv", "pool", "matmul"};

const char *hb_batch_kind_name(hb_batch_kind k) { return (unsigned)k < HB_BATCH_KIND_COUNT ? kind_names[k] : "?"; }

int hb_batch_kind_parse(const char *s, hb_pool_alg *alg)
{
    hb_pool_alg a = HB_POOL_AUTO;
    int k = -1;
    if (!s) return -1;
    if (!strcmp(s, "conv")) k = HB_BATCH_CONV;
    else if (!strcmp(s, "pool")) k = HB_BATCH_POOL;
    else if (!strcmp(s, "maxpool")) { k = HB_BATCH_POOL; a = HB_POOL_MAX; }
    else if (!strcmp(s, "avgpool")) { k = HB_BATCH_POOL; a = HB_POOL_AVG; }
    else if (!strcmp(s, "matmul")) k = HB_BATCH_MATMUL;
    if (k >= 0 && alg) *alg = a;
    return k;
}

/* benchdnn's --alg names and ours. -1 if unknown. */
static int pool_alg_parse(const char *s)
{
    if (!strcasecmp(s, "max") || !strcasecmp(s, "pooling_max")) return HB_POOL_MAX;
    if (!strcasecmp(s, "avg") || !strcasecmp(s, "avg_np") || !strcasecmp(s, "pooling_avg_exclude_padding") ||
        !strcasecmp(s, "pooling_avg"))
        return HB_POOL_AVG;
    if (!strcasecmp(s, "avg_p") || !strcasecmp(s, "pooling_avg_include_padding")) return HB_POOL_AVG_P;
    return -1;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------------------------------------
 * Names: n"model:layer*N" (quotes optional). *pp points just after the 'n'. On success *pp is at
 * the end of the token. */
static hb_status parse_name(const char **pp, hb_item *out, char *err, size_t errlen)
{
    const char *p = *pp;
    char raw[256];
    size_t len = 0;
    if (*p == '"') {
        const char *q = strchr(p + 1, '"');
        if (!q) { seterr(err, errlen, "unterminated name (no closing '\"')"); return HB_EINVAL; }
        len = (size_t)(q - (p + 1));
        if (len >= sizeof raw) { seterr(err, errlen, "name longer than %zu characters", sizeof raw - 1); return HB_EINVAL; }
        memcpy(raw, p + 1, len);
        p = q + 1;
        if (*p) { seterr(err, errlen, "trailing characters \"%.20s\" after the name", p); return HB_EINVAL; }
    } else {
        len = strlen(p);
        if (len >= sizeof raw) { seterr(err, errlen, "name longer than %zu characters", sizeof raw - 1); return HB_EINVAL; }
        memcpy(raw, p, len);
        if (memchr(raw, '"', len)) { seterr(err, errlen, "stray '\"' in the name"); return HB_EINVAL; }
        p += len;
    }
    raw[len] = 0;
    if (!len) { seterr(err, errlen, "empty name after 'n'"); return HB_EINVAL; }
    /* "*N" repeat count at the end */
    char *star = strrchr(raw, '*');
    double weight = 1;
    if (star) {
        char *end;
        errno = 0;
        long long n = strtoll(star + 1, &end, 10);
        if (end == star + 1 || *end || errno || n <= 0 || !isdigit((unsigned char)star[1])) {
            seterr(err, errlen, "bad repeat count \"%s\" in name (expected *N, N > 0)", star);
            return HB_EINVAL;
        }
        weight = (double)n;
        *star = 0;
    }
    const char *layer = raw;
    char *colon = strchr(raw, ':');
    if (colon) {
        *colon = 0;
        layer = colon + 1;
        if (strlen(raw) >= sizeof out->c.model) {
            seterr(err, errlen, "model name \"%s\" longer than %zu characters", raw, sizeof out->c.model - 1);
            return HB_EINVAL;
        }
        memcpy(out->c.model, raw, strlen(raw) + 1);  /* length checked above */
    }
    if (strlen(layer) >= sizeof out->c.name) {
        seterr(err, errlen, "layer name longer than %zu characters", sizeof out->c.name - 1);
        return HB_EINVAL;
    }
    memmove(out->c.name, layer, strlen(layer) + 1);  /* length checked above */
    out->c.weight = weight;
    *pp = p;
    return HB_OK;
}

/* Digits right after a key. Values are plain non-negative decimal integers. */
static hb_status parse_value(const char **pp, const char *key, int64_t *v, char *err, size_t errlen)
{
    const char *p = *pp;
    if (*p == '-') { seterr(err, errlen, "negative value for '%s'", key); return HB_EINVAL; }
    if (!isdigit((unsigned char)*p)) {
        if (!*p) seterr(err, errlen, "missing value for '%s' at the end", key);
        else seterr(err, errlen, "missing value for '%s' (found \"%.12s\")", key, p);
        return HB_EINVAL;
    }
    errno = 0;
    char *end;
    long long x = strtoll(p, &end, 10);
    if (errno == ERANGE) { seterr(err, errlen, "value of '%s' out of range", key); return HB_EINVAL; }
    *v = x;
    *pp = end;
    return HB_OK;
}

/* ---------------------------------------------------------------------------------------------
 * conv and pool descriptors */
enum { SP_D, SP_H, SP_W };
/* One spatial dimension: input, output, kernel, stride, padding (-1 until given or deduced),
 * dilation (benchdnn: 0 = none); pg: the descriptor gave the padding. */
typedef struct bd_dim { int64_t i, o, k, s, p, d, pg; } bd_dim;
typedef struct bd_conv {
    int64_t g, mb, ic, oc;
    bd_dim sp[3];
    int has_g;
} bd_conv;

typedef struct bd_key { const char *name; int conv_only; int sp; size_t off; } bd_key;
#define SPK(nm, sp, f) {nm, 0, sp, offsetof(bd_dim, f)}
static const bd_key conv_keys[] = {
    {"g", 1, -1, offsetof(bd_conv, g)}, {"mb", 0, -1, offsetof(bd_conv, mb)},
    {"ic", 0, -1, offsetof(bd_conv, ic)}, {"oc", 1, -1, offsetof(bd_conv, oc)},
    SPK("id", SP_D, i), SPK("ih", SP_H, i), SPK("iw", SP_W, i),
    SPK("od", SP_D, o), SPK("oh", SP_H, o), SPK("ow", SP_W, o),
    SPK("kd", SP_D, k), SPK("kh", SP_H, k), SPK("kw", SP_W, k),
    SPK("sd", SP_D, s), SPK("sh", SP_H, s), SPK("sw", SP_W, s),
    SPK("pd", SP_D, p), SPK("ph", SP_H, p), SPK("pw", SP_W, p),
    SPK("dd", SP_D, d), SPK("dh", SP_H, d), SPK("dw", SP_W, d),
};
#undef SPK
#define NKEYS ((int)(sizeof conv_keys / sizeof conv_keys[0]))

static int64_t *key_ptr(bd_conv *d, const bd_key *k)
{
    if (k->sp < 0) return (int64_t *)((char *)d + k->off);
    return (int64_t *)((char *)&d->sp[k->sp] + k->off);
}

/* Effective kernel extent with benchdnn dilation (0 = none). */
static int64_t keff(int64_t k, int64_t dil) { return (k - 1) * (dil + 1) + 1; }
/* Floor division for a possibly negative numerator (output sizes of impossible problems). */
static int64_t fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static hb_status parse_spatial(hb_batch_kind kind, const char *desc, bd_conv *d, hb_item *out, char *err,
                               size_t errlen)
{
    const char *p = desc;
    unsigned seen = 0;
    memset(d, 0, sizeof *d);
    d->g = 1;
    d->mb = 2;
    for (int i = 0; i < 3; i++) { d->sp[i].s = 1; d->sp[i].p = -1; }
    while (*p) {
        if (*p == '_') { p++; continue; }
        int found = -1;
        for (int i = 0; i < NKEYS; i++) {
            size_t kl = strlen(conv_keys[i].name);
            if (!strncmp(p, conv_keys[i].name, kl)) {
                /* prefer the longest match (no key is a prefix of another today, but be safe) */
                if (found < 0 || kl > strlen(conv_keys[found].name)) found = i;
            }
        }
        if (found < 0) {
            if (*p == 'n') {
                p++;
                hb_status st = parse_name(&p, out, err, errlen);
                if (st) return st;
                break;
            }
            seterr(err, errlen, "unknown key at \"%.16s\"", p);
            return HB_EINVAL;
        }
        const bd_key *k = &conv_keys[found];
        if (k->conv_only && kind != HB_BATCH_CONV) {
            seterr(err, errlen, "key '%s' is not part of a %s descriptor", k->name, hb_batch_kind_name(kind));
            return HB_EINVAL;
        }
        if (seen & (1u << found)) { seterr(err, errlen, "duplicate key '%s'", k->name); return HB_EINVAL; }
        seen |= 1u << found;
        p += strlen(k->name);
        int64_t v;
        hb_status st = parse_value(&p, k->name, &v, err, errlen);
        if (st) return st;
        *key_ptr(d, k) = v;
        if (found == 0) d->has_g = 1;
        if (k->sp >= 0 && k->off == offsetof(bd_dim, p)) d->sp[k->sp].pg = 1;
    }
    if (d->has_g && d->g <= 0) { seterr(err, errlen, "g must be > 0"); return HB_EINVAL; }
    if (d->mb <= 0) { seterr(err, errlen, "mb must be > 0"); return HB_EINVAL; }
    if (d->ic <= 0) { seterr(err, errlen, "ic is required and must be > 0"); return HB_EINVAL; }
    if (kind == HB_BATCH_CONV && d->oc <= 0) { seterr(err, errlen, "oc is required and must be > 0"); return HB_EINVAL; }
    static const char dimc[3] = {'d', 'h', 'w'};
    int present[3];
    for (int i = 0; i < 3; i++) {
        bd_dim *x = &d->sp[i];
        if (x->s <= 0) { seterr(err, errlen, "s%c must be > 0", dimc[i]); return HB_EINVAL; }
        /* the padding and output-size formulas below multiply these: refuse what overflows 64 bits
         * (found by tests/fuzz/fuzz_benchdnn.c: sh=2222222222222222222 with an oh) */
        int64_t t;
        if (x->p > INT64_MAX / 4 || __builtin_mul_overflow(x->k, x->d + 1, &t) || __builtin_mul_overflow(x->o, x->s, &t) ||
            __builtin_add_overflow(x->i, 2 * (x->p > 0 ? x->p : 0), &t)) { /* p first: 2 * p overflowed (fuzz, p=5.1e18) */
            seterr(err, errlen, "spatial sizes of dimension %c overflow a 64-bit size", dimc[i]);
            return HB_EINVAL;
        }
        present[i] = (x->i | x->k | x->o | x->d) != 0 || x->s != 1 || x->p >= 1;
        if (!present[i]) continue;
        if (!x->i || !x->k) {
            seterr(err, errlen, "spatial dimension %c is used but i%c or k%c is missing or 0", dimc[i], dimc[i], dimc[i]);
            return HB_EINVAL;
        }
        if (!x->o) {
            if (x->p < 0) x->p = 0;
            x->o = fdiv(x->i - keff(x->k, x->d) + 2 * x->p, x->s) + 1;
            if (x->o <= 0) {
                seterr(err, errlen, "k%c larger than the padded input (o%c would be %lld)", dimc[i], dimc[i], (long long)x->o);
                return HB_EINVAL;
            }
        } else if (x->p < 0) {
            x->p = fdiv((x->o - 1) * x->s - x->i + keff(x->k, x->d), 2);
        }
    }
    /* sanitize_desc(): the number of spatial dimensions and the d -> h -> w promotion */
    int no_d = !present[SP_D], no_h = !present[SP_H], no_w = !present[SP_W];
    int ndims = 5 - no_d - (no_d && no_h) - (no_d && no_h && no_w);
    if (ndims <= 2) { seterr(err, errlen, "no spatial dimension given (need ih and kh at least)"); return HB_EINVAL; }
    if (ndims == 5) {
        if (no_h && no_w) d->sp[SP_H] = d->sp[SP_W] = d->sp[SP_D];
        else if (no_h || no_w) { seterr(err, errlen, "a 3D problem needs both h and w values, or neither"); return HB_EINVAL; }
    } else if (ndims == 4 && no_w) {
        d->sp[SP_W] = d->sp[SP_H];
    }
    static const bd_dim def = {1, 1, 1, 1, 0, 0, 0};
    if (ndims < 5) d->sp[SP_D] = def;
    if (ndims < 4) d->sp[SP_H] = def;
    return ndims == 5 ? HB_ESKIP : HB_OK;  /* HB_ESKIP: 3D, for the caller */
}

/* Elements of an N-D tensor in double (never overflows); 0 if any factor is 0. */
static double dprod(const int64_t *v, int n)
{
    double r = 1;
    for (int i = 0; i < n; i++) r *= (double)v[i];
    return r;
}

static hb_status check_absurd(const char *what, double elems, char *err, size_t errlen)
{
    if (elems > BD_MAX_ELEMS) {
        seterr(err, errlen, "absurd size: %s has %.3g elements (limit 2^34)", what, elems);
        return HB_EINVAL;
    }
    return HB_OK;
}

/* Choose the symmetric hybench padding for one spatial dimension so that hybench's output size
 * equals benchdnn's: benchdnn pads x->p on the left and (o-1)*s - i + keff - p on the right.
 * Returns 1 and *pad when possible, 0 otherwise. Candidates: p itself (exactly benchdnn's problem:
 * the same taps feed the same outputs, a larger or negative right padding only pads or drops
 * inputs no output reads), and, when p was deduced rather than given, p+1 (benchdnn's deduction
 * rounds down and pads one more on the right; hybench pads one more on both sides: the same
 * output size and the same work, windows shifted by one; ResNet-50's max_pool1 is that case). */
static int sym_pad(const bd_dim *x, int64_t *pad)
{
    int64_t ke = keff(x->k, x->d);
    for (int64_t cand = x->p < 0 ? 0 : x->p; cand <= x->p + (x->pg ? 0 : 1); cand++) {
        if (cand < 0) continue;
        if (fdiv(x->i + 2 * cand - ke, x->s) + 1 == x->o) { *pad = cand; return 1; }
    }
    return 0;
}

static hb_status parse_convpool(hb_batch_kind kind, const char *desc, const hb_batch_opts *o, hb_item *out,
                                char *err, size_t errlen)
{
    bd_conv d;
    hb_status st3 = parse_spatial(kind, desc, &d, out, err, errlen);
    if (st3 != HB_OK && st3 != HB_ESKIP) return st3;
    int is3d = st3 == HB_ESKIP;
    if (o && o->mb > 0) d.mb = o->mb;
    if (kind == HB_BATCH_CONV && (d.ic % d.g || d.oc % d.g)) {
        seterr(err, errlen, "g%lld does not divide ic%lld and oc%lld", (long long)d.g, (long long)d.ic, (long long)d.oc);
        return HB_EINVAL;
    }
    /* absurd sizes, in double before anything multiplies in int64 */
    int64_t src[5] = {d.mb, d.ic, d.sp[0].i, d.sp[1].i, d.sp[2].i};
    int64_t dst[5] = {d.mb, kind == HB_BATCH_CONV ? d.oc : d.ic, d.sp[0].o, d.sp[1].o, d.sp[2].o};
    int64_t wei[5] = {d.oc, d.ic / d.g, d.sp[0].k, d.sp[1].k, d.sp[2].k};
    hb_status st;
    if ((st = check_absurd("the source", dprod(src, 5), err, errlen))) return st;
    if ((st = check_absurd("the destination", dprod(dst, 5), err, errlen))) return st;
    if (kind == HB_BATCH_CONV && (st = check_absurd("the weights", dprod(wei, 5), err, errlen))) return st;

    /* the pooling algorithm */
    hb_pool_alg alg = o ? o->alg : HB_POOL_AUTO;
    if (kind == HB_BATCH_POOL && alg == HB_POOL_AUTO)
        alg = (strstr(out->c.name, "ave") || strstr(out->c.name, "avg")) ? HB_POOL_AVG : HB_POOL_MAX;
    out->c.op = kind == HB_BATCH_CONV ? HB_OP_CONV2D : alg == HB_POOL_MAX ? HB_OP_MAXPOOL : HB_OP_AVGPOOL;

    hb_shape *s = &out->c.shape;
    memset(s, 0, sizeof *s);
    const bd_dim *H = &d.sp[SP_H], *W = &d.sp[SP_W];
    s->batch = d.mb;
    s->c = d.ic;
    s->h = H->i;
    s->w = W->i;
    s->kh = H->k;
    s->kw = W->k;
    s->sh = H->s;
    s->sw = W->s;
    s->dh = H->d + 1;
    s->dw = W->d + 1;
    if (kind == HB_BATCH_CONV) { s->oc = d.oc; s->g = d.g; }
    else s->g = 1;
    s->ph = H->p > 0 ? H->p : 0;
    s->pw = W->p > 0 ? W->p : 0;

    if (is3d) {
        snprintf(out->skip, sizeof out->skip, "3D %s (id%lld kd%lld od%lld): hybench has 2D %s only",
                 kind == HB_BATCH_CONV ? "convolution" : "pooling", (long long)d.sp[SP_D].i, (long long)d.sp[SP_D].k,
                 (long long)d.sp[SP_D].o, kind == HB_BATCH_CONV ? "conv2d" : "pooling");
        return HB_OK;
    }
    if (kind == HB_BATCH_POOL && alg == HB_POOL_AVG_P) {
        snprintf(out->skip, sizeof out->skip,
                 "average pooling including padding (benchdnn avg_p): hybench avgpool excludes padding");
        return HB_OK;
    }
    if (kind == HB_BATCH_POOL && (H->d || W->d)) {
        snprintf(out->skip, sizeof out->skip, "dilated pooling (dh%lld dw%lld): hybench pooling has no dilation",
                 (long long)H->d, (long long)W->d);
        return HB_OK;
    }
    /* padding: hybench pads symmetrically */
    const bd_dim *dims[2] = {H, W};
    int64_t pads[2];
    for (int i = 0; i < 2; i++) {
        if (!sym_pad(dims[i], &pads[i])) {
            const bd_dim *x = dims[i];
            int64_t right = (x->o - 1) * x->s - x->i + keff(x->k, x->d) - x->p;
            snprintf(out->skip, sizeof out->skip,
                     "asymmetric padding in %c (left %lld, right %lld for o%c%lld): hybench pads symmetrically",
                     i ? 'w' : 'h', (long long)x->p, (long long)right, i ? 'w' : 'h', (long long)x->o);
            return HB_OK;
        }
    }
    s->ph = pads[0];
    s->pw = pads[1];

    hb_shape want = *s;
    char nerr[160];
    if (hb_shape_normalize(out->c.op, s, nerr, sizeof nerr) != HB_OK) {
        *s = want;
        snprintf(out->skip, sizeof out->skip, "not expressible as an hybench case: %.90s", nerr);
        return HB_OK;
    }
    if (memcmp(&want, s, sizeof want) != 0) {
        /* normalization changed a field we set on purpose (e.g. pw=0 with ph>0 reads as "pw unset") */
        *s = want;
        snprintf(out->skip, sizeof out->skip,
                 "hb_shape cannot express ph=%lld pw=%lld kh=%lld kw=%lld exactly (0 means unset)", (long long)want.ph,
                 (long long)want.pw, (long long)want.kh, (long long)want.kw);
        return HB_OK;
    }
    if (hb_shape_oh(s) != H->o || hb_shape_ow(s) != W->o) {  /* cannot happen after sym_pad; keep honest */
        snprintf(out->skip, sizeof out->skip, "output size mismatch (hybench %lldx%lld, benchdnn %lldx%lld)",
                 (long long)hb_shape_oh(s), (long long)hb_shape_ow(s), (long long)H->o, (long long)W->o);
        return HB_OK;
    }
    return HB_OK;
}

/* ---------------------------------------------------------------------------------------------
 * matmul descriptors */
static hb_status parse_dims(const char **pp, int64_t *v, int *n, const char *what, char *err, size_t errlen)
{
    const char *p = *pp;
    *n = 0;
    for (;;) {
        if (*n == BD_MAX_MM_DIMS) { seterr(err, errlen, "%s has more than %d dimensions", what, BD_MAX_MM_DIMS); return HB_EINVAL; }
        if (*p == '-') { seterr(err, errlen, "negative dimension in %s", what); return HB_EINVAL; }
        if (!isdigit((unsigned char)*p)) {
            seterr(err, errlen, "%s: expected a number at \"%.12s\"", what, *p ? p : "(end)");
            return HB_EINVAL;
        }
        errno = 0;
        char *end;
        long long x = strtoll(p, &end, 10);
        if (errno == ERANGE) { seterr(err, errlen, "%s: number out of range", what); return HB_EINVAL; }
        if (x == 0) { seterr(err, errlen, "%s: dimension 0", what); return HB_EINVAL; }
        v[(*n)++] = x;
        p = end;
        if (*p != 'x') break;
        p++;
    }
    *pp = p;
    return HB_OK;
}

static hb_status parse_matmul(const char *desc, hb_item *out, char *err, size_t errlen)
{
    int64_t a[BD_MAX_MM_DIMS], b[BD_MAX_MM_DIMS], c[BD_MAX_MM_DIMS];
    int na, nb, nc = 0;
    const char *p = desc;
    hb_status st;
    if ((st = parse_dims(&p, a, &na, "source", err, errlen))) return st;
    if (*p != ':') { seterr(err, errlen, "expected ':' and the weights dimensions after the source, found \"%.12s\"", *p ? p : "(end)"); return HB_EINVAL; }
    p++;
    if ((st = parse_dims(&p, b, &nb, "weights", err, errlen))) return st;
    if (*p == ':') {
        p++;
        if ((st = parse_dims(&p, c, &nc, "destination", err, errlen))) return st;
    }
    if (*p == '_') p++;
    if (*p == 'n') {
        p++;
        if ((st = parse_name(&p, out, err, errlen))) return st;
    }
    if (*p) { seterr(err, errlen, "trailing characters \"%.16s\"", p); return HB_EINVAL; }
    if (na < 2 || nb < 2) { seterr(err, errlen, "source and weights need at least 2 dimensions (MxK:KxN)"); return HB_EINVAL; }
    if (na != nb) { seterr(err, errlen, "source has %d dimensions, weights %d", na, nb); return HB_EINVAL; }
    if (nc && nc != na) { seterr(err, errlen, "destination has %d dimensions, source %d", nc, na); return HB_EINVAL; }
    int64_t M = a[na - 2], K = a[na - 1], K2 = b[nb - 2], N = b[nb - 1];
    if (K != K2) { seterr(err, errlen, "K mismatch: source ...x%lldx%lld, weights ...x%lldx%lld", (long long)M, (long long)K, (long long)K2, (long long)N); return HB_EINVAL; }
    int nbatch = na - 2;
    double ba = 1, bb = 1, bc = 1;
    int equal = 1, wei_ones = 1;
    for (int i = 0; i < nbatch; i++) {
        if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
            seterr(err, errlen, "batch dimension %d: source %lld and weights %lld are neither equal nor 1", i, (long long)a[i], (long long)b[i]);
            return HB_EINVAL;
        }
        if (a[i] != b[i]) equal = 0;
        if (b[i] != 1) wei_ones = 0;
        ba *= (double)a[i];
        bb *= (double)b[i];
        int64_t mx = a[i] > b[i] ? a[i] : b[i];
        bc *= (double)mx;
        if (nc && c[i] != mx) { seterr(err, errlen, "destination batch dimension %d is %lld, expected %lld", i, (long long)c[i], (long long)mx); return HB_EINVAL; }
    }
    if (nc && (c[nc - 2] != M || c[nc - 1] != N)) {
        seterr(err, errlen, "destination ...x%lldx%lld, expected ...x%lldx%lld", (long long)c[nc - 2], (long long)c[nc - 1], (long long)M, (long long)N);
        return HB_EINVAL;
    }
    if ((st = check_absurd("the source", ba * (double)M * (double)K, err, errlen))) return st;
    if ((st = check_absurd("the weights", bb * (double)K * (double)N, err, errlen))) return st;
    if ((st = check_absurd("the destination", bc * (double)M * (double)N, err, errlen))) return st;

    hb_shape *s = &out->c.shape;
    memset(s, 0, sizeof *s);
    s->k = K;
    s->n = N;
    if (equal && ba == 1) {
        out->c.op = HB_OP_MATMUL;
        s->m = M;
    } else if (equal) {
        out->c.op = HB_OP_BMM;
        s->batch = (int64_t)ba;
        s->m = M;
    } else if (wei_ones) {
        /* [B..,M,K] x [1..,K,N]: the weights are shared, which is exactly one [B*M,K] x [K,N] */
        out->c.op = HB_OP_MATMUL;
        s->m = (int64_t)ba * M;
    } else {
        out->c.op = HB_OP_BMM;
        s->batch = (int64_t)bc;
        s->m = M;
        snprintf(out->skip, sizeof out->skip,
                 "batch broadcasting of the source (%.0f vs weights %.0f batches): hybench bmm needs equal batches", ba, bb);
        return HB_OK;
    }
    char nerr[160];
    if (hb_shape_normalize(out->c.op, s, nerr, sizeof nerr) != HB_OK) {
        seterr(err, errlen, "%s", nerr);
        return HB_EINVAL;
    }
    return HB_OK;
}

hb_status hb_benchdnn_parse(hb_batch_kind k, const char *desc, const hb_batch_opts *opts, hb_item *out,
                            char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->c.weight = 1;
    if (!desc || !*desc) { seterr(err, errlen, "empty descriptor"); return HB_EINVAL; }
    hb_status st;
    switch (k) {
    case HB_BATCH_CONV: case HB_BATCH_POOL: st = parse_convpool(k, desc, opts, out, err, errlen); break;
    case HB_BATCH_MATMUL: st = parse_matmul(desc, out, err, errlen); break;
    default: seterr(err, errlen, "unknown problem kind %d", (int)k); return HB_EINVAL;
    }
    if (st) return st;
    if (opts && opts->model && *opts->model) snprintf(out->c.model, sizeof out->c.model, "%s", opts->model);
    if (opts && opts->weight > 0) out->c.weight *= opts->weight;
    out->c.dtype = HB_F32;
    return HB_OK;
}

/* Directory part of path into buf ("." when none). */
static void dir_of(const char *path, char *buf, size_t len)
{
    const char *sl = strrchr(path, '/');
    if (!sl) snprintf(buf, len, ".");
    else if (sl == path) snprintf(buf, len, "/");
    else snprintf(buf, len, "%.*s", (int)(sl - path), path);
}

static const char *base_of(const char *path)
{
    const char *sl = strrchr(path, '/');
    return sl ? sl + 1 : path;
}

typedef struct bd_state {
    hb_batch_kind kind;
    int64_t mb;          /* from --mb in the file (0: none) */
    hb_pool_alg alg;     /* from --alg in the file */
} bd_state;

static hb_status load_file(bd_state st, const char *path, const hb_batch_opts *opts, int depth,
                           hb_item_list *tmp, char *err, size_t errlen);

/* One driver option token. */
static hb_status do_option(bd_state *st, const char *tok, const char *path, const hb_batch_opts *opts,
                           int depth, hb_item_list *tmp, char *err, size_t errlen)
{
    const char *eq = strchr(tok, '=');
    size_t kl = eq ? (size_t)(eq - tok) : strlen(tok);
    const char *val = eq ? eq + 1 : "";
#define IS(s) (kl == strlen(s) && !strncmp(tok, s, kl))
    if (IS("--conv") || IS("--pool") || IS("--matmul")) {
        if (eq) { seterr(err, errlen, "%.*s takes no value", (int)kl, tok); return HB_EINVAL; }
        st->kind = (hb_batch_kind)hb_batch_kind_parse(tok + 2, NULL);
        return HB_OK;
    }
    if (IS("--reset")) { st->mb = 0; st->alg = HB_POOL_AUTO; return HB_OK; }
    if (IS("--mb")) {
        char *end;
        errno = 0;
        long long v = strtoll(val, &end, 10);
        if (!*val || *end || errno || v < 0) { seterr(err, errlen, "bad --mb value \"%s\"", val); return HB_EINVAL; }
        st->mb = v;
        return HB_OK;
    }
    if (IS("--alg")) {
        if (st->kind != HB_BATCH_POOL) {
            seterr(err, errlen, "--alg=%s: only pooling algorithms are supported (hybench runs direct convolution)", val);
            return HB_EINVAL;
        }
        int a = pool_alg_parse(val);
        if (a < 0) { seterr(err, errlen, "unknown pooling algorithm \"%s\" (max, avg_np, avg_p)", val); return HB_EINVAL; }
        st->alg = (hb_pool_alg)a;
        return HB_OK;
    }
    if (IS("--batch")) {
        if (depth >= BD_MAX_DEPTH) { seterr(err, errlen, "--batch nested deeper than %d", BD_MAX_DEPTH); return HB_EINVAL; }
        char dir[4096], found[4096];
        dir_of(path, dir, sizeof dir);
        hb_status s = hb_benchdnn_find(val, dir, found, sizeof found, err, errlen);
        if (s) return s;
        return load_file(*st, found, opts, depth + 1, tmp, err, errlen);
    }
    /* options that describe what hybench does anyway: forward f32 */
    if (IS("--dir")) {
        if (!strcmp(val, "FWD_D") || !strcmp(val, "FWD_I") || !strcmp(val, "FWD_B")) return HB_OK;
        seterr(err, errlen, "--dir=%s: hybench runs forward problems only", val);
        return HB_EINVAL;
    }
    if (IS("--cfg") || IS("--dt")) {
        if (!strcmp(val, "f32") || !strcmp(val, "f32:f32") || !strcmp(val, "f32:f32:f32")) return HB_OK;
        seterr(err, errlen, "%.*s=%s: hybench runs f32 problems (its dtypes come from the workload)", (int)kl, tok, val);
        return HB_EINVAL;
    }
    if (IS("--mode") || IS("--skip-impl") || IS("--impl")) return HB_OK;
#undef IS
    seterr(err, errlen, "unsupported benchdnn option \"%s\"", tok);
    return HB_EINVAL;
}

static hb_status load_file(bd_state st, const char *path, const hb_batch_opts *opts, int depth,
                           hb_item_list *tmp, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { seterr(err, errlen, "%s: cannot read: %s", path, strerror(errno)); return HB_EDEVICE; }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    hb_status rc = HB_OK;
    char tok[1024], perr[512];
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (memchr(line, 0, (size_t)len)) {  /* would silently cut the line */
            seterr(err, errlen, "%s:%d: NUL byte in line (a benchdnn list is text)", path, lineno);
            rc = HB_EINVAL;
            goto out;
        }
        const char *p = line;
        for (;;) {
            while (*p && isspace((unsigned char)*p)) p++;
            if (!*p || *p == '#') break;
            /* one token: non-blank characters; a quoted part may contain blanks and '#' */
            size_t tl = 0;
            int inq = 0;
            while (*p && (inq || (!isspace((unsigned char)*p) && *p != '#'))) {
                if (*p == '"') inq = !inq;
                if (tl + 1 >= sizeof tok) { seterr(err, errlen, "%s:%d: token longer than %zu characters", path, lineno, sizeof tok - 1); rc = HB_EINVAL; goto out; }
                tok[tl++] = *p++;
            }
            tok[tl] = 0;
            if (inq) { seterr(err, errlen, "%s:%d: unterminated name (no closing '\"') in \"%.40s\"", path, lineno, tok); rc = HB_EINVAL; goto out; }
            if (tok[0] == '-' && tok[1] == '-') {
                rc = do_option(&st, tok, path, opts, depth, tmp, perr, sizeof perr);
                if (rc) {
                    /* an error in a nested --batch file reads "outer:line: inner:line: reason" */
                    seterr(err, errlen, "%s:%d: %s", path, lineno, perr);
                    goto out;
                }
                continue;
            }
            hb_batch_opts o = opts ? *opts : (hb_batch_opts){0};
            if (o.mb <= 0) o.mb = st.mb;
            if (o.alg == HB_POOL_AUTO) o.alg = st.alg;
            hb_item it;
            rc = hb_benchdnn_parse(st.kind, tok, &o, &it, perr, sizeof perr);
            if (rc) { seterr(err, errlen, "%s:%d: %s descriptor \"%.60s\": %s", path, lineno, hb_batch_kind_name(st.kind), tok, perr); goto out; }
            snprintf(it.c.source, sizeof it.c.source, "%s:%d", path, lineno);
            if (!it.c.name[0]) snprintf(it.c.name, sizeof it.c.name, "%s:%d", base_of(path), lineno);
            if ((rc = hb_item_list_push(tmp, &it))) { seterr(err, errlen, "%s:%d: out of memory", path, lineno); goto out; }
        }
    }
    if (ferror(f)) { seterr(err, errlen, "%s: read error: %s", path, strerror(errno)); rc = HB_EDEVICE; }
out:
    free(line);
    fclose(f);
    return rc;
}

/* Move every item of src to the end of dst; all or nothing. */
static hb_status list_append_all(hb_item_list *dst, const hb_item_list *src)
{
    if (!src->n) return HB_OK;
    if (dst->n + src->n > dst->cap) {
        size_t cap = dst->cap ? dst->cap : 16;
        while (cap < dst->n + src->n) cap *= 2;
        hb_item *v = realloc(dst->v, cap * sizeof *v);
        if (!v) return HB_ENOMEM;
        dst->v = v;
        dst->cap = cap;
    }
    memcpy(dst->v + dst->n, src->v, src->n * sizeof *src->v);
    dst->n += src->n;
    return HB_OK;
}

hb_status hb_benchdnn_load(hb_batch_kind k, const char *path, const hb_batch_opts *opts, hb_item_list *out,
                           char *err, size_t errlen)
{
    if ((unsigned)k >= HB_BATCH_KIND_COUNT) { seterr(err, errlen, "unknown problem kind %d", (int)k); return HB_EINVAL; }
    hb_item_list tmp = {0};
    bd_state st = {k, 0, HB_POOL_AUTO};
    hb_status rc = load_file(st, path, opts, 0, &tmp, err, errlen);
    if (!rc && !tmp.n) { seterr(err, errlen, "%s: no problems in the list", path); rc = HB_EINVAL; }
    if (!rc && (rc = list_append_all(out, &tmp))) seterr(err, errlen, "%s: out of memory", path);
    hb_item_list_free(&tmp);
    return rc;
}

hb_status hb_batch_load(const char *spec, hb_item_list *out, char *err, size_t errlen)
{
    const char *colon = spec ? strchr(spec, ':') : NULL;
    if (!colon || colon == spec || !colon[1]) {
        seterr(err, errlen, "--batch \"%s\": expected KIND:FILE with KIND conv, pool, maxpool, avgpool or matmul", spec ? spec : "");
        return HB_EINVAL;
    }
    char head[256];
    if ((size_t)(colon - spec) >= sizeof head) { seterr(err, errlen, "--batch: kind and options too long"); return HB_EINVAL; }
    snprintf(head, sizeof head, "%.*s", (int)(colon - spec), spec);
    char *save = NULL;
    char *kw = strtok_r(head, ",", &save);
    hb_batch_opts o = {0};
    int k = hb_batch_kind_parse(kw, &o.alg);
    if (k < 0) {
        seterr(err, errlen, "--batch \"%s\": unknown kind \"%s\" (conv, pool, maxpool, avgpool, matmul)", spec, kw ? kw : "");
        return HB_EINVAL;
    }
    char model[48];
    for (char *t = strtok_r(NULL, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) { seterr(err, errlen, "--batch \"%s\": option \"%s\" needs =value", spec, t); return HB_EINVAL; }
        *eq = 0;
        const char *v = eq + 1;
        if (!strcmp(t, "mb")) {
            char *end;
            errno = 0;
            long long x = strtoll(v, &end, 10);
            if (!*v || *end || errno || x <= 0) { seterr(err, errlen, "--batch \"%s\": bad mb \"%s\"", spec, v); return HB_EINVAL; }
            o.mb = x;
        } else if (!strcmp(t, "alg")) {
            int a = pool_alg_parse(v);
            if (a < 0 || k != HB_BATCH_POOL) { seterr(err, errlen, "--batch \"%s\": bad alg \"%s\" (pool lists: max, avg, avg_p)", spec, v); return HB_EINVAL; }
            o.alg = (hb_pool_alg)a;
        } else if (!strcmp(t, "model")) {
            if (strlen(v) >= sizeof model || !*v) { seterr(err, errlen, "--batch \"%s\": bad model name", spec); return HB_EINVAL; }
            snprintf(model, sizeof model, "%s", v);
            o.model = model;
        } else {
            seterr(err, errlen, "--batch \"%s\": unknown option \"%s\" (mb, alg, model)", spec, t);
            return HB_EINVAL;
        }
    }
    char path[4096];
    hb_status rc = hb_benchdnn_find(colon + 1, NULL, path, sizeof path, err, errlen);
    if (rc) return rc;
    return hb_benchdnn_load((hb_batch_kind)k, path, &o, out, err, errlen);
}
