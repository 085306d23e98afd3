/*
 * cuda_sdpa.cpp - attention through cuDNN's fused scaled-dot-product attention (the flash-attention
 * engines of the cuDNN graph API), built with the header-only cudnn-frontend (PyPI
 * `nvidia-cudnn-frontend`, fetched into build/cudnn-frontend by tools/fetch_cudnn_frontend.sh; never
 * copied into the repository), and the per-shape choice between it and the plugin's own kernels
 * (cuda_attention.cu).
 *
 * One graph per (dtype, batch, heads, kv_heads, seq, kv_seq, head_dim, causal) is built on the first
 * run of that shape and cached in the instance (c->sdpa), with its workspace size; a shape cuDNN
 * refuses is cached too, with cuDNN's reason, so it is not rebuilt at every run. On the first run of a
 * shape every plan cuDNN builds for the graph (heuristics mode A and the fallback list, policy ALL)
 * and the own kernel are timed (CUDA events, best of 3 after one untimed call) and the fastest is
 * kept for the case (HB_CUDA_ATTN=cudnn or =own forces one; =split forces the own generic kernel).
 * Both times go to case_info ("algo"), so the choice can be checked. With HB_ALGO_CACHE=DIR the
 * choice is also kept on disk (cuda_choice_cache.cpp): a later process with the same key reads it,
 * builds only the recorded plan (or nothing, when the own kernel won), checks that it runs, and says
 * "choice from the algo cache" with the original times; an entry that disagrees is chosen afresh.
 *
 * Mapping of hybench's attention (harness/core/hybench.h) onto cuDNN SDPA:
 *   q [batch, heads, seq, head_dim], k, v [batch, kv_heads, kv_seq, head_dim], o like q, all dense
 *   row-major: BHSD strides {h*s*d, s*d, d, 1}; grouped-query attention (kv_heads < heads) is
 *   cuDNN's h_k = h_v < h_q; scale 1/sqrt(head_dim); io dtype f16 or bf16, f32 softmax and
 *   accumulation; no stats output (inference).
 *   hybench's causal mask is end-aligned (query i sees keys j <= i + kv_seq - seq): cuDNN's
 *   bottom-right diagonal alignment with right bound 0. For seq = 1 the mask hides nothing and is
 *   dropped (cuDNN's decode path, s_q = 1, takes no mask before 9.10). seq > kv_seq with causal
 *   (rows that see no key, which hybench defines as 0) is left to the own kernel.
 * Version: built against the cuDNN headers here (9.19) but run with the device's library (9.14 on the
 * lent GPU machine); the frontend checks cudnnGetVersion() at run time and refuses what the loaded
 * library lacks, and no option newer than 9.6 is used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_internal.h"

#if __has_include(<cudnn_frontend.h>)
#include <cudnn_frontend.h>
#define HBC_HAVE_FE 1
namespace fe = cudnn_frontend;
#else
#define HBC_HAVE_FE 0
#endif

namespace {

typedef std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int> sdpa_key;

struct sdpa_entry {
#if HBC_HAVE_FE
    std::shared_ptr<fe::graph::Graph> g;
#endif
    int64_t ws = 0;
    std::string why;      /* non-empty: cuDNN cannot run this shape (the reason) */
    std::string plan;     /* engine name of the chosen plan */
    int64_t idx = -1;     /* index of the chosen plan among those built; -1: not yet timed */
    int nplans = 0;       /* plans built (every one is timed on the first run) */
    int chosen = -1;      /* -1: not yet timed; 1: cuDNN; 0: own kernel */
    float cudnn_ms = 0, own_ms = 0;
    /* the algorithm-choice cache (HB_ALGO_CACHE): the key of this shape's entry ("" when off), how the
     * choice was obtained (HBC_CACHE_OFF / MISS / HIT: then only the chosen implementation was built,
     * g is null when it is the own kernel, and the times are the entry's), the hit's check time and
     * the note (why an entry was refused or not stored) */
    std::string key;
    int cache = HBC_CACHE_OFF;
    float check_ms = 0;
    char cache_note[160] = "";
};

struct sdpa_cache {
    std::map<sdpa_key, sdpa_entry> m;
};

sdpa_cache *cache_of(hbc_ctx *c)
{
    if (!c->sdpa) c->sdpa = new sdpa_cache;
    return (sdpa_cache *)c->sdpa;
}

