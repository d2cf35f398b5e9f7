/* Unit tests: topology from synthetic descriptions and project-made XML. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology.h"

static void synthetic_maps(void **state)
{
	(void)state;
	struct nl_topology *t;
	char err[256];
	assert_int_equal(nl_topology_load("synthetic:pack:2 numa:2 core:4 pu:2",
					  &t, err, sizeof(err)),
			 0);
	assert_int_equal(t->nnodes, 4);
	assert_int_equal(t->ncpus, 32);
	assert_int_equal(t->ncores, 16);
	for (int n = 0; n < 4; n++)
		assert_int_equal(t->node_ncpus[n], 8);
	assert_int_equal(t->cpu_node[0], 0);
	assert_int_equal(t->cpu_node[31], 3);
	/* SMT siblings share a core. */
	assert_int_equal(t->cpu_core[0], t->cpu_core[1]);
	assert_int_not_equal(t->cpu_core[1], t->cpu_core[2]);
	/* No SLIT in a synthetic description: 10/21. */
	assert_int_equal(t->distances_from_os, 0);
	assert_int_equal(nl_topology_distance(t, 0, 0), 10);
	assert_int_equal(nl_topology_distance(t, 0, 3), 21);
	nl_topology_free(t);
}

/* Make an XML file with a 4-node distance matrix through hwloc itself. */
static void make_xml(const char *path)
{
	hwloc_topology_t hw;
	hwloc_obj_t objs[4];
	hwloc_uint64_t v[16];
	const unsigned d[4][4] = {{10, 16, 22, 22},
				  {16, 10, 22, 22},
				  {22, 22, 10, 16},
				  {22, 22, 16, 10}};
	assert_int_equal(hwloc_topology_init(&hw), 0);
	assert_int_equal(hwloc_topology_set_synthetic(hw, "numa:4 core:2 pu:1"),
			 0);
	assert_int_equal(hwloc_topology_load(hw), 0);
	for (int i = 0; i < 4; i++)
		objs[i] = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE,
						(unsigned)i);
	for (int i = 0; i < 16; i++)
		v[i] = d[i / 4][i % 4];
	hwloc_distances_add_handle_t h = hwloc_distances_add_create(
		hw, "test",
		HWLOC_DISTANCES_KIND_FROM_OS |
			HWLOC_DISTANCES_KIND_MEANS_LATENCY,
		0);
	assert_non_null(h);
	assert_int_equal(hwloc_distances_add_values(hw, h, 4, objs, v, 0), 0);
	assert_int_equal(hwloc_distances_add_commit(hw, h, 0), 0);
	assert_int_equal(hwloc_topology_export_xml(hw, path, 0), 0);
	hwloc_topology_destroy(hw);
}

static void xml_with_distances(void **state)
{
	(void)state;
	char path[] = "/tmp/numalot-topo-XXXXXX.xml";
	int fd = mkstemps(path, 4);
	struct nl_topology *t;
	char err[256];

	assert_true(fd >= 0);
	close(fd);
	make_xml(path);
	assert_int_equal(nl_topology_load(path, &t, err, sizeof(err)), 0);
	unlink(path);
	assert_int_equal(t->nnodes, 4);
	assert_int_equal(t->ncpus, 8);
	assert_int_equal(t->distances_from_os, 1);
	assert_int_equal(nl_topology_distance(t, 0, 1), 16);
	assert_int_equal(nl_topology_distance(t, 1, 2), 22);
	assert_int_equal(nl_topology_distance(t, 3, 2), 16);
	assert_int_equal(nl_topology_distance(t, 2, 2), 10);
	nl_topology_free(t);
}

/* A cpuset's view (tests/data/2n4c-node0-disallowed.xml: node 0's memory
 * not allowed): CPUs local to no allowed node still get one, the first
 * whose CPUs share their nearest ancestor, never -1 (an index into every
 * per-node array: best-static's search crashed on such a machine). */
static void cpus_of_a_disallowed_node(void **state)
{
	struct nl_topology *t;
	char err[256];

	(void)state;
	assert_int_equal(
		nl_topology_load("tests/data/2n4c-node0-disallowed.xml", &t,
				 err, sizeof(err)),
		0);
	assert_int_equal(t->nnodes, 1);
	assert_int_equal(t->ncpus, 8);
	for (int c = 0; c < t->ncpus; c++)
		assert_int_equal(t->cpu_node[c], 0);
	assert_int_equal(t->node_ncpus[0], 8);
	nl_topology_free(t);
}

static void bad_specs(void **state)
{
	(void)state;
	struct nl_topology *t;
	char err[256];
	assert_true(nl_topology_load("numa:2 bogus:4", &t, err, sizeof(err)) <
		    0);
	assert_null(t);
	assert_non_null(strstr(err, "bogus"));
	assert_true(nl_topology_load("/nonexistent/x.xml", &t, err,
				     sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/x.xml"));
}

static void cpulist_and_distances(void **state)
{
	(void)state;
	struct nl_topology *t;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	assert_int_equal(nl_topology_load("numa:2 core:4 pu:1", &t, NULL, 0),
			 0);
	assert_int_equal(nl_topology_parse_cpulist(t, "1-2,6", b), 0);
	assert_int_equal(hwloc_bitmap_weight(b), 3);
	assert_true(hwloc_bitmap_isset(b, 6));
	assert_int_equal(nl_topology_parse_cpulist(t, "0-8", b), -EINVAL);
	assert_int_equal(nl_topology_parse_cpulist(t, "x", b), -EINVAL);
	unsigned good[] = {10, 20, 20, 10}, bad[] = {10, 5, 20, 10};
	assert_int_equal(nl_topology_set_distances(t, bad), -EINVAL);
	assert_int_equal(nl_topology_set_distances(t, good), 0);
	assert_int_equal(nl_topology_distance(t, 1, 0), 20);
	assert_int_equal(nl_topology_cpu_from_os(t, 7), 7);
	assert_int_equal(nl_topology_cpu_from_os(t, 8), -1);
	hwloc_bitmap_free(b);
	nl_topology_free(t);
}

static void live_machine(void **state)
{
	(void)state;
	struct nl_topology *t;
	assert_int_equal(nl_topology_load("live", &t, NULL, 0), 0);
	assert_true(t->ncpus >= 1);
	assert_true(t->nnodes >= 1);
	nl_topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(synthetic_maps),
		cmocka_unit_test(xml_with_distances),
		cmocka_unit_test(cpus_of_a_disallowed_node),
		cmocka_unit_test(bad_specs),
		cmocka_unit_test(cpulist_and_distances),
		cmocka_unit_test(live_machine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
