/*
 * Unit tests: every placed thread watched (docs/algorithms.md, "Watch"),
 * a swap that would crowd its partner refused, and a crowded thread with
 * bound memory kept from nodes where it could lose ("Crowded threads").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

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

/* A busy, measured thread on dense CPU cpu, its data where it runs. */
static struct nl_view_thread *add(struct vu *u, int tid, int pid, int cpu,
				  double tput)
{
	struct nl_view_thread *t = vu_add(u, tid, pid, cpu, 100);
	t->has_share = 1;
	t->cpu_share = 1;
	t->preferred_node = u->topo->cpu_node[cpu];
	t->pref_share = t->here_share = 0.9;
	t->tput = tput;
	t->tput_ops = 1;
	return t;
}

/* The releases one step plans for tid (with the state carried over). */
static int releases(struct vu *u, struct nl_policy_state *s, int tid)
{
	struct nl_plan plan;
	struct nl_rng rng;
	int n = 0;
	nl_plan_init(&plan);
	nl_rng_seed(&rng, 1);
	assert_int_equal(nl_policy_step(NL_POLICY_IMAR2, &P, vu_view(u, 1.0), s,
					&rng, &plan),
			 0);
	for (size_t a = 0; a < plan.n; a++)
		n += plan.actions[a].kind == NL_ACT_RELEASE &&
		     plan.actions[a].tid == tid;
	nl_plan_free(&plan);
	return n;
}

/* A placed thread that runs at 2/3 of its relative throughput before its
 * move is handed back after five periods, not before; one that keeps up
 * stays. */
static void watched_thread_released_after_five_periods(void **state)
{
	(void)state;
	struct vu u;
	struct nl_policy_state s;
	vu_init(&u, "numa:1 core:4 pu:1");
	add(&u, 10, 1, 0, 0.5e9);
	add(&u, 11, 1, 1, 1e9);
	nl_policy_state_init(&s);
	assert_int_equal(
		nl_watch_add(&s, &(struct nl_watch){10, 0, 1.0, 0, -1, 0}), 0);
	for (int k = 0; k < 4; k++)
		assert_int_equal(releases(&u, &s, 10), 0);
	assert_int_equal(releases(&u, &s, 10), 1);
	assert_int_equal(s.nwatch, 0);
	nl_policy_state_free(&s);

	/* Keeping up (metric 1.0 of before 1.0): never released. */
	u.t[0].tput = 1e9;
	nl_policy_state_init(&s);
	nl_watch_add(&s, &(struct nl_watch){10, 0, 1.0, 0, -1, 0});
	for (int k = 0; k < 8; k++)
		assert_int_equal(releases(&u, &s, 10), 0);
	assert_int_equal(s.nwatch, 1);
	nl_policy_state_free(&s);
	vu_free(&u);
}

/* A swap pair is judged together: the partner's gain pays for the
 * thread's loss; and a thread handed back (not pinned) is no longer
 * watched. */
static void watch_judges_pairs_and_drops_released(void **state)
{
	(void)state;
	struct vu u;
	struct nl_policy_state s;
	vu_init(&u, "numa:1 core:4 pu:1");
	add(&u, 10, 1, 0, 0.5e9);
	add(&u, 11, 1, 1, 1e9);
	add(&u, 20, 2, 2, 2e9);
	add(&u, 21, 2, 3, 1e9);
	nl_policy_state_init(&s);
	/* 10 at 0.67 of before, its partner 20 at 1.33 / 0.8: the pair's
	 * geometric mean is above undo_threshold. */
	nl_watch_add(&s, &(struct nl_watch){10, 0, 1.0, 0, 20, 0.8});
	for (int k = 0; k < 8; k++)
		assert_int_equal(releases(&u, &s, 10), 0);
	u.t[0].pinned = 0;
	assert_int_equal(releases(&u, &s, 10), 0);
	assert_int_equal(s.nwatch, 0);
	nl_policy_state_free(&s);
	vu_free(&u);
}

/* The plan one step makes (with the state carried over), in plan. */
static void one_step(struct vu *u, struct nl_policy_state *s,
		     struct nl_plan *plan)
{
	struct nl_rng rng;
	nl_rng_seed(&rng, 1);
	nl_plan_clear(plan);
	assert_int_equal(nl_policy_step(NL_POLICY_IMAR2, &P, vu_view(u, 1.0), s,
					&rng, plan),
			 0);
}

/*
 * A swap pair that lost for five periods, both still where the swap put
 * them: swapped back, each to the other's CPU, and handed to the OS (a
 * release alone leaves a thread where it is). When the partner has moved
 * on, the thread is released.
 */
