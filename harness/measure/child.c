/*
 * child.c - the child process of one backend type (runner.c forks it, or re-executes hybench for it
 * with HB_CHILD, see wait_policy_for): it opens the type's instances, measures their ceilings (or
 * takes them from --ceilings-from or from the host ceilings measured earlier in the run), then
 * measures its cases in mode groups (sample.c, chain.c) and appends one record per case to the
 * results file (put_record: O_APPEND, one write per record). It tells the parent on a pipe what it
 * does, one line each: "T" an instance and its case count, "N" why it has none, "U" the type is
 * unavailable, "C" ceilings, "K" the host ceilings measured, "B"/"G" a case (group) begins, "E" a
 * case ended with its status, "W" a write failed; the parent (runner.c) records a case the child
 * dies in and starts a new child after it.
 */
#include "measure/internal.h"
#include "measure/lockstep.h"
#include "measure/registry.h"
#include "cpu/cpu.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Append one record (consumed) to the results file fd. In pass 1 it is written as it is; in a later
 * pass its type becomes "pass_case" / "pass_backend" with "pass": k, so that readers of the file,
 * which ignore unknown types, keep reading the passes merged so far while the pass runs; the pass's
 * merge (merge.c) turns them back into case and backend records. A failed write is cut back to the
 * file's previous end (no partial line is left) and returns the errno (EIO when the write gave none);
 * 0 when written. */
int put_record(int fd, json_t *rec, int pass)
{
    if (!rec) return ENOMEM;
    if (pass > 1) { /* read into its struct, type and pass set, written back from it (results/record.h) */
        const char *type = json_string_value(json_object_get(rec, "type"));
        json_t *out = NULL;
        hb_status st = HB_OK;
        if (type && !strcmp(type, "case")) {
            hb_rec_case c;
            if ((st = hb_rec_case_parse(rec, &c)) == HB_OK) {
                if (!(st = HB_REC_SET(hb_rec_case, &c, type, "pass_case")) && !(st = HB_REC_SET(hb_rec_case, &c, pass, pass)))
                    out = hb_rec_case_json(&c);
                hb_rec_case_free(&c);
            }
        } else if (type && !strcmp(type, "backend")) {
            hb_rec_backend b;
            if ((st = hb_rec_backend_parse(rec, &b)) == HB_OK) {
                if (!(st = HB_REC_SET(hb_rec_backend, &b, type, "pass_backend")) && !(st = HB_REC_SET(hb_rec_backend, &b, pass, pass)))
                    out = hb_rec_backend_json(&b);
                hb_rec_backend_free(&b);
            }
        } else out = json_incref(rec);
        json_decref(rec);
        if (!(rec = out)) return ENOMEM;
    }
    off_t end = lseek(fd, 0, SEEK_END);
    errno = 0;
    if (hb_record_write(fd, rec) == HB_OK) return 0;
    int e = errno ? errno : EIO;
    if (end >= 0 && ftruncate(fd, end) < 0) { /* not a regular file: nothing to cut back */ }
    return e;
}

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0 && write(fd, buf, (size_t)n) < 0) { /* parent gone: nothing to do */ }
}

static int instance_selected(const hb_options *o, const hb_instance *inst)
{
    if (!o->backends) return 1;
    return hb_list_has(o->backends, inst->name) || hb_list_has(o->backends, inst->ops->type);
}

static int case_applies(const hb_instance *inst, const hb_case_list *l, size_t j) { return hb_case_refusal(inst, l, j) == NULL; }

/* A backend record's "ceilings" array ({name, value, unit, how} per ceiling) from cl; new reference. */
static json_t *ceilings_json(const hb_ceiling_set *cl)
{
    json_t *a = json_array();
    for (int k = 0; k < cl->n; k++)
        json_array_append_new(a, json_pack("{s:s,s:f,s:s,s:s}", "name", cl->v[k].name, "value", cl->v[k].value, "unit",
                                           cl->v[k].unit, "how", cl->v[k].how));
    return a;
}

/* The reverse, for ceilings measured earlier (another run's file, or another process of this run):
 * each entry with a name and a numeric value into cl (at most HB_MAX_CEILINGS), its `how` written as
 * pre + how + post so that the record says where the figure came from. Returns cl->n. */
