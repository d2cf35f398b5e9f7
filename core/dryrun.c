/* numalot: the dry-run machine: forwards everything but placement, which it
 * records instead of applying. */
#include "machine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dryrun {
	struct nl_machine m;
	struct nl_machine *inner;
	char **log;
	size_t n, cap;
};

static struct dryrun *dr(struct nl_machine *m)
{
	return m->priv;
}

/* cpu < 0: a release. */
static int record(struct dryrun *d, int tid, int cpu)
{
	char buf[64];
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 32;
		char **n = realloc(d->log, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->log = n;
		d->cap = cap;
	}
	if (cpu >= 0)
		snprintf(buf, sizeof(buf), "place %d %d", tid, cpu);
	else
		snprintf(buf, sizeof(buf), "release %d", tid);
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
	if (cpu < 0 || cpu >= m->topo->ncpus)
		return -EINVAL;
	return record(dr(m), tid, cpu);
}

static int dr_release(struct nl_machine *m, int tid)
{
	return record(dr(m), tid, -1);
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
	return in->ops->node_pages ? in->ops->node_pages(in, pid, pages)
				   : -ENOTSUP;
}

static void dr_destroy(struct nl_machine *m)
{
	struct dryrun *d = dr(m);
	for (size_t i = 0; i < d->n; i++)
		free(d->log[i]);
	free(d->log);
	free(d);
}

static const struct nl_machine_ops dryrun_ops = {
	.threads = dr_threads,
	.sample = dr_sample,
	.place = dr_place,
	.release = dr_release,
	.wait = dr_wait,
	.now = dr_now,
	.processes = dr_processes,
	.node_pages = dr_node_pages,
	.destroy = dr_destroy,
};

int nl_dryrun_create(struct nl_machine *inner, struct nl_machine **out)
{
	struct dryrun *d = calloc(1, sizeof(*d));
	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->inner = inner;
	d->m.ops = &dryrun_ops;
	d->m.topo = inner->topo;
	d->m.backend = inner->backend;
	d->m.measured = inner->measured;
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
