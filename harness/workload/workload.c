/*
 * workload.c - workload files: INI read with inih (ini_parse_stream with our own line reader, so
 * that every error names file:line), one section per group of cases. Format: docs/workloads.md.
 *
 * Parsing is two-level: the inih handler collects a section's keys (op, shape, sweep, quick, ...);
 * when the next section starts (or at the end of the file) the section is expanded into items,
 * each shape normalized and checked (hb_shape_normalize; tensors over 2^34 elements are "absurd").
 * Items go to a private list that is appended to the caller's only when the whole file is good.
 */
#include "workload/workload_internal.h"
#include "core/opdesc.h"
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_MAX_ELEMS 17179869184.0   /* 2^34: the "absurd" limit, as in hb_shape_normalize */
#define WL_MAX_SWEEP 256              /* points of one sweep line */
#define WL_MAX_RANGES 4               /* range tokens of one sweep line */

/* Largest tensor of op on shape s, with the defaults hb_shape_normalize would fill: the element
 * counts of core/opdesc.h (saturating at INT64_MAX, so no overflow for any field <= 2^34). */
static double max_tensor(hb_op op, const hb_shape *s0)
{
    hb_shape s = *s0;
    hb_shape_defaults(op, &s);
    double r = 0;
    const hb_op_info *info = hb_op_get(op);
    for (int i = -1; info && i < info->ninputs; i++) {
        const double e = (double)hb_op_elems(op, &s, i);
        if (e > r) r = e;
    }
    return r;
}

/* Check shape s for op and normalize it. Returns HB_OK or fails x at `line`. */
static hb_status check_shape(wl_ctx *x, hb_op op, hb_shape *s, int line)
{
    for (int i = 0; i < hb_shape_nfields; i++) {
        int64_t v = fieldv(s, i);
        if (v < 0) { fail(x, line, HB_EINVAL, "negative size: %s=%lld", hb_shape_fields[i].name, (long long)v); return HB_EINVAL; }
        if ((double)v > WL_MAX_ELEMS) {
            fail(x, line, HB_EINVAL, "absurd size: %s=%lld (limit 2^34)", hb_shape_fields[i].name, (long long)v);
            return HB_EINVAL;
        }
    }
    double e = max_tensor(op, s);
    if (e > WL_MAX_ELEMS) {
        fail(x, line, HB_EINVAL, "absurd size: a tensor of %s has %.3g elements (limit 2^34)", hb_op_get(op)->name, e);
        return HB_EINVAL;
    }
    char nerr[200];
    if (hb_shape_normalize(op, s, nerr, sizeof nerr) != HB_OK) {
        fail(x, line, HB_EINVAL, "%s", nerr);
        return HB_EINVAL;
    }
    return HB_OK;
}

/* ---- section keys ---- */
enum { K_OP, K_DTYPES, K_MODES, K_ROUTES, K_MODEL, K_WEIGHT, K_NAME, K_MB, K_ALG, K_SINGLE_COUNT,
       K_SHAPE = 100, K_SWEEP, K_QUICK, K_BATCH };
static const struct { const char *name; int id; } keys[] = {
    {"op", K_OP}, {"dtypes", K_DTYPES}, {"modes", K_MODES}, {"routes", K_ROUTES}, {"model", K_MODEL},
    {"weight", K_WEIGHT}, {"name", K_NAME}, {"mb", K_MB}, {"alg", K_ALG},
    {"shape", K_SHAPE}, {"sweep", K_SWEEP}, {"quick", K_QUICK}, {"batch", K_BATCH},
};
#define NKEYS ((int)(sizeof keys / sizeof keys[0]))

static void section_free(wl_section *s)
{
    free(s->cases);
    free(s->quick);
    free(s->batch);
    memset(s, 0, sizeof *s);
}

static void section_begin(wl_ctx *x)
{
    section_free(&x->sec);
    wl_section *s = &x->sec;
    snprintf(s->name, sizeof s->name, "%s", x->hdr_name);
    s->line = x->hdr_line;
    s->op = -1;
    s->alg = -1;
    s->weight = 1;
    x->cur_seq = x->hdr_seq;
}

static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 1;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(*v, c * sz);
    if (!p) return 0;
    *v = p;
    *cap = c;
    return 1;
}

static hb_status push_case(wl_ctx *x, const wl_case *c)
{
    wl_section *s = &x->sec;
    if (!grow((void **)&s->cases, &s->capcases, s->ncases, sizeof *s->cases)) {
        fail(x, c->line, HB_ENOMEM, "out of memory");
        return HB_ENOMEM;
    }
    s->cases[s->ncases++] = *c;
    return HB_OK;
}