static void lost_pair_swapped_back(void **state)
{
	(void)state;
	struct vu u;
	struct nl_policy_state s;
	struct nl_plan plan;
	vu_init(&u, "numa:2 core:2 pu:1");
	add(&u, 10, 1, 0, 0.5e9)->pinned = 1;
	add(&u, 11, 1, 1, 1e9);
	add(&u, 20, 2, 2, 0.5e9)->pinned = 1;
	add(&u, 21, 2, 3, 1e9);
	nl_plan_init(&plan);
	for (int moved_on = 0; moved_on < 2; moved_on++) {
		nl_policy_state_init(&s);
		/* 10 came from CPU 2 and 20 from CPU 0; each at 2/3 of what
		 * it ran before. */
		nl_watch_add(&s, &(struct nl_watch){10, 0, 1.0, 0, 20, 1.0});
		nl_watch_add(&s, &(struct nl_watch){20, moved_on ? 3 : 2, 1.0,
						    0, 10, 1.0});
		for (int k = 0; k < 4; k++) {
			one_step(&u, &s, &plan);
			for (size_t a = 0; a < plan.n; a++)
				assert_true(plan.actions[a].kind !=
						    NL_ACT_ROLLBACK &&
					    plan.actions[a].kind !=
						    NL_ACT_RELEASE);
		}
		one_step(&u, &s, &plan);
		int back = 0, released = 0;
		for (size_t a = 0; a < plan.n; a++) {
			const struct nl_action *x = &plan.actions[a];
			if (x->kind == NL_ACT_ROLLBACK) {
				assert_true(x->then_release);
				assert_int_equal(x->to_cpu,
						 x->tid == 10 ? 2 : 0);
				back++;
			}
			released += x->kind == NL_ACT_RELEASE && x->tid == 10;
		}
		assert_int_equal(back, moved_on ? 0 : 2);
		assert_int_equal(released, moved_on);
		nl_policy_state_free(&s);
	}
	nl_plan_free(&plan);
	vu_free(&u);
}

/*
 * Two nodes 10/38 of 2 CPUs: a thread crowded on node 0 with its memory
 * bound there may not go to node 1 (38 >= 2 x 10) unless measured
 * compute-bound; with memory not bound it may.
 */
static void crowded_bound_memory_stays_near(void **state)
{
	(void)state;
	for (int c = 0; c < 3; c++) {
		struct vu u;
		int moved = 0;
		vu_init(&u, "numa:2 core:2 pu:1");
		unsigned d[4] = {10, 38, 38, 10};
		assert_int_equal(nl_topology_set_distances(u.topo, d), 0);
		for (int k = 0; k < 3; k++) {
			struct nl_view_thread *t =
				add(&u, 10 + k, 1, k < 2 ? 0 : 1, 1e9);
			t->mem_bound = c != 1;
			t->has_oi = c == 2;
			t->oi = c == 2 ? 1000 : 0;
		}
		/* 10 and 11 share CPU 0; 12 holds CPU 1; node 1 free. Its
		 * own binding (node 0) is full: the OS cannot part them. */
		u.t[1].cpu = 0;
		u.t[2].cpu = 1;
		hwloc_bitmap_t own = hwloc_bitmap_alloc();
		hwloc_bitmap_set_range(own, 0, 1);
		for (int k = 0; k < 3; k++) {
			u.t[k].pinned = 0;
			u.t[k].own = own;
		}
		for (int seed = 0; seed < 20; seed++) {
			struct nl_policy_state s;
			struct nl_plan plan;
			struct nl_rng rng;
			nl_policy_state_init(&s);
			nl_plan_init(&plan);
			nl_rng_seed(&rng, (uint64_t)seed);
			assert_int_equal(nl_policy_step(NL_POLICY_LBMA, &P,
							vu_view(&u, 1.0), &s,
							&rng, &plan),
					 0);
			for (size_t a = 0; a < plan.n; a++)
				moved += plan.actions[a].kind ==
						 NL_ACT_MIGRATE &&
					 u.topo->cpu_node[plan.actions[a]
								  .to_cpu] == 1;
			nl_plan_free(&plan);
			nl_policy_state_free(&s);
		}
		if (c == 0)
			assert_int_equal(moved, 0);
		else
			assert_true(moved > 0);
		hwloc_bitmap_free(own);
		vu_free(&u);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(watched_thread_released_after_five_periods),
		cmocka_unit_test(watch_judges_pairs_and_drops_released),
		cmocka_unit_test(lost_pair_swapped_back),
		cmocka_unit_test(crowded_bound_memory_stays_near),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
