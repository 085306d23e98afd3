/*
 * cuda_conv.cpp - conv2d forward through the cuDNN v9 graph API (cudnn-frontend, header-only, fetched
 * by tools/fetch_cudnn_frontend.sh), autotuned: every engine configuration that heuristics mode A and
 * the fallback list offer (runtime-compiled engines excluded unless HB_CUDA_CONV_RTC=1: their NVRTC
 * compile takes seconds per engine), that builds on this device and whose workspace fits the cap,
 * is timed on the case's buffers (hbc_time_best: launch-gated CUDA events, best of 3) and the
 * fastest kept. cuda_conv_pool.cu's conv_choose weighs it against cudnnFindConvolutionForwardAlgorithmEx
 * in both layouts (see there). hbc_conv_graph_build_at builds only one plan of the same graph, by
 * index, for a choice read back from the algorithm-choice cache (HB_ALGO_CACHE).
 *
 * Layouts by strides (the graph API describes a layout by its strides, so an engine either takes
 * hybench's NCHW tensors natively or reports it cannot):
 *   nhwc = 0: x [b, c, h, w] strides {c*h*w, h*w, w, 1}; w [oc, c/g, kh, kw] (KCRS); y [b, oc, oh, ow]
 *   nhwc = 1: the same dims with channels innermost: x {h*w*c, 1, w*c, c}; w {kh*kw*cg, 1, kw*cg, cg}
 *             (KRSC); y {oh*ow*oc, 1, ow*oc, oc}
 * Data types: f32 (tensor-core engines deselected: no TF32 behind the user's back), tf32 (f32 data,
 * tensor-core engines allowed), f16 and bf16 (f32 compute).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "cuda_internal.h"

#if __has_include(<cudnn_frontend.h>)
#include <cudnn_frontend.h>
#define HBC_HAVE_FE 1
namespace fe = cudnn_frontend;
#else
#define HBC_HAVE_FE 0
#endif

struct hbc_conv_graph {
#if HBC_HAVE_FE
    std::shared_ptr<fe::graph::Graph> g;
#endif
    int64_t plan = -1;   /* index of the fastest plan */
    int64_t ws = 0;      /* its workspace bytes */
    std::string name;    /* its engine name */
};

namespace {
enum { UID_X = 1, UID_W = 2, UID_Y = 3 };

void clean(std::string *s)
{
    if (s->size() > 150) s->resize(150);
    for (auto &ch : *s)
        if (ch == '"' || ch == '\\' || (unsigned char)ch < 32) ch = ' ';
}
} // namespace