#if HBC_HAVE_FE
enum { UID_Q = 1, UID_K = 2, UID_V = 3, UID_O = 4 };

/* cuDNN's engine names as the entries and records keep them (hbc_cache_clean: printable, no quotes) */
std::string cleaned(std::string s)
{
    std::vector<char> b(s.begin(), s.end());
    b.push_back(0);
    hbc_cache_clean(b.data());
    return std::string(b.data());
}

/* The SDPA graph of the shape up to its engine configurations (heuristics mode A and the fallback list)
 * and check_support; nothing built. The graph on success, else e->why says why (exceptions are the
 * caller's). Its plan indices are the same in every process with the same device, libraries and shape:
 * build and build_at both start here. */
std::shared_ptr<fe::graph::Graph> make_graph(hbc_ctx *c, hb_dtype dt, int64_t b, int64_t h, int64_t kvh, int64_t s,
                                             int64_t kvs, int64_t d, int causal, int bshd, sdpa_entry *e)
{
    const size_t ver = cudnnGetVersion();
    if (ver < 90000) { e->why = "cuDNN " + std::to_string(ver) + " < 9.0"; return nullptr; }
    if (causal && s > kvs) { e->why = "causal with seq > kv_seq: rows that see no key (hybench: 0) are not cuDNN's"; return nullptr; }
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(dt == HB_BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    /* dims are always (b, h, s, d); the strides say where the layout keeps them */
    const std::vector<int64_t> qst = bshd ? std::vector<int64_t>{s * h * d, d, h * d, 1} : std::vector<int64_t>{h * s * d, s * d, d, 1};
    const std::vector<int64_t> kst = bshd ? std::vector<int64_t>{kvs * kvh * d, d, kvh * d, 1}
                                          : std::vector<int64_t>{kvh * kvs * d, kvs * d, d, 1};
    auto Q = g->tensor(fe::graph::Tensor_attributes().set_name("Q").set_uid(UID_Q).set_dim({b, h, s, d}).set_stride(qst));
    auto K = g->tensor(fe::graph::Tensor_attributes().set_name("K").set_uid(UID_K).set_dim({b, kvh, kvs, d}).set_stride(kst));
    auto V = g->tensor(fe::graph::Tensor_attributes().set_name("V").set_uid(UID_V).set_dim({b, kvh, kvs, d}).set_stride(kst));
    auto opt = fe::graph::SDPA_attributes().set_name("hb_sdpa").set_generate_stats(false).set_attn_scale((float)(1.0 / sqrt((double)d)));
    if (causal && s > 1) {
        if (s == kvs) opt.set_causal_mask(true); /* top-left = bottom-right when square: the older, wider path */
        else opt.set_causal_mask_bottom_right(true);
    }
    auto outs = g->sdpa(Q, K, V, opt);
    auto O = outs[0];
    O->set_output(true).set_uid(UID_O).set_dim({b, h, s, d}).set_stride(qst);
    fe::error_t r = g->validate();
    if (r.is_good()) (void)(r = g->build_operation_graph(c->dnn));
    if (r.is_good()) (void)(r = g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
    if (r.is_good()) (void)(r = g->check_support(c->dnn));
    if (!r.is_good()) {
        e->why = "cudnn-frontend: " + r.get_message();
        if (e->why.size() > 150) e->why.resize(150);
        e->why = cleaned(e->why);
        return nullptr;
    }
    return g;
}

/* Build the graph and every plan it offers (BuildPlanPolicy ALL; the first run of the shape times
 * each, as cuda_conv.cpp does for conv engines); e->why on failure. */
void build(hbc_ctx *c, hb_dtype dt, int64_t b, int64_t h, int64_t kvh, int64_t s, int64_t kvs, int64_t d, int causal,
           int bshd, sdpa_entry *e)
{
    auto g = make_graph(c, dt, b, h, kvh, s, kvs, d, causal, bshd, e);
    if (!g) return;
    fe::error_t r = g->build_plans(c->dnn, fe::BuildPlanPolicy_t::ALL);
    if (!r.is_good()) {
        e->why = "cudnn-frontend: " + r.get_message();
        if (e->why.size() > 150) e->why.resize(150);
        e->why = cleaned(e->why);
        return;
    }
    e->nplans = (int)g->get_execution_plan_count();
    e->g = g;
}

/* Build only plan idx of the graph (a choice read from the cache), after checking that the engine at
 * idx is still `name`. e->g and e->ws on success; else false with why. */
bool build_at(hbc_ctx *c, hb_dtype dt, int64_t b, int64_t h, int64_t kvh, int64_t s, int64_t kvs, int64_t d, int causal,
              int bshd, int64_t idx, const char *name, sdpa_entry *e, std::string *why)
{
    auto g = make_graph(c, dt, b, h, kvh, s, kvs, d, causal, bshd, e);
    if (!g) { *why = e->why; return false; }
    if (idx >= g->get_execution_plan_count()) { *why = "plan " + std::to_string(idx) + " no longer offered"; return false; }
    std::string now;
    if (!g->get_plan_name_at_index(idx, now).is_good()) { *why = "no name for plan " + std::to_string(idx); return false; }
    now = cleaned(now);
    if (now != name) { *why = "plan " + std::to_string(idx) + " is now " + now; return false; }
    fe::error_t r = g->build_plan_at_index(idx);
    int64_t ws = 0;
    if (r.is_good()) r = g->get_workspace_size_plan_at_index(idx, ws);
    if (!r.is_good() || ws < 0) { *why = cleaned("cudnn-frontend: " + r.get_message()); return false; }
    e->g = g;
    e->ws = ws;
    return true;
}
#endif

/* Enqueue plan i of e (no synchronization). */
hb_status exec(hbc_ctx *c, sdpa_entry *e, int64_t i, const void *q, const void *k, const void *v, void *o)
{
#if HBC_HAVE_FE
    std::unordered_map<int64_t, void *> pack = {
        {UID_Q, const_cast<void *>(q)}, {UID_K, const_cast<void *>(k)}, {UID_V, const_cast<void *>(v)}, {UID_O, o}};
    fe::error_t r = e->g->execute_plan_at_index(c->dnn, pack, c->dnn_ws, i);
    if (!r.is_good()) {
        fprintf(stderr, "hb_cuda: cuDNN SDPA execute failed: %s (%s:%d)\n", r.get_message().c_str(), __FILE__, __LINE__);
        cudaError_t ce = cudaGetLastError();
        if (ce != cudaSuccess) return hbc_rt_check(c, ce, "cuDNN SDPA execute", __FILE__, __LINE__);
        return HB_EDEVICE;
    }
    return HB_OK;
#else
    (void)c; (void)e; (void)i; (void)q; (void)k; (void)v; (void)o;
    return HB_ESKIP;
#endif
}

#if HBC_HAVE_FE
/* ---- the choice through the algorithm-choice cache (HB_ALGO_CACHE; cuda_choice_cache.cpp) ---- */

/* The entry key of this shape's choice: hbc_cache_key_prefix, then every input of the choice (dtype,
 * batch, heads, kv_heads, seq, kv_seq, head_dim, causal, layout; the in-process cache's key) and
 * HB_CUDA_ATTN=cudnn, which makes cuDNN the choice. "" when it does not fit. */
std::string cache_key(hbc_ctx *c, hb_dtype dt, int64_t b, int64_t h, int64_t kvh, int64_t s, int64_t kvs, int64_t d,
                      int causal, int bshd, bool want_cudnn)
{
    char pre[700], key[HBAC_KEY_MAX];
    if (!hbc_cache_key_prefix(c, "attention", pre, sizeof pre)) return "";
    const int n = snprintf(key, sizeof key, "%s;dtype=%s;b=%lld;h=%lld;kvh=%lld;s=%lld;kvs=%lld;d=%lld;causal=%d;layout=%s;force=%s",
                           pre, dt == HB_BF16 ? "bf16" : "f16", (long long)b, (long long)h, (long long)kvh, (long long)s,
                           (long long)kvs, (long long)d, causal ? 1 : 0, bshd ? "bshd" : "bhsd", want_cudnn ? "cudnn" : "none");
    return n > 0 && (size_t)n < sizeof key ? std::string(key) : std::string();
}

/* The entry's fields: chosen (cudnn or own), plan (the index among the graph's plans), name (its engine,
 * cleaned), plans (how many were timed), ws, cudnn_ms, own_ms. Stored when every field is allowed. */
void to_cache(sdpa_entry *e)
{
    hbac_entry ent;
    int bad = hbac_init(&ent, e->key.c_str());
    if (!bad) {
        bad |= hbac_set(&ent, "chosen", e->chosen == 1 ? "cudnn" : "own");
        bad |= hbac_set_i64(&ent, "plan", e->idx);
        bad |= hbac_set(&ent, "name", e->plan.c_str());
        bad |= hbac_set_i64(&ent, "plans", e->nplans);
        bad |= hbac_set_i64(&ent, "ws", e->ws);
        bad |= hbac_set_f(&ent, "cudnn_ms", e->cudnn_ms);
        bad |= hbac_set_f(&ent, "own_ms", e->own_ms);
    }
    if (bad) {
        const size_t j = strlen(e->cache_note);
        snprintf(e->cache_note + j, sizeof e->cache_note - j, "%snot stored: a field the entry format refuses", j ? "; " : "");
        return;
    }
    hbc_cache_store(&ent, e->cache_note, sizeof e->cache_note);
}

/* The choice a sound entry recorded, without timing: the own kernel, or only the recorded cuDNN plan
 * (build_at checks its engine name); then run once as the case will (hbc_time_best: the check, e->check_ms).
 * HB_OK with *e filled (chosen, times and plan from the entry); HB_ESKIP with why when a field is
 * missing or out of range or anything disagrees (the caller chooses afresh); HB_EDEVICE (sticky). */
hb_status from_cache(hbc_ctx *c, hb_dtype dt, const void *q, const void *k, const void *v, void *o, int64_t b, int64_t h,
                     int64_t kvh, int64_t s, int64_t kvs, int64_t d, int causal, int bshd, bool want_cudnn,
                     const hbac_entry &ent, sdpa_entry *e, std::string *why)
{
    const char *chosen = hbac_get(&ent, "chosen"), *name = hbac_get(&ent, "name");
    int64_t idx = -1, np = 0, ws = 0;
    double cms = 0, oms = 0;
    const bool ok = chosen && name && (!strcmp(chosen, "cudnn") || !strcmp(chosen, "own")) &&
                    !hbac_get_i64(&ent, "plans", 1, 1 << 20, &np) && !hbac_get_i64(&ent, "plan", 0, np - 1, &idx) &&
                    !hbac_get_i64(&ent, "ws", 0, INT64_MAX, &ws) && !hbac_get_f(&ent, "cudnn_ms", &cms) && cms > 0 &&
                    cms < 1e9 && !hbac_get_f(&ent, "own_ms", &oms) && oms >= 0 && oms < 1e9 &&
                    !(want_cudnn && !strcmp(chosen, "own"));
    if (!ok) { *why = "a field is missing or out of range"; return HB_ESKIP; }
    e->chosen = !strcmp(chosen, "cudnn") ? 1 : 0;
    e->idx = idx;
    e->nplans = (int)np;
    e->plan = cleaned(name); /* shown in case_info's "algo" (a JSON string); build_at compares it */
    e->cudnn_ms = (float)cms;
    e->own_ms = (float)oms;
    hb_status st = HB_OK;
    float t = 0;
    if (e->chosen == 0) {
        st = hbc_time_best(c, [&]() { return hbc_attention(c, dt, q, k, v, o, b, h, kvh, s, kvs, d, causal, bshd); }, &t);
    } else {
        if (!build_at(c, dt, b, h, kvh, s, kvs, d, causal, bshd, idx, e->plan.c_str(), e, why)) {
            (void)cudaGetLastError();
            e->g.reset();
            return c->sticky ? HB_EDEVICE : HB_ESKIP;
        }
        if (e->ws > 0) st = hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, (size_t)e->ws);
        if (st == HB_OK) st = hbc_time_best(c, [&]() { return exec(c, e, idx, q, k, v, o); }, &t);
    }
    if (c->sticky) return HB_EDEVICE;
    if (st != HB_OK) {
        (void)cudaGetLastError();
        e->g.reset();
        *why = std::string("the recorded ") + (e->chosen ? "cuDNN plan" : "own kernel") + " failed to run";
        return HB_ESKIP;
    }
    e->check_ms = t;
    return HB_OK;
}

/* A new entry of the in-process cache: from the algorithm-choice cache when it has a usable entry
 * (cache HIT), else with every plan built (build; cache MISS, or OFF without HB_ALGO_CACHE), the
 * timing left to hbc_attn_prepare. HB_OK, or HB_EDEVICE after a sticky error. */
hb_status new_entry(hbc_ctx *c, hb_dtype dt, const void *q, const void *k, const void *v, void *o, int64_t b, int64_t h,
                    int64_t kvh, int64_t s, int64_t kvs, int64_t d, int causal, int bshd, bool want_cudnn, sdpa_entry *e)
{
    if (hbac_dir()) {
        e->cache = HBC_CACHE_MISS;
        e->key = cache_key(c, dt, b, h, kvh, s, kvs, d, causal, bshd, want_cudnn);
        if (e->key.empty()) {
            e->cache = HBC_CACHE_OFF;
            snprintf(e->cache_note, sizeof e->cache_note, "the key does not fit: not cached");
        }
    }
    hbac_entry *ent = e->cache == HBC_CACHE_MISS ? (hbac_entry *)malloc(sizeof *ent) : nullptr;
    if (ent && hbc_cache_load(e->key.c_str(), ent, e->cache_note, sizeof e->cache_note) == HBAC_HIT) {
        sdpa_entry h1;
        std::string why;
        hb_status st;
        try {
            st = from_cache(c, dt, q, k, v, o, b, h, kvh, s, kvs, d, causal, bshd, want_cudnn, *ent, &h1, &why);
        } catch (const std::exception &ex) {
            st = HB_ESKIP;
            why = std::string("cudnn-frontend exception: ") + ex.what();
        }
        if (st == HB_OK) {
            h1.key = e->key;
            h1.cache = HBC_CACHE_HIT;
            *e = std::move(h1);
            free(ent);
            return HB_OK;
        }
        if (st != HB_ESKIP) { free(ent); return st; }
        why = cleaned(why);
        fprintf(stderr, "hb_cuda: algo cache: attention entry not usable (%s): chosen afresh and replaced\n", why.c_str());
        snprintf(e->cache_note, sizeof e->cache_note, "entry not usable (%s): chosen afresh", why.c_str());
    }
    free(ent);
    try {
        build(c, dt, b, h, kvh, s, kvs, d, causal, bshd, e);
    } catch (const std::exception &ex) {
        e->g.reset();
        e->why = cleaned(std::string("cudnn-frontend exception: ") + ex.what());
    }
    (void)cudaGetLastError(); /* a refused build may leave a non-sticky error behind */
    return c->sticky ? HB_EDEVICE : HB_OK;
}
#endif

} // namespace

