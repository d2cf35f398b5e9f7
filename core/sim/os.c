/*
 * numalot: the simulated operating system, once per tick after the work
 * advanced: load balancer, NUMA balancing, page migration, by mode
 * (docs/machine-model.md, "Operating system"). Pinned threads are the
 * policy's; nothing here knows which policy runs.
 */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "util.h"

/* Data shares closer than this count as equal (no preferred node). */
#define SHARE_EPS 1e-9

static const char *const os_names[] = {
	[NL_OS_NONE] = "none",
	[NL_OS_LINUX] = "linux",
	[NL_OS_LINUX_NONUMA] = "linux-nonuma",
	[NL_OS_LINUX_IDEAL] = "linux-ideal",
};
#define NOS (sizeof(os_names) / sizeof(os_names[0]))

const char *nl_os_mode_name(enum nl_os_mode mode)
{
	return (unsigned)mode < NOS ? os_names[mode] : NULL;
}

int nl_os_mode_from_name(const char *name, enum nl_os_mode *mode)
{
	for (unsigned i = 0; name && i < NOS; i++)
		if (strcmp(name, os_names[i]) == 0) {
			*mode = (enum nl_os_mode)i;
			return 0;
		}
	return -EINVAL;
}

const char *nl_os_mode_names(void)
{
	static char buf[64];

	if (!buf[0]) /* alphabetical: "linux, linux-ideal, linux-nonuma, none"
		      */
		nl_names_join(os_names, NOS, 1, buf, sizeof(buf));
	return buf;
}

/* The OS runs a thread within its affinity, numalot's pin aside. */
static int may_use(const struct nl_model_thread *t, int cpu)
{
	return hwloc_bitmap_isset(t->affinity, (unsigned)cpu);
}

/*
 * An idle CPU (no thread) of node that t may use: one on a wholly idle core
 * first, then any (ties: the lower CPU). -1 if none. idle_core_only: only
 * CPUs of idle cores.
 */
static int idle_cpu_on(const struct nl_model *m,
		       const struct nl_model_thread *t, int node,
		       int idle_core_only)
{
	int any = -1;

	for (int c = 0; c < m->topo->ncpus; c++) {
		if (nl_model_node_of(m, c) != node || m->cpu_load[c] ||
		    !may_use(t, c))
			continue;
		if (!m->core_busy[m->topo->cpu_core[c]])
			return c;
		if (any < 0 && !idle_core_only)
			any = c;
	}
	return any;
}

/* The nearest idle CPU t may use, its own node first. -1 if none. */
static int nearest_idle_cpu(const struct nl_model *m,
			    const struct nl_model_thread *t, int idle_core_only)
{
	int n = m->topo->nnodes, i = nl_model_node_of(m, t->cpu);

	for (int k = 0; k < n; k++) {
		int c = idle_cpu_on(m, t, m->node_order[i * n + k],
				    idle_core_only);
		if (c >= 0)
			return c;
	}
	return -1;
}

/*
 * The least loaded CPU of node that t may use, with at most max_load
 * threads (t's own CPU aside); ties: the one whose core holds fewer
 * threads, then the lower CPU. -1 if none.
 */
static int least_loaded_on(const struct nl_model *m,
			   const struct nl_model_thread *t, int node,
			   int max_load)
{
	int best = -1;

	for (int c = 0; c < m->topo->ncpus; c++) {
		if (c == t->cpu || nl_model_node_of(m, c) != node ||
		    m->cpu_load[c] > max_load || !may_use(t, c))
			continue;
		if (best < 0 || m->cpu_load[c] < m->cpu_load[best] ||
		    (m->cpu_load[c] == m->cpu_load[best] &&
		     m->core_busy[m->topo->cpu_core[c]] <
			     m->core_busy[m->topo->cpu_core[best]]))
			best = c;
	}
	return best;
}

int nl_model_os_home(const struct nl_model *m, const struct nl_model_thread *t)
{
	int c = nearest_idle_cpu(m, t, 0), n = m->topo->nnodes, best = -1;

	if (c >= 0)
		return c;
	/* No idle CPU: the least loaded one it may use, nearest nodes first
	 * (the balancer would spread a stack at once; "Operating system"). */
	for (int k = 0; k < n; k++) {
		int i = nl_model_node_of(m, t->cpu);
		c = least_loaded_on(m, t, m->node_order[i * n + k], 1 << 20);
		if (c >= 0 && (best < 0 || m->cpu_load[c] < m->cpu_load[best]))
			best = c;
	}
	return best >= 0 ? best : hwloc_bitmap_first(t->affinity);
}

