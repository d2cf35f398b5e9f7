/*
 * numalot: when the engine steps which domains (docs/architecture.md,
 * docs/protocol.md "Cost"): the domains due now, in batches of about
 * DUE_BATCH_THREADS threads, a big one read in slices, each step over its
 * own threads.
 */
#include "engine_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void nl_engine_set_due_slack(struct nl_engine *e, double seconds)
{
	e->due_slack_s = seconds > NL_DUE_SLACK_S ? seconds : NL_DUE_SLACK_S;
}

double nl_engine_next_due(const struct nl_engine *e)
{
	double t = INFINITY;
	for (size_t i = 0; i < e->ndomains; i++)
		if (e->domains[i].next_due_s < t)
			t = e->domains[i].next_due_s;
	return t;
}

/*
 * Due domains are stepped a batch at a time, the longest overdue first, up
 * to about this many threads: the rest stay due for the next call, so that
 * the agent answers its socket in between whatever the load
 * (docs/protocol.md).
 */
#define DUE_BATCH_THREADS 1024

struct due_domain {
	int id;
	double due_s;
	size_t threads;
};

static int cmp_due(const void *a, const void *b)
{
	const struct due_domain *x = a, *y = b;
	return (x->due_s > y->due_s) - (x->due_s < y->due_s);
}

/*
 * Choose the batch: the due domains, the longest overdue first, up to
 * about DUE_BATCH_THREADS threads (at least one domain). Their ids go to
 * due (sorted, room for ndomains), their live threads to *threads (counted
 * when the machine can read some processes only). Returns how many.
 */
static size_t pick_batch(struct nl_engine *e, double now, int *due,
			 struct due_domain *dd, size_t *threads)
{
	size_t nd = 0, ndue = 0;

	*threads = 0;
	for (size_t i = 0; i < e->ndomains; i++)
		if (e->domains[i].next_due_s <= now + e->due_slack_s)
			dd[nd++] = (struct due_domain){
				e->domains[i].id, e->domains[i].next_due_s,
				e->domains[i].threads_seen};
	/* The longest overdue first; each with the threads it had at its
	 * last step (a pass over the node's threads a call would cost more
	 * than the batch, with hundreds of steps). */
	if (e->m->ops->threads_of && (nd > 1 || e->m->ops->read_ahead))
		qsort(dd, nd, sizeof(*dd), cmp_due);
	for (size_t i = 0; i < nd; i++) {
		if (ndue && *threads + dd[i].threads > DUE_BATCH_THREADS)
			break;
		*threads += dd[i].threads;
		due[ndue++] = dd[i].id;
	}
	qsort(due, ndue, sizeof(int), nl_engine_cmp_int);
	return ndue;
}

/*
 * A batch of more than DUE_BATCH_THREADS threads (one big domain) is read
 * in slices of that many, one a call, where the machine can read ahead:
 * 1 while some are left (the batch stays due; the agent serves its socket
 * and calls again), else 0; its policy runs once all are read
 * (docs/protocol.md, "Cost").
 */
static int read_slice(struct nl_engine *e, const int *due, size_t ndue,
		      size_t threads)
{
	int *pids, rc;

	if (!e->m->ops->read_ahead || !e->m->ops->threads_of ||
	    threads <= DUE_BATCH_THREADS)
		return 0;
	pids = malloc(sizeof(int) * (e->nprocs + 1));
	if (!pids)
		return 0; /* read in one go */
	rc = e->m->ops->read_ahead(e->m, pids,
				   nl_engine_due_pids(e, due, ndue, pids),
				   DUE_BATCH_THREADS);
	free(pids);
	return rc > 0;
}

/* A big domain's first slice of a period: its period's time. */
static void slicing_begins(struct nl_engine *e, int domain, double now)
{
	if (e->slicing.on && e->slicing.domain == domain)
		return;
	e->slicing.on = 1;
	e->slicing.domain = domain;
	e->slicing.since_s = now;
}

/*
 * The time of the period about to be stepped: that of its first slice
 * when its reading began in an earlier call (so that slices do not
 * stretch the period), else now. A big batch is one domain.
 */
static double slicing_ends(struct nl_engine *e, const int *due, size_t ndue,
			   double now)
{
	const struct edomain *d =
		ndue == 1 ? nl_engine_domain(e, due[0]) : NULL;
	double t = now;

	if (e->slicing.on && d && e->slicing.domain == d->id &&
	    e->slicing.since_s >= d->next_due_s - e->due_slack_s &&
	    e->slicing.since_s <= now)
		t = e->slicing.since_s;
	e->slicing.on = 0;
	return t;
}