static int ceilings_parse(json_t *a, const char *pre, const char *post, hb_ceiling_set *cl)
{
    cl->n = 0;
    size_t k;
    json_t *x;
    json_array_foreach(a, k, x) {
        if (cl->n >= HB_MAX_CEILINGS) break;
        const char *nm = json_string_value(json_object_get(x, "name")), *u = json_string_value(json_object_get(x, "unit"));
        const char *how = json_string_value(json_object_get(x, "how"));
        if (!nm || !json_is_number(json_object_get(x, "value"))) continue;
        hb_ceiling *o = &cl->v[cl->n++];
        snprintf(o->name, sizeof o->name, "%s", nm);
        snprintf(o->unit, sizeof o->unit, "%s", u ? u : "");
        snprintf(o->how, sizeof o->how, "%s%.62s%s", pre, how ? how : "", post);
        o->value = json_number_value(json_object_get(x, "value"));
    }
    return cl->n;
}

/* --ceilings-from FILE: the ceilings of instance `name` from FILE's backend record (a results file of
 * an earlier run on this machine), each one's "how" prefixed "reused: ". 1 when that record has
 * ceilings, else 0 (they are then measured; a file that cannot be read says so on stderr). Measuring
 * the STREAM and peak-FLOP ceilings is most of a short run's set-up (12 s of 13 s for 6 cpu cases on
 * the 2-vCPU VM under load), which `hybench ab` pays once instead of once per round. */
static int ceilings_from_file(const char *path, const char *name, hb_ceiling_set *cl)
{
    hb_run r = {0};
    char err[512];
    const char *const keep[] = {"type", NULL};
    hb_load_opts lo = {.keep = keep};
    if (hb_run_load_opts(path, &lo, &r, err, sizeof err) != HB_OK) {
        fprintf(stderr, "hybench: --ceilings-from: %s (measuring them instead)\n", err);
        return 0;
    }
    int found = 0;
    for (size_t i = 0; i < json_array_size(r.backends) && !found; i++) {
        json_t *b = json_array_get(r.backends, i), *ca = json_object_get(b, "ceilings");
        if (!hb_rec_str(b, "backend") || strcmp(hb_rec_str(b, "backend"), name) || !json_array_size(ca)) continue;
        found = ceilings_parse(ca, "reused: ", "", cl) > 0;
    }
    hb_run_free(&r);
    return found;
}

/* OpenMP wait policy per backend process. libgomp spins 300,000 rounds after each parallel region
 * when OMP_WAIT_POLICY is unset (libgomp manual, GOMP_SPINCOUNT). For cpu-ref and cpu that is right:
 * their kernels and OpenBLAS share the one OpenMP pool, and sleeping threads would pay a wake-up per
 * region (hundreds of microseconds on a 16-vCPU VM, measured in the conversion of small tensors). For
 * opencl on a CPU device (PoCL) the conversion's spinning threads hold the cores PoCL's own threads
 * compute on, so the compute after `convert` read up to 1.9x slower than in `f32` (2-vCPU VM, bmm
 * 16x128^3). That process alone takes libgomp's throttled count, 1000; libgomp reads it when it
 * loads, so the forked child re-executes hybench with the same arguments and HB_CHILD naming its
 * part (the parent never touched OpenMP or a device, so the case list is rebuilt identically from
 * the same files). A wait policy set by the user (OMP_WAIT_POLICY or GOMP_SPINCOUNT) is left alone. */
static const char *wait_policy_for(const hb_backend_entry *e)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return NULL;
    return strcmp(e->type, "opencl") == 0 ? "1000" : NULL;
}

void child_reexec(const child_args *a)
{
    const char *spin = wait_policy_for(a->entry);
    if (!spin || !a->o->argv || a->o->argc < 1) return;
    char **av = calloc((size_t)a->o->argc + 2, sizeof *av);
    if (!av) return;
    av[0] = (char *)"hybench";
    for (int i = 0; i < a->o->argc; i++) av[i + 1] = a->o->argv[i];
    char spec[160];
    snprintf(spec, sizeof spec, "%s %d %d %d %d %d %d %d %d", a->entry->type, a->fd, a->pipe_w, a->start_inst, a->start_case,
             a->write_backend_records, a->pass, a->nogroup_until, a->ctl_r);
    int fl0 = fcntl(a->fd, F_GETFD), fl1 = fcntl(a->pipe_w, F_GETFD), fl2 = a->ctl_r >= 0 ? fcntl(a->ctl_r, F_GETFD) : 0;
    if (fl0 < 0 || fl1 < 0 || fl2 < 0 || fcntl(a->fd, F_SETFD, fl0 & ~FD_CLOEXEC) < 0 || fcntl(a->pipe_w, F_SETFD, fl1 & ~FD_CLOEXEC) < 0 ||
        (a->ctl_r >= 0 && fcntl(a->ctl_r, F_SETFD, fl2 & ~FD_CLOEXEC) < 0)) {
        free(av);
        return;
    }
    setenv("GOMP_SPINCOUNT", spin, 1);
    setenv("HB_CHILD", spec, 1);
    execv("/proc/self/exe", av);
    /* no /proc: measure in this process with the inherited policy (meta.threads shows the environment) */
    unsetenv("GOMP_SPINCOUNT");
    unsetenv("HB_CHILD");
    free(av);
}

