/*
 * registry.h - every backend type hybench knows (registry.c), compiled in, loadable as a plugin, or
 * neither with the reason; plugin loading and opening instances. The interface each backend
 * implements: core/backend.h. A linked-in backend's ops are declared in its own header under
 * kernels/<name>/; a plugin's are looked up by name with dlsym.
 */
#ifndef HB_REGISTRY_H
#define HB_REGISTRY_H
#include "core/backend.h"

/* Registry entry: every backend type is listed, compiled in, loadable as a plugin or neither
 * (stress-ng style). */
typedef struct hb_backend_entry {
    const char *type;
    const hb_backend_ops *ops;      /* linked in: non-NULL */
    const char *plugin;             /* else a plugin file ("hb_opencl.so") exporting `symbol` */
    const char *symbol;             /* "hb_opencl_ops" */
    const char *unavailable;        /* reason when there is neither (metal, coreml off Apple hardware) */
} hb_backend_entry;

extern const hb_backend_entry hb_backends[];
extern const int hb_nbackends;

/* Find a backend type by name ("opencl" matches "opencl:0:0" too); NULL if unknown. */
const hb_backend_entry *hb_backend_find(const char *type);
/* The ops of entry e: linked-in ops, or the plugin dlopen'd from $HB_PLUGIN_DIR or the directory of
 * the running executable. NULL with the reason (dlerror text, or e->unavailable) in reason.
 * The plugin stays loaded for the life of the process. */
const hb_backend_ops *hb_backend_load(const hb_backend_entry *e, char *reason, size_t reasonlen);
/* Enumerate entry e's instances into out[0..max-1] (zeroed here). Returns the count; 0 with the
 * reason when the type is unavailable or has no device. Instances are closed with
 * inst->ops->close(inst). */
int hb_backend_open(const hb_backend_entry *e, hb_instance *out, int max, char *reason, size_t reasonlen);
#endif
