/*
 * numalot: the software counter backend (docs/real-node.md, "Counters"):
 * a perf_event group of software events per thread; where perf_event_open
 * is refused, utime+stime from /proc. perf and papi count on top of it.
 */
#include "counters_priv.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procfs.h"

/* Software events, leader first. */
static const uint64_t sw_events[NL_NSW] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
	PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS};

int nl_perf_open(uint32_t type, uint64_t config, pid_t tid, int group,
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

int nl_sw_open(struct nl_tcounters *c)
{
	for (int i = 0; i < NL_NSW; i++) {
		c->sw_fd[i] =
			nl_perf_open(PERF_TYPE_SOFTWARE, sw_events[i], c->tid,
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

int nl_sw_read_raw(struct nl_tcounters *c, uint64_t *v)
{
	uint64_t buf[1 + NL_NSW];
	ssize_t n = read(c->sw_fd[0], buf, sizeof(buf));
	if (n < (ssize_t)(2 * sizeof(uint64_t)))
		return n < 0 ? -errno : -EIO;
	int k = 1;
	for (int i = 0; i < NL_NSW; i++)
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

int nl_sw_read(struct nl_tcounters *c, struct nl_sample *s)
{
	int rc;

	if (c->proc_fallback) {
		unsigned long long t = 0;
		rc = proc_ticks(c, &t);
		if (rc < 0)
			return rc;
		s->task_clock_s = (double)(t - c->ticks_prev) /
				  (double)sysconf(_SC_CLK_TCK);
		c->ticks_prev = t;
		s->measured = NL_M_TASK_CLOCK;
		return 0;
	}
	uint64_t v[NL_NSW];
	if (c->peeked) /* read this period already: no second read */
		memcpy(v, c->sw_peek, sizeof(v));
	else if ((rc = nl_sw_read_raw(c, v)) < 0)
		return rc;
	c->peeked = 0;
	s->task_clock_s = (double)(v[0] - c->sw_prev[0]) * 1e-9;
	s->ctx_switches = (double)(v[1] - c->sw_prev[1]);
	s->cpu_migrations = (double)(v[2] - c->sw_prev[2]);
	s->page_faults = (double)(v[3] - c->sw_prev[3]);
	memcpy(c->sw_prev, v, sizeof(v));
	s->measured = NL_M_TASK_CLOCK | NL_M_SW_EVENTS;
	return 0;
}

void nl_sw_close(struct nl_tcounters *c)
{
	/* > 0: after the /proc fallback the members were never opened. */
	for (int i = NL_NSW - 1; i >= 0; i--)
		if (c->sw_fd[i] > 0)
			close(c->sw_fd[i]);
}

static void probe_software(struct nl_probe *p, pid_t tid)
{
	struct nl_probe_backend *b = &p->backend[NL_BACKEND_SOFTWARE];
	nl_probe_try_perf(p, b, "task-clock", PERF_TYPE_SOFTWARE,
			  PERF_COUNT_SW_TASK_CLOCK, tid);
	nl_probe_try_perf(p, b, "context-switches", PERF_TYPE_SOFTWARE,
			  PERF_COUNT_SW_CONTEXT_SWITCHES, tid);
	nl_probe_try_perf(p, b, "cpu-migrations", PERF_TYPE_SOFTWARE,
			  PERF_COUNT_SW_CPU_MIGRATIONS, tid);
	nl_probe_try_perf(p, b, "page-faults", PERF_TYPE_SOFTWARE,
			  PERF_COUNT_SW_PAGE_FAULTS, tid);
	/* Always usable: without perf_event, utime+stime from /proc. */
	b->available = 1;
	if (b->events[0].available)
		snprintf(b->reason, sizeof(b->reason),
			 "CPU time and software events per thread; no ops, OI "
			 "or "
			 "latency: perf is the CPU share, plus data locality");
	else
		snprintf(b->reason, sizeof(b->reason),
			 "task-clock unavailable (%s): CPU time from /proc "
			 "utime+stime, at clock-tick resolution",
			 b->events[0].reason);
}

const struct nl_counter_backend nl_counters_software = {
	.id = NL_BACKEND_SOFTWARE,
	.measured = NL_M_TASK_CLOCK | NL_M_CPU | NL_M_SW_EVENTS,
	.samples_latency = 0,
	.fds_per_thread = NL_NSW,
	.probe = probe_software,
	.open = nl_sw_open,
	.read = nl_sw_read,
	.close = nl_sw_close,
};
