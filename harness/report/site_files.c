/* site_files.c - the files of `hybench publish`'s site (report/site.h): its folders, the script
 * library and style copied into lib/, the nights' reports copied or linked into runs/, the .js data. */
#include "report/site.h"
#include "analysis/baseline.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Copy file src to dst (replaced through dst.tmp and a rename). 0, or -1 with errno; *which says
 * whether reading (0) or writing (1) failed. */
static int copy_file(const char *src, const char *dst, int *which)
{
    char tmp[PATH_MAX + 8];
    *which = 0;
    FILE *in = fopen(src, "rb");
    if (!in) return -1;
    *which = 1;
    if (snprintf(tmp, sizeof tmp, "%s.tmp", dst) >= (int)sizeof tmp) { fclose(in); errno = ENAMETOOLONG; return -1; }
    FILE *out = fopen(tmp, "wb");
    if (!out) { int e = errno; fclose(in); errno = e; return -1; }
    char buf[1 << 16];
    size_t k;
    int bad = 0;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, k, out) != k) { bad = 1; break; }
    int e = errno;
    if (ferror(in)) { bad = 1; *which = 0; }
    fclose(in);
    if (fclose(out) && !bad) { bad = 1; e = errno; }
    if (!bad && rename(tmp, dst)) { bad = 1; e = errno; }
    if (bad) { unlink(tmp); errno = e ? e : EIO; return -1; }
    return 0;
}

int hb_site_prepare(const hb_site_opts *o, char *err, size_t errlen)
{
    char p[PATH_MAX], q[PATH_MAX];
    static const char *const sub[] = { "", "/lib", "/runs", "/m" };
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        snprintf(p, sizeof p, "%s%s", o->out, sub[i]);
        struct stat st;
        if (hb_mkdirs(p, 1) || stat(p, &st) || !S_ISDIR(st.st_mode) || access(p, W_OK)) {
            snprintf(err, errlen, "--out %s: cannot create or write the folder %s: %s", o->out, p, strerror(errno ? errno : EACCES));
            return HB_EXIT_IO;
        }
    }
    static const char *const lib[] = { "dygraph.min.js", "dygraph.css" }, *const tpl[] = { "site.js", "site.css" };
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < 2; i++) {
            const char *name = t ? tpl[i] : lib[i];
            int which;
            snprintf(p, sizeof p, "%s/%s", t ? o->tpl_dir : o->lib_dir, name);
            snprintf(q, sizeof q, "%s/lib/%s", o->out, name);
            if (!copy_file(p, q, &which)) continue;
            if (which == 1) {
                snprintf(err, errlen, "cannot write %s: %s", q, strerror(errno));
                return HB_EXIT_IO;
            }
            if (!t) {
                snprintf(err, errlen, "%s: %s; the site's graphs need the Debian package %s (apt-get install %s, or "
                                      "tools/install_deps.sh)", p, strerror(errno), HB_SITE_DYGRAPHS_PKG, HB_SITE_DYGRAPHS_PKG);
                return HB_EXIT_NO_PACKAGE;
            }
            snprintf(err, errlen, "%s: %s (the site's templates: templates/ of the source tree, or HB_REPORT_TEMPLATES)", p,
                     strerror(errno));
            return HB_EXIT_USAGE;
        }
    }
    return HB_EXIT_OK;
}

/* Copy folder src into dst (created), recursively; symbolic links and special files are skipped.
 * 0, or -1 with the failing path in err. */
static int copy_tree(const char *src, const char *dst, char *err, size_t errlen)
{
    if (hb_mkdirs(dst, 1)) { snprintf(err, errlen, "cannot create %s: %s", dst, strerror(errno)); return -1; }
    DIR *d = opendir(src);
    if (!d) { snprintf(err, errlen, "cannot read %s: %s", src, strerror(errno)); return -1; }
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char s[PATH_MAX], t[PATH_MAX];
        if (snprintf(s, sizeof s, "%s/%s", src, e->d_name) >= (int)sizeof s ||
            snprintf(t, sizeof t, "%s/%s", dst, e->d_name) >= (int)sizeof t)
            continue;
        struct stat st;
        if (lstat(s, &st)) continue;
        if (S_ISDIR(st.st_mode)) rc = copy_tree(s, t, err, errlen);
        else if (S_ISREG(st.st_mode)) {
            int which;
            if (copy_file(s, t, &which)) {
                snprintf(err, errlen, "cannot %s %s: %s", which ? "write" : "read", which ? t : s, strerror(errno));
                rc = -1;
            }
        }
    }
    closedir(d);
    return rc;
}

int hb_site_add_report(const hb_site_opts *o, const char *run_id, char *err, size_t errlen)
{
    if (!o->reports || !hb_site_run_id_ok(run_id)) return 0;
    char src[PATH_MAX], dst[PATH_MAX], si[PATH_MAX + 16], di[PATH_MAX + 16];
    snprintf(src, sizeof src, "%s/%s", o->reports, run_id);
    snprintf(dst, sizeof dst, "%s/runs/%s", o->out, run_id);
    snprintf(si, sizeof si, "%s/index.html", src);
    snprintf(di, sizeof di, "%s/index.html", dst);
    struct stat ss, ds;
    if (stat(si, &ss) || !S_ISREG(ss.st_mode)) return 0;
    if (!stat(di, &ds) && (o->link_reports || ds.st_mtim.tv_sec > ss.st_mtim.tv_sec ||
                           (ds.st_mtim.tv_sec == ss.st_mtim.tv_sec && ds.st_mtim.tv_nsec >= ss.st_mtim.tv_nsec)))
        return 1;
    if (o->link_reports) {
        char abs[PATH_MAX];
        if (!realpath(src, abs)) { snprintf(err, errlen, "cannot resolve %s: %s", src, strerror(errno)); return -1; }
        unlink(dst); /* a link left by an earlier run that points nowhere now */
        if (symlink(abs, dst)) { snprintf(err, errlen, "cannot link %s to %s: %s", dst, abs, strerror(errno)); return -1; }
        return 1;
    }
    return copy_tree(src, dst, err, errlen) ? -1 : 1;
}

int hb_site_write_js(const char *path, const char *name, json_t *j)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "var %s = ", name);
    int bad = json_dumpf(j, f, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(7)) != 0;
    fputs(";\n", f);
    int e = errno;
    if (ferror(f)) bad = 1;
    if (fclose(f)) { bad = 1; e = errno; }
    if (bad) { errno = e ? e : EIO; return -1; }
    return 0;
}
