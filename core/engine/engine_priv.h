/* numalot: the engine's private state, shared by engine.c and report.c. */
#ifndef NUMALOT_ENGINE_PRIV_H
#define NUMALOT_ENGINE_PRIV_H

#include "engine.h"
#include "page_placement.h"
#include "perf.h"

/* A thread's sampled CPUs kept (ethread.cpus_seen), and the most a
 * report lists over all its threads (about 20 bytes each). */
#define NL_CPUS_SEEN 16
#define NL_MAX_CPUS_LISTED 40000

/* A thread the engine has taken over, alive or gone. The fields a period
 * touches come first; the per-node arrays, as many as the machine has
 * nodes, last: a thread's record is a few hundred bytes on a small node
 * (its first touch, and each period's, cost by the page and the cache
 * line: docs/real-node.md, "Cost"). */
struct ethread {
	int tid;
	int pid;
	int domain;
	unsigned long long start_time;
	hwloc_bitmap_t allowed; /* as it was when taken over: the limit */
	hwloc_bitmap_t own;	/* its own binding then (NULL: allowed) */
	int cpu;
	int pinned;
	int alive;
	int acc_added; /* a sample went into acc since its last step */
	int acc_nodes; /* ...one with by-node arrays (latency, access) */
	double perf, prev_perf;
	int has_perf, has_prev;
	int preferred_node;
	double pref_share, here_share; /* of its accesses: there, here */
	/* the shares are its process's pages', not its own sampled accesses */
	int process_share;
	int has_oi;
	/* its class by OI, with hysteresis (engine.c, oi_class): +1 above
	 * the threshold, -1 below, 0 not measured yet */
	int compute_cls, bw_cls;
	int compute_periods; /* periods in a row in the compute class */
	double oi, tput;
	int tput_ops;	     /* tput is ops/s (not the CPU share) */
	double hold_until_s; /* moved recently: the policy leaves it alone */
	int left_node;	     /* the node its last move took it from (-1 also
				when its data's node was not known then) */
	double moved_s;	     /* when numalot last moved it (-1 never) */
	int origin_cpu;	     /* while pinned: where the OS had it before */
	int has_share;
	double cpu_share;
	unsigned acc_measured; /* what the last period's samples measured */
	/* journal */
	double first_seen_s, last_seen_s; /* machine time, for the timeline */
	int migrations;
	int pins;
	int periods_measured;
	double sum_ops_per_s, sum_oi, sum_latency_ns, sum_perf;
	int n_ops, n_oi, n_latency;
	struct nl_sample_sum acc; /* since its domain's last step */
	double *time_on_node;	  /* by node (in node_data) */
	struct nl_record record;
	/* Where its samples found it: the CPU (engine's index) from t_s,
	 * at its first sample and each change, at most NL_CPUS_SEEN kept
	 * (engine_threads.c, cpu_seen; docs/report-format.md, cpus). */
	struct {
		double t_s;
		int cpu;
	} cpus_seen[NL_CPUS_SEEN];
	int ncpus_seen;
	unsigned cpus_thinned; /* changes left out to stay in that bound */
	/* Its by-node arrays, as many nodes as the machine has: time on
	 * each, then acc's latency counts and sums and accesses. */
	double node_data[];
};

struct event {
	double t_s;
	enum nl_action_kind kind;
	int tid, other_tid;
	int pid, other_pid; /* their processes (-1 none) */
	int from_cpu, to_cpu;
	double tickets, total_tickets;
	const char *reason;
	double bytes; /* NL_ACT_PAGES: bytes moved (from/to are nodes) */
};

struct edomain {
	int id;
	size_t threads_seen; /* its live threads at its last step */
	char name[64];
	enum nl_policy_kind kind;
	struct nl_policy_params params;
	struct nl_rng rng;
	struct nl_policy_state state;
	double next_due_s;
	double first_s;
	unsigned terms_seen; /* nl_perf_terms that entered some perf */
	struct event *events;
	size_t nevents, capevents;
	unsigned long events_dropped;  /* past NL_MAX_EVENTS */
	unsigned long threads_dropped; /* ended threads forgotten */
	unsigned long procs_dropped;   /* ended children forgotten */
	struct nl_engine_summary sum;
};

struct eprocess {
	int pid;
	int domain;
	int adopted; /* a child the machine followed, not a registered one */
	int threads_now, threads_peak; /* live threads: now, the most seen */
	struct nl_page_state pg;       /* page placement's (page_placement.h) */
	/* Its resident pages by node, at the first and the last reading
	 * that found any (report: locality before and after). */
	int pages_read;
	double pages_first_s, pages_last_s;
	double pages_first[NL_MAX_NODES], pages_last[NL_MAX_NODES];
};

