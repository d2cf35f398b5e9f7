/*
 * numalot: per-thread counters on a real node (docs/real-node.md,
 * "Counters"): the backends' table and what every backend shares (the
 * first delta, peeking at the software group, latency sampling). Each
 * backend is a file: counters_software.c, counters_perf.c,
 * counters_papi.c (docs/architecture.md, "Adding a counter backend").
 */
#include "counters_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "latency.h"
#include "util.h"

static const char *const backend_names[NL_BACKEND_COUNT] = {"auto", "papi",
							    "perf", "software"};

/* By enum nl_backend; auto counts as software until it is resolved. */
static const struct nl_counter_backend *const backends[NL_BACKEND_COUNT] = {
	[NL_BACKEND_AUTO] = &nl_counters_software,
	[NL_BACKEND_PAPI] = &nl_counters_papi,
	[NL_BACKEND_PERF] = &nl_counters_perf,
	[NL_BACKEND_SOFTWARE] = &nl_counters_software,
};

/* Probed in this order: papi takes perf's latency finding. */
static const struct nl_counter_backend *const probe_order[] = {
	&nl_counters_software, &nl_counters_perf, &nl_counters_papi};

static const struct nl_counter_backend *backend_of(enum nl_backend b)
{
	return (unsigned)b < NL_BACKEND_COUNT ? backends[b]
					      : &nl_counters_software;
}

const char *nl_backend_name(enum nl_backend b)
{
	return (unsigned)b < NL_BACKEND_COUNT ? backend_names[b] : "?";
}

int nl_backend_from_name(const char *name, enum nl_backend *b)
{
	for (int i = 0; i < NL_BACKEND_COUNT; i++)
		if (strcmp(name, backend_names[i]) == 0) {
			*b = (enum nl_backend)i;
			return 0;
		}
	return -EINVAL;
}

unsigned nl_counters_measured(enum nl_backend b)
{
	const struct nl_counter_backend *be = backend_of(b);
	return be->measured |
	       (be->samples_latency && nl_lat_default() ? NL_M_LATENCY : 0);
}

size_t nl_counters_fds(enum nl_backend b)
{
	return backend_of(b)->fds_per_thread;
}

void nl_counters_probe_backends(struct nl_probe *p, pid_t tid)
{
	for (size_t i = 0; i < sizeof(probe_order) / sizeof(probe_order[0]);
	     i++)
		probe_order[i]->probe(p, tid);
}

int nl_counters_open(enum nl_backend b, pid_t pid, pid_t tid,
		     struct nl_tcounters **out)
{
	struct nl_tcounters *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->pid = pid;
	c->tid = tid;
	c->be = backend_of(b);
	rc = c->be->open(c);
	if (rc < 0) {
		nl_counters_close(c);
		return rc;
	}
	/* Optional: without it the thread keeps its counting events. */
	c->lat_err = -ENOENT;
	snprintf(c->lat_why, sizeof(c->lat_why), "%s",
		 b == NL_BACKEND_SOFTWARE ? "the software backend has none"
					  : "no latency sampling on this node");
	if (c->be->samples_latency) {
		const struct nl_lat_pmu *p = nl_lat_default();
		if (p)
			nl_counters_attach_latency(c, p);
	}
	/* Baselines for the first delta. */
	struct nl_sample s;
	c->t_prev = nl_mono_s();
	nl_counters_read(c, &s);
	c->t_prev = nl_mono_s();
	*out = c;
	return 0;
}

int nl_counters_peek(struct nl_tcounters *c, double *share, int *migrated)
{
	int rc;
	double wall;

	if (c->proc_fallback || c->sw_fd[2] < 0)
		return -ENOTSUP; /* no migration count to go by */
	c->peeked = 0;
	rc = nl_sw_read_raw(c, c->sw_peek);
	if (rc < 0)
		return rc;
	c->peek_t = nl_mono_s();
	c->peeked = 1;
	wall = c->peek_t - c->t_prev;
	/* task-clock is in ns */
	*share = c->sw_peek[0] == c->sw_prev[0] ? 0
		 : wall > 0
			 ? (double)(c->sw_peek[0] - c->sw_prev[0]) * 1e-9 / wall
			 : 1;
	*migrated = c->sw_peek[2] != c->sw_prev[2];
	return 0;
}

double nl_counters_peek_cpu_s(const struct nl_tcounters *c)
{
	return c->peeked ? (double)(c->sw_peek[0] - c->sw_prev[0]) * 1e-9 : 0;
}

int nl_counters_read(struct nl_tcounters *c, struct nl_sample *s)
{
	return nl_counters_read_hot(c, s, NULL);
}

int nl_counters_read_hot(struct nl_tcounters *c, struct nl_sample *s,
			 struct nl_hot *hot)
{
	double now = c->peeked ? c->peek_t : nl_mono_s();
	int rc;

	memset(s, 0, sizeof(*s));
	s->cpu = -1;
	s->wall_s = now - c->t_prev;
	c->t_prev = now;
	rc = c->be->read(c, s);
	if (rc < 0)
		return rc;
	/* Latency is optional: a failed read leaves NL_M_LATENCY clear. */
	if (c->lat)
		nl_lat_read(c->lat, c->node_os, c->nnodes, s, hot);
	return 0;
}

void nl_counters_set_node_map(struct nl_tcounters *c, const int *node_os,
			      int nnodes)
{
	c->nnodes = nnodes < 0		    ? 0
		    : nnodes < NL_MAX_NODES ? nnodes
					    : NL_MAX_NODES;
	c->node_os = node_os;
}

int nl_counters_attach_latency(struct nl_tcounters *c,
			       const struct nl_lat_pmu *p)
{
	const char *where = "";
	if (c->lat)
		return -EEXIST;
	c->lat_err = nl_lat_open(p, c->pid, c->tid, &c->lat, &where);
	if (c->lat_err < 0)
		snprintf(c->lat_why, sizeof(c->lat_why), "%s: %s", where,
			 strerror(-c->lat_err));
	else
		c->lat_why[0] = '\0';
	return c->lat_err;
}

int nl_counters_latency(const struct nl_tcounters *c, const char **why)
{
	if (why)
		*why = c->lat_why;
	return c->lat ? 0 : c->lat_err;
}

int nl_counters_clock_ns(const struct nl_tcounters *c, uint64_t *ns)
{
	if (!c || c->proc_fallback || c->sw_fd[0] < 0)
		return -ENOTSUP;
	*ns = c->peeked ? c->sw_peek[0] : c->sw_prev[0];
	return 0;
}

const char *nl_counters_sampler(const struct nl_tcounters *c)
{
	return c ? nl_lat_kind_name(c->lat) : NULL;
}

void nl_counters_close(struct nl_tcounters *c)
{
	if (!c)
		return;
	c->be->close(c);
	nl_lat_close(c->lat);
	free(c);
}
