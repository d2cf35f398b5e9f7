/*
 * Replay tests of another placer's hand in a process (docs/real-node.md,
 * "Other placers"): its pages moved without numalot, their memory policy
 * changed, a thread bound while numad runs. The saved tree
 * tests/data/proc-replay/ on this node's two CPUs described as two nodes,
 * its numa_maps, numa_balancing and numad's pid file written by the test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>

#include "replay_tree.h"

#define HEAP 20000 /* pages: 78 MiB, over the 16 MiB that count */
#define NUMAD 4000000

static double now_s;
static double clock_of_test(void)
{
	return now_s;
}

static int setup_two_nodes(void **state)
{
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	cpu_set_t all;
	if (sched_getaffinity(0, sizeof(all), &all) < 0 ||
	    CPU_COUNT(&all) < 2 || !CPU_ISSET(0, &all) || !CPU_ISSET(1, &all))
		return -1; /* reported as a failed setup: needs CPUs 0 and 1 */
	replay_topology = "numa:2 core:1 pu:1";
	now_s = 1000;
	return replay_setup(state, &o, clock_of_test);
}

static void write_file(const struct replay *rp, const char *rel,
		       const char *text)
{
	char path[512];
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", rp->root, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* The heap's pages on nodes 0 and 1 under policy, and extra (may be "")
 * after it. */
static void maps(const struct replay *rp, const char *policy, int n0, int n1,
		 const char *extra)
{
	char rel[64], text[1024];
	snprintf(rel, sizeof(rel), "proc/%d/numa_maps", rp->pid);
	snprintf(text, sizeof(text),
		 "55d4c8a00000 default file=/usr/bin/replay mapped=2 N0=2\n"
		 "55d4c8c00000 %s heap anon=%d dirty=%d N0=%d N1=%d\n"
		 "7ffd1a300000 default stack anon=3 dirty=3 N0=3\n%s",
		 policy, n0 + n1, n0 + n1, n0, n1, extra);
	write_file(rp, rel, text);
}

/* numad runs as pid NUMAD (its pid file and its comm). */
static void numad_runs(const struct replay *rp)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/var", rp->root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/var/run", rp->root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/proc/%d", rp->root, NUMAD);
	assert_int_equal(mkdir(dir, 0755), 0);
	write_file(rp, "var/run/numad.pid", "4000000\n");
	write_file(rp, "proc/4000000/comm", "numad\n");
}

