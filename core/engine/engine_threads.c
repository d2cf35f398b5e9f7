/*
 * numalot: the engine's threads (docs/architecture.md): the machine's
 * thread list merged into the engine's, each thread's counters added up,
 * ended threads forgotten.
 */
#include "engine_priv.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int domain_of_pid(struct nl_engine *e, int pid)
{
	const struct eprocess *p = nl_engine_proc(e, pid);
	return p ? p->domain : -1;
}

static struct ethread *thread_new(struct nl_engine *e,
				  const struct nl_thread_info *ti, int domain)
{
	struct edomain *d = nl_engine_domain(e, domain);
	/* The limit: the allocation, or the thread's own binding when the
	 * domain keeps bindings (docs/algorithms.md). */
	hwloc_const_bitmap_t limit =
		d && d->params.keep_bindings && ti->affinity ? ti->affinity
							     : ti->allowed;
	size_t nn = (size_t)e->m->topo->nnodes;
	struct ethread *t =
		calloc(1, sizeof(*t) + 4 * nn * sizeof(t->node_data[0]));
	if (!t)
		return NULL;
	t->time_on_node = t->node_data;
	t->acc.lat_count = t->node_data + nn;
	t->acc.lat_sum_ns = t->node_data + 2 * nn;
	t->acc.access = t->node_data + 3 * nn;
	if (e->nall == e->capall) {
		size_t cap = e->capall ? e->capall * 2 : 64;
		struct ethread **n = realloc(e->all, cap * sizeof(*n));
		if (!n) {
			free(t);
			return NULL;
		}
		e->all = n;
		e->capall = cap;
	}
	t->allowed = hwloc_bitmap_dup(limit);
	t->own = ti->affinity ? hwloc_bitmap_dup(ti->affinity) : NULL;
	if (!t->allowed || (ti->affinity && !t->own)) {
		hwloc_bitmap_free(t->allowed);
		hwloc_bitmap_free(t->own);
		free(t);
		return NULL;
	}
	t->tid = ti->tid;
	t->pid = ti->pid;
	t->domain = domain;
	t->start_time = ti->start_time;
	t->cpu = ti->cpu;
	t->alive = 1;
	t->first_seen_s = e->m->ops->now(e->m);
	t->preferred_node = -1;
	t->left_node = -1;
	t->moved_s = -1;
	t->acc.cpu = -1;
	nl_record_clear(&t->record);
	e->all[e->nall++] = t;
	return t;
}

/*
 * A process the machine manages that the engine was not told of (a child
 * the machine followed): it joins the domain of a process of the same job.
 */
static int adopt(struct nl_engine *e, int pid)
{
	const struct nl_process_info *p;
	size_t n;
	int job = -1;

	if (e->m->ops->processes(e->m, &p, &n) < 0)
		return -1;
	for (size_t i = 0; i < n && job < 0; i++)
		if (p[i].pid == pid)
			job = p[i].job;
	for (size_t i = 0; i < n && job >= 0; i++) {
		int d = p[i].job == job ? domain_of_pid(e, p[i].pid) : -1;
		if (d >= 0 && nl_engine_add_process(e, pid, d) == 0) {
			nl_engine_proc(e, pid)->adopted = 1;
			return d;
		}
	}
	return -1;
}

int nl_engine_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/*
 * Forget the oldest ended threads of each domain past
 * NL_MAX_ENDED_THREADS: a cap per domain, so that one job's churn never
 * erases another's records (docs/architecture.md).
 */
static void forget_ended(struct nl_engine *e)
{
	size_t ended = e->nall - e->nlive, j = 0, nd = e->ndomains;
	int *ids;
	size_t *count;

	/* No domain can be over the cap while all of them together are not;
	 * and nothing changed since the last look if no more ended. */
	if (ended <= NL_MAX_ENDED_THREADS || ended == e->ended_seen)
		return;
	ids = malloc(sizeof(int) * (nd + 1));
	count = calloc(nd + 1, sizeof(size_t));
	if (!ids || !count)
		goto out;
	for (size_t i = 0; i < nd; i++)
		ids[i] = e->domains[i].id;
	qsort(ids, nd, sizeof(int), nl_engine_cmp_int);
	for (size_t i = 0; i < e->nall; i++) {
		int *k = bsearch(&e->all[i]->domain, ids, nd, sizeof(int),
				 nl_engine_cmp_int);
		if (k && !e->all[i]->alive)
			count[k - ids]++;
	}
	for (size_t i = 0; i < e->nall; i++) {
		struct ethread *t = e->all[i];
		int *k = t->alive ? NULL
				  : bsearch(&t->domain, ids, nd, sizeof(int),
					    nl_engine_cmp_int);
		if (k && count[k - ids] > NL_MAX_ENDED_THREADS) {
			struct edomain *d = nl_engine_domain(e, t->domain);
			if (d)
				d->threads_dropped++;
			hwloc_bitmap_free(t->allowed);
			hwloc_bitmap_free(t->own);
			free(t);
			count[k - ids]--;
			continue;
		}
		e->all[j++] = t;
	}
	e->nall = j;
	e->ended_seen = e->nall - e->nlive;
out:
	free(ids);
	free(count);
}