struct live_key {
	int tid, domain;
};

struct nl_engine {
	struct nl_machine *m;
	struct ethread **all; /* every thread ever taken over, in order */
	size_t nall, capall;
	struct ethread **live; /* alive, sorted by tid */
	/* live[i]'s tid and domain, side by side: a pass over the node's
	 * threads that only asks these touches no ethread (engine_threads.c) */
	struct live_key *live_key;
	size_t nlive;
	struct edomain *domains;
	size_t ndomains;
	struct eprocess *procs;
	size_t nprocs;
	/* procs by pid: slot h holds an index + 1 (0 free); made anew when
	 * stale (engine_procs.c) */
	struct {
		size_t *slot, mask;
		int stale;
	} pidx;
	struct nl_plan plan;
	double start_s;
	/* CPU time the engine spent taking new threads in (its own cost,
	 * apart from the periods'; never in a report of the model) */
	double takeover_cpu_s;
	size_t ended_seen;  /* ended threads at forget_ended's last look */
	double due_slack_s; /* domains due this soon are stepped now */
	/* How late periods started past their due time (numalot's own
	 * timeliness: docs/real-node.md, "Priority"). */
	double late_max_s, late_sum_s;
	size_t late_n;
	/* The big domain being read in slices, and since when: its period
	 * is timed from its first slice, as if read in one go. */
	struct {
		int domain, on;
		double since_s;
	} slicing;
	/* step_domain's arrays, kept from period to period (grown, never
	 * allocated again for the same size). */
	struct {
		struct nl_view_thread *vt;
		double *perf, *rel;
		int *group;
		unsigned char *has;
		size_t cap;
		struct nl_pages_proc *pages; /* the domain's processes */
		size_t cap_pages;
	} scratch;
};

/* A long-lived job must not make the journal (and its report) grow
 * without bound: past these, events are counted, not kept, and the oldest
 * ended threads are forgotten (their count stays in the summary). */
#define NL_MAX_EVENTS 20000
#define NL_MAX_ENDED_THREADS 20000
/* Ended children a domain keeps (its registered processes stay). */
#define NL_MAX_ENDED_PROCS 1000

/* The engine's record of pid, or NULL (engine_procs.c). */
struct eprocess *nl_engine_proc(struct nl_engine *e, int pid);
/* Forget each domain's oldest ended children past NL_MAX_ENDED_PROCS. */
void nl_engine_forget_ended_procs(struct nl_engine *e);

struct edomain *nl_engine_domain(struct nl_engine *e, int id);
/* Journal an event of domain d (engine.c). */
struct nl_action;
int nl_engine_journal(struct edomain *d, const struct nl_action *a, double t_s,
		      const char *reason, int pid, int other_pid);

/* engine_pages.c: page placement's moves for d's processes, asked for on
 * the view vt (n threads, refreshed there after the thread moves) and
 * applied through the machine, one process after the other. */
int nl_engine_pages_step(struct nl_engine *e, struct edomain *d, double now,
			 struct nl_view_thread *vt, size_t n);

/* Domains due within this much of now step together (at the least). */
#define NL_DUE_SLACK_S 1e-6

/* engine.c, for engine_due.c: one period's parts. */
int nl_engine_cmp_int(const void *a, const void *b);
/* The machine's threads of every domain, merged into the engine's. */
int nl_engine_refresh_threads(struct nl_engine *e);
/* The processes of the due domains (due sorted): their pids in pids. */
size_t nl_engine_due_pids(const struct nl_engine *e, const int *due,
			  size_t ndue, int *pids);
/* The due domains' threads only; *fresh (malloc'd) gets them, by tid. */
int nl_engine_refresh_due(struct nl_engine *e, const int *due, size_t ndue,
			  struct ethread ***fresh, size_t *nfresh);
/* Each thread's counters since the last wake. */
void nl_engine_sample_threads(struct nl_engine *e, struct ethread **th,
			      size_t n);
/* Domain d's step; mine are its live threads, in tid order. */
int nl_engine_step_domain(struct nl_engine *e, struct edomain *d, double now,
			  struct ethread *const *mine, size_t nmine);
/* Make live (n threads, sorted by tid; malloc'd, taken) the live list,
 * its keys from keys when given (else from the threads). 0 or -ENOMEM
 * (live freed). */
int nl_engine_set_live(struct nl_engine *e, struct ethread **live, size_t n,
		       struct live_key *keys);
/* Keep a reading of d's processes' pages for the report. */
void nl_engine_read_pages(struct nl_engine *e, const struct edomain *d);

#endif