/*
 * The threads th (in tid order) of the due domains (due, sorted), grouped
 * by domain: those of due[k] are (*by)[(*first)[k] .. (*first)[k + 1]), in
 * tid order. One pass, so that each domain's step costs by its own threads.
 */
static int by_domain(const struct nl_engine *e, const int *due, size_t ndue,
		     struct ethread *const *th, size_t n, struct ethread ***by,
		     size_t **first)
{
	size_t *at = calloc(ndue + 1, sizeof(*at));
	struct ethread **b = malloc(sizeof(*b) * (n + 1));
	(void)e;

	if (!at || !b) {
		free(at);
		free(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const int *k = bsearch(&th[i]->domain, due, ndue, sizeof(int),
				       nl_engine_cmp_int);
		if (k)
			at[k - due + 1]++;
	}
	for (size_t k = 0; k < ndue; k++)
		at[k + 1] += at[k];
	size_t *fill = malloc(sizeof(*fill) * (ndue + 1));
	if (!fill) {
		free(at);
		free(b);
		return -ENOMEM;
	}
	memcpy(fill, at, sizeof(*fill) * (ndue + 1));
	for (size_t i = 0; i < n; i++) {
		const int *k = bsearch(&th[i]->domain, due, ndue, sizeof(int),
				       nl_engine_cmp_int);
		if (k)
			b[fill[k - due]++] = th[i];
	}
	free(fill);
	*by = b;
	*first = at;
	return 0;
}

double nl_engine_step_due(struct nl_engine *e)
{
	double now = e->m->ops->now(e->m);
	int *due = malloc(sizeof(int) * (e->ndomains + 1));
	struct due_domain *dd = calloc(e->ndomains + 1, sizeof(*dd));
	struct ethread **fresh = NULL;
	size_t ndue = 0, nfresh = 0, threads = 0;
	int rc;

	if (!due || !dd) {
		free(due);
		free(dd);
		return -ENOMEM;
	}
	ndue = pick_batch(e, now, due, dd, &threads);
	free(dd);
	if (read_slice(e, due, ndue, threads)) {
		slicing_begins(e, due[0], now);
		free(due);
		return now; /* the next slice, once the socket is served */
	}
	now = slicing_ends(e, due, ndue, now);
	if (e->m->ops->threads_of && ndue < e->ndomains) {
		/* Only what is due is read (docs/architecture.md). */
		rc = nl_engine_refresh_due(e, due, ndue, &fresh, &nfresh);
		if (rc == 0)
			nl_engine_sample_threads(e, fresh, nfresh);
	} else {
		rc = nl_engine_refresh_threads(e);
		if (rc == 0)
			nl_engine_sample_threads(e, e->live, e->nlive);
	}
	struct ethread **by = NULL;
	size_t *first = NULL;
	if (rc == 0)
		rc = by_domain(e, due, ndue, fresh ? fresh : e->live,
			       fresh ? nfresh : e->nlive, &by, &first);
	for (size_t i = 0; rc == 0 && i < e->ndomains; i++) {
		struct edomain *d = &e->domains[i];
		int *k = bsearch(&d->id, due, ndue, sizeof(int),
				 nl_engine_cmp_int);
		if (!k)
			continue;
		size_t at = first[k - due];
		/* How late this period starts (numalot's own timeliness). */
		double late = now > d->next_due_s ? now - d->next_due_s : 0;
		e->late_max_s = late > e->late_max_s ? late : e->late_max_s;
		e->late_sum_s += late;
		e->late_n++;
		rc = nl_engine_step_domain(e, d, now, by + at,
					   first[k - due + 1] - at);
		if (rc == 0)
			nl_engine_read_pages(e, d);
	}
	free(by);
	free(first);
	free(fresh);
	free(due);
	return rc < 0 ? rc : nl_engine_next_due(e);
}

int nl_engine_run(struct nl_engine *e)
{
	int more = 1;

	if (e->ndomains == 0)
		return -EINVAL;
	while (more > 0) {
		double due = nl_engine_step_due(e);
		if (due < 0)
			return (int)due;
		double wait = due - e->m->ops->now(e->m);
		more = e->m->ops->wait(e->m, wait > 0 ? wait : 0);
	}
	if (more == 0) {
		/* A last look, so the journal sees how everything ended. */
		int rc = nl_engine_refresh_threads(e);
		if (rc == 0)
			nl_engine_sample_threads(e, e->live, e->nlive);
	}
	nl_engine_release(e, -1);
	return more < 0 ? more : 0;
}
