/* runs_header.c - the report's opening: one row per run (report/common.h hb_report_header) with its
 * machine, devices and software in a few words, the command line and the machine fingerprint one
 * click away. The full meta record of each run stays in the "Run metadata" section (analyze.c). */
#include "report/common.h"
#include "core/appendf.h"
#include "results/machine.h"
#include <stdarg.h>

static const char *sget(const char *s) { return s ? s : ""; }

/* A version packed as MMmmpp (cuBLAS 130100, cuDNN 91400, NCCL 22803) as "13.1.0"; a string as it is. */
static const char *packed_version(const hb_rec_ver *v)
{
    if (v->kind == 1) {
        const char *s = v->s;
        char *end;
        long n = strtol(s, &end, 10);
        if (*s && !*end && n >= 10000) return F("%ld.%ld.%ld", n / 10000, n / 100 % 100, n % 100);
        return s;
    }
    if (v->kind == 2) {
        long long n = v->n;
        return n >= 10000 ? F("%lld.%lld.%lld", n / 10000, n / 100 % 100, n % 100) : F("%lld", n);
    }
    return "";
}

/* The device model of backend record b: the GPU's name, else its description up to " (". */
static void model_of(const hb_rec_backend *b, char *out, size_t len)
{
    const char *n = b->info.name ? b->info.name : b->description;
    snprintf(out, len, "%s", n ? n : "");
    char *p = strstr(out, " (");
    if (p) *p = 0;
}

/* "4x NVIDIA H100 80GB HBM3, cpu, cpu-ref": the run's available backends, a device model counted
 * where several instances share it (the GPUs of one machine); host backends by name. */
static void devices_text(const hb_run *r, char *out, size_t len)
{
    size_t o = 0, n = r->nbackend_recs;
    out[0] = 0;
    for (int pass = 0; pass < 2; pass++) /* devices with their own memory (GPUs) first, then the host's */
    for (size_t i = 0; i < n; i++) {
        const hb_rec_backend *b = &r->backend_recs[i];
        if (b->available != 1 || b->host_memory != (pass == 1)) continue;
        char mi[256], mj[256], type[32];
        const char *name = sget(b->backend);
        snprintf(type, sizeof type, "%.*s", (int)strcspn(name, ":"), name);
        model_of(b, mi, sizeof mi);
        int host = b->host_memory || !strcmp(type, "cpu") || !strcmp(type, "cpu-ref");
        int seen = 0, cnt = 0;
        for (size_t j = 0; j < n; j++) {
            const hb_rec_backend *c = &r->backend_recs[j];
            const char *nj = sget(c->backend);
            if (c->available != 1 || strncmp(nj, type, strlen(type)) ||
                (nj[strlen(type)] != ':' && nj[strlen(type)] != 0))
                continue;
            model_of(c, mj, sizeof mj);
            if (strcmp(mi, mj)) continue;
            if (j < i) seen = 1;
            cnt++;
        }
        if (seen) continue;
        if (host && !strcmp(type, name)) hb_appendf(out, len, &o, "%s%s", o ? ", " : "", name);
        else if (cnt > 1) hb_appendf(out, len, &o, "%s%dx %s (%s)", o ? ", " : "", cnt, mi, type);
        else hb_appendf(out, len, &o, "%s%s (%s)", o ? ", " : "", mi, name);
    }
}

/* "driver 580.159.04, CUDA 13.0, cuBLAS 13.1.0, cuDNN 9.14.0, NCCL 2.28.3; OpenCL ...; OpenBLAS
 * 0.3.21; gcc 12.2.0": the versions that name the run's software, from the first available record of
 * each backend type and the meta record. */
