/*
 * numalot: the scratch of a policy step and what every policy asks of it
 * (policy_priv.h): where each thread is as the plan unfolds, its node, its
 * data's node, whether it is idle or crowded.
 */
#include "policy_priv.h"

#include <errno.h>
#include <stdlib.h>

int nl_plan_add(struct nl_plan *p, const struct nl_action *a)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct nl_action *n = realloc(p->actions, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->actions = n;
		p->cap = cap;
	}
	p->actions[p->n++] = *a;
	return 0;
}

static int memo_push(struct nl_memo **a, size_t *n, size_t *cap,
		     const struct nl_memo *m)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct nl_memo *x = realloc(*a, c * sizeof(*x));
		if (!x)
			return -ENOMEM;
		*a = x;
		*cap = c;
	}
	(*a)[(*n)++] = *m;
	return 0;
}

int nl_memo_add(struct nl_policy_state *s, const struct nl_memo *m)
{
	return memo_push(&s->last, &s->nlast, &s->caplast, m);
}

static void occ_remove(struct step *st, int i)
{
	int *pp = &st->head[st->cpu[i]];
	while (*pp != -1 && *pp != i)
		pp = &st->next[*pp];
	if (*pp == i)
		*pp = st->next[i];
}

void nl_step_occ_move(struct step *st, int i, int to)
{
	if (st->cpu[i] >= 0)
		occ_remove(st, i);
	st->cpu[i] = to;
	st->next[i] = st->head[to];
	st->head[to] = i;
}

int nl_step_in_domain(const struct step *st, int i)
{
	return st->v->threads[i].domain == st->v->domain;
}

/*
 * An idle thread (a shell waiting for its child, a sleeping main thread)
 * that numalot has not pinned is left to the OS: it is not pinned, moved
 * or counted as occupying a CPU. Pinning it would pass the pin on to every
 * process and thread it starts (an OpenMP program would size itself to
 * one CPU).
 */
int nl_step_idle(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	return !t->pinned && t->has_share && t->cpu_share < st->p->idle_share;
}

int nl_step_allows(const struct nl_view_thread *t, int cpu)
{
	return t->allowed && cpu >= 0 &&
	       hwloc_bitmap_isset(t->allowed, (unsigned)cpu);
}

int nl_step_node(const struct step *st, int i)
{
	int c = st->cpu[i];
	return c >= 0 && c < st->v->topo->ncpus ? st->v->topo->cpu_node[c] : -1;
}

int nl_step_compute_bound(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	return st->p->compute_oi > 0 && t->has_oi &&
	       (t->compute_cls ? t->compute_cls > 0
			       : t->oi > st->p->compute_oi);
}

int nl_step_steady_compute(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	return nl_step_compute_bound(st, i) &&
	       (!t->compute_cls || t->compute_periods >= STEADY_PERIODS);
}

int nl_step_data_node(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	int here = nl_step_node(st, i), P = t->preferred_node;

	if (P < 0 || here < 0 || P == here || nl_step_compute_bound(st, i))
		return -1;
	/* Most of its accesses elsewhere, clearly more than here. */
	if (t->pref_share < st->p->data_share ||
	    t->pref_share < t->here_share + 0.1)
		return -1;
	/* Its process's pages say where the process's data is, not where
	 * this thread's is: threads that first touched their own data hold
	 * it where they run, beside the data all share. Only a node with
	 * more of the pages than of the process's threads (one more thread
	 * there still not more) calls a thread, and only from a node that
	 * holds less than half the pages its threads would have touched
	 * there themselves (docs/algorithms.md, "What a node can
	 * measure"). */
	if (t->process_share && !nl_step_pages_say_away(st, i, P))
		return -1;
	return P;
}

int nl_step_pages_say_away(const struct step *st, int i, int P)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	int n = 0, on_p = 0, on_here = 0, here = nl_step_node(st, i);

	for (int j = 0; j < st->v->nthreads; j++) {
		if (st->v->threads[j].pid != t->pid ||
		    !nl_step_in_domain(st, j) || nl_step_idle(st, j))
			continue;
		int nj = nl_step_node(st, j);
		n++;
		on_p += nj == P;
		on_here += nj == here;
	}
	/* Threads of its process ended, their pages left where they ran:
	 * its own node must hold less than half what one thread of the most
	 * it had would have touched (a first-touch process's last thread was
	 * called to its ended siblings' node, away from its own pages, -3%;
	 * bound or master-initialised pages still call). */
	if (t->threads_peak > 0 && t->here_share >= 0.5 / t->threads_peak)
		return 0;
	return n > 0 && t->pref_share >= (double)(on_p + 1) / n &&
	       t->here_share < 0.5 * on_here / n;
}