int hb_measure_child_from_env(const hb_options *o, const hb_case_list *cases)
{
    const char *spec = getenv("HB_CHILD");
    if (!spec) return -1;
    char type[64];
    child_args a = {.o = o, .cases = cases, .ctl_r = -1};
    if (sscanf(spec, "%63s %d %d %d %d %d %d %d %d", type, &a.fd, &a.pipe_w, &a.start_inst, &a.start_case,
               &a.write_backend_records, &a.pass, &a.nogroup_until, &a.ctl_r) < 8 || !(a.entry = hb_backend_find(type))) {
        fprintf(stderr, "hybench: malformed HB_CHILD \"%s\"\n", spec);
        return HB_EXIT_USAGE;
    }
    unsetenv("HB_CHILD");
    fcntl(a.fd, F_SETFD, FD_CLOEXEC);
    fcntl(a.pipe_w, F_SETFD, FD_CLOEXEC);
    if (a.ctl_r >= 0) fcntl(a.ctl_r, F_SETFD, FD_CLOEXEC);
    return child_main(&a);
}

/* Case j's mode group into grp[0..n) (returns n >= 1, grp[0] = j): the cases after j of the same
 * workload item, dtype and route that this instance runs, in other modes, up to HB_MAX_GROUP;
 * cases it does not run are passed over; a chain case groups only with chain cases. Alone: collectives, cases under --no-interleave or before
 * nogroup_until (the retry after a group's process died), and cases a fault injection names. */
static int injected(const hb_instance *inst, const hb_case *c)
{
    const char *v[2] = {hb_config_get()->inject_crash, hb_config_get()->inject_kill};
    if (!(v[0] && *v[0]) && !(v[1] && *v[1])) return 0;
    char key[512];
    hb_case_key(c, inst->name, key, sizeof key);
    for (int i = 0; i < 2; i++)
        if (v[i] && *v[i] && strstr(key, v[i])) return 1;
    return 0;
}

/* Fault injection for the test suite, inside the case c (alone: group_of keeps such cases out of
 * groups): HB_INJECT_CRASH=TEXT kills the child with SIGSEGV in every case whose key contains TEXT, to
 * check that the run records `crashed` and goes on; HB_INJECT_KILL=TEXT the same with SIGKILL, as a
 * kill from outside (kill -9) would end it. A plain run's case and a served round's (serve_group). */
static void inject_fault(const hb_instance *inst, const hb_case *c)
{
    const char *v[2] = {hb_config_get()->inject_crash, hb_config_get()->inject_kill};
    const int sig[2] = {SIGSEGV, SIGKILL};
    char key[512];
    for (int k = 0; k < 2; k++)
        if (v[k] && *v[k] && strstr(hb_case_key(c, inst->name, key, sizeof key), v[k])) raise(sig[k]);
}

/* Collectives over more than one rank stay alone: every rank must make the same calls in the same
 * order and stop at the same sample (coll_vote), which a group's shared stopping does not agree
 * across ranks. One rank has no one to agree with: its modes are measured together like any op's
 * (measured alone, all_reduce 16Mi f16 on the mapped route read 1.42x slower in convert than in f32
 * in one H100 run, its 5 samples a mode taken seconds apart). */
static int coll_alone(const hb_case *c)
{
    return (hb_op_is_collective(c->op) && c->shape.ranks != 1) || (c->op == HB_OP_CHAIN && c->shape.ranks > 1);
}