/* Merge the machine's threads ti (sorted by tid) with the engine's old
 * (sorted by tid) into a new list (sorted). Old threads not in ti ended. */
static int merge_threads(struct nl_engine *e, struct ethread **old, size_t nold,
			 const struct nl_thread_info *ti, size_t n,
			 struct ethread **live, size_t *nlive)
{
	size_t j = 0, nl = 0;
	double now = e->m->ops->now(e->m);
	for (size_t i = 0; i < n; i++) {
		int domain = domain_of_pid(e, ti[i].pid);
		if (domain < 0)
			domain = adopt(e, ti[i].pid);
		if (domain < 0)
			continue;
		while (j < nold && old[j]->tid < ti[i].tid)
			old[j++]->alive = 0;
		struct ethread *t = NULL;
		if (j < nold && old[j]->tid == ti[i].tid) {
			t = old[j++];
			/* Same tid, other start time: a new thread. */
			if (t->start_time != ti[i].start_time) {
				t->alive = 0;
				t = NULL;
			}
		}
		if (!t) {
			double c0 = nl_thread_cpu_s();
			t = thread_new(e, &ti[i], domain);
			e->takeover_cpu_s += nl_thread_cpu_s() - c0;
		}
		if (!t)
			return -ENOMEM;
		t->cpu = ti[i].cpu;
		t->alive = 1;
		t->last_seen_s = now;
		live[nl++] = t;
	}
	while (j < nold)
		old[j++]->alive = 0;
	*nlive = nl;
	return 0;
}

int nl_engine_set_live(struct nl_engine *e, struct ethread **live, size_t n,
		       struct live_key *keys)
{
	if (!keys) {
		keys = malloc(sizeof(*keys) * (n + 1));
		if (!keys) {
			free(live);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			keys[i] = (struct live_key){live[i]->tid,
						    live[i]->domain};
	}
	free(e->live);
	free(e->live_key);
	e->live = live;
	e->live_key = keys;
	e->nlive = n;
	return 0;
}

/* Step 1: merge the machine's thread list into ours (both sorted by tid). */
int nl_engine_refresh_threads(struct nl_engine *e)
{
	const struct nl_thread_info *ti;
	size_t n, nl = 0;
	struct ethread **live;
	int rc = e->m->ops->threads(e->m, &ti, &n);

	if (rc < 0)
		return rc;
	live = malloc(sizeof(*live) * (n + 1));
	if (!live)
		return -ENOMEM;
	rc = merge_threads(e, e->live, e->nlive, ti, n, live, &nl);
	if (rc < 0) {
		free(live);
		return rc;
	}
	rc = nl_engine_set_live(e, live, nl, NULL);
	if (rc < 0)
		return rc;
	forget_ended(e);
	nl_engine_forget_ended_procs(e);
	return 0;
}

/* The processes of the due domains (ids sorted) into pids (room for
 * nprocs); returns how many. */
size_t nl_engine_due_pids(const struct nl_engine *e, const int *due,
			  size_t ndue, int *pids)
{
	size_t np = 0;
	for (size_t i = 0; i < e->nprocs; i++)
		if (bsearch(&e->procs[i].domain, due, ndue, sizeof(int),
			    nl_engine_cmp_int))
			pids[np++] = e->procs[i].pid;
	return np;
}

/*
 * Step 1 for the due domains only (ids sorted), when the machine can
 * refresh some processes: the others' threads are neither read nor
 * touched, so that many steps cost each only their own threads. The
 * refreshed threads go to *fresh (sorted by tid) for sampling.
 */
int nl_engine_refresh_due(struct nl_engine *e, const int *due, size_t ndue,
			  struct ethread ***fresh, size_t *nfresh)
{
	const struct nl_thread_info *ti;
	size_t n, np = 0, nold = 0, nkeep = 0, nnew = 0, k = 0, f = 0;
	int *pids = malloc(sizeof(int) * (e->nprocs + 1));
	struct ethread **old = malloc(sizeof(*old) * (e->nlive + 1));
	size_t *keep = malloc(sizeof(*keep) * (e->nlive + 1));
	struct ethread **live = NULL, **got = NULL;
	struct live_key *keys = NULL;
	int rc = -ENOMEM;

