/* numalot eval: the statistics of its table (docs/evaluation.md, "On your
 * own nodes"): medians with distribution-free confidence intervals from
 * order statistics, and improvements over a reference time. */
#ifndef NUMALOT_EVAL_STATS_H
#define NUMALOT_EVAL_STATS_H

#include <stddef.h>

/* The median of n values (not changed; n > 0). */
double nl_stats_median(const double *x, size_t n);

/*
 * A confidence interval for the median of the distribution the n values
 * were drawn from, at least `level` (0.95) where n allows: the k-th
 * smallest and k-th largest values, k the largest with
 * P(k <= B <= n - k) >= level for B ~ Binomial(n, 1/2) (no assumption on
 * the distribution). *achieved gets that probability; where no k reaches
 * level (n < 6 at 95%) the interval is [min, max] and *achieved says what
 * it covers (1 - 2^(1-n)). 0, or -1 when n is 0.
 */
int nl_stats_median_ci(const double *x, size_t n, double level, double *lo,
		       double *hi, double *achieved);

/* P(B <= k), B ~ Binomial(n, 1/2). */
double nl_stats_binom_half_cdf(size_t n, size_t k);

/* Times against a reference time ref > 0 (the Linux median): each run's
 * improvement (ref - t) / ref (+ is faster). */
struct nl_stats_vs {
	size_t n;
	double better; /* the share of runs faster than ref */
	double mean;   /* mean improvement */
	double best;   /* the largest */
	double worst;  /* the smallest */
	double median; /* median improvement */
};
int nl_stats_versus(const double *t, size_t n, double ref,
		    struct nl_stats_vs *out);

#endif
