/*
 * numalot: what the kernel's load balancer does after a migration
 * (docs/algorithms.md, "The balancer's partner"). A move onto a free CPU
 * of node D that leaves D two busy CPUs ahead of another node makes the
 * balancer even them: it pushes one of D's threads that numalot has not
 * pinned to the other node. The move also leaves its own node lighter,
 * and the balancer may then take a thread from any node busier by as
 * much. Those threads are the move's partners as surely as a swap's, so
 * the move is not made when the balancer would push, after it, more
 * threads off their data than it would without it: it takes first the
 * ones that lose nothing (the kernel's migrate_degrades_locality), then
 * the rest.
 */
#include "policy_priv.h"

#include <string.h>

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

/* Would the balancer even node X with node p (busy[] CPUs by node)? */
static int tips(const struct nl_topology *topo, const int *busy, int X, int p)
{
	int diff = busy[X] - busy[p];
	return p != X && diff >= 2 &&
	       !(diff == 2 && busy[p] + 1 <= light_load(topo, p));
}

/* Does a node tip another? */
static int any_tips(const struct nl_topology *topo, const int *busy)
{
	for (int x = 0; x < topo->nnodes; x++)
		for (int p = 0; p < topo->nnodes; p++)
			if (tips(topo, busy, x, p))
				return 1;
	return 0;
}

/* May the balancer push u off node X: a CPU of another node allowed? */
static int pushable(const struct step *st, int u, int X)
{
	const struct nl_topology *topo = st->v->topo;
	for (int c = 0; c < topo->ncpus; c++)
		if (topo->cpu_node[c] != X &&
		    nl_step_allows(&st->v->threads[u], c))
			return 1;
	return 0;
}

/* Would u, on node D, lose its data if the balancer pushed it away? */
static int local_there(const struct step *st, int u, int D)
{
	const struct nl_view_thread *U = &st->v->threads[u];

	if (nl_step_steady_compute(st, u))
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

/* What the balancer may push, by node: threads that lose nothing by it
 * in the kernel's eyes (free: off their data's node), and threads on
 * their data's node, which it takes without preference: those that lose
 * it (local) and those numalot gathers back (back). */
struct pool {
	int busy[NL_MAX_NODES], free[NL_MAX_NODES], local[NL_MAX_NODES],
		back[NL_MAX_NODES];
};

/*
 * The balancer evens the nodes: the busiest that has a thread it may push
 * gives one to the least busy while they tip, a thread that loses nothing
 * first; then any, so a local one counts as lost while the node has one.
 * Returns how many threads it pushes off their data.
 */
static int pushed_local(const struct nl_topology *topo, struct pool *q)
{
	int victims = 0, blocked[NL_MAX_NODES] = {0};

	for (int round = 0; round < topo->ncpus; round++) {
		int x = -1, lo = 0;
		for (int j = 0; j < topo->nnodes; j++) {
			if (!blocked[j] && (x < 0 || q->busy[j] > q->busy[x]))
				x = j;
			if (q->busy[j] < q->busy[lo])
				lo = j;
		}
		if (x < 0 || !tips(topo, q->busy, x, lo))
			break;
		if (q->free[x] > 0)
			q->free[x]--;
		else if (q->local[x] > 0) {
			q->local[x]--;
			victims++;
		} else if (q->back[x] > 0) {
			q->back[x]--;
		} else {
			blocked[x] = 1;
			continue;
		}
		q->busy[x]--;
		q->busy[lo]++;
	}
	return victims;
}

int nl_balance_pushes_local(const struct step *st, int i, int d)
{
	const struct nl_view *v = st->v;
	const struct nl_topology *topo = v->topo;
	const struct nl_view_thread *T = &v->threads[i];
	int D = topo->cpu_node[d], s = st->cpu[i], S, fits, gathers, held,
	    alone;
	struct pool with, without;

	if (topo->nnodes > NL_MAX_NODES || topo->cpu_node[s] == D)
		return 0;
	S = topo->cpu_node[s];
	alone = st->head[s] == i && st->next[i] < 0;
	busy_by_node(st, without.busy);
	memcpy(with.busy, without.busy, sizeof with.busy);
	with.busy[D]++;
	with.busy[S] -= alone;
	if (!any_tips(topo, with.busy))
		return 0;
	/* All of i's process that wants D fits there: the trade gives the
	 * process its data's node as a whole, and its own threads the
	 * balancer pushes off D are gathered in turn. When its data cannot
	 * come to it (its memory bound by its own policy, or its page
	 * moves held), other processes' threads may be pushed for it too
	 * when it fits, and its own off D when D can hold more of it than
	 * it does; where its pages may follow its threads, they do, and no
	 * other process's thread is pushed off its own data for it. */
	gathers = process_gathers(st, i, D, &fits);
	held = T->mem_bound || T->pages_held;
	/* ...its data's node itself: one merely nearer it gains the mover
	 * a shorter distance, not the node, and no local thread of another
	 * process is pushed for that. */
	if (fits && held && T->preferred_node == D)
		return 0;
	memset(with.free, 0, sizeof with.free);
	memset(with.local, 0, sizeof with.local);
	memset(with.back, 0, sizeof with.back);
	for (int c = 0; c < topo->ncpus; c++) {
		int X = topo->cpu_node[c];
		for (int u = st->head[c]; u >= 0; u = st->next[u]) {
			const struct nl_view_thread *U = &v->threads[u];
			if (u == i || U->pinned || st->moved[u] ||
			    nl_step_idle(st, u) || !pushable(st, u, X))
				continue;
			/* A local thread of i's own process counts as any
			 * other's (pushing it off gives back what i gains)
			 * unless it is gathered in turn on D: all of the
			 * process fits there, or its data cannot come and D
			 * can hold more of it than it does. */
			if (!local_there(st, u, X))
				with.free[X]++;
			else if (X == D && U->pid == T->pid &&
				 (fits || (gathers && held)))
				with.back[X]++;
			else
				with.local[X]++;
		}
	}
	memcpy(without.free, with.free, sizeof with.free);
	memcpy(without.local, with.local, sizeof with.local);
	memcpy(without.back, with.back, sizeof with.back);
	/* Without the move, i is where it is, the balancer's to push if
	 * numalot has not pinned it. */
	if (!T->pinned && !nl_step_idle(st, i) && pushable(st, i, S))
		(local_there(st, i, S) ? without.local : without.free)[S]++;
	return pushed_local(topo, &with) > pushed_local(topo, &without);
}
