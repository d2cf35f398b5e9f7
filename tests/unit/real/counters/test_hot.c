/*
 * Unit tests of hot pages (issue 9; docs/real-node.md, "Hot pages"): the
 * table of sampled pages (counts, decay, the hottest of a node first), the
 * samples of a real kernel ring counted into it (page faults stand in for
 * PEBS here, where there is no PMU), and, on a kernel with two NUMA nodes
 * or more (make guest-check), the real node's page moves taking the
 * sampled pages first. On one node that last case skips.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <numa.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "hot.h"
#include "latency.h"
#include "latency_fixtures.h"
#include "real_priv.h"

#define PG 4096ULL

static void counts_and_order(void **state)
{
	(void)state;
	struct nl_hot *h = nl_hot_new();
	uint64_t p[8];

	assert_non_null(h);
	/* Page 3 sampled 3 times on node 0, page 1 twice, page 2 once; page 9
	 * on node 1. Any byte of a page is that page. */
	for (int i = 0; i < 3; i++)
		nl_hot_add(h, 3 * PG + 17 * (uint64_t)i, PG, 0);
	nl_hot_add(h, 1 * PG, PG, 0);
	nl_hot_add(h, 1 * PG + 4095, PG, 0);
	nl_hot_add(h, 2 * PG, PG, 0);
	nl_hot_add(h, 9 * PG, PG, 1);
	nl_hot_add(h, 0, PG, 0); /* no address: not a page */
	assert_int_equal(h->used, 4);
	assert_int_equal(h->samples, 7);
	assert_int_equal(nl_hot_pick(h, 0, p, 8), 3);
	assert_true(p[0] == 3 * PG && p[1] == 1 * PG && p[2] == 2 * PG);
	assert_int_equal(nl_hot_pick(h, 0, p, 2), 2);
	assert_int_equal(nl_hot_pick(h, 1, p, 8), 1);
	assert_true(p[0] == 9 * PG);
	assert_int_equal(nl_hot_pick(h, 2, p, 8), 0);
	/* Moved: now a page of node 1, the hottest there. */
	nl_hot_moved(h, 3 * PG, 1);
	nl_hot_moved(h, 77 * PG, 1); /* not held: nothing */
	assert_int_equal(nl_hot_pick(h, 1, p, 8), 2);
	assert_true(p[0] == 3 * PG && p[1] == 9 * PG);
	assert_int_equal(h->used, 4);
	/* Decay: counts halve, pages sampled once are forgotten. */
	nl_hot_decay(h);
	assert_int_equal(h->used, 2);
	assert_int_equal(nl_hot_pick(h, 0, p, 8), 1);
	assert_true(p[0] == 1 * PG);
	nl_hot_free(h);
}

/* A full table halves its counts to make room: what is hot now wins over
 * a crowd of pages sampled once long ago, and the table never overflows. */
static void full_table(void **state)
{
	(void)state;
	struct nl_hot *h = nl_hot_new();
	uint64_t p[4];

	for (int r = 0; r < 4; r++)
		nl_hot_add(h, 5000 * PG, PG, 0);
	for (uint64_t i = 1; i <= 3 * NL_HOT_SLOTS; i++) {
		nl_hot_add(h, (10000 + i) * PG, PG, 0);
		assert_true(h->used <= NL_HOT_SLOTS * 3 / 4);
	}
	/* The page hot before the crowd came is gone or no hotter than
	 * what came after; the crowd's last pages are held. */
	for (int r = 0; r < 6; r++)
		nl_hot_add(h, 7 * PG, PG, 0);
	assert_int_equal(nl_hot_pick(h, 0, p, 1), 1);
	assert_true(p[0] == 7 * PG);
	assert_int_equal(h->samples, 4 + 3 * NL_HOT_SLOTS + 6);
	nl_hot_free(h);
}

/* Counts halve every NL_HOT_DECAY_SAMPLES samples even when the table has
 * room: one page sampled over and over does not stay hot for ever. */
static void decay_by_samples(void **state)
{
	(void)state;
	struct nl_hot *h = nl_hot_new();
	uint64_t p[2];

	nl_hot_add(h, 1 * PG, PG, 0);
	for (int i = 0; i < NL_HOT_DECAY_SAMPLES - 1; i++)
		nl_hot_add(h, 2 * PG, PG, 0);
	assert_int_equal(h->used, 2);
	nl_hot_add(h, 2 * PG, PG, 0); /* the decay comes before this one */
	assert_int_equal(h->used, 1);
	assert_int_equal(nl_hot_pick(h, 0, p, 2), 1);
	assert_true(p[0] == 2 * PG);
	nl_hot_free(h);
}

