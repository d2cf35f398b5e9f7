/*
 * numalot: the baselines on tiny scenarios (core/sim/os.c, search.c,
 * run.c): each one's defining behaviour (docs/machine-model.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "machine.h"
#include "model.h"
#include "run.h"
#include "scenario.h"
#include "search.h"

/* Scenario text with ' for " (readable JSON in C strings). */
static struct nl_scenario *parse(const char *fmt, ...)
{
	char text[4096], err[512] = "";
	struct nl_scenario *sc;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (char *p = text; *p; p++)
		if (*p == '\'')
			*p = '"';
	if (nl_scenario_parse(text, "test.json", NULL, &sc, err, sizeof(err)) <
	    0)
		fail_msg("scenario: %s", err);
	return sc;
}

/* Two nodes of two cores; noise off. */
#define TWO                                                                    \
	"'machine': {'topology': 'numa:2 core:2 pu:1', 'distances': "          \
	"[[10, 20], [20, 10]], 'noise': 0}"

/* A copy of one run's result (the set that made it is gone). */
struct run {
	double makespan, mean;
	int os_moves, moves, nthreads, nprocs;
	int cpu[16];
	double end[8];
	double pages;
};

static void run(const struct nl_scenario *sc, enum nl_run_kind k, uint64_t seed,
		struct run *out)
{
	struct nl_runs *rs;
	const struct nl_run_result *r;
	char err[512] = "";

	struct nl_run_opts o;
	/* These tests pin down the idealised Linux model's documented
	 * behaviour (linux-ideal); kernel_like_costs covers linux. */
	nl_run_opts_default(&o);
	o.os_set = 1;
	o.os_mode = NL_OS_LINUX_IDEAL;
	assert_int_equal(nl_runs_create(sc, seed, &o, &rs), 0);
	if (nl_runs_get(rs, k, &r, err, sizeof(err)) < 0)
		fail_msg("%s: %s", nl_run_name(k), err);
	assert_true(r->nthreads <= 16 && r->nprocs <= 8);
	memset(out, 0, sizeof(*out));
	out->makespan = r->makespan_s;
	out->mean = r->mean_completion_s;
	out->os_moves = r->os_migrations;
	out->moves = r->migrations;
	out->nthreads = r->nthreads;
	out->nprocs = r->nprocs;
	out->pages = r->pages_migrated_bytes;
	memcpy(out->cpu, r->final_cpu, sizeof(int) * (size_t)r->nthreads);
	memcpy(out->end, r->end_s, sizeof(double) * (size_t)r->nprocs);
	assert_int_equal(r->unfinished, 0);
	nl_runs_free(rs);
}

static int node_of_cpu(const struct nl_scenario *sc, int cpu)
{
	return nl_scenario_topology(sc)->cpu_node[cpu];
}

/*
 * Four short threads and two long ones (B) on four CPUs: the B threads
 * share CPUs until the short ones end, then the load balancer spreads
 * them. B's data is on node X (large, so that page migration is slow).
 * Compute-bound with no memory traffic: the data's place cannot change
 * any time, only decisions that look at it.
 */
#define OVERLOAD                                                               \
	"{" TWO ", 'processes': [{'kind': 'compute', 'threads': 4, "           \
	"'work': 1e9, 'bytes_per_op': 0}, {'kind': 'compute', 'threads': 2, "  \
	"'work': 2e10, 'bytes_per_op': 0, 'mem_bytes': 64e9, "                 \
	"'placement': 'node:%d'}]}"

