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

#include <stdint.h>
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

/* The nodes other than X with a CPU u may use: where the balancer may
 * push u off node X (none: it may not). */
static uint64_t push_nodes(const struct step *st, int u, int X)
{
	const struct nl_topology *topo = st->v->topo;
	uint64_t nodes = 0;
	for (int c = 0; c < topo->ncpus; c++)
		if (topo->cpu_node[c] != X &&
		    nl_step_allows(&st->v->threads[u], c))
			nodes |= (uint64_t)1 << topo->cpu_node[c];
	return nodes;
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

/* The node of u's data where distance from it matters, or -1. */
static int data_of(const struct step *st, int u)
{
	return nl_step_steady_compute(st, u) ? -1
					     : st->v->threads[u].preferred_node;
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

/* What the balancer may push, by node and by the nodes it may push them
 * to: threads that lose nothing by it in the kernel's eyes (FREE: off
 * their data's node), and threads on their data's node, which it takes
 * without preference: those that lose it (LOCAL) and those numalot
 * gathers back (BACK). A FREE thread of another process than the
 * mover's that the balancer takes to a node farther from its data than
 * the one it leaves loses by it all the same (FAR): the kernel does not
 * look at distance there, numalot does (one of the mover's own trades
 * with it). */
enum { FREE, LOCAL, BACK, FAR };
#define POOL_GROUPS 256
struct pool {
	int busy[NL_MAX_NODES], ngroups;
	struct group {
		uint64_t to;		 /* the nodes its threads may go to */
		int node, kind, data, n; /* data: its data's node, or -1 */
	} g[POOL_GROUPS];
};

/* One more thread of kind on node X that the balancer may push to the
 * nodes to. Past POOL_GROUPS kinds of thread, a thread that loses
 * nothing is left out and one that loses is taken to go anywhere: the
 * balancer is then counted to push more threads off their data, never
 * fewer. */
static void pool_add(struct pool *q, int X, int kind, uint64_t to, int data)
{
	if (kind != FREE)
		data = -1;
	for (int k = 0; k < q->ngroups; k++)
		if (q->g[k].node == X && q->g[k].kind == kind &&
		    q->g[k].to == to && q->g[k].data == data) {
			q->g[k].n++;
			return;
		}
	if (q->ngroups == POOL_GROUPS) {
		if (kind == FREE)
			return;
		to = ~(uint64_t)0;
		for (int k = 0; k < q->ngroups; k++)
			if (q->g[k].node == X && q->g[k].kind == kind &&
			    q->g[k].to == to) {
				q->g[k].n++;
				return;
			}
		q->ngroups--; /* the last group gives way to it */
	}
	q->g[q->ngroups++] = (struct group){to, X, kind, data, 1};
}

/* Would a thread of group g go farther from its data on node lo? */
static int goes_far(const struct nl_topology *topo, const struct group *g,
		    int lo)
{
	return g->data >= 0 &&
	       nl_topology_distance(topo, lo, g->data) >
		       nl_topology_distance(topo, g->node, g->data);
}

/* Take from node x a thread the balancer may push to node lo: one that
 * loses nothing first, then one that goes farther from its data (FAR).
 * Its kind, or -1 when none may go there. */
static int pool_take(const struct nl_topology *topo, struct pool *q, int x,
		     int lo)
{
	for (int pass = 0; pass < 4; pass++) {
		int kind = pass < 2 ? FREE : pass - 1;
		for (int k = 0; k < q->ngroups; k++) {
			struct group *g = &q->g[k];
			if (g->node != x || g->kind != kind || g->n <= 0 ||
			    !(g->to >> lo & 1) ||
			    (kind == FREE && goes_far(topo, g, lo) != pass))
				continue;
			g->n--;
			return kind == FREE && pass ? FAR : kind;
		}
	}
	return -1;
}

/* Nodes by busy CPUs, least first when up, most first otherwise (ties:
 * the lower node), as the model's balancer orders them. */
static void by_busy(int n, const int *busy, int *order, int up)
{
	for (int j = 0; j < n; j++)
		order[j] = j;
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i;
		while (j > 0 && (up ? busy[order[j - 1]] > busy[x]
				    : busy[order[j - 1]] < busy[x])) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
}

/*
 * The balancer evens the nodes: the least busy node pulls from the
 * busiest that has a thread it may take there (else the next busiest),
 * while they tip, a thread that loses nothing first; then any, so a
 * local one counts as lost while the node has one. A thread goes only
 * to a node it may run on. Returns how many threads it pushes off their
 * data.
 */
static int pushed_local(const struct nl_topology *topo, struct pool *q)
{
	int n = topo->nnodes, victims = 0, lo[NL_MAX_NODES], hi[NL_MAX_NODES];

	for (int round = 0; round < topo->ncpus; round++) {
		int kind = -1;
		by_busy(n, q->busy, lo, 1);
		by_busy(n, q->busy, hi, 0);
		for (int a = 0; a < n && kind < 0; a++)
			for (int b = 0; b < n && kind < 0; b++) {
				if (!tips(topo, q->busy, hi[b], lo[a]))
					continue;
				kind = pool_take(topo, q, hi[b], lo[a]);
				if (kind < 0)
					continue;
				victims += kind == LOCAL || kind == FAR;
				q->busy[hi[b]]--;
				q->busy[lo[a]]++;
			}
		if (kind < 0)
			break;
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
	with.ngroups = 0;
	for (int c = 0; c < topo->ncpus; c++) {
		int X = topo->cpu_node[c];
		for (int u = st->head[c]; u >= 0; u = st->next[u]) {
			const struct nl_view_thread *U = &v->threads[u];
			uint64_t to;
			if (u == i || U->pinned || st->moved[u] ||
			    nl_step_idle(st, u))
				continue;
			to = push_nodes(st, u, X);
			if (!to)
				continue;
			/* A local thread of i's own process counts as any
			 * other's (pushing it off gives back what i gains)
			 * unless it is gathered in turn on D: all of the
			 * process fits there, or its data cannot come and D
			 * can hold more of it than it does. */
			if (!local_there(st, u, X))
				pool_add(&with, X, FREE, to,
					 U->pid == T->pid ? -1
							  : data_of(st, u));
			else if (X == D && U->pid == T->pid &&
				 (fits || (gathers && held)))
				pool_add(&with, X, BACK, to, -1);
			else
				pool_add(&with, X, LOCAL, to, -1);
		}
	}
	without.ngroups = with.ngroups;
	memcpy(without.g, with.g, with.ngroups * sizeof with.g[0]);
	/* Without the move, i is where it is, the balancer's to push if
	 * numalot has not pinned it. */
	if (!T->pinned && !nl_step_idle(st, i) && push_nodes(st, i, S))
		pool_add(&without, S, local_there(st, i, S) ? LOCAL : FREE,
			 push_nodes(st, i, S), -1);
	return pushed_local(topo, &with) > pushed_local(topo, &without);
}
