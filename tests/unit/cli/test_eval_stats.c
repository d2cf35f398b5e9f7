/* Unit tests: numalot eval's statistics (core/cli/eval_stats.c): medians,
 * the order-statistic interval of a median against binomial tables and
 * its coverage on drawn samples, and improvements over a reference. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "eval_stats.h"

static void medians(void **state)
{
	double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
	(void)state;
	assert_true(nl_stats_median(odd, 3) == 3);
	assert_true(nl_stats_median(even, 4) == 2.5);
	assert_true(nl_stats_median(one, 1) == 7);
	/* The input is left as it was. */
	assert_true(odd[0] == 5 && odd[1] == 1 && even[0] == 4);
}

static void binomial(void **state)
{
	(void)state;
	/* P(B <= 0) = 2^-n; P(B <= 2), n = 10: 56/1024. */
	assert_true(fabs(nl_stats_binom_half_cdf(5, 0) - 1.0 / 32) < 1e-12);
	assert_true(fabs(nl_stats_binom_half_cdf(10, 2) - 56.0 / 1024) < 1e-12);
	assert_true(fabs(nl_stats_binom_half_cdf(9, 4) - 0.5) < 1e-12);
	assert_true(nl_stats_binom_half_cdf(3, 3) == 1);
}

static void interval_from_tables(void **state)
{
	double x[20], lo, hi, cover;
	(void)state;
	for (int i = 0; i < 20; i++)
		x[i] = 20 - i; /* 20 .. 1, unsorted order */
	/* n = 20: the 6th and 15th values (coverage 95.86%, the textbook
	 * figure; the 7th and 14th would give 88.5%). */
	assert_int_equal(nl_stats_median_ci(x, 20, 0.95, &lo, &hi, &cover), 0);
	assert_true(lo == 6 && hi == 15);
	assert_true(fabs(cover - 0.958610535) < 1e-6);
	/* n = 6: the extremes, 1 - 2/64 = 96.9%. */
	assert_int_equal(nl_stats_median_ci(x, 6, 0.95, &lo, &hi, &cover), 0);
	assert_true(lo == 15 && hi == 20);
	assert_true(fabs(cover - 62.0 / 64) < 1e-12);
	/* n = 5 cannot reach 95%: [min, max], saying 93.75%. */
	assert_int_equal(nl_stats_median_ci(x, 5, 0.95, &lo, &hi, &cover), 0);
	assert_true(lo == 16 && hi == 20);
	assert_true(fabs(cover - 0.9375) < 1e-12);
	assert_int_equal(nl_stats_median_ci(x, 0, 0.95, &lo, &hi, &cover), -1);
}

static double draw(unsigned long long *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) * 0x1.0p-53;
}

/* The interval holds the true median as often as it says: exponential
 * samples (skewed: no normal approximation would do), median ln 2. */
static void coverage_holds(void **state)
{
	unsigned long long s = 42;
	int hits = 0, trials = 4000;
	double x[15], lo, hi, cover = 0;
	(void)state;
	for (int t = 0; t < trials; t++) {
		for (int i = 0; i < 15; i++)
			x[i] = -log(1 - draw(&s));
		nl_stats_median_ci(x, 15, 0.95, &lo, &hi, &cover);
		hits += lo <= M_LN2 && M_LN2 <= hi;
	}
	/* n = 15: coverage 96.48%; 4000 trials, 4 standard errors. */
	assert_true(fabs(cover - 0.9648) < 1e-3);
	assert_true(fabs((double)hits / trials - cover) < 4 * 0.003);
}

static void versus_reference(void **state)
{
	double t[] = {9, 10, 12, 8};
	struct nl_stats_vs v;
	(void)state;
	assert_int_equal(nl_stats_versus(t, 4, 10, &v), 0);
	/* Improvements +10%, 0, -20%, +20%. */
	assert_true(fabs(v.better - 0.5) < 1e-12);
	assert_true(fabs(v.mean - 0.025) < 1e-12);
	assert_true(fabs(v.best - 0.2) < 1e-12);
	assert_true(fabs(v.worst + 0.2) < 1e-12);
	assert_true(fabs(v.median - 0.05) < 1e-12);
	assert_int_equal(nl_stats_versus(t, 4, 0, &v), -1);
	assert_int_equal(nl_stats_versus(t, 0, 10, &v), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(medians),
		cmocka_unit_test(binomial),
		cmocka_unit_test(interval_from_tables),
		cmocka_unit_test(coverage_holds),
		cmocka_unit_test(versus_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
