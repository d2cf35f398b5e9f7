/*
 * numalot: where a candidate thread may go, the tickets each move earns and
 * the draw (docs/algorithms.md, "Tickets" and "What numalot changes").
 */
#include "policy_priv.h"

double nl_tickets_for(const struct nl_view *v, const struct nl_policy_params *p,
		      const struct nl_view_thread *t, int from_cpu, int to_cpu,
		      int to_free)
{
	const struct nl_tickets *tk = &p->tickets;
	int from = v->topo->cpu_node[from_cpu], to = v->topo->cpu_node[to_cpu];
	double rec, n;

	if (!t->has_perf ||
	    !nl_record_get(t->record, &p->perf, to, v->now_s, &rec))
		n = tk->no_record;
	else
		n = rec >= t->perf ? tk->better : tk->worse;
	if (to_free)
		n += tk->free_cpu;
	if (t->preferred_node >= 0 && t->preferred_node == to)
		n += tk->preferred * nl_topology_distance(v->topo, from, from) /
		     nl_topology_distance(v->topo, from, to);
	if (t->has_perf && t->rel_perf < p->perf_threshold)
		n += tk->underperforming;
	return n;
}

/* Nodes other than from, nearest first. */
static int nodes_by_distance(const struct nl_topology *topo, int from,
			     int *order)
{
	int n = 0;
	for (int d = 0; d < topo->nnodes; d++)
		if (d != from)
			order[n++] = d;
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i;
		while (j > 0 && nl_topology_distance(topo, from, order[j - 1]) >
					nl_topology_distance(topo, from, x)) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	return n;
}

/*
 * May u (on CPU d) swap with thread i (on CPU s)? Always in the paper's
 * rule; by default only when u does not lose its data by it (u is
 * compute-bound, or its data is not on d's node), or when u needs its
 * memory much less than i does: twice i's operational intensity, so the
 * remote accesses the swap adds are fewer than those it saves (IMAR2
 * judges the pair after; docs/algorithms.md).
 */
static int swap_ok(const struct step *st, int i, int u, int s, int d)
{
	const struct nl_view_thread *U = &st->v->threads[u];
	const struct nl_view_thread *T = &st->v->threads[i];
	int D = st->v->topo->cpu_node[d], S = st->v->topo->cpu_node[s];

	if (!nl_step_in_domain(st, u) || st->moved[u] || !nl_step_allows(U, s))
		return 0;
	if (st->p->swap == NL_SWAP_SUM)
		return 1;
	if (U->held)
		return 0;
	if (nl_step_compute_bound(st, u) || U->preferred_node == S)
		return 1;
	if (T->has_oi && U->has_oi && U->oi >= 2 * T->oi)
		return 1;
	return U->preferred_node != D && U->here_share < st->p->data_share;
}

/* The tickets of a swap: both threads' (paper) or the mover's alone. */
static double swap_tickets(const struct step *st, int i, int u, int s, int d)
{
	const struct nl_view *v = st->v;
	double tk = nl_tickets_for(v, st->p, &v->threads[i], s, d, 0);
	if (st->p->swap == NL_SWAP_SUM)
		tk += nl_tickets_for(v, st->p, &v->threads[u], d, s, 0);
	return tk;
}

/* The move of thread i (on s) to CPU d, if any: migration or swap. */
static int option_to(struct step *st, int i, int s, int d, int n)
{
	const struct nl_view *v = st->v;
	const struct nl_view_thread *t = &v->threads[i];
	int best = -1;
	double best_tk = 0;

	if (!nl_step_allows(t, d))
		return n;
	if (st->head[d] < 0) {
		st->opts[n] = (struct option){
			d, -1, nl_tickets_for(v, st->p, t, s, d, 1)};
		return n + 1;
	}
	/* Occupied: a swap with the occupant worth most. */
	for (int u = st->head[d]; u >= 0; u = st->next[u]) {
		double tk;
		if (!swap_ok(st, i, u, s, d))
			continue;
		tk = swap_tickets(st, i, u, s, d);
		if (tk > best_tk) {
			best = u;
			best_tk = tk;
		}
	}
	if (best >= 0)
		st->opts[n++] = (struct option){d, best, best_tk};
	return n;
}

static int core_busy(const struct step *st, int cpu)
{
	const struct nl_topology *topo = st->v->topo;
	for (int c = 0; c < topo->ncpus; c++)
		if (topo->cpu_core[c] == topo->cpu_core[cpu] &&
		    st->head[c] >= 0)
			return 1;
	return 0;
}

/*
 * A free CPU whose core is busy (an SMT sibling at work) is a worse home
 * than a free core: when the node has a free core, drop the others.
 */
static int prefer_idle_cores(struct step *st, int n)
{
	int any_idle = 0, k = 0;
	for (int j = 0; j < n; j++)
		if (st->opts[j].other < 0 && !core_busy(st, st->opts[j].cpu))
			any_idle = 1;
	if (!any_idle)
		return n;
	for (int j = 0; j < n; j++)
		if (st->opts[j].other >= 0 || !core_busy(st, st->opts[j].cpu))
			st->opts[k++] = st->opts[j];
	return k;
}

