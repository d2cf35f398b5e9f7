/* Unit tests: tickets, lottery, IMAR2 rollback and period, LBMA, pinning. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "viewutil.h"

static struct nl_policy_params P;

/* The tests below check the paper's mechanisms: its profile. */
static void paper(struct nl_policy_params *p)
{
	nl_policy_params_default(p);
	nl_policy_params_profile(p, NL_PROFILE_PAPER);
}

static int setup(void **state)
{
	(void)state;
	paper(&P);
	return 0;
}

/* 2 nodes x 2 CPUs, SLIT 10/21 (synthetic topologies have no SLIT). */
static void ticket_table(void **state)
{
	(void)state;
	struct vu u;
	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *t = vu_add(&u, 1, 1, 0, 100);
	struct nl_view *v = vu_view(&u, 10.0);

	/* No record on node 1, free CPU: 2 + 2. */
	assert_true(nl_tickets_for(v, &P, t, 0, 2, 1) == 4);
	/* Occupied: no free-CPU bonus. */
	assert_true(nl_tickets_for(v, &P, t, 0, 2, 0) == 2);
	/* Record better or equal on node 1: 4. */
	nl_record_note(&u.rec[0], 1, 100, 10.0);
	assert_true(nl_tickets_for(v, &P, t, 0, 2, 0) == 4);
	/* Record worse: 1. */
	nl_record_note(&u.rec[0], 1, 99, 10.0);
	assert_true(nl_tickets_for(v, &P, t, 0, 2, 0) == 1);
	/* A record too old counts as none. */
	assert_true(nl_tickets_for(v, &P, t, 0, 2, 0) == 1);
	u.v.now_s = 20.0;
	assert_true(nl_tickets_for(v, &P, t, 0, 2, 0) == 2);
	u.v.now_s = 10.0;
	/* Preferred node: +4 x 10/21. */
	t->preferred_node = 1;
	assert_true(fabs(nl_tickets_for(v, &P, t, 0, 2, 0) -
			 (1 + 4.0 * 10 / 21)) < 1e-12);
	/* Under-performing: +3. */
	t->rel_perf = 0.5;
	assert_true(fabs(nl_tickets_for(v, &P, t, 0, 2, 1) -
			 (1 + 2 + 4.0 * 10 / 21 + 3)) < 1e-12);
	/* Every ticket value is a parameter. */
	char err[256];
	assert_int_equal(
		nl_policy_param_set(&P, "tickets.free", "7", err, sizeof(err)),
		0);
	t->preferred_node = -1;
	t->rel_perf = 1;
	assert_true(nl_tickets_for(v, &P, t, 0, 2, 1) == 1 + 7);
	paper(&P);
	vu_free(&u);
}

/* One thread on node 0 of 3 single-CPU nodes, preferring node 2. */
static void lottery_frequencies(void **state)
{
	(void)state;
	struct vu u;
	const int draws = 20000;
	int hits[3] = {0};
	struct nl_plan plan;
	struct nl_rng rng;

	vu_init(&u, "numa:3 core:1 pu:1");
	struct nl_view_thread *t = vu_add(&u, 1, 1, 0, 100);
	t->preferred_node = 2;
	struct nl_view *v = vu_view(&u, 1.0);
	double t1 = nl_tickets_for(v, &P, t, 0, 1, 1);
	double t2 = nl_tickets_for(v, &P, t, 0, 2, 1);
	double p2 = t2 / (t1 + t2);

	P.max_migrations = 1;
	nl_plan_init(&plan);
	nl_rng_seed(&rng, 42);
	for (int i = 0; i < draws; i++) {
		struct nl_policy_state s;
		nl_policy_state_init(&s);
		s.steps = 1; /* past the take-over step */
		nl_plan_clear(&plan);
		assert_int_equal(
			nl_policy_step(NL_POLICY_LBMA, &P, v, &s, &rng, &plan),
			0);
		assert_int_equal(plan.n, 1);
		assert_int_equal(plan.actions[0].kind, NL_ACT_MIGRATE);
		hits[plan.actions[0].to_cpu]++;
		assert_true(plan.actions[0].total_tickets == t1 + t2);
		nl_policy_state_free(&s);
	}
	assert_int_equal(hits[0], 0);
	double sigma = sqrt(draws * p2 * (1 - p2));
	assert_true(fabs(hits[2] - draws * p2) < 4 * sigma);
	/* "best" takes the highest-ticket move every time. */
	P.select = NL_SELECT_BEST;
	struct nl_policy_state s;
	nl_policy_state_init(&s);
	s.steps = 1;
	nl_plan_clear(&plan);
	nl_policy_step(NL_POLICY_LBMA, &P, v, &s, &rng, &plan);
	assert_int_equal(plan.actions[0].to_cpu, 2);
	nl_policy_state_free(&s);
	paper(&P);
	nl_plan_free(&plan);
	vu_free(&u);
}

