/*
 * cuda_graph.cu - a sequence of ops captured once as a CUDA graph and launched as one (the backend's
 * graph_capture / graph_launch / graph_free hooks, core/backend.h): how llama.cpp and vLLM run decode,
 * where launching each kernel from the host costs more than the kernel (a TinyLlama layer at seq 1 on
 * an H200: 121 us of layer, 115 us of host enqueue). The driver (measure/chain.c) captures the layer's
 * steps as it enqueues them with run_async, then times graph_launch beside the launched stream.
 *
 * Capture: cudaStreamBeginCapture on the instance's stream in thread-local mode, so any call that would
 * synchronize or allocate inside the capture fails the capture instead of running (cudaStreamEndCapture
 * then reports the capture invalidated and no graph is made). NCCL calls are captured too (NCCL 2.9 and
 * later): the tensor-parallel layer's all_reduce steps enter the graph, and every rank must then launch
 * its graph as it would have made the calls (measure/chain.c votes on the capture and aligns the
 * launches). The timer is disarmed for the capture: no
 * event record and no launch-gate kernel enter the graph. The ops must have run once before (their
 * workspaces grown, their plans built), which the driver's verified runs do.
 */
#include "cuda/cuda_collective.h"

/* A captured sequence: the instantiated graph, and whether it holds NCCL calls (its launches are then
 * noted for the collectives' watchdog, cuda_collective.h). */
struct hbc_graph {
    cudaGraphExec_t ex;
    int colls;
};

extern "C" hb_status hbc_graph_capture(hb_instance *inst, int begin, void **graph)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (begin) {
        if (!graph) return HB_EINVAL;
        *graph = nullptr;
        c->tarmed = c->tstarted = c->tend_pending = 0;
        hbc_coll_capture(1);
        hb_status st = HBC_RT(c, cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
        if (st != HB_OK) hbc_coll_capture(0);
        return st;
    }
    cudaGraph_t g = nullptr;
    hb_status st = HBC_RT(c, cudaStreamEndCapture(c->stream, &g));
    const int colls = hbc_coll_captured();
    hbc_coll_capture(0);
    HBC_TRY(st);
    if (!g) return HB_EDEVICE;
    cudaGraphExec_t ex = nullptr;
    st = HBC_RT(c, cudaGraphInstantiate(&ex, g, 0));
    (void)cudaGraphDestroy(g);
    if (st != HB_OK) return st;
    hbc_graph *h = graph ? (hbc_graph *)malloc(sizeof *h) : nullptr;
    if (!h) {
        (void)cudaGraphExecDestroy(ex);
        return graph ? HB_ENOMEM : HB_OK;
    }
    h->ex = ex;
    h->colls = colls;
    *graph = (void *)h;
    return HB_OK;
}

/* The graph enqueued on the stream, not waited for (as run_async): the timer's events, when armed,
 * bracket it, and timer_end waits for it. */
extern "C" hb_status hbc_graph_launch(hb_instance *inst, void *graph)
{
    hbc_ctx *c;
    HBC_TRY(enter(inst, &c));
    if (!graph) return HB_EINVAL;
    hbc_graph *h = (hbc_graph *)graph;
    if (h->colls) HBC_TRY(hbc_coll_graph_launch(c));
    HBC_TRY(tmark_begin(c));
    HBC_TRY(HBC_RT(c, cudaGraphLaunch(h->ex, c->stream)));
    if (c->tarmed && c->tstarted) c->tend_pending = 1;
    return HB_OK;
}

extern "C" void hbc_graph_free(hb_instance *inst, void *graph)
{
    hbc_ctx *c;
    if (!graph || enter(inst, &c) != HB_OK) return;
    hbc_graph *h = (hbc_graph *)graph;
    (void)cudaStreamSynchronize(c->stream);
    (void)cudaGraphExecDestroy(h->ex);
    free(h);
}
