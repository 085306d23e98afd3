/* chain_run.h - measuring a chain case (driver.c calls it; see chain.h). */
#ifndef HB_CHAIN_RUN_H
#define HB_CHAIN_RUN_H
#include <jansson.h>
#include "core/backend.h"
#include "measure/driver.h"
/* Measure chain case c on inst with options o; ceilings cl[0..ncl-1]. Returns a new "case" record;
 * *st gets the case status (ok, skipped when a step is unsupported, no_resource, failed, wrong). */
json_t *hb_chain_measure(hb_instance *inst, const hb_case *c, const hb_options *o, const hb_ceiling *cl, int ncl,
                         hb_status *st);
#endif
