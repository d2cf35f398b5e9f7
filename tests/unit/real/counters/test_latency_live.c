/*
 * Unit tests of memory-latency sampling on this node, without a PMU:
 * address to node with move_pages on this process's memory, samples to
 * lat_count by dense node, and the whole path from a ring the kernel
 * writes to the counters' sample, driven by a software event that carries
 * addresses (page faults) in place of PEBS or IBS; the probe's wording.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <numa.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "latency.h"
#include "latency_fixtures.h"

/* The OS node holding addr, asked another way (get_mempolicy). */
static int node_of(void *addr)
{
	int node = -1;
	assert_int_equal(
		get_mempolicy(&node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR),
		0);
	return node;
}

static void *touched_pages(size_t n)
{
	unsigned char *m = mmap(NULL, n * page_size(), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	/* One fault per page, not per huge page. */
	madvise(m, n * page_size(), MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		m[i * page_size()] = 1;
	return m;
}

static void node_lookup(void **state)
{
	(void)state;
	const size_t n = 600; /* more than one move_pages batch */
	unsigned char *m = touched_pages(8), *gone, *untouched;
	uint64_t *addr = calloc(n + 4, sizeof(*addr));
	int *node = calloc(n + 4, sizeof(*node)), here = node_of(m);

	assert_true(here >= 0);
	if (numa_max_node() == 0)
		assert_int_equal(here, 0); /* this VM: one node */
	gone = mmap(NULL, page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	munmap(gone, page_size());
	untouched = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t i = 0; i < n; i++)
		addr[i] = (uint64_t)(uintptr_t)(m + (i % 8) * page_size() +
						i % 4000);
	addr[n] = (uint64_t)(uintptr_t)gone;
	addr[n + 1] = 0;
	addr[n + 2] = 0xffffffff81000000ull; /* a kernel address */
	addr[n + 3] = (uint64_t)(uintptr_t)untouched;
	assert_int_equal(nl_lat_nodes(getpid(), addr, n + 4, node), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(node[i], here);
	for (size_t i = n; i < n + 4; i++)
		assert_int_equal(node[i], -1); /* skipped, not a crash */
	assert_int_equal(nl_lat_nodes(999999999, addr, 1, node), -ESRCH);
	munmap(m, 8 * page_size());
	munmap(untouched, page_size());
	free(addr);
	free(node);
}

/* Synthetic PEBS samples on real addresses, to lat_count by dense node. */
static void collect_by_node(void **state)
{
	(void)state;
	unsigned char *m = touched_pages(4), *gone;
	struct nl_lat_pmu p = {.kind = NL_LAT_PEBS, .ns_per_cycle = 0.5};
	struct nl_lat_stats st = {0};
	struct nl_sample s;
	struct fake_ring f;
	struct nl_lat_ring r;
	int os = node_of(m);

	gone = mmap(NULL, page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	munmap(gone, page_size());
	fake_init(&f, 4096, 0);
	assert_int_equal(nl_lat_ring_init(&r, f.mem, f.len, ST_TEST), 0);
	for (int pass = 0; pass < 4; pass++) {
		for (int i = 0; i < 5; i++)
			fake_sample(
				&f, 1, 0,
				(uint64_t)(uintptr_t)(m + i % 4 * page_size()),
				200, DS_LOC_RAM);
		fake_sample(&f, 1, 0, (uint64_t)(uintptr_t)m, 40, DS_L3_HIT);
		fake_sample(&f, 1, 0, (uint64_t)(uintptr_t)m, 60, DS_L3_HIT);
		fake_sample(&f, 1, 0, (uint64_t)(uintptr_t)m, 0, DS_LOC_RAM);
		fake_sample(&f, 1, 0, (uint64_t)(uintptr_t)gone, 500,
			    DS_LOC_RAM);
		memset(&s, 0, sizeof(s));
		memset(&st, 0, sizeof(st));
		if (pass == 0) { /* one node */
			int map[1] = {os};
			struct nl_hot *h = nl_hot_new();
			uint64_t pg[8];
			assert_int_equal(nl_lat_collect(&r, &p, getpid(), map,
							1, &s, &st, h),
					 0);
			assert_true(s.measured & NL_M_LATENCY);
			assert_true(s.lat_count[0] == 5);
			assert_true(s.lat_sum_ns[0] == 5 * 100.0);
			/* The kept samples' pages, by node: page 0 twice
			 * (samples 0 and 4), pages 1 to 3 once; the others
			 * (cache hits, no latency, gone) not at all. */
			assert_int_equal(h->samples, 5);
			assert_int_equal(nl_hot_pick(h, os, pg, 8), 4);
			assert_true(pg[0] == (uint64_t)(uintptr_t)m);
			nl_hot_free(h);
		} else if (pass == 1) { /* OS node os is dense node 1 */
			int map[2] = {os + 1, os};
			assert_int_equal(nl_lat_collect(&r, &p, getpid(), map,
							2, &s, &st, NULL),
					 0);
			assert_true(s.lat_count[0] == 0 && s.lat_count[1] == 5);
			assert_true(s.lat_sum_ns[1] == 500.0);
		} else { /* a topology without that node, or no map yet */
			int map[1] = {os + 3};
			assert_int_equal(nl_lat_collect(&r, &p, getpid(), map,
							pass == 2 ? 1 : 0, &s,
							&st, NULL),
					 0);
			assert_false(s.measured & NL_M_LATENCY);
			assert_true(s.lat_count[0] == 0);
		}
		assert_true(st.records == 9 && st.filtered == 3);
		assert_true(st.kept + st.unresolved == 6);
		assert_true(f.meta->data_tail == f.meta->data_head);
	}
	munmap(m, 4 * page_size());
	free(f.mem);
}

/* ---- a ring the kernel writes: page faults stand in for PEBS ---- */

static void kernel_ring(void **state)
{
	(void)state;
	struct nl_lat_pmu p = fault_pmu();
	struct nl_lat_sampler *s;
	struct nl_sample out;
	const char *where = NULL;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	unsigned char *m;
	int map[1];

	assert_int_equal(nl_lat_open(&p, getpid(), tid, &s, &where), 0);
	m = touched_pages(64);
	map[0] = node_of(m);
	memset(&out, 0, sizeof(out));
	assert_int_equal(nl_lat_read(s, map, 1, &out, NULL), 0);
	assert_true(out.measured & NL_M_LATENCY);
	assert_true(out.lat_count[0] >= 64);
	assert_true(nl_lat_stats(s)->records >= 64);
	assert_true(nl_lat_stats(s)->lost == 0);
	munmap(m, 64 * page_size());
	/* More faults than the ring holds: the kernel drops and says so
	 * (its LOST record comes once there is room again). */
	m = touched_pages(3000);
	memset(&out, 0, sizeof(out));
	assert_int_equal(nl_lat_read(s, map, 1, &out, NULL), 0);
	munmap(touched_pages(4), 4 * page_size());
	assert_int_equal(nl_lat_read(s, map, 1, &out, NULL), 0);
	assert_true(nl_lat_stats(s)->lost > 0);
	assert_true(nl_lat_stats(s)->malformed == 0);
	munmap(m, 3000 * page_size());
	nl_lat_close(s);
	/* A thread that is not there. */
	assert_int_equal(nl_lat_open(&p, getpid(), 999999999, &s, &where),
			 -ESRCH);
	assert_string_equal(where, "perf_event_open");
	assert_null(s);
	assert_int_equal(nl_lat_try(&p, 0, NULL), 0);
}

/* The hook in the counters: attach, read by node, flag only with samples. */
static void counters_hook(void **state)
{
	(void)state;
	struct nl_lat_pmu p = fault_pmu();
	struct nl_tcounters *c;
	struct nl_sample s;
	const char *why;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	unsigned char *m;
	int map[2];

	assert_int_equal(
		nl_counters_open(NL_BACKEND_SOFTWARE, getpid(), tid, &c), 0);
	assert_true(nl_counters_latency(c, &why) < 0);
	assert_non_null(strstr(why, "software"));
	assert_int_equal(nl_counters_attach_latency(c, &p), 0);
	assert_int_equal(nl_counters_attach_latency(c, &p), -EEXIST);
	assert_int_equal(nl_counters_latency(c, NULL), 0);
	m = touched_pages(32);
	map[0] = node_of(m) + 1; /* dense 0 is another node */
	map[1] = node_of(m);
	nl_counters_set_node_map(c, map, 2);
	assert_int_equal(nl_counters_read(c, &s), 0);
	assert_true(s.measured & NL_M_LATENCY);
	assert_true(s.measured & NL_M_TASK_CLOCK);
	assert_true(s.lat_count[1] >= 32 && s.lat_count[0] == 0);
	/* No new samples: latency unknown, not zero. */
	assert_int_equal(nl_counters_read(c, &s), 0);
	assert_false(s.measured & NL_M_LATENCY);
	munmap(m, 32 * page_size());
	nl_counters_close(c);
}

/* The machine claims latency only where the probe found it usable. */
static void measured_claim(void **state)
{
	(void)state;
	struct nl_lat_pmu p = fault_pmu();
	int usable = nl_lat_default() != NULL;
	assert_int_equal(
		!!(nl_counters_measured(NL_BACKEND_PERF) & NL_M_LATENCY),
		usable);
	assert_int_equal(
		!!(nl_counters_measured(NL_BACKEND_PAPI) & NL_M_LATENCY),
		usable);
	assert_false(nl_counters_measured(NL_BACKEND_SOFTWARE) & NL_M_LATENCY);
	nl_lat_set_default(&p);
	assert_true(nl_counters_measured(NL_BACKEND_PERF) & NL_M_LATENCY);
	assert_true(nl_counters_measured(NL_BACKEND_PAPI) & NL_M_LATENCY);
	assert_false(nl_counters_measured(NL_BACKEND_SOFTWARE) & NL_M_LATENCY);
	nl_lat_set_default(NULL);
	assert_false(nl_counters_measured(NL_BACKEND_PERF) & NL_M_LATENCY);
}

/* On a node without PEBS or IBS the probe says so plainly. */
static void probe_says(void **state)
{
	(void)state;
	struct nl_probe p;
	const struct nl_probe_event *e = NULL;
	nl_counters_probe(0, &p);
	const struct nl_probe_backend *b = &p.backend[NL_BACKEND_PERF];
	for (int i = 0; i < b->nevents; i++)
		if (!strcmp(b->events[i].name, "memory-latency sampling"))
			e = &b->events[i];
	assert_non_null(e);
	if (access(NL_LAT_SYSFS "/cpu/events/mem-loads", F_OK) != 0 &&
	    access(NL_LAT_SYSFS "/cpu_core/events/mem-loads", F_OK) != 0 &&
	    access(NL_LAT_SYSFS "/ibs_op", F_OK) != 0) {
		assert_false(e->available);
		assert_non_null(strstr(e->reason, "neither Intel PEBS "
						  "mem-loads nor AMD IBS"));
		assert_null(strstr(b->reason, "latency by node"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(node_lookup),
		cmocka_unit_test(collect_by_node),
		cmocka_unit_test(kernel_ring),
		cmocka_unit_test(counters_hook),
		cmocka_unit_test(measured_claim),
		cmocka_unit_test(probe_says),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
