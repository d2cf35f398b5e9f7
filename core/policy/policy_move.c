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

/* Busy threads other than i on the core of cpu. */
static int core_others(const struct step *st, int cpu, int i)
{
	const struct nl_topology *topo = st->v->topo;
	int n = 0;
	for (int c = 0; c < topo->ncpus; c++)
		if (topo->cpu_core[c] == topo->cpu_core[cpu])
			for (int u = st->head[c]; u >= 0; u = st->next[u])
				n += u != i;
	return n;
}

/* Busy threads other than i on cpu. */
static int cpu_others(const struct step *st, int cpu, int i)
{
	int n = 0;
	for (int u = st->head[cpu]; u >= 0; u = st->next[u])
		n += u != i;
	return n;
}

/*
 * Would partner u, sent from d to i's CPU s, share its CPU or its core
 * with more busy threads than it does now? A swap never crowds the
 * partner (docs/algorithms.md, "SMT"): its counters would not show the
 * loss as a gain of the pair.
 */
static int partner_crowded(const struct step *st, int i, int u, int s, int d)
{
	const struct nl_topology *topo = st->v->topo;
	if (cpu_others(st, s, i) > cpu_others(st, d, u))
		return 1;
	if (topo->cpu_core[s] == topo->cpu_core[d])
		return 0;
	return core_others(st, s, i) > core_others(st, d, u);
}

/*
 * Does the process of thread u want node P as a whole: is P the data node
 * of at least data_share of its busy threads whose data node is known?
 * Then its pages follow its threads (page placement moves a process's
 * pages, not a thread's); a first-touch process whose threads each keep
 * their own data on their own node does not.
 */
static int process_wants(const struct step *st, int u, int P)
{
	const struct nl_view *v = st->v;
	int on_p = 0, known = 0;
	for (int j = 0; j < v->nthreads; j++) {
		const struct nl_view_thread *t = &v->threads[j];
		if (t->pid != v->threads[u].pid || !nl_step_in_domain(st, j) ||
		    nl_step_idle(st, j) || t->preferred_node < 0)
			continue;
		known++;
		on_p += t->preferred_node == P;
	}
	return known > 0 && on_p >= st->p->data_share * known;
}

/*
 * Would u, on node D, reach its memory over more distance on node S: its
 * share on D and its share on its data node, weighed by the distance each
 * gains or loses (the rest of its accesses, unknown, left out)?
 */
