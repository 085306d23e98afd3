/* baseline.c - per-machine baselines and the nightly history index (analysis/baseline.h): a host's
 * baseline files, promoting a run to its machine's baseline and showing it, and appending a run to the
 * history that `hybench trend` plots. */
#include "analysis/baseline.h"
#include "core/config.h"
#include "results/machine.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


char *hb_host_slug(const char *host, char *buf, size_t len)
{
    size_t k = 0;
    for (const char *p = host; p && *p && k + 1 < len; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        buf[k++] = ok ? c : '_';
    }
    buf[k] = 0;
    if (k == 0 || !strcmp(buf, ".") || !strcmp(buf, "..")) snprintf(buf, len, "unknown");
    return buf;
}

void hb_baseline_paths(const char *dir, const char *name, char *jsonl, char *json, size_t len)
{
    char slug[256];
    hb_host_slug(name, slug, sizeof slug);
    snprintf(jsonl, len, "%s/%s.jsonl", dir, slug);
    snprintf(json, len, "%s/%s.json", dir, slug);
}

int hb_baseline_find(const char *dir, const hb_run *r, char *jsonl, char *json, size_t len, char *fp, int *legacy)
{
    char id[17];
    hb_machine_fingerprint(r->meta, r->backends, NULL, 0, id, sizeof id);
    if (fp) snprintf(fp, 17, "%s", id);
    if (legacy) *legacy = 0;
    hb_baseline_paths(dir, id, jsonl, json, len);
    if (access(jsonl, R_OK) == 0) return 0;
    const char *host = r->meta_rec ? r->meta_rec->host : NULL;
    if (!host) return -1;
    char ojl[PATH_MAX], ojs[PATH_MAX];
    hb_baseline_paths(dir, host, ojl, ojs, sizeof ojl);
    if (access(ojl, R_OK)) return -1;
    fprintf(stderr, "hybench: notice: no baseline of machine %s in %s; using %s, stored by host name (the layout before "
                    "fingerprints): its machine is checked as any baseline's; set it again (hybench baseline set) to "
                    "store it by fingerprint\n", id, dir, ojl);
    snprintf(jsonl, len, "%s", ojl);
    snprintf(json, len, "%s", ojs);
    if (legacy) *legacy = 1;
    return 0;
}

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* mkdir -p for the directory part of a path (dir_only: path itself is the directory). */
int hb_mkdirs(const char *path, int dir_only)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    if (!dir_only) {
        char *s = strrchr(tmp, '/');
        if (!s) return 0;
        *s = 0;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0775) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (tmp[0] && mkdir(tmp, 0775) && errno != EEXIST) return -1;
    return 0;
}

typedef struct run_counts { size_t cases, ok, wrong, crashed, failed; } run_counts;
static run_counts count_statuses(const hb_run *r)
{
    run_counts c = { 0, 0, 0, 0, 0 };
    for (size_t i = 0; i < r->ncase_recs; i++) {
        const char *s = r->case_recs[i].status;
        c.cases++;
        if (!s) continue;
        if (!strcmp(s, "ok")) c.ok++;
        else if (!strcmp(s, "wrong")) c.wrong++;
        else if (!strcmp(s, "crashed")) c.crashed++;
        else if (!strcmp(s, "failed") || !strcmp(s, "timed_out")) c.failed++;
    }
    return c;
}

/* Append one line to a file with a single write(2) (O_APPEND), like the results writer. */
static hb_status append_line(const char *path, json_t *rec)
{
    char *s = json_dumps(rec, JSON_COMPACT);
    if (!s) return HB_ENOMEM;
    size_t l = strlen(s);
    char *line = malloc(l + 2);
    if (!line) { free(s); return HB_ENOMEM; }
    memcpy(line, s, l);
    line[l] = '\n';
    free(s);
    hb_mkdirs(path, 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0664);
    hb_status st = HB_OK;
    if (fd < 0 || write(fd, line, l + 1) != (ssize_t)(l + 1)) st = HB_EDEVICE;
    if (fd >= 0 && close(fd)) st = HB_EDEVICE;
    free(line);
    return st;
}