/* The process's let_go as the machine reports it. */
static const char *let_go(const struct replay *rp)
{
	const struct nl_process_info *pi;
	size_t n;
	assert_int_equal(rp->m->ops->processes(rp->m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (pi[i].pid == rp->pid)
			return pi[i].real.let_go;
	return "(not managed)";
}

/* A reading of its pages faults faults later, 1.1 s on: node_pages' rc. */
static int look(const struct replay *rp, long long faults)
{
	double pg[NL_MAX_NODES];
	add_field(rp, 0, 10, faults ? faults : 1); /* not left unread */
	now_s += 1.1;
	return rp->m->ops->node_pages(rp->m, rp->pid, pg);
}

/*
 * NUMA balancing off: 78 MiB moved from node 0 to node 1 with no fault
 * and not by numalot is another program's (migratepages); the process is
 * let go of. The same pages freed on node 0 and touched on node 1 (a
 * fault each) are the process's own.
 */
static void replay_pages_moved_by_another(void **state)
{
	struct replay *rp = *state;

	maps(rp, "default", HEAP, 0, "");
	assert_int_equal(look(rp, 0), 0);
	maps(rp, "default", 0, HEAP, ""); /* its own: as many faults */
	assert_int_equal(look(rp, HEAP), 0);
	assert_string_equal(let_go(rp), "");
	maps(rp, "default", HEAP, 0, ""); /* moved back: no faults */
	assert_int_equal(look(rp, 0), -ESRCH);
	assert_non_null(strstr(let_go(rp), "78 MiB of its pages moved from "
					   "node 1 to node 0 without numalot"));
	assert_true(strncmp(let_go(rp), "numad", 5) != 0);
}

/*
 * NUMA balancing on: pages moved may be the kernel's, never a reason
 * alone; while numad runs they are taken for numad's.
 */
static void replay_pages_moved_balancing_on(void **state)
{
	struct replay *rp = *state;

	write_file(rp, "proc/sys/kernel/numa_balancing", "1\n");
	maps(rp, "default", HEAP, 0, "");
	assert_int_equal(look(rp, 0), 0);
	maps(rp, "default", 0, HEAP, "");
	assert_int_equal(look(rp, 0), 0);
	assert_string_equal(let_go(rp), "");
	numad_runs(rp);
	maps(rp, "default", HEAP, 0, "");
	assert_int_equal(look(rp, 0), -ESRCH);
	assert_non_null(strstr(let_go(rp), "numad (pid 4000000) runs and 78 "
					   "MiB of its pages moved from node "
					   "1 to node 0"));
}

/*
 * Its memory policy changed under numalot (set_mempolicy, mbind on its
 * heap): let go of. Memory allocated under a policy of its own, or
 * growth, is not a change.
 */
static void replay_policy_changed(void **state)
{
	struct replay *rp = *state;
	char bound[128];

	snprintf(bound, sizeof(bound),
		 "7f0000000000 bind:1 anon=%d dirty=%d N1=%d\n", HEAP, HEAP,
		 HEAP);
	maps(rp, "default", HEAP, 0, "");
	assert_int_equal(look(rp, 0), 0);
	maps(rp, "default", HEAP, 0, bound); /* a new mapping, bound */
	assert_int_equal(look(rp, HEAP), 0);
	maps(rp, "default", 2 * HEAP, 0, bound); /* grown */
	assert_int_equal(look(rp, HEAP), 0);
	assert_string_equal(let_go(rp), "");
	maps(rp, "interleave:0-1", 2 * HEAP, 0, bound);
	assert_int_equal(look(rp, 0), -ESRCH);
	assert_non_null(strstr(let_go(rp), "the memory policy of 156 MiB of "
					   "its pages changed (100% under a "
					   "policy of its own, 33% before)"));
}

/* Refreshes until the main thread's binding is read (it is every time). */
static void refresh(struct replay *rp)
{
	const struct nl_thread_info *t;
	size_t n;
	assert_int_equal(rp->m->ops->threads_of(rp->m, &rp->pid, 1, &t, &n), 0);
}

static void bind_self(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	if (cpu < 0) {
		CPU_SET(0, &s);
		CPU_SET(1, &s);
	} else {
		CPU_SET(cpu, &s);
	}
	assert_int_equal(sched_setaffinity(0, sizeof(s), &s), 0);
}

/*
 * A process limited by its own binding (no job's cgroup) that binds its
 * main thread narrower is where it starts, the new limit; bound outside
 * that limit (taskset -p), it is let go of.
 */
static void replay_bound_outside_limit(void **state)
{
	struct replay *rp = *state;
	cpu_set_t was;

	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	refresh(rp);
	bind_self(1);
	refresh(rp);
	assert_string_equal(let_go(rp), "");
	bind_self(0);
	refresh(rp);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	assert_non_null(strstr(let_go(rp), "another program bound its "
					   "thread "));
	assert_non_null(strstr(let_go(rp), " to CPUs 0, outside its limit 1:"));
	/* Its pages neither read nor moved from now on. */
	double moved = -1;
	assert_int_equal(look(rp, 0), -ESRCH);
	assert_int_equal(rp->m->ops->move_pages(rp->m, rp->pid, 0, 1, 1 << 20,
						0, &moved),
			 -ESRCH);
	assert_true(moved == 0);
}

/* While numad runs, a thread bound by anyone is numad's to place. */
static void replay_bound_while_numad_runs(void **state)
{
	struct replay *rp = *state;
	cpu_set_t was;

	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	refresh(rp);
	numad_runs(rp);
	bind_self(1);
	refresh(rp);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	assert_non_null(strstr(let_go(rp), "numad (pid 4000000) runs and "
					   "bound its thread "));
	assert_non_null(strstr(let_go(rp), " to CPUs 1: numalot left the "
					   "process to it"));
}

/* A main thread alone (the tree's other threads ended) bound while numad
 * runs, in a process of rss resident pages: numad's when the process is
 * past the 300 MB numad needs to bind one, else a wrapper's (taskset
 * before it execs the program), where it starts. */
static void alone_bound_while_numad_runs(struct replay *rp, const char *rss)
{
	cpu_set_t was;
	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	for (int i = 0; i < INTREE; i++)
		task_dir(rp, rp->tid[i], 0);
	set_field(rp, 0, 24, rss);
	refresh(rp);
	numad_runs(rp);
	bind_self(1);
	refresh(rp);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
}

static void replay_small_bound_while_numad_runs(void **state)
{
	struct replay *rp = *state;
	alone_bound_while_numad_runs(rp, "1000"); /* 4 MiB */
	assert_string_equal(let_go(rp), "");
}

static void replay_big_bound_while_numad_runs(void **state)
{
	struct replay *rp = *state;
	alone_bound_while_numad_runs(rp, "80000"); /* 312 MiB */
	assert_non_null(strstr(let_go(rp), "numad (pid 4000000) runs and "
					   "bound its thread "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(replay_pages_moved_by_another,
						setup_two_nodes, teardown),
		cmocka_unit_test_setup_teardown(replay_pages_moved_balancing_on,
						setup_two_nodes, teardown),
		cmocka_unit_test_setup_teardown(replay_policy_changed,
						setup_two_nodes, teardown),
		cmocka_unit_test_setup_teardown(replay_bound_outside_limit,
						setup_two_nodes, teardown),
		cmocka_unit_test_setup_teardown(replay_bound_while_numad_runs,
						setup_two_nodes, teardown),
		cmocka_unit_test_setup_teardown(
			replay_small_bound_while_numad_runs, setup_two_nodes,
			teardown),
		cmocka_unit_test_setup_teardown(
			replay_big_bound_while_numad_runs, setup_two_nodes,
			teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
