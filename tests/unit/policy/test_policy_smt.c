/*
 * Unit tests: placement that knows cores (docs/algorithms.md, "SMT"): an
 * idle core before a busy core's idle sibling, no new core sharing while
 * an idle core is left, on a machine whose OS numbers siblings apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "policy_priv.h"
#include "viewutil.h"

/* Two sockets of 8 cores x 2 PUs, numbered as Intel machines are: core c's
 * PUs are OS CPUs c and c + 16. */
#define TOPO                                                                   \
	"pack:2 numa:1 core:8 pu:2(indexes=0,16,1,17,2,18,3,19,4,20,5,21,6,"   \
	"22,7,23,8,24,9,25,10,26,11,27,12,28,13,29,14,30,15,31)"

static struct nl_policy_params P;

static int setup(void **state)
{
	(void)state;
	nl_policy_params_default(&P);
	P.harm_check_s = 0;
	return 0;
}

/* A busy, unpinned thread on OS CPU os with its data on node data_node. */
static struct nl_view_thread *add(struct vu *u, int tid, int pid, int os,
				  int data_node)
{
	int cpu = nl_topology_cpu_from_os(u->topo, os);
	struct nl_view_thread *t = vu_add(u, tid, pid, cpu, 100);
	assert_true(cpu >= 0);
	t->pinned = 0;
	t->has_share = 1;
	t->cpu_share = 1;
	t->preferred_node = data_node;
	t->pref_share = 0.9;
	t->here_share = data_node == u->topo->cpu_node[cpu] ? 0.9 : 0;
	t->tput = 1e9;
	t->tput_ops = 1;
	return t;
}

/* Busy threads of the view other than tid on the core of dense CPU cpu. */
static int others_on_core(const struct vu *u, int cpu, int tid)
{
	int n = 0;
	for (int i = 0; i < u->n; i++)
		n += u->t[i].tid != tid &&
		     u->topo->cpu_core[u->t[i].cpu] == u->topo->cpu_core[cpu];
	return n;
}

/*
 * Runs 100 seeds of both policies; every migration must go to a core no
 * other thread holds. Returns the migrations seen.
 */
static int never_onto_busy_core(struct vu *u)
{
	struct nl_view *v = vu_view(u, 1.0);
	struct nl_plan plan;
	int moves = 0;

	nl_plan_init(&plan);
	for (int k = 0; k < 100; k++) {
		struct nl_policy_state s;
		struct nl_rng rng;
		nl_policy_state_init(&s);
		nl_rng_seed(&rng, (uint64_t)k);
		nl_plan_clear(&plan);
		assert_int_equal(
			nl_policy_step(k % 2 ? NL_POLICY_LBMA : NL_POLICY_IMAR2,
				       &P, v, &s, &rng, &plan),
			0);
		for (size_t a = 0; a < plan.n; a++) {
			const struct nl_action *x = &plan.actions[a];
			if (x->kind != NL_ACT_MIGRATE)
				continue;
			moves++;
			if (others_on_core(u, x->to_cpu, x->tid))
				fail_msg("tid %d to OS CPU %d: a busy core",
					 x->tid, u->topo->cpu_os[x->to_cpu]);
		}
		nl_policy_state_free(&s);
	}
	nl_plan_free(&plan);
	return moves;
}

/* The numbering itself: OS CPUs 0 and 16 are one core, 0 and 1 are not. */
static void siblings_numbered_apart(void **state)
{
	(void)state;
	struct nl_topology *t;
	assert_int_equal(nl_topology_load(TOPO, &t, NULL, 0), 0);
	assert_int_equal(t->ncpus, 32);
	assert_int_equal(t->nnodes, 2);
	assert_int_equal(t->cpu_core[nl_topology_cpu_from_os(t, 0)],
			 t->cpu_core[nl_topology_cpu_from_os(t, 16)]);
	assert_int_not_equal(t->cpu_core[nl_topology_cpu_from_os(t, 0)],
			     t->cpu_core[nl_topology_cpu_from_os(t, 1)]);
	assert_int_equal(t->cpu_node[nl_topology_cpu_from_os(t, 24)], 1);
	nl_topology_free(t);
}

/* 4 busy threads on 4 cores of node 1, a thread with its data there: it
 * goes to one of node 1's idle cores, never a busy core's sibling. (The
 * balancer's partner, off here: node 1 five busy, node 0 none, the
 * kernel would push one of node 1's local threads off; test_policy_gather
 * has that rule.) */
