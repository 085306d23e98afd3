/* ggml_mm: ggml's own matrix product on a GGUF file's weight and input, for the output-agreement check
 * against hybench's quantized matmul (issue 44 item 4) and for per-call timings of single products.
 *
 * Built by tools/ggml_bench.sh against a ggml build OUTSIDE this repository (never by hybench's Makefile):
 *   cc -O2 tools/ggml_mm.c -I GGML/include -L BUILD/bin -lggml -lggml-base -lggml-cpu -lm
 *
 * Usage:
 *   ggml_mm --make FILE.gguf --type T --n N --k K --m M [--seed S]
 *       writes a GGUF (version 3, alignment 32) holding two tensors:
 *         "w"  type T, ne = [k, n]: n weight rows of k elements, each row k/block blocks in ggml's block
 *              format (hybench's W[n,k], the contract in harness/core/quant.h)
 *         "x"  f32, ne = [k, m]: hybench's A[m,k] row-major (m tokens)
 *       w is ggml_quantize_chunk of uniform(-1,1) values (f32/f16: the values themselves, rounded to f16 for
 *       f16); x is uniform(-1,1). Metadata: hybench.seed (u64), hybench.m/n/k (u32).
 *       T: f32 f16 q8_0 q4_K q5_K q6_K (any ggml type name that ggml_quantize_chunk takes without an
 *       importance matrix). k must be a multiple of T's block size (32 for q8_0, 256 for the K types).
 *   ggml_mm --run FILE.gguf [--backend NAME] [--out Y.gguf] [--check] [--time-ms MS] [--threads N]
 *       loads "w" and "x", computes y = ggml_mul_mat(w, x) (ne = [n, m]: hybench's C[m,n] = A W^T,
 *       row-major) on backend NAME (ggml's device name: CPU, CUDA0, ...; default CPU), and
 *       --out: writes a GGUF holding "y" (f32, ne = [n, m]) and the metadata hybench.backend (string);
 *       --check: compares y with the f64 product of x and ggml's own dequantization of w (type traits'
 *         to_float, the format's definition as ggml implements it): prints max |err|, max |ref| and the
 *         NMSE sum((y-ref)^2)/sum(ref^2), and fails (exit 1) when NMSE > 5e-4, the tolerance
 *         test-backend-ops applies to MUL_MAT (max_nmse_err) for every weight type;
 *       --time-ms MS: after 3 warm-up calls, times single ggml_backend_graph_compute calls of the one
 *         MUL_MAT node (synchronous: host wall time from enqueue to completion, launch included) until MS
 *         milliseconds of samples (at least 10) and prints their median and minimum in microseconds.
 *   ggml_mm --perf-line NAME --type T --n N --k K --m M
 *       prints one line of test-backend-ops' --test-file format (tests/test-backend-ops.cpp,
 *       make_test_cases_from_file: op, dst type, dst ne[4], op-param count, source count, then per source
 *       type, ne[4], nb[4] (0: contiguous), then the case name): a MUL_MAT of w (type T, ne [k, n]) and
 *       x (f32, [k, m]) into f32 [n, m], named NAME, so that `test-backend-ops perf -o MUL_MAT
 *       --test-file F` times exactly the shapes given (its built-in perf list has only n=4096 k=14336).
 *   ggml_mm --bench --type T --n N --k K --m M [--seed S] [--backend B] [--check] [--time-ms MS] [--threads N]
 *       as --make then --run, with the tensors made in memory (no file): for timings of large shapes.
 *   ggml_mm --compare A.gguf B.gguf [--nmse TOL]
 *       NMSE of A's "y" against B's (e.g. hybench's result against ggml's); exit 1 above TOL (5e-4).
 *   ggml_mm --list
 *       the devices of this ggml build (name and description), one line each.
 *   Output lines start with "ggml_mm:" and carry key=value fields (read by tools/ggml_bench.sh).
 * Exit: 0 ok; 1 check failed; 2 usage or a bad file (the message names the file and the tensor); 3 a
 *   backend or allocation failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "gguf.h"

static void die(int rc, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "ggml_mm: ");
    fprintf(stderr, fmt, a ? a : "", b ? b : "");
    fprintf(stderr, "\n");
    exit(rc);
}

/* xorshift64*: a seeded stream of uniform(-1,1) floats (the state must be non-zero). */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}
static float rng_unit(uint64_t *s)
{
    return (float)((double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static enum ggml_type type_by_name(const char *name)
{
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_type_traits *tr = ggml_get_type_traits((enum ggml_type)t);
        if (tr && tr->type_name && tr->blck_size > 0 && strcmp(tr->type_name, name) == 0)
            return (enum ggml_type)t;
    }
    die(2, "unknown ggml type '%s' (f32 f16 q8_0 q4_K q5_K q6_K ...)", name, NULL);
    return GGML_TYPE_F32;
}

static long long parse_pos(const char *opt, const char *v)
{
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    if (!v[0] || *end || x <= 0 || x > (1LL << 31))
        die(2, "option %s: '%s' is not a positive integer", opt, v);
    return x;
}

/* The weight w (type, ne [k, n]) and input x (f32, [k, m]) of seed `seed` in a new context (*ctx_out, the
 * caller's to free): w = ggml_quantize_chunk of uniform(-1,1) values (f32: those values, f16: rounded),
 * x uniform(-1,1). */
static void synth(enum ggml_type type, int64_t n, int64_t k, int64_t m, uint64_t seed, struct ggml_context **ctx_out,
                  struct ggml_tensor **w_out, struct ggml_tensor **x_out)
{
    int64_t bs = ggml_blck_size(type);
    if (k % bs)
        die(2, "--k must be a multiple of the type's block size (%s)", ggml_type_name(type), NULL);
    if (ggml_quantize_requires_imatrix(type))
        die(2, "type %s needs an importance matrix: not supported here", ggml_type_name(type), NULL);
    size_t wbytes = ggml_row_size(type, k) * (size_t)n;
    size_t xbytes = sizeof(float) * (size_t)k * (size_t)m;
    struct ggml_init_params ip = { ggml_tensor_overhead() * 4 + wbytes + xbytes + 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    if (!ctx)
        die(3, "out of memory for %s tensors%s", ggml_type_name(type), NULL);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, type, k, n);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
    ggml_set_name(w, "w");
    ggml_set_name(x, "x");
    uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
    float *wf = malloc(sizeof(float) * (size_t)n * (size_t)k);
    if (!wf)
        die(3, "out of memory%s%s", NULL, NULL);
    for (int64_t i = 0; i < n * k; i++)
        wf[i] = rng_unit(&s);
    if (type == GGML_TYPE_F32) {
        memcpy(w->data, wf, wbytes);
    } else if (type == GGML_TYPE_F16) {
        ggml_fp32_to_fp16_row(wf, (ggml_fp16_t *)w->data, n * k);
    } else {
        size_t got = ggml_quantize_chunk(type, wf, w->data, 0, n, k, NULL);
        if (got != wbytes)
            die(3, "ggml_quantize_chunk wrote an unexpected size for %s%s", ggml_type_name(type), NULL);
    }
    free(wf);
    float *xf = (float *)x->data;
    for (int64_t i = 0; i < k * m; i++)
        xf[i] = rng_unit(&s);
    *ctx_out = ctx;
    *w_out = w;
    *x_out = x;
}

/* --make: the weight and input file. */
static int make_file(const char *path, enum ggml_type type, int64_t n, int64_t k, int64_t m, uint64_t seed)
{
    struct ggml_context *ctx;
    struct ggml_tensor *w, *x;
    synth(type, n, k, m, seed, &ctx, &w, &x);
    struct gguf_context *g = gguf_init_empty();
    gguf_set_val_u64(g, "hybench.seed", seed);
    gguf_set_val_u32(g, "hybench.m", (uint32_t)m);
    gguf_set_val_u32(g, "hybench.n", (uint32_t)n);
    gguf_set_val_u32(g, "hybench.k", (uint32_t)k);
    gguf_add_tensor(g, w);
    gguf_add_tensor(g, x);
    if (!gguf_write_to_file(g, path, false))
        die(3, "cannot write %s%s", path, NULL);
    printf("ggml_mm: made file=%s type=%s n=%lld k=%lld m=%lld seed=%llu w_bytes=%zu\n", path,
           ggml_type_name(type), (long long)n, (long long)k, (long long)m, (unsigned long long)seed,
           ggml_nbytes(w));
    gguf_free(g);
    ggml_free(ctx);
    return 0;
}

static struct ggml_tensor *need_tensor(struct ggml_context *ctx, const char *path, const char *name)
{
    struct ggml_tensor *t = ggml_get_tensor(ctx, name);
    if (!t)
        die(2, "%s: no tensor \"%s\"", path, name);
    if (t->ne[2] != 1 || t->ne[3] != 1)
        die(2, "%s: tensor \"%s\" has more than 2 dimensions", path, name);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* f64 reference: ref[j*n + i] = sum_l x[j,l] * deq(w)[i,l], w dequantized row by row by ggml's to_float. */
static double *reference(const struct ggml_tensor *w, const float *x, int64_t n, int64_t k, int64_t m)
{
    const struct ggml_type_traits *tr = ggml_get_type_traits(w->type);
    float *row = malloc(sizeof(float) * (size_t)k);
    double *ref = calloc((size_t)n * (size_t)m, sizeof(double));
    if (!row || !ref)
        die(3, "out of memory for the reference%s%s", NULL, NULL);
    for (int64_t i = 0; i < n; i++) {
        const char *src = (const char *)w->data + (size_t)i * w->nb[1];
        if (w->type == GGML_TYPE_F32)
            memcpy(row, src, sizeof(float) * (size_t)k);
        else if (tr->to_float)
            tr->to_float(src, row, k);
        else
            die(2, "ggml has no dequantization for type %s%s", ggml_type_name(w->type), NULL);
        for (int64_t j = 0; j < m; j++) {
            const float *xr = x + (size_t)j * (size_t)k;
            double acc = 0.0;
            for (int64_t l = 0; l < k; l++)
                acc += (double)row[l] * (double)xr[l];
            ref[(size_t)j * (size_t)n + (size_t)i] = acc;
        }
    }
    free(row);
    return ref;
}

static int compute(const char *path, struct ggml_tensor *hw, struct ggml_tensor *hx, const char *bname,
                   const char *out, int check, double time_ms, int threads);

/* --run: load "w" and "x" of a GGUF file and compute. */
static int run_file(const char *path, const char *bname, const char *out, int check, double time_ms, int threads)
{
    struct ggml_context *hctx = NULL;
    struct gguf_init_params gp = { false, &hctx };
    struct gguf_context *g = gguf_init_from_file(path, gp);
    if (!g || !hctx)
        die(2, "%s: not a readable GGUF file%s", path, NULL);
    struct ggml_tensor *hw = need_tensor(hctx, path, "w");
    struct ggml_tensor *hx = need_tensor(hctx, path, "x");
    if (hx->type != GGML_TYPE_F32)
        die(2, "%s: tensor \"x\" must be f32 (it is %s)", path, ggml_type_name(hx->type));
    if (hw->ne[0] != hx->ne[0])
        die(2, "%s: \"w\" and \"x\" differ in ne0 (k)%s", path, NULL);
    int rc = compute(path, hw, hx, bname, out, check, time_ms, threads);
    gguf_free(g);
    ggml_free(hctx);
    return rc;
}

/* y = ggml_mul_mat(hw, hx) on backend bname (host tensors in, see the file's header for the options). */
static int compute(const char *path, struct ggml_tensor *hw, struct ggml_tensor *hx, const char *bname,
                   const char *out, int check, double time_ms, int threads)
{
    int64_t k = hw->ne[0], n = hw->ne[1], m = hx->ne[1];

    ggml_backend_load_all();
    ggml_backend_t be = ggml_backend_init_by_name(bname, NULL);
    if (!be)
        die(3, "no ggml backend named '%s' in this build%s", bname, NULL);
    ggml_backend_dev_t dev = ggml_backend_get_device(be);
    if (threads > 0 && ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU)
        ggml_backend_cpu_set_n_threads(be, threads);

    struct ggml_init_params ip = { ggml_tensor_overhead() * 8 + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, hw->type, k, n);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
    struct ggml_tensor *y = ggml_mul_mat(ctx, w, x);
    ggml_set_name(y, "y");
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (!buf)
        die(3, "cannot allocate the tensors on %s%s", bname, NULL);
    ggml_backend_tensor_set(w, hw->data, 0, ggml_nbytes(hw));
    ggml_backend_tensor_set(x, hx->data, 0, ggml_nbytes(hx));
    size_t ybytes = ggml_nbytes(y);
    float *hy = malloc(ybytes);
    if (!hy)
        die(3, "out of memory%s%s", NULL, NULL);
    for (size_t i = 0; i < ybytes / sizeof(float); i++)
        hy[i] = NAN; /* poison: every element must come back written */
    if (ggml_backend_graph_compute(be, gf) != GGML_STATUS_SUCCESS)
        die(3, "ggml_backend_graph_compute failed on %s%s", bname, NULL);
    ggml_backend_tensor_get(y, hy, 0, ybytes);
    printf("ggml_mm: ran file=%s backend=%s device=\"%s\" type=%s n=%lld k=%lld m=%lld\n", path,
           ggml_backend_name(be), ggml_backend_dev_description(dev), ggml_type_name(hw->type), (long long)n,
           (long long)k, (long long)m);

    int rc = 0;
    if (check) {
        double *ref = reference(hw, (const float *)hx->data, n, k, m);
        double se = 0.0, sr = 0.0, maxe = 0.0, maxr = 0.0;
        size_t bad = 0;
        for (size_t i = 0; i < (size_t)n * (size_t)m; i++) {
            double d = (double)hy[i] - ref[i];
            if (!isfinite(hy[i]))
                bad++;
            se += d * d;
            sr += ref[i] * ref[i];
            if (fabs(d) > maxe)
                maxe = fabs(d);
            if (fabs(ref[i]) > maxr)
                maxr = fabs(ref[i]);
        }
        double nmse = sr > 0 ? se / sr : se;
        int ok = bad == 0 && nmse <= 5e-4;
        printf("ggml_mm: check backend=%s type=%s n=%lld k=%lld m=%lld max_abs_err=%.6g max_abs_ref=%.6g "
               "nmse=%.3e nonfinite=%zu verdict=%s\n", ggml_backend_name(be), ggml_type_name(hw->type),
               (long long)n, (long long)k, (long long)m, maxe, maxr, nmse, bad, ok ? "ok" : "FAIL");
        if (!ok)
            rc = 1;
        free(ref);
    }
    if (out) {
        struct ggml_init_params op = { ggml_tensor_overhead() * 2 + ybytes + 64, NULL, false };
        struct ggml_context *octx = ggml_init(op);
        struct ggml_tensor *oy = ggml_new_tensor_2d(octx, GGML_TYPE_F32, n, m);
        ggml_set_name(oy, "y");
        memcpy(oy->data, hy, ybytes);
        struct gguf_context *og = gguf_init_empty();
        gguf_set_val_str(og, "hybench.backend", ggml_backend_name(be));
        gguf_set_val_str(og, "hybench.device", ggml_backend_dev_description(dev));
        gguf_add_tensor(og, oy);
        if (!gguf_write_to_file(og, out, false))
            die(3, "cannot write %s%s", out, NULL);
        gguf_free(og);
        ggml_free(octx);
    }
    if (time_ms > 0) {
        for (int i = 0; i < 3; i++)
            ggml_backend_graph_compute(be, gf);
        size_t cap = 1 << 16, ns = 0;
        double *t = malloc(sizeof(double) * cap), total = 0.0;
        while (ns < cap && (ns < 10 || total < time_ms * 1e3)) {
            int64_t t0 = ggml_time_us();
            ggml_backend_graph_compute(be, gf);
            ggml_backend_synchronize(be);
            double dt = (double)(ggml_time_us() - t0);
            t[ns++] = dt;
            total += dt;
        }
        qsort(t, ns, sizeof(double), cmp_double);
        printf("ggml_mm: time backend=%s type=%s n=%lld k=%lld m=%lld median_us=%.2f min_us=%.2f samples=%zu\n",
               ggml_backend_name(be), ggml_type_name(hw->type), (long long)n, (long long)k, (long long)m,
               t[ns / 2], t[0], ns);
        free(t);
    }
    free(hy);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(be);
    return rc;
}

/* --list: the ggml devices of this build, one line each. */
static int list_devices(void)
{
    ggml_backend_load_all();
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t d = ggml_backend_dev_get(i);
        printf("ggml_mm: device name=%s description=\"%s\"\n", ggml_backend_dev_name(d), ggml_backend_dev_description(d));
    }
    return 0;
}

/* --compare A B: two result files' "y" tensors (same shape), NMSE of A against B. */
static int compare_files(const char *a, const char *b, double tol)
{
    struct ggml_context *ca = NULL, *cb = NULL;
    struct gguf_init_params pa = { false, &ca }, pb = { false, &cb };
    struct gguf_context *ga = gguf_init_from_file(a, pa), *gb = gguf_init_from_file(b, pb);
    if (!ga || !ca)
        die(2, "%s: not a readable GGUF file%s", a, NULL);
    if (!gb || !cb)
        die(2, "%s: not a readable GGUF file%s", b, NULL);
    struct ggml_tensor *ya = need_tensor(ca, a, "y"), *yb = need_tensor(cb, b, "y");
    if (ya->type != GGML_TYPE_F32 || yb->type != GGML_TYPE_F32 || ya->ne[0] != yb->ne[0] || ya->ne[1] != yb->ne[1])
        die(2, "%s and %s: \"y\" differs in type or shape (both must be f32 [n, m])", a, b);
    const float *pa_ = ya->data, *pb_ = yb->data;
    double se = 0.0, sr = 0.0, maxe = 0.0;
    size_t bad = 0, ne = (size_t)ggml_nelements(ya);
    for (size_t i = 0; i < ne; i++) {
        double d = (double)pa_[i] - (double)pb_[i];
        if (!isfinite(pa_[i]) || !isfinite(pb_[i]))
            bad++;
        se += d * d;
        sr += (double)pb_[i] * (double)pb_[i];
        if (fabs(d) > maxe)
            maxe = fabs(d);
    }
    double nmse = sr > 0 ? se / sr : se;
    int ok = bad == 0 && nmse <= tol;
    printf("ggml_mm: compare a=%s b=%s n=%lld m=%lld max_abs_diff=%.6g nmse=%.3e nonfinite=%zu tol=%.1e verdict=%s\n",
           a, b, (long long)ya->ne[0], (long long)ya->ne[1], maxe, nmse, bad, tol, ok ? "ok" : "FAIL");
    gguf_free(ga);
    gguf_free(gb);
    ggml_free(ca);
    ggml_free(cb);
    return ok ? 0 : 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: ggml_mm --make FILE.gguf --type T --n N --k K --m M [--seed S]\n"
                    "       ggml_mm --run FILE.gguf [--backend CPU|CUDA0] [--out Y.gguf] [--check]"
                    " [--time-ms MS] [--threads N]\n"
                    "       ggml_mm --bench --type T --n N --k K --m M [--seed S] [--backend B] [--check]"
                    " [--time-ms MS] [--threads N]\n"
                    "       ggml_mm --perf-line NAME --type T --n N --k K --m M\n"
                    "       ggml_mm --compare A.gguf B.gguf [--nmse TOL]\n"
                    "       ggml_mm --list\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *make = NULL, *run = NULL, *perf_name = NULL, *tname = "q4_K", *bname = "CPU", *out = NULL;
    long long n = 0, k = 0, m = 0, threads = 0;
    unsigned long long seed = 1;
    double time_ms = 0;
    int check = 0, bench = 0;
    double tol = 5e-4;
    const char *cmp_a = NULL, *cmp_b = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check")) { check = 1; continue; }
        if (!strcmp(a, "--bench")) { bench = 1; continue; }
        if (!strcmp(a, "--list")) return list_devices();
        if (!v) usage();
        i++;
        if (!strcmp(a, "--make")) make = v;
        else if (!strcmp(a, "--run")) run = v;
        else if (!strcmp(a, "--perf-line")) perf_name = v;
        else if (!strcmp(a, "--nmse")) tol = atof(v);
        else if (!strcmp(a, "--compare")) {
            if (i + 1 >= argc) usage();
            cmp_a = v;
            cmp_b = argv[++i];
        }
        else if (!strcmp(a, "--type")) tname = v;
        else if (!strcmp(a, "--backend")) bname = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--n")) n = parse_pos(a, v);
        else if (!strcmp(a, "--k")) k = parse_pos(a, v);
        else if (!strcmp(a, "--m")) m = parse_pos(a, v);
        else if (!strcmp(a, "--threads")) threads = parse_pos(a, v);
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--time-ms")) time_ms = atof(v);
        else usage();
    }
    if (perf_name) {
        if (!n || !k || !m)
            die(2, "--perf-line needs --n, --k and --m%s%s", NULL, NULL);
        enum ggml_type t = type_by_name(tname);
        if (k % ggml_blck_size(t))
            die(2, "--k must be a multiple of the type's block size (%s)", ggml_type_name(t), NULL);
        printf("%d %d %lld %lld 1 1 0 2 %d %lld %lld 1 1 0 0 0 0 %d %lld %lld 1 1 0 0 0 0 %s\n",
               (int)GGML_OP_MUL_MAT, (int)GGML_TYPE_F32, n, m, (int)t, k, n, (int)GGML_TYPE_F32, k, m, perf_name);
        return 0;
    }
    if (cmp_a)
        return compare_files(cmp_a, cmp_b, tol);
    if (bench) {
        if (!n || !k || !m)
            die(2, "--bench needs --n, --k and --m%s%s", NULL, NULL);
        struct ggml_context *ctx;
        struct ggml_tensor *w, *x;
        synth(type_by_name(tname), n, k, m, seed, &ctx, &w, &x);
        int rc = compute("(synthetic)", w, x, bname, out, check, time_ms, (int)threads);
        ggml_free(ctx);
        return rc;
    }
    if ((make != NULL) == (run != NULL))
        usage();
    if (make) {
        if (!n || !k || !m)
            die(2, "--make needs --n, --k and --m%s%s", NULL, NULL);
        return make_file(make, type_by_name(tname), n, k, m, seed);
    }
    return run_file(run, bname, out, check, time_ms, (int)threads);
}