static int count_kind(const struct nl_plan *p, enum nl_action_kind k)
{
	int n = 0;
	for (size_t i = 0; i < p->n; i++)
		n += p->actions[i].kind == k;
	return n;
}

/* Two threads on node 0, one under-performing, after a move that hurt. */
static void imar2_rollback_and_period(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_rng rng;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *a = vu_add(&u, 1, 1, 2, 40);
	struct nl_view_thread *b = vu_add(&u, 2, 1, 1, 100);
	a->has_prev = b->has_prev = 1;
	a->prev_perf = 100;
	b->prev_perf = 100; /* total 140 / 200 = 0.7 < 0.9 */
	struct nl_view *v = vu_view(&u, 5.0);
	nl_plan_init(&plan);
	nl_rng_seed(&rng, 1);
	nl_policy_state_init(&s);
	s.steps = 3;
	/* The previous step moved thread 1 from CPU 0 to CPU 2. */
	s.last = malloc(sizeof(*s.last));
	s.caplast = s.nlast = 1;
	s.last[0] = (struct nl_memo){1, 0, 2, 100, 0, -1, 1};

	assert_int_equal(
		nl_policy_step(NL_POLICY_IMAR2, &P, v, &s, &rng, &plan), 0);
	assert_int_equal(plan.n, 1);
	assert_int_equal(plan.actions[0].kind, NL_ACT_ROLLBACK);
	assert_int_equal(plan.actions[0].tid, 1);
	assert_int_equal(plan.actions[0].to_cpu, 0);
	assert_int_equal(s.nlast, 0);
	assert_true(plan.next_period_s == 2 * P.period_s); /* lengthened */

	/* Falling again, nothing to undo: lengthen to 4, then stay at 4. */
	for (int k = 0; k < 2; k++) {
		nl_plan_clear(&plan);
		nl_policy_step(NL_POLICY_IMAR2, &P, v, &s, &rng, &plan);
		assert_int_equal(count_kind(&plan, NL_ACT_ROLLBACK), 0);
		assert_true(plan.next_period_s == 4 * P.period_s);
	}
	/* Rising: shorten 4 -> 2 -> 1 -> 1; the worst thread gets moved. */
	a->prev_perf = 10;
	b->prev_perf = 10;
	a->rel_perf = 40.0 / 70;
	b->rel_perf = 100.0 / 70;
	double expect[] = {2, 1, 1};
	for (int k = 0; k < 3; k++) {
		nl_plan_clear(&plan);
		nl_policy_step(NL_POLICY_IMAR2, &P, v, &s, &rng, &plan);
		assert_true(plan.next_period_s == expect[k] * P.period_s);
		assert_int_equal(plan.n, 1);
		/* Thread 1 (rel 0.57 < 0.8) is the candidate; 2 is not. */
		assert_int_equal(plan.actions[0].tid, 1);
		assert_int_equal(s.nlast,
				 plan.actions[0].kind == NL_ACT_SWAP ? 2 : 1);
	}
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

static void lbma_never_rolls_back(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_rng rng;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *a = vu_add(&u, 1, 1, 2, 10);
	a->has_prev = 1;
	a->prev_perf = 1000;
	struct nl_view *v = vu_view(&u, 5.0);
	nl_plan_init(&plan);
	nl_rng_seed(&rng, 1);
	nl_policy_state_init(&s);
	s.steps = 1;
	for (int k = 0; k < 50; k++) {
		nl_plan_clear(&plan);
		assert_int_equal(
			nl_policy_step(NL_POLICY_LBMA, &P, v, &s, &rng, &plan),
			0);
		assert_int_equal(count_kind(&plan, NL_ACT_ROLLBACK), 0);
		assert_true(plan.next_period_s == P.period_s); /* fixed */
		assert_int_equal(count_kind(&plan, NL_ACT_MIGRATE), 1);
	}
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* Taking over: one thread per CPU while there are free allowed CPUs. */
static void pinning_spreads_and_respects_allowed(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_rng rng;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:2 pu:1");
	for (int i = 0; i < 3; i++)
		vu_add(&u, 10 + i, 1, 0, 1)->pinned = 0;
	/* Thread 12 may only use CPUs 0 and 3. */
	hwloc_bitmap_zero(u.allowed[2]);
	hwloc_bitmap_set(u.allowed[2], 0);
	hwloc_bitmap_set(u.allowed[2], 3);
	struct nl_view *v = vu_view(&u, 1.0);
	nl_plan_init(&plan);
	nl_rng_seed(&rng, 1);
	nl_policy_state_init(&s);
	assert_int_equal(
		nl_policy_step(NL_POLICY_IMAR2, &P, v, &s, &rng, &plan), 0);
	assert_int_equal(plan.n, 3);
	assert_int_equal(count_kind(&plan, NL_ACT_PIN), 3);
	assert_int_equal(plan.actions[0].to_cpu, 0); /* keeps its CPU */
	assert_int_equal(plan.actions[1].to_cpu, 1); /* first free */
	assert_int_equal(plan.actions[2].to_cpu, 3); /* first free allowed */
	/* monitor never pins. */
	nl_policy_state_free(&s);
	nl_policy_state_init(&s);
	nl_plan_clear(&plan);
	nl_policy_step(NL_POLICY_MONITOR, &P, v, &s, &rng, &plan);
	assert_int_equal(plan.n, 0);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* An idle thread numalot has not pinned is left alone: not pinned, not
 * moved, not occupying its CPU. */
static void idle_threads_left_alone(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_rng rng;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:1 pu:1");
	struct nl_view_thread *sh = vu_add(&u, 10, 1, 1, 0.01);
	sh->pinned = 0;
	sh->has_share = 1;
	sh->cpu_share = 0.01; /* a shell waiting for its child */
	struct nl_view_thread *w = vu_add(&u, 11, 1, 0, 0.9);
	w->pinned = 0;
	w->has_share = 1;
	w->cpu_share = 0.9;
	struct nl_view *v = vu_view(&u, 1.0);
	nl_plan_init(&plan);
	nl_rng_seed(&rng, 1);
	nl_policy_state_init(&s);
	s.steps = 1;
	for (int k = 0; k < 20; k++) {
		nl_plan_clear(&plan);
		assert_int_equal(
			nl_policy_step(NL_POLICY_LBMA, &P, v, &s, &rng, &plan),
			0);
		for (size_t a = 0; a < plan.n; a++) {
			/* The shell is never touched... */
			assert_int_not_equal(plan.actions[a].tid, 10);
			assert_int_not_equal(plan.actions[a].other_tid, 10);
		}
	}
	/* ...the busy thread is pinned, and moving it to CPU 1 (where the
	 * idle shell sits) is a plain migration, not a swap. */
	nl_plan_clear(&plan);
	w->pinned = 1;
	nl_policy_step(NL_POLICY_LBMA, &P, v, &s, &rng, &plan);
	assert_int_equal(plan.n, 1);
	assert_int_equal(plan.actions[0].kind, NL_ACT_MIGRATE);
	assert_int_equal(plan.actions[0].to_cpu, 1);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* Property: over random views, no action leaves a thread's allowed set,
 * swaps need both sides' consent and stay within the domain. */
static void never_outside_allowed(void **state)
{
	(void)state;
	struct nl_rng g;
	struct nl_plan plan;
	int actions = 0, swaps = 0;
	nl_rng_seed(&g, 7);
	nl_plan_init(&plan);

	for (int round = 0; round < 300; round++) {
		struct vu *u = malloc(sizeof(*u));
		vu_init(u, "pack:2 numa:2 core:4 pu:2");
		int nc = u->topo->ncpus, n = 4 + (int)nl_rng_below(&g, 40);
		for (int i = 0; i < n; i++) {
			struct nl_view_thread *t =
				vu_add(u, 100 + i, 1 + (int)nl_rng_below(&g, 3),
				       0, 1 + nl_rng_uniform(&g) * 100);
			hwloc_bitmap_zero(u->allowed[i]);
			int k = 1 + (int)nl_rng_below(&g, (uint64_t)nc);
			for (int j = 0; j < k; j++)
				hwloc_bitmap_set(u->allowed[i],
						 (unsigned)nl_rng_below(
							 &g, (uint64_t)nc));
			t->cpu = (int)nl_rng_below(&g, (uint64_t)nc);
			hwloc_bitmap_set(u->allowed[i], (unsigned)t->cpu);
			t->domain = (int)nl_rng_below(&g, 2);
			t->pinned = nl_rng_below(&g, 4) != 0;
			t->rel_perf = nl_rng_uniform(&g) * 2;
			t->preferred_node = (int)nl_rng_below(&g, 5) - 1;
			if (nl_rng_below(&g, 2))
				nl_record_note(&u->rec[i],
					       (int)nl_rng_below(&g, 4),
					       nl_rng_uniform(&g) * 100, 1.0);
		}
		struct nl_view *v = vu_view(u, 1.5);
		enum nl_policy_kind k =
			round % 2 ? NL_POLICY_LBMA : NL_POLICY_IMAR2;
		struct nl_policy_state s;
		struct nl_rng r;
		nl_policy_state_init(&s);
		s.steps = 1;
		nl_rng_seed(&r, (uint64_t)round);
		nl_plan_clear(&plan);
		assert_int_equal(nl_policy_step(k, &P, v, &s, &r, &plan), 0);
		for (size_t a = 0; a < plan.n; a++) {
			const struct nl_action *x = &plan.actions[a];
			int ti = -1, oi = -1;
			for (int i = 0; i < n; i++) {
				if (u->t[i].tid == x->tid)
					ti = i;
				if (u->t[i].tid == x->other_tid)
					oi = i;
			}
			assert_true(ti >= 0);
			assert_int_equal(u->t[ti].domain, 0);
			if (x->kind == NL_ACT_SKIP)
				continue;
			actions++;
			assert_true(hwloc_bitmap_isset(u->allowed[ti],
						       (unsigned)x->to_cpu));
			if (x->kind == NL_ACT_SWAP) {
				swaps++;
				assert_true(oi >= 0);
				assert_int_equal(u->t[oi].domain, 0);
				assert_true(hwloc_bitmap_isset(
					u->allowed[oi], (unsigned)x->from_cpu));
			}
			if (x->kind == NL_ACT_MIGRATE || x->kind == NL_ACT_SWAP)
				assert_int_not_equal(
					u->topo->cpu_node[x->from_cpu],
					u->topo->cpu_node[x->to_cpu]);
		}
		nl_policy_state_free(&s);
		vu_free(u);
		free(u);
	}
	/* The property was exercised, not vacuously true. */
	assert_true(actions > 300);
	assert_true(swaps > 10);
	nl_plan_free(&plan);
}

static void params_by_name(void **state)
{
	(void)state;
	struct nl_policy_params p;
	char err[1024];
	nl_policy_params_default(&p);
	assert_int_equal(
		nl_policy_param_set(&p, "period", "0.5", err, sizeof(err)), 0);
	assert_true(p.period_s == 0.5);
	assert_int_equal(
		nl_policy_param_set(&p, "select", "best", err, sizeof(err)), 0);
	assert_int_equal(p.select, NL_SELECT_BEST);
	assert_int_equal(nl_policy_param_set(&p, "nope", "1", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "\"nope\""));
	assert_non_null(strstr(err, "tickets.preferred"));
	assert_int_equal(nl_policy_param_set(&p, "max_migrations", "2.5", err,
					     sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "max_migrations"));
	assert_int_equal(nl_policy_param_set(&p, "undo_threshold", "abc", err,
					     sizeof(err)),
			 -EINVAL);
	assert_int_equal(nl_policy_param_set(&p, "undo_threshold", "1.5", err,
					     sizeof(err)),
			 -EINVAL);
	enum nl_policy_kind k;
	assert_int_equal(nl_policy_from_name("lbma", &k), 0);
	assert_int_equal(k, NL_POLICY_LBMA);
	assert_int_equal(nl_policy_from_name("LBMA", &k), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ticket_table),
		cmocka_unit_test(lottery_frequencies),
		cmocka_unit_test(imar2_rollback_and_period),
		cmocka_unit_test(lbma_never_rolls_back),
		cmocka_unit_test(pinning_spreads_and_respects_allowed),
		cmocka_unit_test(idle_threads_left_alone),
		cmocka_unit_test(never_outside_allowed),
		cmocka_unit_test(params_by_name),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