int nl_step_pages_local(const struct step *st, int u, int D)
{
	const struct nl_view *v = st->v;
	const struct nl_view_thread *U = &v->threads[u];
	int n = 0, on_d = 0;

	for (int j = 0; j < v->nthreads; j++) {
		if (v->threads[j].pid != U->pid || st->cpu[j] < 0 ||
		    nl_step_idle(st, j))
			continue;
		n++;
		on_d += v->topo->cpu_node[st->cpu[j]] == D;
	}
	return n > 0 && U->here_share >= 0.5 * on_d / n;
}

/*
 * What a move is judged on: the thread's throughput (ops/s, or its CPU
 * share without op counts) over its process's mean, so that a phase of the
 * whole process does not count; its own throughput when it is alone.
 * Not the 3DyRM perf: that divides by the latency a remote CPU adds, which
 * the ops/s already paid, so a move that gave a thread a CPU of its own
 * or a swap that brought a latency-bound thread home was undone
 * (docs/algorithms.md, judge).
 */
double nl_step_judge_metric(const struct step *st, int i)
{
	const struct nl_view *v = st->v;
	int siblings = 0;
	double sum = 0;
	for (int j = 0; j < v->nthreads; j++)
		if (v->threads[j].pid == v->threads[i].pid &&
		    v->threads[j].has_perf) {
			siblings++;
			sum += v->threads[j].tput;
		}
	if (siblings > 1 && sum > 0)
		return v->threads[i].tput * siblings / sum;
	return v->threads[i].tput;
}

double nl_step_core_share(const struct step *st, int i)
{
	const struct nl_topology *topo = st->v->topo;
	int c = st->cpu[i], k = 0;
	if (c < 0)
		return 1;
	for (int d = 0; d < topo->ncpus; d++)
		if (topo->cpu_core[d] == topo->cpu_core[c])
			for (int u = st->head[d]; u >= 0; u = st->next[u])
				k++;
	return k < 2 ? 1 : nl_smt_yield(k) / k;
}

double nl_smt_yield(int k)
{
	/* Y(k) = 1 + 2 G (1 - 1/k) cores for k threads, G = 0.2: two
	 * hardware threads yield about 1.2 cores (docs/algorithms.md,
	 * "Watch"). */
	return k < 2 ? 1 : 1 + 0.4 * (1 - 1.0 / k);
}

int nl_step_crowded(const struct step *st, int i)
{
	int c = st->cpu[i];
	return c >= 0 && !nl_step_idle(st, i) &&
	       !(st->head[c] == i && st->next[i] < 0);
}

/* Some CPU of thread i's own binding (within what numalot may use) is
 * free: the OS can move it there itself. */
int nl_step_own_free_cpu(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	int c, found = 0;
	if (!t->own)
		return nl_step_free_cpu(st, i);
	hwloc_bitmap_foreach_begin(c, t->own)
	{
		if (c >= st->v->topo->ncpus)
			break;
		if (nl_step_allows(t, c) && st->head[c] < 0) {
			found = 1;
			break;
		}
	}
	hwloc_bitmap_foreach_end();
	return found;
}

int nl_step_crowded_by_pins(const struct step *st, int i)
{
	int c = st->cpu[i];
	if (!nl_step_crowded(st, i))
		return 0;
	for (int u = st->head[c]; u >= 0; u = st->next[u])
		if (u != i && st->v->threads[u].pinned && !st->moved[u])
			return 1;
	if (st->v->threads[i].pinned && !st->moved[i])
		return 1;
	/* Its own binding is full: the OS cannot part them either. */
	return !nl_step_own_free_cpu(st, i);
}

int nl_step_free_cpu(const struct step *st, int i)
{
	for (int d = 0; d < st->v->topo->ncpus; d++)
		if (st->head[d] < 0 && nl_step_allows(&st->v->threads[i], d))
			return 1;
	return 0;
}

int nl_step_find(const struct nl_view *v, int tid)
{
	int lo = 0, hi = v->nthreads - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (v->threads[mid].tid == tid)
			return mid;
		if (v->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

void nl_step_lengthen(struct nl_policy_state *s, int maxm)
{
	s->period_mult = s->period_mult * 2 > maxm ? maxm : s->period_mult * 2;
}

int nl_step_has_reason(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	if (!nl_step_in_domain(st, i) || !t->has_perf || st->moved[i] ||
	    nl_step_idle(st, i) || st->cpu[i] < 0)
		return 0;
	if (st->p->dest == NL_DEST_ANY)
		return 1;
	int data = nl_step_data_node(st, i);
	/* A held thread may still go to its data node, found elsewhere since
	 * it moved, but never back to the node it left (docs/algorithms.md,
	 * hold_s). */
	if (t->held)
		return data >= 0 && data != t->left_node;
	return data >= 0 || nl_step_crowded_by_pins(st, i);
}
