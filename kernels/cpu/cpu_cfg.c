/*
 * cpu_cfg.c - the run's settings (core/config.h) as the cpu backend's configure hook gave them
 * (cpu_priv.h hb_cpu_cfg, hb_cpu_set_cfg). A file of its own: every cpu kernel file reads them, and
 * the backend (cpu_backend.c) calls those files, so keeping the settings there tied them all in a circle.
 */
#include "cpu/cpu_priv.h"

static const hb_config g_unset_cfg; /* every setting unset until the configure hook runs */
static const hb_config *g_cfg = &g_unset_cfg;

const hb_config *hb_cpu_cfg(void) { return g_cfg; }

void hb_cpu_set_cfg(const hb_config *cfg) { g_cfg = cfg ? cfg : &g_unset_cfg; }