hb_status hb_history_append(const char *index_path, const char *results, char *err, size_t errlen)
{
    hb_run r;
    if (hb_run_load(results, &r, err, errlen) != HB_OK) return HB_EINVAL;
    if (!r.meta) {
        snprintf(err, errlen, "%s: no meta record", results);
        hb_run_free(&r);
        return HB_EINVAL;
    }
    run_counts c = count_statuses(&r);
    const hb_rec_meta *m = r.meta_rec;
    const char *cpu = m->cpu.model;
    json_t *rec = json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:s, s:I, s:I, s:I, s:I, s:b, s:s}",
                            "type", "history", "run_id", m->run_id, "date", m->date,
                            "commit", m->git_commit, "host", m->host,
                            "cpu_model", cpu, "file", results, "cases", (json_int_t)c.cases,
                            "ok", (json_int_t)c.ok, "wrong", (json_int_t)c.wrong,
                            "crashed", (json_int_t)c.crashed, "complete", r.end != NULL,
                            "added", "");
    hb_run_free(&r);
    if (!rec) { snprintf(err, errlen, "out of memory"); return HB_ENOMEM; }
    char now[32];
    utc_now(now, sizeof now);
    json_object_set_new(rec, "added", json_string(now));
    hb_status st = append_line(index_path, rec);
    json_decref(rec);
    if (st != HB_OK) snprintf(err, errlen, "%s: cannot append: %s", index_path, strerror(errno));
    return st;
}

static hb_status copy_file(const char *from, const char *to)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    FILE *in = fopen(from, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
    hb_status st = HB_OK;
    if (!in || !out) st = HB_EDEVICE;
    else {
        char buf[1 << 16];
        size_t k;
        while ((k = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, k, out) != k) { st = HB_EDEVICE; break; }
        if (ferror(in)) st = HB_EDEVICE;
    }
    if (in) fclose(in);
    if (out && fclose(out)) st = HB_EDEVICE;
    if (st == HB_OK && rename(tmp, to)) st = HB_EDEVICE;
    if (st != HB_OK) unlink(tmp);
    return st;
}

static void print_provenance(json_t *pj, const char *path)
{
    hb_rec_baseline p;
    hb_rec_baseline_parse(pj, &p);
    printf("baseline %s\n", path);
    const struct { const char *k, *v; } f[] = { {"fingerprint", p.fingerprint}, {"host", p.host}, {"cpu_model", p.cpu_model},
        {"run_id", p.run_id}, {"date", p.date}, {"git_commit", p.git_commit}, {"source", p.source}, {"set_at", p.set_at},
        {"set_by", p.set_by} };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) printf("  %-10s %s\n", f[i].k, f[i].v ? f[i].v : "?");
    printf("  %-10s %lld cases, %lld ok, %lld wrong, %lld crashed, %s\n", "cases", p.cases, p.ok, p.wrong, p.crashed,
           p.complete ? "complete" : "cut short");
}