static int group_of(const hb_instance *inst, const child_args *a, size_t j, size_t *grp)
{
    const hb_case_list *l = a->cases;
    const hb_case *c0 = &l->v[j];
    int n = 0;
    grp[n++] = j;
    if (a->o->no_interleave || (long)j <= (long)a->nogroup_until || coll_alone(c0) || injected(inst, c0))
        return n;
    for (size_t k = j + 1; k < l->n && n < HB_MAX_GROUP; k++) {
        const hb_case *c = &l->v[k];
        if (l->item[k] != l->item[j] || c->dtype != c0->dtype) break;
        if (!case_applies(inst, l, k)) continue;
        if (!inst->host_memory && c->route != c0->route) break;
        /* a chain's modes form a group of their own (chain.c measures them in turns) */
        if ((c->op == HB_OP_CHAIN) != (c0->op == HB_OP_CHAIN) || coll_alone(c) || injected(inst, c)) break;
        grp[n++] = k;
    }
    return n;
}

/* Host ceilings measured once, not once per host-memory backend and pass (issue 17: --quick measured
 * the same host's STREAM and sgemm ceilings for cpu-ref and for cpu in each of its 3 passes). Every
 * host-memory child that measures them sends them to the parent ("K <json array>"); a later
 * host-memory child without a ceilings hook of its own (cpu-ref, whose ceilings are the host's)
 * gets the latest from the parent (child_args.host_ceilings, inherited through fork) and uses them, saying
 * so in each ceiling's "how". A backend with its own hook (cpu: the same probes, perhaps more) always
 * measures. Returns the number taken from e (NULL: none), 0 if none. */
static int host_ceilings_from(const char *e, hb_ceiling_set *cl)
{
    cl->n = 0;
    if (!e || !*e) return 0;
    json_t *a = json_loads(e, 0, NULL);
    int n = ceilings_parse(a, "", " (measured earlier in this run)", cl);
    json_decref(a);
    return n;
}

char hb_child_msg_parse(char *line, hb_child_msg *m)
{
    memset(m, 0, sizeof *m);
    m->rel = -1;
    line[strcspn(line, "\n")] = 0;
    m->text = line[0] && line[1] == ' ' ? line + 2 : "";
    int ok = 0;
    switch (line[0]) {
    case 'K': case 'U': case 'P': case 'D': ok = 1; break;
    case 'W': ok = sscanf(line, "W %d", &m->err) == 1; break;
    case 'T': ok = sscanf(line, "T %d %zu %255s", &m->inst, &m->n, m->name) == 3; break;
    case 'C': ok = sscanf(line, "C %d", &m->inst) == 1; break;
    case 'N': { /* "N <inst> <name>: none of the requested cases: <why>"; a name may hold ':' (opencl:0:0) */
        int at = 0;
        const char *end = strstr(line, ": none of the requested cases: ");
        ok = sscanf(line, "N %d %n", &m->inst, &at) == 1 && at > 0 && end && end > line + at;
        if (ok) {
            snprintf(m->name, sizeof m->name, "%.*s", (int)(end - line - at), line + at);
            m->text = line + at;
        }
        break;
    }
    case 'G': ok = sscanf(line, "G %d %zu %d", &m->inst, &m->c, &m->gn) == 3; break;
    case 'B': case 'S': ok = sscanf(line + 1, " %d %zu", &m->inst, &m->c) == 2; break;
    case 'E': ok = sscanf(line, "E %d %zu %255s %lf", &m->inst, &m->c, m->name, &m->rel) >= 3; break;
    default: break;
    }
    if (ok && (m->inst < 0 || m->inst >= MAX_INST)) ok = 0;
    m->kind = ok ? line[0] : 0;
    return m->kind;
}

static void host_ceilings_send(int fd, const hb_ceiling_set *cl)
{
    json_t *a = ceilings_json(cl);
    char *t = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!t) return;
    size_t l = strlen(t);
    /* one write of "K <json>\n" (below PIPE_BUF when it fits: not interleaved) */
    char *line = malloc(l + 4);
    if (line) {
        snprintf(line, l + 4, "K %s\n", t);
        if (write(fd, line, l + 3) < 0) { /* parent gone */ }
        free(line);
    }
    free(t);
}

/* Instance i's start in a child: its "T" (and "N") progress lines, its ceilings into *cl (measured,
 * reused from --ceilings-from, or the host's from earlier in the run), and its backend record (new;
 * NULL when out of memory) with them. */