static void nonuma_never_looks_at_data(void **state)
{
	struct nl_scenario *a = parse(OVERLOAD, 0), *b = parse(OVERLOAD, 1);
	struct run ra, rb, la, lb;

	(void)state;
	run(a, NL_RUN_LINUX_NONUMA, 1, &ra);
	run(b, NL_RUN_LINUX_NONUMA, 1, &rb);
	/* The load balancer did move threads... */
	assert_int_equal(ra.os_moves, 2);
	assert_true(ra.pages == 0 && rb.pages == 0);
	/* ...and did exactly the same whichever node holds the data. */
	assert_int_equal(rb.os_moves, ra.os_moves);
	assert_memory_equal(ra.cpu, rb.cpu, sizeof(ra.cpu));
	assert_memory_equal(ra.end, rb.end, sizeof(ra.end));
	/* The two B threads ended one per node, each near where it was. */
	assert_int_not_equal(node_of_cpu(a, ra.cpu[4]),
			     node_of_cpu(a, ra.cpu[5]));
	/* linux, with NUMA balancing, takes both B threads to their data. */
	run(a, NL_RUN_LINUX, 1, &la);
	run(b, NL_RUN_LINUX, 1, &lb);
	for (int k = 4; k < 6; k++) {
		assert_int_equal(node_of_cpu(a, la.cpu[k]), 0);
		assert_int_equal(node_of_cpu(b, lb.cpu[k]), 1);
	}
	nl_scenario_free(a);
	nl_scenario_free(b);
}

/* One latency-bound thread on node 1, its data on node 0. */
#define REMOTE                                                                 \
	"{" TWO ", 'processes': [%s{'kind': 'latency', 'threads': 1, "         \
	"'work': 4e9, 'placement': '%s:0', 'start_node': 1, "                  \
	"'mem_bytes': 64e9}]}"

static struct nl_machine *machine(const struct nl_scenario *sc,
				  enum nl_os_mode os)
{
	struct nl_model_opts o = {.os_set = 1, .os_mode = os};
	struct nl_machine *m;
	char err[512];

	assert_int_equal(nl_sim_create_opts(sc, 1, &o, &m, err, sizeof(err)),
			 0);
	return m;
}

static void linux_moves_thread_towards_data(void **state)
{
	struct nl_scenario *sc = parse(REMOTE, "", "node");
	struct nl_machine *m = machine(sc, NL_OS_LINUX_IDEAL);
	struct nl_model *md = nl_sim_model(m);
	struct nl_model_thread *t = nl_model_thread(md, 1000);
	struct run lx, nn;

	(void)state;
	/* The first NUMA decision comes after the scan delay and one scan
	 * period (1 + 1 s): the thread moves to a free CPU of node 0. */
	assert_int_equal(md->topo->cpu_node[t->cpu], 1);
	m->ops->wait(m, 1.95);
	assert_int_equal(md->topo->cpu_node[t->cpu], 1);
	m->ops->wait(m, 0.1);
	assert_int_equal(md->topo->cpu_node[t->cpu], 0);
	assert_int_equal(md->os_moves, 1);
	nl_machine_destroy(m);

	run(sc, NL_RUN_LINUX, 1, &lx);
	run(sc, NL_RUN_LINUX_NONUMA, 1, &nn);
	assert_int_equal(lx.os_moves, 1);
	assert_int_equal(node_of_cpu(sc, lx.cpu[0]), 0);
	assert_int_equal(nn.os_moves, 0);
	assert_int_equal(node_of_cpu(sc, nn.cpu[0]), 1);
	assert_true(lx.makespan < nn.makespan * 0.85);
	nl_scenario_free(sc);

	/* Bound memory (membind): no NUMA hinting faults, no move. */
	sc = parse(REMOTE, "", "bind");
	run(sc, NL_RUN_LINUX, 1, &lx);
	assert_int_equal(lx.os_moves, 0);
	assert_true(lx.pages == 0);
	nl_scenario_free(sc);
}

