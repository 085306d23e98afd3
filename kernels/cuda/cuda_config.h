/*
 * cuda_config.h - the run's settings (core/config.h) inside the CUDA plugin: what the configure hook
 * gave (cuda_backend.cu), for every file of the plugin, C and C++ alike.
 */
#ifndef HB_CUDA_CONFIG_H
#define HB_CUDA_CONFIG_H
#include "core/config.h"
#ifdef __cplusplus
extern "C" {
#endif
/* The settings the configure hook gave; every setting unset until it is called. Never NULL. The
 * struct is the caller's (hb_backend_ops.configure): read it, never keep its strings past a call. */
const hb_config *hbc_cfg(void);
#ifdef __cplusplus
}
#endif
#endif
