/*
 * numalot: the engine's processes (docs/architecture.md): found by pid
 * in constant time, and a domain's ended children forgotten past
 * NL_MAX_ENDED_PROCS, so that one job's churn costs the others nothing.
 */
#include "engine_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(int pid, size_t mask)
{
	return (size_t)(unsigned)pid * 2654435761u & mask;
}

/* Index e->procs anew (after removals or growth). 0 or -ENOMEM. */
static int reindex(struct nl_engine *e)
{
	size_t cap = 64;
	while (cap < 2 * e->nprocs + 2)
		cap *= 2;
	if (cap != e->pidx.mask + 1 || !e->pidx.slot) {
		size_t *s = calloc(cap, sizeof(*s));
		if (!s)
			return -ENOMEM;
		free(e->pidx.slot);
		e->pidx.slot = s;
		e->pidx.mask = cap - 1;
	} else {
		memset(e->pidx.slot, 0, cap * sizeof(*e->pidx.slot));
	}
	for (size_t i = 0; i < e->nprocs; i++) {
		size_t h = slot_of(e->procs[i].pid, e->pidx.mask);
		while (e->pidx.slot[h])
			h = (h + 1) & e->pidx.mask;
		e->pidx.slot[h] = i + 1;
	}
	e->pidx.stale = 0;
	return 0;
}

struct eprocess *nl_engine_proc(struct nl_engine *e, int pid)
{
	if ((e->pidx.stale || !e->pidx.slot) && reindex(e) < 0) {
		for (size_t i = 0; i < e->nprocs; i++)
			if (e->procs[i].pid == pid)
				return &e->procs[i];
		return NULL;
	}
	for (size_t h = slot_of(pid, e->pidx.mask); e->pidx.slot[h];
	     h = (h + 1) & e->pidx.mask)
		if (e->procs[e->pidx.slot[h] - 1].pid == pid)
			return &e->procs[e->pidx.slot[h] - 1];
	return NULL;
}

int nl_engine_add_process(struct nl_engine *e, int pid, int domain)
{
	struct eprocess *p;

	if (!nl_engine_domain(e, domain))
		return -ENOENT;
	if (nl_engine_proc(e, pid))
		return -EEXIST;
	p = realloc(e->procs, sizeof(*p) * (e->nprocs + 1));
	if (!p)
		return -ENOMEM;
	e->procs = p;
	e->procs[e->nprocs++] = (struct eprocess){.pid = pid, .domain = domain};
	e->pidx.stale = 1;
	return 0;
}

struct ended {
	int pid;
	double end_s;
};

static int by_pid(const void *a, const void *b)
{
	int x = ((const struct ended *)a)->pid,
	    y = ((const struct ended *)b)->pid;
	return (x > y) - (x < y);
}

static int by_end(const void *a, const void *b)
{
	double x = ((const struct ended *)a)->end_s,
	       y = ((const struct ended *)b)->end_s;
	return (x > y) - (x < y);
}

/* Forget the processes whose pids are in drop (sorted): their threads,
 * their records, the machine's. */
static void forget_pids(struct nl_engine *e, const struct ended *drop,
			size_t ndrop)
{
	size_t j = 0;
#define DROPPED(x)                                                             \
	bsearch(&(struct ended){.pid = (x)}, drop, ndrop, sizeof(*drop), by_pid)
	for (size_t i = 0; i < e->nall; i++) {
		struct ethread *t = e->all[i];
		if (!t->alive && DROPPED(t->pid)) {
			struct edomain *d = nl_engine_domain(e, t->domain);
			if (d)
				d->threads_dropped++;
			hwloc_bitmap_free(t->allowed);
			hwloc_bitmap_free(t->own);
			free(t);
		} else {
			e->all[j++] = t;
		}
	}
	e->nall = j;
	e->ended_seen = e->nall - e->nlive;
	j = 0;
	for (size_t i = 0; i < e->nprocs; i++) {
		if (DROPPED(e->procs[i].pid)) {
			struct edomain *d =
				nl_engine_domain(e, e->procs[i].domain);
			if (d)
				d->procs_dropped++;
			if (e->m->ops->forget)
				e->m->ops->forget(e->m, e->procs[i].pid);
		} else {
			e->procs[j++] = e->procs[i];
		}
	}
#undef DROPPED
	e->nprocs = j;
	e->pidx.stale = 1;
}

void nl_engine_forget_ended_procs(struct nl_engine *e)
{
	const struct nl_process_info *p;
	struct ended *ends = NULL, *drop = NULL;
	size_t n, nended = 0, ndrop = 0, *count = NULL;
	int *ids = NULL, *idx = NULL;

	if (e->m->ops->processes(e->m, &p, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		nended += p[i].end_s >= 0;
	/* No domain is over the cap while all of them together are not. */
	if (nended <= NL_MAX_ENDED_PROCS)
		return;
	ends = malloc(sizeof(*ends) * nended);
	drop = malloc(sizeof(*drop) * nended);
	idx = malloc(sizeof(*idx) * nended);
	if (!ends || !drop || !idx)
		goto out;
	for (size_t i = 0, k = 0; i < n; i++)
		if (p[i].end_s >= 0)
			ends[k++] = (struct ended){p[i].pid, p[i].end_s};
	qsort(ends, nended, sizeof(*ends), by_end);
	ids = malloc(sizeof(int) * (e->ndomains + 1));
	count = calloc(e->ndomains + 1, sizeof(size_t));
	if (!ids || !count)
		goto out;
	for (size_t d = 0; d < e->ndomains; d++)
		ids[d] = e->domains[d].id;
	qsort(ids, e->ndomains, sizeof(int), nl_engine_cmp_int);
	for (size_t i = 0; i < nended; i++) {
		struct eprocess *q = nl_engine_proc(e, ends[i].pid);
		int *k = q && q->adopted
				 ? bsearch(&q->domain, ids, e->ndomains,
					   sizeof(int), nl_engine_cmp_int)
				 : NULL;
		idx[i] = k ? (int)(k - ids) : -1;
		if (k)
			count[k - ids]++;
	}
	/* Per domain over the cap, its oldest ended children go, down to
	 * three quarters of it (a pass every period would cost as much). */
	for (size_t d = 0; d < e->ndomains; d++)
		count[d] = count[d] > NL_MAX_ENDED_PROCS
				   ? count[d] - NL_MAX_ENDED_PROCS * 3 / 4
				   : 0;
	for (size_t i = 0; i < nended; i++)
		if (idx[i] >= 0 && count[idx[i]]) {
			drop[ndrop++] = ends[i];
			count[idx[i]]--;
		}
	if (ndrop) {
		qsort(drop, ndrop, sizeof(*drop), by_pid);
		forget_pids(e, drop, ndrop);
	}
out:
	free(ends);
	free(drop);
	free(idx);
	free(ids);
	free(count);
}