/* Optional "LABEL:" at the start of a shape/sweep value. Returns the text after it. */
static const char *take_label(wl_ctx *x, const char *v, char *label, size_t len, int line)
{
    label[0] = 0;
    const char *colon = strchr(v, ':');
    if (!colon) return v;
    const char *a = skip_ws(v), *b = colon;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    if (b == a) { fail(x, line, HB_EINVAL, "empty label before ':'"); return NULL; }
    for (const char *p = a; p < b; p++)
        if (!is_label_char((unsigned char)*p)) {
            fail(x, line, HB_EINVAL, "bad label \"%.*s\" (letters, digits, '_', '-', '.')", (int)(b - a), a);
            return NULL;
        }
    if ((size_t)(b - a) >= len) { fail(x, line, HB_EINVAL, "label longer than %zu characters", len - 1); return NULL; }
    snprintf(label, len, "%.*s", (int)(b - a), a);
    return colon + 1;
}

static hb_status key_shape(wl_ctx *x, const char *v, int line)
{
    wl_case c;
    memset(&c, 0, sizeof c);
    c.line = line;
    const char *t = take_label(x, v, c.label, sizeof c.label, line);
    if (!t) return HB_EINVAL;
    t = skip_ws(t);
    if (!*t) { fail(x, line, HB_EINVAL, "shape has no fields"); return HB_EINVAL; }
    char perr[200];
    if (hb_shape_parse(t, &c.s, perr, sizeof perr) != HB_OK) { fail(x, line, HB_EINVAL, "%s", perr); return HB_EINVAL; }
    if (c.label[0]) snprintf(c.suffix, sizeof c.suffix, "%s", c.label);
    x->sec.nshape_lines++;
    return push_case(x, &c);
}

