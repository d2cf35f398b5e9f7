/*
 * Unit tests: numalot's default profile (docs/algorithms.md, "What numalot
 * changes"): no pin at take-over, moves only with a reason in the data and
 * only to the data's node, swaps that never evict a thread from its data,
 * the stay outcome, hold, per-thread rollback of pairs, oversubscription and
 * the do-no-harm check.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "policy_priv.h"
#include "viewutil.h"

static struct nl_policy_params P;

static int setup(void **state)
{
	(void)state;
	nl_policy_params_default(&P);
	P.harm_check_s = 0; /* tested on its own below */
	return 0;
}

static int count_kind(const struct nl_plan *p, enum nl_action_kind k)
{
	int n = 0;
	for (size_t i = 0; i < p->n; i++)
		n += p->actions[i].kind == k;
	return n;
}

/* A busy thread of domain 0, not pinned, whose data is on node data_node
 * with share `share` of its accesses. */
static struct nl_view_thread *add(struct vu *u, int tid, int pid, int cpu,
				  int data_node, double share)
{
	struct nl_view_thread *t = vu_add(u, tid, pid, cpu, 100);
	t->pinned = 0;
	t->has_share = 1;
	t->cpu_share = 1;
	t->preferred_node = data_node;
	t->pref_share = share;
	t->here_share = data_node == u->topo->cpu_node[cpu] ? share : 0;
	t->tput = 1e9;
	t->tput_ops = 1;
	return t;
}

static int step(enum nl_policy_kind k, struct nl_view *v,
		struct nl_policy_state *s, struct nl_plan *plan, uint64_t seed)
{
	struct nl_rng rng;
	nl_rng_seed(&rng, seed);
	nl_plan_clear(plan);
	return nl_policy_step(k, &P, v, s, &rng, plan);
}

/* Threads whose data is where they run are neither pinned nor moved. */
static void no_pin_no_reason_no_move(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:2 pu:1");
	add(&u, 1, 1, 0, 0, 0.9);
	add(&u, 2, 1, 2, 1, 0.9);
	add(&u, 3, 1, 1, -1, 0); /* nothing known of its data */
	struct nl_view *v = vu_view(&u, 1.0);
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	for (int k = 0; k < 5; k++) {
		assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, k), 0);
		assert_int_equal(plan.n, 0);
		assert_int_equal(step(NL_POLICY_LBMA, v, &s, &plan, k), 0);
		assert_int_equal(plan.n, 0);
	}
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* A thread with most of its data on node 2 goes there and nowhere else;
 * one with only 40% there stays. */
static void moves_only_to_data_node(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;
	int stays = 0;

	vu_init(&u, "numa:3 core:2 pu:1");
	struct nl_view_thread *t = add(&u, 1, 1, 0, 2, 0.8);
	struct nl_view_thread *w = add(&u, 2, 1, 1, 2, 0.4);
	struct nl_view *v = vu_view(&u, 1.0);
	nl_plan_init(&plan);
	for (int k = 0; k < 200; k++) {
		nl_policy_state_init(&s);
		assert_int_equal(step(NL_POLICY_LBMA, v, &s, &plan, k), 0);
		assert_int_equal(plan.n, 1);
		assert_int_equal(plan.actions[0].tid, 1);
		if (plan.actions[0].kind == NL_ACT_STAY) {
			stays++;
		} else {
			assert_int_equal(plan.actions[0].kind, NL_ACT_MIGRATE);
			assert_int_equal(
				u.topo->cpu_node[plan.actions[0].to_cpu], 2);
		}
		nl_policy_state_free(&s);
	}
	/* The stay outcome is drawn, but rarely against a good move. */
	assert_true(stays > 0 && stays < 60);
	/* Held after a move from its data's node: not moved back. */
	t->held = 1;
	t->left_node = 2;
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.n, 0);
	/* Held, but its data was found on a node it did not leave: it may
	 * go there (and only there). */
	t->left_node = 1;
	P.tickets.stay = 0;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.n, 1);
	assert_int_equal(plan.actions[0].kind, NL_ACT_MIGRATE);
	assert_int_equal(u.topo->cpu_node[plan.actions[0].to_cpu], 2);
	setup(NULL);
	nl_policy_state_free(&s);
	nl_policy_state_init(&s);
	/* Compute-bound: never moved for its data. */
	t->held = 0;
	t->has_oi = 1;
	t->oi = 500;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.n, 0);
	(void)w;
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* Node 1 is full. Its occupant at home is never evicted; one whose data is
 * on node 0 swaps; a compute-bound one swaps too. */
