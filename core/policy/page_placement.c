/*
 * numalot: page placement (docs/algorithms.md, "Memory follows threads"):
 * the page moves that bring each process's pages to its busy threads'
 * nodes, in the same shares. It plans; the engine applies (engine_pages.c).
 */
#include "page_placement.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"

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
/* Threads on fewer nodes than the pages by more than this (in effective
 * nodes) would concentrate its memory. */
#define SPREAD_SLACK 0.5
/* A trial run is judged this many periods past its last move. */
#define TRIAL_AFTER 3
/* ...and undone when its throughput fell by more than this share: its
 * undo only gives back the placement the process chose. */
#define TRIAL_MARGIN 0.03

/* A run that concentrates its memory starts only this many steps after
 * its threads last moved between nodes. */
#define SETTLED_STEPS 2

struct shape {
	double threads[NL_MAX_NODES]; /* busy threads by node */
	double pages[NL_MAX_NODES];   /* its pages by node */
	double nthreads, npages, tput, oi_sum;
	int n_oi;
	int cpu_share_only; /* some thread's throughput is its CPU share */
	int moving;	    /* threads numalot moved in its last periods */
};

/* The process's threads, throughput and pages; 0, or -1 to skip it. */
static int shape_of(const struct nl_pages_domain *dm, int pid, struct shape *sh)
{
	const struct nl_view *v = dm->v;
	const struct nl_topology *topo = v->topo;
	const struct nl_policy_params *pp = dm->params;
	double now = v->now_s;

	memset(sh, 0, sizeof(*sh));
	for (int i = 0; i < v->nthreads; i++) {
		const struct nl_view_thread *t = &v->threads[i];
		if (t->pid != pid || !t->has_perf || t->cpu < 0 ||
		    (t->has_share && t->cpu_share < pp->idle_share))
			continue;
		sh->threads[topo->cpu_node[t->cpu]]++;
		sh->nthreads++;
		sh->tput += t->tput;
		sh->cpu_share_only |= !t->tput_ops;
		sh->moving += t->moved_s >= 0 &&
			      now - t->moved_s < MOVING_PERIODS * pp->period_s;
		if (t->has_oi) {
			sh->oi_sum += t->oi;
			sh->n_oi++;
		}
	}
	if (sh->nthreads == 0 || dm->read(dm->ctx, pid, sh->pages) < 0)
		return -1;
	for (int j = 0; j < topo->nnodes; j++)
		sh->npages += sh->pages[j];
	return sh->npages > 0 ? 0 : -1;
}

/* Pages of pid (a process of the domain) are on the move: how its
 * threads run says nothing of another's trial. */
static int pages_moving(const struct nl_pages_domain *dm, int pid)
{
	for (size_t k = 0; k < dm->nprocs; k++)
		if (dm->procs[k].pid == pid)
			return dm->procs[k].st->active ||
			       dm->procs[k].st->undoing;
	return 0;
}

/* A process whose mean operational intensity changed by less than this
 * factor is in the same phase. */
#define PHASE_OI 1.25

static double oi_of(const struct shape *sh)
{
	return sh->n_oi ? sh->oi_sum / sh->n_oi : 0;
}

/* Intensities a and b in the same phase; unmeasured ones cannot tell. */
static int in_phase(double a, double b)
{
	return a <= 0 || b <= 0 || (a < PHASE_OI * b && a * PHASE_OI > b);
}

/*
 * Its calm throughput in the phase of this period: the mean over the
 * calm periods whose intensity is within PHASE_OI of this one's, or -1
 * when none was. A mixed process runs at several times the ops/s in
 * one phase as in the other; a trial judged only against the phase it
 * began in was never judged when that phase did not come back (random
 * seed 3970517246 perturbed, scenario 180). Unmeasured intensity: the
 * calm mean.
 */
static double calm_in_phase(const struct nl_page_state *pg,
			    const struct shape *sh)
{
	double oi = oi_of(sh), sum = 0;
	int n = 0;
	if (oi <= 0 || pg->calm_s_n == 0)
		return pg->calm_tput > 0 ? pg->calm_tput : -1;
	for (int i = 0; i < pg->calm_s_n; i++)
		if (in_phase(oi, pg->calm_s_oi[i])) {
			sum += pg->calm_s_tput[i];
			n++;
		}
	return n ? sum / n : -1;
}

