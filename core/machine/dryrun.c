/* numalot: the dry-run machine: forwards every operation but the ones that
 * act (place, release, move_pages), which it records instead of applying. */
#include "machine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dryrun {
	struct nl_machine m;
	struct nl_machine_ops ops; /* optional ones only where inner has them */
	struct nl_machine *inner;
	char **log;
	size_t n, cap;
};

static struct dryrun *dr(struct nl_machine *m)
{
	return m->priv;
}

static int record(struct dryrun *d, const char *buf)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 32;
		char **n = realloc(d->log, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->log = n;
		d->cap = cap;
	}
	d->log[d->n] = strdup(buf);
	if (!d->log[d->n])
		return -ENOMEM;
	d->n++;
	return 0;
}

static int dr_threads(struct nl_machine *m, const struct nl_thread_info **out,
		      size_t *n)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->threads(in, out, n);
}

static int dr_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->sample(in, tid, out);
}

static int dr_place(struct nl_machine *m, int tid, int cpu)
{
	char buf[64];
	if (cpu < 0 || cpu >= m->topo->ncpus)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "place %d %d", tid, cpu);
	return record(dr(m), buf);
}

static int dr_release(struct nl_machine *m, int tid)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "release %d", tid);
	return record(dr(m), buf);
}

/* Recorded as if all of it moved. */
static int dr_move_pages(struct nl_machine *m, int pid, int from, int to,
			 double max_bytes, int flags, double *moved)
{
	char buf[96];
	*moved = 0;
	if (from < 0 || from >= m->topo->nnodes || to < 0 ||
	    to >= m->topo->nnodes || !(max_bytes >= 0))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "pages %d %d %d %.0f%s", pid, from, to,
		 max_bytes, flags & NL_PAGES_SOFT ? " soft" : "");
	int rc = record(dr(m), buf);
	if (rc == 0)
		*moved = max_bytes;
	return rc;
}

static int dr_wait(struct nl_machine *m, double seconds)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->wait(in, seconds);
}

static double dr_now(struct nl_machine *m)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->now(in);
}

static int dr_processes(struct nl_machine *m,
			const struct nl_process_info **out, size_t *n)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->processes(in, out, n);
}

static int dr_node_pages(struct nl_machine *m, int pid, double *pages)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->node_pages(in, pid, pages);
}

static int dr_mem_bound(struct nl_machine *m, int pid)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->mem_bound(in, pid);
}

static int dr_add_process(struct nl_machine *m, int pid,
			  const struct nl_proc_opts *o, char *err,
			  size_t errlen)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->add_process(in, pid, o, err, errlen);
}

static int dr_forget(struct nl_machine *m, int pid)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->forget(in, pid);
}

static int dr_owner(struct nl_machine *m, int pid, struct nl_proc_owner *out)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->owner(in, pid, out);
}

static int dr_threads_of(struct nl_machine *m, const int *pids, size_t npids,
			 const struct nl_thread_info **out, size_t *n)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->threads_of(in, pids, npids, out, n);
}

static int dr_read_ahead(struct nl_machine *m, const int *pids, size_t npids,
			 size_t max)
{
	struct nl_machine *in = dr(m)->inner;
	return in->ops->read_ahead(in, pids, npids, max);
}

static void dr_destroy(struct nl_machine *m)
{
	struct dryrun *d = dr(m);
	for (size_t i = 0; i < d->n; i++)
		free(d->log[i]);
	free(d->log);
	free(d);
}

int nl_dryrun_create(struct nl_machine *inner, struct nl_machine **out)
{
	const struct nl_machine_ops *in = inner->ops;
	struct dryrun *d = calloc(1, sizeof(*d));
	*out = NULL;
	if (!d)
		return -ENOMEM;
	/* An operation the inner machine lacks stays absent: the engine
	 * checks for the optional ones. */
	d->ops = (struct nl_machine_ops){
		.threads = dr_threads,
		.sample = dr_sample,
		.place = dr_place,
		.release = dr_release,
		.wait = dr_wait,
		.now = dr_now,
		.processes = dr_processes,
		.node_pages = in->node_pages ? dr_node_pages : NULL,
		.mem_bound = in->mem_bound ? dr_mem_bound : NULL,
		.move_pages = in->move_pages ? dr_move_pages : NULL,
		.add_process = in->add_process ? dr_add_process : NULL,
		.forget = in->forget ? dr_forget : NULL,
		.owner = in->owner ? dr_owner : NULL,
		.destroy = dr_destroy,
		.threads_of = in->threads_of ? dr_threads_of : NULL,
		.read_ahead = in->read_ahead ? dr_read_ahead : NULL,
	};
	d->inner = inner;
	d->m.ops = &d->ops;
	d->m.topo = inner->topo;
	d->m.backend = inner->backend;
	d->m.measured = inner->measured;
	d->m.modelled = inner->modelled;
	d->m.priv = d;
	*out = &d->m;
	return 0;
}

size_t nl_dryrun_count(const struct nl_machine *m)
{
	return ((const struct dryrun *)m->priv)->n;
}

const char *nl_dryrun_entry(const struct nl_machine *m, size_t i)
{
	const struct dryrun *d = m->priv;
	return i < d->n ? d->log[i] : NULL;
}