static void swaps_never_evict(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:1 pu:1");
	struct nl_view_thread *t = add(&u, 1, 1, 0, 1, 0.9);
	struct nl_view_thread *h = add(&u, 2, 2, 1, 1, 0.9);
	P.tickets.stay = 0;
	struct nl_view *v = vu_view(&u, 1.0);
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.n, 1);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SKIP);
	/* Its data is on node 0: both gain. */
	h->preferred_node = 0;
	h->here_share = 0.1;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SWAP);
	assert_int_equal(s.nlast, 2);
	assert_int_equal(s.last[0].pair, 1);
	assert_int_equal(s.last[1].pair, 0);
	/* At home but compute-bound: moving it costs it nothing. */
	h->preferred_node = 1;
	h->here_share = 0.9;
	h->has_oi = 1;
	h->oi = 1000;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SWAP);
	/* ...only once it has been so for STEADY_PERIODS periods in a row
	 * (the engine's class): one whose phases straddle compute_oi is
	 * memory-bound in the next (a first-touch thread of a mixed process
	 * swapped at 1 s to a node far from its data ran there 19 s and
	 * ended its process 2 s late: random seed 71993, scenario 157). */
	h->compute_cls = 1;
	h->compute_periods = STEADY_PERIODS - 1;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SKIP);
	h->compute_periods = STEADY_PERIODS;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SWAP);
	h->compute_cls = 0;
	h->compute_periods = 0;
	/* At home, not compute-bound, needing its memory much less than the
	 * thread kept away from it (twice its intensity): another job's
	 * thread is still not evicted, its accesses would go farther. */
	t->has_oi = 1;
	t->oi = 1;
	h->oi = 2.5;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SKIP);
	/* Not twice: evicting it would cost about what it saves. */
	h->oi = 1.5;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SKIP);
	setup(NULL);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/*
 * Node 1 is full with another job's thread whose data is mostly on node 2
 * but partly where it is: sent to node 0, as far from node 2 as it is now,
 * its share at node 1 would go remote, so it is not swapped out; with
 * nothing where it is, or when it is of the mover's own process (the
 * pair's gain is its job's), it is.
 */
static void partner_of_another_job_keeps_its_distance(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:3 core:1 pu:1");
	add(&u, 1, 1, 0, 1, 0.9);
	struct nl_view_thread *h = add(&u, 2, 2, 1, 2, 0.6);
	add(&u, 3, 3, 2, 2, 0.9);
	h->here_share = 0.3;
	P.tickets.stay = 0;
	struct nl_view *v = vu_view(&u, 1.0);
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(count_kind(&plan, NL_ACT_SWAP), 0);
	h->here_share = 0;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(count_kind(&plan, NL_ACT_SWAP), 1);
	h->here_share = 0.3;
	h->pid = 1;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(count_kind(&plan, NL_ACT_SWAP), 1);
	setup(NULL);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/*
 * Another job's thread known by its process's pages only, on a node that
 * holds its threads' share of them (first touch: its own data may well be
 * where it runs), is not swapped away for a thread that needs its memory
 * more, whatever the process's shares say of the distance: those say
 * where the process's data is, not its (a first-touch thread sent off
 * its own pages, -4%). With few of the pages where it runs, it is.
 */
static void first_touch_partner_stays(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;
	static const unsigned dist[] = {10, 16, 35, 35, 16, 10, 35, 35,
					35, 35, 10, 16, 35, 35, 16, 10};

	vu_init(&u, "numa:4 core:1 pu:1");
	assert_int_equal(nl_topology_set_distances(u.topo, dist), 0);
	struct nl_view_thread *h = add(&u, 1, 2, 0, 3, 0.5);
	h->process_share = 1;
	h->here_share = 0.3;
	struct nl_view_thread *o = add(&u, 2, 2, 3, 3, 0.5);
	o->process_share = 1;
	add(&u, 3, 3, 1, 1, 0.9); /* at home on node 1 */
	struct nl_view_thread *t = add(&u, 4, 1, 2, 0, 0.9);
	t->has_oi = h->has_oi = o->has_oi = 1;
	t->oi = 1;
	h->oi = o->oi = 5;
	P.tickets.stay = 0;
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 1), &s, &plan, 1),
			 0);
	assert_int_equal(count_kind(&plan, NL_ACT_SWAP), 0);
	h->here_share = 0.05;
	nl_policy_state_free(&s);
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 2), &s, &plan, 1),
			 0);
	assert_int_equal(count_kind(&plan, NL_ACT_SWAP), 1);
	setup(NULL);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* A swap is judged on both threads' own throughput relative to their
 * process's and undone as a pair; a fall of the whole domain (a phase)
 * undoes nothing. */
