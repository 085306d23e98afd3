/*
 * workload_internal.h - what the files of workload/ share for reading workload files and nothing
 * outside workload/ includes: the parsing state (workload.c) and the reading primitives
 * (workload_lex.c) that workload.c uses.
 */
#ifndef HB_WORKLOAD_INTERNAL_H
#define HB_WORKLOAD_INTERNAL_H
#include <stdint.h>
#include <stdio.h>
#include "workload/workload.h"
#include "workload/benchdnn.h"

/* ---- parsing state ---- */
typedef struct wl_case {
    hb_shape s;
    int line;
    char label[48];    /* shape/sweep label, "" if none (quick selects by it) */
    char suffix[80];   /* name suffix */
} wl_case;

typedef struct wl_tok { char text[96]; int line; } wl_tok;
typedef struct wl_batch { hb_batch_kind kind; hb_pool_alg alg; char file[200]; int line; } wl_batch;

typedef struct wl_section {
    char name[64];
    int line;                        /* of the [header] */
    int op; int op_line;             /* op = -1 until given */
    wl_case *cases; size_t ncases, capcases;
    int nshape_lines;                /* shape + sweep lines */
    wl_tok *quick; size_t nquick, capquick;
    wl_batch *batch; size_t nbatch, capbatch;
    unsigned dmask, mmask, rmask;
    char model[48];
    double weight;
    char cname[64];
    int64_t mb; int mb_line;
    int alg; int alg_line;           /* hb_pool_alg, -1 unset */
    int key_line[16];                /* first line of each single-valued key (duplicates) */
} wl_section;

typedef struct wl_ctx {
    const char *path;
    char dir[4096];
    char stem[64];
    FILE *f;
    char *buf; size_t bufcap;
    int lineno;
    int failed;
    hb_status st;
    char *err; size_t errlen;
    /* section headers as the reader sees them */
    int hdr_seq, hdr_line;
    char hdr_name[64];
    int cur_seq;                     /* header whose keys the handler is collecting (0: none) */
    wl_section sec;
    char (*seen)[64]; int *seen_line; size_t nseen, capseen;
    hb_item_list tmp;
} wl_ctx;

/* ---- reading primitives (workload_lex.c) ---- */
void fail(wl_ctx *x, int line, hb_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int is_label_char(int c);
const char *skip_ws(const char *p);
/* Integer with the suffixes hb_shape_parse accepts: Ki, Mi, Gi, or 2^N. */
int parse_int(const char *s, const char **endp, int64_t *v);
int field_index(const char *name, size_t len);
int64_t *fieldp(hb_shape *s, int i);
int64_t fieldv(const hb_shape *s, int i);
#endif