/*
 * Balancing an overloaded node by the number of running tasks (6.1's
 * calculate_imbalance, group_overloaded at the cache level, migrate_task
 * then migrate_load): an unpinned thread on a CPU that holds at least two
 * threads more than another CPU of its node it may use moves to the least
 * loaded such CPU. Later threads first, as in load_balance.
 */
static void even_nodes(struct nl_model *m)
{
	for (int x = m->nthreads - 1; x >= 0; x--) {
		struct nl_model_thread *t = &m->threads[x];
		int load, to;

		if (t->state != NL_T_RUNNING || t->pinned)
			continue;
		load = m->cpu_load[t->cpu];
		if (load < 3)
			continue;
		to = least_loaded_on(m, t, nl_model_node_of(m, t->cpu),
				     load - 2);
		if (to >= 0) {
			nl_model_move(m, t, to);
			m->os_moves++;
		}
	}
}

/* Where active balancing pushes u: the nearest idle CPU it may use (an
 * idle core first), -1 none; idle lists the idle CPUs, nidle of them. */
static int push_to(const struct nl_model *m, const struct nl_model_thread *u,
		   const int *idle, int nidle)
{
	int c, k;

	for (k = 0; k < nidle; k++)
		if (!m->cpu_load[idle[k]] && may_use(u, idle[k]))
			break;
	if (k == nidle)
		return -1;
	c = nearest_idle_cpu(m, u, 1);
	return c >= 0 ? c : nearest_idle_cpu(m, u, 0);
}

/*
 * Active balancing for a thread its affinity crowds (6.1's group_imbalance:
 * calculate_imbalance's migrate_task, then imbalanced_active_balance once
 * pulling failed): a thread that is not pinned, shares its CPU and may use
 * no idle CPU, while a CPU of its node it may use holds one unpinned thread
 * that may go to an idle CPU: that thread goes to the nearest one (an idle
 * core first), and the crowded thread takes the CPU it left
 * (docs/machine-model.md, "Operating system"). Scratch: lone[c], the
 * unpinned thread alone on CPU c (-1 none); to[c], where it would go (-2
 * not yet asked, -1 nowhere), asked once a call until something moves;
 * the idle CPUs, nidle of them; dead[i], node i has no thread to push.
 */
static void active_balance(struct nl_model *m)
{
	int nc = m->topo->ncpus, *lone = m->cpu_lone, *to = m->cpu_lone + nc;
	int *idle = m->cpu_lone + 2 * nc, nidle = 0, any = 0;
	int *dead = m->cpu_lone + 3 * nc;

	memset(dead, 0, sizeof(int) * (size_t)m->topo->nnodes);
	for (int c = 0; c < nc; c++) {
		lone[c] = -1, to[c] = -2;
		if (!m->cpu_load[c])
			idle[nidle++] = c;
	}
	for (int x = 0; nidle && x < m->nthreads; x++) {
		const struct nl_model_thread *u = &m->threads[x];
		if (u->state == NL_T_RUNNING && !u->pinned &&
		    m->cpu_load[u->cpu] == 1) {
			lone[u->cpu] = x;
			any = 1;
		}
	}
	for (int x = m->nthreads - 1; any && x >= 0; x--) {
		struct nl_model_thread *w = &m->threads[x];
		int node, can = 0;

		if (w->state != NL_T_RUNNING || w->pinned ||
		    m->cpu_load[w->cpu] < 2)
			continue;
		/* An idle CPU it may use: the plain balancer's case. */
		for (int k = 0; k < nidle && !can; k++)
			can = !m->cpu_load[idle[k]] && may_use(w, idle[k]);
		node = nl_model_node_of(m, w->cpu);
		if (can || dead[node])
			continue;
		int pushable = 0, d;
		for (d = 0; d < nc; d++) {
			if (lone[d] < 0 || nl_model_node_of(m, d) != node)
				continue;
			if (to[d] == -2)
				to[d] = push_to(m, &m->threads[lone[d]], idle,
						nidle);
			pushable |= to[d] >= 0;
			if (to[d] >= 0 && may_use(w, d))
				break;
		}
		if (!pushable)
			dead[node] = 1;
		if (d == nc)
			continue;
		nl_model_move(m, &m->threads[lone[d]], to[d]);
		nl_model_move(m, w, d);
		m->os_moves += 2;
		/* The idle CPUs changed: ask again. */
		lone[d] = -1;
		for (int c = 0; c < nc; c++)
			to[c] = -2;
		memset(dead, 0, sizeof(int) * (size_t)m->topo->nnodes);
	}
}

