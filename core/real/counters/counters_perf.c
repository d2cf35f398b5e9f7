/*
 * numalot: the perf counter backend (docs/real-node.md, "Counters"): the
 * software group, plus hardware instructions and last-level misses by
 * perf_event_open, and memory latency where the PMU samples it.
 */
#include "counters_priv.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "latency.h"
#include "procfs.h"

/* Instructions, LLC misses. */
struct perf_state {
	int fd[2];
	uint64_t prev[2];
};

static int perf_open(struct nl_tcounters *c)
{
	struct perf_state *h;
	int rc = nl_sw_open(c);

	if (rc < 0)
		return rc;
	if (!(h = malloc(sizeof(*h))))
		return -ENOMEM;
	*h = (struct perf_state){.fd = {-1, -1}};
	c->be_state = h;
	h->fd[0] = nl_perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
				c->tid, -1, 0);
	if (h->fd[0] < 0)
		return h->fd[0];
	h->fd[1] = nl_perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
				c->tid, -1, 0);
	if (h->fd[1] < 0)
		return h->fd[1];
	return 0;
}

static int perf_read(struct nl_tcounters *c, struct nl_sample *s)
{
	struct perf_state *h = c->be_state;
	uint64_t v[2];
	int rc = nl_sw_read(c, s);

	if (rc < 0)
		return rc;
	for (int i = 0; i < 2; i++)
		if (read(h->fd[i], &v[i], sizeof(v[i])) != sizeof(v[i]))
			return -EIO;
	s->instructions = (double)(v[0] - h->prev[0]);
	s->llc_misses = (double)(v[1] - h->prev[1]);
	memcpy(h->prev, v, sizeof(v));
	s->measured |= NL_M_INSTRUCTIONS | NL_M_LLC_MISSES;
	return 0;
}

static void perf_close(struct nl_tcounters *c)
{
	struct perf_state *h = c->be_state;

	nl_sw_close(c);
	if (!h)
		return;
	for (int i = 0; i < 2; i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	free(h);
	c->be_state = NULL;
}

/* Precise load-latency sampling, tried for real: the event opened on a
 * thread and its ring buffer mapped (what every managed thread needs). */
static void probe_latency(struct nl_probe *p, struct nl_probe_backend *b,
			  pid_t tid)
{
	struct nl_probe_event *e = &b->events[b->nevents++];
	struct nl_lat_pmu pmu;
	const char *where = "", *what;
	char why[112], dir[NL_FS_PATH];
	nl_fs_path(dir, sizeof(dir), NL_LAT_SYSFS);
	int rc = nl_lat_pmu_find(dir, &pmu);

	e->name = "memory-latency sampling";
	if (rc == -ENOENT) {
		snprintf(e->reason, sizeof(e->reason),
			 "neither Intel PEBS mem-loads nor AMD IBS is exposed "
			 "by the kernel%s",
			 p->pmu_present ? "" : " (no PMU)");
		return;
	}
	what = strcmp(pmu.name, "ibs_op") == 0 ? "AMD IBS op"
					       : "Intel PEBS mem-loads";
	if (rc == -EOPNOTSUPP) {
		snprintf(e->reason, sizeof(e->reason),
			 "%s exposed, but kernels before 6.1 put no data "
			 "source, address or latency in its samples",
			 what);
		return;
	}
	if (rc < 0) {
		snprintf(e->reason, sizeof(e->reason),
			 "%s exposed, but its encoding in sysfs (%s) is "
			 "unreadable",
			 what, pmu.name);
		return;
	}
	rc = nl_lat_try(&pmu, tid, &where);
	if (rc == 0) {
		e->available = 1;
		if (pmu.kind == NL_LAT_PEBS)
			snprintf(e->reason, sizeof(e->reason),
				 "%s, ldlat %d cycles, 1 in %llu loads: opened "
				 "and mapped on a thread",
				 what, pmu.ldlat,
				 (unsigned long long)pmu.period);
		else
			snprintf(e->reason, sizeof(e->reason),
				 "%s, 1 in %llu %s%s: opened and mapped on a "
				 "thread",
				 what, (unsigned long long)pmu.period,
				 pmu.ibs_ops ? "ops" : "cycles",
				 pmu.ibs_l3_miss ? ", L3 misses only" : "");
		return;
	}
	if (strcmp(where, "mmap") == 0 && (rc == -EPERM || rc == -ENOMEM))
		snprintf(why, sizeof(why),
			 "its ring buffer could not be mapped (locked memory: "
			 "perf_event_mlock_kb, RLIMIT_MEMLOCK)");
	else
		nl_probe_perf_reason(why, sizeof(why), -rc,
				     p->perf_event_paranoid, p->pmu_present);
	if (snprintf(e->reason, sizeof(e->reason), "%s: %s: %s", what, where,
		     why) >= (int)sizeof(e->reason))
		e->reason[sizeof(e->reason) - 1] =
			'\0'; /* cut, still says it */
}

static void probe_perf(struct nl_probe *p, pid_t tid)
{
	struct nl_probe_backend *b = &p->backend[NL_BACKEND_PERF];

	nl_probe_try_perf(p, b, "instructions", PERF_TYPE_HARDWARE,
			  PERF_COUNT_HW_INSTRUCTIONS, tid);
	nl_probe_try_perf(p, b, "cycles", PERF_TYPE_HARDWARE,
			  PERF_COUNT_HW_CPU_CYCLES, tid);
	nl_probe_try_perf(p, b, "cache-misses (last level)", PERF_TYPE_HARDWARE,
			  PERF_COUNT_HW_CACHE_MISSES, tid);
	probe_latency(p, b, tid);
	b->available = b->events[0].available && b->events[2].available;
	if (b->available)
		snprintf(b->reason, sizeof(b->reason),
			 "instructions and last-level misses per thread: ops/s "
			 "and OI; %s",
			 b->events[3].available
				 ? "latency by node from load sampling"
				 : "no latency term");
	else
		snprintf(b->reason, sizeof(b->reason), "%s",
			 !b->events[0].available ? b->events[0].reason
						 : b->events[2].reason);
}

const struct nl_counter_backend nl_counters_perf = {
	.id = NL_BACKEND_PERF,
	.measured = NL_M_TASK_CLOCK | NL_M_CPU | NL_M_SW_EVENTS |
		    NL_M_INSTRUCTIONS | NL_M_LLC_MISSES,
	.samples_latency = 1,
	/* The software group's 4, 2 hardware events, the latency
	 * sampler's 2 (its event and an auxiliary one). */
	.fds_per_thread = 8,
	.probe = probe_perf,
	.open = perf_open,
	.read = perf_read,
	.close = perf_close,
};
