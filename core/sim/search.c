/*
 * numalot: swap hill-climbing of a fixed placement on the model's steady
 * state (search.h), for the best-static and ideal-locality baselines.
 */
#include "search.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "scenario.h"

/* Damped rounds of the contention fixed point per evaluation, at most. */
#define SOLVE_ROUNDS 64
/* A neighbour must lower the cost by this share to be taken. */
#define IMPROVE_EPS 1e-6

struct climb {
	struct nl_model *m;
	int n;	  /* threads */
	int *cpu; /* the placement being climbed */
	int *cls; /* kind of thread: swapping two of one kind changes nothing */
	int *load;	/* [ncpus] threads per CPU under cpu[] */
	int *core_load; /* [ncores] threads per core */
	int nclasses;
	int evals, max_evals;
	double cost;
};

static int node_of(const struct climb *c, int cpu)
{
	return nl_model_node_of(c->m, cpu);
}

static int may_use(const struct climb *c, int x, int cpu)
{
	return hwloc_bitmap_isset(c->m->threads[x].allowed, (unsigned)cpu);
}

/* Apply cpu[] to the model, place data, solve, and return the cost. */
static double evaluate(struct climb *c)
{
	struct nl_model *m = c->m;
	double cost = 0;

	memset(m->cpu_load, 0, sizeof(int) * (size_t)m->topo->ncpus);
	memset(m->core_busy, 0, sizeof(int) * (size_t)m->topo->ncores);
	for (int x = 0; x < c->n; x++) {
		m->threads[x].cpu = c->cpu[x];
		nl_model_occupy(m, c->cpu[x], 1);
	}
	for (int i = 0; i < m->nprocs; i++)
		nl_model_place_data(m, &m->procs[i]);
	nl_model_solve_steady(m, SOLVE_ROUNDS);
	for (int i = 0; i < m->nprocs; i++) {
		const struct nl_model_proc *pr = &m->procs[i];
		double slowest = 0;

		for (int k = 0; k < pr->spec.nthreads; k++) {
			const struct nl_model_thread *t =
				&m->threads[pr->first_thread + k];
			double r = t->rate_ops_per_s > 0 ? t->rate_ops_per_s
							 : 1e-30;
			slowest = fmax(slowest, t->work_ops / r);
		}
		cost += slowest;
	}
	c->evals++;
	return cost;
}

/* Try thread x on CPU to, swapping with y (-1: none); keep it if better. */
static int try_move(struct climb *c, int x, int to, int y)
{
	int from = c->cpu[x];
	double v;

	if (c->evals >= c->max_evals)
		return 0;
	c->cpu[x] = to;
	if (y >= 0)
		c->cpu[y] = from;
	v = evaluate(c);
	if (v < c->cost * (1 - IMPROVE_EPS)) {
		c->cost = v;
		if (y < 0) {
			const int *core = c->m->topo->cpu_core;
			c->load[from]--;
			c->load[to]++;
			c->core_load[core[from]]--;
			c->core_load[core[to]]++;
		}
		return 1;
	}
	c->cpu[x] = from;
	if (y >= 0)
		c->cpu[y] = to;
	return 0;
}

/*
 * Where x would go on node d: a free CPU x may use (an idle core first),
 * else the least loaded one if that is less loaded than x's own after the
 * move. idle_core_only: only a free CPU of an idle core. -1 if none.
 */
static int dest_on(const struct climb *c, int x, int d, int idle_core_only)
{
	const struct nl_topology *topo = c->m->topo;
	int best = -1, bscore = 0, own = c->cpu[x];

	for (int cpu = 0; cpu < topo->ncpus; cpu++) {
		int k = topo->cpu_core[cpu], siblings, score;

		if (node_of(c, cpu) != d || cpu == own || !may_use(c, x, cpu))
			continue;
		/* Threads on the other CPUs of its core, x not counted. */
		siblings = c->core_load[k] - c->load[cpu] -
			   (topo->cpu_core[own] == k);
		if (idle_core_only && (c->load[cpu] || siblings))
			continue;
		score = c->load[cpu] * 2 + (siblings > 0);
		if (best < 0 || score < bscore) {
			best = cpu;
			bscore = score;
		}
	}
	if (best >= 0 && c->load[best] && c->load[best] + 1 >= c->load[own])
		return -1;
	return best;
}

/* A thread of class k on node d that can swap with x; -1 if none. */
static int partner_on(const struct climb *c, int x, int k, int d)
{
	for (int y = 0; y < c->n; y++)
		if (c->cls[y] == k && node_of(c, c->cpu[y]) == d &&
		    may_use(c, x, c->cpu[y]) && may_use(c, y, c->cpu[x]))
			return y;
	return -1;
}

/* Is an earlier thread of x's kind on x's node (x would be redundant)? */
static int redundant(const struct climb *c, int x)
{
	int s = node_of(c, c->cpu[x]);

	for (int y = 0; y < x; y++)
		if (c->cls[y] == c->cls[x] && node_of(c, c->cpu[y]) == s)
			return 1;
	return 0;
}

