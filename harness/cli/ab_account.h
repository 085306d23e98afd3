/*
 * ab_account.h - what `hybench ab` (cmd_ab.c) says of the gate when it ends, from one account of it:
 * the pair's facts in each build's merged file's meta record (results/record.h hb_rec_ab), the gate's
 * figures in its JSON verdict (hb_rec_ab_summary) and the Markdown's method paragraph. docs/compare.md,
 * "Outputs".
 */
#ifndef HB_AB_ACCOUNT_H
#define HB_AB_ACCOUNT_H
#include "analysis/ab.h"
#include "cli/ab_builds.h"

/* The gate as it ended. All pointers borrowed; seconds throughout. */
typedef struct hb_ab_account {
    int rounds;                      /* the rounds decided from */
    const char *order;               /* per round: 'B' base first, 'C' current first ('?' unknown) */
    const char *stop_why;            /* why it stopped */
    double total_s, run_s[2], decide_s; /* the whole gate; each build's runs (0 base, 1 cur); the decisions */
    size_t undecided;                /* cases still undecided */
    size_t tested;                   /* cases compared (Benjamini-Hochberg's m) */
    int lockstep_rounds;             /* rounds whose two runs took turns */
    int served;                      /* one served run per build (measure/serve.h) */
    double serve_setup_s[2];         /* a served gate's set-up per build */
    int serve_cur_first;             /* the current build set up first */
    int duet;                        /* both runs at once, one CPU each: duet_cpu[0..1] */
    int duet_cpu[2];
    const char *ref_cache, *algo_cache; /* the caches' folders, NULL: none */
    int subset_from;                 /* the round from which later rounds ran only the undecided cases (0: none) */
    const long *open_cases;          /* [rounds]: the cases round r + 1 ran, -1 every case */
    const double *round_s[2];        /* [rounds]: each round's seconds per build */
    const long (*steps)[2];          /* [rounds][2]: each build's hand-backs per round */
    const hb_ab_noise *noise;        /* the noise controls both builds ran under */
} hb_ab_account;

/* ab (absent members on entry) filled for side `side` (0 base, 1 cur) of the pair `pair`: pair, role,
 * other (the other build's program), rounds, order, exe (this build's), order_seed, aslr, threads,
 * pinned, hugepages, ref_cache, algo_cache, lockstep_rounds, subset_from_round, subset_cases,
 * duet_cpus (a duet only) and turns, in this order. The caller frees it (hb_rec_release with
 * hb_rec_ab_table). HB_OK or HB_ENOMEM. */
hb_status hb_ab_pair_fill(hb_rec_ab *ab, const hb_ab_account *a, const char *pair, int side, const char *const exe[2],
                          long long order_seed);

/* sm (absent members on entry) filled with the gate's figures, in hb_rec_ab_summary's order
 * (serve_setup_s only when served). The caller frees it (hb_rec_release with
 * hb_rec_ab_summary_table). HB_OK or HB_ENOMEM. */
hb_status hb_ab_summary_fill(hb_rec_ab_summary *sm, const hb_ab_account *a);

/* The Markdown's method paragraph (one line, ending in a newline) into out[0..len): the rounds and
 * why they stopped, how each build ran (served or fresh processes, lockstep or duet), the order, the
 * statistic (ao: per-round quantile, normalization; o: metric, confidence, resamples, FDR, threshold,
 * rule), the time split and the noise controls. Truncated to len. */
void hb_ab_method_text(char *out, size_t len, const hb_ab_account *a, const hb_ab_options *ao, const hb_cmp_options *o);
#endif