static json_t *inst_begin(const child_args *a, hb_instance *inst, int i, hb_ceiling_set *cl)
{
    size_t total = 0;
    const char *why_none = "no case of the workloads matches the selection (--op, --filter, --quick, --cases-from)";
    for (size_t j = 0; j < a->cases->n; j++) {
        const char *r = hb_case_refusal(&inst[i], a->cases, j);
        if (!r) total++;
        else why_none = r;
    }
    say(a->pipe_w, "T %d %zu %s\n", i, total, inst[i].name);
    if (!total) say(a->pipe_w, "N %d %s: none of the requested cases: %s\n", i, inst[i].name, why_none);
    if (!a->o->verify_only || a->write_backend_records) {
        say(a->pipe_w, "C %d\n", i);
        /* HB_INJECT_KILL=ceilings: the test suite's death outside a case */
        if (hb_config_get()->inject_kill && !strcmp(hb_config_get()->inject_kill, "ceilings")) raise(SIGKILL);
        int reused = a->o->ceilings_from && !a->o->verify_only ? ceilings_from_file(a->o->ceilings_from, inst[i].name, cl) : 0;
        if (reused) { /* --ceilings-from: measured by an earlier run on this machine (hybench ab's rounds) */ }
        else if (inst[i].ops->ceilings) {
            cl->n = inst[i].ops->ceilings(&inst[i], cl->v, HB_MAX_CEILINGS);
            if (inst[i].host_memory) host_ceilings_send(a->pipe_w, cl);
        } else if (inst[i].host_memory && !a->o->verify_only) {
            if (host_ceilings_from(a->host_ceilings, cl) <= 0) {
                cl->n = hb_cpu_ceilings(cl->v, HB_MAX_CEILINGS);
                host_ceilings_send(a->pipe_w, cl);
            }
        }
    }
    /* with the OpenMP wait policy this process runs under (see wait_policy_for) */
    return hb_backend_record(&inst[i], cl->v, cl->n);
}

int child_main(const child_args *a)
{
    hb_instance inst[MAX_INST];
    char reason[512];
    int n = hb_backend_open(a->entry, inst, MAX_INST, reason, sizeof reason);
    if (n == 0) {
        if (a->write_backend_records) {
            json_t *r = hb_backend_record_unavailable(a->entry->type, reason);
            int e = put_record(a->fd, r, a->pass);
            if (e) { say(a->pipe_w, "W %d\n", e); return HB_EXIT_IO; }
        }
        say(a->pipe_w, "U %s\n", reason);
        return 0;
    }
    if (a->ctl_r >= 0) return child_serve(a, inst, n);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (i < a->start_inst || !instance_selected(a->o, &inst[i])) continue;
        hb_ceiling_set cl = {.n = 0};
        json_t *brec = inst_begin(a, inst, i, &cl);
        if (a->write_backend_records || i > a->start_inst) {
            int e = put_record(a->fd, brec, a->pass);
            if (e) { say(a->pipe_w, "W %d\n", e); return HB_EXIT_IO; }
        } else json_decref(brec);
        hb_ref_cache rcache = {.item = -1};
        size_t j0 = (i == a->start_inst) ? (size_t)a->start_case : 0;
        for (size_t j = j0; j < a->cases->n; j++) {
            if (!case_applies(&inst[i], a->cases, j)) continue;
            /* the case's mode group: the next cases of the same item, dtype and route in other modes
             * (cases.c lists them together), measured with their samples interleaved (sample.c) */
            size_t grp[HB_MAX_GROUP];
            int ng = group_of(&inst[i], a, j, grp);
            hb_case hc[HB_MAX_GROUP];
            for (int g = 0; g < ng; g++) {
                hc[g] = a->cases->v[grp[g]];
                hc[g].seq = (long long)(a->pass - 1) * (long long)a->cases->n + (long long)grp[g] + 1;
                if (inst[i].host_memory) hc[g].route = HB_ROUTE_PAGEABLE; /* its one route (case_refusal) */
            }
            /* a collective over several ranks: the ranks agree on the case before it begins (the
             * backend's supports, core/rendezvous.h), so that waiting for a rank that is still
             * measuring its ceilings or restarting after a crash does not count in --case-timeout;
             * hb_measure_group's own supports call then gets the same answer */
            if (coll_alone(&hc[0])) {
                char why[512];
                hb_case agree = hc[0];
                /* a tensor-parallel chain: its collective steps' agreement is the case's (measure/chain.c) */
                for (int k = 0; hc[0].op == HB_OP_CHAIN && k < hb_chain_nsteps(&hc[0].shape); k++) {
                    int in[3];
                    hb_case sc = hb_chain_step_case(&hc[0], k, in);
                    if (hb_op_is_collective(sc.op)) { agree = sc; break; }
                }
                (void)inst[i].ops->supports(&inst[i], &agree, why, sizeof why);
            }
            /* under `hybench ab`'s lockstep: the other build measures its next group now, then the turn
             * comes back (lockstep.h); before "B", so the wait is not counted in the case's time limit */
            hb_lockstep_yield();
            say(a->pipe_w, "B %d %zu\n", i, j);
            if (ng > 1) say(a->pipe_w, "G %d %zu %d\n", i, grp[ng - 1], ng);
            inject_fault(&inst[i], &hc[0]);
            json_t *recs[HB_MAX_GROUP] = {0};
            hb_status sts[HB_MAX_GROUP];
            if (hb_measure_group(&inst[i], hc, ng, a->cases->item[j], a->cases->items->v[a->cases->item[j]].skip, a->o,
                                 &rcache, &cl, recs, sts) != 0) {
                say(a->pipe_w, "W %d\n", ENOMEM);
                rc = HB_EXIT_IO;
                break;
            }
            for (int g = 0; g < ng; g++) {
                json_t *rec_copy_rel = json_pack("{s:O?}", "rel_err", recs[g] ? json_object_get(recs[g], "rel_err") : NULL);
                int e = put_record(a->fd, recs[g], a->pass);
                if (e) {
                    say(a->pipe_w, "W %d\n", e);
                    json_decref(rec_copy_rel);
                    for (int h = g + 1; h < ng; h++) json_decref(recs[h]);
                    rc = HB_EXIT_IO;
                    break;
                }
                json_t *re = json_object_get(rec_copy_rel, "rel_err");
                say(a->pipe_w, "E %d %zu %s %.3g\n", i, grp[g], hb_status_name(sts[g]), json_is_number(re) ? json_number_value(re) : -1.0);
                json_decref(rec_copy_rel);
            }
            if (rc) break;
            j = grp[ng - 1]; /* the group's cases are done; those between them did not apply */
        }
        hb_ref_cache_free(&rcache);
        inst[i].ops->close(&inst[i]);
        if (rc) break;
    }
    return rc;
}

