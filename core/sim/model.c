/*
 * numalot: the simulated NUMA node's physics (docs/machine-model.md):
 * thread start placement, data placement, one tick of
 * compute and memory with contention, counters.
 */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Relative change of every contention factor below which a round stops. */
#define FIXED_POINT_TOL 1e-6

static int init_proc(struct nl_model *m, int i, const struct nl_proc_spec *s,
		     uint64_t seed)
{
	struct nl_model_proc *pr = &m->procs[i];
	const struct nl_topology *topo = m->topo;
	int n = topo->nnodes, any = 0;

	pr->spec = *s;
	pr->spec.cpus = NULL;
	pr->end_s = -1;
	pr->first_thread = m->nthreads;
	pr->allowed = hwloc_bitmap_alloc();
	if (!pr->allowed)
		return -ENOMEM;
	if (s->cpus) {
		if (nl_topology_parse_cpulist(topo, s->cpus, pr->allowed) < 0)
			return -EINVAL;
	} else {
		hwloc_bitmap_set_range(pr->allowed, 0, topo->ncpus - 1);
	}
	if (s->nthreads < 1 || s->nthreads > NL_MAX_PROC_THREADS ||
	    s->start_node >= n ||
	    ((s->placement == NL_PLACE_NODE || s->placement == NL_PLACE_BIND) &&
	     (s->placement_node < 0 || s->placement_node >= n)))
		return -EINVAL;
	/* The kernel's NUMA scanner skips memory under a policy the process
	 * set (no MPOL_F_MOF: interleave, bind, preferred): no hinting
	 * faults, so no NUMA balancing (task_numa_work, vma_policy_mof). */
	pr->numa_balanced = s->placement != NL_PLACE_INTERLEAVE &&
			    s->placement != NL_PLACE_BIND && !s->mem_policy;
	pr->affinity = hwloc_bitmap_dup(pr->allowed);
	if (!pr->affinity)
		return -ENOMEM;
	for (int c = 0; c < topo->ncpus && s->cpu_nodes; c++)
		if (!(s->cpu_nodes >> nl_model_node_of(m, c) & 1))
			hwloc_bitmap_clr(pr->affinity, (unsigned)c);
	/* Outside a job the real node's limit is the process's own binding
	 * (docs/algorithms.md, "What numalot adds around them"). */
	if (s->limit_binding)
		hwloc_bitmap_copy(pr->allowed, pr->affinity);
	for (int c = 0; c < topo->ncpus; c++)
		if (hwloc_bitmap_isset(pr->affinity, (unsigned)c) &&
		    (s->start_node < 0 ||
		     nl_model_node_of(m, c) == s->start_node))
			any = 1;
	if (!any)
		return -EINVAL;
	pr->shared_frac = m->frac_store + (size_t)i * n;
	for (int k = 0; k < s->nthreads; k++) {
		struct nl_model_thread *t = &m->threads[m->nthreads];
		size_t off =
			(size_t)m->nprocs * n + (size_t)m->nthreads * 2 * n;

		t->pid = nl_sim_pid(i);
		t->tid = t->pid + k;
		t->proc = i;
		t->state = NL_T_PENDING;
		t->cpu = -1;
		t->allowed = pr->allowed; /* shared with the process */
		t->affinity = pr->affinity;
		t->work_ops = t->work_left = s->kind.work_ops;
		t->end_s = -1;
		t->priv_frac = m->frac_store + off;
		t->data_frac = m->frac_store + off + n;
		t->acc.cpu = -1;
		nl_rng_seed(&t->noise_rng,
			    seed + 0x9e3779b97f4a7c15ULL * (uint64_t)t->tid);
		m->nthreads++;
	}
	return 0;
}

/* Nodes by distance from each node: itself first, then nearest first
 * (ties: the lower node). Insertion sort; n is small. */
static void order_nodes(struct nl_model *m)
{
	int n = m->topo->nnodes;
	const unsigned *d = m->topo->distance;

	for (int i = 0; i < n; i++) {
		int *o = m->node_order + i * n;
		for (int j = 0; j < n; j++) {
			int k = j, x = j;
			/* key: (not itself, distance, node) */
			while (k > 0 && o[k - 1] != i &&
			       (x == i || d[i * n + x] < d[i * n + o[k - 1]])) {
				o[k] = o[k - 1];
				k--;
			}
			o[k] = x;
		}
	}
}

