/*
 * numalot: page placement (docs/algorithms.md, "Memory follows threads").
 * After a domain's thread moves, each of its processes whose pages are
 * away from its threads has some moved towards them: the target share of
 * each node is the share of the process's busy threads on it, so a
 * process on one node gets its pages there, and a process spread over
 * several nodes gets them spread the same way instead of concentrated on
 * one. Compute-bound processes and memory bound by the process's own
 * policy are left alone. Moves are rate-limited; a move after which the
 * process ran slower is not tried again for page_hold_s.
 */
#include "engine_priv.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "util.h"

#define PAGE_BYTES 4096.0
/* Threads on one node: at least this share of them on the same node. */
#define SPAN_SHARE 0.8
/* Once moving, a process's pages move until this share is misplaced. */
#define STOP_MISPLACED 0.05
/* Periods a latency-bound process's threads must have found no room on
 * its pages' node before its pages follow them there. */
#define CROWDED_PERIODS 3
/* A process whose threads numalot moved within this many periods is still
 * being placed: its pages wait. */
#define MOVING_PERIODS 2.5
/* At most this many seconds of page_rate in one step. */
#define MAX_BUDGET_S 4.0

struct shape {
	double threads[NL_MAX_NODES]; /* busy threads by node */
	double pages[NL_MAX_NODES];   /* its pages by node */
	double nthreads, npages, tput, oi_sum;
	int n_oi;
	int cpu_share_only; /* some thread's throughput is its CPU share */
	int moving;	    /* threads numalot moved in its last periods */
};

/* The process's threads, throughput and pages; 0, or -1 to skip it. */
static int shape_of(struct nl_engine *e, const struct edomain *d, int pid,
		    double now, struct shape *sh)
{
	const struct nl_topology *topo = e->m->topo;

	memset(sh, 0, sizeof(*sh));
	for (size_t i = 0; i < e->nlive; i++) {
		const struct ethread *t = e->live[i];
		if (t->pid != pid || !t->has_perf || t->cpu < 0 ||
		    (t->has_share && t->cpu_share < d->params.idle_share))
			continue;
		sh->threads[topo->cpu_node[t->cpu]]++;
		sh->nthreads++;
		sh->tput += t->tput;
		sh->cpu_share_only |= !t->tput_ops;
		sh->moving +=
			t->moved_s >= 0 &&
			now - t->moved_s < MOVING_PERIODS * d->params.period_s;
		if (t->has_oi) {
			sh->oi_sum += t->oi;
			sh->n_oi++;
		}
	}
	if (sh->nthreads == 0 ||
	    e->m->ops->node_pages(e->m, pid, sh->pages) < 0)
		return -1;
	for (int j = 0; j < topo->nnodes; j++)
		sh->npages += sh->pages[j];
	return sh->npages > 0 ? 0 : -1;
}

/* Share of its pages where its threads are, node by node: the sum over
 * nodes of min(share of its pages, share of its threads). */
static double locality(const struct shape *sh, int nnodes)
{
	double on = 0;
	for (int j = 0; j < nnodes; j++)
		on += fmin(sh->pages[j] / sh->npages,
			   sh->threads[j] / sh->nthreads);
	return on;
}

static int journal_pages(struct edomain *d, int pid, int from, int to,
			 double bytes, double now, const char *reason)
{
	struct nl_action a = {.kind = NL_ACT_PAGES,
			      .tid = -1,
			      .other_tid = -1,
			      .from_cpu = from,
			      .to_cpu = to,
			      .bytes = bytes,
			      .reason = reason};
	return nl_engine_journal(d, &a, now, NULL, pid, -1);
}

/* Move from the node with most surplus to the one most short, until the
 * budget is spent or the shape is within page_misplaced. */
static int move_some(struct nl_engine *e, struct edomain *d, struct eprocess *p,
		     struct shape *sh, double budget, double now)
{
	int n = e->m->topo->nnodes, rc = 0;

