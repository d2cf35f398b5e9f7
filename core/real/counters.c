/*
 * numalot: per-thread counters on a real node (docs/real-node.md,
 * "Counters").
 *
 * software: a perf_event group of software events per thread (task-clock,
 *           context switches, CPU migrations, page faults); where
 *           perf_event_open is refused, utime+stime from /proc.
 * perf:     software, plus hardware instructions and last-level misses.
 * papi:     software, plus PAPI presets attached to the thread.
 * perf and papi also sample memory latency where the PMU can (latency.c).
 */
#include "counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "latency.h"
#include "procfs.h"
#include "util.h"

static const char *const backend_names[NL_BACKEND_COUNT] = {"auto", "papi",
							    "perf", "software"};

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
	unsigned sw = NL_M_TASK_CLOCK | NL_M_CPU | NL_M_SW_EVENTS;
	unsigned lat = 0;
	if (b == NL_BACKEND_PAPI || b == NL_BACKEND_PERF)
		lat = nl_lat_default() ? NL_M_LATENCY : 0;
	switch (b) {
	case NL_BACKEND_PAPI:
		return sw | NL_M_INSTRUCTIONS | NL_M_FP_OPS | NL_M_LLC_MISSES |
		       lat;
	case NL_BACKEND_PERF:
		return sw | NL_M_INSTRUCTIONS | NL_M_LLC_MISSES | lat;
	default:
		return sw;
	}
}

static int perf_open(uint32_t type, uint64_t config, pid_t tid, int group,
		     uint64_t read_format)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.read_format = read_format;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, group,
			      PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Software events, leader first. */
static const uint64_t sw_events[] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
	PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS};
#define NSW 4

enum hw_kind { HW_NONE, HW_PERF, HW_PAPI };

/* A thread's counters: what a read touches first (a period reads many
 * threads' counters: a few cache lines each), what is set up once last. */
struct nl_tcounters {
	pid_t pid, tid;
	int sw_fd[NSW];	   /* -1 where not open; [0] leads the group */
	int proc_fallback; /* no perf_event: utime+stime from /proc */
	int peeked;
	uint64_t sw_prev[NSW];
	uint64_t sw_peek[NSW]; /* read by nl_counters_peek, not yet taken */
	double peek_t;
	double t_prev;
	unsigned long long ticks_prev;
	enum hw_kind hw;
	int hw_fd[2]; /* perf: instructions, LLC misses */
	uint64_t hw_prev[2];
	struct nl_lat_sampler *lat; /* NULL: no latency sampling */
	const int *node_os; /* the machine's (nl_counters_set_node_map) */
	int nnodes;	    /* 0 until the machine gives the map */
	int papi_set;
	int papi_n;
	int papi_code[3]; /* PAPI_TOT_INS, PAPI_FP_OPS, LLC misses */
	long long papi_prev[3];
	int lat_err; /* why not, when lat is NULL */
	char lat_why[128];
};

static int sw_open(struct nl_tcounters *c)
{
	for (int i = 0; i < NSW; i++) {
		c->sw_fd[i] =
			perf_open(PERF_TYPE_SOFTWARE, sw_events[i], c->tid,
				  i ? c->sw_fd[0] : -1, PERF_FORMAT_GROUP);
		if (c->sw_fd[i] < 0) {
			int rc = c->sw_fd[i];
			if (i == 0) {
				if (rc == -ESRCH)
					return rc;
				c->proc_fallback = 1;
				return 0;
			}
			c->sw_fd[i] = -1; /* optional members */
		}
	}
	return 0;
}

static int sw_read(struct nl_tcounters *c, uint64_t *v)
{
	uint64_t buf[1 + NSW];
	ssize_t n = read(c->sw_fd[0], buf, sizeof(buf));
	if (n < (ssize_t)(2 * sizeof(uint64_t)))
		return n < 0 ? -errno : -EIO;
	int k = 1;
	for (int i = 0; i < NSW; i++)
		v[i] = c->sw_fd[i] >= 0 && k <= (int)buf[0] ? buf[k++] : 0;
	return 0;
}

static int proc_ticks(struct nl_tcounters *c, unsigned long long *t)
{
	struct nl_task_stat st;
	int rc = nl_proc_read_stat(c->pid, c->tid, &st);
	if (rc == 0)
		*t = st.utime_ticks + st.stime_ticks;
	return rc;
}

static int hw_perf_open(struct nl_tcounters *c)
{
	c->hw_fd[0] = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
				c->tid, -1, 0);
	if (c->hw_fd[0] < 0)
		return c->hw_fd[0];
	c->hw_fd[1] = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
				c->tid, -1, 0);
	if (c->hw_fd[1] < 0) {
		int rc = c->hw_fd[1];
		close(c->hw_fd[0]);
		c->hw_fd[0] = -1;
		return rc;
	}
	c->hw = HW_PERF;
	return 0;
}

static int papi_ready(void)
{
	static int state; /* 0 untried, 1 ready, -1 failed */
	if (state == 0) {
		int v = PAPI_library_init(PAPI_VER_CURRENT);
		state = v == PAPI_VER_CURRENT ? 1 : -1;
		/* PAPI_set_multiplex needs this first, once. */
		if (state == 1 && PAPI_multiplex_init() != PAPI_OK)
			state = -1;
	}
	return state == 1;
}

