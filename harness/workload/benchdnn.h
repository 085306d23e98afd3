/*
 * benchdnn.h - oneDNN benchdnn problem lists read as workloads (conv, pool, matmul descriptors).
 *
 * Grammar and defaults follow oneDNN's tests/benchdnn/doc/driver_conv.md, driver_pool.md,
 * driver_matmul.md and the descriptor parsers str2desc() in tests/benchdnn/{conv/conv_aux.cpp,
 * pool/pool_aux.cpp} and sanitize_desc() in tests/benchdnn/dnnl_common.cpp:
 *   conv:   gXmbX_icXidXihXiwX_ocXodXohXowX_kdXkhXkwX_sdXshXswX_pdXphXpwX_ddXdhXdwX_nS
 *   pool:   mbXicX_idXihXiwX_odXohXowX_kdXkhXkwX_sdXshXswX_pdXphXpwX_ddXdhXdwX_nS
 *   matmul: [B1x..x]MxK:[B1x..x]KxN[:[B1x..x]MxN][_]nS
 * Keys in any order, `_` ignored; defaults g=1, mb=2, strides 1, dilation 0 (benchdnn: 0 = none;
 * hybench dh = benchdnn dh + 1), padding deduced; an absent depth/width takes the values of the
 * next larger spatial dimension present (d -> h -> w); an absent output size is computed
 * (o = (i - ((k-1)*(d+1)+1) + 2p)/s + 1) and an absent padding deduced from a given output size
 * (p = ((o-1)*s - i + (k-1)*(d+1)+1)/2). The name S is n"..." (quotes optional); "model:layer*N"
 * sets c.model = model, c.name = layer, c.weight = N.
 * How each problem maps onto hybench ops (and which become skipped items): docs/workloads.md.
 */
#ifndef HB_BENCHDNN_H
#define HB_BENCHDNN_H
#include "workload/item.h"

typedef enum hb_batch_kind { HB_BATCH_CONV, HB_BATCH_POOL, HB_BATCH_MATMUL, HB_BATCH_KIND_COUNT } hb_batch_kind;

/* Pooling algorithm of a pool list. AUTO: by the problem's name ("ave" or "avg" anywhere in it ->
 * avgpool, otherwise maxpool), the rule for lists whose algorithm benchdnn gives on its command
 * line (--alg). AVG is benchdnn avg_np (padding excluded, hybench's avgpool); AVG_P (padding
 * included) has no hybench op: such problems become skipped items. */
typedef enum hb_pool_alg { HB_POOL_AUTO = 0, HB_POOL_MAX, HB_POOL_AVG, HB_POOL_AVG_P } hb_pool_alg;

typedef struct hb_batch_opts {
    int64_t mb;          /* > 0: replaces the minibatch of every conv/pool problem (benchdnn --mb); 0: as listed */
    hb_pool_alg alg;     /* pool lists: explicit algorithm, or AUTO */
    const char *model;   /* non-NULL and non-empty: model name of every item (else the n"model:" prefix) */
    double weight;       /* > 0: multiplies each item's weight (the *N count); 0 means 1 */
} hb_batch_opts;

/* "conv" -> HB_BATCH_CONV, "pool"/"maxpool"/"avgpool" -> HB_BATCH_POOL (alg, when non-NULL, gets
 * MAX/AVG for the latter two, AUTO for "pool"), "matmul" -> HB_BATCH_MATMUL; -1 if unknown. */
int hb_batch_kind_parse(const char *s, hb_pool_alg *alg);
const char *hb_batch_kind_name(hb_batch_kind k);

/* Parse one descriptor `desc` (one whitespace-free token, quotes allowed in the name) of kind k
 * into *out (zeroed first): c.op, c.shape (normalized unless out->skip is set), c.name, c.model,
 * c.weight (1 unless "*N"); c.source is left empty, masks 0. opts may be NULL.
 * Returns HB_OK, or HB_EINVAL with the reason (no file:line) in err: unknown key, missing value,
 * bad or negative number, duplicate key, trailing junk, unterminated name, inconsistent or absurd
 * sizes. A well-formed problem hybench cannot run is HB_OK with out->skip set. */
hb_status hb_benchdnn_parse(hb_batch_kind k, const char *desc, const hb_batch_opts *opts, hb_item *out,
                            char *err, size_t errlen);

/* Append the problems of list file `path` (kind k; driver options inside the file may switch it)
 * to out, each with c.source = "path:line". Lines: descriptors and driver options separated by
 * blanks, `#` to the end of the line is a comment. Options understood: --conv, --pool, --matmul
 * (switch the kind), --mb=N, --alg=max|avg_np|avg_p|pooling_max|pooling_avg_exclude_padding|
 * pooling_avg_include_padding, --batch=FILE (relative to this file, depth <= 8), --reset, and the
 * no-ops for what hybench does anyway: --dir=FWD_D|FWD_I|FWD_B, --cfg=f32, --dt=f32[:f32[:f32]],
 * --mode=..., --skip-impl=... Anything else is refused. Nothing is appended on error.
 * Errors: HB_EINVAL "path:line: reason"; HB_EDEVICE when the file cannot be read; HB_ENOMEM. */
hb_status hb_benchdnn_load(hb_batch_kind k, const char *path, const hb_batch_opts *opts, hb_item_list *out,
                           char *err, size_t errlen);

/* Where the benchdnn lists hybench ships live, under a workload directory (workloads/benchdnn/). */
#define HB_BENCHDNN_SUBDIR "benchdnn"

/* Find a benchdnn list. An absolute `name` is taken as given. A relative one is tried, in order:
 * relative to base_dir (the including file's directory; NULL: the working directory); in
 * <base_dir>/benchdnn/ (the lists shipped beside the workload files); in $HB_BENCHDNN_DIR, as named
 * and as a oneDNN checkout's tests/benchdnn/inputs/ names it ("conv_shapes_resnet_50" ->
 * "conv/shapes_resnet_50"); then in the shipped workloads/benchdnn/ of the running executable's
 * tree: <exe dir>/../workloads/benchdnn/ and up to three folders higher (build/hybench and a GPU
 * bundle's, build/tests/ binaries, the sanitizer tree's build/<tree>/tests/), so `hybench run --batch conv:conv_shapes_resnet_50` works from any
 * directory. Nothing outside the repository (no ../shared) is read unless HB_BENCHDNN_DIR names it.
 * Writes the first readable path into buf (buflen bytes) and returns HB_OK; else HB_EDEVICE with
 * the places tried and how to point at a oneDNN checkout in err; HB_EINVAL when the path is longer
 * than buflen. */
hb_status hb_benchdnn_find(const char *name, const char *base_dir, char *buf, size_t buflen, char *err,
                           size_t errlen);
/* A benchdnn list given as "conv:FILE", "pool:FILE" or "matmul:FILE" (hybench run --batch); also
 * "maxpool:FILE", "avgpool:FILE" (force the pooling algorithm) and options before the colon:
 * "conv,mb=2:FILE", "pool,alg=avg:FILE". FILE is found as hb_benchdnn_find does with no base
 * directory (the working directory, $HB_BENCHDNN_DIR, the shipped workloads/benchdnn/). Same errors as hb_workload_load (workload.h). */
hb_status hb_batch_load(const char *spec, hb_item_list *out, char *err, size_t errlen);
#endif