int hb_baseline_set(const char *results, const char *dir, int force)
{
    hb_run r;
    char err[512];
    /* a file without a meta record, of a newer schema or without cases is read to be refused by name:
     * a baseline is what compare compares against, so it must be comparable (whatever --force says) */
    hb_load_opts lo = {.flags = HB_LOAD_NO_META | HB_LOAD_ANY_SCHEMA};
    if (hb_run_load_opts(results, &lo, &r, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench baseline: %s\n", err);
        return HB_EXIT_USAGE;
    }
    if (hb_run_check_comparable(&r, results, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench baseline: not set: %s\n", err);
        hb_run_free(&r);
        return HB_EXIT_INCOMPARABLE;
    }
    const char *host = r.meta_rec ? r.meta_rec->host : NULL;
    if (!host) {
        fprintf(stderr, "hybench baseline: %s has no meta.host\n", results);
        hb_run_free(&r);
        return HB_EXIT_USAGE;
    }
    run_counts c = count_statuses(&r);
    if (!force && (!r.end || c.wrong || c.crashed || c.ok == 0)) {
        fprintf(stderr, "hybench baseline: refusing %s: %s%s%s (use --force)\n", results,
                !r.end ? "the run was cut short (no end record) " : "",
                c.wrong || c.crashed ? "it has wrong or crashed cases " : "",
                c.ok == 0 ? "it has no ok case" : "");
        hb_run_free(&r);
        return HB_EXIT_USAGE;
    }
    char jl[PATH_MAX], js[PATH_MAX], now[32], fp[17], fptext[4096];
    hb_machine_fingerprint(r.meta, r.backends, fptext, sizeof fptext, fp, sizeof fp);
    hb_baseline_paths(dir, fp, jl, js, sizeof jl);
    if (hb_mkdirs(dir, 1)) {
        fprintf(stderr, "hybench baseline: cannot create %s\n", dir);
        hb_run_free(&r);
        return HB_EXIT_IO;
    }
    utc_now(now, sizeof now);
    const char *user = hb_config_get()->user;
    json_t *p = json_pack("{s:s, s:i, s:s, s:s?, s:s?, s:s?, s:s?, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:b, s:s}",
                          "tool", "hybench", "schema", HB_SCHEMA_VERSION, "host", host,
                          "cpu_model", r.meta_rec->cpu.model,
                          "run_id", r.meta_rec->run_id, "date", r.meta_rec->date,
                          "git_commit", r.meta_rec->git_commit, "source", results, "set_at", now,
                          "set_by", user ? user : "unknown", "cases", (json_int_t)c.cases,
                          "ok", (json_int_t)c.ok, "wrong", (json_int_t)c.wrong,
                          "crashed", (json_int_t)c.crashed, "complete", r.end != NULL,
                          "tool_version", HB_VERSION);
    json_object_set_new(p, "fingerprint", json_string(fp));
    json_object_set_new(p, "machine", json_string(fptext));
    hb_run_free(&r);
    int rc = HB_EXIT_OK;
    if (!p || copy_file(results, jl) != HB_OK || json_dump_file(p, js, JSON_INDENT(2))) {
        fprintf(stderr, "hybench baseline: cannot write %s / %s\n", jl, js);
        rc = HB_EXIT_IO;
    } else print_provenance(p, jl);
    json_decref(p);
    return rc;
}

/* Print every baseline in dir whose provenance names host (NULL: every one); returns how many. */
static int show_dir(const char *dir, const char *host)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json")) continue;
        char js[PATH_MAX + 256], jl[PATH_MAX + 256];
        snprintf(js, sizeof js, "%s/%s", dir, e->d_name);
        snprintf(jl, sizeof jl, "%s/%.*s.jsonl", dir, (int)(l - 5), e->d_name);
        json_error_t je;
        json_t *p = json_load_file(js, 0, &je);
        if (!p) continue;
        hb_rec_baseline pb;
        hb_rec_baseline_parse(p, &pb);
        const char *h = pb.host;
        if (!host || (h && !strcmp(h, host))) {
            print_provenance(p, jl);
            n++;
        }
        json_decref(p);
    }
    closedir(d);
    return n;
}

int hb_baseline_show(const char *dir, const char *host, const char *results)
{
    char err[512];
    if (results) {
        hb_run r;
        if (hb_run_load(results, &r, err, sizeof err) != HB_OK) {
            fprintf(stderr, "hybench baseline: %s\n", err);
            return HB_EXIT_USAGE;
        }
        char jl[PATH_MAX], js[PATH_MAX], fp[17];
        int found = hb_baseline_find(dir, &r, jl, js, sizeof jl, fp, NULL);
        hb_run_free(&r);
        json_error_t je;
        json_t *p = found == 0 ? json_load_file(js, 0, &je) : NULL;
        if (!p) {
            fprintf(stderr, "hybench baseline: no baseline for machine %s (the fingerprint of %s) in %s\n", fp, results, dir);
            return HB_EXIT_USAGE;
        }
        print_provenance(p, jl);
        json_decref(p);
        return HB_EXIT_OK;
    }
    if (host && show_dir(dir, host) == 0) {
        fprintf(stderr, "hybench baseline: no baseline for host %s in %s\n", host, dir);
        return HB_EXIT_USAGE;
    }
    if (!host && show_dir(dir, NULL) == 0) { fprintf(stderr, "hybench baseline: no baselines in %s\n", dir); return HB_EXIT_USAGE; }
    return HB_EXIT_OK;
}