/* The LLC-miss preset this CPU has, or 0. */
static int papi_llc_code(void)
{
	const int codes[] = {PAPI_L3_TCM, PAPI_L3_DCM, PAPI_L2_TCM};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (PAPI_query_event(codes[i]) == PAPI_OK)
			return codes[i];
	return 0;
}

static int hw_papi_open(struct nl_tcounters *c)
{
	int set = PAPI_NULL,
	    want[3] = {PAPI_TOT_INS, PAPI_FP_OPS, papi_llc_code()};
	if (!papi_ready())
		return -ENOENT;
	if (PAPI_create_eventset(&set) != PAPI_OK)
		return -ENOENT;
	if (PAPI_assign_eventset_component(set, 0) != PAPI_OK ||
	    PAPI_attach(set, (unsigned long)c->tid) != PAPI_OK)
		goto fail;
	c->papi_n = 0;
	for (int i = 0; i < 3; i++) {
		if (!want[i] || PAPI_add_event(set, want[i]) != PAPI_OK) {
			/* Too many for the hardware at once: multiplex. */
			if (want[i] && PAPI_set_multiplex(set) == PAPI_OK &&
			    PAPI_add_event(set, want[i]) == PAPI_OK)
				c->papi_code[c->papi_n++] = want[i];
			continue;
		}
		c->papi_code[c->papi_n++] = want[i];
	}
	if (c->papi_n == 0 || c->papi_code[0] != PAPI_TOT_INS ||
	    PAPI_start(set) != PAPI_OK)
		goto fail;
	c->papi_set = set;
	c->hw = HW_PAPI;
	return 0;
fail:
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	return -ENOENT;
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
	c->hw_fd[0] = c->hw_fd[1] = -1;
	c->papi_set = PAPI_NULL;
	rc = sw_open(c);
	if (rc == 0 && b == NL_BACKEND_PERF)
		rc = hw_perf_open(c);
	else if (rc == 0 && b == NL_BACKEND_PAPI)
		rc = hw_papi_open(c);
	if (rc < 0) {
		nl_counters_close(c);
		return rc;
	}
	/* Optional: without it the thread keeps its counting events. */
	c->lat_err = -ENOENT;
	snprintf(c->lat_why, sizeof(c->lat_why), "%s",
		 b == NL_BACKEND_SOFTWARE ? "the software backend has none"
					  : "no latency sampling on this node");
	if (b == NL_BACKEND_PERF || b == NL_BACKEND_PAPI) {
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
	rc = sw_read(c, c->sw_peek);
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
	if (c->proc_fallback) {
		unsigned long long t = 0;
		rc = proc_ticks(c, &t);
		if (rc < 0)
			return rc;
		s->task_clock_s = (double)(t - c->ticks_prev) /
				  (double)sysconf(_SC_CLK_TCK);
		c->ticks_prev = t;
		s->measured = NL_M_TASK_CLOCK;
	} else {
		uint64_t v[NSW];
		if (c->peeked) /* read this period already: no second read */
			memcpy(v, c->sw_peek, sizeof(v));
		else if ((rc = sw_read(c, v)) < 0)
			return rc;
		c->peeked = 0;
		s->task_clock_s = (double)(v[0] - c->sw_prev[0]) * 1e-9;
		s->ctx_switches = (double)(v[1] - c->sw_prev[1]);
		s->cpu_migrations = (double)(v[2] - c->sw_prev[2]);
		s->page_faults = (double)(v[3] - c->sw_prev[3]);
		memcpy(c->sw_prev, v, sizeof(v));
		s->measured = NL_M_TASK_CLOCK | NL_M_SW_EVENTS;
	}
	if (c->hw == HW_PERF) {
		uint64_t v[2];
		for (int i = 0; i < 2; i++)
			if (read(c->hw_fd[i], &v[i], sizeof(v[i])) !=
			    sizeof(v[i]))
				return -EIO;
		s->instructions = (double)(v[0] - c->hw_prev[0]);
		s->llc_misses = (double)(v[1] - c->hw_prev[1]);
		memcpy(c->hw_prev, v, sizeof(v));
		s->measured |= NL_M_INSTRUCTIONS | NL_M_LLC_MISSES;
	} else if (c->hw == HW_PAPI) {
		long long v[3] = {0};
		if (PAPI_read(c->papi_set, v) != PAPI_OK)
			return -EIO;
		for (int i = 0; i < c->papi_n; i++) {
			double d = (double)(v[i] - c->papi_prev[i]);
			if (c->papi_code[i] == PAPI_TOT_INS) {
				s->instructions = d;
				s->measured |= NL_M_INSTRUCTIONS;
			} else if (c->papi_code[i] == PAPI_FP_OPS) {
				s->fp_ops = d;
				s->measured |= NL_M_FP_OPS;
			} else {
				s->llc_misses = d;
				s->measured |= NL_M_LLC_MISSES;
			}
			c->papi_prev[i] = v[i];
		}
	}
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
	for (int i = NSW - 1; i >= 0; i--)
		if (c->sw_fd[i] > 0)
			close(c->sw_fd[i]);
	for (int i = 0; i < 2; i++)
		if (c->hw_fd[i] >= 0)
			close(c->hw_fd[i]);
	nl_lat_close(c->lat);
	if (c->papi_set != PAPI_NULL) {
		long long v[3];
		PAPI_stop(c->papi_set, v);
		PAPI_cleanup_eventset(c->papi_set);
		PAPI_destroy_eventset(&c->papi_set);
	}
	free(c);
}
