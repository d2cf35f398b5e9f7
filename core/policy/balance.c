/*
 * numalot: what the kernel's load balancer does after a migration
 * (docs/algorithms.md, "The balancer's partner"). A move onto a free CPU
 * of node D that leaves D two busy CPUs ahead of another node makes the
 * balancer even them: it pushes one of D's threads that numalot has not
 * pinned to the other node. That thread is the move's partner as surely
 * as a swap's, so the move is not made when every thread the balancer
 * could push would lose its data by it.
 */
#include "policy_priv.h"

/* The kernel's imb_numa_nr: a quarter of the node's CPUs, at least 1
 * (docs/machine-model.md, "Operating system": the load balancer between
 * nodes). */
static int light_load(const struct nl_topology *topo, int node)
{
	int cpus = 0;
	for (int c = 0; c < topo->ncpus; c++)
		cpus += topo->cpu_node[c] == node;
	return cpus / 4 > 1 ? cpus / 4 : 1;
}

/* CPUs with a busy thread, by node, as the step's plan has them. */
static void busy_by_node(const struct step *st, int *busy)
{
	const struct nl_topology *topo = st->v->topo;
	for (int j = 0; j < topo->nnodes; j++)
		busy[j] = 0;
	for (int c = 0; c < topo->ncpus; c++) {
		int any = 0;
		for (int u = st->head[c]; u >= 0 && !any; u = st->next[u])
			any = !nl_step_idle(st, u);
		busy[topo->cpu_node[c]] += any;
	}
}

/* Thread i moved from its CPU to free CPU d: which nodes is node D then
 * busier than by what the balancer evens (to[p] set)? Returns their
 * number. */
static int tips_balance(const struct step *st, int i, int d, int *to)
{
	const struct nl_topology *topo = st->v->topo;
	int busy[NL_MAX_NODES], D = topo->cpu_node[d], s = st->cpu[i];
	int n = 0;

	busy_by_node(st, busy);
	busy[D]++;
	if (st->head[s] == i && st->next[i] < 0)
		busy[topo->cpu_node[s]]--;
	for (int p = 0; p < topo->nnodes; p++) {
		int diff = busy[D] - busy[p];
		to[p] = p != D && diff >= 2 &&
			!(diff == 2 && busy[p] + 1 <= light_load(topo, p));
		n += to[p];
	}
	return n;
}

/* May the balancer push u to a CPU of a node in to that is free once i
 * has moved to d? Not outside u's allowed CPUs: a thread bound to D
 * stays. */
static int pushable(const struct step *st, int u, int i, int d, const int *to)
{
	const struct nl_topology *topo = st->v->topo;
	int s = st->cpu[i];
	for (int c = 0; c < topo->ncpus; c++) {
		int free = c == s ? st->head[s] == i && st->next[i] < 0
				  : st->head[c] < 0 && c != d;
		if (free && to[topo->cpu_node[c]] &&
		    nl_step_allows(&st->v->threads[u], c))
			return 1;
	}
	return 0;
}

/* Would u, on node D, lose its data if the balancer pushed it away? */
static int local_there(const struct step *st, int u, int D)
{
	const struct nl_view_thread *U = &st->v->threads[u];

	if (nl_step_compute_bound(st, u))
		return 0;
	/* Nothing known of where its data is: it may be all here. */
	if (U->preferred_node < 0)
		return 1;
	if (!U->process_share)
		return U->preferred_node == D ||
		       U->here_share >= st->p->data_share;
	/* Its process's pages only (step.c, the same reading). */
	return nl_step_pages_local(st, u, D);
}

/*
 * The busy threads of i's process that want node D (their data's node)
 * against the CPUs of D that i may use: *fits when they all fit; the
 * return is 1 when fewer of them are on D now than D can hold of them
 * (its own threads the balancer pushes off D are then gathered in turn,
 * each pinned where it goes, until D holds as many as it can).
 */
static int process_gathers(const struct step *st, int i, int D, int *fits)
{
	const struct nl_view *v = st->v;
	const struct nl_view_thread *T = &v->threads[i];
	int want = 0, cpus = 0, on_d = 0;

	for (int c = 0; c < v->topo->ncpus; c++)
		cpus += v->topo->cpu_node[c] == D && nl_step_allows(T, c);
	for (int j = 0; j < v->nthreads; j++) {
		if (v->threads[j].pid != T->pid || nl_step_idle(st, j))
			continue;
		want += v->threads[j].preferred_node == D;
		on_d += st->cpu[j] >= 0 && v->topo->cpu_node[st->cpu[j]] == D;
	}
	*fits = want <= cpus;
	return on_d < (want < cpus ? want : cpus);
}

int nl_balance_pushes_local(const struct step *st, int i, int d)
{
	const struct nl_view *v = st->v;
	const struct nl_topology *topo = v->topo;
	const struct nl_view_thread *T = &v->threads[i];
	int D = topo->cpu_node[d], victims = 0, fits, gathers, held,
	    to[NL_MAX_NODES];

	if (topo->nnodes > NL_MAX_NODES || topo->cpu_node[st->cpu[i]] == D ||
	    !tips_balance(st, i, d, to))
		return 0;
	/* All of i's process that wants D fits there: the trade gives the
	 * process its data's node as a whole, and its own threads the
	 * balancer pushes off D are gathered in turn. When its data cannot
	 * come to it (its memory bound by its own policy, or its page
	 * moves held), other processes' threads may be pushed for it too
	 * when it fits, and its own when D can hold more of it than it
	 * does; where its pages may follow its threads, they do, and no
	 * other process's thread is pushed off its own data for it. */
	gathers = process_gathers(st, i, D, &fits);
	held = T->mem_bound || T->pages_held;
	if (fits && held)
		return 0;
	for (int c = 0; c < topo->ncpus; c++) {
		if (topo->cpu_node[c] != D)
			continue;
		for (int u = st->head[c]; u >= 0; u = st->next[u]) {
			const struct nl_view_thread *U = &v->threads[u];
			if (U->pinned || st->moved[u] || nl_step_idle(st, u) ||
			    !pushable(st, u, i, d, to))
				continue;
			/* One the balancer may take at no loss: it takes
			 * that one (the kernel's migrate_degrades_locality).
			 * A local thread of i's own process counts as any
			 * other's (pushing it off gives back what i gains)
			 * unless it is gathered in turn: all of the process
			 * fits on D, or its data cannot come and D can hold
			 * more of it than it does. */
			if (!local_there(st, u, D))
				return 0;
			victims += U->pid != T->pid ||
				   !(fits || (gathers && held));
		}
	}
	return victims > 0;
}
