/*
 * cpu_priv.h - private to the cpu backend (kernels/cpu/): host topology facts and the f32 kernels.
 */
#ifndef HB_CPU_PRIV_H
#define HB_CPU_PRIV_H
#include <stddef.h>
#include <stdint.h>
#include "core/hybench.h"

/* Host topology from hwloc, loaded once per process (again after a fork). */
int hb_cpu_ncores(void);           /* physical cores this process may run on (>= 1) */
size_t hb_cpu_llc_bytes(void);     /* total bytes of the last cache level over all its instances
                                    * (0 when hwloc reports none) */
const char *hb_cpu_model(void);    /* hwloc "CPUModel" of the first package, or "unknown CPU" */

/* Run case c (dtype f32) on host arrays: in[i] holds hb_op_input_elems(op, shape, i) floats and out
 * hb_op_output_elems floats (caller-owned, 64-byte aligned). Uses the OpenMP threads as set by
 * hb_cpu_bind_threads and OpenBLAS. Returns HB_OK, HB_EINVAL (shape not computable or a dimension
 * over the BLAS integer range), HB_ENOMEM (scratch allocation failed). */
hb_status hb_cpu_kernel_run(const hb_case *c, const float *const *in, float *out);
/* Free the kernels' per-thread scratch memory (kept between calls so that timed calls do not
 * page-fault fresh memory). The next call allocates again. */
void hb_cpu_kernel_release(void);
/* Short name of the implementation run for case c ("openblas sgemm", "im2col+sgemm", ...). */
const char *hb_cpu_kernel_impl(const hb_case *c);
/* HB_OK when the kernels can compute c's shape; otherwise HB_ESKIP with the reason written. */
hb_status hb_cpu_kernel_check(const hb_case *c, char *reason, size_t reasonlen);
#endif
