/*
 * ab_account.c - `hybench ab`'s account of a gate (ab_account.h): the pair's meta facts, the JSON
 * verdict's figures and the Markdown's method paragraph.
 */
#include "cli/ab_account.h"
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* *from_out: the round the subset rounds began (NaN, written null: every round ran every case);
 * *cases: per round the cases a subset round ran (NaN, written null, for a full one). HB_OK or
 * HB_ENOMEM. */
static hb_status subset_fill(double *from_out, hb_rec_nums *cases, const hb_ab_account *a)
{
    double *v = malloc((size_t)(a->rounds > 0 ? a->rounds : 1) * sizeof *v);
    if (!v) return HB_ENOMEM;
    int from = a->subset_from;
    *from_out = from && from <= a->rounds ? from : (double)NAN;
    for (int r = 0; r < a->rounds; r++)
        v[r] = from && r + 1 >= from && a->open_cases[r] >= 0 ? (double)a->open_cases[r] : (double)NAN;
    hb_status st = hb_rec_nums_set(cases, v, (size_t)a->rounds);
    free(v);
    return st;
}

hb_status hb_ab_pair_fill(hb_rec_ab *ab, const hb_ab_account *a, const char *pair, int side, const char *const exe[2],
                          long long order_seed)
{
    hb_status st = HB_OK;
    const hb_ab_noise *no = a->noise;
#define AB(m, v) (st = st ? st : HB_REC_SET(hb_rec_ab, ab, m, v))
#define PUT(m) (st = st ? st : hb_rec_put(&hb_rec_ab_table, ab, offsetof(hb_rec_ab, m)))
    AB(pair, pair);
    AB(role, side ? "cur" : "base");
    AB(other, exe[!side]);
    AB(rounds, a->rounds);
    AB(order, a->order);
    AB(exe, exe[side]);
    AB(order_seed, order_seed);
    AB(aslr, no->aslr != 0);
    AB(threads, no->threads);
    AB(pinned, no->have_pin != 0);
    AB(hugepages, no->hugepages != 0);
    AB(ref_cache, a->ref_cache);
    AB(algo_cache, a->algo_cache);
    AB(lockstep_rounds, a->lockstep_rounds);
    if (!st) st = subset_fill(&ab->subset_from_round, &ab->subset_cases, a);
    PUT(subset_from_round);
    PUT(subset_cases);
    if (a->duet) {
        double cpus[2] = {a->duet_cpu[0], a->duet_cpu[1]};
        if (!st) st = hb_rec_nums_set(&ab->duet_cpus, cpus, 2);
        PUT(duet_cpus);
    }
    double *turns = malloc((size_t)(a->rounds > 0 ? a->rounds : 1) * sizeof *turns);
    if (!turns && !st) st = HB_ENOMEM;
    for (int r = 0; turns && r < a->rounds; r++) turns[r] = (double)a->steps[r][side];
    if (!st) st = hb_rec_nums_set(&ab->turns, turns, (size_t)a->rounds);
    free(turns);
    PUT(turns);
#undef PUT
#undef AB
    return st;
}

hb_status hb_ab_summary_fill(hb_rec_ab_summary *sm, const hb_ab_account *a)
{
    hb_status st = HB_OK;
#define SM(m, v) (st = st ? st : HB_REC_SET(hb_rec_ab_summary, sm, m, v))
#define PUT(m) (st = st ? st : hb_rec_put(&hb_rec_ab_summary_table, sm, offsetof(hb_rec_ab_summary, m)))
    SM(rounds, a->rounds);
    SM(order, a->order);
    SM(stopped_at, a->stop_why);
    SM(elapsed_s, a->total_s);
    SM(base_runs_s, a->run_s[0]);
    SM(cur_runs_s, a->run_s[1]);
    SM(decide_s, a->decide_s);
    SM(undecided, (double)a->undecided);
    SM(lockstep_rounds, a->lockstep_rounds);
    SM(served, a->served != 0);
    if (a->served) {
        SM(serve_setup_s.base, a->serve_setup_s[0]);
        SM(serve_setup_s.cur, a->serve_setup_s[1]);
    }
    SM(serve_setup_first, a->served ? (a->serve_cur_first ? "cur" : "base") : NULL);
    SM(duet, a->duet != 0);
    SM(ref_cache, a->ref_cache);
    SM(algo_cache, a->algo_cache);
    if (!st) st = subset_fill(&sm->subset_from_round, &sm->subset_cases, a);
    PUT(subset_from_round);
    PUT(subset_cases);
    if (!st && a->rounds > 0 && !(sm->round_seconds = calloc((size_t)a->rounds, sizeof *sm->round_seconds))) st = HB_ENOMEM;
    for (int r = 0; !st && r < a->rounds; r++) { /* sm owns the array: its elements cleared before they count */
        hb_rec_ab_round *e = &sm->round_seconds[r];
        hb_rec_clear(&hb_rec_ab_round_table, e);
        sm->nround_seconds = (size_t)r + 1;
        if (!(st = HB_REC_SET(hb_rec_ab_round, e, base_s, a->round_s[0][r]))) st = HB_REC_SET(hb_rec_ab_round, e, cur_s, a->round_s[1][r]);
    }
    PUT(round_seconds);
#undef PUT
#undef SM
    return st;
}

