/*
 * config.c - the process's hb_config (core/config.h): filled from the environment at the
 * command-line boundary, read everywhere below it.
 */
#include "core/config.h"
#include <stdlib.h>
#include <string.h>

static hb_config g_config;


void hb_config_from_env(hb_config *c)
{
    memset(c, 0, sizeof *c);
#define HB_CONFIG_READ_(f, name) c->f = getenv(name);
    HB_CONFIG_VARS(HB_CONFIG_READ_)
#undef HB_CONFIG_READ_
}

const hb_config *hb_config_get(void) { return &g_config; }

hb_config *hb_config_boundary(void) { return &g_config; }
