/*
 * cuda_energy.cu - the CUDA backend's energy counter (energy_read hook; docs/energy.md): NVML's
 * nvmlDeviceGetTotalEnergyConsumption (millijoules since the driver was loaded; Volta and later),
 * with NVML loaded by dlopen as cuda_info.cu does for clocks (the plugin does not link NVML).
 */
#include "cuda/cuda_collective.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int nvml_ret; /* nvmlReturn_t: NVML_SUCCESS = 0, NVML_ERROR_NOT_SUPPORTED = 3 */

#define HBC_ENERGY_MAX_DEV 64
static struct {
    int tried;
    void *lib;
    nvml_ret (*energy)(void *, unsigned long long *);
    nvml_ret (*bypci)(const char *, void **);
    const char *(*err)(nvml_ret);
    void *dev[HBC_ENERGY_MAX_DEV];
    char why[160];
} E;

static bool nvml_load(void)
{
    if (E.tried) return E.lib != nullptr;
    E.tried = 1;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { snprintf(E.why, sizeof E.why, "NVML not found (dlopen libnvidia-ml.so.1 failed)"); return false; }
    nvml_ret (*init)(void) = (nvml_ret(*)(void))dlsym(lib, "nvmlInit_v2");
    E.energy = (nvml_ret(*)(void *, unsigned long long *))dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
    E.bypci = (nvml_ret(*)(const char *, void **))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    E.err = (const char *(*)(nvml_ret))dlsym(lib, "nvmlErrorString");
    if (!init || !E.energy || !E.bypci || init() != 0) {
        snprintf(E.why, sizeof E.why, "NVML lacks nvmlDeviceGetTotalEnergyConsumption or does not initialize");
        dlclose(lib);
        return false;
    }
    E.lib = lib;
    return true;
}

hb_status hbc_energy_read(hb_instance *inst, double *joules, char *why, size_t whylen)
{
    hbc_ctx *c = inst ? (hbc_ctx *)inst->ctx : nullptr;
    if (!c || c->dev < 0 || c->dev >= HBC_ENERGY_MAX_DEV) { snprintf(why, whylen, "no CUDA instance"); return HB_EINVAL; }
    if (!nvml_load()) { snprintf(why, whylen, "%s", E.why); return HB_ESKIP; }
    if (!E.dev[c->dev]) {
        char bus[32];
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, c->dev) != cudaSuccess || E.bypci(bus, &E.dev[c->dev]) != 0) {
            (void)cudaGetLastError();
            E.dev[c->dev] = nullptr;
            snprintf(why, whylen, "NVML has no handle for cuda:%d", c->dev);
            return HB_ESKIP;
        }
    }
    unsigned long long mj = 0;
    nvml_ret r = E.energy(E.dev[c->dev], &mj);
    if (r != 0) {
        snprintf(why, whylen, "nvmlDeviceGetTotalEnergyConsumption: %s", E.err ? E.err(r) : "error");
        return HB_ESKIP;
    }
    *joules = (double)mj * 1e-3;
    return HB_OK;
}