hb_status hbc_attn_prepare(hbc_ctx *c, hb_dtype dt, const void *q, const void *k, const void *v, void *o, int64_t batch,
                           int64_t heads, int64_t kvh, int64_t seq, int64_t kvs, int64_t hd, int causal, int bshd,
                           hbc_attn_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    const char *force = hbc_cfg()->cuda_attn;
    const bool want_own = force && (!strcmp(force, "own") || !strcmp(force, "split"));
    const bool want_cudnn = force && !strcmp(force, "cudnn");
    if (dt != HB_F16 && dt != HB_BF16) {
        snprintf(plan->note, sizeof plan->note, "cudnn-sdpa takes f16/bf16 only; f32 runs the own kernel");
        return HB_OK;
    }
    if (want_own) {
        snprintf(plan->note, sizeof plan->note, "HB_CUDA_ATTN=%s", force);
        return HB_OK;
    }
#if !HBC_HAVE_FE
    (void)q; (void)k; (void)v; (void)o; (void)batch; (void)heads; (void)kvh; (void)seq; (void)kvs; (void)hd; (void)causal; (void)bshd;
    snprintf(plan->note, sizeof plan->note, "cudnn-sdpa unavailable: plugin built without the cudnn-frontend headers");
    return HB_OK;
#else
    sdpa_cache *cc = cache_of(c);
    const sdpa_key key(dt, batch, heads, kvh, seq, kvs, hd, (causal ? 1 : 0) | (bshd ? 2 : 0));
    auto it = cc->m.find(key);
    if (it == cc->m.end()) {
        sdpa_entry e;
        HBC_TRY(new_entry(c, dt, q, k, v, o, batch, heads, kvh, seq, kvs, hd, causal, bshd, want_cudnn, &e));
        it = cc->m.emplace(key, std::move(e)).first;
    }
    sdpa_entry *e = &it->second;
    if (!e->g && e->chosen < 0) {
        snprintf(plan->note, sizeof plan->note, "cudnn-sdpa refused: %s", e->why.c_str());
        return HB_OK;
    }
    if (e->chosen < 0) {
        /* every plan built, timed on the case's buffers (best of 3); the fastest is kept */
        float best = 1e30f;
        for (int64_t i = 0; i < e->nplans; i++) {
            int64_t ws = 0;
            if (!e->g->get_workspace_size_plan_at_index(i, ws).is_good() || ws < 0) continue;
            if (ws > 0) HBC_TRY(hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, (size_t)ws));
            float t = 0;
            hb_status st = hbc_time_best(c, [&]() { return exec(c, e, i, q, k, v, o); }, &t);
            if (c->sticky) return HB_EDEVICE;
            (void)cudaGetLastError();
            if (st != HB_OK) continue;
            if (t < best) {
                best = t;
                e->idx = i;
                e->ws = ws;
            }
        }
        if (e->idx < 0) {
            e->why = "none of " + std::to_string(e->nplans) + " cuDNN SDPA plans ran";
            e->g.reset();
            snprintf(plan->note, sizeof plan->note, "cudnn-sdpa refused: %s", e->why.c_str());
            return HB_OK;
        }
        e->cudnn_ms = best;
        (void)e->g->get_plan_name_at_index(e->idx, e->plan);
        e->plan = cleaned(e->plan);
        hb_status so = hbc_time_best(c, [&]() { return hbc_attention(c, dt, q, k, v, o, batch, heads, kvh, seq, kvs, hd, causal, bshd); },
                                  &e->own_ms);
        if (so != HB_OK) e->own_ms = 0; /* own kernel cannot: cuDNN */
        if (c->sticky) return HB_EDEVICE;
        (void)cudaGetLastError();
        e->chosen = (e->own_ms > 0 && e->own_ms < e->cudnn_ms && !want_cudnn) ? 0 : 1;
        if (e->cache == HBC_CACHE_MISS) to_cache(e);
    }
    if (e->ws > 0 && e->g) HBC_TRY(hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, (size_t)e->ws));
    const bool use = (want_cudnn || e->chosen == 1) && e->g;
    snprintf(plan->note, sizeof plan->note, "choice %s: cudnn-sdpa %.4f ms (%s, fastest of %d plans), own %.4f ms%s",
             e->cache == HBC_CACHE_HIT ? "from the algo cache" : "timed", (double)e->cudnn_ms, e->plan.c_str(), e->nplans,
             (double)e->own_ms, want_cudnn ? ", HB_CUDA_ATTN=cudnn" : "");
    plan->cache = e->cache;
    plan->cache_check_ms = e->check_ms;
    snprintf(plan->cache_note, sizeof plan->cache_note, "%s", e->cache_note);
    if (use) {
        plan->cudnn = e;
        plan->ws = (size_t)e->ws;
    }
    return HB_OK;
