/*
 * ocl_cfg.c - the run's settings (core/config.h) as the OpenCL backend's configure hook gave them
 * (ocl.h ocl_cfg, ocl_set_cfg). A file of its own: the kernel files read them and the backend
 * (ocl_backend.c) calls those files, so keeping the settings there tied them in a circle.
 */
#include "opencl/ocl.h"

static const hb_config g_unset_cfg; /* every setting unset until the configure hook runs */
static const hb_config *g_cfg = &g_unset_cfg;

const hb_config *ocl_cfg(void) { return g_cfg; }

void ocl_set_cfg(const hb_config *cfg) { g_cfg = cfg ? cfg : &g_unset_cfg; }