static void rollback_per_thread_and_pairs(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *a = add(&u, 1, 1, 2, 1, 0.9);
	struct nl_view_thread *b = add(&u, 2, 1, 0, 0, 0.9);
	struct nl_view_thread *c = add(&u, 3, 1, 1, 0, 0.9);
	a->pinned = b->pinned = 1;
	/* Last step swapped 1 (0 -> 2) and 2 (2 -> 0). */
	nl_policy_state_init(&s);
	s.steps = 5;
	struct nl_memo m[2] = {{1, 0, 2, 100, 1.0, 1, 1},
			       {2, 2, 0, 100, 1.0, 0, 1}};
	for (int k = 0; k < 2; k++)
		nl_memo_add(&s, &m[k]);
	/* Everyone's perf and ops/s fell 10x (a phase): relative unchanged. */
	a->perf = b->perf = 10;
	a->tput = b->tput = c->tput = 1e8;
	a->has_prev = b->has_prev = 1;
	a->prev_perf = b->prev_perf = 100;
	struct nl_view *v = vu_view(&u, 5.0);
	nl_plan_init(&plan);
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(count_kind(&plan, NL_ACT_ROLLBACK), 0);
	/* Thread 1's ops/s halved, thread 2's rose 5%: relative to their
	 * process, 0.59 and 1.24, a geometric mean of 0.85 (< 0.9): the
	 * pair is undone. */
	for (int k = 0; k < 2; k++)
		nl_memo_add(&s, &m[k]);
	a->tput = 0.5e8;
	b->tput = 1.05e8;
	/* Without op counts (the CPU share alone) a move is not judged. */
	a->tput_ops = b->tput_ops = c->tput_ops = 0;
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(count_kind(&plan, NL_ACT_ROLLBACK), 0);
	a->tput_ops = b->tput_ops = c->tput_ops = 1;
	for (int k = 0; k < 2; k++)
		nl_memo_add(&s, &m[k]);
	assert_int_equal(step(NL_POLICY_IMAR2, v, &s, &plan, 1), 0);
	assert_int_equal(count_kind(&plan, NL_ACT_ROLLBACK), 2);
	assert_int_equal(plan.actions[0].tid, 1);
	assert_int_equal(plan.actions[0].to_cpu, 0);
	assert_int_equal(plan.actions[1].tid, 2);
	assert_int_equal(plan.actions[1].to_cpu, 2);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* More busy threads than CPUs: numalot's pins go back to the OS. */
static void oversubscribed_hands_back(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:1 pu:1");
	add(&u, 1, 1, 0, 1, 0.9)->pinned = 1;
	add(&u, 2, 1, 1, 1, 0.9)->pinned = 1;
	add(&u, 3, 1, 1, 0, 0.9);
	struct nl_view *v = vu_view(&u, 1.0);
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_LBMA, v, &s, &plan, 1), 0);
	assert_int_equal(plan.n, 2);
	assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 2);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* Its process's pages only (no sampled loads of its own): they call a
 * thread away only from a node holding less than half its threads' share
 * of the pages, to one holding more than its threads' share, and only
 * while none of its process's threads has ended. */
