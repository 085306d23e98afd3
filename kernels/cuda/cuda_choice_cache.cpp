/*
 * cuda_choice_cache.cpp - the CUDA side of the algorithm-choice cache (HB_ALGO_CACHE, docs/backends.md
 * "The algorithm-choice cache"; the files themselves: cuda_algocache.c): the part of every key that
 * names the machine, the libraries and the choice code, and the lookups and stores of
 * cuda_conv_pool.cu's conv_choose and cuda_sdpa.cpp's attention choice with the notes their records
 * carry.
 *
 * HBC_CONV_CHOICE_VERSION and HBC_ATTN_CHOICE_VERSION (16 hex digits, set by the Makefile) hash the
 * sources a choice depends on (conv2d: cuda_conv_pool.cu, cuda_conv.cpp, cuda_transpose.cu; attention:
 * cuda_sdpa.cpp, cuda_attention.cu; both: nvcc's version): a build whose choice code or own kernels
 * differ keys its own entries and never reads another's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_algocache.h"

#if __has_include(<cudnn_frontend_version.h>)
#include <cudnn_frontend_version.h>
#define HBC_FE_VERSION ((int)CUDNN_FRONTEND_VERSION)
#else
#define HBC_FE_VERSION 0
#endif
#ifndef HBC_CONV_CHOICE_VERSION
#define HBC_CONV_CHOICE_VERSION "unversioned"
#endif
#ifndef HBC_ATTN_CHOICE_VERSION
#define HBC_ATTN_CHOICE_VERSION "unversioned"
#endif

const char *hbc_cache_state_name(int s)
{
    switch (s) {
    case HBC_CACHE_OFF: return "off";
    case HBC_CACHE_MISS: return "miss";
    case HBC_CACHE_HIT: return "hit";
    default: return nullptr;
    }
}

void hbc_cache_clean(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\') *s = '?';
}

bool hbc_cache_key_prefix(hbc_ctx *c, const char *op, char *buf, size_t len)
{
    if (!c || !op || !buf || len == 0) return false;
    int drv = 0, rt = 0, blas = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess) { (void)cudaGetLastError(); drv = 0; }
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) { (void)cudaGetLastError(); rt = 0; }
    if (c->blas && cublasGetVersion(c->blas, &blas) != CUBLAS_STATUS_SUCCESS) blas = 0;
    char name[256];
    snprintf(name, sizeof name, "%s", c->prop.name);
    hbc_cache_clean(name);
    const char *code = !strcmp(op, "conv2d") ? HBC_CONV_CHOICE_VERSION : HBC_ATTN_CHOICE_VERSION;
    const int k = snprintf(buf, len,
                           "hbac1;dev=%s;cc=%d.%d;sms=%d;mem_mib=%zu;driver=%d;runtime=%d;cudnn=%zu;cublas=%d;fe=%d;"
                           "code=%s;op=%s",
                           name, c->prop.major, c->prop.minor, c->prop.multiProcessorCount,
                           (size_t)(c->prop.totalGlobalMem >> 20), drv, rt, cudnnGetVersion(), blas, HBC_FE_VERSION, code, op);
    return k > 0 && (size_t)k < len;
}

int hbc_cache_load(const char *key, hbac_entry *e, char *note, size_t len)
{
    note[0] = 0;
    const char *dir = hbac_dir();
    if (!dir) return HBAC_MISS;
    char why[300] = "";
    const hbac_status st = hbac_load(dir, key, e, why, sizeof why);
    if (st == HBAC_CORRUPT) {
        hbc_cache_clean(why);
        fprintf(stderr, "hb_cuda: algo cache: an entry was refused (%s): chosen afresh and replaced\n", why);
        snprintf(note, len, "entry refused (%s): chosen afresh", why);
    }
    return (int)st;
}

void hbc_cache_store(const hbac_entry *e, char *note, size_t len)
{
    const char *dir = hbac_dir();
    if (!dir) return;
    char why[300] = "";
    if (hbac_store(dir, e, why, sizeof why) == 0) return;
    hbc_cache_clean(why);
    static int warned;
    if (!warned) fprintf(stderr, "hb_cuda: algo cache: %s (the run goes on without it)\n", why);
    warned = 1;
    const size_t j = strlen(note);
    if (j + 3 < len) snprintf(note + j, len - j, "%snot stored: %s", j ? "; " : "", why);
}
