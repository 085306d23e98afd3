/*
 * rendezvous.h - the per-case agreement of the ranks of a multi-process launch (docs/collectives.md,
 * "A failure never hangs the others"), through small files in one directory that every rank sees
 * (a local directory on one machine, a shared filesystem across machines). Header-only (static
 * inline) so that the CUDA plugin, which calls no harness function, and the tests run the same code.
 *
 * Why files and not NCCL: a rank that skips a case, crashed in the case before or is still measuring
 * its ceilings makes no NCCL call, and NCCL has no timeout, so an agreement made over the
 * communicator would pair one rank's call with another call of the other rank (the mismatch that
 * gave `all_reduce n=2 ranks=2` a relative error of 0.5 and then hung). The files need no
 * communicator, time out, and see a rank's process die.
 *
 * Protocol for case number `seq` (the case's position in the run, the same on every rank):
 *   1. rank r writes <dir>/c<seq>.r<r> (atomically: a temporary file renamed) holding its verdict
 *      (1: can run, 0: skips, with the reason), the token of the communicator it holds (the seq at
 *      which that communicator was made; 0: none) and its process id and host name; once per
 *      process it also writes <dir>/alive.r<r> with the launch process's id (HB_RANK_PID, which the
 *      run sets, else its own).
 *   2. it waits until the decision file <dir>/c<seq>.d exists or every rank's file does. The first
 *      rank that sees every file decides: some rank skips -> SKIP ("rank R: reason", the lowest such
 *      rank); every rank holds the same non-zero token -> RUN on that communicator; else REBUILD
 *      (every rank drops its communicator and makes a new one, token seq). A rank whose file is
 *      missing when the timeout passes, or whose launch process has exited (same host: kill(pid, 0)
 *      says ESRCH), makes the waiter decide ABANDON ("rank R did not reach this case ..."). The
 *      decision is written once: a temporary file linked to c<seq>.d (link(2) fails when the name
 *      exists, so the first decision wins and every rank reads that one, a late rank too).
 * Every rank therefore leaves the rendezvous with the same verdict for the case.
 */
#ifndef HB_RENDEZVOUS_H
#define HB_RENDEZVOUS_H
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef enum { HB_RDV_RUN = 0, HB_RDV_REBUILD, HB_RDV_SKIP, HB_RDV_ABANDON, HB_RDV_ERROR } hb_rdv_verdict;

/* The decision of one case: verdict, and for SKIP / ABANDON / ERROR the reason naming the rank. */
typedef struct hb_rdv_result {
    hb_rdv_verdict verdict;
    char reason[400];
} hb_rdv_result;

static inline double hb_rdv_now_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The rendezvous directory of this launch: HB_RDV_DIR, else HB_NCCL_ID_FILE with ".rdv" appended;
 * created if missing (mode 0700). Writes it to buf (len bytes). Returns 0, or -1 when neither
 * variable is set or the directory cannot be made (then ranks cannot agree per case: the caller
 * keeps its one communicator, see docs/collectives.md). */
static inline int hb_rdv_dir(char *buf, size_t len)
{
    const char *d = getenv("HB_RDV_DIR"), *f = getenv("HB_NCCL_ID_FILE");
    if (d && *d) snprintf(buf, len, "%s", d);
    else if (f && *f) snprintf(buf, len, "%s.rdv", f);
    else return -1;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
    return 0;
}

