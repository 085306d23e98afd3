/* instr.c - a case's instructions per call, counted by callgrind's client requests (instr.h). */
#include "measure/instr.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HB_HAVE_CALLGRIND 1
#endif
#endif

#ifdef HB_HAVE_CALLGRIND
/* Read the "events:" and "summary:" lines of callgrind dump path into rec's object out (each event's
 * total / ncalls). Returns the Ir total, or -1 with the reason in err. */
static double read_dump(const char *path, int ncalls, json_t *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "callgrind dump %s: not found (is this run under valgrind --tool=callgrind --callgrind-out-file=DIR/cg.%%p with --callgrind-dir DIR?)", path); return -1; }
    char line[4096], events[4096] = "", summary[4096] = "";
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "events:", 7)) snprintf(events, sizeof events, "%s", line + 7);
        else if (!strncmp(line, "summary:", 8)) snprintf(summary, sizeof summary, "%s", line + 8);
        else if (!strncmp(line, "totals:", 7) && !*summary) snprintf(summary, sizeof summary, "%s", line + 7);
    }
    fclose(f);
    double ir = -1;
    char *se = NULL, *ss = NULL;
    char *e = strtok_r(events, " \t\n", &se), *v = strtok_r(summary, " \t\n", &ss);
    for (; e && v; e = strtok_r(NULL, " \t\n", &se), v = strtok_r(NULL, " \t\n", &ss)) {
        double total = strtod(v, NULL);
        json_object_set_new(out, e, json_real(total / ncalls));
        if (!strcmp(e, "Ir")) ir = total;
    }
    if (ir < 0) snprintf(err, errlen, "callgrind dump %s: no Ir event in its events:/summary: lines", path);
    return ir;
}
#endif

static int g_counting; /* 1 while hb_instr_count's calls run with collection on */

void hb_instr_pause(int pause)
{
#ifdef HB_HAVE_CALLGRIND
    static int paused; /* collection is toggled, so only a change of state toggles it */
    if (g_counting && !pause != !paused) {
        CALLGRIND_TOGGLE_COLLECT;
        paused = !!pause;
    }
#else
    (void)pause;
#endif
}

hb_status hb_instr_count(hb_instr_call call, void *arg, int ncalls, const char *dir, json_t *rec, char *err,
                         size_t errlen)
{
#ifndef HB_HAVE_CALLGRIND
    (void)call, (void)arg, (void)ncalls, (void)dir, (void)rec;
    snprintf(err, errlen, "--instructions: this hybench was built without <valgrind/callgrind.h> (Debian package valgrind)");
    return HB_EINVAL;
#else
    static pid_t pid;
    static int part;
    if (!RUNNING_ON_VALGRIND) {
        snprintf(err, errlen, "--instructions: not running under valgrind --tool=callgrind");
        return HB_EINVAL;
    }
    if (getpid() != pid) { pid = getpid(); part = 0; } /* callgrind numbers a forked child's parts from 1 */
    hb_status st = HB_OK;
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    g_counting = 1;
    for (int i = 0; i < ncalls && st == HB_OK; i++) st = call(arg);
    g_counting = 0;
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("hybench --instructions");
    part++;
    if (st != HB_OK) return st;
    char path[4096];
    snprintf(path, sizeof path, "%s/cg.%d.%d", dir ? dir : ".", (int)pid, part);
    json_t *ev = json_object();
    double ir = read_dump(path, ncalls, ev, err, errlen);
    if (ir < 0) { json_decref(ev); return HB_EINVAL; }
    remove(path);
    json_object_set_new(rec, "instructions", json_pack("{s:s,s:i,s:f,s:o}", "tool", "callgrind", "calls", ncalls,
                                                       "per_call", ir / ncalls, "events", ev));
    return HB_OK;
#endif
}
