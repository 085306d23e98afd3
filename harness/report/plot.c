/* plot.c - plot files (data + gnuplot script per plot), running gnuplot in parallel
 * batches, and inlining the SVGs. See report.h. */
#include "report/report.h"
#include "core/config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void hb_sb_printf(hb_sb *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        size_t room = b->cap - b->n;
        va_list ap;
        va_start(ap, fmt);
        int k = b->s ? vsnprintf(b->s + b->n, room, fmt, ap) : -2;
        va_end(ap);
        if (k >= 0 && (size_t)k < room) { b->n += (size_t)k; return; }
        size_t need = b->n + (k > 0 ? (size_t)k : 0) + 1;
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (nc < need) nc *= 2;
        char *ns = realloc(b->s, nc);
        if (!ns) { b->oom = 1; return; }
        b->s = ns;
        b->cap = nc;
        if (b->n == 0) b->s[0] = 0;
    }
}

void hb_sb_free(hb_sb *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

static void path_of(const hb_report *rp, const char *id, const char *ext, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.%s", rp->outdir, id, ext);
}

hb_plot *hb_report_plot_begin(hb_report *rp, const char *id, const char *section, const char *title,
                              int width, int height, FILE **dat)
{
    if (rp->nplots == rp->plots_cap) {
        int nc = rp->plots_cap ? rp->plots_cap * 2 : 64;
        hb_plot *np = realloc(rp->plots, (size_t)nc * sizeof *np);
        if (!np) { errno = ENOMEM; return NULL; }
        rp->plots = np;
        rp->plots_cap = nc;
    }
    hb_plot *p = &rp->plots[rp->nplots];
    memset(p, 0, sizeof *p);
    size_t j = 0;
    for (const char *s = id; *s && j + 1 < sizeof p->id; s++)
        p->id[j++] = (char)((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                            *s == '_' || *s == '-' ? *s : '_');
    p->id[j] = 0;
    /* ids must be unique: suffix a counter on collision */
    for (int i = 0, k = 2; i < rp->nplots; i++) {
        if (strcmp(rp->plots[i].id, p->id)) continue;
        char base[80];
        snprintf(base, sizeof base, "%.70s", p->id);
        snprintf(p->id, sizeof p->id, "%s_%d", base, k++);
        i = -1;
    }
    snprintf(p->section, sizeof p->section, "%s", section);
    snprintf(p->title, sizeof p->title, "%s", title);
    p->width = width;
    p->height = height;
    char path[4200];
    path_of(rp, p->id, "dat", path, sizeof path);
    *dat = fopen(path, "w");
    if (!*dat) return NULL;
    fprintf(*dat, "# hybench report data for %s.gp: %s\n", p->id, hb_report_gp_comment(title));
    rp->nplots++;
    return p;
}

hb_status hb_report_plot_script(hb_report *rp, const hb_plot *p, const char *body)
{
    char path[4200];
    path_of(rp, p->id, "gp", path, sizeof path);
    FILE *f = fopen(path, "w");
    if (!f) return HB_EDEVICE;
    fprintf(f,
            "# hybench report plot: %s\n"
            "# Data: %s.dat (blocks separated by two blank lines; `index N` selects block N).\n"
            "# Style: style.gp (colours, fonts, terminals). Edit either, then run in this directory:\n"
            "#   gnuplot %s.gp\n"
            "reset session\n"
            "load 'style.gp'\n"
            "do for [hb_fmt in hb_formats] {\n"
            "eval hb_term(hb_fmt, %d, %d)\n"
            "set output '%s.'.hb_fmt\n"
            "%s"
            "unset output\n"
            "}\n",
            hb_report_gp_comment(p->title), p->id, p->id, p->width, p->height, p->id, body);
    int bad = ferror(f);
    if (fclose(f) || bad) return HB_EDEVICE;
    return HB_OK;
}

/* Copy src to dst. 0 or -1. */
static int copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    if (!in) return -1;
    FILE *out = fopen(dst, "wb");
    if (!out) { fclose(in); return -1; }
    char buf[8192];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) { rc = -1; break; }
    fclose(in);
    if (fclose(out)) rc = -1;
    return rc;
}

/* Start `gnuplot scripts...` in outdir with stderr to logpath. Returns the pid or -1. */
static pid_t spawn_gnuplot(const char *outdir, char **scripts, int n, const char *logpath)
{
    char **argv = calloc((size_t)n + 2, sizeof *argv);
    if (!argv) return -1;
    argv[0] = (char *)"gnuplot";
    for (int i = 0; i < n; i++) argv[i + 1] = scripts[i];
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dup2(fd, 2); dup2(fd, 1); close(fd); }
        if (chdir(outdir) != 0) _exit(126);
        execvp("gnuplot", argv);
        _exit(127);
    }
    free(argv);
    return pid;
}

static int file_nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* Last non-empty line of a log file into buf (for a plot's error). */
static void log_tail(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        size_t l = strcspn(line, "\n");
        line[l] = 0;
        if (l > 0 && snprintf(buf, len, "%s", line) < 0) buf[0] = 0;
    }
    fclose(f);
}