int nl_step_free_cpu(const struct step *st, int i)
{
	for (int d = 0; d < st->v->topo->ncpus; d++)
		if (st->head[d] < 0 && nl_step_allows(&st->v->threads[i], d))
			return 1;
	return 0;
}

/*
 * A crowded thread with no data elsewhere: the free CPUs of the node
 * nearest its data (or its own node) that has any.
 */
static int crowded_options(struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	const struct nl_topology *topo = st->v->topo;
	int s = st->cpu[i], home = t->preferred_node >= 0 ? t->preferred_node
							  : topo->cpu_node[s];
	int nn = nodes_by_distance(topo, home, st->order + 1), n = 0;

	st->order[0] = home;
	for (int k = 0; k <= nn && n == 0; k++)
		for (int d = 0; d < topo->ncpus; d++)
			if (topo->cpu_node[d] == st->order[k] &&
			    st->head[d] < 0 && nl_step_allows(t, d))
				st->opts[n++] = (struct option){
					d, -1,
					nl_tickets_for(st->v, st->p, t, s, d,
						       1)};
	return prefer_idle_cores(st, n);
}

/* Every move of thread i: to its data node, or to every other node. */
static int build_options(struct step *st, int i)
{
	const struct nl_topology *topo = st->v->topo;
	int s = st->cpu[i], S = topo->cpu_node[s], n = 0, nn;

	if (st->p->dest == NL_DEST_DATA) {
		int P = nl_step_data_node(st, i);
		if (P < 0)
			return nl_step_crowded(st, i) ? crowded_options(st, i)
						      : 0;
		st->order[0] = P;
		nn = 1;
	} else {
		nn = nodes_by_distance(topo, S, st->order);
	}
	for (int k = 0; k < nn; k++)
		for (int d = 0; d < topo->ncpus; d++)
			if (topo->cpu_node[d] == st->order[k])
				n = option_to(st, i, s, d, n);
	if (st->p->dest == NL_DEST_DATA)
		n = prefer_idle_cores(st, n);
	return n;
}

static int choose(struct step *st, int n, struct nl_rng *rng, double *total)
{
	int pick = 0;
	*total = 0;
	for (int k = 0; k < n; k++)
		*total += st->opts[k].tickets;
	if (st->p->select == NL_SELECT_BEST) {
		for (int k = 1; k < n; k++)
			if (st->opts[k].tickets > st->opts[pick].tickets)
				pick = k;
		return pick;
	}
	/* Weighted lottery: probability proportional to tickets. */
	double x = nl_rng_uniform(rng) * *total;
	for (pick = 0; pick < n - 1; pick++) {
		x -= st->opts[pick].tickets;
		if (x < 0)
			break;
	}
	return pick;
}

static int plan_stay(struct step *st, struct nl_action *a)
{
	a->kind = NL_ACT_STAY;
	a->to_cpu = a->from_cpu;
	a->reason = "the draw chose to stay";
	return nl_plan_add(st->plan, a);
}

int nl_step_move(struct step *st, int i, struct nl_rng *rng, int memo)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	int n = build_options(st, i), rc, pair = -1;
	struct nl_action a = {
		.tid = t->tid, .other_tid = -1, .from_cpu = st->cpu[i]};
	double total;

	if (n == 0) {
		a.kind = NL_ACT_SKIP;
		a.to_cpu = -1;
		a.reason = st->p->dest == NL_DEST_DATA
				   ? "no free CPU or willing partner on its "
				     "data node"
				   : "no allowed CPU on another node to move "
				     "or swap to";
		return nl_plan_add(st->plan, &a);
	}
	if (st->p->tickets.stay > 0)
		st->opts[n++] = (struct option){-1, -1, st->p->tickets.stay};
	int k = choose(st, n, rng, &total);
	struct option *o = &st->opts[k];
	a.tickets = o->tickets;
	a.total_tickets = total;
	st->moved[i] = 1;
	if (o->cpu < 0)
		return plan_stay(st, &a);
	a.to_cpu = o->cpu;
	if (o->other >= 0) {
		a.kind = NL_ACT_SWAP;
		a.other_tid = st->v->threads[o->other].tid;
		a.reason = "swap drawn";
	} else {
		a.kind = NL_ACT_MIGRATE;
		a.reason = "migration drawn";
	}
	if (st->p->select == NL_SELECT_BEST)
		a.reason = o->other >= 0 ? "best swap" : "best migration";
	rc = nl_plan_add(st->plan, &a);
	if (rc == 0 && memo) {
		if (o->other >= 0)
			pair = (int)st->s->nlast + 1;
		rc = nl_memo_add(
			st->s,
			&(struct nl_memo){t->tid, a.from_cpu, a.to_cpu, t->perf,
					  nl_step_judge_metric(st, i), pair});
	}
	if (rc == 0 && memo && o->other >= 0) {
		const struct nl_view_thread *u = &st->v->threads[o->other];
		rc = nl_memo_add(
			st->s,
			&(struct nl_memo){u->tid, a.to_cpu, a.from_cpu, u->perf,
					  nl_step_judge_metric(st, o->other),
					  pair - 1});
	}
	if (o->other >= 0) {
		nl_step_occ_move(st, o->other, a.from_cpu);
		st->moved[o->other] = 1;
	}
	nl_step_occ_move(st, i, a.to_cpu);
	return rc;
}