static void software_text(const hb_run *r, char *out, size_t len)
{
    size_t o = 0;
    int cuda = 0, ocl = 0;
    out[0] = 0;
    for (size_t i = 0; i < r->nbackend_recs; i++) {
        const hb_rec_backend *b = &r->backend_recs[i];
        if (b->available != 1) continue;
        const char *name = sget(b->backend);
        if (!strncmp(name, "cuda", 4) && !cuda++) {
            const char *drv = *sget(b->info.nvml_driver_version) ? b->info.nvml_driver_version : sget(b->info.driver_version);
            hb_appendf(out, len, &o, "%sdriver %s, CUDA %s", o ? "; " : "", *drv ? drv : "?",
                       *sget(b->info.runtime_version) ? b->info.runtime_version : "?");
            if (b->info.cublas_version.kind) hb_appendf(out, len, &o, ", cuBLAS %s", packed_version(&b->info.cublas_version));
            if (b->info.cudnn_version.kind) hb_appendf(out, len, &o, ", cuDNN %s", packed_version(&b->info.cudnn_version));
            if (b->info.nccl_version.kind) hb_appendf(out, len, &o, ", NCCL %s", packed_version(&b->info.nccl_version));
        } else if (!strncmp(name, "opencl", 6) && !ocl++) {
            hb_appendf(out, len, &o, "%s%s %s", o ? "; " : "", *sget(b->info.platform) ? b->info.platform : "OpenCL",
                       sget(b->info.driver_version));
        }
    }
    const hb_rec_meta *meta = r->meta_rec;
    const char *blas = meta ? sget(meta->openblas.config) : "";
    if (*blas) {
        int w = 0;
        size_t k = 0;
        while (blas[k] && !(blas[k] == ' ' && ++w == 2)) k++; /* "OpenBLAS 0.3.21" */
        hb_appendf(out, len, &o, "%s%.*s", o ? "; " : "", (int)k, blas);
    }
    if (meta && *sget(meta->compiler)) hb_appendf(out, len, &o, "%s%s", o ? "; " : "", meta->compiler);
}

void hb_report_header(ctx *c, const char *generated)
{
    hb_report *rp = c->rp;
    hb_doc_p(rp, "Generated %s by hybench %s from %d results file%s, one row per run below. Every number in this report is computed from "
             "these results; the plan's figures are the only constants.", generated, HB_VERSION, rp->nruns, rp->nruns > 1 ? "s" : "");
    json_t *rows = hb_doc_table(rp, NULL, 0, 9, "run", "run id", "date", "host", "CPU", "devices", "software", "commit", "cases");
    for (int r = 0; r < rp->nruns; r++) {
        hb_rrun *ru = &rp->runs[r];
        const hb_rec_meta *m = ru->r.meta_rec;
        static const hb_rec_meta none; /* a run read without its meta record: every member absent */
        if (!m) m = &none;
        char devs[600], sw[600], fp[32], fpd[4096];
        devices_text(&ru->r, devs, sizeof devs);
        software_text(&ru->r, sw, sizeof sw);
        hb_run_fingerprint(&ru->r, fpd, sizeof fpd, fp, sizeof fp);
        double mem = m->memory_bytes;
        const char *cpus = !m->has_cpu ? "?" : F("%s, %lld cores%s", *sget(m->cpu.model) ? m->cpu.model : "?",
                                                 isnan(m->cpu.cores) ? 0LL : (long long)m->cpu.cores,
                                                 mem > 0 ? F(", %.0f GiB", mem / 1073741824.0) : "");
        size_t nok = 0, ncases = ru->r.ncase_recs;
        for (size_t i = 0; i < rp->nrows; i++) nok += rp->rows[i].run == r && rp->rows[i].ok;
        char date[40];
        snprintf(date, sizeof date, "%s", ru->date);
        if (strlen(date) > 10 && date[10] == 'T') date[10] = ' ';
        hb_doc_row(rows, 9, ru->label, ru->run_id, date, ru->host, cpus, devs, sw, F("%.7s", ru->commit),
                   ru->r.end_rec ? F("%zu (%zu ok)", ncases, nok) : tone_cell("warn", F("%zu (%zu ok), incomplete: no end record", ncases, nok)));
        json_t *items = json_array();
        json_array_append_new(items, json_pack("[s,s]", "file", ru->r.path));
        json_array_append_new(items, json_pack("[s,s]", "command line", *sget(m->command_line) ? m->command_line : "?"));
        json_array_append_new(items, json_pack("[s,s]", "commit", ru->commit));
        char mf[4200];
        snprintf(mf, sizeof mf, "%s (%s)", fp, fpd);
        json_array_append_new(items, json_pack("[s,s]", "machine fingerprint", mf));
        if (*sget(m->os)) json_array_append_new(items, json_pack("[s,s]", "os", m->os));
        if (*sget(m->cflags)) json_array_append_new(items, json_pack("[s,s]", "cflags", m->cflags));
        hb_doc_more(rp, "command line, machine fingerprint, file", items);
    }
}