	for (int round = 0; round < n && budget > PAGE_BYTES; round++) {
		int from = -1, to = -1;
		double over = 0, under = 0, moved = 0, t0;
		for (int j = 0; j < n; j++) {
			double want = sh->threads[j] / sh->nthreads,
			       have = sh->pages[j] / sh->npages;
			if (have - want > over) {
				over = have - want;
				from = j;
			}
			if (want - have > under) {
				under = want - have;
				to = j;
			}
		}
		if (from < 0 || to < 0 || over < STOP_MISPLACED / n)
			break;
		double bytes = fmin(budget, fmin(over, under) * sh->npages *
						    PAGE_BYTES);
		t0 = nl_mono_s();
		/* Interleaved memory is a starting placement, as a CPU
		 * binding is, unless bindings are kept. */
		rc = e->m->ops->move_pages(
			e->m, p->pid, from, to, bytes,
			d->params.keep_bindings ? 0 : NL_PAGES_SOFT, &moved);
		/* The host's time: none on the simulated node (its reports
		 * are the same for the same seed). */
		if (!e->m->modelled)
			p->pg.wall_s += nl_mono_s() - t0;
		if (rc == -EPERM) {
			p->pg.refused = 1;
			return journal_pages(
				d, p->pid, from, to, 0, now,
				d->params.keep_bindings
					? "its memory is placed by its "
					  "own policy (bindings kept): "
					  "left as asked"
					: "its memory is bound by its own "
					  "policy: left as asked");
		}
		/* What moved counts even when the move stopped early (the
		 * process ended, a page could not go). */
		if (moved > 0) {
			int jr;
			sh->pages[from] -= moved / PAGE_BYTES;
			sh->pages[to] += moved / PAGE_BYTES;
			budget -= moved;
			p->pg.bytes += moved;
			p->pg.moves++;
			p->pg.judge = 1;
			jr = journal_pages(d, p->pid, from, to, moved, now,
					   "pages follow the threads");
			if (jr && rc >= 0)
				rc = jr;
		}
		if (rc < 0)
			return rc == -ESRCH ? 0 : rc;
		if (rc || moved <= 0)
			return rc;
	}
	return 0;
}

/* CPUs of node not taken by busy threads of other processes: room for
 * pid's threads there. */
static int node_room(const struct nl_engine *e, const struct edomain *d,
		     int pid, int node)
{
	const struct nl_topology *topo = e->m->topo;
	int n = 0;
	for (int c = 0; c < topo->ncpus; c++)
		n += topo->cpu_node[c] == node;
	for (size_t i = 0; i < e->nlive; i++) {
		const struct ethread *t = e->live[i];
		if (t->pid != pid && t->cpu >= 0 &&
		    topo->cpu_node[t->cpu] == node &&
		    !(t->has_share && t->cpu_share < d->params.idle_share))
			n--;
	}
	return n;
}

static int main_node(const struct shape *sh, int nnodes)
{
	int data = 0;
	for (int j = 1; j < nnodes; j++)
		if (sh->pages[j] > sh->pages[data])
			data = j;
	return data;
}

/*
 * Is p the process that keeps node `data` (of the processes of its domain
 * whose pages are mostly there, the one with most busy threads; ties: the
 * lowest pid)? The thread policy gathers that one's threads near the node
 * (docs/algorithms.md, "Gathering"); the others' pages follow their
 * threads.
 */
static int keeps_node(struct nl_engine *e, const struct edomain *d,
		      const struct eprocess *p, const struct shape *sh,
		      int data, double now)
{
	int n = e->m->topo->nnodes;
	for (size_t k = 0; k < e->nprocs; k++) {
		const struct eprocess *q = &e->procs[k];
		struct shape qs;
		if (q == p || q->domain != d->id ||
		    shape_of(e, d, q->pid, now, &qs) < 0 ||
		    main_node(&qs, n) != data)
			continue;
		if (qs.nthreads > sh->nthreads ||
		    (qs.nthreads == sh->nthreads && q->pid < p->pid))
			return 0;
	}
	return 1;
}

static int step_process(struct nl_engine *e, struct edomain *d,
			struct eprocess *p, double now)
{
	const struct nl_policy_params *pp = &d->params;
	int n = e->m->topo->nnodes;
	struct shape sh;
	double misplaced = 0, elapsed;