#endif
}

hb_status hbc_attn_exec(hbc_ctx *c, const hbc_attn_plan *plan, hb_dtype dt, const void *q, const void *k, const void *v,
                        void *o, int64_t batch, int64_t heads, int64_t kvh, int64_t seq, int64_t kvs, int64_t hd,
                        int causal, int bshd)
{
    c->last_algo[0] = 0;
    c->last_cache = plan->cache;
    c->last_cache_check_ms = plan->cache_check_ms;
    snprintf(c->last_cache_note, sizeof c->last_cache_note, "%s", plan->cache_note);
    if (plan->cudnn) {
        snprintf(c->last_impl, sizeof c->last_impl, "cudnn-sdpa");
        sdpa_entry *e = (sdpa_entry *)plan->cudnn;
        hb_status st = exec(c, e, e->idx, q, k, v, o);
        snprintf(c->last_algo, sizeof c->last_algo, "%s; cuDNN %zu, frontend %d; %s", e->plan.c_str(), cudnnGetVersion(),
#if HBC_HAVE_FE
                 (int)CUDNN_FRONTEND_VERSION,
#else
                 0,
#endif
                 plan->note);
        c->last_ws = plan->ws;
        return st;
    }
    hb_status st = hbc_attention(c, dt, q, k, v, o, batch, heads, kvh, seq, kvs, hd, causal, bshd);
    if (plan->note[0]) {
        const size_t j = strlen(c->last_algo);
        if (j + 3 < sizeof c->last_algo) snprintf(c->last_algo + j, sizeof c->last_algo - j, "; %s", plan->note);
    }
    return st;
}

void hbc_sdpa_free(hbc_ctx *c)
{
    delete (sdpa_cache *)c->sdpa;
    c->sdpa = nullptr;
}
