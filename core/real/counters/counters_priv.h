/* numalot: the counter backends' interface (docs/architecture.md, "Adding
 * a counter backend"): counters.c dispatches, counters_*.c implement. */
#ifndef NUMALOT_COUNTERS_PRIV_H
#define NUMALOT_COUNTERS_PRIV_H

#include <stdint.h>
#include <sys/types.h>

#include "counters.h"

/* The software group: task-clock (the leader), context switches, CPU
 * migrations, page faults (counters_software.c). */
#define NL_NSW 4

/* A thread's counters: what a read touches first (a period reads many
 * threads' counters: a few cache lines each), what is set up once last. */
struct nl_tcounters {
	pid_t pid, tid;
	int sw_fd[NL_NSW]; /* -1 where not open; [0] leads the group */
	int proc_fallback; /* no perf_event: utime+stime from /proc */
	int peeked;
	uint64_t sw_prev[NL_NSW];
	uint64_t sw_peek[NL_NSW]; /* read by nl_counters_peek, not yet taken */
	double peek_t;
	double t_prev;
	unsigned long long ticks_prev;
	const struct nl_counter_backend *be;
	void *be_state;		    /* the backend's own (its open sets it) */
	struct nl_lat_sampler *lat; /* NULL: no latency sampling */
	const int *node_os; /* the machine's (nl_counters_set_node_map) */
	int nnodes;	    /* 0 until the machine gives the map */
	int lat_err;	    /* why not, when lat is NULL */
	char lat_why[128];
};

/* One backend: a row of nl_counter_backend_of's table (counters.c). */
struct nl_counter_backend {
	enum nl_backend id;
	unsigned measured;   /* enum nl_measured bits, latency aside */
	int samples_latency; /* NL_M_LATENCY too where nl_lat_default() */
	/* Descriptors one thread's counters hold at most (the budget). */
	size_t fds_per_thread;
	/* Try its events on thread tid, fill p->backend[id] (never fails:
	 * what does not work gets its reason). Probed in table order. */
	void (*probe)(struct nl_probe *p, pid_t tid);
	/* Open on c->pid/c->tid (c zeroed): 0 or a negative errno
	 * (-ESRCH gone, -ENOENT unusable here). close undoes a failed open. */
	int (*open)(struct nl_tcounters *c);
	/* Deltas since the last read into s (zeroed, s->wall_s set). */
	int (*read)(struct nl_tcounters *c, struct nl_sample *s);
	void (*close)(struct nl_tcounters *c);
};

extern const struct nl_counter_backend nl_counters_software, nl_counters_perf,
	nl_counters_papi;

/* The software group, which perf and papi count on top of
 * (counters_software.c). */
int nl_sw_open(struct nl_tcounters *c);
int nl_sw_read(struct nl_tcounters *c, struct nl_sample *s);
/* Read the group's raw values (no delta taken). */
int nl_sw_read_raw(struct nl_tcounters *c, uint64_t *v);
void nl_sw_close(struct nl_tcounters *c);

/* perf_event_open on tid for this process (a descriptor or -errno). */
int nl_perf_open(uint32_t type, uint64_t config, pid_t tid, int group,
		 uint64_t read_format);
/* Open and close one event on tid, its outcome as probe event (probe.c). */
void nl_probe_try_perf(struct nl_probe *p, struct nl_probe_backend *b,
		       const char *name, uint32_t type, uint64_t config,
		       pid_t tid);

#endif
