/* cmd_history.c - `hybench history import|export|list|machines|where`: results files into the history
 * store (results/store.h) and back out as JSON Lines; the store's name (never its password).
 * docs/history.md. */
#include "cli/commands.h"
#include "results/store.h"
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The store named by --store, else $HB_STORE, else results/history.db. */
const char *hb_history_default_store(void);
const char *hb_history_default_store(void)
{
    const char *e = getenv("HB_STORE");
    return e && *e ? e : "results/history.db";
}

static void history_usage(FILE *f)
{
    fputs("usage: hybench history import [--store URL] [--lean] FILE...\n"
          "       hybench history export [--store URL] [-o FILE] RUN_ID\n"
          "       hybench history list [--store URL] [--machine FP]\n"
          "       hybench history machines [--store URL]\n"
          "       hybench history where [--store URL]\n"
          "The history store: every nightly run, its cases, their statistics and raw samples (docs/history.md).\n"
          "  import    read results files (.jsonl) into the store; a run already there is skipped. A FILE named\n"
          "            index.jsonl (the former results/history/ index) imports every run it lists\n"
          "  export    write run RUN_ID back as a results file (JSON Lines) to FILE or stdout\n"
          "  list      the stored runs: run id, date, commit, machine fingerprint, host, cases\n"
          "  machines  the machines: fingerprint (CPU, GPU, driver and library versions) and description\n"
          "  where     print the store's engine (sqlite or postgresql) and its name, any password as ***\n"
          "            (as every message names it); opens nothing\n"
          "  --lean       import keeps of each case its statistics, phase medians and samples, and drops\n"
          "               the rest of its record (memory, ceiling and clock fields): about 4x smaller\n"
          "  --store URL  a SQLite file (default $HB_STORE, else results/history.db) or a PostgreSQL\n"
          "               connection string: postgresql://... or libpq key=value (service=NAME); keep the\n"
          "               password out of it: PGPASSWORD, ~/.pgpass or a service file (docs/history.md)\n"
          "Exit status: 0 ok; 2 bad usage or an unreadable results file (the other files are imported);\n"
          "7 the store cannot be opened or written.\n", f);
}

/* Import one results file; 0 ok (or already there), HB_EXIT_USAGE unreadable, HB_EXIT_IO store error. */
static int import_file(hb_store *s, const char *path)
{
    char err[1024];
    hb_run r;
    if (hb_run_load(path, &r, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench history: %s (not imported)\n", err);
        return HB_EXIT_USAGE;
    }
    int dup = 0;
    hb_status st = hb_store_import(s, &r, &dup, err, sizeof err);
    const char *id = hb_run_meta(&r, "run_id");
    char fp[24], desc[4096];
    hb_store_fingerprint(&r, fp, desc, sizeof desc);
    int rc = HB_EXIT_OK;
    if (st == HB_EINVAL) { fprintf(stderr, "hybench history: %s\n", err); rc = HB_EXIT_USAGE; }
    else if (st) { fprintf(stderr, "hybench history: %s: %s (not imported)\n", path, err); rc = HB_EXIT_IO; }
    else if (dup) printf("hybench history: %s: run %s is already in the store\n", path, id);
    else printf("hybench history: %s: run %s imported (%zu cases, machine %s)\n", path, id, json_array_size(r.cases), fp);
    hb_run_free(&r);
    return rc;
}

/* The former history index: one JSON object a line with "file"; a file not found as written is
 * looked for beside the index. */
static int import_index(hb_store *s, const char *index)
{
    FILE *f = fopen(index, "r");
    if (!f) { fprintf(stderr, "hybench history: %s: cannot open\n", index); return HB_EXIT_USAGE; }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", index);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = 0; else snprintf(dir, sizeof dir, ".");
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = HB_EXIT_OK;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        const char *file = o ? hb_rec_str(o, "file") : NULL;
        if (!file) {
            if (strspn(line, " \t\r\n") != strlen(line)) {
                fprintf(stderr, "hybench history: %s:%d: no \"file\" (skipped)\n", index, lineno);
                rc = HB_EXIT_USAGE;
            }
            json_decref(o);
            continue;
        }
        char p[PATH_MAX + 8];
        if (access(file, R_OK) == 0) snprintf(p, sizeof p, "%s", file);
        else {
            const char *b = strrchr(file, '/');
            snprintf(p, sizeof p, "%s/%s", dir, b ? b + 1 : file);
        }
        int r = import_file(s, p);
        if (r == HB_EXIT_IO || (r && !rc)) rc = r;
        json_decref(o);
        if (rc == HB_EXIT_IO) break;
    }
    free(line);
    fclose(f);
    return rc;
}