/* sweep = [LABEL:] F1[=F2...]=A..B*R | F=A..B+S  [more ranges]  [fixed key=value ...] */
static hb_status key_sweep(wl_ctx *x, const char *v, int line)
{
    char label[48];
    const char *t = take_label(x, v, label, sizeof label, line);
    if (!t) return HB_EINVAL;
    struct { int f[8]; int nf; int64_t vals[WL_MAX_SWEEP]; int nv; } rg[WL_MAX_RANGES];
    int nr = 0;
    char fixed[512] = "";
    size_t fl = 0;
    const char *p = skip_ws(t);
    while (*p) {
        const char *e = p;
        while (*e && !isspace((unsigned char)*e)) e++;
        size_t tl = (size_t)(e - p);
        const char *dots = NULL;
        for (const char *q = p; q + 1 < e; q++)
            if (q[0] == '.' && q[1] == '.') { dots = q; break; }
        if (!dots) {  /* a fixed field, for hb_shape_parse */
            if (fl + tl + 2 >= sizeof fixed) { fail(x, line, HB_EINVAL, "sweep line too long"); return HB_EINVAL; }
            fl += (size_t)snprintf(fixed + fl, sizeof fixed - fl, "%s%.*s", fl ? " " : "", (int)tl, p);
            p = skip_ws(e);
            continue;
        }
        if (nr == WL_MAX_RANGES) { fail(x, line, HB_EINVAL, "more than %d ranges in one sweep", WL_MAX_RANGES); return HB_EINVAL; }
        /* fields: names separated by '=' up to the start value */
        rg[nr].nf = 0;
        const char *q = p;
        for (;;) {
            const char *eq = memchr(q, '=', (size_t)(dots - q));
            if (!eq) break;
            int fi = field_index(q, (size_t)(eq - q));
            if (fi < 0) { fail(x, line, HB_EINVAL, "sweep: unknown shape field \"%.*s\"", (int)(eq - q), q); return HB_EINVAL; }
            if (!strcmp(hb_shape_fields[fi].name, "layout")) {
                fail(x, line, HB_EINVAL, "sweep: layout is a name (nchw, nhwc), not a range; give it as a fixed field or use two lines");
                return HB_EINVAL;
            }
            for (int r = 0; r <= nr; r++)
                for (int j = 0; j < (r < nr ? rg[r].nf : rg[nr].nf); j++)
                    if (rg[r].f[j] == fi) { fail(x, line, HB_EINVAL, "sweep: field %s swept twice", hb_shape_fields[fi].name); return HB_EINVAL; }
            if (rg[nr].nf == 8) { fail(x, line, HB_EINVAL, "sweep: more than 8 tied fields"); return HB_EINVAL; }
            rg[nr].f[rg[nr].nf++] = fi;
            q = eq + 1;
        }
        if (!rg[nr].nf) { fail(x, line, HB_EINVAL, "sweep \"%.*s\": expected FIELD=START..END*FACTOR", (int)tl, p); return HB_EINVAL; }
        int64_t a, b, step;
        const char *ne;
        if (!parse_int(q, &ne, &a) || ne != dots) { fail(x, line, HB_EINVAL, "sweep \"%.*s\": bad start value", (int)tl, p); return HB_EINVAL; }
        if (!parse_int(dots + 2, &ne, &b)) { fail(x, line, HB_EINVAL, "sweep \"%.*s\": bad end value", (int)tl, p); return HB_EINVAL; }
        char op = *ne;
        if ((op != '*' && op != '+') || !parse_int(ne + 1, &ne, &step) || ne != e) {
            fail(x, line, HB_EINVAL, "sweep \"%.*s\": expected END*FACTOR or END+STEP after '..'", (int)tl, p);
            return HB_EINVAL;
        }
        if (a < 1 || b < a) { fail(x, line, HB_EINVAL, "sweep \"%.*s\": need 1 <= start <= end", (int)tl, p); return HB_EINVAL; }
        if ((op == '*' && step < 2) || (op == '+' && step < 1)) {
            fail(x, line, HB_EINVAL, "sweep \"%.*s\": factor must be >= 2 (step >= 1)", (int)tl, p);
            return HB_EINVAL;
        }
        rg[nr].nv = 0;
        for (int64_t val = a;;) {
            if (rg[nr].nv == WL_MAX_SWEEP) { fail(x, line, HB_EINVAL, "sweep \"%.*s\" has more than %d points", (int)tl, p, WL_MAX_SWEEP); return HB_EINVAL; }
            rg[nr].vals[rg[nr].nv++] = val;
            if (op == '*') { if (val > b / step) break; val *= step; }
            else { if (val > b - step) break; val += step; }
            if (val > b) break;
        }
        nr++;
        p = skip_ws(e);
    }
    if (!nr) { fail(x, line, HB_EINVAL, "sweep has no range (FIELD=START..END*FACTOR); use shape for a single case"); return HB_EINVAL; }
    hb_shape base;
    char perr[200];
    if (hb_shape_parse(fixed, &base, perr, sizeof perr) != HB_OK) { fail(x, line, HB_EINVAL, "%s", perr); return HB_EINVAL; }
    /* a field both fixed and swept */
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < rg[r].nf; j++) {
            const char *fn = hb_shape_fields[rg[r].f[j]].name;
            size_t fnl = strlen(fn);
            for (const char *s = fixed; (s = strstr(s, fn)); s += fnl)
                if ((s == fixed || isspace((unsigned char)s[-1]) || s[-1] == ',') && s[fnl] == '=') {
                    fail(x, line, HB_EINVAL, "sweep: field %s is both swept and fixed", fn);
                    return HB_EINVAL;
                }
        }
    size_t total = 1;
    for (int r = 0; r < nr; r++) {
        total *= (size_t)rg[r].nv;
        if (total > WL_MAX_SWEEP) { fail(x, line, HB_EINVAL, "sweep has more than %d points", WL_MAX_SWEEP); return HB_EINVAL; }
    }
    for (size_t i = 0; i < total; i++) {
        wl_case c;
        memset(&c, 0, sizeof c);
        c.line = line;
        c.s = base;
        snprintf(c.label, sizeof c.label, "%s", label);
        size_t sl = label[0] ? (size_t)snprintf(c.suffix, sizeof c.suffix, "%s.", label) : 0;
        size_t idx = i;
        /* the last range varies fastest: iterate ranges from the last */
        size_t div = total;
        for (int r = 0; r < nr; r++) {
            div /= (size_t)rg[r].nv;
            int64_t val = rg[r].vals[(idx / div) % (size_t)rg[r].nv];
            for (int j = 0; j < rg[r].nf; j++) *fieldp(&c.s, rg[r].f[j]) = val;
            if (sl < sizeof c.suffix)
                sl += (size_t)snprintf(c.suffix + sl, sizeof c.suffix - sl, "%s%s=%lld", r ? "," : "",
                                       hb_shape_fields[rg[r].f[0]].name, (long long)val);
        }
        if (push_case(x, &c)) return HB_ENOMEM;
    }
    x->sec.nshape_lines++;
    return HB_OK;
}