static void idle_core_before_sibling(void **state)
{
	(void)state;
	struct vu u;
	P.balance_partner = 0;
	vu_init(&u, TOPO);
	for (int c = 0; c < 4; c++)
		add(&u, 10 + c, 1, 8 + c, 1);
	add(&u, 1, 2, 0, 1);
	assert_true(never_onto_busy_core(&u) > 50);
	P.balance_partner = 1;
	vu_free(&u);
}

/* Every core of node 1 busy, the mover alone on its core of node 0 (idle
 * cores left there): no move creates core sharing. */
static void no_new_sharing_while_idle_core(void **state)
{
	(void)state;
	struct vu u;
	vu_init(&u, TOPO);
	for (int c = 0; c < 8; c++)
		add(&u, 10 + c, 1, 8 + c, 1);
	add(&u, 1, 2, 0, 1);
	never_onto_busy_core(&u);
	vu_free(&u);
}

/* Two threads share OS CPU 0 (numalot pinned them there), node 0's other
 * cores are busy, node 1 is idle: the crowded one takes an idle core of
 * node 1, not a sibling on node 0 (OS CPUs 16 to 23). Unpinned, the two
 * are the OS's to part: numalot leaves them. */
static void crowded_takes_idle_core(void **state)
{
	(void)state;
	struct vu u;
	vu_init(&u, TOPO);
	for (int c = 0; c < 8; c++)
		add(&u, 10 + c, 1, c, 0);
	add(&u, 1, 1, 0, 0);
	assert_int_equal(never_onto_busy_core(&u), 0);
	u.t[0].pinned = u.t[8].pinned = 1;
	assert_true(never_onto_busy_core(&u) > 0);
	vu_free(&u);
}

/* LBMA's migrations over 20 seeds, of tid 1 or one on its CPU, each
 * checked to go to node 1 onto a core with fewer busy threads than it
 * leaves (sibling_spread=0: no more). */
static int sibling_moves(struct vu *u)
{
	struct nl_view *v = vu_view(u, 1.0);
	struct nl_plan plan;
	struct nl_policy_state s;
	struct nl_rng rng;
	int moved = 0, from = -1;

	for (int i = 0; i < u->n; i++)
		if (u->t[i].tid == 1)
			from = u->t[i].cpu;
	nl_plan_init(&plan);
	for (int k = 0; k < 20; k++) {
		nl_policy_state_init(&s);
		nl_rng_seed(&rng, (uint64_t)k);
		nl_plan_clear(&plan);
		assert_int_equal(
			nl_policy_step(NL_POLICY_LBMA, &P, v, &s, &rng, &plan),
			0);
		for (size_t a = 0; a < plan.n; a++)
			if (plan.actions[a].kind == NL_ACT_MIGRATE) {
				int to = plan.actions[a].to_cpu;
				int tid = plan.actions[a].tid;
				assert_true(tid == 1 || tid == 2);
				assert_int_equal(u->topo->cpu_node[to], 1);
				assert_true(others_on_core(u, to, tid) +
						    P.sibling_spread <=
					    others_on_core(u, from, tid));
				moved++;
			}
		nl_policy_state_free(&s);
	}
	nl_plan_free(&plan);
	return moved;
}

/* No idle core left, the mover shares its own core with one thread: onto
 * a sibling of a core as busy it would take from that core's thread what
 * the one it leaves gains, so it stays (it goes with sibling_spread=0).
 * Sharing its own with two (a CPU of it crowded), an idle sibling near its
 * data is allowed. */
static void sibling_when_no_idle_core(void **state)
{
	(void)state;
	struct vu u;

	vu_init(&u, TOPO);
	for (int c = 0; c < 16; c++)
		add(&u, 10 + c, 1, c, c < 8 ? 0 : 1);
	add(&u, 1, 2, 16, 1); /* the sibling of thread 10 */
	assert_int_equal(sibling_moves(&u), 0);
	P.sibling_spread = 0; /* as busy will do */
	assert_true(sibling_moves(&u) > 10);
	P.sibling_spread = 1;
	add(&u, 2, 2, 16, 1); /* and a thread on its CPU */
	assert_true(sibling_moves(&u) > 10);
	vu_free(&u);
}

/* The relief move or release step plans for tid 1, in *to (-1: none). */
static int relief_of(struct vu *u, int *to)
{
	struct nl_plan plan;
	struct nl_policy_state s;
	struct nl_rng rng;
	int kind = -1;
	nl_plan_init(&plan);
	nl_policy_state_init(&s);
	nl_rng_seed(&rng, 1);
	assert_int_equal(nl_policy_step(NL_POLICY_IMAR2, &P, vu_view(u, 1.0),
					&s, &rng, &plan),
			 0);
	*to = -1;
	for (size_t a = 0; a < plan.n; a++)
		if (plan.actions[a].tid == 1) {
			kind = plan.actions[a].kind;
			*to = plan.actions[a].to_cpu;
		}
	nl_policy_state_free(&s);
	nl_plan_free(&plan);
	return kind;
}

