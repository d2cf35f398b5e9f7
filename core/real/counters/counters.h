/* numalot: per-thread counters on the real node: PAPI, perf_event, software. */
#ifndef NUMALOT_COUNTERS_H
#define NUMALOT_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample.h"

enum nl_backend {
	NL_BACKEND_AUTO,
	NL_BACKEND_PAPI,     /* PAPI presets per thread (PAPI_attach) */
	NL_BACKEND_PERF,     /* perf_event_open hardware + software events */
	NL_BACKEND_SOFTWARE, /* task-clock and software events, no PMU */
	NL_BACKEND_COUNT
};

const char *nl_backend_name(enum nl_backend b);
/* 0 and *b, or -EINVAL for a name not in "auto, papi, perf, software". */
int nl_backend_from_name(const char *name, enum nl_backend *b);

#define NL_PROBE_MAX_EVENTS 12

struct nl_probe_event {
	const char *name;
	int available;
	char reason[160];
};

struct nl_probe_backend {
	int available;
	char reason[256]; /* why not, or what it offers */
	struct nl_probe_event events[NL_PROBE_MAX_EVENTS];
	int nevents;
};

/* What this node offers, found by trying (not by trusting what is listed). */
struct nl_probe {
	int perf_event_paranoid; /* -1000 unknown */
	int pmu_present;	 /* /sys/bus/event_source/devices/cpu exists */
	int numa_balancing; /* /proc/sys/kernel/numa_balancing, -1 unknown */
	struct nl_probe_backend backend[NL_BACKEND_COUNT];
	enum nl_backend best; /* what auto picks */
};

/*
 * Probe every backend against thread tid (0: the calling thread). Fills
 * out; never fails: what does not work is marked with the reason.
 */
void nl_counters_probe(pid_t tid, struct nl_probe *out);

/* What auto picks from a probe's findings: the richest backend that works. */
enum nl_backend nl_probe_pick(const struct nl_probe *p);

/*
 * Words for a PAPI preset this CPU lacks, given how many hardware counters
 * PAPI finds (0: none at all); written into buf.
 */
void nl_probe_papi_reason(char *buf, size_t len, const char *event, int hwctrs);

/*
 * Words for why perf_event_open refused (errno err), given the paranoid
 * setting and whether a PMU is present; written into buf.
 */
void nl_probe_perf_reason(char *buf, size_t len, int err, int paranoid,
			  int pmu_present);

/* One thread's open counters. */
struct nl_tcounters;

/*
 * Open backend b (not AUTO) on thread tid. Returns 0, or a negative errno
 * (-ESRCH gone, -EACCES not allowed, -ENOENT backend unusable here).
 */
int nl_counters_open(enum nl_backend b, pid_t pid, pid_t tid,
		     struct nl_tcounters **out);
/*
 * Deltas since the previous read (or since open); sets s->measured. With
 * latency sampling, lat_count/lat_sum_ns by dense node and NL_M_LATENCY
 * when samples past the last-level cache were taken in the interval.
 */
int nl_counters_read(struct nl_tcounters *c, struct nl_sample *s);
struct nl_hot;
/* The same, the sampled addresses' pages also added to hot (hot.h). */
int nl_counters_read_hot(struct nl_tcounters *c, struct nl_sample *s,
			 struct nl_hot *hot);
/*
 * Read the software events now for the next nl_counters_read (which then
 * reads them no more): the share of a CPU the thread used since the last
 * read (0: it did not run) and whether it changed CPU. -ENOTSUP without a
 * migration count (the /proc fallback), or a negative errno.
 */
int nl_counters_peek(struct nl_tcounters *c, double *share, int *migrated);
/* The CPU time (s) that nl_counters_peek found since the last read. */
double nl_counters_peek_cpu_s(const struct nl_tcounters *c);
void nl_counters_close(struct nl_tcounters *c);
/*
 * enum nl_measured bits that backend b fills. NL_M_LATENCY for perf and
 * papi only when latency sampling works here (nl_lat_default(): probed
 * once, on the calling thread).
 */
unsigned nl_counters_measured(enum nl_backend b);
/* The most descriptors one thread's counters of backend b hold (the
 * real node's budget). */
size_t nl_counters_fds(enum nl_backend b);
/* Every backend's probe (nl_counters_probe's backend part, probe.c). */
void nl_counters_probe_backends(struct nl_probe *p, pid_t tid);

/*
 * How latency samples become dense nodes: node_os[i] is the OS number of
 * dense node i (the topology's node_os, nnodes <= NL_MAX_NODES), kept,
 * not copied: it must outlive c. Until it is set, samples are read and
 * dropped.
 */
void nl_counters_set_node_map(struct nl_tcounters *c, const int *node_os,
			      int nnodes);

struct nl_lat_pmu;
/*
 * Start latency sampling with p on open counters (nl_counters_open does it
 * for perf and papi when nl_lat_default() offers a PMU; tests attach a
 * software event). 0 or a negative errno; counting goes on either way.
 */
int nl_counters_attach_latency(struct nl_tcounters *c,
			       const struct nl_lat_pmu *p);
/* 0 when c samples latency, else a negative errno and *why in words. */
int nl_counters_latency(const struct nl_tcounters *c, const char **why);
/*
 * The thread's task-clock (ns, cumulative) at the last read or peek: it
 * changes whenever the thread runs. -ENOTSUP without software events.
 */
int nl_counters_clock_ns(const struct nl_tcounters *c, uint64_t *ns);
/* What c samples addresses with: "PEBS", "IBS", "raw event", or NULL. */
const char *nl_counters_sampler(const struct nl_tcounters *c);

#endif
