/*
 * launch.h - this process's place in a multi-process launch (one process per GPU), read from the
 * launcher's environment. Header-only (static inline) so that the CUDA plugin, which calls no
 * harness function, reads exactly what the harness reads.
 *
 * Variables, first found wins (docs/collectives.md):
 *   rank:       HB_RANK, OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH, Intel MPI), SLURM_PROCID
 *   ranks:      HB_NRANKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS
 *   local rank: HB_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
 * Unset: rank 0 of 1 (a single process), local rank 0. A value that is not a non-negative decimal
 * integer below 65536 counts as unset.
 */
#ifndef HB_LAUNCH_H
#define HB_LAUNCH_H
#include <stdlib.h>

static inline int hb_launch_env_(const char *const *names, int dflt)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v) continue;
        char *end;
        long x = strtol(v, &end, 10);
        if (*end == 0 && x >= 0 && x < 65536) return (int)x;
    }
    return dflt;
}
/* This process's rank in the launch (0-based). */
static inline int hb_launch_rank(void)
{
    static const char *const n[] = {"HB_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", 0};
    return hb_launch_env_(n, 0);
}
/* Number of processes in the launch (>= 1). */
static inline int hb_launch_ranks(void)
{
    static const char *const n[] = {"HB_NRANKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", 0};
    int r = hb_launch_env_(n, 1);
    return r > 0 ? r : 1;
}
/* This process's rank among those on its machine: picks its GPU (local rank mod visible GPUs). */
static inline int hb_launch_local_rank(void)
{
    static const char *const n[] = {"HB_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", 0};
    return hb_launch_env_(n, 0);
}
#endif
