/* cuda_plant.cu - the planted device-side slowdown of the merge gate's tests (backend.h plant_delay;
 * harness/measure/plant.h; docs/compare.md, "Planted slowdowns"). A `make PLANT=1` driver asks for a
 * delay before run(); run enqueues it behind the op's kernels, inside the events that time the compute
 * phase, so the phase lasts longer on the device as a slower kernel would make it. A normal driver
 * never asks, and run then enqueues nothing more. */
#include "cuda_internal.h"
#include <stdio.h>

/* One thread spinning for `cycles` SM clock cycles (clock64: the SM's own counter). */
__global__ void k_plant_delay(long long cycles)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

static hb_status launch_delay(hbc_ctx *c, long long cycles)
{
    k_plant_delay<<<1, 1, 0, c->stream>>>(cycles);
    return HBC_LAUNCHED(c, "plant_delay");
}

/* The rate clock64 counts at while the delay kernel spins, in Hz: after 2^25 cycles of spinning
 * untimed (an idle GPU raises its SM clock within milliseconds of work: measured from idle, the rate
 * came out about half of the later one, and the planted delays half as long, H200 2026-11-27), 2^22
 * cycles timed with events less an empty delay kernel, best of 3 each (hbc_time_best, behind the
 * launch gate). The attribute cudaDevAttrClockRate is the fallback when the events give nothing
 * usable. Announced once on stderr. */
static hb_status measure_clock(hbc_ctx *c)
{
    const long long n = 1LL << 22;
    float t0 = 0, t1 = 0;
    HBC_TRY(launch_delay(c, 1LL << 25));
    HBC_TRY(hbc_time_best(c, [&]() { return launch_delay(c, 0); }, &t0));
    HBC_TRY(hbc_time_best(c, [&]() { return launch_delay(c, n); }, &t1));
    const double dt = (double)(t1 - t0) * 1e-3;
    c->plant_hz = dt > 0 ? (double)n / dt : (double)c->sm_clock_khz * 1e3;
    fprintf(stderr, "hb_cuda: planted delays count the SM clock at %.0f MHz (measured; the device reports %d MHz)\n",
            c->plant_hz * 1e-6, c->sm_clock_khz / 1000);
    return HB_OK;
}

hb_status hbc_plant_set(hbc_ctx *c, double seconds)
{
    if (!(seconds >= 0 && seconds <= 1)) return HB_EINVAL;
    if (!(c->plant_hz > 0)) HBC_TRY(measure_clock(c)); /* before run(): outside the timed region, no gate held */
    c->plant_s = seconds;
    return HB_OK;
}

hb_status hbc_plant_enqueue(hbc_ctx *c)
{
    const long long cycles = (long long)(c->plant_s * c->plant_hz);
    c->plant_s = -1;
    return launch_delay(c, cycles);
}