#if HBC_HAVE_FE
namespace {
/* The forward convolution graph of dims in layout nhwc (strides as in the header comment), dtype dt,
 * up to its engine configurations (heuristics A + fallback) with those this plugin never uses
 * deselected: tensor-core engines for f32, runtime-compiled ones unless HB_CUDA_CONV_RTC=1, and those
 * needing more than ws_cap workspace bytes; then check_support. Nothing is built. *out on success;
 * else err says why (exceptions are the caller's). The plan indices it yields are the same in every
 * process with the same device, libraries and graph: tune and build_at both start here. */
fe::error_t make_graph(hbc_ctx *c, hb_dtype dt, int nhwc, const int64_t dims[16], size_t ws_cap,
                       std::shared_ptr<fe::graph::Graph> *out)
{
    const int64_t b = dims[0], ch = dims[1], h = dims[2], wd = dims[3], oc = dims[4], kh = dims[5], kw = dims[6],
                  sh = dims[7], sw = dims[8], ph = dims[9], pw = dims[10], dh = dims[11], dw = dims[12], g = dims[13],
                  oh = dims[14], ow = dims[15];
    const int64_t cg = ch / g;
    auto gr = std::make_shared<fe::graph::Graph>();
    const fe::DataType_t io = dt == HB_F16 ? fe::DataType_t::HALF : dt == HB_BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::FLOAT;
    gr->set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
    std::vector<int64_t> xs = nhwc ? std::vector<int64_t>{h * wd * ch, 1, wd * ch, ch} : std::vector<int64_t>{ch * h * wd, h * wd, wd, 1};
    std::vector<int64_t> wst = nhwc ? std::vector<int64_t>{kh * kw * cg, 1, kw * cg, cg} : std::vector<int64_t>{cg * kh * kw, kh * kw, kw, 1};
    std::vector<int64_t> ys = nhwc ? std::vector<int64_t>{oh * ow * oc, 1, ow * oc, oc} : std::vector<int64_t>{oc * oh * ow, oh * ow, ow, 1};
    auto X = gr->tensor(fe::graph::Tensor_attributes().set_name("X").set_uid(UID_X).set_dim({b, ch, h, wd}).set_stride(xs));
    auto W = gr->tensor(fe::graph::Tensor_attributes().set_name("W").set_uid(UID_W).set_dim({oc, cg, kh, kw}).set_stride(wst));
    auto opt = fe::graph::Conv_fprop_attributes().set_padding({ph, pw}).set_stride({sh, sw}).set_dilation({dh, dw});
    auto Y = gr->conv_fprop(X, W, opt);
    Y->set_output(true).set_uid(UID_Y).set_dim({b, oc, oh, ow}).set_stride(ys);
    fe::error_t r = gr->validate();
    if (r.is_good()) (void)(r = gr->build_operation_graph(c->dnn));
    if (r.is_good()) (void)(r = gr->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
    if (r.is_good()) {
        if (dt == HB_F32) gr->deselect_numeric_notes({fe::NumericalNote_t::TENSOR_CORE});
        const char *rtc = hbc_cfg()->cuda_conv_rtc;
        if (!(rtc && *rtc == '1')) gr->deselect_behavior_notes({fe::BehaviorNote_t::RUNTIME_COMPILATION});
        gr->deselect_workspace_greater_than((int64_t)ws_cap);
        (void)(r = gr->check_support(c->dnn));
    }
    if (r.is_good()) *out = gr;
    return r;
}
} // namespace
#endif

hb_status hbc_conv_graph_tune(hbc_ctx *c, hb_dtype dt, int nhwc, const int64_t dims[16], const void *x, const void *w,
                              void *y, size_t ws_cap, hbc_conv_graph **out, float *ms, int *tried, char *why,
                              size_t whylen)
{
    *out = nullptr;
    *ms = 0;
    *tried = 0;
    why[0] = 0;
#if !HBC_HAVE_FE
    (void)c; (void)dt; (void)nhwc; (void)dims; (void)x; (void)w; (void)y; (void)ws_cap;
    snprintf(why, whylen, "plugin built without the cudnn-frontend headers");
    return HB_ESKIP;
#else
    std::unique_ptr<hbc_conv_graph> cg_out(new hbc_conv_graph);
    std::string err;
    try {
        std::shared_ptr<fe::graph::Graph> gr;
        fe::error_t r = make_graph(c, dt, nhwc, dims, ws_cap, &gr);
        if (r.is_good()) (void)(r = gr->build_plans(c->dnn, fe::BuildPlanPolicy_t::ALL));
        if (!r.is_good()) err = r.get_message();
        (void)cudaGetLastError();
        if (err.empty()) {
            const int64_t n = gr->get_execution_plan_count();
            std::unordered_map<int64_t, void *> pack = {
                {UID_X, const_cast<void *>(x)}, {UID_W, const_cast<void *>(w)}, {UID_Y, y}};
            float best = 1e30f;
            for (int64_t i = 0; i < n; i++) {
                int64_t ws = 0;
                if (!gr->get_workspace_size_plan_at_index(i, ws).is_good() || ws < 0 || (size_t)ws > ws_cap) continue;
                if (ws > 0) HBC_TRY(hbc_grow(c, &c->dnn_ws, &c->dnn_ws_bytes, (size_t)ws));
                float t = 0;
                bool bad = false;
                hb_status st = hbc_time_best(c, [&]() {
                    fe::error_t e = gr->execute_plan_at_index(c->dnn, pack, c->dnn_ws, i);
                    if (!e.is_good()) { bad = true; return HB_ESKIP; }
                    return HB_OK;
                }, &t);
                if (c->sticky) return HB_EDEVICE;
                (void)cudaGetLastError();
                if (st != HB_OK || bad) continue;
                (*tried)++;
                if (t < best) {
                    best = t;
                    cg_out->plan = i;
                    cg_out->ws = ws;
                    (void)gr->get_plan_name_at_index(i, cg_out->name);
                }
            }
            if (cg_out->plan < 0) err = "no engine of " + std::to_string(n) + " built and ran";
            else *ms = best;
        }
        cg_out->g = gr;
    } catch (const std::exception &ex) {
        err = std::string("exception: ") + ex.what();
    }
    if (!err.empty()) {
        clean(&err);
        snprintf(why, whylen, "cudnn-frontend: %s", err.c_str());
        return HB_ESKIP;
    }
    clean(&cg_out->name);
    *out = cg_out.release();
    return HB_OK;
#endif
}

hb_status hbc_conv_graph_build_at(hbc_ctx *c, hb_dtype dt, int nhwc, const int64_t dims[16], size_t ws_cap, int64_t index,
                                  const char *name, hbc_conv_graph **out, char *why, size_t whylen)
{
    *out = nullptr;
    why[0] = 0;
#if !HBC_HAVE_FE
    (void)c; (void)dt; (void)nhwc; (void)dims; (void)ws_cap; (void)index; (void)name;
    snprintf(why, whylen, "plugin built without the cudnn-frontend headers");
    return HB_ESKIP;
#else
    std::unique_ptr<hbc_conv_graph> cg_out(new hbc_conv_graph);
    std::string err;
    try {
        std::shared_ptr<fe::graph::Graph> gr;
        fe::error_t r = make_graph(c, dt, nhwc, dims, ws_cap, &gr);
        if (!r.is_good()) err = r.get_message();
        else if (index < 0 || index >= gr->get_execution_plan_count())
            err = "plan " + std::to_string(index) + " not among the " + std::to_string(gr->get_execution_plan_count()) + " offered";
        if (err.empty()) { /* the engine at that index must be the one recorded, before anything is built */
            std::string now;
            if (!gr->get_plan_name_at_index(index, now).is_good()) err = "no name for plan " + std::to_string(index);
            clean(&now);
            if (err.empty() && now != std::string(name ? name : "")) err = "plan " + std::to_string(index) + " is now " + now;
        }
        if (err.empty() && !(r = gr->build_plan_at_index(index)).is_good()) err = r.get_message();
        int64_t ws = 0;
        if (err.empty() && (!gr->get_workspace_size_plan_at_index(index, ws).is_good() || ws < 0 || (size_t)ws > ws_cap))
            err = "plan workspace unknown or over the cap";
        (void)cudaGetLastError();
        if (err.empty()) {
            cg_out->g = gr;
            cg_out->plan = index;
            cg_out->ws = ws;
            cg_out->name = name;
        }
    } catch (const std::exception &ex) {
        err = std::string("exception: ") + ex.what();
    }
    if (c->sticky) return HB_EDEVICE;
    if (!err.empty()) {
        clean(&err);
        snprintf(why, whylen, "cudnn-frontend: %s", err.c_str());
        return HB_ESKIP;
    }
    *out = cg_out.release();
    return HB_OK;
#endif
}

hb_status hbc_conv_graph_exec(hbc_ctx *c, const hbc_conv_graph *p, const void *x, const void *w, void *y)
{
#if HBC_HAVE_FE
    std::unordered_map<int64_t, void *> pack = {{UID_X, const_cast<void *>(x)}, {UID_W, const_cast<void *>(w)}, {UID_Y, y}};
    fe::error_t e = p->g->execute_plan_at_index(c->dnn, pack, c->dnn_ws, p->plan);
    if (!e.is_good()) {
        fprintf(stderr, "hb_cuda: cuDNN conv graph execute (%s) failed: %s (%s:%d)\n", p->name.c_str(), e.get_message().c_str(),
                __FILE__, __LINE__);
        cudaError_t ce = cudaGetLastError();
        return ce != cudaSuccess ? hbc_rt_check(c, ce, "cuDNN conv graph execute", __FILE__, __LINE__) : HB_EDEVICE;
    }
    return HB_OK;
#else
    (void)c; (void)p; (void)x; (void)w; (void)y;
    return HB_ESKIP;
#endif
}

size_t hbc_conv_graph_ws(const hbc_conv_graph *p) { return p ? (size_t)p->ws : 0; }
int64_t hbc_conv_graph_plan(const hbc_conv_graph *p) { return p ? p->plan : -1; }
const char *hbc_conv_graph_name(const hbc_conv_graph *p) { return p ? p->name.c_str() : ""; }
void hbc_conv_graph_free(hbc_conv_graph *p) { delete p; }