int nl_model_create(struct nl_topology *topo, const struct nl_scenario *sc,
		    uint64_t seed, struct nl_model **out)
{
	return nl_model_create_opts(topo, sc, seed, NULL, out);
}

int nl_model_create_opts(struct nl_topology *topo, const struct nl_scenario *sc,
			 uint64_t seed, const struct nl_model_opts *o,
			 struct nl_model **out)
{
	struct nl_model *m = calloc(1, sizeof(*m));
	int total = 0, rc = 0;
	size_t n = (size_t)topo->nnodes;

	*out = NULL;
	if (!m || sc->nprocs < 1) {
		nl_topology_free(topo);
		free(m);
		return m ? -EINVAL : -ENOMEM;
	}
	m->topo = topo;
	m->p = sc->params;
	m->duration_s = sc->duration_s;
	m->os_mode = o && o->os_set ? o->os_mode : sc->os_mode;
	m->ideal_locality = o && o->ideal_locality;
	for (int i = 0; i < sc->nprocs; i++)
		total += sc->procs[i].nthreads;
	m->procs = calloc((size_t)sc->nprocs, sizeof(*m->procs));
	m->threads = calloc((size_t)total + 1, sizeof(*m->threads));
	m->frac_store = calloc((size_t)sc->nprocs * n + (size_t)total * 2 * n,
			       sizeof(double));
	m->latency_ns = calloc(n * n, sizeof(double));
	m->mem_factor = calloc(n, sizeof(double));
	m->link_factor = calloc(n * n, sizeof(double));
	m->fbracket = calloc(2 * (n + n * n), sizeof(double));
	m->mem_demand = calloc(n, sizeof(double));
	m->link_demand = calloc(n * n, sizeof(double));
	m->mem_served = calloc(n, sizeof(double));
	m->link_served = calloc(n * n, sizeof(double));
	m->cpu_load = calloc((size_t)topo->ncpus, sizeof(int));
	m->core_busy = calloc((size_t)topo->ncores, sizeof(int));
	m->cand = hwloc_bitmap_alloc();
	m->node_order = calloc(n * n, sizeof(int));
	m->node_budget = calloc(n, sizeof(double));
	m->cpu_lone = calloc(3 * (size_t)topo->ncpus + n, sizeof(int));
	if (o && o->start_cpu) {
		m->start_cpu = malloc(sizeof(int) * ((size_t)total + 1));
		if (m->start_cpu)
			memcpy(m->start_cpu, o->start_cpu,
			       sizeof(int) * (size_t)total);
	}
	if (!m->cand || !m->procs || !m->threads || !m->frac_store ||
	    !m->latency_ns || !m->mem_factor || !m->link_factor ||
	    !m->fbracket || !m->mem_demand || !m->link_demand ||
	    !m->mem_served || !m->link_served || !m->cpu_load ||
	    !m->core_busy || !m->node_order || !m->node_budget ||
	    !m->cpu_lone || (o && o->start_cpu && !m->start_cpu)) {
		nl_model_free(m);
		return -ENOMEM;
	}
	order_nodes(m);
	for (size_t i = 0; i < n; i++) {
		m->mem_factor[i] = 1;
		for (size_t j = 0; j < n; j++) {
			double d = topo->distance[i * n + j];
			m->latency_ns[i * n + j] =
				m->p.local_latency_ns *
				(1 + m->p.remote_factor * (d - 10) / 10);
			m->link_factor[i * n + j] = 1;
		}
	}
	m->nprocs = sc->nprocs;
	for (int i = 0; i < sc->nprocs && rc == 0; i++)
		rc = init_proc(m, i, &sc->procs[i], seed);
	if (rc < 0) {
		nl_model_free(m);
		return rc;
	}
	if (o && o->start_all)
		for (int i = 0; i < m->nprocs; i++)
			nl_model_start_process(m, &m->procs[i]);
	nl_model_start_due(m);
	*out = m;
	return 0;
}

void nl_model_free(struct nl_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nprocs; i++) {
		hwloc_bitmap_free(m->procs[i].allowed);
		hwloc_bitmap_free(m->procs[i].affinity);
	}
	free(m->procs);
	free(m->threads);
	free(m->frac_store);
	free(m->latency_ns);
	free(m->mem_factor);
	free(m->link_factor);
	free(m->fbracket);
	free(m->mem_demand);
	free(m->link_demand);
	free(m->mem_served);
	free(m->link_served);
	free(m->cpu_load);
	free(m->core_busy);
	hwloc_bitmap_free(m->cand);
	free(m->node_order);
	free(m->node_budget);
	free(m->cpu_lone);
	free(m->start_cpu);
	nl_topology_free(m->topo);
	free(m);
}