/* No free CPU on the data's node: a swap only if it helps both. */
static void linux_swaps_only_when_both_gain(void **state)
{
	/* Node 0 busy with threads whose data is on node 0 (until after
	 * the remote thread ends): no move. */
	struct nl_scenario *sc =
		parse(REMOTE,
		      "{'kind': 'compute', 'threads': 2, 'start_node': 0, "
		      "'work': 1e11, 'mem_bytes': 64e9}, ",
		      "node");
	struct run r;

	(void)state;
	run(sc, NL_RUN_LINUX, 1, &r);
	assert_int_equal(r.os_moves, 0);
	assert_int_equal(node_of_cpu(sc, r.cpu[2]), 1);
	nl_scenario_free(sc);
	/* Their data on node 1, and node 1 full (the remote thread and one
	 * content with its place): the remote thread swaps with one of
	 * them, and nothing else moves. */
	sc = parse(REMOTE,
		   "{'kind': 'compute', 'threads': 2, 'start_node': 0, "
		   "'work': 1e11, 'mem_bytes': 64e9, 'placement': 'node:1'}, "
		   "{'kind': 'compute', 'threads': 1, 'start_node': 1, "
		   "'work': 1e11, 'mem_bytes': 64e9, 'placement': 'node:1'}, ",
		   "node");
	run(sc, NL_RUN_LINUX, 1, &r);
	assert_int_equal(node_of_cpu(sc, r.cpu[3]), 0);
	assert_int_equal(r.os_moves, 2);
	assert_int_equal(node_of_cpu(sc, r.cpu[2]), 1);
	nl_scenario_free(sc);
}

/* Pages of a pinned thread follow it, at most at the rate limit. */
static void linux_migrates_pages_of_pinned_threads(void **state)
{
	struct nl_scenario *sc = parse(
		"{'machine': {'topology': 'numa:2 core:2 pu:1', 'noise': 0, "
		"'page_migration_bytes_per_s': 1e7, 'numa_scan_bytes': 1e12}, "
		"'processes': [{'kind': 'latency', 'threads': 1, "
		"'placement': 'node:0', 'start_node': 1, 'mem_bytes': 1e9}]}");
	struct nl_machine *m = machine(sc, NL_OS_LINUX_IDEAL);
	struct nl_model *md = nl_sim_model(m);
	struct nl_model_thread *t = nl_model_thread(md, 1000);

	(void)state;
	assert_int_equal(m->ops->place(m, 1000, 3), 0);
	m->ops->wait(m, 5);
	assert_int_equal(t->cpu, 3); /* pinned: never moved */
	assert_int_equal(md->os_moves, 0);
	/* 4 s after the scan delay at 1e7 B/s into node 1: 4e7 B. */
	assert_true(fabs(md->pages_migrated_bytes - 4e7) < 2e5);
	assert_true(fabs(t->priv_frac[1] - 4e7 / (0.8 * 1e9)) < 1e-3);
	assert_true(t->data_frac[1] > 0);
	nl_machine_destroy(m);
	/* linux-nonuma never moves pages. */
	m = machine(sc, NL_OS_LINUX_NONUMA);
	md = nl_sim_model(m);
	assert_int_equal(m->ops->place(m, 1000, 3), 0);
	m->ops->wait(m, 5);
	assert_true(md->pages_migrated_bytes == 0);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
}

/* Tiny scenarios where placement matters in different ways. */
static const char *const tiny[] = {
	/* master: half the threads away from the data */
	"{" TWO ", 'processes': [{'kind': 'latency', 'threads': 4, "
	"'work': 3e9, 'placement': 'master'}]}",
	/* a bandwidth-bound and a latency-bound process, first-touch,
	 * the second later */
	"{" TWO ", 'processes': [{'kind': 'stream', 'threads': 2, "
	"'work': 3e9}, {'kind': 'latency', 'threads': 2, 'work': 2e9, "
	"'start_s': 0.5, 'placement': 'master'}]}",
	/* oversubscribed: 6 threads on 4 CPUs */
	"{" TWO ", 'processes': [{'kind': 'mixed', 'threads': 3, "
	"'work': 3e9}, {'kind': 'compute', 'threads': 3, 'work': 6e9}]}",
};