/* Names separated by blanks or commas into a mask; "all" sets every bit. */
static hb_status key_mask(wl_ctx *x, const char *v, int line, const char *what, int (*parse)(const char *), int count,
                          const char *known, unsigned *mask)
{
    char tok[64];
    *mask = 0;
    const char *p = v;
    while (*p) {
        while (*p && (isspace((unsigned char)*p) || *p == ',')) p++;
        if (!*p) break;
        size_t n = 0;
        while (p[n] && !isspace((unsigned char)p[n]) && p[n] != ',') n++;
        snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), p);
        p += n;
        if (!strcmp(tok, "all")) { *mask |= (1u << count) - 1; continue; }
        int i = parse(tok);
        if (i < 0) { fail(x, line, HB_EINVAL, "unknown %s \"%s\" (%s, all)", what, tok, known); return HB_EINVAL; }
        *mask |= 1u << i;
    }
    if (!*mask) { fail(x, line, HB_EINVAL, "empty %s list", what); return HB_EINVAL; }
    return HB_OK;
}

static hb_status key_batch(wl_ctx *x, const char *v, int line)
{
    wl_section *s = &x->sec;
    const char *colon = strchr(v, ':');
    char kind[32];
    if (!colon || colon == v || (size_t)(colon - v) >= sizeof kind) {
        fail(x, line, HB_EINVAL, "batch: expected KIND:FILE (KIND conv, pool, maxpool, avgpool, matmul)");
        return HB_EINVAL;
    }
    snprintf(kind, sizeof kind, "%.*s", (int)(colon - v), v);
    wl_batch b;
    memset(&b, 0, sizeof b);
    int k = hb_batch_kind_parse(kind, &b.alg);
    if (k < 0) { fail(x, line, HB_EINVAL, "batch: unknown kind \"%s\" (conv, pool, maxpool, avgpool, matmul)", kind); return HB_EINVAL; }
    const char *file = skip_ws(colon + 1);
    if (!*file) { fail(x, line, HB_EINVAL, "batch: no file after \"%s:\"", kind); return HB_EINVAL; }
    if (strlen(file) >= sizeof b.file) { fail(x, line, HB_EINVAL, "batch: file name too long"); return HB_EINVAL; }
    b.kind = (hb_batch_kind)k;
    snprintf(b.file, sizeof b.file, "%s", file);
    b.line = line;
    if (!grow((void **)&s->batch, &s->capbatch, s->nbatch, sizeof *s->batch)) { fail(x, line, HB_ENOMEM, "out of memory"); return HB_ENOMEM; }
    s->batch[s->nbatch++] = b;
    return HB_OK;
}

