/* timed.c - one timed piece of work: the host clock and the device timer (timed.h). */
#include "measure/timed.h"
#include "core/stats.h"

int hb_timed_has_timer(const hb_instance *inst) { return inst->ops->timer_begin && inst->ops->timer_end; }

hb_status hb_timed_begin(hb_instance *inst, int dev_timer, double *t0, int *dev_timed)
{
    const int want = dev_timer && hb_timed_has_timer(inst);
    *t0 = hb_now(); /* before the timer's begin, as every host time of a device piece has been read */
    hb_status st = want ? inst->ops->timer_begin(inst) : HB_OK;
    *dev_timed = want && st == HB_OK;
    return st;
}

hb_status hb_timed_end(hb_instance *inst, int dev_timed, double t0, double *t_s, double *host_s)
{
    double dev = -1;
    hb_status st = dev_timed ? inst->ops->timer_end(inst, &dev) : HB_OK;
    double host = hb_now() - t0;
    if (host_s) *host_s = host;
    *t_s = dev_timed && st == HB_OK && dev >= 0 ? dev : host;
    return st;
}