/*
 * The load balancer, to first order: a thread that is not pinned and
 * shares its CPU goes to the nearest idle CPU it may use (an idle core
 * first). A thread whose core's other hardware thread is busy goes to an
 * idle core of its own node (the balancer spreads over cores before SMT
 * siblings within a cache domain). Threads are taken last tid first, so
 * that of two threads on one CPU the later one moves.
 */
static void load_balance(struct nl_model *m)
{
	int over = 0, idle = 0, crowded = 0, idle_core = 0;

	for (int c = 0; c < m->topo->ncpus; c++) {
		int core_busy = m->core_busy[m->topo->cpu_core[c]];
		over |= m->cpu_load[c] > 1;
		idle |= m->cpu_load[c] == 0;
		crowded |= m->cpu_load[c] == 1 && core_busy > 1;
		idle_core |= core_busy == 0;
	}
	if (over)
		even_nodes(m);
	if (!idle || (!over && !(crowded && idle_core)))
		return;
	for (int x = m->nthreads - 1; x >= 0; x--) {
		struct nl_model_thread *t = &m->threads[x];
		int to = -1;

		if (t->state != NL_T_RUNNING || t->pinned)
			continue;
		if (m->cpu_load[t->cpu] > 1) {
			to = nearest_idle_cpu(m, t, 0);
		} else if (m->core_busy[m->topo->cpu_core[t->cpu]] > 1) {
			to = idle_cpu_on(m, t, nl_model_node_of(m, t->cpu), 1);
		}
		if (to >= 0) {
			nl_model_move(m, t, to);
			m->os_moves++;
		}
	}
	if (over)
		active_balance(m);
}

/* The node holding most of t's data, or -1 when its own node ties. */
static int preferred_node(const struct nl_model *m,
			  const struct nl_model_thread *t)
{
	int n = m->topo->nnodes, i = nl_model_node_of(m, t->cpu), best = i;

	for (int j = 0; j < n; j++)
		if (t->data_frac[j] > t->data_frac[best] + SHARE_EPS)
			best = j;
	return best == i ? -1 : best;
}

/*
 * Swap partner for t (on node s, preferring node p): a thread on p that
 * is not pinned, of a NUMA-balanced process, that may use t's CPU (and t
 * its CPU), and that gains as t does. The largest total gain wins (ties:
 * the lower tid). NULL if none.
 */
static struct nl_model_thread *
swap_partner(struct nl_model *m, const struct nl_model_thread *t, int s, int p)
{
	struct nl_model_thread *best = NULL;
	double gain_t = t->data_frac[p] - t->data_frac[s], best_gain = 0;

	for (int x = 0; x < m->nthreads; x++) {
		struct nl_model_thread *u = &m->threads[x];
		double gain_u;

		if (u->state != NL_T_RUNNING || u->pinned ||
		    !m->procs[u->proc].numa_balanced ||
		    nl_model_node_of(m, u->cpu) != p || !may_use(u, t->cpu) ||
		    !may_use(t, u->cpu))
			continue;
		gain_u = u->data_frac[s] - u->data_frac[p];
		if (gain_u <= SHARE_EPS)
			continue;
		if (!best || gain_t + gain_u > best_gain + SHARE_EPS) {
			best = u;
			best_gain = gain_t + gain_u;
		}
	}
	return best;
}

static int busy_on(const struct nl_model *m, int node)
{
	int n = 0;
	for (int c = 0; c < m->topo->ncpus; c++)
		n += nl_model_node_of(m, c) == node && m->cpu_load[c] > 0;
	return n;
}

/* imb_numa_nr: a share of node p's CPUs, at least 1 as in the kernel. */
static int allowance(const struct nl_model *m, int p)
{
	int cpus = 0;
	for (int c = 0; c < m->topo->ncpus; c++)
		cpus += nl_model_node_of(m, c) == p;
	return (int)fmax(1, m->p.numa_imbalance_share * cpus);
}

/*
 * Kernel-like (6.1's task_numa_find_cpu with adjust_numa_imbalance): a
 * move to an idle CPU of the preferred node is allowed when it leaves p
 * no busier than s, or, while p stays lightly loaded (at most imb_numa_nr
 * busy CPUs after it), at most NUMA_IMBALANCE_MIN (2) busier; beyond,
 * only a swap (docs/machine-model.md).
 */