static int partner_pays(const struct nl_topology *topo,
			const struct nl_view_thread *U, int D, int S)
{
	int Up = U->preferred_node;
	double dd = nl_topology_distance(topo, D, D),
	       sd = nl_topology_distance(topo, S, D),
	       su = nl_topology_distance(topo, S, Up),
	       du = nl_topology_distance(topo, D, Up);
	double d = U->here_share * (sd - dd) + U->pref_share * (su - du);
	return d > 0;
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
	if (U->held || partner_crowded(st, i, u, s, d))
		return 0;
	/* Without op counts a swap's cost to its partner could not be seen
	 * (its CPU share stays; docs/algorithms.md, "Partners"). */
	if (!T->tput_ops || !U->tput_ops)
		return 0;
	/* Its memory bound where it is (numactl --membind): its pages
	 * would not follow it, whatever its phase now. */
	if (U->mem_bound && U->preferred_node == D)
		return 0;
	if (nl_step_steady_compute(st, u))
		return 1;
	/* Its data is where i is (by its process's pages: only when they
	 * call it there, as a move needs). */
	if (U->preferred_node == S &&
	    (!U->process_share || nl_step_pages_say_away(st, u, S)))
		return 1;
	/* Another process's (a sibling's intensity differs by its phase,
	 * not by its needs); not one known by its process's pages whose
	 * own data may well be where it is: those shares say where the
	 * process's data is, not its (a first-touch thread was sent off its
	 * own pages). */
	if (T->has_oi && U->has_oi && U->oi >= 2 * T->oi && U->pid != T->pid &&
	    T->oi >= st->p->page_bw_oi &&
	    !(U->process_share && nl_step_pages_local(st, u, D)) &&
	    (U->preferred_node < 0 || !partner_pays(st->v->topo, U, D, S)))
		return 1;
	if (U->preferred_node >= 0) {
		const struct nl_topology *topo = st->v->topo;
		int Up = U->preferred_node;
		/* Both want the same node and it is i's process's: u's
		 * process goes elsewhere, and its pages follow it there
		 * (gathering); not while they are held where they are. */
		if (st->owner_pid >= 0 && T->pid == st->owner_pid &&
		    U->pid != st->owner_pid && Up == st->owner_node &&
		    U->pref_share >= st->p->data_share && !U->mem_bound &&
		    !U->pages_held && process_wants(st, u, Up))
			return 1;

		/* Otherwise u is never taken farther from where most of
		 * its accesses go. */
		if (nl_topology_distance(topo, S, Up) >
		    nl_topology_distance(topo, D, Up))
			return 0;
	}
	/* Nothing known of where u's data is (a young process, or no
	 * pages read): it may be all here; u stays. */
	if (U->preferred_node < 0)
		return 0;
	/* Its process's pages only: u's own data may well be here. */
	if (U->process_share &&
	    !nl_step_pages_say_away(st, u, U->preferred_node))
		return 0;
	if (U->preferred_node == D || U->here_share >= st->p->data_share)
		return 0;
	/* Another process's thread is not made to pay for i's gain: by
	 * what is known of where its accesses go (its share here and at
	 * its data node), they do not get farther on the whole. */
	return U->pid == T->pid || !partner_pays(st->v->topo, U, D, S);
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
		if (st->p->balance_partner && nl_balance_pushes_local(st, i, d))
			return n;
		st->opts[n] = (struct nl_destination){
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
		st->opts[n++] = (struct nl_destination){d, best, best_tk};
	return n;
}

/* A free CPU thread i may use on a core no other busy thread holds. */
static int idle_core_for(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	for (int c = 0; c < st->v->topo->ncpus; c++)
		if (st->head[c] < 0 && nl_step_allows(t, c) &&
		    !core_others(st, c, i))
			return 1;
	return 0;
}

/*
 * May thread i take free CPU d? Not when that makes another busy thread
 * share its core, unless i shares its own with more and no idle core is
 * left (as the kernel's select_idle_core comes before select_idle_smt;
 * docs/algorithms.md, "SMT"): the move then spreads the busy threads over
 * the cores, never packs them.
 */
static int sibling_ok(const struct step *st, int i, int d, int *idle)
{
	int there = core_others(st, d, i);
	if (!there)
		return 1;
	/* Without op counts (no PMU) a shared core's cost cannot be seen
	 * after, nor undone: only idle cores. */
	if (!st->v->threads[i].tput_ops)
		return 0;
	/* Only onto a core less busy than its own. Onto one as busy, the
	 * mover's share of a core stays, but the threads there lose what
	 * the ones it leaves gain, and nothing judges them: numalot stacked
	 * a process onto its data node's siblings while another's threads
	 * kept whole cores (docs/algorithms.md, "SMT"). */
	if (st->cpu[i] < 0 ||
	    there + st->p->sibling_spread > core_others(st, st->cpu[i], i))
		return 0;
	if (*idle < 0) /* once per thread's options: it costs ncpus^2 */
		*idle = idle_core_for(st, i);
	return !*idle;
}

/* Drop the migrations of thread i to free CPUs sibling_ok refuses. */
static int prefer_idle_cores(struct step *st, int i, int n)
{
	int k = 0, idle = -1;
	for (int j = 0; j < n; j++)
		if (st->opts[j].other >= 0 ||
		    sibling_ok(st, i, st->opts[j].cpu, &idle))
			st->opts[k++] = st->opts[j];
	return k;
}

/*
 * Does a crowded thread on s gain by going to node D even if wholly bound
 * by its memory's latency? Its CPU share grows by at most the threads on
 * its CPU, its latency by at most the distance ratio. Asked only where its
 * memory is bound and cannot follow it (docs/algorithms.md, "Crowded
 * threads"); a measured compute-bound thread pays no distance.
 */
static int crowd_pays(const struct step *st, int i, int home, int D)
{
	const struct nl_topology *topo = st->v->topo;
	int s = st->cpu[i], crowd = 0;
	if (!st->v->threads[i].mem_bound || nl_step_compute_bound(st, i))
		return 1;
	for (int u = st->head[s]; u >= 0; u = st->next[u])
		crowd += !nl_step_idle(st, u) || u == i;
	return nl_topology_distance(topo, home, D) <
	       crowd * nl_topology_distance(topo, home, topo->cpu_node[s]);
}

/*
 * A crowded thread with no data elsewhere: the free CPUs of the node
 * nearest its data (or its own node) that has any, and where it gains
 * even if memory-bound.
 */
static int crowded_options(struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	const struct nl_topology *topo = st->v->topo;
	int s = st->cpu[i], home = t->preferred_node >= 0 ? t->preferred_node
							  : topo->cpu_node[s];
	int nn = nodes_by_distance(topo, home, st->order + 1), n = 0, idle = -1;

	/* An idle core on any node before a busy core's sibling nearer. */
	st->order[0] = home;
	for (int k = 0; k <= nn && n == 0; k++) {
		if (!crowd_pays(st, i, home, st->order[k]))
			continue;
		for (int d = 0; d < topo->ncpus; d++)
			if (topo->cpu_node[d] == st->order[k] &&
			    st->head[d] < 0 && nl_step_allows(t, d) &&
			    sibling_ok(st, i, d, &idle))
				st->opts[n++] = (struct nl_destination){
					d, -1,
					nl_tickets_for(st->v, st->p, t, s, d,
						       1)};
	}
	return n;
}

/*
 * The process with most busy threads whose data is on node P (ties: the
 * lowest pid) when they are more than P has CPUs but fit on the nodes
 * nearer P than the farthest, or -1: when several processes want one
 * node and one of them cannot fit there, the one that keeps it and the
 * nodes nearest it (docs/algorithms.md, "Gathering").
 */
static int node_owner(const struct step *st, int P)
{
	const struct nl_view *v = st->v;
	int pids[64], counts[64], n = 0, best = -1, best_n = 0;

	for (int i = 0; i < v->nthreads; i++) {
		const struct nl_view_thread *t = &v->threads[i];
		int k = 0;
		if (!nl_step_in_domain(st, i) || nl_step_idle(st, i) ||
		    t->preferred_node != P ||
		    t->pref_share < st->p->data_share ||
		    nl_step_compute_bound(st, i))
			continue;
		while (k < n && pids[k] != t->pid)
			k++;
		if (k == n) {
			if (n == 64)
				continue;
			pids[n] = t->pid;
			counts[n++] = 0;
		}
		counts[k]++;
	}
	for (int k = 0; k < n; k++)
		if (counts[k] > best_n ||
		    (counts[k] == best_n && pids[k] < best)) {
			best = pids[k];
			best_n = counts[k];
		}
	/* Its threads that find no room near P stay as far as they are,
	 * and a parallel process ends with its slowest thread: it keeps P
	 * only if all of them fit on P and the nodes nearer P than the
	 * farthest (the socket's, on a machine of sockets). */
	int cpus = 0, near = 0;
	unsigned far = 0;
	for (int j = 0; j < v->topo->nnodes; j++)
		far = nl_topology_distance(v->topo, P, j) > far
			      ? nl_topology_distance(v->topo, P, j)
			      : far;
	for (int c = 0; c < v->topo->ncpus; c++) {
		int j = v->topo->cpu_node[c];
		cpus += j == P;
		near += nl_topology_distance(v->topo, P, j) < far;
	}
	return n > 1 && best_n > cpus && best_n <= near ? best : -1;
}

static int bandwidth_bound(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	return t->has_oi &&
	       (t->bw_cls ? t->bw_cls < 0 : t->oi < st->p->page_bw_oi);
}

/*
 * Would thread i contend for node P's memory with other processes'
 * threads? A latency-bound one (measured intensity at least page_bw_oi)
 * does not join a node where other processes' bandwidth-bound threads
 * take half the CPUs or more; a bandwidth-bound one does not join one
 * where other processes' memory-bound threads that are not bandwidth-bound
 * do (its streams would load their memory; spread, its process's pages
 * follow it instead).
 */
static int saturated(const struct step *st, int i, int P)
{
	const struct nl_view *v = st->v;
	const struct nl_view_thread *T = &v->threads[i];
	int cpus = 0, other = 0, bw = bandwidth_bound(st, i);
	if (!T->has_oi || (bw && (T->mem_bound || !st->p->pages)))
		return 0;
	for (int c = 0; c < v->topo->ncpus; c++) {
		if (v->topo->cpu_node[c] != P)
			continue;
		cpus++;
		for (int u = st->head[c]; u >= 0; u = st->next[u])
			other += v->threads[u].pid != T->pid &&
				 v->threads[u].has_oi &&
				 !nl_step_compute_bound(st, u) &&
				 bandwidth_bound(st, u) != bw;
	}
	return 2 * other >= cpus;
}

/* The moves of thread i (on s) to the CPUs of node `node`, after n. */
static int node_options(struct step *st, int i, int s, int node, int n)
{
	const struct nl_topology *topo = st->v->topo;
	for (int d = 0; d < topo->ncpus; d++)
		if (topo->cpu_node[d] == node)
			n = option_to(st, i, s, d, n);
	return n;
}

/* A node nearer P than i's own is a destination only when it removes at
 * least this share of i's distance beyond P's own (docs/algorithms.md,
 * "Gathering"). */
#define NEAR_CUT 0.25

/*
 * Thread i's data is on node P: the moves there, or when P has neither a
 * free CPU nor a willing partner, to the nearest nodes to P that are
 * nearer to it than i's own (the same socket, on a machine of sockets).
 */
static int data_options(struct step *st, int i, int P)
{
	const struct nl_topology *topo = st->v->topo;
	const struct nl_view_thread *T = &st->v->threads[i];
	int s = st->cpu[i], S = topo->cpu_node[s], n, nn;
	double here = nl_topology_distance(topo, S, P), tier = -1,
	       local = nl_topology_distance(topo, P, P);

	/* A bandwidth-bound thread's process gains by spreading over nodes
	 * with its pages (page_placement.c), not by gathering: where its
	 * pages may follow it, its data comes to it. */
	int bw = bandwidth_bound(st, i);
	if (bw && st->p->pages && !st->v->threads[i].mem_bound &&
	    !st->v->threads[i].pages_held)
		return 0;
	st->owner_pid = bw ? -1 : node_owner(st, P);
	st->owner_node = P;
	if (saturated(st, i, P)) {
		st->owner_pid = -1;
		return 0;
	}
	n = node_options(st, i, s, P, 0);
	nn = n || bw ? 0 : nodes_by_distance(topo, P, st->order);
	for (int k = 0; k < nn; k++) {
		double dk = nl_topology_distance(topo, st->order[k], P);
		if (dk >= here || (n > 0 && dk > tier) ||
		    here - dk < NEAR_CUT * (here - local))
			break;
		/* ...and only when the thread's accesses come nearer on
		 * the whole: what it gains on P's share must outweigh what
		 * it loses on the share of its own node. */
		if (T->pref_share * (here - dk) <=
		    T->here_share *
			    (nl_topology_distance(topo, st->order[k], S) -
			     nl_topology_distance(topo, S, S)))
			continue;
		tier = dk;
		n = node_options(st, i, s, st->order[k], n);
	}
	st->owner_pid = -1;
	return prefer_idle_cores(st, i, n);
}

/* Every move of thread i: to its data node, or to every other node. */
static int build_options(struct step *st, int i)
{
	const struct nl_topology *topo = st->v->topo;
	int s = st->cpu[i], S = topo->cpu_node[s], n = 0, nn;

	if (st->p->dest == NL_DEST_DATA) {
		int P = nl_step_data_node(st, i);
		if (P < 0)
			return nl_step_crowded_by_pins(st, i)
				       ? crowded_options(st, i)
				       : 0;
		return data_options(st, i, P);
	}
	nn = nodes_by_distance(topo, S, st->order);
	for (int k = 0; k < nn; k++)
		n = node_options(st, i, s, st->order[k], n);
	return n;
}

int nl_step_can_move(struct step *st, int i)
{
	return build_options(st, i) > 0;
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
	int relief = st->p->dest == NL_DEST_DATA &&
		     nl_step_data_node(st, i) < 0 &&
		     nl_step_crowded_by_pins(st, i);
	int n = build_options(st, i), rc, pair = -1;
	struct nl_action a = {.tid = t->tid,
			      .other_tid = -1,
			      .from_cpu = st->cpu[i],
			      .relief = relief};
	double total;

	if (n == 0) {
		a.kind = NL_ACT_SKIP;
		a.to_cpu = -1;
		a.reason = st->p->dest == NL_DEST_DATA
				   ? "no free CPU or willing partner on or "
				     "near its data node, or another job "
				     "contends for that node's memory"
				   : "no allowed CPU on another node to move "
				     "or swap to";
		return nl_plan_add(st->plan, &a);
	}
	if (st->p->tickets.stay > 0)
		st->opts[n++] =
			(struct nl_destination){-1, -1, st->p->tickets.stay};
	int k = choose(st, n, rng, &total);
	struct nl_destination *o = &st->opts[k];
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
		rc = nl_memo_add(st->s,
				 &(struct nl_memo){t->tid, a.from_cpu, a.to_cpu,
						   t->perf,
						   nl_step_judge_metric(st, i),
						   pair, t->pinned});
	}
	if (rc == 0 && memo && o->other >= 0) {
		const struct nl_view_thread *u = &st->v->threads[o->other];
		rc = nl_memo_add(
			st->s,
			&(struct nl_memo){u->tid, a.to_cpu, a.from_cpu, u->perf,
					  nl_step_judge_metric(st, o->other),
					  pair - 1, u->pinned});
	}
	if (o->other >= 0) {
		nl_step_occ_move(st, o->other, a.from_cpu);
		st->moved[o->other] = 1;
	}
	nl_step_occ_move(st, i, a.to_cpu);
	return rc;
}