static hb_status set_key(wl_ctx *x, const char *name, const char *value, int line)
{
    wl_section *s = &x->sec;
    int id = -1;
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(name, keys[i].name)) id = keys[i].id;
    if (id < 0) {
        fail(x, line, HB_EINVAL, "unknown key \"%s\" (op, shape, sweep, quick, dtypes, modes, routes, model, weight, name, batch, mb, alg)", name);
        return HB_EINVAL;
    }
    const char *v = skip_ws(value);
    if (!*v) { fail(x, line, HB_EINVAL, "key \"%s\" has no value", name); return HB_EINVAL; }
    if (id < K_SINGLE_COUNT) {
        if (s->key_line[id]) {
            fail(x, line, HB_EINVAL, "duplicate key \"%s\" (first at line %d)", name, s->key_line[id]);
            return HB_EINVAL;
        }
        s->key_line[id] = line;
    }
    switch (id) {
    case K_OP: {
        int op = hb_op_parse(v);
        if (op < 0) {
            char known[256] = "";
            size_t kl = 0;
            for (int i = 0; i < HB_OP_COUNT && kl < sizeof known; i++)
                kl += (size_t)snprintf(known + kl, sizeof known - kl, "%s%s", i ? ", " : "", hb_op_get((hb_op)i)->name);
            fail(x, line, HB_EINVAL, "unknown op \"%s\" (%s)", v, known);
            return HB_EINVAL;
        }
        s->op = op;
        s->op_line = line;
        return HB_OK;
    }
    case K_SHAPE: return key_shape(x, v, line);
    case K_SWEEP: return key_sweep(x, v, line);
    case K_QUICK: {
        const char *p = v;
        while (*p) {
            while (*p && (isspace((unsigned char)*p) || *p == ',')) p++;
            if (!*p) break;
            size_t n = 0;
            while (p[n] && !isspace((unsigned char)p[n]) && p[n] != ',') n++;
            if (n >= sizeof s->quick->text) { fail(x, line, HB_EINVAL, "quick: token too long"); return HB_EINVAL; }
            if (!grow((void **)&s->quick, &s->capquick, s->nquick, sizeof *s->quick)) { fail(x, line, HB_ENOMEM, "out of memory"); return HB_ENOMEM; }
            snprintf(s->quick[s->nquick].text, sizeof s->quick->text, "%.*s", (int)n, p);
            s->quick[s->nquick++].line = line;
            p += n;
        }
        return HB_OK;
    }
    case K_DTYPES: return key_mask(x, v, line, "dtype", hb_dtype_parse, HB_DTYPE_COUNT, "f32, tf32, f16, bf16, q8_0, q4_k, q5_k, q6_k", &s->dmask);
    case K_MODES: return key_mask(x, v, line, "mode", hb_mode_parse, HB_MODE_COUNT, "convert, f32, resident", &s->mmask);
    case K_ROUTES: return key_mask(x, v, line, "route", hb_route_parse, HB_ROUTE_COUNT, "pageable, pinned, mapped", &s->rmask);
    case K_MODEL:
        if (strlen(v) >= sizeof s->model) { fail(x, line, HB_EINVAL, "model name longer than %zu characters", sizeof s->model - 1); return HB_EINVAL; }
        for (const char *p = v; *p; p++)
            if (isspace((unsigned char)*p)) { fail(x, line, HB_EINVAL, "model name \"%s\" has blanks", v); return HB_EINVAL; }
        snprintf(s->model, sizeof s->model, "%s", v);
        return HB_OK;
    case K_WEIGHT: {
        char *end;
        errno = 0;
        double w = strtod(v, &end);
        if (end == v || *skip_ws(end) || errno || !(w > 0) || !isfinite(w)) {
            fail(x, line, HB_EINVAL, "weight \"%s\" is not a positive number", v);
            return HB_EINVAL;
        }
        s->weight = w;
        return HB_OK;
    }
    case K_NAME:
        if (strlen(v) >= sizeof s->cname) { fail(x, line, HB_EINVAL, "name longer than %zu characters", sizeof s->cname - 1); return HB_EINVAL; }
        for (const char *p = v; *p; p++)
            if (!is_label_char((unsigned char)*p)) { fail(x, line, HB_EINVAL, "bad name \"%s\" (letters, digits, '_', '-', '.')", v); return HB_EINVAL; }
        snprintf(s->cname, sizeof s->cname, "%s", v);
        return HB_OK;
    case K_MB: {
        int64_t mb;
        const char *e;
        if (!parse_int(v, &e, &mb) || *skip_ws(e) || mb <= 0 || (double)mb > WL_MAX_ELEMS) {
            fail(x, line, HB_EINVAL, "mb \"%s\" is not a positive integer", v);
            return HB_EINVAL;
        }
        s->mb = mb;
        s->mb_line = line;
        return HB_OK;
    }
    case K_ALG:
        if (!strcmp(v, "max")) s->alg = HB_POOL_MAX;
        else if (!strcmp(v, "avg") || !strcmp(v, "avg_np")) s->alg = HB_POOL_AVG;
        else if (!strcmp(v, "avg_p")) s->alg = HB_POOL_AVG_P;
        else if (!strcmp(v, "auto")) s->alg = HB_POOL_AUTO;
        else { fail(x, line, HB_EINVAL, "alg \"%s\": expected max, avg (= avg_np), avg_p or auto", v); return HB_EINVAL; }
        s->alg_line = line;
        return HB_OK;
    case K_BATCH: return key_batch(x, v, line);
    default: break;
    }
    fail(x, line, HB_EINVAL, "internal: key %s", name);
    return HB_EINVAL;
}

/* ---- section expansion ---- */

