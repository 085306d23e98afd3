/*
 * machine.h - a run's machine named by what it is, not by its hostname (issue 17), and only by what
 * does not change from run to run (issue 32): the CPU model and topology, the host's total memory to
 * the nearest GiB, the compiler, the OpenBLAS build, and for each available backend the device name
 * with driver and library versions (CUDA driver/runtime, cuBLAS, cuDNN; the OpenCL platform, device
 * and driver). Two runs with the same fingerprint ran on the same kind of machine with the same
 * software stack; the H100 host and this VM, both called "vm", get different ones; two runs of this VM
 * half an hour apart get the same one although PoCL reported other memory sizes for its device.
 */
#ifndef HB_MACHINE_H
#define HB_MACHINE_H
#include <jansson.h>
#include <stddef.h>

/* meta: the run's meta record (may be NULL); backends: array of its backend records (may be NULL);
 * both borrowed. Writes into text (NUL-terminated, truncated to tlen) the canonical description:
 *   cpu: model sockets cores pus l1d_bytes l2_bytes l3_bytes (meta.cpu); memory=N GiB (meta.memory_bytes
 *   rounded to whole GiB); compiler; openblas (meta.openblas.config); then per available backend,
 *   sorted by name, "; NAME:" and its info fields that name a model, a version or a build
 *   configuration (keys with version, config, name, model, platform, device, compute_capability,
 *   corename, sm_count or memory_bytes in them, sorted; never one with free, avail, used, load, clock,
 *   temp, util, power, date, elapsed or pci_bus), or, for a backend without such fields, its
 *   description with memory sizes, compute-unit and thread counts blanked ("13.5 GiB, 2 CU" -> "# GiB,
 *   # CU").
 * Left out: the host name, the OS kernel, dates, loads, clock readings, free memory, the OpenCL
 * device's memory (PoCL reports a share of the memory free at the moment), compute-unit and thread
 * counts (they follow the environment of the run), and backend descriptions where fields say the same.
 * Into id (idlen >= 17): 16 hex digits of the text's 64-bit FNV-1a hash (core/rstats.h hb_hash64).
 * The history store (hb_store_fingerprint, and its migration to schema 3), the CSV's machine column and
 * the report call it, so a run has one machine id everywhere. Either output may be NULL. */
void hb_machine_fingerprint(json_t *meta, json_t *backends, char *text, size_t tlen, char *id, size_t idlen);

/* hb_machine_fingerprint of a loaded run (its meta and backend records); r borrowed. */
struct hb_run;
void hb_run_fingerprint(const struct hb_run *r, char *text, size_t tlen, char *id, size_t idlen);

/* The parts of two fingerprint texts (hb_machine_fingerprint's text) that differ, for a message:
 * the texts are "; "-separated parts, each named by what precedes its first "=" or ": " ("cpu",
 * "memory", "compiler", "openblas", a backend's name); writes "NAME: A-PART vs B-PART" for a part that
 * differs, "NAME: A-PART vs absent" (or the mirror) for one that only one text has, joined by " | ",
 * into out (NUL-terminated, truncated to len); "" when the texts are equal. No errors. */
void hb_machine_text_diff(const char *a, const char *b, char *out, size_t len);

/* The device of one backend record: info.name (GPU) or its description, truncated to len. "" when
 * rec is NULL. */
void hb_machine_device(json_t *backend_rec, char *buf, size_t len);
#endif