hb_status hb_report_plots_run(hb_report *rp, int jobs)
{
    char src[4200], dst[4200];
    snprintf(src, sizeof src, "%s/style.gp", rp->tpl_dir);
    snprintf(dst, sizeof dst, "%s/style.gp", rp->outdir);
    if (copy_file(src, dst) != 0) {
        for (int i = 0; i < rp->nplots; i++)
            if (snprintf(rp->plots[i].err, sizeof rp->plots[i].err, "cannot copy %s", src) < 0) rp->plots[i].err[0] = 0;
        return HB_EDEVICE;
    }
    if (rp->svg_only) {
        FILE *f = fopen(dst, "a");
        if (f) { fputs("\n# hybench report --svg-only\nhb_formats = \"svg\"\n", f); fclose(f); }
    }
    if (rp->nplots == 0) return HB_OK;
    if (jobs < 1) jobs = 1;
    if (jobs > rp->nplots) jobs = rp->nplots;
    /* stale outputs of an earlier report in the same directory must not count as drawn */
    for (int i = 0; i < rp->nplots; i++) {
        path_of(rp, rp->plots[i].id, "svg", dst, sizeof dst);
        unlink(dst);
        path_of(rp, rp->plots[i].id, "png", dst, sizeof dst);
        unlink(dst);
        if (snprintf(dst, sizeof dst, "%s/gnuplot-%s.log", rp->outdir, rp->plots[i].id) < (int)sizeof dst) unlink(dst);
        if (snprintf(dst, sizeof dst, "%s/gnuplot-%d.log", rp->outdir, i) < (int)sizeof dst) unlink(dst); /* older reports' */
    }
    /* gnuplot's logs go to a directory of their own outside the report (issue 17: the report
     * folder holds the report); a failed plot's last lines are kept in its err, shown in the page */
    char logdir[4096];
    const char *tmpd = hb_config_get()->tmpdir;
    snprintf(logdir, sizeof logdir, "%s/hb_gnuplot_logs.XXXXXX", tmpd && *tmpd ? tmpd : "/tmp");
    if (!mkdtemp(logdir)) snprintf(logdir, sizeof logdir, "%s", "/tmp");
    char **names = calloc((size_t)rp->nplots, sizeof *names);
    pid_t *pids = calloc((size_t)jobs, sizeof *pids);
    char **batch = calloc((size_t)rp->nplots, sizeof *batch);
    if (!names || !pids || !batch) { free(names); free(pids); free(batch); return HB_ENOMEM; }
    hb_status st = HB_OK;
    for (int i = 0; i < rp->nplots; i++) {
        names[i] = malloc(strlen(rp->plots[i].id) + 4);
        if (!names[i]) { st = HB_ENOMEM; goto out; }
        sprintf(names[i], "%s.gp", rp->plots[i].id);
    }
    /* batch b takes plots b, b+jobs, b+2*jobs, ...: one gnuplot start per batch, jobs in parallel */
    int started = 0;
    for (int b = 0; b < jobs; b++) {
        int n = 0;
        for (int i = b; i < rp->nplots; i += jobs) batch[n++] = names[i];
        char logp[4200];
        snprintf(logp, sizeof logp, "%s/gnuplot-%d.log", logdir, b);
        pids[b] = spawn_gnuplot(rp->outdir, batch, n, logp);
        if (pids[b] > 0) started++;
    }
    for (int b = 0; b < jobs; b++) {
        int ws;
        if (pids[b] > 0) waitpid(pids[b], &ws, 0);
    }
    if (!started) { st = HB_EDEVICE; goto out; }
    /* a script that fails stops its batch: rerun the missing ones alone, to draw the rest and
     * to keep each failure's message */
    for (int i = 0; i < rp->nplots; i++) {
        hb_plot *p = &rp->plots[i];
        path_of(rp, p->id, "svg", dst, sizeof dst);
        if (file_nonempty(dst)) { p->ok = 1; continue; }
        char logp[4200];
        if (snprintf(logp, sizeof logp, "%s/gnuplot-%s.log", logdir, p->id) >= (int)sizeof logp) continue;
        pid_t pid = spawn_gnuplot(rp->outdir, &names[i], 1, logp);
        int ws = 0;
        if (pid > 0) waitpid(pid, &ws, 0);
        p->ok = file_nonempty(dst);
        if (!p->ok) {
            char tail[180];
            log_tail(logp, tail, sizeof tail);
            snprintf(p->err, sizeof p->err, "gnuplot %s.gp failed: %s", p->id, *tail ? tail : "no output");
        }
        unlink(logp);
    }
out:
    for (int b = 0; b < jobs; b++) {
        char logp[4200];
        snprintf(logp, sizeof logp, "%s/gnuplot-%d.log", logdir, b);
        unlink(logp);
    }
    if (strcmp(logdir, "/tmp")) rmdir(logdir);
    for (int i = 0; i < rp->nplots; i++) free(names[i]);
    free(names);
    free(pids);
    free(batch);
    return st;
}

int hb_report_svg_inline(const hb_report *rp, const hb_plot *p, int n, FILE *out)
{
    char path[4200];
    path_of(rp, p->id, "svg", path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = len > 0 ? malloc((size_t)len + 1) : NULL;
    if (!s || fread(s, 1, (size_t)len, f) != (size_t)len) { free(s); fclose(f); return -1; }
    fclose(f);
    s[len] = 0;
    char *start = strstr(s, "<svg");
    if (!start) { free(s); return -1; }
    char prefix[24];
    snprintf(prefix, sizeof prefix, "p%d_", n);
    static const char *const pats[] = { " id='", " id=\"", "href='#", "href=\"#", "url(#" };
    const char *q = start;
    while (*q) {
        /* gnuplot's <title>Gnuplot</title> becomes the plot's title (the browser's tooltip) */
        if (!strncmp(q, "<title>Gnuplot</title>", 22)) {
            fputs("<title>", out);
            hb_report_html_esc(out, p->title);
            fputs("</title>", out);
            q += 22;
            continue;
        }
        int hit = 0;
        for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
            size_t pl = strlen(pats[k]);
            if (!strncmp(q, pats[k], pl)) {
                fwrite(q, 1, pl, out);
                fputs(prefix, out);
                q += pl;
                hit = 1;
                break;
            }
        }
        if (!hit) fputc(*q++, out);
    }
    free(s);
    return ferror(out) ? -1 : 0;
}