int hb_cmd_history(int argc, char **argv)
{
    if (argc < 2) { history_usage(stderr); return HB_EXIT_USAGE; }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) { history_usage(stdout); return HB_EXIT_OK; }
    if (strcmp(sub, "import") && strcmp(sub, "export") && strcmp(sub, "list") && strcmp(sub, "machines") &&
        strcmp(sub, "where")) {
        fprintf(stderr, "hybench history: unknown subcommand \"%s\"\n", sub);
        history_usage(stderr);
        return HB_EXIT_USAGE;
    }
    const char *url = hb_history_default_store(), *out = NULL, *machine = NULL;
    int lean = 0;
    static const struct option lo[] = { { "store", required_argument, 0, 's' }, { "output", required_argument, 0, 'o' },
                                        { "lean", no_argument, 0, 'L' },
                                        { "machine", required_argument, 0, 'm' }, { "help", no_argument, 0, 'h' },
                                        { 0, 0, 0, 0 } };
    int c;
    optind = 0; /* glibc: full re-initialisation, so that a second call in one process parses afresh */
    opterr = 0;
    while ((c = getopt_long(argc - 1, argv + 1, "s:o:m:h", lo, NULL)) != -1) {
        switch (c) {
        case 's': url = optarg; break;
        case 'o': out = optarg; break;
        case 'm': machine = optarg; break;
        case 'L': lean = 1; break;
        case 'h': history_usage(stdout); return HB_EXIT_OK;
        default:
            fprintf(stderr, "hybench history: %s: %s\n", argv[optind] ? argv[optind] : "?",
                    c == ':' || (optopt && strchr("som", optopt)) ? "needs a value" : "unknown option");
            history_usage(stderr);
            return HB_EXIT_USAGE;
        }
    }
    int nfiles = argc - 1 - optind;
    char **files = argv + 1 + optind;
    if (!strcmp(sub, "import") && nfiles < 1) { fprintf(stderr, "hybench history import: no FILE\n"); return HB_EXIT_USAGE; }
    if (!strcmp(sub, "export") && nfiles != 1) { fprintf(stderr, "hybench history export: give one RUN_ID\n"); return HB_EXIT_USAGE; }
    if ((!strcmp(sub, "list") || !strcmp(sub, "machines") || !strcmp(sub, "where")) && nfiles) {
        fprintf(stderr, "hybench history %s: unexpected argument %s\n", sub, files[0]);
        return HB_EXIT_USAGE;
    }
    if (!strcmp(sub, "where")) {
        char name[1024];
        printf("%s %s\n", hb_store_is_postgres(url) ? "postgresql" : "sqlite", hb_store_safe_name(url, name, sizeof name));
        return fflush(stdout) ? HB_EXIT_IO : HB_EXIT_OK;
    }
    char err[1024];
    hb_store *s;
    if (hb_store_open(url, &s, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench history: %s\n", err); return HB_EXIT_IO; }
    int rc = HB_EXIT_OK;
    hb_store_set_lean(s, lean);
    if (!strcmp(sub, "import")) {
        for (int i = 0; i < nfiles && rc != HB_EXIT_IO; i++) {
            const char *b = strrchr(files[i], '/');
            int r = !strcmp(b ? b + 1 : files[i], "index.jsonl") ? import_index(s, files[i]) : import_file(s, files[i]);
            if (r == HB_EXIT_IO || (r && !rc)) rc = r;
        }
    } else if (!strcmp(sub, "export")) {
        hb_outfile of = { 0 };
        FILE *f = stdout;
        if (out) {
            if (hb_outfile_open(&of, out, err, sizeof err) != HB_OK) {
                fprintf(stderr, "hybench history: -o: %s\n", err);
                hb_store_close(s);
                return HB_EXIT_IO;
            }
            f = of.f;
        }
        hb_status st = hb_store_export(s, files[0], f, err, sizeof err);
        if (st) { fprintf(stderr, "hybench history: %s\n", err); rc = st == HB_EINVAL ? HB_EXIT_USAGE : HB_EXIT_IO; }
        if (out && hb_outfile_close(&of, st == HB_OK, err, sizeof err) != HB_OK && !rc) {
            fprintf(stderr, "hybench history: %s\n", err);
            rc = HB_EXIT_IO;
        }
        if (!out && fflush(stdout)) rc = HB_EXIT_IO;
    } else if (!strcmp(sub, "list")) {
        hb_store_run *v;
        size_t n;
        if (hb_store_runs(s, machine, &v, &n, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench history: %s\n", err); rc = HB_EXIT_IO; }
        else {
            printf("%-32s %-20s %-12s %-16s %-16s %s\n", "run_id", "date", "commit", "machine", "host", "cases");
            for (size_t i = 0; i < n; i++)
                printf("%-32s %-20s %-12.12s %-16s %-16s %zu\n", v[i].run_id, v[i].date, v[i].commit, v[i].fingerprint,
                       v[i].host, v[i].ncases);
            free(v);
        }
    } else {
        char **fps, **descs;
        size_t n;
        if (hb_store_machines(s, &fps, &descs, &n, err, sizeof err) != HB_OK) { fprintf(stderr, "hybench history: %s\n", err); rc = HB_EXIT_IO; }
        else {
            for (size_t i = 0; i < n; i++) { printf("%s  %s\n", fps[i], descs[i]); free(fps[i]); free(descs[i]); }
            free(fps);
            free(descs);
        }
    }
    hb_store_close(s);
    return rc;
}
