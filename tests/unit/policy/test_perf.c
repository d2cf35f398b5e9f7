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
#include "policy.h"

static struct nl_perf_params P;

/* The defaults, as the policy's parameters set them (params.c). */
static void perf_defaults(struct nl_perf_params *p)
{
	struct nl_policy_params pp;
	nl_policy_params_default(&pp);
	*p = pp.perf;
}

static int setup(void **state)
{
	(void)state;
	perf_defaults(&P);
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
	perf_defaults(&P);
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

	/* The same threads grouped already (no sort): the same figures. */
	double perf2[] = {1, 3, 99, 10, 30};
	int group2[] = {7, 7, 7, 9, 9};
	unsigned char has2[] = {1, 1, 0, 1, 1};
	nl_perf_relative(perf2, group2, has2, 5, rel);
	assert_true(fabs(rel[0] - 0.5) < 1e-12);
	assert_true(fabs(rel[1] - 1.5) < 1e-12);
	assert_true(fabs(rel[2] - 1.0) < 1e-12);
	assert_true(fabs(rel[3] - 0.5) < 1e-12);
	assert_true(fabs(rel[4] - 1.5) < 1e-12);
}

/* A record keeps the last NL_RECORD_SLOTS nodes noted: a ninth node
 * takes the oldest note's place; a node noted again keeps its own. */
static void record_keeps_the_last_nodes(void **state)
{
	(void)state;
	struct nl_record r;
	memset(&r, 0, sizeof(r)); /* zeroed: empty, as cleared */
	double v;
	for (int n = 0; n < NL_RECORD_SLOTS; n++)
		nl_record_note(&r, n, 10 + n, 100.0 + n);
	nl_record_note(&r, 0, 50, 100.0 + NL_RECORD_SLOTS); /* node 0 anew */
	nl_record_note(&r, 40, 7, 101.0 + NL_RECORD_SLOTS); /* node 1 out */
	assert_int_equal(nl_record_get(&r, &P, 1, 101.0 + NL_RECORD_SLOTS, &v),
			 0);
	assert_int_equal(nl_record_get(&r, &P, 40, 101.0 + NL_RECORD_SLOTS, &v),
			 1);
	assert_true(fabs(v - 7) < 1e-12);
	assert_int_equal(nl_record_get(&r, &P, 0, 101.0 + NL_RECORD_SLOTS, &v),
			 1);
	assert_true(fabs(v - 50) < 1e-12);
	for (int n = 2; n < NL_RECORD_SLOTS; n++) {
		assert_int_equal(nl_record_get(&r, &P, n, 100.0 + n, &v), 1);
		assert_true(fabs(v - (10 + n)) < 1e-12);
	}
	assert_int_equal(nl_record_get(&r, &P, NL_MAX_NODES, 100.0, &v), 0);
}

static void sample_accumulates(void **state)
{
	(void)state;
	double nodes[3][2] = {{0}};
	struct nl_sample_sum a = {.lat_count = nodes[0],
				  .lat_sum_ns = nodes[1],
				  .access = nodes[2]};
	struct nl_sample b = full_sample(), s;
	nl_sample_sum_clear(&a, 2);
	nl_sample_sum_add(&a, &b, 2);
	b.measured &= ~NL_M_LATENCY;
	b.cpu = 3;
	nl_sample_sum_add(&a, &b, 2);
	nl_sample_sum_get(&a, 2, &s);
	assert_true(fabs(s.instructions - 12e9) < 1);
	assert_true(fabs(s.wall_s - 4) < 1e-12);
	assert_int_equal(s.cpu, 3);
	/* A field is measured only if every part measured it. */
	assert_false(s.measured & NL_M_LATENCY);
	assert_true(s.measured & NL_M_INSTRUCTIONS);
	/* By node: the first sample's latency, kept in the caller's two. */
	assert_true(fabs(s.lat_count[0] - b.lat_count[0]) < 1e-12);
	assert_true(fabs(s.lat_sum_ns[1] - b.lat_sum_ns[1]) < 1e-12);
	nl_sample_sum_clear(&a, 2);
	assert_int_equal(a.cpu, -1);
	assert_true(a.wall_s == 0 && nodes[0][0] == 0 && nodes[1][1] == 0);
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
		cmocka_unit_test(record_keeps_the_last_nodes),
		cmocka_unit_test(sample_accumulates),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