static void best_static_and_ideal_bounds(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tiny) / sizeof(tiny[0]); i++) {
		struct nl_scenario *sc = parse("%s", tiny[i]);
		struct run st, bs, il;

		run(sc, NL_RUN_STATIC, 3, &st);
		run(sc, NL_RUN_BEST_STATIC, 3, &bs);
		run(sc, NL_RUN_IDEAL_LOCALITY, 3, &il);
		print_message("tiny[%zu]: static %.3f, best-static %.3f, "
			      "ideal-locality %.3f\n",
			      i, st.makespan, bs.makespan, il.makespan);
		assert_true(bs.makespan <= st.makespan);
		assert_true(il.makespan <= bs.makespan);
		assert_int_equal(bs.moves, 0);
		assert_int_equal(il.moves, 0);
		nl_scenario_free(sc);
	}
}

/* Master initialisation, half the threads away from the data and room
 * next to it: best-static must find the local placement. */
static void best_static_finds_locality(void **state)
{
	struct nl_scenario *sc = parse(
		"{'machine': {'topology': 'numa:2 core:4 pu:1', 'noise': 0}, "
		"'processes': [{'kind': 'latency', 'threads': 4, 'work': 3e9, "
		"'placement': 'master', 'mem_bytes': 64e9}]}");
	struct run st, bs;

	(void)state;
	run(sc, NL_RUN_STATIC, 1, &st);
	run(sc, NL_RUN_BEST_STATIC, 1, &bs);
	assert_true(bs.makespan < st.makespan * 0.95);
	/* Everything where the data is: all four threads on one node. */
	for (int k = 1; k < 4; k++)
		assert_int_equal(node_of_cpu(sc, bs.cpu[k]),
				 node_of_cpu(sc, bs.cpu[0]));
	nl_scenario_free(sc);
}

/* The climb never ends above where it started, and is bounded. */
static void climb_improves_from_start(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tiny) / sizeof(tiny[0]); i++) {
		struct nl_scenario *sc = parse("%s", tiny[i]);
		int a[16], b[16], evals;
		double c0, c1;

		assert_int_equal(nl_search_packed(sc, 0, a), 0);
		memcpy(b, a, sizeof(a));
		assert_int_equal(nl_search_climb(sc, 0, 1, a, &c0, &evals), 0);
		assert_int_equal(evals, 1);
		assert_memory_equal(a, b, sizeof(a)); /* no budget: no move */
		assert_int_equal(nl_search_climb(sc, 0, 1000, b, &c1, &evals),
				 0);
		assert_true(evals <= 1000);
		assert_true(c1 <= c0);
		nl_scenario_free(sc);
	}
}

/* The same scenario and seed give the same runs. */
/* The kernel-like linux: the same move towards the data, but hinting
 * faults and page copies cost the thread time, and a process whose
 * accesses are local is scanned ever less often. */
static void kernel_like_costs(void **state)
{
	struct nl_scenario *sc = parse(REMOTE, "", "node");
	struct nl_machine *k = machine(sc, NL_OS_LINUX);
	struct nl_machine *i = machine(sc, NL_OS_LINUX_IDEAL);
	struct nl_model *mk = nl_sim_model(k), *mi = nl_sim_model(i);

	(void)state;
	while (k->ops->wait(k, 1.0) > 0)
		;
	while (i->ops->wait(i, 1.0) > 0)
		;
	assert_true(mk->os_moves >= 1 && mi->os_moves >= 1);
	assert_true(mk->pages_migrated_bytes > 0);
	/* The same work took longer: the OS's own costs. */
	assert_true(mk->procs[0].end_s > mi->procs[0].end_s + 0.01);
	/* Local after the move: the scan period grew past its minimum. */
	assert_true(mk->procs[0].numa_period_s > mk->p.numa_scan_period_s);
	assert_true(mi->procs[0].numa_period_s == mi->p.numa_scan_period_s);
	nl_machine_destroy(k);
	nl_machine_destroy(i);
	nl_scenario_free(sc);
}

/*
 * The scan period as the kernel sets it: each task's by its own hinting
 * faults, faster while most are remote. Pages spread evenly over both
 * nodes (each thread's half on each) leave each thread on a node of
 * most of its data but half its accesses remote: the kernel keeps
 * scanning at its fastest, where the model's kernel once slowed down
 * (docs/machine-model.md, adaptive scan period). Once its pages are
 * local, it slows.
 */
