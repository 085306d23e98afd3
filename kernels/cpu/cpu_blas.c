/*
 * cpu_blas.c - OpenBLAS threading of the cpu backend (cpu_priv.h): single-threaded BLAS from the
 * OpenMP threads (blas_serial_begin/end) and outside any region (hb_cpu_blas_one_thread/restore).
 * Split out of cpu_kernels.c (its header comment: "OpenBLAS threading").
 */
#include <omp.h>

#include <cblas.h>

#include "cpu/cpu_priv.h"
#include "cpu_ref/kshape.h"

/* Run sgemm from the OpenMP threads with OpenBLAS single-threaded in between. The OpenMP build (the
 * one hybench links: docs/measurement.md) does that by itself: called inside a parallel region it
 * runs on the calling thread. There openblas_set_num_threads(1) must not be called: it also sets
 * OpenMP's thread count to 1, so the region itself ran on one thread (measured: bmm 16x128^3, conv2d
 * and attention 2x slower on 2 cores, about 10x on 16). The pthread build needs the call. */
static int blas_is_openmp(void)
{
    static int v = -1;
    if (v < 0) v = openblas_get_parallel() == 2;
    return v;
}
void blas_serial_begin(void)
{
    if (!blas_is_openmp()) openblas_set_num_threads(1);
}
void blas_serial_end(int threads)
{
    if (blas_is_openmp()) return;
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
}

/* OpenBLAS on one thread for the BLAS calls that follow. The OpenMP build of OpenBLAS takes its
 * thread count from omp_get_max_threads() at each call and, once set to 1, keeps 1 until
 * openblas_set_num_threads raises it; so both counts are set to 1 and restored (outside any parallel
 * region only: inside one the call would also shrink the team, see blas_serial_begin). */
int hb_cpu_blas_one_thread(void)
{
    const int T = omp_get_max_threads();
    openblas_set_num_threads(1);
    return T;
}

void hb_cpu_blas_restore(int threads)
{
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
}