int nl_model_active(const struct nl_model *m)
{
	if (m->duration_s > 0 && nl_model_now(m) >= m->duration_s - NL_TIME_EPS)
		return 0;
	for (int i = 0; i < m->nprocs; i++)
		if (!m->procs[i].done)
			return 1;
	return 0;
}

double nl_model_smt_yield(const struct nl_model_params *p, int k)
{
	/* Y(2) = 2 smt_share; each further sibling adds less, Y(k) < 1 + 2G
	 * (docs/machine-model.md, "SMT"). */
	double g = 2 * p->smt_share - 1;
	return k <= 1 ? 1 : 1 + 2 * g * (1 - 1.0 / k);
}

static const struct nl_phase unit_phase = {1, 1, 1, 1};

static const struct nl_phase *current_phase(const struct nl_kind *k,
					    double done_ops)
{
	double pos, acc = 0;

	if (k->nphases < 1)
		return &unit_phase;
	if (k->nphases == 1 || k->cycle_ops <= 0)
		return &k->phase[0];
	pos = fmod(done_ops, k->cycle_ops) / k->cycle_ops;
	for (int i = 0; i < k->nphases - 1; i++) {
		acc += k->phase[i].ops_share;
		if (pos < acc)
			return &k->phase[i];
	}
	return &k->phase[k->nphases - 1];
}

/* The per-tick constants of a thread: phase, CPU share, SMT, t_compute. */
static void prepare_thread(struct nl_model *m, struct nl_model_thread *t)
{
	const struct nl_kind *k = &m->procs[t->proc].spec.kind;
	const struct nl_phase *ph =
		current_phase(k, t->work_ops - t->work_left);
	int core = m->topo->cpu_core[t->cpu];
	double peak = m->p.peak_ops_per_s;
	double pf = fmin(1.0, k->peak_fraction * ph->peak_scale);
	double mlp = fmax(1e-3, k->mlp * ph->mlp_scale);

	/* Busy hardware threads share their core's yield (SMT). */
	peak *= nl_model_smt_yield(&m->p, m->core_busy[core]) /
		fmax(1, m->core_busy[core]);
	/* What the OS (hinting faults, page copies) and numalot's page moves
	 * take from this tick, at most half of it. */
	double stall = fmin(t->stall_s / m->p.tick_s, 0.5);
	t->stall_s -= stall * m->p.tick_s;
	t->share = 1.0 / m->cpu_load[t->cpu] *
		   (1 - fmin(t->os_overhead + stall, 0.5));
	t->t_compute_s = 1.0 / (peak * pf);
	t->bytes_per_op = k->bytes_per_op * ph->bytes_scale;
	t->fp_fraction = k->fp_fraction;
	t->mem_coef = t->bytes_per_op / NL_LINE_BYTES * 1e-9 / mlp;
}

/*
 * Rates of every running thread under the current contention factors, and
 * the traffic they demand from each node's memory and each link.
 */
static void compute_demand(struct nl_model *m)
{
	int n = m->topo->nnodes;

	memset(m->mem_demand, 0, sizeof(double) * (size_t)n);
	memset(m->link_demand, 0, sizeof(double) * (size_t)n * n);
	for (int x = 0; x < m->nthreads; x++) {
		struct nl_model_thread *t = &m->threads[x];
		int i;
		const double *lat, *lf;
		double l = 0, bps;

		if (t->state != NL_T_RUNNING)
			continue;
		i = nl_model_node_of(m, t->cpu);
		lat = m->latency_ns + i * n;
		lf = m->link_factor + i * n;
		for (int j = 0; j < n; j++)
			if (t->data_frac[j] > 0)
				l += t->data_frac[j] * lat[j] *
				     m->mem_factor[j] * lf[j];
		t->l_eff_ns = l;
		t->t_memory_s = t->mem_coef * l;
		/* A thread stalled on memory still holds its CPU: the CPU
		 * share scales the whole rate. */
		t->demand_ops_per_s =
			t->share / (t->t_compute_s + t->t_memory_s);
		bps = t->demand_ops_per_s * t->bytes_per_op;
		for (int j = 0; j < n; j++) {
			double d = bps * t->data_frac[j];
			if (d <= 0)
				continue;
			m->mem_demand[j] += d;
			if (j != i)
				m->link_demand[i * n + j] += d;
		}
	}
}