/* Write text to a temporary file beside path (its name into tmp, len bytes). 0 or -1 (nothing left). */
static inline int hb_rdv_write_tmp_(const char *path, const char *text, char *tmp, size_t len)
{
    snprintf(tmp, len, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    if (bad) { unlink(tmp); return -1; }
    return 0;
}

/* Write text to path atomically (a temporary file renamed over it). 0 or -1. */
static inline int hb_rdv_put_(const char *path, const char *text)
{
    char tmp[1200];
    if (hb_rdv_write_tmp_(path, text, tmp, sizeof tmp) != 0) return -1;
    if (rename(tmp, path) != 0) { unlink(tmp); return -1; }
    return 0;
}

/* Write text to path only if path does not exist yet (a temporary file linked to it). Returns 1 when
 * this call created it, 0 when it existed, -1 on error. */
static inline int hb_rdv_put_once_(const char *path, const char *text)
{
    char tmp[1200];
    if (hb_rdv_write_tmp_(path, text, tmp, sizeof tmp) != 0) return -1;
    int r = link(tmp, path);
    int e = errno;
    unlink(tmp);
    if (r == 0) return 1;
    return e == EEXIST ? 0 : -1;
}

/* Read at most len-1 bytes of path into buf. 0, or -1 when it does not exist (yet). */
static inline int hb_rdv_get_(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t k = fread(buf, 1, len - 1, f);
    buf[k] = 0;
    fclose(f);
    return 0;
}

/* Parse a decision file's text ("<verdict number>\n<reason>") into res. */
static inline void hb_rdv_parse_decision_(const char *text, hb_rdv_result *res)
{
    int v = atoi(text);
    res->verdict = (v >= HB_RDV_RUN && v <= HB_RDV_ERROR) ? (hb_rdv_verdict)v : HB_RDV_ERROR;
    const char *nl = strchr(text, '\n');
    snprintf(res->reason, sizeof res->reason, "%s", nl ? nl + 1 : "");
    size_t l = strlen(res->reason);
    while (l && res->reason[l - 1] == '\n') res->reason[--l] = 0;
}

/* 1 when the launch process of a missing rank is known to have exited: its alive file names this
 * host and a pid that no longer exists. */
static inline int hb_rdv_rank_gone_(const char *dir, int r, const char *myhost)
{
    char path[1100], text[300], host[128] = "";
    int pid = 0;
    snprintf(path, sizeof path, "%s/alive.r%d", dir, r);
    if (hb_rdv_get_(path, text, sizeof text) != 0 || sscanf(text, "%d %127s", &pid, host) != 2 || pid <= 0) return 0;
    if (strcmp(host, myhost)) return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The agreement for case seq among `ranks` ranks (see the protocol above). rank: this process's
 * rank; ok: 1 when this rank can run the case, 0 when it skips it (why: its reason, may be NULL);
 * token: the communicator this rank holds (0: none); timeout_s: how long to wait for the other
 * ranks (seconds, > 0). Returns 0 with *res filled, or -1 when the directory cannot be written or
 * read (res->verdict HB_RDV_ERROR, reason says which file). Allocates nothing. */
static inline int hb_rdv_case(const char *dir, long long seq, int rank, int ranks, int ok, const char *why, long long token,
                              double timeout_s, hb_rdv_result *res)
{
    char path[1100], text[700], host[128] = "?";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++)
        if (*p == ' ' || *p == '\n') *p = '_';
    res->verdict = HB_RDV_ERROR;
    res->reason[0] = 0;
    /* once per process: the launch process that stands for this rank */
    static int alive_written;
    if (!alive_written) {
        const char *rp = getenv("HB_RANK_PID");
        int pid = rp && atoi(rp) > 0 ? atoi(rp) : (int)getpid();
        snprintf(path, sizeof path, "%s/alive.r%d", dir, rank);
        snprintf(text, sizeof text, "%d %s\n", pid, host);
        if (hb_rdv_put_(path, text) == 0) alive_written = 1;
    }
    char reason[300];
    snprintf(reason, sizeof reason, "%s", why ? why : "");
    for (char *p = reason; *p; p++)
        if (*p == '\n') *p = ' ';
    snprintf(path, sizeof path, "%s/c%lld.r%d", dir, seq, rank);
    snprintf(text, sizeof text, "%d %lld %d %s\n%s\n", ok ? 1 : 0, token, (int)getpid(), host, reason);
    if (hb_rdv_put_(path, text) != 0) {
        snprintf(res->reason, sizeof res->reason, "cannot write %.300s: %s", path, strerror(errno));
        return -1;
    }
    char dpath[1100];
    snprintf(dpath, sizeof dpath, "%s/c%lld.d", dir, seq);
    double t0 = hb_rdv_now_();
    useconds_t nap = 200;
    for (;;) {
        if (hb_rdv_get_(dpath, text, sizeof text) == 0) {
            hb_rdv_parse_decision_(text, res);
            return 0;
        }
        int present = 0, first_skip = -1, missing = -1, gone = -1, same = 1;
        long long tok0 = -1;
        char skip_why[300] = "";
        for (int r = 0; r < ranks; r++) {
            char rp[1100], rt[700];
            snprintf(rp, sizeof rp, "%s/c%lld.r%d", dir, seq, r);
            if (hb_rdv_get_(rp, rt, sizeof rt) != 0) {
                if (missing < 0) missing = r;
                if (gone < 0 && hb_rdv_rank_gone_(dir, r, host)) gone = r;
                continue;
            }
            int rok = 0;
            long long rtok = 0;
            if (sscanf(rt, "%d %lld", &rok, &rtok) != 2) { if (missing < 0) missing = r; continue; }
            present++;
            if (!rok && first_skip < 0) {
                first_skip = r;
                const char *nl = strchr(rt, '\n');
                snprintf(skip_why, sizeof skip_why, "%s", nl ? nl + 1 : "");
                size_t l = strlen(skip_why);
                while (l && skip_why[l - 1] == '\n') skip_why[--l] = 0;
            }
            if (tok0 < 0) tok0 = rtok;
            else if (rtok != tok0) same = 0;
        }
        char dec[700] = "";
        double waited = hb_rdv_now_() - t0;
        if (present == ranks) {
            if (first_skip >= 0) snprintf(dec, sizeof dec, "%d\nrank %d of %d skips it: %s\n", HB_RDV_SKIP, first_skip, ranks, skip_why);
            else if (same && tok0 > 0) snprintf(dec, sizeof dec, "%d\n\n", HB_RDV_RUN);
            else snprintf(dec, sizeof dec, "%d\n\n", HB_RDV_REBUILD);
        } else if (gone >= 0) {
            snprintf(dec, sizeof dec, "%d\nrank %d of %d did not reach this case: its process has exited\n", HB_RDV_ABANDON, gone, ranks);
        } else if (waited > timeout_s) {
            snprintf(dec, sizeof dec, "%d\nrank %d of %d did not reach this case within %.0f s (crashed, hung or still busy)\n",
                     HB_RDV_ABANDON, missing, ranks, timeout_s);
        }
        if (dec[0]) {
            if (hb_rdv_put_once_(dpath, dec) < 0) {
                snprintf(res->reason, sizeof res->reason, "cannot write %.300s: %s", dpath, strerror(errno));
                return -1;
            }
            continue; /* read back the decision that won */
        }
        usleep(nap);
        if (nap < 20000) nap *= 2;
    }
}

/* The communicator id of the communicator made at case seq (REBUILD): rank 0 writes its text (a
 * hex string, at most len-1 bytes) to <dir>/id.<seq>; every other rank waits for it up to
 * timeout_s seconds and reads it into text. Returns 0, or -1 (timed out, or cannot write) with the
 * reason in why (whylen bytes). */
static inline int hb_rdv_id(const char *dir, long long seq, int rank, char *text, size_t len, double timeout_s, char *why,
                            size_t whylen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/id.%lld", dir, seq);
    if (rank == 0) {
        if (hb_rdv_put_(path, text) != 0) { snprintf(why, whylen, "cannot write %.300s: %s", path, strerror(errno)); return -1; }
        return 0;
    }
    double t0 = hb_rdv_now_();
    while (hb_rdv_now_() - t0 < timeout_s) {
        if (hb_rdv_get_(path, text, len) == 0 && text[0]) return 0;
        usleep(2000);
    }
    snprintf(why, whylen, "rank %d waited %.0f s for rank 0's communicator id %.300s", rank, timeout_s, path);
    return -1;
}
#endif