	if (p->pg.refused || shape_of(e, d, p->pid, now, &sh) < 0)
		return 0;
	if (!p->pg.loc_known) {
		p->pg.loc_before = locality(&sh, n);
		p->pg.loc_known = 1;
	}
	p->pg.loc_after = locality(&sh, n);
	elapsed = p->pg.last_s > 0 ? now - p->pg.last_s : pp->period_s;
	p->pg.last_s = now;
	if (p->pg.judge) {
		/* The move did not pay: not again for a while. Judged on
		 * ops/s only: a CPU share says nothing of memory speed. */
		p->pg.judge = 0;
		if (!sh.cpu_share_only &&
		    sh.tput < pp->undo_threshold * p->pg.tput_before) {
			p->pg.failed++;
			p->pg.hold_until_s = now + pp->page_hold_s;
			return journal_pages(d, p->pid, -1, -1, 0, now,
					     "the process ran slower after its "
					     "pages moved: not repeated soon");
		}
	}
	if (now < p->pg.hold_until_s)
		return 0;
	/* Winding down (its threads ending): where the last few run says
	 * nothing about where its pages should be. */
	p->pg.max_threads = fmax(p->pg.max_threads, sh.nthreads);
	if (sh.nthreads < 0.8 * p->pg.max_threads)
		return 0;
	/* Compute-bound: where its pages are hardly matters. */
	if (pp->compute_oi > 0 && sh.n_oi > 0 &&
	    sh.oi_sum / sh.n_oi > pp->compute_oi)
		return 0;
	/* Threads over several nodes: spreading its pages relieves a
	 * bandwidth-bound process; a latency-bound one gains more from its
	 * threads going to the pages (the thread policy) when they fit
	 * there, beside the other processes' busy threads, so then its pages
	 * stay. Unknown intensity (no PMU): treated as latency-bound. */
	double most = 0, most_pages = 0;
	int data = 0;
	for (int j = 0; j < n; j++) {
		most = fmax(most, sh.threads[j]);
		if (sh.pages[j] > most_pages) {
			most_pages = sh.pages[j];
			data = j;
		}
	}
	int bw = sh.n_oi > 0 && sh.oi_sum / sh.n_oi < pp->page_bw_oi;
	/* Spread by bandwidth over threads numalot is still placing: where
	 * they end up is not known yet. */
	if (most < SPAN_SHARE * sh.nthreads && bw && sh.moving)
		return 0;
	if (most < SPAN_SHARE * sh.nthreads && !bw) {
		/* Other processes' busy threads fill the pages' node: once
		 * that has lasted, the pages go to the threads instead; not
		 * while numalot still gathers its threads near them. */
		if (sh.nthreads <= node_room(e, d, p->pid, data) ||
		    (sh.moving && keeps_node(e, d, p, &sh, data, now))) {
			p->pg.crowded = 0;
			return 0;
		}
		if (++p->pg.crowded < CROWDED_PERIODS)
			return 0;
	}
	for (int j = 0; j < n; j++)
		misplaced += fmax(0, sh.pages[j] / sh.npages -
					     sh.threads[j] / sh.nthreads);
	/* Start past page_misplaced; once started, go on until nearly all
	 * of it is where its threads are. */
	if (misplaced < (p->pg.active ? STOP_MISPLACED : pp->page_misplaced)) {
		p->pg.active = 0;
		return 0;
	}
	p->pg.active = 1;
	p->pg.tput_before = sh.tput;
	return move_some(e, d, p, &sh,
			 pp->page_rate * fmin(elapsed, MAX_BUDGET_S), now);
}

/* More busy threads than CPUs: the OS time-shares them, and where a
 * thread runs says little about where its pages should be. */
static int oversubscribed(const struct nl_engine *e, const struct edomain *d)
{
	int busy = 0;
	for (size_t i = 0; i < e->nlive; i++) {
		const struct ethread *t = e->live[i];
		busy += t->cpu >= 0 &&
			!(t->has_share && t->cpu_share < d->params.idle_share);
	}
	return busy > e->m->topo->ncpus;
}

int nl_engine_pages_step(struct nl_engine *e, struct edomain *d, double now)
{
	int rc = 0;

	if (!e->m->ops->move_pages || !e->m->ops->node_pages ||
	    oversubscribed(e, d))
		return 0;
	for (size_t k = 0; k < e->nprocs && rc == 0; k++)
		if (e->procs[k].domain == d->id)
			rc = step_process(e, d, &e->procs[k], now);
	return rc;
}
