/*
 * numalot: where threads and data are on the simulated NUMA node
 * (docs/machine-model.md): start placement (fork balancing), initial data
 * placement, moves, pinning, and the pages a process has on each node.
 */
#include "model.h"

#include <errno.h>
#include <string.h>

void nl_model_occupy(struct nl_model *m, int cpu, int d)
{
	int core = m->topo->cpu_core[cpu];
	int before = m->cpu_load[cpu];

	m->cpu_load[cpu] += d;
	if (before == 0 && m->cpu_load[cpu] > 0)
		m->core_busy[core]++;
	else if (before > 0 && m->cpu_load[cpu] == 0)
		m->core_busy[core]--;
}

void nl_model_refresh_data(struct nl_model *m, struct nl_model_thread *t)
{
	const struct nl_model_proc *pr = &m->procs[t->proc];
	double sf = pr->spec.kind.shared_fraction;
	int n = m->topo->nnodes;

	if (m->ideal_locality) {
		/* Every byte it touches is on its node, shared data too (as
		 * if replicated): the limit of memory migration. */
		int i = nl_model_node_of(m, t->cpu);
		memset(t->priv_frac, 0, sizeof(double) * (size_t)n);
		memset(t->data_frac, 0, sizeof(double) * (size_t)n);
		t->priv_frac[i] = 1;
		t->data_frac[i] = 1;
		return;
	}
	for (int j = 0; j < n; j++)
		t->data_frac[j] =
			(1 - sf) * t->priv_frac[j] + sf * pr->shared_frac[j];
}

void nl_model_move(struct nl_model *m, struct nl_model_thread *t, int cpu)
{
	nl_model_occupy(m, t->cpu, -1);
	t->cpu = cpu;
	nl_model_occupy(m, cpu, 1);
	if (m->ideal_locality)
		nl_model_refresh_data(m, t);
}

/*
 * Fork balancing, as Linux does it to first order: the node with the
 * fewest threads per candidate CPU (ties: the lower node), then on it the
 * CPU with the fewest threads, preferring a core whose siblings are idle
 * (ties: the lower CPU). cand is not empty.
 */
static int pick_start_cpu(const struct nl_model *m, hwloc_const_bitmap_t cand)
{
	long load[NL_MAX_NODES] = {0}, ncand[NL_MAX_NODES] = {0};
	int best = -1, cpu, bcpu = -1, bload = 0, bsib = 0;

	hwloc_bitmap_foreach_begin(cpu, cand)
	{
		ncand[nl_model_node_of(m, cpu)]++;
		load[nl_model_node_of(m, cpu)] += m->cpu_load[cpu];
	}
	hwloc_bitmap_foreach_end();
	for (int n = 0; n < m->topo->nnodes; n++) {
		if (!ncand[n])
			continue;
		if (best < 0 || load[n] * ncand[best] < load[best] * ncand[n])
			best = n;
	}
	hwloc_bitmap_foreach_begin(cpu, cand)
	{
		int l = m->cpu_load[cpu];
		int sib = m->core_busy[m->topo->cpu_core[cpu]] - (l > 0);

		if (nl_model_node_of(m, cpu) != best)
			continue;
		if (bcpu < 0 || l < bload || (l == bload && sib < bsib)) {
			bcpu = cpu;
			bload = l;
			bsib = sib;
		}
	}
	hwloc_bitmap_foreach_end();
	return bcpu;
}

void nl_model_place_data(struct nl_model *m, struct nl_model_proc *pr)
{
	int n = m->topo->nnodes, cpu;
	struct nl_model_thread *t0 = &m->threads[pr->first_thread];
	int nodes[NL_MAX_NODES] = {0}, nused = 0;

	memset(pr->shared_frac, 0, sizeof(double) * (size_t)n);
	switch (pr->spec.placement) {
	case NL_PLACE_FIRST_TOUCH:
	case NL_PLACE_MASTER:
		pr->shared_frac[nl_model_node_of(m, t0->cpu)] = 1;
		break;
	case NL_PLACE_NODE:
	case NL_PLACE_BIND:
		pr->shared_frac[pr->spec.placement_node] = 1;
		break;
	case NL_PLACE_INTERLEAVE:
		hwloc_bitmap_foreach_begin(cpu, pr->allowed)
		{
			nodes[nl_model_node_of(m, cpu)] = 1;
		}
		hwloc_bitmap_foreach_end();
		for (int j = 0; j < n && pr->spec.mem_nodes; j++)
			nodes[j] = (int)(pr->spec.mem_nodes >> j & 1);
		for (int j = 0; j < n; j++)
			nused += nodes[j];
		for (int j = 0; j < n; j++)
			pr->shared_frac[j] = nodes[j] ? 1.0 / nused : 0;
		break;
	}
	for (int k = 0; k < pr->spec.nthreads; k++) {
		struct nl_model_thread *t = &m->threads[pr->first_thread + k];

		if (pr->spec.placement == NL_PLACE_FIRST_TOUCH) {
			memset(t->priv_frac, 0, sizeof(double) * (size_t)n);
			t->priv_frac[nl_model_node_of(m, t->cpu)] = 1;
		} else {
			memcpy(t->priv_frac, pr->shared_frac,
			       sizeof(double) * (size_t)n);
		}
		nl_model_refresh_data(m, t);
	}
}