/* ---- a served run's child (child_serve, internal.h; measure/serve.h) ---- */

/* One mode group of a served child: prepared once (g), or measured whole in every round (g NULL,
 * why says why). */
typedef struct served_grp {
    int inst, ng;
    size_t grp[HB_MAX_GROUP];
    hb_case hc[HB_MAX_GROUP];
    hb_group *g;
    hb_ref_cache *rc;      /* its item's reference (shared by the item's groups of one weight format) */
    const char *why;       /* NULL when served */
    double setup_s;        /* its one set-up's wall seconds */
} served_grp;

/* The reference cache that holds (or will hold) case c's item's reference, from the child's list
 * refs[0..*nrefs) (grown); NULL when out of memory. */
static hb_ref_cache *ref_for(hb_ref_cache ***refs, size_t *nrefs, const hb_case *c, int item)
{
    const hb_dtype wq = hb_quant_input(c->op, c->dtype) >= 0 ? c->dtype : HB_F32;
    for (size_t k = 0; k < *nrefs; k++)
        if ((*refs)[k]->item == item && (*refs)[k]->wq == wq) return (*refs)[k];
    hb_ref_cache **nr = realloc(*refs, (*nrefs + 1) * sizeof *nr);
    if (!nr) return NULL;
    *refs = nr;
    hb_ref_cache *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->item = -1;
    nr[(*nrefs)++] = r;
    return r;
}

/* Round `round`'s file path: the group sg's records appended (only the variants the round's key list
 * names), progress lines said. Returns 0 or HB_EXIT_IO. */