/* Most neighbour processes a trial watches. */
#define MAX_NEIGHBOURS 16

/*
 * How the other processes' busy threads on the nodes of mask run against
 * their own process's threads elsewhere: the ratio of their mean ops/s,
 * averaged over those processes, weighted by their threads there. A
 * phase moves a process's threads alike, so this ratio moves only with
 * what differs between the nodes: the memory a trial loads. -1 when no
 * such process has threads on both sides, or some lack op counts.
 */
static double neighbours_tput(const struct nl_pages_domain *dm, int pid,
			      unsigned long long mask)
{
	const struct nl_view *v = dm->v;
	struct neighbour {
		int pid, in_n, out_n;
		double in, out;
	} nb[MAX_NEIGHBOURS];
	int k = 0;
	double sum = 0, w = 0;

	for (int i = 0; i < v->nthreads; i++) {
		const struct nl_view_thread *t = &v->threads[i];
		int j;
		if (t->pid == pid || !t->has_perf || t->cpu < 0 ||
		    (t->has_share && t->cpu_share < dm->params->idle_share) ||
		    pages_moving(dm, t->pid))
			continue;
		if (!t->tput_ops)
			return -1;
		for (j = 0; j < k && nb[j].pid != t->pid; j++)
			;
		if (j == k) {
			if (k == MAX_NEIGHBOURS)
				continue;
			nb[k++] = (struct neighbour){t->pid, 0, 0, 0, 0};
		}
		if (mask >> v->topo->cpu_node[t->cpu] & 1) {
			nb[j].in += t->tput;
			nb[j].in_n++;
		} else {
			nb[j].out += t->tput;
			nb[j].out_n++;
		}
	}
	for (int j = 0; j < k; j++)
		if (nb[j].in_n && nb[j].out_n && nb[j].out > 0) {
			sum += nb[j].in / nb[j].in_n /
			       (nb[j].out / nb[j].out_n) * nb[j].in_n;
			w += nb[j].in_n;
		}
	return w > 0 ? sum / w : -1;
}

/* How many nodes x[0..n) is spread over, in effect: (sum x)^2 / sum x^2
 * (1 on one node, n when even). */