/* Mark quick items of the section (items first..first+n-1 of x->tmp, labels parallel). */
static hb_status apply_quick(wl_ctx *x, hb_item *it, char (*labels)[96], size_t n)
{
    wl_section *s = &x->sec;
    for (size_t q = 0; q < s->nquick; q++) {
        const char *t = s->quick[q].text;
        int line = s->quick[q].line;
        size_t hits = 0;
        if (!strcmp(t, "none")) {
            if (s->nquick != 1) { fail(x, line, HB_EINVAL, "quick: \"none\" cannot be combined with other selections"); return HB_EINVAL; }
            return HB_OK;
        }
        if (!strcmp(t, "all")) { for (size_t i = 0; i < n; i++) it[i].c.quick = 1; hits = n; }
        else if (!strcmp(t, "first")) { it[0].c.quick = 1; hits = 1; }
        else if (!strcmp(t, "last")) { it[n - 1].c.quick = 1; hits = 1; }
        else if (isdigit((unsigned char)t[0])) {
            char *end;
            long long i = strtoll(t, &end, 10);
            if (*end || i < 1 || (size_t)i > n) {
                fail(x, line, HB_EINVAL, "quick: \"%s\" is not a case number between 1 and %zu", t, n);
                return HB_EINVAL;
            }
            it[i - 1].c.quick = 1;
            hits = 1;
        } else if (strchr(t, '=')) {
            const char *eq = strchr(t, '=');
            int fi = field_index(t, (size_t)(eq - t));
            int64_t v;
            const char *e;
            if (fi < 0) { fail(x, line, HB_EINVAL, "quick: unknown shape field in \"%s\"", t); return HB_EINVAL; }
            if (!strcmp(hb_shape_fields[fi].name, "layout")) { /* a name: layout=nhwc */
                hb_shape ls;
                char perr[200];
                if (hb_shape_parse(t, &ls, perr, sizeof perr) != HB_OK) { fail(x, line, HB_EINVAL, "quick: %s", perr); return HB_EINVAL; }
                v = ls.layout;
            } else if (!parse_int(eq + 1, &e, &v) || *e) {
                fail(x, line, HB_EINVAL, "quick: bad value in \"%s\"", t);
                return HB_EINVAL;
            }
            for (size_t i = 0; i < n; i++)
                if (fieldv(&it[i].c.shape, fi) == v) { it[i].c.quick = 1; hits++; }
        } else {
            for (size_t i = 0; i < n; i++)
                if (!strcmp(labels[i], t)) { it[i].c.quick = 1; hits++; }
        }
        if (!hits) { fail(x, line, HB_EINVAL, "quick: \"%s\" selects no case of section [%s]", t, s->name); return HB_EINVAL; }
    }
    return HB_OK;
}

static hb_status section_end(wl_ctx *x)
{
    wl_section *s = &x->sec;
    if (!x->cur_seq) return HB_OK;
    x->cur_seq = 0;
    size_t first = x->tmp.n;
    const char *base = s->cname[0] ? s->cname : s->name;
    char (*labels)[96] = NULL;
    hb_status rc = HB_OK;
    if (s->nbatch) {
        if (s->op >= 0 || s->nshape_lines) {
            fail(x, s->op >= 0 ? s->op_line : s->cases[0].line, HB_EINVAL,
                 "section [%s] mixes batch with op/shape/sweep: use one section for each", s->name);
            return HB_EINVAL;
        }
        for (size_t b = 0; b < s->nbatch; b++) {
            const wl_batch *bt = &s->batch[b];
            if (s->alg >= 0 && bt->kind != HB_BATCH_POOL) {
                fail(x, s->alg_line, HB_EINVAL, "alg applies to pool lists only");
                return HB_EINVAL;
            }
            char path[4096], berr[600];
            if ((rc = hb_benchdnn_find(bt->file, x->dir, path, sizeof path, berr, sizeof berr))) {
                fail(x, bt->line, rc, "%s", berr);
                return rc;
            }
            hb_batch_opts o = {s->mb, bt->alg, s->model, s->weight};
            if (s->alg >= 0) o.alg = (hb_pool_alg)s->alg;
            if ((rc = hb_benchdnn_load(bt->kind, path, &o, &x->tmp, berr, sizeof berr))) {
                fail(x, bt->line, rc, "%s", berr);
                return rc;
            }
        }
        size_t n = x->tmp.n - first;
        labels = calloc(n ? n : 1, sizeof *labels);
        if (!labels) { fail(x, s->line, HB_ENOMEM, "out of memory"); return HB_ENOMEM; }
        for (size_t i = 0; i < n; i++) {
            hb_item *it = &x->tmp.v[first + i];
            snprintf(labels[i], sizeof labels[i], "%s", it->c.name);
            it->dtype_mask = s->dmask;
            it->mode_mask = s->mmask;
            it->route_mask = s->rmask;
        }
    } else {
        if (s->op < 0) { fail(x, s->line, HB_EINVAL, "section [%s] has no op (or batch)", s->name); return HB_EINVAL; }
        if (!s->ncases) { fail(x, s->op_line, HB_EINVAL, "section [%s] has no shape or sweep", s->name); return HB_EINVAL; }
        if (s->mb_line) { fail(x, s->mb_line, HB_EINVAL, "mb applies to batch (benchdnn list) sections only; a shape sets its batch with batch="); return HB_EINVAL; }
        if (s->alg_line) { fail(x, s->alg_line, HB_EINVAL, "alg applies to batch (benchdnn pool) sections only; use op = maxpool or avgpool"); return HB_EINVAL; }
        labels = calloc(s->ncases, sizeof *labels);
        if (!labels) { fail(x, s->line, HB_ENOMEM, "out of memory"); return HB_ENOMEM; }
        for (size_t i = 0; i < s->ncases; i++) {
            wl_case *c = &s->cases[i];
            hb_item it;
            memset(&it, 0, sizeof it);
            it.c.op = (hb_op)s->op;
            it.c.shape = c->s;
            if ((rc = check_shape(x, it.c.op, &it.c.shape, c->line))) goto out;
            it.c.dtype = HB_F32;
            it.c.weight = s->weight;
            snprintf(it.c.model, sizeof it.c.model, "%s", s->model);
            snprintf(it.c.source, sizeof it.c.source, "%s:%d", x->path, c->line);
            /* names are labels (the case key is op|shape|...): a long one is cut to fit */
            char full[256];
            if (c->suffix[0]) snprintf(full, sizeof full, "%s.%s.%s", x->stem, base, c->suffix);
            else if (s->ncases > 1) snprintf(full, sizeof full, "%s.%s.%zu", x->stem, base, i + 1);
            else snprintf(full, sizeof full, "%s.%s", x->stem, base);
            snprintf(it.c.name, sizeof it.c.name, "%.95s", full);
            it.dtype_mask = s->dmask;
            it.mode_mask = s->mmask;
            it.route_mask = s->rmask;
            snprintf(labels[i], sizeof labels[i], "%s", c->label);
            if ((rc = hb_item_list_push(&x->tmp, &it))) { fail(x, c->line, rc, "out of memory"); goto out; }
        }
    }
    rc = apply_quick(x, x->tmp.v + first, labels, x->tmp.n - first);
out:
    free(labels);
    return rc;
}

