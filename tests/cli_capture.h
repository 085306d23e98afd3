/*
 * cli_capture.h - the tests' way to run a hybench subcommand in process (hb_cmd_*, cli/commands.h)
 * with its stderr captured and its stdout sent to /dev/null (or kept). Header-only; each test that
 * includes it gets its own copy. The Makefile passes -Itests to every test.
 */
#ifndef HB_TEST_CLI_CAPTURE_H
#define HB_TEST_CLI_CAPTURE_H
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*hb_test_cmd_fn)(int, char **);

/* Run cmd(argc, argv); its stderr text (at most len-1 bytes, NUL-terminated) goes to buf; stdout goes
 * to /dev/null unless keep_stdout. Returns cmd's exit status; -1 when the capture cannot be set up. */
static inline int hb_test_run_cmd(hb_test_cmd_fn cmd, int argc, char **argv, char *buf, size_t len, int keep_stdout)
{
    fflush(stdout);
    fflush(stderr);
    int save2 = dup(2), save1 = dup(1);
    FILE *t = tmpfile();
    int nul = open("/dev/null", O_WRONLY);
    if (!t || nul < 0 || save1 < 0 || save2 < 0) return -1;
    dup2(fileno(t), 2);
    if (!keep_stdout) dup2(nul, 1);
    int rc = cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    clearerr(stdout);
    dup2(save2, 2);
    dup2(save1, 1);
    close(save2);
    close(save1);
    close(nul);
    rewind(t);
    size_t n = fread(buf, 1, len - 1, t);
    buf[n] = 0;
    fclose(t);
    return rc;
}
#endif