static double spread_of(const double *x, int n)
{
	double s = 0, s2 = 0;
	for (int j = 0; j < n; j++) {
		s += x[j];
		s2 += x[j] * x[j];
	}
	return s2 > 0 ? s * s / s2 : 0;
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

static int plan_pages(struct nl_plan *plan, int pid, int from, int to,
		      double bytes, const char *reason)
{
	return nl_plan_add(plan, &(struct nl_action){.kind = NL_ACT_PAGES,
						     .tid = -1,
						     .other_tid = -1,
						     .pid = pid,
						     .from_cpu = from,
						     .to_cpu = to,
						     .bytes = bytes,
						     .reason = reason});
}

/*
 * Would moving `share` of the process's pages from node `from` to node
 * `to` leave its worst-placed thread farther from its memory than before?
 * Asked when no thread of it runs on `from`: which thread reads a page is
 * not known, so each busy thread's node j is taken to read all of the
 * pages, at mean distance sum_k P_k d(j, k) / P, and a parallel process
 * ends with its slowest thread. Where every remote distance is the same
 * (two levels), moving onto a thread's node never does. Asked for a
 * process that is not bandwidth-bound (near_only).
 */
static int worst_farther(const struct nl_topology *topo,
			 const struct nl_page_step *ps, int from, int to,
			 double share)
{
	int n = topo->nnodes;
	double before = 0, after = 0;

	for (int j = 0; j < n; j++) {
		double m = 0;
		if (ps->threads[j] <= 0)
			continue;
		for (int k = 0; k < n; k++)
			m += ps->pages[k] / ps->npages *
			     nl_topology_distance(topo, j, k);
		before = fmax(before, m);
		after = fmax(
			after,
			m + share * ((double)nl_topology_distance(topo, j, to) -
				     nl_topology_distance(topo, j, from)));
	}
	return after > before + 1e-9;
}

/*
 * The share of its pages a process may move from node `from` to node
 * `to` before to's memory is busier than from's was: each memory-bound
 * busy thread loads the nodes of its process's pages by their shares
 * (docs/algorithms.md, "Memory follows threads"). Unlimited unless
 * by_load.
 */
static double room_on(const struct nl_page_step *ps, int from, int to)
{
	if (!ps->by_load)
		return 1;
	double load_from = ps->others[from] +
			   ps->pages[from] / ps->npages * ps->nthreads,
	       load_to = ps->others[to] +
			 ps->pages[to] / ps->npages * ps->nthreads;
	return fmax(0,
		    (fmax(load_from, ps->cpus[to]) - load_to) / ps->nthreads);
}

/* The next move of a process moving its pages: from the node with most
 * surplus to the one most short, until the budget is spent, the rounds
 * are made or the shape is within STOP_MISPLACED. Appended, or none. */
static int next_move(struct nl_page_state *pg, int pid,
		     const struct nl_topology *topo, struct nl_plan *plan)
{
	struct nl_page_step *ps = &pg->step;
	int n = topo->nnodes, from = -1, to = -1;
	double over = 0, under = 0;

	if (ps->rounds >= n || ps->budget <= PAGE_BYTES)
		return 0;
	ps->rounds++;
	if (pg->undoing) {
		/* Back from the node that gained most to the one that lost
		 * most, until the trial's moves are undone. */
		for (int j = 0; j < n; j++) {
			if (pg->trial_delta[j] > over) {
				over = pg->trial_delta[j];
				from = j;
			}
			if (-pg->trial_delta[j] > under) {
				under = -pg->trial_delta[j];
				to = j;
			}
		}
		if (from < 0 || to < 0 || fmin(over, under) < PAGE_BYTES) {
			ps->rounds = n;
			pg->undoing = pg->trial = 0;
			memset(pg->trial_delta, 0, sizeof(pg->trial_delta));
			return 0;
		}
		ps->from = from;
		ps->to = to;
		return plan_pages(plan, pid, from, to,
				  fmin(ps->budget, fmin(over, under)),
				  "a trial that took its memory onto fewer "
				  "nodes lost: undone");
	}
	/* From the node with most surplus to the one most short; off a node
	 * with no thread, only to one that leaves the worst-placed thread no
	 * farther, and if none, from the next node with surplus. */
	char tried[NL_MAX_NODES] = {0};
	for (int round = 0; round < n && to < 0; round++) {
		from = -1;
		over = 0;
		for (int j = 0; j < n; j++) {
			double have = ps->pages[j] / ps->npages;
			if (!tried[j] &&
			    have - ps->threads[j] / ps->nthreads > over) {
				over = have - ps->threads[j] / ps->nthreads;
				from = j;
			}
		}
		if (from < 0 || over < STOP_MISPLACED / n)
			break;
		tried[from] = 1;
		under = 0;
		for (int j = 0; j < n; j++) {
			double want = ps->threads[j] / ps->nthreads,
			       have = ps->pages[j] / ps->npages,
			       room = room_on(ps, from, j);
			if (want - have > under &&
			    fmin(want - have, room) * ps->npages >= 1 &&
			    (!ps->near_only || ps->threads[from] > 0 ||
			     !worst_farther(topo, ps, from, j,
					    fmin(over, want - have)))) {
				under = fmin(want - have, room);
				to = j;
			}
		}
	}
	if (from < 0 || to < 0 || over < STOP_MISPLACED / n) {
		ps->rounds = n;
		return 0;
	}
	ps->from = from;
	ps->to = to;
	return plan_pages(
		plan, pid, from, to,
		fmin(ps->budget, fmin(over, under) * ps->npages * PAGE_BYTES),
		"pages follow the threads");
}

int nl_pages_moved(const struct nl_pages_domain *dm, size_t k, double moved,
		   struct nl_plan *plan)
{
	struct nl_page_state *pg = dm->procs[k].st;
	struct nl_page_step *ps = &pg->step;

	ps->pages[ps->from] -= moved / PAGE_BYTES;
	ps->pages[ps->to] += moved / PAGE_BYTES;
	ps->budget -= moved;
	if (pg->trial) {
		pg->trial_delta[ps->from] -= moved;
		pg->trial_delta[ps->to] += moved;
	}
	return next_move(pg, dm->procs[k].pid, dm->v->topo, plan);
}

/* Room for pid's threads on node: its CPUs that no busy thread of
 * another process takes. For a process whose intensity no PMU measures
 * (docs/algorithms.md, "Memory follows threads"), cores, not hardware
 * threads, while the busy threads fit the machine's cores: the thread
 * policy puts a thread on a busy core's sibling only where the pair gains
 * ("SMT"), so a node of 8 two-way cores takes 8 of a gathered process's
 * threads, not 16, and the pages of a process that may be a stream go to
 * its threads, as the kernel's NUMA balancing takes them (a 16-thread
 * master-initialised stream kept its pages on a node that held half its
 * threads: -2.5% under software on a 24-node machine of 8 such cores a
 * node). */
static int node_room(const struct nl_pages_domain *dm, int pid, int node,
		     int cores)
{
	const struct nl_topology *topo = dm->v->topo;
	int n = 0, nbusy = 0;
	for (int i = 0; i < dm->v->nthreads; i++) {
		const struct nl_view_thread *t = &dm->v->threads[i];
		nbusy +=
			t->cpu >= 0 && !(t->has_share &&
					 t->cpu_share < dm->params->idle_share);
	}
	int by_core = cores && nbusy <= topo->ncores;
	unsigned char *taken = calloc((size_t)topo->ncpus, 1);
	if (!taken)
		return INT_MAX; /* not known: nothing is moved for it */
	for (int i = 0; i < dm->v->nthreads; i++) {
		const struct nl_view_thread *t = &dm->v->threads[i];
		if (t->pid != pid && t->cpu >= 0 &&
		    topo->cpu_node[t->cpu] == node &&
		    !(t->has_share && t->cpu_share < dm->params->idle_share))
			taken[by_core ? topo->cpu_core[t->cpu] : t->cpu] = 1;
	}
	for (int c = 0; c < topo->ncpus; c++) {
		int k = by_core ? topo->cpu_core[c] : c;
		if (topo->cpu_node[c] == node && taken[k] != 2) {
			n += !taken[k];
			taken[k] = 2; /* counted */
		}
	}
	free(taken);
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
static int keeps_node(const struct nl_pages_domain *dm, size_t k,
		      const struct shape *sh, int data)
{
	int n = dm->v->topo->nnodes, pid = dm->procs[k].pid;
	for (size_t i = 0; i < dm->nprocs; i++) {
		const struct nl_pages_proc *q = &dm->procs[i];
		struct shape qs;
		if (i == k || shape_of(dm, q->pid, &qs) < 0 ||
		    main_node(&qs, n) != data)
			continue;
		if (qs.nthreads > sh->nthreads ||
		    (qs.nthreads == sh->nthreads && q->pid < pid))
			return 0;
	}
	return 1;
}

/* This step's moves of a process, from its shape now. */
static int start_moves(struct nl_page_state *pg, const struct shape *sh,
		       int pid, const struct nl_topology *topo, double budget,
		       struct nl_plan *plan)
{
	struct nl_page_step *ps = &pg->step;
	memcpy(ps->pages, sh->pages, sizeof(ps->pages));
	memcpy(ps->threads, sh->threads, sizeof(ps->threads));
	ps->nthreads = sh->nthreads;
	ps->npages = sh->npages;
	ps->budget = budget;
	ps->rounds = 0;
	return next_move(pg, pid, topo, plan);
}

/* Its threads over several nodes and its pages on clearly fewer. */
static int spreads(const struct shape *sh, int n)
{
	double most = 0;
	for (int j = 0; j < n; j++)
		most = fmax(most, sh->threads[j]);
	return most < SPAN_SHARE * sh->nthreads &&
	       spread_of(sh->threads, n) >
		       spread_of(sh->pages, n) + SPREAD_SLACK;
}

/* The other processes' memory-bound busy threads, by the nodes of their
 * pages (room_on). */
static void others_load(const struct nl_pages_domain *dm, size_t k,
			double *load)
{
	const struct nl_policy_params *pp = dm->params;
	int n = dm->v->topo->nnodes;
	for (int j = 0; j < NL_MAX_NODES; j++)
		load[j] = 0;
	for (size_t i = 0; i < dm->nprocs; i++) {
		struct shape qs;
		if (i == k || shape_of(dm, dm->procs[i].pid, &qs) < 0 ||
		    qs.npages <= 0 ||
		    (pp->compute_oi > 0 && qs.n_oi > 0 &&
		     qs.oi_sum / qs.n_oi > pp->compute_oi))
			continue;
		for (int j = 0; j < n; j++)
			load[j] += qs.nthreads * qs.pages[j] / qs.npages;
	}
}

int nl_pages_plan(const struct nl_pages_domain *dm, size_t k,
		  struct nl_plan *plan)
{
	const struct nl_policy_params *pp = dm->params;
	const struct nl_pages_proc *p = &dm->procs[k];
	struct nl_page_state *pg = p->st;
	int n = dm->v->topo->nnodes;
	double now = dm->v->now_s;
	struct shape sh;
	double misplaced = 0, elapsed;

	if (pg->refused || shape_of(dm, p->pid, &sh) < 0)
		return 0;
	if (!pg->loc_known) {
		pg->loc_before = locality(&sh, n);
		pg->loc_known = 1;
	}
	pg->loc_after = locality(&sh, n);
	/* As many busy threads as at the last step, on other nodes: moved
	 * between nodes since (threads that start or end move none). */
	double had = 0;
	for (int j = 0; j < n; j++)
		had += pg->shape_threads[j];
	if (had == sh.nthreads &&
	    memcmp(pg->shape_threads, sh.threads, sizeof(sh.threads)))
		pg->shape_steady = 0;
	else if (had == 0)
		pg->shape_steady = SETTLED_STEPS; /* first seen */
	else if (pg->shape_steady < SETTLED_STEPS)
		pg->shape_steady++;
	memcpy(pg->shape_threads, sh.threads, sizeof(sh.threads));
	if (dm->oversub && !spreads(&sh, n)) {
		pg->last_s = now;
		return 0;
	}
	elapsed = pg->last_s > 0 ? now - pg->last_s : pp->period_s;
	pg->last_s = now;
	/* Its threads' share of the period spent waiting for the copies
	 * made since the last step (docs/algorithms.md): the time the moves
	 * took where it was measured, else their bytes at page_rate. */
	double copy_s = pg->wall_s - pg->wall_seen;
	if (pp->page_rate > 0)
		copy_s = fmax(copy_s,
			      (pg->bytes - pg->bytes_seen) / pp->page_rate);
	double stall = fmin(1, copy_s / sh.nthreads / fmax(elapsed, 1e-3));
	pg->bytes_seen = pg->bytes;
	pg->wall_seen = pg->wall_s;
	double budget = pp->page_rate * fmin(elapsed, MAX_BUDGET_S);
	/* The nodes its threads are on, and the other processes' threads
	 * there: what a run that concentrates its memory loads. */
	unsigned long long mask = 0;
	for (int j = 0; j < n && j < 64; j++)
		if (sh.threads[j] > 0)
			mask |= 1ull << j;
	double nb = neighbours_tput(dm, p->pid, mask);
	if (!pg->active && !pg->trial) {
		/* Calm: the throughputs a trial is judged against, averaged
		 * over phases. */
		pg->calm_tput = pg->calm_tput > 0
					? 0.5 * pg->calm_tput + 0.5 * sh.tput
					: sh.tput;
		pg->calm_nb = nb < 0 || mask != pg->calm_mask ? nb
			      : pg->calm_nb >= 0 ? 0.5 * pg->calm_nb + 0.5 * nb
						 : nb;
		pg->calm_mask = mask;
		if (sh.n_oi) {
			pg->calm_s_oi[pg->calm_s_next] = oi_of(&sh);
			pg->calm_s_tput[pg->calm_s_next] = sh.tput;
			pg->calm_s_next =
				(pg->calm_s_next + 1) % NL_CALM_SAMPLES;
			if (pg->calm_s_n < NL_CALM_SAMPLES)
				pg->calm_s_n++;
		}
	}
	double base = calm_in_phase(pg, &sh);
	/* A trial whose process runs far below its calm throughput in any
	 * period, while its pages move or after, in the same phase (against
	 * calm periods of that phase: calm_in_phase) and beyond what
	 * waiting for the copies explains, lost beyond doubt: undone now,
	 * not after its run and TRIAL_AFTER periods more (a stream taken off
	 * eight nodes' memory onto one node's ran at half speed for 20 s). */
	if (pg->trial && !pg->undoing && !sh.cpu_share_only &&
	    sh.nthreads >= 0.8 * pg->max_threads && base > 0 &&
	    sh.tput < pp->undo_threshold * (1 - stall) * base) {
		pg->judge = pg->active = 0;
		pg->failed++;
		pg->undoing = 1;
		pg->hold_until_s = now + pp->page_hold_s;
		return start_moves(pg, &sh, p->pid, dm->v->topo, budget, plan);
	}
	/* A trial is judged over TRIAL_AFTER periods once its run is over
	 * (while pages move, their copies stall the process), each against
	 * the calm periods of its phase. One that TRIAL_AFTER periods could
	 * not be judged on (none in a phase seen calm) is kept, and said so:
	 * undone, it took back runs that paid, pages brought home from 28
	 * away among them (random seed 71993, scenarios 43 and 177, -3%
	 * and -8% under perf), more than it saved where they did not
	 * (docs/algorithms.md, "Concentrating is a trial"). */
	if (pg->trial && !pg->active && !pg->undoing &&
	    sh.nthreads >= 0.8 * pg->max_threads) {
		if (base > 0) {
			pg->j_own += sh.tput / base;
			pg->j_nb = nb >= 0 && pg->j_nb >= 0 &&
						   mask == pg->trial_nodes
					   ? pg->j_nb + nb
					   : -1;
			pg->j_n++;
		} else {
			pg->j_miss++;
		}
		if (pg->j_n >= TRIAL_AFTER || pg->j_miss >= TRIAL_AFTER) {
			int lost =
				pg->j_n > 0 &&
				(pg->j_own / pg->j_n < 1 - TRIAL_MARGIN ||
				 (pg->j_nb >= 0 && pg->trial_nb > 0 &&
				  pg->j_nb / pg->j_n <
					  (1 - TRIAL_MARGIN) * pg->trial_nb));
			pg->trial = 0;
			if (lost) {
				pg->judge = 0;
				pg->failed++;
				pg->undoing = pg->trial = 1;
				pg->hold_until_s = now + pp->page_hold_s;
				return start_moves(pg, &sh, p->pid, dm->v->topo,
						   budget, plan);
			}
			memset(pg->trial_delta, 0, sizeof(pg->trial_delta));
			if (pg->j_n == 0)
				return plan_pages(
					plan, p->pid, -1, -1, 0,
					"a trial that took its memory "
					"onto fewer nodes could not be "
					"judged (its phase changed): "
					"kept");
		}
	}
	if (pg->undoing)
		return start_moves(pg, &sh, p->pid, dm->v->topo, budget, plan);
	if (pg->judge) {
		/* The move did not pay: not again for a while. Judged on
		 * ops/s only: a CPU share says nothing of memory speed. */
		pg->judge = 0;
		if (!sh.cpu_share_only && in_phase(oi_of(&sh), pg->oi_before) &&
		    sh.tput < pp->undo_threshold * pg->tput_before) {
			pg->failed++;
			pg->hold_until_s = now + pp->page_hold_s;
			/* A trial's run ends here: the trial judge
			 * decides whether what moved goes back. */
			if (pg->trial)
				pg->active = 0;
			return plan_pages(plan, p->pid, -1, -1, 0,
					  "the process ran slower after its "
					  "pages moved: not repeated soon");
		}
	}
	if (now < pg->hold_until_s)
		return 0;
	/* Winding down (its threads ending): where the last few run says
	 * nothing about where its pages should be. */
	pg->max_threads = fmax(pg->max_threads, sh.nthreads);
	if (sh.nthreads < 0.8 * pg->max_threads)
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
	/* Following threads that sit on fewer nodes than the pages puts
	 * its memory behind fewer controllers: whether that pays only its
	 * throughput can tell, so it is a trial, undone if it lost, and
	 * never made without op counts (docs/algorithms.md, "Memory
	 * follows threads"). */
	int concentrates = spread_of(sh.threads, n) <
			   spread_of(sh.pages, n) - SPREAD_SLACK;
	if (concentrates && sh.cpu_share_only)
		return 0;
	/* ...nor onto threads that the kernel's balancer or numalot is
	 * still moving between nodes: after a process ends, the balancer
	 * evens the nodes over a few steps, and memory gathered onto the
	 * nodes its threads were on for one step is left behind a single
	 * controller (random seed 15445, scenario 74). */
	if (concentrates && !pg->active && pg->shape_steady < SETTLED_STEPS)
		return 0;
	/* Spread by bandwidth over threads numalot is still placing: where
	 * they end up is not known yet. */
	if (most < SPAN_SHARE * sh.nthreads && bw && sh.moving)
		return 0;
	if (most < SPAN_SHARE * sh.nthreads && !bw) {
		/* Other processes' busy threads fill the pages' node: once
		 * that has lasted, the pages go to the threads instead; not
		 * while numalot still gathers its threads near them. */
		if (sh.nthreads <= node_room(dm, p->pid, data, !sh.n_oi) ||
		    (sh.moving && keeps_node(dm, k, &sh, data))) {
			pg->crowded = 0;
			return 0;
		}
		if (++pg->crowded < CROWDED_PERIODS)
			return 0;
	}
	for (int j = 0; j < n; j++)
		misplaced += fmax(0, sh.pages[j] / sh.npages -
					     sh.threads[j] / sh.nthreads);
	/* Start past page_misplaced; once started, go on until nearly all
	 * of it is where its threads are. */
	if (misplaced < (pg->active ? STOP_MISPLACED : pp->page_misplaced)) {
		pg->active = 0;
		return 0;
	}
	if (!pg->active || !concentrates) {
		pg->trial = concentrates;
		pg->trial_nb = pg->calm_mask == mask ? pg->calm_nb : nb;
		pg->trial_nodes = mask;
		pg->j_own = pg->j_nb = 0;
		pg->j_n = pg->j_miss = 0;
		memset(pg->trial_delta, 0, sizeof(pg->trial_delta));
	}
	pg->active = 1;
	pg->tput_before = sh.tput;
	pg->oi_before = oi_of(&sh);
	/* A bandwidth-bound process gains controllers by the spread, which
	 * a far thread's latency does not outweigh; not one busier than
	 * the one its pages leave. */
	pg->step.near_only = !bw;
	/* ...nor one that no PMU measures (neither intensity nor ops): it
	 * may be one, and its pages were taken onto the node a bound
	 * stream's 54 threads read, 18 CPUs' worth (random seed 71993,
	 * scenario 142, -5% under software). Busier, but with no more
	 * readers than CPUs, its node's memory may be (a latency-bound
	 * process's preferred memory left on another node than its
	 * binding's, beside three threads there: random seed 15445,
	 * scenario 141, 20% slower when kept). */
	pg->step.by_load = bw || (!sh.n_oi && sh.cpu_share_only);
	if (pg->step.by_load)
		others_load(dm, k, pg->step.others);
	for (int j = 0; j < NL_MAX_NODES; j++)
		pg->step.cpus[j] = 0;
	for (int c = 0; !bw && c < dm->v->topo->ncpus; c++)
		pg->step.cpus[dm->v->topo->cpu_node[c]]++;
	return start_moves(pg, &sh, p->pid, dm->v->topo, budget, plan);
}

/* More busy threads than CPUs: the OS time-shares them, and where a
 * thread runs says little about where its pages should be. */
int nl_pages_wanted(const struct nl_pages_domain *dm)
{
	int busy = 0;
	for (int i = 0; i < dm->v->nthreads; i++) {
		const struct nl_view_thread *t = &dm->v->threads[i];
		busy += t->cpu >= 0 && !(t->has_share &&
					 t->cpu_share < dm->params->idle_share);
	}
	return busy <= dm->v->topo->ncpus;
}
