/*
 * cpu_dnnl.h - private to the cpu backend's oneDNN users (cpu_dnnl.c: conv2d, cpu_dnnl_gemm.c: matmul
 * and bmm): the one oneDNN cpu engine and stream of the process. Empty without oneDNN in the build
 * (HB_HAVE_DNNL, Makefile). The functions without oneDNN types are in cpu_priv.h.
 */
#ifndef HB_CPU_DNNL_H
#define HB_CPU_DNNL_H
#ifdef HB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

/* The process's oneDNN cpu engine (index 0) and its default stream, created at the first call
 * (cpu_dnnl.c), owned there and destroyed by dnnl_engine_release (cpu_priv.h) once every primitive
 * created on them is destroyed. Returns 1 with *eng and *strm set; 0 when oneDNN cannot create them
 * (then *eng and *strm are untouched). */
int hb_dnnl_engine(dnnl_engine_t *eng, dnnl_stream_t *strm);
#endif
#endif