static void process_pages_call_carefully(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:4 pu:1");
	/* Two threads on each node; 60% of the pages on node 0 (first-touch
	 * with shared data on node 0): node 1's threads stay. */
	for (int k = 0; k < 4; k++) {
		struct nl_view_thread *t =
			add(&u, 1 + k, 1, k < 2 ? 0 : 4 + k, 0, 0.6);
		t->process_share = 1;
		t->here_share = k < 2 ? 0.6 : 0.4;
	}
	P.tickets.stay = 0;
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 1), &s, &plan, 1),
			 0);
	assert_int_equal(count_kind(&plan, NL_ACT_MIGRATE), 0);
	/* Master-initialised: 98% on node 0, 2% where two threads run. */
	for (int k = 0; k < 4; k++) {
		u.t[k].pref_share = 0.98;
		u.t[k].here_share = k < 2 ? 0.98 : 0.02;
	}
	/* Six threads once, two ended: node 1's 2% may be one thread's own
	 * first touches (more than half of 1/6 would be 8.3%), and the rest
	 * the master's, so they call still; 10% there does not. */
	for (int k = 0; k < 4; k++)
		u.t[k].threads_peak = 6;
	for (int k = 2; k < 4; k++) {
		u.t[k].pref_share = 0.9;
		u.t[k].here_share = 0.1;
	}
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 2), &s, &plan, 1),
			 0);
	assert_int_equal(count_kind(&plan, NL_ACT_MIGRATE), 0);
	for (int k = 2; k < 4; k++) {
		u.t[k].pref_share = 0.98;
		u.t[k].here_share = 0.02;
	}
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 3), &s, &plan, 1),
			 0);
	assert_true(count_kind(&plan, NL_ACT_MIGRATE) > 0);
	for (size_t a = 0; a < plan.n; a++)
		if (plan.actions[a].kind == NL_ACT_MIGRATE)
			assert_int_equal(
				u.topo->cpu_node[plan.actions[a].to_cpu], 0);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* A thread whose memory is bound where it runs (numactl --membind) is no
 * one's swap partner, compute-bound or not: its pages cannot follow. */
static void bound_memory_not_evicted(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:1 pu:1");
	add(&u, 1, 1, 0, 1, 0.9);
	struct nl_view_thread *h = add(&u, 2, 2, 1, 1, 0.9);
	h->has_oi = 1;
	h->oi = 1000; /* compute-bound now: a free partner, unless bound */
	P.tickets.stay = 0;
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 1), &s, &plan, 1),
			 0);
	assert_int_equal(plan.actions[0].kind, NL_ACT_SWAP);
	h->mem_bound = 1;
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 2), &s, &plan, 1),
			 0);
	assert_int_equal(count_kind(&plan, NL_ACT_SWAP), 0);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* A move that lost is not pinned back onto a CPU another thread took
 * meanwhile: the thread goes back to the OS. */
static void rollback_never_onto_busy_cpu(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *a = add(&u, 1, 1, 2, 1, 0.9);
	add(&u, 2, 2, 0, 0, 0.9); /* now on a's old CPU 0 */
	add(&u, 3, 1, 3, 1, 0.9);
	a->pinned = 1;
	a->held = 1;
	a->tput = 0.5e9; /* lost half against its process */
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	nl_memo_add(&s, &(struct nl_memo){.tid = 1,
					  .from_cpu = 0,
					  .to_cpu = 2,
					  .judge_before = 1,
					  .pair = -1});
	assert_int_equal(step(NL_POLICY_IMAR2, vu_view(&u, 1), &s, &plan, 1),
			 0);
	assert_int_equal(count_kind(&plan, NL_ACT_ROLLBACK), 0);
	assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 1);
	assert_int_equal(plan.actions[0].tid, 1);
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* Do no harm: released for a few periods; if the OS runs the domain as
 * fast, it keeps it (no moves for a while), else the placement returns. */
static void harm_check(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;

	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *a = add(&u, 1, 1, 2, 1, 0.9);
	struct nl_view_thread *b = add(&u, 2, 1, 0, 1, 0.9);
	a->pinned = 1;
	P.harm_check_s = 10;
	P.tickets.stay = 0;
	nl_plan_init(&plan);
	for (int os_wins = 0; os_wins < 2; os_wins++) {
		double t = 1;
		nl_policy_state_init(&s);
		a->pinned = 1;
		a->origin_cpu = 1;
		a->tput = b->tput = 1e9;
		a->tput_ops = b->tput_ops = 1;
		a->here_share = 0.4;   /* not on its data's node: see below */
		b->preferred_node = 0; /* no reason to move b */
		for (; t <= 11; t++)
			step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
		/* At 11 s, 10 s after the first step: released, back on
		 * the CPU the OS had it on, so that the OS's placement is
		 * what is measured. */
		assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 1);
		assert_int_equal(plan.actions[0].to_cpu, 1);
		a->pinned = 0;
		if (!os_wins)
			a->tput = b->tput = 0.5e9;
		for (int k = 0; k < 3; k++) {
			t++;
			step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
			if (k < 2)
				assert_int_equal(plan.n, 0);
		}
		if (os_wins) {
			assert_int_equal(plan.n, 0);
			/* Passive: even a thread with a reason stays. */
			b->preferred_node = 1;
			t++;
			step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
			assert_int_equal(plan.n, 0);
		} else {
			assert_int_equal(count_kind(&plan, NL_ACT_PIN), 1);
			assert_int_equal(plan.actions[0].tid, 1);
			assert_int_equal(plan.actions[0].to_cpu, 2);
			/* numalot won: the next check comes twice as late. */
			a->pinned = 1;
			double won = t;
			for (t++; t < won + 20; t++) {
				step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan,
				     1);
				assert_int_equal(
					count_kind(&plan, NL_ACT_RELEASE), 0);
			}
			step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
			assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 1);
		}
		nl_policy_state_free(&s);
	}
	setup(NULL);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* Two threads of process 1 on a 2 x 2 machine for the do-no-harm
 * checks: a (pinned by the test) on CPU 2 with its data on node 1, b on
 * CPU 0 with its data on b_data; a check every 10 s, no "stay" draw. */
