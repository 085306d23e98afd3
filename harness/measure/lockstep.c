/* lockstep.c - taking turns with another build's run under `hybench ab` (lockstep.h). */
#include "lockstep.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int g_state = -1; /* -1 not parsed yet, 0 off, 1 on */
static int g_rfd = -1, g_wfd = -1;

static int fd_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

static void parse(void)
{
    if (g_state >= 0) return;
    g_state = 0;
    const char *s = getenv("HB_LOCKSTEP");
    if (!s || !*s) return;
    int r = -1, w = -1;
    char tail;
    if (sscanf(s, "%d,%d%c", &r, &w, &tail) != 2 || r < 0 || w < 0 || !fd_open(r) || !fd_open(w)) {
        fprintf(stderr, "hybench: HB_LOCKSTEP=\"%s\" is not two open file descriptors \"RFD,WFD\"; running alone\n", s);
        return;
    }
    g_rfd = r;
    g_wfd = w;
    g_state = 1;
}

/* Waits for the token and returns its byte; a closed or failed pipe turns lockstep off (the run
 * goes on alone) and returns 0. */
static char wait_token(void)
{
    char c;
    for (;;) {
        ssize_t n = read(g_rfd, &c, 1);
        if (n == 1) return c;
        if (n < 0 && errno == EINTR) continue;
        g_state = 0;
        return 0;
    }
}

void hb_lockstep_begin(void)
{
    parse();
    if (g_state != 1) return;
    signal(SIGPIPE, SIG_IGN); /* a write to the pipe of a controller that went away: EPIPE, not death */
    wait_token();
}

/* Hands the token back with byte m and returns the byte it comes back with (0: lockstep off). */
static char hand_back(char m)
{
    parse();
    if (g_state != 1) return 0;
    for (;;) {
        ssize_t n = write(g_wfd, &m, 1);
        if (n == 1) break;
        if (n < 0 && errno == EINTR) continue;
        g_state = 0; /* the controller is gone (EPIPE): go on alone */
        return 0;
    }
    return wait_token();
}

void hb_lockstep_yield(void) { (void)hand_back('y'); }

int hb_lockstep_mark(char m)
{
    char c = hand_back(m);
    return c ? c : HB_LOCKSTEP_GO;
}

int hb_lockstep_on(void)
{
    parse();
    return g_state == 1;
}
