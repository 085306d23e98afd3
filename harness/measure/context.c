/*
 * context.c - a case's data path on a backend instance (internal.h hb_ctx_init, hb_ctx_free): its
 * buffers (or the group's), the mode's host tensors from the reference's inputs, and the memory
 * accounting its record reports. Split from sample.c, which measures on it.
 */
#include "measure/internal.h"
#include "core/convert.h"
#include "core/quant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

void hb_ctx_free(run_ctx *x)
{
    for (int i = 0; i < x->nbuf_in; i++) x->inst->ops->buf_free(x->inst, &x->in[i]);
    if (x->have_out) x->inst->ops->buf_free(x->inst, &x->out);
    for (int i = 0; i < HB_MAX_INPUTS; i++) free(x->h32[i]);
    free(x->o64);
    free(x->o32);
}

/* Set up case c's data path on inst: its buffers (allocated, or when `group` is not NULL that
 * variant's, which must be the same op, shape, dtype and route: one set for the modes of a group),
 * the mode's host tensors from inputs (f64), and the memory accounting. */
hb_status hb_ctx_init(run_ctx *x, hb_instance *inst, const hb_case *c, const hb_options *o,
                      const hb_ref_cache *rc, char *reason, size_t rlen, const run_ctx *group)
{
    double *const *inputs = rc->in;
    /* a quantized matmul (f32 or resident mode only: quant_skip): its weight buffer holds the
     * reference's random blocks as they are, its activations and output are f32 */
    const int quant = hb_dtype_is_quant(c->dtype);
    memset(x, 0, sizeof *x);
    x->inst = inst; x->c = c; x->o = o;
    x->nin = hb_op_get(c->op)->ninputs;
    x->el = hb_elem_of_dtype(c->dtype);
    x->device = !inst->host_memory;
    size_t es = hb_elem_size(x->el);
    size_t ib[HB_MAX_INPUTS] = {0}; /* each input buffer's bytes (a quantized weight's: its blocks) */
    for (int i = 0; i < x->nin; i++) {
        x->nel[i] = (size_t)hb_op_input_elems(c->op, &c->shape, i);
        ib[i] = hb_case_input_bytes(c, i);
    }
    x->nout = (size_t)hb_op_output_elems(c->op, &c->shape);
    const int qi = hb_quant_input(c->op, c->dtype);
    if (quant && (qi < 0 || !rc->qw || rc->qw_bytes != ib[qi] || x->el != HB_ELEM_F32)) {
        snprintf(reason, rlen, "quantized %s: no weight blocks of %zu bytes from the reference", hb_dtype_name(c->dtype),
                 qi >= 0 ? ib[qi] : 0);
        return HB_EINVAL;
    }
    /* refuse what cannot fit in host memory before touching it */
    double need = 0;
    for (int i = 0; i < x->nin; i++) need += (double)x->nel[i];
    need += (double)x->nout;
    int f64_host = c->mode == HB_MODE_CONVERT || c->mode == HB_MODE_CONVERT_DEVICE;
    need *= (double)(es + (f64_host ? 8 : 4) + 8); /* staging + host + reference */
    struct sysinfo si;
    if (sysinfo(&si) == 0 && need > 0.8 * (double)si.totalram * si.mem_unit) {
        snprintf(reason, rlen, "needs %.1f GiB of host memory, the machine has %.1f GiB", need / 1073741824.0,
                 (double)si.totalram * si.mem_unit / 1073741824.0);
        return HB_ENOMEM;
    }
    hb_status st;
    if (group) {
        for (int i = 0; i < x->nin; i++) x->in[i] = group->in[i];
        x->out = group->out;
        x->borrowed = 1;
    } else {
        for (int i = 0; i < x->nin; i++) {
            st = inst->ops->buf_alloc(inst, ib[i], c->route, &x->in[i]);
            if (st != HB_OK) { snprintf(reason, rlen, "buf_alloc of input %d (%zu bytes) failed: %s", i, ib[i], hb_status_name(st)); return st; }
            x->in[i].dtype = c->dtype;
            x->nbuf_in++;
        }
        st = inst->ops->buf_alloc(inst, x->nout * es, c->route, &x->out);
        if (st != HB_OK) { snprintf(reason, rlen, "buf_alloc of output (%zu bytes) failed: %s", x->nout * es, hb_status_name(st)); return st; }
        x->have_out = 1;
    }
    x->out.dtype = c->dtype;
    size_t total_el = x->nout, total_b = x->nout * es; /* elements; the buffers' bytes */
    for (int i = 0; i < x->nin; i++) { total_el += x->nel[i]; total_b += ib[i]; }
    if (x->device) x->device_bytes = (long long)total_b;
    if (f64_host) {
        /* the f64 inputs are only read (converted, or uploaded and converted on the device): every
         * mode of a group reads the one copy the reference was computed from, instead of a copy each
         * (on the 2-core VM, a third of perf's samples of opencl's add n=2^25 group were those
         * copies of 2 x 256 MiB per mode and their page faults) */
        for (int i = 0; i < x->nin; i++) x->h64[i] = (double *)inputs[i];
        x->o64 = malloc(x->nout * sizeof(double));
        if (!x->o64) { snprintf(reason, rlen, "host f64 tensor allocation failed"); return HB_ENOMEM; }
        x->host_bytes = (long long)(total_el * sizeof(double));
        /* convert: f32 staging on the host; convert-device: an f64 scratch on the device instead */
        if (c->mode == HB_MODE_CONVERT) x->staging_bytes = (long long)(total_el * es);
        else x->device_bytes += (long long)(total_el * sizeof(double));
    } else if (x->el != HB_ELEM_F32) {
        for (int i = 0; i < x->nin; i++) {
            x->h32[i] = malloc(x->nel[i] * sizeof(float));
            if (!x->h32[i]) { snprintf(reason, rlen, "host f32 tensor allocation failed"); return HB_ENOMEM; }
            hb_convert(x->h32[i], HB_ELEM_F32, inputs[i], HB_ELEM_F64, x->nel[i]);
        }
        x->o32 = malloc(x->nout * sizeof(float));
        if (!x->o32) { snprintf(reason, rlen, "host f32 tensor allocation failed"); return HB_ENOMEM; }
        x->host_bytes = (long long)(total_el * sizeof(float));
        x->staging_bytes = (long long)(total_el * es);
    } else {
        /* conversion-free: the f32 host tensors (a quantized weight's blocks) are the buffers' host memory */
        for (int i = 0; i < x->nin; i++) {
            if (i == qi) memcpy(x->in[i].host, rc->qw, ib[i]);
            else hb_convert(x->in[i].host, HB_ELEM_F32, inputs[i], HB_ELEM_F64, x->nel[i]);
        }
        x->host_bytes = (long long)total_b;
    }
    return HB_OK;
}

hb_status hb_ctx_move(run_ctx *x, run_ctx *old, const hb_ref_cache *rc, const run_ctx *group, char *reason, size_t rlen)
{
    *old = *x;
    hb_status st = hb_ctx_init(x, old->inst, old->c, old->o, rc, reason, rlen, group);
    if (st != HB_OK) {
        hb_ctx_free(x); /* what the failed set-up had allocated */
        *x = *old;
        memset(old, 0, sizeof *old);
        return st;
    }
    x->prep = old->prep;
#ifdef HB_PLANT
    x->plant_compute = old->plant_compute;
    x->plant_case = old->plant_case;
    x->plant_sub = old->plant_sub;
#endif
    return HB_OK;
}