/* One pass over every thread; 1 if something improved. */
static int pass(struct climb *c)
{
	int nn = c->m->topo->nnodes, improved = 0;

	for (int x = 0; x < c->n && c->evals < c->max_evals; x++) {
		int s = node_of(c, c->cpu[x]), done = 0, to;
		const int *order = c->m->node_order + s * nn;

		if (redundant(c, x))
			continue;
		for (int j = 1; j < nn && !done; j++) {
			int d = order[j];

			to = dest_on(c, x, d, 0);
			if (to >= 0 && try_move(c, x, to, -1)) {
				done = 1;
				break;
			}
			for (int k = 0; k < c->nclasses && !done; k++) {
				int y;
				if (k == c->cls[x])
					continue;
				y = partner_on(c, x, k, d);
				if (y >= 0 && try_move(c, x, c->cpu[y], y))
					done = 1;
			}
		}
		/* Sharing a core with a busy sibling: an idle core nearby. */
		if (!done) {
			to = dest_on(c, x, s, 1);
			if (to >= 0 && try_move(c, x, to, -1))
				done = 1;
		}
		improved |= done;
	}
	return improved;
}

int nl_search_climb(const struct nl_scenario *sc, int ideal, int max_evals,
		    int *cpu, double *cost, int *evals)
{
	struct nl_model_opts o = {.os_set = 1,
				  .os_mode = NL_OS_NONE,
				  .start_cpu = cpu,
				  .ideal_locality = ideal,
				  .start_all = 1};
	struct climb c = {.cpu = cpu, .max_evals = max_evals};
	struct nl_topology *topo;
	int rc;

	topo = nl_sim_topology_dup(sc->topo);
	if (!topo)
		return -ENOMEM;
	rc = nl_model_create_opts(topo, sc, 0, &o, &c.m);
	if (rc < 0)
		return rc;
	c.n = c.m->nthreads;
	c.cls = malloc(sizeof(int) * ((size_t)c.n + 1));
	c.load = calloc((size_t)c.m->topo->ncpus, sizeof(int));
	c.core_load = calloc((size_t)c.m->topo->ncores, sizeof(int));
	if (!c.cls || !c.load || !c.core_load) {
		rc = -ENOMEM;
		goto out;
	}
	for (int x = 0; x < c.n; x++) {
		const struct nl_model_thread *t = &c.m->threads[x];
		enum nl_placement pl = c.m->procs[t->proc].spec.placement;
		/* Thread 0 decides where first-touch and master put the
		 * shared data: a kind of its own. */
		int special =
			!ideal && t->tid == t->pid &&
			(pl == NL_PLACE_FIRST_TOUCH || pl == NL_PLACE_MASTER);

		if (cpu[x] < 0 || cpu[x] >= c.m->topo->ncpus ||
		    !may_use(&c, x, cpu[x]))
			cpu[x] = c.m->threads[x].cpu;
		c.cls[x] = t->proc * 2 + special;
		c.load[cpu[x]]++;
		c.core_load[c.m->topo->cpu_core[cpu[x]]]++;
	}
	c.nclasses = c.m->nprocs * 2;
	c.cost = evaluate(&c);
	while (c.evals < c.max_evals && pass(&c))
		;
	*cost = c.cost;
	if (evals)
		*evals = c.evals;
	rc = 0;
out:
	free(c.cls);
	free(c.load);
	free(c.core_load);
	nl_model_free(c.m);
	return rc;
}

int nl_search_packed(const struct nl_scenario *sc, int reverse, int *cpu)
{
	const struct nl_topology *topo = sc->topo;
	int *load = calloc((size_t)topo->ncpus, sizeof(int));
	int *core = calloc((size_t)topo->ncores, sizeof(int));
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
	int *first = calloc((size_t)sc->nprocs + 1, sizeof(int));

	if (!load || !core || !allowed || !first) {
		free(first);
		free(load);
		free(core);
		hwloc_bitmap_free(allowed);
		return -ENOMEM;
	}
	for (int i = 1; i < sc->nprocs; i++)
		first[i] = first[i - 1] + sc->procs[i - 1].nthreads;
	for (int j = 0; j < sc->nprocs; j++) {
		int i = reverse ? sc->nprocs - 1 - j : j, x = first[i];
		const struct nl_proc_spec *ps = &sc->procs[i];
		int cur = -1;

		hwloc_bitmap_zero(allowed);
		if (!ps->cpus ||
		    nl_topology_parse_cpulist(topo, ps->cpus, allowed) < 0)
			hwloc_bitmap_set_range(allowed, 0, topo->ncpus - 1);
		for (int k = 0; k < ps->nthreads; k++, x++) {
			int best = -1, bscore = 0, freec[NL_MAX_NODES] = {0};

			for (int c = 0; c < topo->ncpus; c++)
				if (!load[c] &&
				    hwloc_bitmap_isset(allowed, (unsigned)c))
					freec[topo->cpu_node[c]]++;
			/* Stay on the current node while it has room. */
			if (cur < 0 || !freec[cur])
				for (int d = 0; d < topo->nnodes; d++)
					if (freec[d] > 0 &&
					    (cur < 0 || !freec[cur] ||
					     freec[d] > freec[cur]))
						cur = d;
			for (int c = 0; c < topo->ncpus; c++) {
				int score;
				if (!hwloc_bitmap_isset(allowed, (unsigned)c))
					continue;
				score = load[c] * 4 +
					(core[topo->cpu_core[c]] > 0) * 2 +
					(topo->cpu_node[c] != cur);
				if (best < 0 || score < bscore) {
					best = c;
					bscore = score;
				}
			}
			cpu[x] = best;
			if (best >= 0) {
				load[best]++;
				core[topo->cpu_core[best]]++;
			}
		}
	}
	free(load);
	free(core);
	free(first);
	hwloc_bitmap_free(allowed);
	return 0;
}