void hb_ab_method_text(char *out, size_t len, const hb_ab_account *a, const hb_ab_options *ao, const hb_cmp_options *o)
{
    const hb_ab_noise *no = a->noise;
    char thr[48] = ", threads inherited", pinb[600] = "";
    if (no->threads) snprintf(thr, sizeof thr, ", %d thread%s per run", no->threads, no->threads > 1 ? "s" : "");
    if (a->duet) snprintf(pinb, sizeof pinb, ", one CPU each (duet)");
    else if (no->have_pin) {
        size_t n = (size_t)snprintf(pinb, sizeof pinb, ", pinned to CPU");
        for (int c = 0; c < CPU_SETSIZE && n + 8 < sizeof pinb; c++)
            if (CPU_ISSET(c, &no->pin)) n += (size_t)snprintf(pinb + n, sizeof pinb - n, " %d", c);
    }
    char duetb[400];
    if (a->duet)
        snprintf(duetb, sizeof duetb, "duet: both builds' runs started at once, each on its own CPU (%d and %d, "
                 "swapped with the round order), stepping through the case groups together, so both measure a case "
                 "at the same time", a->duet_cpu[0], a->duet_cpu[1]);
    else
        snprintf(duetb, sizeof duetb, "both builds' runs started at once, taking turns case group by case group, so "
                 "both measure a case within a fraction of a second of each other");
    char subsetb[160] = "";
    if (a->subset_from && a->subset_from <= a->rounds) {
        long least = -1, most = -1;
        for (int r = a->subset_from - 1; r < a->rounds; r++)
            if (a->open_cases[r] >= 0) {
                if (least < 0 || a->open_cases[r] < least) least = a->open_cases[r];
                if (a->open_cases[r] > most) most = a->open_cases[r];
            }
        if (most < 0) { /* every round after the first subset ran every case again */ }
        else if (least == most)
            snprintf(subsetb, sizeof subsetb, " (from round %d on only the %ld cases still undecided)", a->subset_from, most);
        else
            snprintf(subsetb, sizeof subsetb, " (from round %d on only the cases still undecided: %ld down to %ld)",
                     a->subset_from, most, least);
    }
    char servedb[300];
    if (a->served)
        snprintf(servedb, sizeof servedb, "in one served run per build that set every case up once (base %.1f s, current %.1f s; "
                 "%s first, turn by turn) and took only samples in each round", a->serve_setup_s[0], a->serve_setup_s[1],
                 a->serve_cur_first ? "current" : "base");
    else snprintf(servedb, sizeof servedb, "in fresh processes (set-up in every round)");
    snprintf(out, len,
             "Method (`hybench ab`): %d rounds (stopped at %s), each running every case%s once under each build %s, order %s (B = base first, C = current first; ABBA, first of each pair random); %d of "
             "them in lockstep (%s). Per "
             "case and round, the %s of every `%s` sample; the per-round ratios current/base%s; their median, a "
             "two-sided Wilcoxon signed-rank test and a %g%% bootstrap CI over rounds (%d resamples); "
             "Benjamini-Hochberg over the %zu compared cases (FDR %g). A regression needs q <= %g, the median "
             "ratio above 1 + threshold (%g%% by default) and %s. A case that became wrong or crashed in any round, "
             "lost its ok status, or went missing fails the gate whatever its speed. Time: %.0f s in all, base runs "
             "%.0f s, current runs %.0f s, decisions %.1f s; ASLR %s%s%s%s.\n",
             a->rounds, a->stop_why, subsetb, servedb, a->order, a->lockstep_rounds, duetb,
             ao->round_quantile == 0.5 ? "median" : ao->round_quantile == 0 ? "minimum" : "10th percentile", o->metric,
             ao->normalize ? ", divided by the median ratio of the case's backend in that round (its process's whole-run "
                             "shift, in the rounds that ran every case; that shift is tested as the case `(whole run)`)" : "",
             o->confidence * 100, o->resamples, a->tested, o->alpha, o->alpha,
             o->threshold * 100, o->rule_point ? "the CI above 1" : "the whole CI above 1 + threshold", a->total_s, a->run_s[0],
             a->run_s[1], a->decide_s, no->aslr ? "on" : "off", thr, pinb, no->hugepages ? ", huge pages" : "");
}