static int imbalance_ok(const struct nl_model *m, int s, int p)
{
	int dst = busy_on(m, p) + 1, src = busy_on(m, s) - 1;

	if (m->os_mode != NL_OS_LINUX)
		return 1;
	return dst - src <= 0 || (dst - src <= 2 && dst <= allowance(m, p));
}

/*
 * 6.1's fbq_type of a thread's runqueue: 0 (regular) when its process is
 * not NUMA-balanced, 1 (remote) when it runs off the node of most of its
 * data, 2 (all) on it.
 */
static int fbq_of(const struct nl_model *m, const struct nl_model_thread *t)
{
	if (!m->procs[t->proc].numa_balanced)
		return 0;
	return preferred_node(m, t) >= 0 ? 1 : 2;
}

/*
 * A node's fbq_type (fbq_classify_group): the least of its running
 * threads', pinned or not. The balancer pulls from a node only threads
 * whose runqueue's type is at most the node's (find_busiest_queue): a
 * thread on its data's node stays while the node holds one that is not.
 */
static void fbq_by_node(const struct nl_model *m, int *fbq)
{
	for (int j = 0; j < m->topo->nnodes; j++)
		fbq[j] = 2;
	for (int x = 0; x < m->nthreads; x++) {
		const struct nl_model_thread *t = &m->threads[x];
		int s, k;
		if (t->state != NL_T_RUNNING)
			continue;
		s = nl_model_node_of(m, t->cpu);
		k = fbq_of(m, t);
		fbq[s] = k < fbq[s] ? k : fbq[s];
	}
}

/* Would the balancer even node s with node p (busy CPUs by node)? What
 * NUMA balancing may leave (2 more, p lightly loaded), it keeps. */
static int node_tips(const struct nl_model *m, const int *busy, int s, int p)
{
	int d = busy[s] - busy[p];
	return p != s && d >= 2 && !(d == 2 && busy[p] + 1 <= allowance(m, p));
}

/* Pull one thread of node s to an idle CPU of node p (an idle core
 * first): one that shares a core first, the later thread first, of a
 * runqueue the node's fbq_type lets go. 1 if one moved. */
static int pull_one(struct nl_model *m, int s, int p, const int *fbq)
{
	for (int pass = 0; pass < 2; pass++)
		for (int x = m->nthreads - 1; x >= 0; x--) {
			struct nl_model_thread *t = &m->threads[x];
			int to;

			if (t->state != NL_T_RUNNING || t->pinned ||
			    nl_model_node_of(m, t->cpu) != s ||
			    (pass == 0 &&
			     m->core_busy[m->topo->cpu_core[t->cpu]] < 2) ||
			    fbq_of(m, t) > fbq[s])
				continue;
			to = idle_cpu_on(m, t, p, 1);
			if (to < 0)
				to = idle_cpu_on(m, t, p, 0);
			if (to < 0)
				continue;
			nl_model_move(m, t, to);
			m->os_moves++;
			return 1;
		}
	return 0;
}