static void harm_pair(struct vu *u, struct nl_plan *plan,
		      struct nl_view_thread **a, struct nl_view_thread **b,
		      int b_data)
{
	vu_init(u, "numa:2 core:2 pu:1");
	*a = add(u, 1, 1, 2, 1, 0.9);
	*b = add(u, 2, 1, 0, b_data, 0.9);
	P.harm_check_s = 10;
	P.tickets.stay = 0;
	nl_plan_init(plan);
}

/*
 * A thread numalot placed on its data's node, within its own binding and
 * with memory its process did not bind, is released where it is: the
 * kernel's NUMA balancing takes it there as well, and sending it back to
 * where the OS first had it measured only the seconds the kernel took to
 * bring it back (n4-cg2-mg2-master on a 24-node machine's topology, a
 * latency-bound thread 4 s remote at each check: -4.6% under pebs). Its
 * own binding (taskset) leaving that CPU out, or less than data_share of
 * its accesses there, it goes back.
 */
static void harm_check_leaves_local_threads(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;
	struct nl_view_thread *a, *b;
	hwloc_bitmap_t own = hwloc_bitmap_alloc();

	harm_pair(&u, &plan, &a, &b, 0);
	for (int k = 0; k < 3; k++) {
		nl_policy_state_init(&s);
		a->pinned = 1;
		a->origin_cpu = 1;
		a->tput = b->tput = 1e9;
		a->tput_ops = b->tput_ops = 1;
		hwloc_bitmap_only(own, 1);
		a->own = k == 1 ? own : NULL;
		a->here_share = k == 2 ? 0.4 : 0.9;
		for (double t = 1; t <= 11; t++)
			step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
		assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 1);
		assert_int_equal(plan.actions[0].to_cpu, k == 0 ? -1 : 1);
		nl_policy_state_free(&s);
	}
	a->own = NULL;
	hwloc_bitmap_free(own);
	setup(NULL);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* A small process clearly slower under the OS, none faster: numalot's
 * placement returns, though the domain's sum (a large compute process
 * beside it) moved by less than 2%. */
static void harm_check_small_process(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;
	double t = 1;

	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *a = add(&u, 1, 1, 2, 1, 0.9);
	struct nl_view_thread *b = add(&u, 2, 2, 0, 0, 0.9);
	P.harm_check_s = 10;
	P.tickets.stay = 0;
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	a->pinned = 1;
	a->origin_cpu = 1;
	a->tput = 1e8;
	b->tput = 1e10;
	for (; t <= 11; t++)
		step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
	assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 1);
	a->pinned = 0;
	a->tput = 0.5e8;
	for (int k = 0; k < 3; k++)
		step(NL_POLICY_LBMA, vu_view(&u, ++t), &s, &plan, 1);
	assert_int_equal(count_kind(&plan, NL_ACT_PIN), 1);
	assert_int_equal(plan.actions[0].tid, 1);
	nl_policy_state_free(&s);
	setup(NULL);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* Without op counts the check sees CPU shares only: the same share under
 * the OS is no evidence against numalot's placement, which returns; a
 * clearly larger one (numalot crowded the domain) keeps the OS's; with a
 * whole CPU each there is nothing to check. */
