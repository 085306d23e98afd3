/*
 * fuzz_util.h - shared by the libFuzzer targets in tests/fuzz/ (docs/fuzzing.md): the parsers under
 * test read files by path, so each input is written to one scratch file per process (in a private
 * directory under $TMPDIR, /dev/shm when writable: no disk I/O per execution) and parsed from there.
 */
#ifndef HB_FUZZ_UTIL_H
#define HB_FUZZ_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[256];

/* The scratch directory, created on first use and removed at exit (with what is in it) unless
 * HB_FUZZ_KEEP is set (then its path is printed: to look at what a writer made of an input). */
static void fz_cleanup(void)
{
    char cmd[300];
    if (getenv("HB_FUZZ_KEEP")) { fprintf(stderr, "hb fuzz: kept %s\n", fz_dir); return; }
    if (fz_dir[0] && snprintf(cmd, sizeof cmd, "rm -rf '%s'", fz_dir) < (int)sizeof cmd && system(cmd) != 0) { /* best effort */ }
}

static const char *fz_tmpdir(void)
{
    if (fz_dir[0]) return fz_dir;
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fz_dir, sizeof fz_dir, "%s/hb_fuzz.XXXXXX", base);
    if (!mkdtemp(fz_dir)) { perror("hb fuzz: mkdtemp"); abort(); }
    atexit(fz_cleanup);
    return fz_dir;
}

/* Write data[0..size) to <scratch>/<name> and return that path (static buffer). */
static const char *fz_write_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fz_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); abort(); }
    if (size && fwrite(data, 1, size, f) != size) { perror(path); abort(); }
    if (fclose(f) != 0) { perror(path); abort(); }
    return path;
}
#endif
