/* numalot eval's statistics (eval_stats.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double *sorted(const double *x, size_t n)
{
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return NULL;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s;
}

double nl_stats_median(const double *x, size_t n)
{
	double *s = n ? sorted(x, n) : NULL, m;
	if (!s)
		return NAN;
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

double nl_stats_binom_half_cdf(size_t n, size_t k)
{
	double p = 0;
	if (k >= n)
		return 1;
	/* Each term C(n, i) 2^-n through lgamma: exact enough for any n a
	 * site would run, and no overflow. */
	for (size_t i = 0; i <= k; i++)
		p += exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
			 lgamma((double)(n - i) + 1) - (double)n * M_LN2);
	return p > 1 ? 1 : p;
}

int nl_stats_median_ci(const double *x, size_t n, double level, double *lo,
		       double *hi, double *achieved)
{
	double *s = n ? sorted(x, n) : NULL;
	size_t best = 0;

	if (!s)
		return -1;
	/* [x_(k), x_(n+1-k)] (1-based) covers the median with probability
	 * 1 - 2 P(B <= k - 1): the largest k that keeps it >= level. */
	for (size_t k = 1; 2 * k <= n + 1; k++) {
		double cover = 1 - 2 * nl_stats_binom_half_cdf(n, k - 1);
		if (cover + 1e-12 < level)
			break;
		best = k;
	}
	if (best == 0) {
		*lo = s[0];
		*hi = s[n - 1];
		*achieved = n == 1 ? 0 : 1 - 2 * nl_stats_binom_half_cdf(n, 0);
	} else {
		*lo = s[best - 1];
		*hi = s[n - best];
		*achieved = 1 - 2 * nl_stats_binom_half_cdf(n, best - 1);
	}
	free(s);
	return 0;
}

int nl_stats_versus(const double *t, size_t n, double ref,
		    struct nl_stats_vs *out)
{
	double *imp;
	size_t faster = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0 || !(ref > 0) || !(imp = malloc(n * sizeof(*imp))))
		return -1;
	out->n = n;
	out->best = -INFINITY;
	out->worst = INFINITY;
	for (size_t i = 0; i < n; i++) {
		imp[i] = (ref - t[i]) / ref;
		faster += t[i] < ref;
		out->mean += imp[i] / (double)n;
		out->best = imp[i] > out->best ? imp[i] : out->best;
		out->worst = imp[i] < out->worst ? imp[i] : out->worst;
	}
	out->better = (double)faster / (double)n;
	out->median = nl_stats_median(imp, n);
	free(imp);
	return 0;
}