static unsigned char *mapped(size_t n)
{
	unsigned char *m = mmap(NULL, n * page_size(), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	/* One fault per page, not per huge page. */
	madvise(m, n * page_size(), MADV_NOHUGEPAGE);
	return m;
}

/* Fault in pages [first, first + n) of m again: each fault is a sample. */
static void fault_again(unsigned char *m, size_t first, size_t n)
{
	madvise(m + first * page_size(), n * page_size(), MADV_DONTNEED);
	for (size_t i = first; i < first + n; i++)
		m[i * page_size()] = 2;
}

/* A kernel ring's samples reach the table through the counters' read. */
static void kernel_samples_counted(void **state)
{
	(void)state;
	struct nl_lat_pmu pmu = fault_pmu();
	struct nl_tcounters *c;
	struct nl_hot *h = nl_hot_new();
	struct nl_sample s;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	unsigned char *m = mapped(64);
	uint64_t p[64];
	int map[1];

	assert_int_equal(
		nl_counters_open(NL_BACKEND_SOFTWARE, getpid(), tid, &c), 0);
	assert_null(nl_counters_sampler(c));
	assert_int_equal(nl_counters_attach_latency(c, &pmu), 0);
	assert_string_equal(nl_counters_sampler(c), "raw event");
	fault_again(m, 0, 64);
	map[0] = 0;
	{
		int os = -1;
		assert_int_equal(get_mempolicy(&os, NULL, 0, m,
					       MPOL_F_NODE | MPOL_F_ADDR),
				 0);
		map[0] = os;
	}
	nl_counters_set_node_map(c, map, 1);
	assert_int_equal(nl_counters_read_hot(c, &s, h), 0);
	assert_true(h->samples >= 64);
	/* Twice for pages 16..31: the hottest of the node. */
	fault_again(m, 16, 16);
	assert_int_equal(nl_counters_read_hot(c, &s, h), 0);
	assert_int_equal(nl_hot_pick(h, map[0], p, 16), 16);
	for (int i = 0; i < 16; i++)
		assert_true(p[i] ==
			    (uint64_t)(uintptr_t)(m + (16 + (size_t)i) *
							      page_size()));
	munmap(m, 64 * page_size());
	nl_counters_close(c);
	nl_hot_free(h);
}

static int node_of(void *addr)
{
	int node = -1;
	if (get_mempolicy(&node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR))
		return -1;
	return node;
}

/*
 * On two nodes: this process, managed by the real machine, has NA pages on
 * node 0; its last NH pages are faulted again (three times, so hotter
 * than any page faulted once or twice), sampled by its main thread's counters,
 * and a move of NH pages' bytes from node 0 to node 1 takes exactly those
 * pages, not the first NH of the mapping, which a move without samples takes.
 */
#define NA 2048
#define NH 128
static void moves_take_hot_pages_first(void **state)
{
	(void)state;
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	struct nl_proc_opts po = {.job = 1};
	struct nl_lat_pmu pmu = fault_pmu();
	const struct nl_thread_info *ti;
	const struct nl_process_info *pi;
	struct nl_sample s;
	struct rthread *t = NULL;
	char err[256];
	size_t n;
	int pid = getpid(), tid = (int)syscall(SYS_gettid), d0 = -1, d1 = -1;
	double moved = 0;
	unsigned char *a;
	size_t hot_there = 0, cold_there = 0;

	if (numa_available() < 0 || numa_max_node() < 1 ||
	    nl_topology_load(NULL, &topo, err, sizeof(err)) < 0)
		skip(); /* one node: a page has nowhere to go */
	for (int i = 0; i < topo->nnodes; i++) {
		if (topo->node_os[i] == 0)
			d0 = i;
		if (topo->node_os[i] == 1)
			d1 = i;
	}
	assert_true(d0 >= 0 && d1 >= 0);
	assert_int_equal(nl_real_create(topo, &o, &m, err, sizeof(err)), 0);
	/* Its memory on node 0 (preferred: not a policy of the mapping's
	 * own, which numalot would leave alone). */
	numa_set_preferred(0);
	a = mapped(NA);
	for (size_t i = 0; i < NA; i++)
		a[i * page_size()] = 1;
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
	for (size_t i = 0; i < R(m)->nth; i++)
		if (R(m)->th[i].tid == tid)
			t = &R(m)->th[i];
	assert_true(t && t->ctr);
	assert_int_equal(nl_counters_attach_latency(t->ctr, &pmu), 0);
	for (int round = 0; round < 3; round++) {
		fault_again(a, NA - NH, NH);
		assert_int_equal(m->ops->sample(m, tid, &s), 0);
	}
	assert_int_equal(m->ops->sample(m, tid, &s), 0);
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(pi[0].real.hot_source, "raw event");
	assert_true(pi[0].real.hot_pages >= NH &&
		    pi[0].real.hot_samples >= 3 * NH);
	assert_int_equal(m->ops->move_pages(m, pid, d0, d1,
					    (double)(NH * page_size()), 0,
					    &moved),
			 0);
	assert_true(moved == (double)(NH * page_size()));
	for (size_t i = 0; i < NA; i++) {
		int nd = node_of(a + i * page_size());
		if (i >= NA - NH)
			hot_there += nd == 1;
		else
			cold_there += nd == 1;
	}
	if (hot_there != NH) {
		/* What the table held: say it before failing. */
		struct nl_hot *h = proc_of(R(m), pid)->hot;
		for (size_t i = 0; i < NL_HOT_SLOTS; i++)
			if (h->e[i].page &&
			    (h->e[i].count != 3 || h->e[i].node != 1))
				print_message(
					"page %#llx count %u node %d%s\n",
					(unsigned long long)h->e[i].page,
					h->e[i].count, h->e[i].node,
					h->e[i].page >= (uintptr_t)a &&
							h->e[i].page <
								(uintptr_t)(a +
									    NA * page_size())
						? " (in a)"
						: "");
		print_message("a = %p, %zu of its tail pages on node 1\n",
			      (void *)a, hot_there);
	}
	assert_int_equal(hot_there, NH);
	assert_int_equal(cold_there, 0);
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	assert_true(pi[0].real.hot_moved_bytes == (double)(NH * page_size()));
	numa_set_localalloc();
	munmap(a, NA * page_size());
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_and_order),
		cmocka_unit_test(full_table),
		cmocka_unit_test(decay_by_samples),
		cmocka_unit_test(kernel_samples_counted),
		cmocka_unit_test(moves_take_hot_pages_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
