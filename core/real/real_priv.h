/* numalot: the real node's machine, private parts (realmachine.c,
 * refresh.c, procs.c, real_page_moves.c). */
#ifndef NUMALOT_REAL_PRIV_H
#define NUMALOT_REAL_PRIV_H

#include <sys/types.h>
#include <time.h>

#include "hot.h"
#include "real.h"
#include "util.h"

struct rthread {
	pid_t tid, pid;
	unsigned long long start;
	int cpu; /* dense, -1 unknown */
	struct nl_tcounters *ctr;
	int ctr_err;
	hwloc_bitmap_t orig_os;	 /* affinity to give back (OS numbers) */
	hwloc_bitmap_t allowed;	 /* dense CPUs: the limit (its allocation) */
	hwloc_bitmap_t affinity; /* dense CPUs: its own binding */
	hwloc_bitmap_t seen_os;	 /* its binding as numalot last saw or set it */
	int placed;
	unsigned gen; /* the refresh that last saw it */
	int counted;  /* holds counter descriptors (the budget) */
	int stat_fd;  /* its stat file, kept open (counted), or -1 */
	uid_t uid;    /* whose budget it counts against */
	unsigned long long ticks, ticks_prev; /* utime+stime (no counters) */
	int idle_reads;	 /* reads in a row that found it idle (refresh.c) */
	int ticks_stale; /* not read this refresh: no sample */
	int peeked;	 /* its events read at its last read (idle_reads set) */
	unsigned turn;	 /* its process's refreshes (read in turns by it) */
	double ticks_t_prev;
	/* Its stat, read ahead for the next refresh (read_ahead): 1 read,
	 * -1 tried (read again then), 0 none. */
	/* its task-clock when its children file was last read (0: never) */
	unsigned long long children_clock;
	int ahead;
	char ahead_state;
	int ahead_processor;
	unsigned long long ahead_start, ahead_ticks;
	/* The node's last pid (real.last_pid) when its stat was last read
	 * (-1: unknown, or read ahead before it was known). */
	long stat_pid;
};

struct rproc {
	struct nl_process_info info;
	struct nl_proc_opts o;
	unsigned long long start; /* start time: a reused pid is not it */
	int pending;		  /* waiting for its exec (o.wait_exec) */
	dev_t exe_dev;		  /* what it ran when registered */
	ino_t exe_ino;
	hwloc_bitmap_t orig_os;	  /* the process's CPUs when taken over */
	hwloc_bitmap_t alloc_os;  /* its allocation: its job's cpuset */
	hwloc_bitmap_t pinned_os; /* CPUs numalot bound its threads to */
	int limit_own;		  /* its limit is its own binding (no cgroup) */
	double pages_t;
	double pages[NL_MAX_NODES];
	int have_pages;
	double bound_share; /* of its anonymous pages under a "bind:" policy */
	/* Of its anonymous pages under a policy of its own (not "default"),
	 * and bytes numalot moved since that reading (peers.c). */
	double own_share, moved_since;
	int pages_same;	     /* the last two readings found the same */
	double pages_read_t; /* numa_maps last read (pages_t: last looked) */
	int pages_maps;	     /* the mappings that reading had */
	/* Its faults and resident pages at that reading, and now. */
	unsigned long long pages_faults, pages_rss, now_faults, now_rss;
	int refresh;	      /* part of the refresh under way */
	int pidfd;	      /* for waiting on its end (0: not open) */
	double children_t;    /* last scan of every thread's children */
	size_t children_next; /* of a big process's scan in turns */
	int children_ahead;   /* this period's share read ahead */
	int found_ahead;      /* found then: refreshed with the next refresh */
	struct nl_hot *hot;   /* sampled pages; NULL until a thread samples */
	unsigned listed_gen;  /* refresh of its last full task listing */
	int taken;	      /* read once: its taking over is done */
	size_t nthreads;      /* its threads at its last refresh */
	/* The node's last pid when its main thread's children file, and
	 * every thread's, were last read without a miss (-1: never). */
	long children_pid_main, children_pid_all;
	/* quiet.c: its CPU clock (clk_state 1 open, -1 none, 0 untried),
	 * read at its last refresh (clk_ns at clk_t; clk_t 0: none). */
	clockid_t clk;
	int clk_state;
	unsigned long long clk_ns;
	double clk_t;
	/* The CPU time its clock counted (win_cpu_s) over the wall time
	 * win_s (0: none) up to this refresh; the share of a CPU that was at
	 * the refresh before (wake_u; wake_ok 0: none), and how much it
	 * moves from one refresh to the next of late (wake_dev); refreshes
	 * in a row that could not judge a wake (wake_unjudged). */
	double win_cpu_s, win_s, wake_u, wake_dev;
	int wake_ok;
	unsigned wake_unjudged;
};

/* Threads holding counter descriptors, per user (the budget). */
struct uid_count {
	uid_t uid;
	size_t n;
};

struct real {
	struct nl_machine m;
	struct nl_real_options o;
	hwloc_topology_t live;
	struct rproc *procs;
	size_t nprocs;
	struct rthread *th; /* sorted by tid */
	size_t nth, capth;
	struct nl_thread_info *out;
	size_t capout;
	struct nl_process_info *infos;
	double t0;
	unsigned gen;
	size_t counted, max_counted, max_counted_per_uid;
	struct uid_count *uids;
	size_t nuids;
	double takeover_s; /* CPU time in thread_init (nl_real_takeover_s) */
	size_t taken_over;
	double release_s; /* CPU time letting ended threads go */
	size_t released;
	/* /proc/sys/kernel/ns_last_pid, kept open (-1: none), its value at
	 * this refresh (-1: unknown: the last pid the node gave out), since
	 * when it has been that, and the value what is read now is marked
	 * with (-1 while too fresh: refresh.c, read_last_pid). */
	int last_pid_fd;
	long last_pid, mark_pid;
	double last_pid_since;
	size_t stat_reads; /* threads' stat files read (nl_real_stat_reads) */
	size_t wakes;	   /* refreshes that read every idle thread (quiet.c) */
	double (*mono)(void); /* nl_mono_s; a replay's (nl_real_set_clock) */
};