static int serve_group(const child_args *a, hb_instance *inst, served_grp *sg, const hb_ceiling_set *cl, int fd, int round,
                       hb_ref_cache *scratch)
{
    hb_case_list *l = (hb_case_list *)a->cases;
    int listed[HB_MAX_GROUP], any = 0;
    for (int k = 0; k < sg->ng; k++) any |= listed[k] = hb_case_listed(l, sg->grp[k], inst[sg->inst].name, inst[sg->inst].host_memory);
    if (!any) return 0;
    hb_lockstep_yield(); /* the other build measures its next group now (lockstep.h) */
    const int i = sg->inst;
    const size_t j = sg->grp[0];
    say(a->pipe_w, "B %d %zu\n", i, j);
    if (sg->ng > 1) say(a->pipe_w, "G %d %zu %d\n", i, sg->grp[sg->ng - 1], sg->ng);
    json_t *recs[HB_MAX_GROUP] = {0};
    hb_status sts[HB_MAX_GROUP];
    const long setups0 = hb_group_prepares(), refs0 = hb_ref_gets();
    if (!sg->g) inject_fault(&inst[i], &sg->hc[0]); /* a case a fault injection names is set up per round */
    int bad = sg->g ? hb_group_sample(sg->g, a->o, cl, recs, sts)
                    : hb_measure_group(&inst[i], sg->hc, sg->ng, l->item[j], l->items->v[l->item[j]].skip, a->o, scratch, cl, recs, sts);
    for (int k = 0; sg->g && !bad && k < sg->ng; k++) /* a variant that did not fit beside the others: alone */
        if (hb_group_deferred(sg->g, k))
            bad = hb_measure_group(&inst[i], &sg->hc[k], 1, l->item[j], l->items->v[l->item[j]].skip, a->o, scratch, cl,
                                   &recs[k], &sts[k]);
    if (bad) { say(a->pipe_w, "W %d\n", ENOMEM); for (int k = 0; k < sg->ng; k++) json_decref(recs[k]); return HB_EXIT_IO; }
    for (int k = 0; k < sg->ng; k++) {
        json_t *rec = recs[k];
        if (!listed[k] || !rec) { json_decref(rec); continue; }
        const int per_round = !sg->g || hb_group_deferred(sg->g, k);
        /* a served round spends no set-up: its record's set-up and reference seconds are the round's
         * (0), the one set-up's seconds are in served.setup_s; the record's struct takes them and is
         * written back (results/record.h) */
        hb_rec_case r;
        json_t *out = NULL;
        if (hb_rec_case_parse(rec, &r) == HB_OK) {
            hb_status ws = HB_OK;
#define SV(T, s, m, x) (ws = ws ? ws : HB_REC_SET(T, s, m, x))
            if (!per_round && hb_rec_entry_at(&hb_rec_case_table, &r, offsetof(hb_rec_case, wall))) {
                SV(hb_rec_wall, &r.wall, setup, 0);
                SV(hb_rec_wall, &r.wall, reference, 0);
            }
            SV(hb_rec_served, &r.served, round, round);
            SV(hb_rec_served, &r.served, prepared_per_round, per_round);
            SV(hb_rec_served, &r.served, setups, (double)hb_group_prepares());
            SV(hb_rec_served, &r.served, setups_in_round, (double)(hb_group_prepares() - setups0));
            SV(hb_rec_served, &r.served, references, (double)hb_ref_gets());
            SV(hb_rec_served, &r.served, references_in_round, (double)(hb_ref_gets() - refs0));
            if (!per_round) {
                SV(hb_rec_served, &r.served, setup_s, sg->setup_s);
                SV(hb_rec_served, &r.served, placements, hb_group_placements(sg->g));
            } else
                SV(hb_rec_served, &r.served, why, sg->why ? sg->why : "out of memory beside the group's other modes: set up alone in each round");
#undef SV
            if (!ws) ws = hb_rec_put(&hb_rec_case_table, &r, offsetof(hb_rec_case, served));
            if (!ws) out = hb_rec_case_json(&r);
            hb_rec_case_free(&r);
        }
        if (out) {
            json_decref(rec);
            rec = out;
        } /* out of memory: the record is written without its served round */
        json_t *rel = json_incref(json_object_get(rec, "rel_err"));
        int e = put_record(fd, rec, 1);
        if (e) {
            say(a->pipe_w, "W %d\n", e);
            json_decref(rel);
            for (int h = k + 1; h < sg->ng; h++) json_decref(recs[h]);
            return HB_EXIT_IO;
        }
        say(a->pipe_w, "E %d %zu %s %.3g\n", i, sg->grp[k], hb_status_name(sts[k]), json_is_number(rel) ? json_number_value(rel) : -1.0);
        json_decref(rel);
    }
    return 0;
}

