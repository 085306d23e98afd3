/* exec.c - the one executor (exec.h): place, run, time, fetch. */
#include "measure/exec.h"
#include "measure/timed.h"
#include "core/stats.h"

static hb_status move(hb_instance *inst, hb_buf *const *bufs, int n, int dev_timer, double *t_s, int up)
{
    double t0;
    int dt;
    (void)hb_timed_begin(inst, dev_timer, &t0, &dt); /* a timer that does not begin: the host clock */
    hb_status st = HB_OK;
    for (int i = 0; i < n && st == HB_OK; i++) st = up ? inst->ops->upload(inst, bufs[i]) : inst->ops->download(inst, bufs[i]);
    double t = 0;
    hb_status s2 = hb_timed_end(inst, dt, t0, &t, NULL);
    *t_s += t;
    return st != HB_OK ? st : s2;
}

hb_status hb_exec_place(hb_instance *inst, hb_buf *const *bufs, int n, int dev_timer, double *t_s)
{
    return move(inst, bufs, n, dev_timer, t_s, 1);
}

hb_status hb_exec_fetch(hb_instance *inst, hb_buf *const *bufs, int n, int dev_timer, double *t_s)
{
    return move(inst, bufs, n, dev_timer, t_s, 0);
}

hb_status hb_exec_setup_place(hb_instance *inst, hb_buf *b)
{
    double t = 0;
    return move(inst, &b, 1, 0, &t, 1);
}

hb_status hb_exec_setup_fetch(hb_instance *inst, hb_buf *b)
{
    double t = 0;
    return move(inst, &b, 1, 0, &t, 0);
}

hb_status hb_exec_graph(hb_instance *inst, void *graph, double *dev, double *enq)
{
    double t0;
    int dt;
    *dev = *enq = 0;
    hb_status st = hb_timed_begin(inst, 1, &t0, &dt);
    if (st == HB_OK && !dt) st = HB_EINVAL; /* no device timer: the caller must not ask (exec.h) */
    if (st != HB_OK) return st;
    st = inst->ops->graph_launch(inst, graph);
    *enq = hb_now() - t0;
    hb_status s2 = hb_timed_end(inst, dt, t0, dev, NULL);
    return st != HB_OK ? st : s2;
}

static hb_status launch(const hb_exec_step *s, int async)
{
    hb_instance *in = s->inst;
    if (s->pre) {
        hb_status st = in->ops->run(in, s->pre, s->in, s->out);
        if (st != HB_OK) return st;
    }
    return async && in->ops->run_async ? in->ops->run_async(in, s->c, s->in, s->out) : in->ops->run(in, s->c, s->in, s->out);
}

hb_status hb_exec_launch(const hb_exec_step *s) { return launch(s, 0); }

hb_status hb_exec_run(const hb_exec_step *s, int cold, unsigned flags, double *t_s, double *host_s, double *prep_s)
{
    hb_instance *in = s->inst;
    hb_status st = HB_OK;
    if (prep_s) *prep_s = 0;
    *t_s = 0;
    if (host_s) *host_s = 0;
    if (!(flags & HB_EXEC_NO_PREP) && (st = hb_compute_prepare(in, cold, s->c, s->in, s->out, s->prep, prep_s)) != HB_OK) return st;
    double t0;
    int dt;
    (void)hb_timed_begin(in, (flags & HB_EXEC_DEV_TIMER) != 0, &t0, &dt);
    st = launch(s, (flags & HB_EXEC_ASYNC) != 0);
    hb_status s2 = hb_timed_end(in, dt, t0, t_s, host_s);
    return st != HB_OK ? st : s2;
}

hb_status hb_exec_enqueue(const hb_exec_step *s, int n, double *dev, double *enq, double *step_s, int *failed)
{
    hb_instance *in = s[0].inst;
    hb_status st = HB_OK;
    if (failed) *failed = -1;
    if (dev && (st = in->ops->timer_begin(in)) != HB_OK) return st;
    const double t0 = hb_now();
    double a = t0;
    for (int i = 0; i < n && st == HB_OK; i++) {
        st = launch(&s[i], 1);
        const double b = hb_now(); /* read whether or not step_s is asked: every caller's segment pays the same */
        if (step_s) step_s[i] = b - a;
        a = b;
        if (st != HB_OK && failed) *failed = i;
    }
    if (enq) *enq = a - t0; /* the steps' shares add up to it; near the device's span: the segment is launch-bound */
    if (!dev) return st;
    hb_status s2 = in->ops->timer_end(in, dev);
    return st != HB_OK ? st : s2;
}