/* The machine's own state: for its own ops (core/real/ only; callers
 * from outside are checked, realmachine.c). */
static inline struct real *R(struct nl_machine *m)
{
	return m->priv;
}

static inline double r_now(struct nl_machine *m)
{
	return R(m)->mono() - R(m)->t0;
}

static inline struct rproc *proc_of(struct real *r, pid_t pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].info.pid == pid)
			return &r->procs[i];
	return NULL;
}

/* quiet.c: at a refresh of p (its CPU clock read): 1 if p ran under 5% of
 * a CPU since its last refresh (so none of its threads woke busy), else
 * 0. */
int nl_real_quiet(struct rproc *p);
/* The same from a reading of its clock (ns) at monotonic time t (s). */
int nl_real_quiet_at(struct rproc *p, unsigned long long ns, double t);
/* quiet.c: after nl_real_quiet, 1 if p used at least a busy thread's
 * share of a CPU more than at its last refresh, beyond how its share
 * moves of late (one of its idle threads woke: read them all now).
 * judged 0 (threads came or went) only keeps the figures. */
int nl_real_wake(struct rproc *p, int judged);

/* procs.c: the managed processes. */
/* p's pidfd (opened once, checked to name p): the descriptor, -ESRCH when
 * p is gone, -EBADF where there is none. */
int nl_real_proc_pidfd(struct rproc *p);
void nl_real_note_ends(struct real *r);
/* The same for the processes under refresh only (rproc.refresh). */
void nl_real_note_ends_some(struct real *r);
void nl_real_check_pending(struct real *r, struct rproc *p);
/* Manage the children p started (of its main thread; all: of every one
 * of its threads). 1 if some could not be read or managed (tried again
 * at the next look), else 0. */
int nl_real_add_children(struct real *r, struct rproc *p, int all);
/*
 * A process of more than min_threads known threads: their children files
 * are read in turns, each about every every_s, a share each call (and its
 * main thread's every call), rather than all at once. 1: a smaller one,
 * nothing done.
 */
int nl_real_add_children_turn(struct real *r, struct rproc *p, double now,
			      double every_s, size_t min_threads);
/* machine.h's add_process, forget and owner. */
int nl_real_add_process(struct nl_machine *m, int pid,
			const struct nl_proc_opts *o, char *err, size_t errlen);
int nl_real_forget(struct nl_machine *m, int pid);
int nl_real_owner(struct nl_machine *m, int pid, struct nl_proc_owner *out);
/* real_page_moves.c: move_pages(2) for a managed process (machine.h). */
int nl_real_move_pages(struct nl_machine *m, int pid, int from, int to,
		       double max_bytes, int flags, double *moved);
/* realmachine.c */
void nl_real_thread_drop(struct real *r, struct rthread *t);
/* OS-numbered CPUs as the topology's dense ones. */
void nl_real_to_dense(const struct nl_topology *t, hwloc_const_bitmap_t os,
		      hwloc_bitmap_t dense);
/* bindings.c: the refreshed threads (of process pid; 0: all) whose
 * binding someone else changed (docs/real-node.md, "Other placers"). */
void nl_real_check_bindings(struct real *r, int pid);
/* peers.c: numalot lets go of p, why (printf-style) into its report: its
 * threads are never placed again; with give_back, those numalot placed
 * first get the affinity they had (another program placed its pages, not
 * its threads) (docs/real-node.md, "Other placers"). */
void nl_real_let_go(struct real *r, struct rproc *p, int give_back,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* After a reading of p's pages (before: the last one's, by dense node;
 * own_share: the new reading's; faults: the process's since the last):
 * another program's hand in them, pages moved that numalot did not move
 * or their memory policy changed, lets go of p. */
void nl_real_check_pages(struct real *r, struct rproc *p, const double *before,
			 double own_share, double faults);
/* A process limited by its own binding takes its main thread's as it
 * runs its program (a wrapper such as taskset binds after its exec). */
void nl_real_own_limit(struct rproc *p, hwloc_const_bitmap_t main_os);
/* The thread tid, or NULL (r->th sorted by tid, as between refreshes). */
struct rthread *nl_real_find(struct real *r, pid_t tid);
struct nl_task_stat;
/* A thread seen for the first time: its limit, counters, affinity (the
 * caller keeps the CPU time it takes apart: nl_real_takeover_s). */
int nl_real_thread_init(struct real *r, struct rproc *p, struct rthread *t,
			pid_t tid, const struct nl_task_stat *st);
/* refresh.c: machine.h's threads, threads_of and read_ahead. */
int nl_real_threads(struct nl_machine *m, const struct nl_thread_info **out,
		    size_t *n);
int nl_real_threads_of(struct nl_machine *m, const int *pids, size_t npids,
		       const struct nl_thread_info **out, size_t *n);
int nl_real_read_ahead(struct nl_machine *m, const int *pids, size_t npids,
		       size_t max);
/* Give every thread of pid numalot placed the affinity it had. */
void nl_real_release_pid(struct real *r, pid_t pid);

#endif
