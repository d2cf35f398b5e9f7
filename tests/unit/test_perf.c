/* Unit tests: 3DyRM arithmetic, missing fields, records, relative perf. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "perf.h"

static struct nl_perf_params P;

static int setup(void **state)
{
	(void)state;
	nl_perf_params_default(&P);
	return 0;
}

static struct nl_sample full_sample(void)
{
	struct nl_sample s;
	memset(&s, 0, sizeof(s));
	s.measured = NL_M_INSTRUCTIONS | NL_M_FP_OPS | NL_M_LLC_MISSES |
		     NL_M_LATENCY | NL_M_TASK_CLOCK;
	s.wall_s = 2.0;
	s.instructions = 6e9;
	s.fp_ops = 2e9;	      /* ops = 8e9, ops/s = 4e9 */
	s.llc_misses = 1e8;   /* bytes = 6.4e9, OI = 1.25 */
	s.task_clock_s = 1.0; /* share 0.5 */
	s.lat_count[0] = 300; /* mean (300*100 + 100*180)/400 = 120 ns */
	s.lat_sum_ns[0] = 300 * 100.0;
	s.lat_count[1] = 100;
	s.lat_sum_ns[1] = 100 * 180.0;
	s.cpu = 0;
	return s;
}

static void perf_all_terms(void **state)
{
	(void)state;
	struct nl_sample s = full_sample();
	struct nl_perf pf;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), 0);
	assert_int_equal(pf.terms, NL_T_OPS | NL_T_OI | NL_T_LATENCY);
	assert_true(fabs(pf.ops_per_s - 4e9) < 1);
	assert_true(fabs(pf.oi - 1.25) < 1e-12);
	assert_true(fabs(pf.latency_ns - 120) < 1e-9);
	assert_true(fabs(pf.perf - 4e9 * 1.25 / 120) < 1e-3);
	assert_true(fabs(pf.cpu_share - 0.5) < 1e-12);
	assert_int_equal(pf.preferred_node, 0); /* most samples on node 0 */
}

static void perf_exponents(void **state)
{
	(void)state;
	struct nl_sample s = full_sample();
	struct nl_perf pf;
	P.alpha = 2;
	P.gamma = 0;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), 0);
	assert_true(fabs(pf.perf - 4e9 / (120.0 * 120.0)) < 1e-3);
	nl_perf_params_default(&P);
}

static void perf_missing_latency_and_oi(void **state)
{
	(void)state;
	struct nl_sample s = full_sample();
	struct nl_perf pf;

	s.measured &= ~NL_M_LATENCY;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), 0);
	assert_int_equal(pf.terms, NL_T_OPS | NL_T_OI);
	assert_true(fabs(pf.perf - 4e9 * 1.25) < 1);

	s.measured &= ~NL_M_LLC_MISSES;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), 0);
	assert_int_equal(pf.terms, NL_T_OPS);
	assert_true(fabs(pf.perf - 4e9) < 1);

	/* No FP events: instructions alone. */
	s.measured &= ~NL_M_FP_OPS;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), 0);
	assert_true(fabs(pf.ops_per_s - 3e9) < 1);
}

static void perf_software_only(void **state)
{
	(void)state;
	struct nl_sample s = full_sample();
	struct nl_perf pf;
	s.measured = NL_M_TASK_CLOCK | NL_M_NODE_ACCESS;
	s.access[1] = 10;
	s.access[0] = 3;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), 0);
	assert_int_equal(pf.terms, NL_T_CPU_SHARE);
	assert_true(fabs(pf.perf - 0.5) < 1e-12);
	assert_int_equal(pf.preferred_node, 1);
}

static void perf_nothing(void **state)
{
	(void)state;
	struct nl_sample s = full_sample();
	struct nl_perf pf;
	s.measured = 0;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), -ENODATA);
	s = full_sample();
	s.wall_s = 0;
	assert_int_equal(nl_perf_compute(&s, &P, 2, &pf), -ENODATA);
}

static void record_ageing(void **state)
{
	(void)state;
	struct nl_record r;
	double v;

	nl_record_clear(&r);
	assert_int_equal(nl_record_get(&r, &P, 1, 0, &v), 0);
	nl_record_note(&r, 1, 100, 10.0);
	/* Full weight for the first second. */
	assert_int_equal(nl_record_get(&r, &P, 1, 10.5, &v), 1);
	assert_true(fabs(v - 100) < 1e-12);
	assert_int_equal(nl_record_get(&r, &P, 1, 11.0, &v), 1);
	assert_true(fabs(v - 100) < 1e-12);
	/* Then exp(-t^3/30). */
	assert_int_equal(nl_record_get(&r, &P, 1, 13.0, &v), 1);
	assert_true(fabs(v - 100 * exp(-27.0 / 30)) < 1e-9);
	assert_true(nl_record_weight(&P, 2) > nl_record_weight(&P, 3));
	/* Too old: no record. exp(-125/30) = 0.0155 < 0.05. */
	assert_int_equal(nl_record_get(&r, &P, 1, 15.0, &v), 0);
	/* A fresh note revives it; other nodes stay empty. */
	nl_record_note(&r, 1, 50, 15.0);
	assert_int_equal(nl_record_get(&r, &P, 1, 15.0, &v), 1);
	assert_true(fabs(v - 50) < 1e-12);
	assert_int_equal(nl_record_get(&r, &P, 0, 15.0, &v), 0);
}

static void relative_per_process(void **state)
{
	(void)state;
	double perf[] = {1, 3, 10, 30, 99};
	int group[] = {7, 7, 9, 9, 7};
	unsigned char has[] = {1, 1, 1, 1, 0};
	double rel[5];

	nl_perf_relative(perf, group, has, 5, rel);
	/* Group 7: mean of 1 and 3 (thread 4 has no perf). */
	assert_true(fabs(rel[0] - 0.5) < 1e-12);
	assert_true(fabs(rel[1] - 1.5) < 1e-12);
	/* Group 9: mean 20, independent of group 7. */
	assert_true(fabs(rel[2] - 0.5) < 1e-12);
	assert_true(fabs(rel[3] - 1.5) < 1e-12);
	assert_true(fabs(rel[4] - 1.0) < 1e-12);
}

static void sample_accumulates(void **state)
{
	(void)state;
	struct nl_sample a, b = full_sample();
	memset(&a, 0, sizeof(a));
	a.cpu = -1;
	nl_sample_add(&a, &b);
	b.measured &= ~NL_M_LATENCY;
	b.cpu = 3;
	nl_sample_add(&a, &b);
	assert_true(fabs(a.instructions - 12e9) < 1);
	assert_true(fabs(a.wall_s - 4) < 1e-12);
	assert_int_equal(a.cpu, 3);
	/* A field is measured only if every part measured it. */
	assert_false(a.measured & NL_M_LATENCY);
	assert_true(a.measured & NL_M_INSTRUCTIONS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perf_all_terms),
		cmocka_unit_test(perf_exponents),
		cmocka_unit_test(perf_missing_latency_and_oi),
		cmocka_unit_test(perf_software_only),
		cmocka_unit_test(perf_nothing),
		cmocka_unit_test(record_ageing),
		cmocka_unit_test(relative_per_process),
		cmocka_unit_test(sample_accumulates),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