static double queueing(const struct nl_model_params *p, double demand,
		       double capacity)
{
	double rho = fmin(demand / capacity, p->rho_cap);
	return 1 + p->contention_k * rho / (1 - rho);
}

/*
 * Move factor *f toward its target g (the factor its demand yields) by
 * damping, within br = {lo, hi}: the bounds this tick's rounds have found
 * on the fixed point. The target falls as the factor rises (a higher
 * factor slows the threads and lowers their demand), so a target above
 * the factor puts the fixed point above it, and one below, below. Where
 * the queueing curve is steep (rho near rho_cap) a damped step overshoots
 * and swings; a step that would leave the bounds bisects them instead (in
 * ratio: factors span 1 to 1 + k rho_cap / (1 - rho_cap)). Returns the
 * relative change (docs/machine-model.md, "One tick").
 */
static double step_factor(double *f, double g, double *br, double damping)
{
	double nf = *f + damping * (g - *f), change;

	if (g > *f) {
		br[0] = fmax(br[0], *f);
		if (nf >= br[1])
			nf = sqrt(br[0] * br[1]);
	} else if (g < *f) {
		br[1] = fmin(br[1], *f);
		if (nf <= br[0])
			nf = sqrt(br[0] * br[1]);
	}
	change = fabs(nf - *f) / nf;
	*f = nf;
	return change;
}

/* One update of every factor; returns the largest relative change. */
static double update_factors(struct nl_model *m)
{
	const struct nl_model_params *p = &m->p;
	int n = m->topo->nnodes;
	double worst = 0, d = p->damping;

	for (int j = 0; j < n; j++) {
		double f = queueing(p, m->mem_demand[j],
				    p->node_bandwidth_bytes_per_s);
		worst = fmax(worst, step_factor(&m->mem_factor[j], f,
						&m->fbracket[2 * j], d));
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int x = n + i * n + j;
			double f;
			if (i == j)
				continue;
			f = queueing(p, m->link_demand[i * n + j],
				     p->link_bandwidth_bytes_per_s);
			worst = fmax(worst,
				     step_factor(&m->link_factor[i * n + j], f,
						 &m->fbracket[2 * x], d));
		}
	return worst;
}

/* Scale a thread's rate so no memory node or link serves above capacity. */
static double cap_scale(const struct nl_model *m,
			const struct nl_model_thread *t)
{
	int n = m->topo->nnodes, i = nl_model_node_of(m, t->cpu);
	double s = 1, mb = m->p.node_bandwidth_bytes_per_s;
	double lb = m->p.link_bandwidth_bytes_per_s;

	if (t->bytes_per_op <= 0)
		return 1;
	for (int j = 0; j < n; j++) {
		if (t->data_frac[j] <= 0)
			continue;
		if (m->mem_demand[j] > mb)
			s = fmin(s, mb / m->mem_demand[j]);
		if (j != i && m->link_demand[i * n + j] > lb)
			s = fmin(s, lb / m->link_demand[i * n + j]);
	}
	return s;
}

static void solve_rounds(struct nl_model *m, int rounds)
{
	int n = m->topo->nnodes;
	double top = queueing(&m->p, INFINITY, 1);

	for (int x = 0; x < m->nthreads; x++)
		if (m->threads[x].state == NL_T_RUNNING)
			prepare_thread(m, &m->threads[x]);
	/* Every fixed point lies between 1 and the largest factor. */
	for (int x = 0; x < n + n * n; x++) {
		m->fbracket[2 * x] = 1;
		m->fbracket[2 * x + 1] = top;
	}
	for (int r = 0; r < rounds; r++) {
		compute_demand(m);
		if (update_factors(m) < FIXED_POINT_TOL)
			break;
	}
	compute_demand(m);
	memset(m->mem_served, 0, sizeof(double) * (size_t)n);
	memset(m->link_served, 0, sizeof(double) * (size_t)n * n);
	for (int x = 0; x < m->nthreads; x++) {
		struct nl_model_thread *t = &m->threads[x];
		double s, bps;
		int i;

		if (t->state != NL_T_RUNNING)
			continue;
		s = cap_scale(m, t);
		t->rate_ops_per_s = t->demand_ops_per_s * s;
		t->stretch = 1;
		if (s < 1 && t->t_memory_s > 0) {
			/* Held back: its memory time stretches, and so do
			 * the latencies it sees. */
			double tm = (t->t_compute_s + t->t_memory_s) / s -
				    t->t_compute_s;
			t->stretch = tm / t->t_memory_s;
			t->l_eff_ns *= t->stretch;
			t->t_memory_s = tm;
		}
		bps = t->rate_ops_per_s * t->bytes_per_op;
		t->traffic_bytes_per_s = bps;
		i = nl_model_node_of(m, t->cpu);
		for (int j = 0; j < n; j++) {
			m->mem_served[j] += bps * t->data_frac[j];
			if (j != i)
				m->link_served[i * n + j] +=
					bps * t->data_frac[j];
		}
	}
}