/* A thread numalot pinned on OS CPU 0 whose sibling (16) runs another busy
 * thread, both local: with a core of node 0 idle (7), it goes there; with
 * only node 1's cores idle, it stays pinned where it is (its memory's
 * node), neither moved across nor handed back to the OS. */
static void pinned_sharing_core_relieved_on_its_node(void **state)
{
	(void)state;
	struct vu u;
	int to;
	vu_init(&u, TOPO);
	add(&u, 1, 1, 0, 0)->pinned = 1;
	add(&u, 2, 1, 16, 0);
	for (int c = 1; c < 7; c++)
		add(&u, 10 + c, 1, c, 0);
	assert_int_equal(relief_of(&u, &to), NL_ACT_MIGRATE);
	assert_int_equal(u.topo->cpu_core[to],
			 u.topo->cpu_core[nl_topology_cpu_from_os(u.topo, 7)]);
	add(&u, 17, 1, 7, 0);
	assert_int_equal(relief_of(&u, &to), -1);
	vu_free(&u);
}

/* The same with node 0's cores all busy and node 1's idle: a thread whose
 * ops say it is compute-bound gains a whole core over remote memory, so it
 * takes an idle core of node 1 (pinned, it cannot go as the kernel's
 * balancer would take it); without op counts, or with remote_relief=0, it
 * stays. */
static void pinned_sharing_core_relieved_across(void **state)
{
	(void)state;
	struct vu u;
	struct nl_view_thread *t;
	int to;
	vu_init(&u, TOPO);
	t = add(&u, 1, 1, 0, 0);
	t->pinned = 1;
	t->has_oi = 1;
	t->oi = 10 * P.compute_oi;
	add(&u, 2, 1, 16, 0);
	for (int c = 1; c < 8; c++)
		add(&u, 10 + c, 1, c, 0);
	assert_int_equal(relief_of(&u, &to), NL_ACT_MIGRATE);
	assert_int_equal(u.topo->cpu_node[to], 1);
	assert_int_equal(others_on_core(&u, to, 1), 0);
	P.remote_relief = 0;
	assert_int_equal(relief_of(&u, &to), -1);
	P.remote_relief = 1;
	u.t[0].tput_ops = 0;
	assert_int_equal(relief_of(&u, &to), -1);
	vu_free(&u);
}

/* The same with thread 1 not pinned but bound by its own binding to node
 * 0 (numactl --cpunodebind=0), whose cores are all busy: the kernel cannot
 * move it off its shared core, so numalot does, as for a thread it pinned.
 * Unbound, or with an idle core in its binding, the kernel's to move. */
static void bound_sharing_core_relieved_across(void **state)
{
	(void)state;
	struct vu u;
	struct nl_view_thread *t;
	hwloc_bitmap_t node0 = hwloc_bitmap_alloc();
	int to;
	vu_init(&u, TOPO);
	for (int c = 0; c < u.topo->ncpus; c++)
		if (u.topo->cpu_node[c] == 0)
			hwloc_bitmap_set(node0, (unsigned)c);
	t = add(&u, 1, 1, 0, 0);
	t->has_oi = 1;
	t->oi = 10 * P.compute_oi;
	t->own = node0;
	add(&u, 2, 1, 16, 0)->own = node0;
	for (int c = 1; c < 8; c++)
		add(&u, 10 + c, 1, c, 0)->own = node0;
	assert_int_equal(relief_of(&u, &to), NL_ACT_MIGRATE);
	assert_int_equal(u.topo->cpu_node[to], 1);
	assert_int_equal(others_on_core(&u, to, 1), 0);
	/* An idle core in its binding (core 7's thread gone): the OS's. */
	hwloc_bitmap_free(u.allowed[--u.n]);
	assert_int_equal(relief_of(&u, &to), -1);
	add(&u, 17, 1, 7, 0)->own = node0;
	/* Not bound: the OS's too. */
	u.t[0].own = NULL;
	assert_int_equal(relief_of(&u, &to), -1);
	vu_free(&u);
	hwloc_bitmap_free(node0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(siblings_numbered_apart),
		cmocka_unit_test(idle_core_before_sibling),
		cmocka_unit_test(no_new_sharing_while_idle_core),
		cmocka_unit_test(crowded_takes_idle_core),
		cmocka_unit_test(sibling_when_no_idle_core),
		cmocka_unit_test(pinned_sharing_core_relieved_on_its_node),
		cmocka_unit_test(pinned_sharing_core_relieved_across),
		cmocka_unit_test(bound_sharing_core_relieved_across),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