	if (!pids || !old || !keep)
		goto out;
	np = nl_engine_due_pids(e, due, ndue, pids);
	rc = e->m->ops->threads_of(e->m, pids, np, &ti, &n);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < e->nlive; i++) {
		if (bsearch(&e->live_key[i].domain, due, ndue, sizeof(int),
			    nl_engine_cmp_int))
			old[nold++] = e->live[i];
		else
			keep[nkeep++] = i; /* its index: its key is at hand */
	}
	got = malloc(sizeof(*got) * (n + 1));
	live = malloc(sizeof(*live) * (nkeep + n + 1));
	keys = malloc(sizeof(*keys) * (nkeep + n + 1));
	rc = -ENOMEM;
	if (!got || !live || !keys)
		goto out;
	rc = merge_threads(e, old, nold, ti, n, got, &nnew);
	if (rc < 0)
		goto out;
	/* Both sorted by tid: merge. A kept thread whose tid the machine
	 * now shows in a refreshed process has ended (a reused tid). */
	for (size_t i = 0; i < nkeep || k < nnew;) {
		const struct live_key *kk =
			i < nkeep ? &e->live_key[keep[i]] : NULL;
		if (k < nnew && kk && kk->tid == got[k]->tid) {
			e->live[keep[i++]]->alive = 0;
			continue;
		}
		if (k < nnew && (!kk || got[k]->tid < kk->tid)) {
			keys[f] =
				(struct live_key){got[k]->tid, got[k]->domain};
			live[f++] = got[k++];
		} else {
			keys[f] = *kk;
			live[f++] = e->live[keep[i++]];
		}
	}
	nl_engine_set_live(e, live, f, keys);
	live = NULL;
	keys = NULL;
	*fresh = got;
	*nfresh = nnew;
	got = NULL;
	forget_ended(e);
	nl_engine_forget_ended_procs(e);
out:
	free(pids);
	free(old);
	free(keep);
	free(live);
	free(keys);
	free(got);
	return rc;
}

/* Drop t's entry i (0 < i < n - 1), its stay going to the one before;
 * and the one after too when it then repeats that CPU. Returns how many
 * went. */
static int drop_stay(struct ethread *t, int i)
{
	int n = t->ncpus_seen,
	    k = t->cpus_seen[i - 1].cpu == t->cpus_seen[i + 1].cpu ? 2 : 1;
	memmove(&t->cpus_seen[i], &t->cpus_seen[i + k],
		sizeof(t->cpus_seen[0]) * (size_t)(n - i - k));
	t->ncpus_seen = n - k;
	return k;
}

/*
 * Note where a sample found t: an entry at its first sample and at each
 * change of CPU. When its NL_CPUS_SEEN are used, changes within a node
 * are left out first (the node is what a timeline colours), then the
 * briefest stays, merged into the one before, down to three quarters: the
 * list stays bounded, says which node when for the long stays, and never
 * lists a CPU twice in a row (docs/report-format.md, threads[].cpus).
 */
static void cpu_seen(struct ethread *t, const struct nl_topology *topo, int cpu,
		     double now)
{
	int n = t->ncpus_seen, k = 0;

	if (n && t->cpus_seen[n - 1].cpu == cpu)
		return;
	if (n == NL_CPUS_SEEN) {
		for (int i = 0; i < n; i++)
			if (!k ||
			    topo->cpu_node[t->cpus_seen[i].cpu] !=
				    topo->cpu_node[t->cpus_seen[k - 1].cpu])
				t->cpus_seen[k++] = t->cpus_seen[i];
		t->ncpus_seen = k;
		/* Every entry a change of node: the briefest stays go. */
		while (t->ncpus_seen > NL_CPUS_SEEN * 3 / 4) {
			int best = 1;
			for (int i = 2; i < t->ncpus_seen - 1; i++)
				if (t->cpus_seen[i + 1].t_s -
					    t->cpus_seen[i].t_s <
				    t->cpus_seen[best + 1].t_s -
					    t->cpus_seen[best].t_s)
					best = i;
			drop_stay(t, best);
		}
		t->cpus_thinned += (unsigned)(n - t->ncpus_seen);
		n = t->ncpus_seen;
		if (t->cpus_seen[n - 1].cpu == cpu)
			return;
	}
	t->cpus_seen[n].t_s = now;
	t->cpus_seen[n].cpu = cpu;
	t->ncpus_seen = n + 1;
}

/* Step 2: add each thread's counters since the last wake. */
void nl_engine_sample_threads(struct nl_engine *e, struct ethread **th,
			      size_t n)
{
	const struct nl_topology *topo = e->m->topo;
	double now = e->m->ops->now(e->m);
	for (size_t i = 0; i < n; i++) {
		struct ethread *t = th[i];
		struct nl_sample s; /* written whole by sample (machine.h) */
		if (e->m->ops->sample(e->m, t->tid, &s) < 0)
			continue;
		nl_sample_sum_add(&t->acc, &s, topo->nnodes);
		t->acc_added = 1;
		/* as nl_sample_sum_add adds the by-node arrays */
		if (s.measured & (NL_M_LATENCY | NL_M_NODE_ACCESS))
			t->acc_nodes = 1;
		int cpu = s.cpu >= 0 ? s.cpu : t->cpu;
		if (cpu >= 0 && cpu < topo->ncpus && topo->cpu_node[cpu] >= 0) {
			t->time_on_node[topo->cpu_node[cpu]] +=
				(s.measured & NL_M_TASK_CLOCK) ? s.task_clock_s
							       : s.wall_s;
			cpu_seen(t, topo, cpu, now);
		}
	}
}