static void scan_period_follows_local_faults(void **state)
{
	struct nl_scenario *sc = parse(
		"{'machine': {'topology': 'numa:2 core:2 pu:1', 'noise': 0, "
		"'page_migration_bytes_per_s': 1e6}, 'processes': [{'kind': "
		"'latency', 'threads': 2, 'placement': 'master', 'mem_bytes': "
		"1e9, 'work': 1e12}]}");
	struct nl_machine *m = machine(sc, NL_OS_LINUX);
	struct nl_model *md = nl_sim_model(m);
	double moved;

	(void)state;
	assert_int_equal(m->ops->place(m, 1000, 0), 0);
	assert_int_equal(m->ops->place(m, 1001, 2), 0);
	assert_int_equal(nl_model_move_pages(md, 1000, 0, 1, 1e9, 0, &moved),
			 0);
	assert_true(fabs(moved - 1e9) < 1);
	m->ops->wait(m, 8);
	assert_true(md->procs[0].numa_period_s == md->p.numa_scan_period_s);
	nl_machine_destroy(m);
	/* Both threads on the data's node, every access local: the
	 * period grows. */
	m = machine(sc, NL_OS_LINUX);
	md = nl_sim_model(m);
	assert_int_equal(m->ops->place(m, 1000, 0), 0);
	assert_int_equal(m->ops->place(m, 1001, 1), 0);
	m->ops->wait(m, 8);
	assert_true(md->procs[0].numa_period_s > md->p.numa_scan_period_s);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
}

static void runs_are_deterministic(void **state)
{
	struct nl_scenario *sc = parse("%s", tiny[1]);
	static const enum nl_run_kind kinds[] = {
		NL_RUN_IMAR2, NL_RUN_LBMA, NL_RUN_LINUX, NL_RUN_BEST_STATIC,
		NL_RUN_IDEAL_LOCALITY};

	(void)state;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct run a, b;
		run(sc, kinds[i], 7, &a);
		run(sc, kinds[i], 7, &b);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	nl_scenario_free(sc);
}

static void names(void **state)
{
	enum nl_run_kind k;
	enum nl_os_mode os;

	(void)state;
	int runs = 0;
	for (int i = 0; i < NL_RUN_COUNT; i++) {
		enum nl_policy_kind p;
		if (!strcmp(nl_run_name(i), "?")) { /* a number of no run */
			assert_int_equal(nl_run_engine_policy(i, &p), 0);
			continue;
		}
		runs++;
		assert_int_equal(nl_run_from_name(nl_run_name(i), &k), 0);
		assert_int_equal(k, i);
		assert_non_null(strstr(nl_run_names(), nl_run_name(i)));
	}
	/* Every policy, 4 baselines, the 2 with a paper run. */
	assert_int_equal(runs, NL_POLICY_COUNT + 4 + 2);
	assert_string_equal(nl_run_names(),
			    "imar2, lbma, monitor, static, linux, "
			    "linux-nonuma, best-static, ideal-locality, "
			    "imar2-paper, lbma-paper");
	assert_int_equal(nl_run_from_name("monitor-paper", &k), -EINVAL);
	assert_int_equal(nl_run_from_name("linux-numa", &k), -EINVAL);
	assert_int_equal(nl_os_mode_from_name("linux-nonuma", &os), 0);
	assert_int_equal(os, NL_OS_LINUX_NONUMA);
	assert_int_equal(nl_os_mode_from_name("bsd", &os), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nonuma_never_looks_at_data),
		cmocka_unit_test(linux_moves_thread_towards_data),
		cmocka_unit_test(linux_swaps_only_when_both_gain),
		cmocka_unit_test(linux_migrates_pages_of_pinned_threads),
		cmocka_unit_test(best_static_and_ideal_bounds),
		cmocka_unit_test(best_static_finds_locality),
		cmocka_unit_test(climb_improves_from_start),
		cmocka_unit_test(kernel_like_costs),
		cmocka_unit_test(scan_period_follows_local_faults),
		cmocka_unit_test(runs_are_deterministic),
		cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