void nl_model_solve(struct nl_model *m)
{
	solve_rounds(m, (int)m->p.fixed_point_rounds);
}

void nl_model_solve_steady(struct nl_model *m, int max_rounds)
{
	solve_rounds(m, max_rounds);
}

static void finish_thread(struct nl_model *m, struct nl_model_thread *t,
			  double end_s)
{
	struct nl_model_proc *pr = &m->procs[t->proc];

	t->state = NL_T_DONE;
	t->end_s = end_s;
	t->work_left = 0;
	nl_model_occupy(m, t->cpu, -1);
	if (--pr->live == 0) {
		pr->done = 1;
		pr->end_s = end_s;
	}
}

/* Advance one running thread by dt, accumulating its exact counters. */
static void advance_thread(struct nl_model *m, struct nl_model_thread *t,
			   double now, double dt)
{
	int n = m->topo->nnodes, i = nl_model_node_of(m, t->cpu);
	double ops = t->rate_ops_per_s * dt, part = 1, lines;
	const double *lat = m->latency_ns + i * n, *lf = m->link_factor + i * n;
	struct nl_sample *a = &t->acc;
	int done = 0;

	if (ops >= t->work_left) {
		part = ops > 0 ? t->work_left / ops : 1;
		ops = t->work_left;
		done = 1;
	}
	t->work_left -= ops;
	a->wall_s += part * dt;
	a->task_clock_s += part * dt * t->share;
	a->instructions += ops;
	a->fp_ops += ops * t->fp_fraction;
	lines = ops * t->bytes_per_op / NL_LINE_BYTES;
	a->llc_misses += lines;
	a->cpu = t->cpu;
	/* Per-node latency: unloaded x contention x the cap's stretch. */
	for (int j = 0; j < n; j++) {
		double lj = lines * t->data_frac[j];
		double cnt = lj / m->p.latency_sample_period;
		if (lj <= 0)
			continue;
		a->access[j] += lj;
		a->lat_count[j] += cnt;
		a->lat_sum_ns[j] +=
			cnt * lat[j] * m->mem_factor[j] * lf[j] * t->stretch;
	}
	if (done)
		finish_thread(m, t, now + part * dt);
}

void nl_model_tick(struct nl_model *m)
{
	double now = nl_model_now(m), dt = m->p.tick_s;

	nl_model_solve(m);
	for (int x = 0; x < m->nthreads; x++)
		if (m->threads[x].state == NL_T_RUNNING)
			advance_thread(m, &m->threads[x], now, dt);
	m->ticks++;
	nl_model_os_step(m);
	nl_model_start_due(m);
}

struct nl_model_thread *nl_model_thread(struct nl_model *m, int tid)
{
	int i = tid / NL_SIM_PID_STEP - 1, k = tid % NL_SIM_PID_STEP;

	if (tid < NL_SIM_PID_STEP || i >= m->nprocs ||
	    k >= m->procs[i].spec.nthreads)
		return NULL;
	return &m->threads[m->procs[i].first_thread + k];
}

int nl_model_take_sample(struct nl_model *m, int tid, struct nl_sample *out)
{
	struct nl_model_thread *t = nl_model_thread(m, tid);

	if (!t || t->state != NL_T_RUNNING)
		return -ESRCH;
	*out = t->acc;
	out->measured = NL_MODEL_MEASURED;
	out->cpu = t->cpu;
	memset(&t->acc, 0, sizeof(t->acc));
	t->acc.cpu = t->cpu;
	return 0;
}