/* ---- inih glue ---- */

/* fgets-style reader for ini_parse_stream: counts lines (so the handler knows its line), strips
 * `#`/`;` comments that follow a blank, notes [section] headers, and refuses what inih would
 * silently take differently: over-long lines (inih would split them) and indented lines (inih
 * would read them as continuations of the previous value). Returns NULL at EOF or on error. */
static char *wl_reader(char *str, int num, void *stream)
{
    wl_ctx *x = stream;
    if (x->failed) return NULL;
    ssize_t len = getline(&x->buf, &x->bufcap, x->f);
    if (len < 0) {
        if (ferror(x->f)) fail(x, x->lineno + 1, HB_EDEVICE, "read error: %s", strerror(errno));
        return NULL;
    }
    x->lineno++;
    char *l = x->buf;
    /* a NUL byte would silently cut the line where it stands (everything here is C strings) */
    if (memchr(l, 0, (size_t)len)) {
        fail(x, x->lineno, HB_EINVAL, "NUL byte in line (a workload file is text)");
        return NULL;
    }
    if (x->lineno == 1 && !strncmp(l, "\xEF\xBB\xBF", 3)) memmove(l, l + 3, (size_t)len - 2), len -= 3;
    /* comments: a whole line starting with # or ;, or # / ; after a blank */
    for (char *p = l; *p; p++)
        if ((*p == '#' || *p == ';') && (p == l || isspace((unsigned char)p[-1]))) { p[0] = '\n'; p[1] = 0; break; }
    len = (ssize_t)strlen(l);
    while (len > 0 && (l[len - 1] == '\n' || l[len - 1] == '\r' || l[len - 1] == ' ' || l[len - 1] == '\t')) l[--len] = 0;
    if (len > 0 && isspace((unsigned char)l[0])) {
        const char *q = skip_ws(l);
        if (*q) {
            fail(x, x->lineno, HB_EINVAL, "indented line (continuation lines are not supported; remove the indentation)");
            return NULL;
        }
        len = 0;
        l[0] = 0;
    }
    if (len + 2 > num) {
        fail(x, x->lineno, HB_EINVAL, "line too long (%zd characters; at most %d)", len, num - 2);
        return NULL;
    }
    if (l[0] == '[') {
        char *e = strchr(l, ']');
        if (!e) { fail(x, x->lineno, HB_EINVAL, "section header without ']'"); return NULL; }
        if (*skip_ws(e + 1)) { fail(x, x->lineno, HB_EINVAL, "characters after the section header"); return NULL; }
        size_t n = (size_t)(e - l - 1);
        if (!n || n >= sizeof x->hdr_name) { fail(x, x->lineno, HB_EINVAL, "section name empty or longer than %zu characters", sizeof x->hdr_name - 1); return NULL; }
        for (size_t i = 0; i < n; i++)
            if (!is_label_char((unsigned char)l[1 + i])) {
                fail(x, x->lineno, HB_EINVAL, "bad section name \"%.*s\" (letters, digits, '_', '-', '.')", (int)n, l + 1);
                return NULL;
            }
        if (x->hdr_seq > x->cur_seq && x->hdr_seq) {
            fail(x, x->hdr_line, HB_EINVAL, "section [%s] has no keys", x->hdr_name);
            return NULL;
        }
        snprintf(x->hdr_name, sizeof x->hdr_name, "%.*s", (int)n, l + 1);
        for (size_t i = 0; i < x->nseen; i++)
            if (!strcmp(x->seen[i], x->hdr_name)) {
                fail(x, x->lineno, HB_EINVAL, "duplicate section [%s] (first at line %d)", x->hdr_name, x->seen_line[i]);
                return NULL;
            }
        if (!grow((void **)&x->seen, &x->capseen, x->nseen, sizeof *x->seen)) { fail(x, x->lineno, HB_ENOMEM, "out of memory"); return NULL; }
        int *sl = realloc(x->seen_line, x->capseen * sizeof *sl);
        if (!sl) { fail(x, x->lineno, HB_ENOMEM, "out of memory"); return NULL; }
        x->seen_line = sl;
        snprintf(x->seen[x->nseen], sizeof x->seen[0], "%s", x->hdr_name);
        x->seen_line[x->nseen++] = x->lineno;
        x->hdr_seq++;
        x->hdr_line = x->lineno;
    }
    memcpy(str, l, (size_t)len);
    str[len] = '\n';
    str[len + 1] = 0;
    return str;
}