int child_serve(const child_args *a, hb_instance *inst, int n)
{
    hb_case_list *l = (hb_case_list *)a->cases; /* this process's copy: its keys change with the rounds */
    hb_ceiling_set cl[MAX_INST];
    json_t *brec[MAX_INST] = {0};
    served_grp *sv = NULL;
    size_t nsv = 0, cap = 0, nrefs = 0;
    hb_ref_cache **refs = NULL, scratch = {.item = -1};
    int rc = 0;
    /* set-up: every group of every selected instance, once */
    for (int i = 0; i < n && !rc; i++) {
        if (!instance_selected(a->o, &inst[i])) continue;
        cl[i].n = 0;
        brec[i] = inst_begin(a, inst, i, &cl[i]);
        for (size_t j = 0; j < l->n && !rc; j++) {
            if (!case_applies(&inst[i], l, j)) continue;
            if (nsv == cap) {
                served_grp *nv = realloc(sv, (cap = cap ? 2 * cap : 64) * sizeof *nv);
                if (!nv) { rc = HB_EXIT_IO; say(a->pipe_w, "W %d\n", ENOMEM); break; }
                sv = nv;
            }
            served_grp *sg = &sv[nsv++];
            memset(sg, 0, sizeof *sg);
            sg->inst = i;
            sg->ng = group_of(&inst[i], a, j, sg->grp);
            for (int g = 0; g < sg->ng; g++) {
                sg->hc[g] = l->v[sg->grp[g]];
                sg->hc[g].seq = (long long)sg->grp[g] + 1;
                if (inst[i].host_memory) sg->hc[g].route = HB_ROUTE_PAGEABLE;
            }
            if (sg->hc[0].op == HB_OP_CHAIN) sg->why = "a chain is measured whole (set-up included) in every round";
            else if (coll_alone(&sg->hc[0])) sg->why = "a collective over several ranks agrees every case with the other ranks: set up in every round";
            else if (injected(&inst[i], &sg->hc[0])) sg->why = "fault injection (HB_INJECT_CRASH / HB_INJECT_KILL): set up in every round";
            else {
                say(a->pipe_w, "B %d %zu\n", i, j); /* the parent's case time limit holds in set-up too */
                double t0 = hb_now();
                sg->rc = ref_for(&refs, &nrefs, &sg->hc[0], l->item[j]);
                sg->g = sg->rc ? hb_group_prepare(&inst[i], sg->hc, sg->ng, l->item[j], l->items->v[l->item[j]].skip, a->o,
                                                  sg->rc, &cl[i]) : NULL;
                sg->setup_s = hb_now() - t0;
                if (!sg->g) sg->why = "out of memory beside the cases set up before it: set up in every round";
                say(a->pipe_w, "S %d %zu\n", i, j);
            }
            j = sg->grp[sg->ng - 1];
        }
    }
    say(a->pipe_w, "P\n");
    FILE *ctl = rc ? NULL : fdopen(a->ctl_r, "r");
    char line[8192];
    while (ctl && !rc && fgets(line, sizeof line, ctl)) {
        char kind, path[8000];
        int round;
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'Q' || sscanf(line, "%c %d %7999[^\n]", &kind, &round, path) != 3) break;
        if (kind == 'C' && a->o->serve_cases) { /* the controller rewrote the key list: this round runs those */
            for (size_t k = 0; k < l->nkeys; k++) free(l->keys[k]);
            free(l->keys);
            l->keys = NULL;
            l->nkeys = 0;
            char err[1024];
            if (hb_cases_keys_load(a->o->serve_cases, l, err, sizeof err)) fprintf(stderr, "hybench: %s (every case this round)\n", err);
        } else if (kind == 'R' && l->keys) {
            for (size_t k = 0; k < l->nkeys; k++) free(l->keys[k]);
            free(l->keys);
            l->keys = NULL;
            l->nkeys = 0;
        }
        int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0) { say(a->pipe_w, "W %d\n", errno); rc = HB_EXIT_IO; break; }
        for (int i = 0; i < n && !rc; i++) {
            if (!brec[i]) continue;
            int e = put_record(fd, json_deep_copy(brec[i]), 1);
            if (e) { say(a->pipe_w, "W %d\n", e); rc = HB_EXIT_IO; }
        }
        for (size_t k = 0; k < nsv && !rc; k++) rc = serve_group(a, inst, &sv[k], &cl[sv[k].inst], fd, round, &scratch);
        close(fd);
        if (!rc) say(a->pipe_w, "D %d\n", round);
    }
    if (ctl) fclose(ctl);
    for (size_t k = 0; k < nsv; k++) hb_group_free(sv[k].g);
    free(sv);
    for (size_t k = 0; k < nrefs; k++) { hb_ref_cache_free(refs[k]); free(refs[k]); }
    free(refs);
    hb_ref_cache_free(&scratch);
    for (int i = 0; i < n; i++) {
        json_decref(brec[i]);
        inst[i].ops->close(&inst[i]);
    }
    return rc;
}
