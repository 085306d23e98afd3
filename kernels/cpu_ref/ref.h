/*
 * ref.h - the reference: plain C, every op of hybench.h, accumulating and storing in f64.
 * Layouts are those of hybench.h. This is what every backend is verified against.
 */
#ifndef HB_REF_H
#define HB_REF_H
#include "core/backend.h"

/* The cpu-ref backend (ref_backend.c), listed in measure/registry.c. */
extern const hb_backend_ops hb_cpu_ref_ops;

/* Compute case c's op in f64: in[i] holds hb_op_input_elems(c->op,&c->shape,i) doubles (a quantized
 * matmul, c->dtype q8_0..q6_k: in[1] is the weight W[n,k] dequantized, hb_quant_dequantize_f64, and
 * out = in[0] x W^T; core/quant.h), out holds
 * hb_op_output_elems doubles (caller-owned). row_step >= 1 subsamples the expensive ops: only every
 * row_step-th "row" is computed and the others are set to NAN (matmul: rows of C; bmm: rows over
 * batch*m; conv2d: output planes over batch*oc, with layout=nhwc output pixels over batch*oh*ow; attention: query rows over batch*heads*seq). Cheap
 * ops ignore row_step and compute everything. Returns HB_OK, HB_EINVAL (unknown op or bad shape) or
 * HB_ENOMEM (attention scratch could not be allocated). */
hb_status hb_ref_compute(const hb_case *c, const double *const *in, double *out, int64_t row_step);

/* The row_step that keeps the reference under about max_flops (f64 flops) for this case: 1 when the
 * whole case costs less, or when max_flops <= 0. */
int64_t hb_ref_row_step(const hb_case *c, double max_flops);
#endif
