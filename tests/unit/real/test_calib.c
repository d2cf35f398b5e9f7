/* Unit tests: numalot calibrate's measurements (core/real/calib.c) on this
 * machine, small and short: they run, give figures of the right sign, say
 * where their memory was, refuse bad requests, and find SMT siblings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"
#include "topology.h"

#define MIB ((size_t)1 << 20)

static struct nl_topology *live(void)
{
	struct nl_topology *t;
	char err[256];
	assert_int_equal(nl_topology_load("live", &t, err, sizeof(err)), 0);
	return t;
}

static void latency_and_bandwidth_here(void **state)
{
	struct nl_topology *t = live();
	struct nl_calib_result r;
	char err[256];
	(void)state;

	assert_int_equal(
		nl_calib_latency(t, 0, 0, 4 * MIB, 0.05, &r, err, sizeof(err)),
		0);
	/* A load takes between a tenth of a ns and a ms. */
	assert_true(r.value > 0.1 && r.value < 1e6);
	assert_true(r.count > 0 && r.seconds >= 0.05);
	/* Where libnuma works, the pages were found on the node asked. */
	assert_true(r.on_node < 0 || r.on_node == 1);
	assert_int_equal(nl_calib_bandwidth(t, 0, 0, nl_calib_node_cores(t, 0),
					    4 * MIB, 0.05, &r, err,
					    sizeof(err)),
			 0);
	assert_true(r.value > 1e6);
	assert_true(r.count >= MIB);
	nl_topology_free(t);
}

static void bad_requests_refused(void **state)
{
	struct nl_topology *t = live();
	struct nl_calib_result r;
	char err[256];
	int cores = nl_calib_node_cores(t, 0);
	(void)state;

	assert_int_equal(nl_calib_latency(t, 0, t->nnodes, 4 * MIB, 0.01, &r,
					  err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(
		nl_calib_latency(t, 0, 0, 1024, 0.01, &r, err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "64 KiB"));
	assert_int_equal(nl_calib_bandwidth(t, 0, 0, cores + 1, 4 * MIB, 0.01,
					    &r, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "core"));
	nl_topology_free(t);
}

/* SMT: siblings are found from the topology. This machine's CPUs 0 and 1
 * described as two hardware threads of one core (hwloc binds on a
 * described topology when told it is this system's): the loop runs and
 * the pair's yield is a number of cores within reason (two real cores
 * here: up to 2, less on a busy machine). No sibling: -ENOTSUP, said. */
static void smt_siblings(void **state)
{
	struct nl_topology *t;
	char err[256];
	double y = 0, alone = 0;
	(void)state;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	setenv("HWLOC_THISSYSTEM", "1", 1);
	assert_int_equal(
		nl_topology_load("numa:1 core:1 pu:2", &t, err, sizeof(err)),
		0);
	assert_int_equal(nl_calib_smt(t, 0.05, &y, &alone, err, sizeof(err)),
			 0);
	assert_true(alone > 1e6);
	assert_true(y > 0.2 && y < 2.5);
	nl_topology_free(t);
	assert_int_equal(
		nl_topology_load("numa:1 core:2 pu:1", &t, err, sizeof(err)),
		0);
	assert_int_equal(nl_calib_smt(t, 0.05, &y, &alone, err, sizeof(err)),
			 -ENOTSUP);
	assert_non_null(strstr(err, "no SMT"));
	nl_topology_free(t);
	unsetenv("HWLOC_THISSYSTEM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(latency_and_bandwidth_here),
		cmocka_unit_test(bad_requests_refused),
		cmocka_unit_test(smt_siblings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