static void harm_check_cpu_share(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;
	struct nl_view_thread *a, *b;

	harm_pair(&u, &plan, &a, &b, 1);
	for (int more = 0; more < 2; more++) {
		double t = 1;
		nl_policy_state_init(&s);
		a->pinned = 1;
		a->origin_cpu = 3;
		a->here_share = 0.4;
		a->tput = b->tput = 0.8; /* CPU shares */
		a->tput_ops = b->tput_ops = 0;
		b->preferred_node = 0;
		for (; t <= 11; t++)
			step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
		assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 1);
		assert_int_equal(plan.actions[0].to_cpu, 3);
		a->pinned = 0;
		if (more)
			a->tput = b->tput = 1.0;
		for (int k = 0; k < 3; k++)
			step(NL_POLICY_LBMA, vu_view(&u, ++t), &s, &plan, 1);
		assert_int_equal(count_kind(&plan, NL_ACT_PIN), more ? 0 : 1);
		nl_policy_state_free(&s);
	}
	/* A whole CPU each under numalot: no check could find harm, and
	 * none is made. */
	nl_policy_state_init(&s);
	a->pinned = 1;
	a->tput = b->tput = 1.0;
	for (double t = 1; t <= 40; t++) {
		step(NL_POLICY_LBMA, vu_view(&u, t), &s, &plan, 1);
		assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 0);
	}
	nl_policy_state_free(&s);
	setup(NULL);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* IMAR2 lengthens its period with nothing to do, but not while the
 * do-no-harm check has the domain with the OS. */
static void harm_check_short_periods(void **state)
{
	(void)state;
	struct vu u;
	struct nl_plan plan;
	struct nl_policy_state s;
	double t = 0;

	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *a = add(&u, 1, 1, 2, 1, 0.9);
	a->pinned = 1;
	P.harm_check_s = 10;
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	while (count_kind(&plan, NL_ACT_RELEASE) == 0 && t < 100) {
		t += plan.n || t == 0 ? P.period_s : plan.next_period_s;
		step(NL_POLICY_IMAR2, vu_view(&u, t), &s, &plan, 1);
		if (!count_kind(&plan, NL_ACT_RELEASE))
			assert_true(t < 10 || plan.next_period_s > P.period_s);
	}
	assert_int_equal(count_kind(&plan, NL_ACT_RELEASE), 1);
	assert_true(plan.next_period_s == P.period_s);
	a->pinned = 0;
	step(NL_POLICY_IMAR2, vu_view(&u, t + 1), &s, &plan, 1);
	assert_true(plan.next_period_s == P.period_s);
	nl_policy_state_free(&s);
	setup(NULL);
	nl_plan_free(&plan);
	vu_free(&u);
}

/* profile=paper sets the paper's rules; later parameters override it. */
static void profile_by_name(void **state)
{
	(void)state;
	struct nl_policy_params p;
	char err[256];
	nl_policy_params_default(&p);
	assert_int_equal(p.pin_new, 0);
	assert_int_equal(
		nl_policy_param_set(&p, "profile", "paper", err, sizeof(err)),
		0);
	assert_int_equal(p.pin_new, 1);
	assert_int_equal(p.dest, NL_DEST_ANY);
	assert_int_equal(p.judge, NL_JUDGE_TOTAL);
	assert_int_equal(p.always_worst, 1);
	assert_int_equal(
		nl_policy_param_set(&p, "dest", "data", err, sizeof(err)), 0);
	assert_int_equal(p.dest, NL_DEST_DATA);
	assert_int_equal(
		nl_policy_param_set(&p, "profile", "kernel", err, sizeof(err)),
		-EINVAL);
	assert_non_null(strstr(err, "profile"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(no_pin_no_reason_no_move, setup),
		cmocka_unit_test_setup(moves_only_to_data_node, setup),
		cmocka_unit_test_setup(swaps_never_evict, setup),
		cmocka_unit_test_setup(
			partner_of_another_job_keeps_its_distance, setup),
		cmocka_unit_test_setup(first_touch_partner_stays, setup),
		cmocka_unit_test_setup(rollback_per_thread_and_pairs, setup),
		cmocka_unit_test_setup(oversubscribed_hands_back, setup),
		cmocka_unit_test_setup(process_pages_call_carefully, setup),
		cmocka_unit_test_setup(bound_memory_not_evicted, setup),
		cmocka_unit_test_setup(rollback_never_onto_busy_cpu, setup),
		cmocka_unit_test_setup(harm_check, setup),
		cmocka_unit_test_setup(harm_check_leaves_local_threads, setup),
		cmocka_unit_test_setup(harm_check_small_process, setup),
		cmocka_unit_test_setup(harm_check_cpu_share, setup),
		cmocka_unit_test_setup(harm_check_short_periods, setup),
		cmocka_unit_test(profile_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