static int wl_handler(void *user, const char *section, const char *name, const char *value)
{
    wl_ctx *x = user;
    if (x->failed) return 0;
    if (!section[0] || !x->hdr_seq) { fail(x, x->lineno, HB_EINVAL, "key \"%s\" outside a [section]", name); return 0; }
    if (x->cur_seq != x->hdr_seq) {
        if (section_end(x)) return 0;
        section_begin(x);
    }
    return set_key(x, name, value, x->lineno) == HB_OK;
}

hb_status hb_workload_load(const char *path, hb_item_list *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    wl_ctx *x = calloc(1, sizeof *x);
    if (!x) { if (err) snprintf(err, errlen, "%s: out of memory", path); return HB_ENOMEM; }
    x->path = path;
    x->err = err;
    x->errlen = errlen;
    const char *sl = strrchr(path, '/');
    if (!sl) snprintf(x->dir, sizeof x->dir, ".");
    else snprintf(x->dir, sizeof x->dir, "%.*s", (int)(sl - path), path);
    if (sl == path) snprintf(x->dir, sizeof x->dir, "/");
    const char *bn = sl ? sl + 1 : path;
    size_t bl = strlen(bn);
    if (bl > 4 && !strcmp(bn + bl - 4, ".ini")) bl -= 4;
    snprintf(x->stem, sizeof x->stem, "%.*s", (int)(bl < sizeof x->stem ? bl : sizeof x->stem - 1), bn);
    hb_status rc;
    x->f = fopen(path, "r");
    if (!x->f) {
        fail(x, 0, HB_EDEVICE, "cannot read: %s", strerror(errno));
        rc = x->st;
        goto done;
    }
    int r = ini_parse_stream(wl_reader, x, wl_handler, x);
    if (!x->failed && r == -2) fail(x, 0, HB_ENOMEM, "out of memory in inih");
    if (!x->failed && r > 0) fail(x, r, HB_EINVAL, "syntax error: expected \"key = value\", \"[section]\" or a # comment");
    if (!x->failed && r < 0) fail(x, 0, HB_EDEVICE, "inih error %d", r);
    if (!x->failed && x->hdr_seq > x->cur_seq && x->hdr_seq) fail(x, x->hdr_line, HB_EINVAL, "section [%s] has no keys", x->hdr_name);
    if (!x->failed) section_end(x);
    if (!x->failed && !x->tmp.n) fail(x, 0, HB_EINVAL, "no cases (the file has no sections)");
    if (!x->failed) {
        for (size_t i = 0; i < x->tmp.n && !x->failed; i++)
            if (hb_item_list_push(out, &x->tmp.v[i])) {
                out->n -= i;  /* nothing appended on error */
                fail(x, 0, HB_ENOMEM, "out of memory");
            }
    }
    rc = x->failed ? x->st : HB_OK;
done:
    if (x->f) fclose(x->f);
    free(x->buf);
    section_free(&x->sec);
    free(x->seen);
    free(x->seen_line);
    hb_item_list_free(&x->tmp);
    free(x);
    return rc;
}