/* Nodes by busy CPUs, least first when up, most first otherwise (ties:
 * the lower node). */
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
 * Between nodes (6.1's find_busiest_group and calculate_imbalance at the
 * NUMA level with spare capacity; docs/machine-model.md, "Operating
 * system"): the least busy node pulls from the busiest one while they
 * differ by 2 busy CPUs (unless it stays lightly loaded and the
 * difference is only 2, the imbalance NUMA balancing itself may make),
 * one thread at a time to an idle CPU (an idle core first), a thread
 * that shares a core first; a node none of whose threads may go (pinned,
 * bound, or on their data's node while it holds one that is not: the
 * fbq_type) is passed over for the next busiest.
 */
static void spread_nodes(struct nl_model *m)
{
	int n = m->topo->nnodes, busy[NL_MAX_NODES], fbq[NL_MAX_NODES],
	    lo[NL_MAX_NODES], hi[NL_MAX_NODES];

	if (n < 2 || n > NL_MAX_NODES)
		return;
	for (int round = 0; round < m->topo->ncpus; round++) {
		int moved = 0;
		for (int j = 0; j < n; j++)
			busy[j] = 0;
		for (int c = 0; c < m->topo->ncpus; c++)
			busy[nl_model_node_of(m, c)] += m->cpu_load[c] > 0;
		by_busy(n, busy, lo, 1);
		by_busy(n, busy, hi, 0);
		if (busy[hi[0]] - busy[lo[0]] < 2)
			return;
		fbq_by_node(m, fbq);
		for (int a = 0; a < n && !moved; a++)
			for (int b = 0; b < n && !moved; b++)
				moved = node_tips(m, busy, hi[b], lo[a]) &&
					pull_one(m, hi[b], lo[a], fbq);
		if (!moved)
			return;
	}
}

/* One NUMA placement decision for every unpinned thread of pr. Returns
 * how many of its threads had their data elsewhere. */
static int numa_place(struct nl_model *m, struct nl_model_proc *pr)
{
	int misplaced = 0;
	for (int k = 0; k < pr->spec.nthreads; k++) {
		struct nl_model_thread *t = &m->threads[pr->first_thread + k];
		struct nl_model_thread *u;
		int s, p, to, from;

		if (t->state != NL_T_RUNNING || t->pinned)
			continue;
		p = preferred_node(m, t);
		if (p < 0)
			continue;
		misplaced++;
		s = nl_model_node_of(m, t->cpu);
		to = imbalance_ok(m, s, p) ? idle_cpu_on(m, t, p, 0) : -1;
		if (to >= 0) {
			nl_model_move(m, t, to);
			m->os_moves++;
			continue;
		}
		u = swap_partner(m, t, s, p);
		if (!u)
			continue;
		from = t->cpu;
		to = u->cpu;
		nl_model_move(m, t, to);
		nl_model_move(m, u, from);
		m->os_moves += 2;
	}
	return misplaced;
}

/*
 * Page migration by NUMA hinting faults. Each tick the scanner covers
 * numa_scan_bytes / numa_scan_period_s x tick of a process's address
 * space, in passes from its start to its end as the kernel's
 * task_numa_work does, so that a pass finds every misplaced private page
 * once: of a thread's misplaced pages, those in the part of the pass not
 * yet scanned (spread evenly over it) fault this tick in proportion, and
 * ask to move to the thread's node; each destination node takes at most
 * page_migration_bytes_per_s x tick. Shared data stays where it is.
 * (Taking that share of all of them every tick instead never finished:
 * 63% a pass, where the guests' kernel moved a process's misplaced pages
 * in one pass and stopped; docs/machine-model.md, "The model beside the
 * real kernel".)
 */
static void migrate_pages(struct nl_model *m)
{
	int n = m->topo->nnodes;
	double now = nl_model_now(m), dt = m->p.tick_s;

	memset(m->node_budget, 0, sizeof(double) * (size_t)n);
	for (int x = 0; x < m->nthreads; x++) {
		struct nl_model_thread *t = &m->threads[x];
		const struct nl_model_proc *pr = &m->procs[t->proc];
		double priv_bytes, footprint, f;
		int i;

		t->migrate_want = 0;
		if (t->state != NL_T_RUNNING || !pr->numa_balanced ||
		    now < pr->start_s + m->p.numa_scan_delay_s - NL_TIME_EPS)
			continue;
		priv_bytes = (1 - pr->spec.kind.shared_fraction) *
			     pr->spec.kind.mem_bytes;
		footprint = pr->spec.kind.mem_bytes * pr->spec.nthreads;
		if (priv_bytes <= 0 || footprint <= 0)
			continue;
		i = nl_model_node_of(m, t->cpu);
		f = fmin(1, m->p.numa_scan_bytes / pr->numa_period_s * dt /
				    footprint);
		/* What this tick scans of what is left of the pass. */
		t->migrate_want = priv_bytes * (1 - t->priv_frac[i]) *
				  fmin(1, f / (1 - pr->scan_pos));
		m->node_budget[i] += t->migrate_want;
		/* Kernel-like: every scanned page of its own takes a hinting
		 * fault, which costs the thread CPU time. */
		if (m->os_mode == NL_OS_LINUX)
			t->os_overhead += pr->spec.kind.mem_bytes * f /
					  NL_PAGE_BYTES *
					  m->p.numa_fault_cost_s / dt;
	}
	/* Each scanned process's pass goes on (once a tick). */
	for (int k = 0; k < m->nprocs; k++) {
		struct nl_model_proc *pr = &m->procs[k];
		double footprint = pr->spec.kind.mem_bytes * pr->spec.nthreads;

		if (!pr->started || pr->done || !pr->numa_balanced ||
		    footprint <= 0 ||
		    now < pr->start_s + m->p.numa_scan_delay_s - NL_TIME_EPS)
			continue;
		pr->scan_pos +=
			fmin(1, m->p.numa_scan_bytes / pr->numa_period_s * dt /
					footprint);
		if (pr->scan_pos >= 1 - 1e-9)
			pr->scan_pos = 0;
	}
	/* node_budget: wanted bytes; now the share each node grants. */
	for (int i = 0; i < n; i++)
		m->node_budget[i] =
			m->node_budget[i] > 0
				? fmin(1, m->p.page_migration_bytes_per_s * dt /
						  m->node_budget[i])
				: 0;
	for (int x = 0; x < m->nthreads; x++) {
		struct nl_model_thread *t = &m->threads[x];
		const struct nl_model_proc *pr = &m->procs[t->proc];
		double priv_bytes, away, moved, keep;
		int i;

		if (t->migrate_want <= 0)
			continue;
		i = nl_model_node_of(m, t->cpu);
		priv_bytes = (1 - pr->spec.kind.shared_fraction) *
			     pr->spec.kind.mem_bytes;
		away = 1 - t->priv_frac[i];
		moved = t->migrate_want * m->node_budget[i];
		/* Take from every other node in proportion. */
		keep = 1 - moved / (priv_bytes * away);
		if (keep < 0)
			keep = 0;
		for (int j = 0; j < n; j++)
			if (j != i)
				t->priv_frac[j] *= keep;
		t->priv_frac[i] = 1 - away * keep;
		nl_model_refresh_data(m, t);
		m->pages_migrated_bytes += moved;
		/* Kernel-like: the faulting thread copies the page itself. */
		if (m->os_mode == NL_OS_LINUX)
			t->os_overhead +=
				moved / m->p.page_copy_bytes_per_s / dt;
	}
}

/* The kernel scans a process slower once this share of its hinting
 * faults is local (NUMA_PERIOD_THRESHOLD of NUMA_PERIOD_SLOTS, 7 of 10). */
#define NUMA_LOCAL 0.7

/* The least local share of accesses among a process's running threads:
 * the kernel sets each task's scan period by its own faults, and any task
 * whose period has passed may scan the process's memory (a scan by a
 * slower task puts the next one off: the model takes the fastest, an
 * approximation). */
static double local_share(const struct nl_model *m,
			  const struct nl_model_proc *pr)
{
	double least = 1;
	for (int k = 0; k < pr->spec.nthreads; k++) {
		const struct nl_model_thread *t =
			&m->threads[pr->first_thread + k];
		if (t->state == NL_T_RUNNING)
			least = fmin(least,
				     t->data_frac[nl_model_node_of(m, t->cpu)]);
	}
	return least;
}

/* NUMA placement decisions of the processes that are due. */
static void numa_balance(struct nl_model *m)
{
	double now = nl_model_now(m);

	for (int i = 0; i < m->nprocs; i++) {
		struct nl_model_proc *pr = &m->procs[i];

		if (!pr->started || pr->done || !pr->numa_balanced ||
		    now < pr->numa_next_s - NL_TIME_EPS)
			continue;
		/* Kernel-like: the scan period doubles while most of every
		 * thread's accesses are local, and halves when some
		 * thread's are not (the kernel's update_task_scan_period,
		 * by each task's local faults: docs/machine-model.md). Not
		 * by whether its threads sit on their nodes of most data:
		 * pages spread evenly (each thread's on every node alike)
		 * leave every thread there with most of its accesses
		 * remote, and the kernel then scans faster, not slower. */
		numa_place(m, pr);
		if (m->os_mode == NL_OS_LINUX &&
		    local_share(m, pr) >= NUMA_LOCAL)
			pr->numa_period_s = fmin(2 * pr->numa_period_s,
						 m->p.numa_scan_period_max_s);
		else
			pr->numa_period_s = fmax(pr->numa_period_s / 2,
						 m->p.numa_scan_period_s);
		pr->numa_next_s += pr->numa_period_s;
	}
}

void nl_model_os_step(struct nl_model *m)
{
	for (int x = 0; x < m->nthreads; x++)
		m->threads[x].os_overhead = 0;
	switch (m->os_mode) {
	case NL_OS_NONE:
		/* Unpinned threads stay on the CPU they started on. */
		break;
	case NL_OS_LINUX:
	case NL_OS_LINUX_IDEAL:
		migrate_pages(m);
		numa_balance(m);
		load_balance(m);
		spread_nodes(m);
		break;
	case NL_OS_LINUX_NONUMA:
		load_balance(m);
		spread_nodes(m);
		break;
	}
}
