/*
 * test_config.h - for tests that change the run's settings (core/config.h, docs/environment.md)
 * between calls: setenv/unsetenv in the including file also read the environment into the
 * process's configuration at once (hb_config_from_env into hb_config_boundary), as cli/main.c does
 * at start. A backend configured with hb_config_get() keeps that struct's pointer, so it sees each
 * change. Include after <stdlib.h>.
 */
#ifndef HB_TEST_CONFIG_H
#define HB_TEST_CONFIG_H
#include <stdlib.h>
#include "core/config.h"

static inline int hbt_setenv(const char *name, const char *value, int overwrite)
{
    int r = setenv(name, value, overwrite);
    hb_config_from_env(hb_config_boundary());
    return r;
}
static inline int hbt_unsetenv(const char *name)
{
    int r = unsetenv(name);
    hb_config_from_env(hb_config_boundary());
    return r;
}
#define setenv hbt_setenv
#define unsetenv hbt_unsetenv
#endif