void nl_model_start_process(struct nl_model *m, struct nl_model_proc *pr)
{
	hwloc_bitmap_t cand = m->cand;
	double now = nl_model_now(m);

	hwloc_bitmap_copy(cand, pr->affinity);
	if (pr->spec.start_node >= 0)
		for (int c = 0; c < m->topo->ncpus; c++)
			if (nl_model_node_of(m, c) != pr->spec.start_node)
				hwloc_bitmap_clr(cand, (unsigned)c);
	for (int k = 0; k < pr->spec.nthreads; k++) {
		int x = pr->first_thread + k;
		struct nl_model_thread *t = &m->threads[x];
		int fixed = m->start_cpu ? m->start_cpu[x] : -1;

		/* A given start CPU (a fixed placement) is pinned at once. */
		if (fixed >= 0 && fixed < m->topo->ncpus &&
		    hwloc_bitmap_isset(pr->allowed, (unsigned)fixed)) {
			t->cpu = fixed;
			t->pinned = 1;
		} else {
			t->cpu = pick_start_cpu(m, cand);
		}
		nl_model_occupy(m, t->cpu, 1);
		t->state = NL_T_RUNNING;
		t->start_s = now;
		t->acc.cpu = t->cpu;
	}
	nl_model_place_data(m, pr);
	pr->started = 1;
	pr->start_s = now;
	pr->threads_seen = pr->spec.nthreads;
	pr->live = pr->spec.nthreads;
	/* First NUMA placement after the scan delay and one scan period of
	 * hinting faults (the kernel's first full scan pass). */
	pr->numa_period_s = m->p.numa_scan_period_s;
	pr->numa_next_s =
		now + m->p.numa_scan_delay_s + m->p.numa_scan_period_s;
}

void nl_model_start_due(struct nl_model *m)
{
	double now = nl_model_now(m);

	for (int i = 0; i < m->nprocs; i++)
		if (!m->procs[i].started &&
		    m->procs[i].spec.start_s <= now + NL_TIME_EPS)
			nl_model_start_process(m, &m->procs[i]);
}

int nl_model_place(struct nl_model *m, int tid, int cpu)
{
	struct nl_model_thread *t = nl_model_thread(m, tid);

	if (!t || t->state != NL_T_RUNNING)
		return -ESRCH;
	if (cpu < 0 || cpu >= m->topo->ncpus ||
	    !hwloc_bitmap_isset(t->allowed, (unsigned)cpu))
		return -EINVAL;
	nl_model_move(m, t, cpu);
	t->pinned = 1;
	return 0;
}

int nl_model_release(struct nl_model *m, int tid)
{
	struct nl_model_thread *t = nl_model_thread(m, tid);

	if (!t || t->state != NL_T_RUNNING)
		return -ESRCH;
	t->pinned = 0;
	/* Back to its own affinity, as sched_setaffinity does. */
	if (!hwloc_bitmap_isset(t->affinity, (unsigned)t->cpu)) {
		int to = nl_model_os_home(m, t);
		if (to >= 0) {
			nl_model_move(m, t, to);
			m->os_moves++;
		}
	}
	return 0;
}

int nl_model_node_pages(const struct nl_model *m, int pid, double *pages)
{
	int i = nl_model_proc_index(m, pid), n = m->topo->nnodes;
	const struct nl_model_proc *pr;
	double mem;

	if (i < 0)
		return -ESRCH;
	pr = &m->procs[i];
	memset(pages, 0, sizeof(double) * (size_t)n);
	if (!pr->started || pr->done)
		return 0;
	mem = pr->spec.kind.mem_bytes / NL_PAGE_BYTES;
	/* A thread's pages lie as its traffic does (private and shared). */
	for (int k = 0; k < pr->spec.nthreads; k++) {
		const struct nl_model_thread *t =
			&m->threads[pr->first_thread + k];
		for (int j = 0; j < n; j++)
			pages[j] += mem * t->data_frac[j];
	}
	return 0;
}
