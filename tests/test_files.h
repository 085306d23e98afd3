/*
 * test_files.h - a whole file read into memory, for the tests that check what a command wrote.
 * Header-only; the Makefile passes -Itests to every test.
 */
#ifndef HB_TEST_FILES_H
#define HB_TEST_FILES_H
#include <stdio.h>
#include <stdlib.h>

/* The bytes of path, NUL-terminated, in a new malloc'd buffer the caller frees; NULL when the file
 * cannot be opened or read whole, or out of memory. */
static inline char *hb_test_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}
#endif
