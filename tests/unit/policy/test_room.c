/*
 * Unit tests: room for a thread its limit crowds (docs/algorithms.md,
 * "Making room"): the one thread on a CPU of that limit goes to a free CPU
 * no farther from its data, and the crowded thread takes its CPU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "policy_priv.h"
#include "viewutil.h"

static struct nl_policy_params P;

static int setup(void **state)
{
	(void)state;
	nl_policy_params_default(&P);
	P.harm_check_s = 0;
	return 0;
}

/* A busy thread the OS placed on cpu, its data on data_node. */
static struct nl_view_thread *add(struct vu *u, int tid, int pid, int cpu,
				  int data_node)
{
	struct nl_view_thread *t = vu_add(u, tid, pid, cpu, 100);
	t->pinned = 0;
	t->has_share = 1;
	t->cpu_share = 1;
	t->tput = 1e9;
	t->tput_ops = 1;
	t->preferred_node = data_node;
	t->pref_share = 0.9;
	t->here_share = data_node == u->topo->cpu_node[cpu] ? 0.9 : 0;
	return t;
}

/* The CPU the step sends tid to, -1 none. */
static int dest(const struct nl_plan *plan, int tid)
{
	for (size_t a = 0; a < plan->n; a++)
		if (plan->actions[a].tid == tid &&
		    plan->actions[a].kind == NL_ACT_MIGRATE)
			return plan->actions[a].to_cpu;
	return -1;
}

static void step(struct vu *u, struct nl_plan *plan)
{
	struct nl_policy_state s;
	struct nl_rng rng;
	nl_policy_state_init(&s);
	nl_rng_seed(&rng, 1);
	nl_plan_clear(plan);
	assert_int_equal(nl_policy_step(NL_POLICY_IMAR2, &P, vu_view(u, 1.0),
					&s, &rng, plan),
			 0);
	nl_policy_state_free(&s);
}

/*
 * Node 0 is CPUs 0-3, node 1 CPUs 4-7. Threads 20 and 21 of process 2 may
 * use CPUs 0-1 only and share CPU 0; thread 10 of process 1 (anywhere)
 * holds CPU 1, its data on node 0. With CPU 2 free, 10 goes there and 20
 * or 21 takes CPU 1. With node 0 full, 10 would go farther from its data:
 * nothing moves, unless 10 is compute-bound.
 */
static void room_made_near_data(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	vu_init(&u, "numa:2 core:4 pu:1");
	add(&u, 10, 1, 1, 0);
	add(&u, 20, 2, 0, 0);
	add(&u, 21, 2, 0, 0);
	add(&u, 11, 1, 3, 0);
	for (int i = 1; i < 3; i++) {
		hwloc_bitmap_zero(u.allowed[i]);
		hwloc_bitmap_set_range(u.allowed[i], 0, 1);
	}
	nl_plan_init(&plan);
	step(&u, &plan);
	assert_int_equal(dest(&plan, 10), 2);
	assert_true((dest(&plan, 20) == 1) != (dest(&plan, 21) == 1));

	add(&u, 12, 1, 2, 0); /* node 0 full */
	step(&u, &plan);
	assert_int_equal(dest(&plan, 10), -1);
	assert_int_equal(dest(&plan, 20), -1);
	assert_int_equal(dest(&plan, 21), -1);

	u.t[0].has_oi = 1; /* compute-bound: its data's node matters not */
	u.t[0].oi = 100;
	step(&u, &plan);
	assert_int_equal(u.topo->cpu_node[dest(&plan, 10)], 1);
	assert_true((dest(&plan, 20) == 1) != (dest(&plan, 21) == 1));
	nl_plan_free(&plan);
	vu_free(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(room_made_near_data),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
