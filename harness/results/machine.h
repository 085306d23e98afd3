/*
 * machine.h - a run's machine named by what it is, not by its hostname (issue 17): the CPU model and
 * core count, memory, OS kernel, compiler, the OpenBLAS build, and for each available backend its
 * device name with driver and library versions (CUDA driver/runtime, cuBLAS, cuDNN; an OpenCL
 * device's description). Two runs with the same fingerprint ran on the same kind of machine with the
 * same software stack; the H100 host and this VM, both called "vm", get different ones.
 */
#ifndef HB_MACHINE_H
#define HB_MACHINE_H
#include <jansson.h>
#include <stddef.h>

/* meta: the run's meta record (may be NULL); backends: array of its backend records (may be NULL).
 * Writes into text (NUL-terminated, truncated to tlen) the canonical description: the CPU model and
 * topology (sockets, cores, PUs, cache sizes), the compiler, the OpenBLAS build, and for each
 * available backend (sorted by name) its description and the info fields that name a model, a
 * version or a build configuration (driver, runtime, cuBLAS, cuDNN, OpenCL platform); and into id
 * (idlen >= 17) 16 hex digits of its 64-bit FNV-1a hash (core/rstats.h hb_hash64). The host name,
 * dates, loads and clocks are left out. The history store (hb_store_fingerprint) calls it,
 * so a run has one machine id everywhere. Either output
 * may be NULL. */
void hb_machine_fingerprint(json_t *meta, json_t *backends, char *text, size_t tlen, char *id, size_t idlen);

/* The device of one backend record: info.name (GPU) or its description, truncated to len. "" when
 * rec is NULL. */
void hb_machine_device(json_t *backend_rec, char *buf, size_t len);
#endif
