/*
 * numalot: the machine interface, the seam between the engine and the world
 * (docs/architecture.md). Implementations: the simulated node (sim/), a
 * recording dry run (dryrun.c), and the real node.
 */
#ifndef NUMALOT_MACHINE_H
#define NUMALOT_MACHINE_H

#include <stddef.h>
#include <sys/types.h>
#include <hwloc.h>

#include "sample.h"
#include "topology.h"

/* A live thread of a managed process. */
struct nl_thread_info {
	int tid;
	int pid;
	unsigned long long start_time; /* tells a reused tid from the old one */
	int cpu;		       /* dense CPU it is on, -1 unknown */
	hwloc_bitmap_t allowed;	       /* dense CPUs it may use (machine's) */
	/* its own affinity inside allowed (numactl, --cpu-bind), where the OS
	 * keeps it; NULL: the same as allowed */
	hwloc_bitmap_t affinity;
};

struct nl_process_info {
	int pid;
	int job; /* job (migration domain) id, from the machine */
	char name[64];
	double start_s;	  /* machine time it started */
	double end_s;	  /* machine time it ended, < 0 while running */
	int threads_seen; /* threads it has had so far */
	/* registered but not yet taken over: a Slurm task before its exec
	 * (name "" until then) */
	int pending;
	/* where numalot may place its threads: "cgroup v2 cpuset /...",
	 * "the scenario's cpus", ... (docs/algorithms.md); a v2 task's
	 * cgroup below a node's slurmstepd scope may pass 100 characters */
	char limit[192];
	/* What only the real node fills; the simulated node leaves it zero,
	 * and the report then says nothing of it. */
	struct nl_process_real {
		/* Hot pages from sampled data addresses (where PEBS or IBS
		 * samples loads): what sampled them ("" none), the pages held,
		 * the samples taken, and the bytes page moves took hottest
		 * first (docs/real-node.md, "Hot pages"). */
		char hot_source[16];
		double hot_pages, hot_samples, hot_moved_bytes;
		/* Where its pages are: numa_maps read, and looks that left it
		 * unread as its faults and resident size had not changed
		 * (docs/real-node.md, "Cost"). */
		unsigned long pages_reads, pages_skipped;
		/* Children of its main thread numalot did not manage (not
		 * following children): the most seen at one look, 0 none. */
		int children_unfollowed;
		/* Why numalot let go of it while it ran ("" it did not):
		 * another program set its threads' CPUs (docs/real-node.md,
		 * "Other placers"). */
		char let_go[160];
	} real;
};

/* How to take a process over (add_process). */
struct nl_proc_opts {
	int job; /* its job (migration domain) id, in nl_process_info */
	/*
	 * The process is a fork of the registering program that has not run
	 * its own program yet (a Slurm task before exec): take its threads
	 * over only once it has exec'd, when its binding and user are final.
	 */
	int wait_exec;
	/* Every uid of the process must be this one, at take-over and every
	 * period after; when it stops being so, numalot lets go of it. */
	int check_uid;
	uid_t uid;
};

/* Who a process is: what the agent checks before it asks for one. */
struct nl_proc_owner {
	int ppid;    /* its parent */
	uid_t uid;   /* its real uid */
	int one_uid; /* every uid (real, effective, saved, filesystem) is uid */
};

struct nl_machine;

/*
 * move_pages flag: interleaved memory (numactl --interleave) is a starting
 * placement numalot may improve, as a thread's own CPU binding is when
 * bindings are free (docs/algorithms.md, "Memory follows threads").
 */
#define NL_PAGES_SOFT 1

struct nl_machine_ops {
	/*
	 * Live threads of the managed processes, sorted by tid. The array and
	 * its bitmaps belong to the machine, valid until the next call.
	 */
	int (*threads)(struct nl_machine *m, const struct nl_thread_info **out,
		       size_t *n);
	/* Counter deltas of tid since the previous call (or since start).
	 * On success *out is written whole (the engine does not clear it
	 * first); -ENODATA: nothing this time (the next sample spans it). */
	int (*sample)(struct nl_machine *m, int tid, struct nl_sample *out);
	/* Bind tid to one dense CPU. -ESRCH: the thread is gone. */
	int (*place)(struct nl_machine *m, int tid, int cpu);
	/* Give tid back the affinity it had before numalot. */
	int (*release)(struct nl_machine *m, int tid);
	/*
	 * Let up to seconds pass (simulate or sleep). Returns 1 while managed
	 * processes remain, 0 when all are done, or a negative errno.
	 */
	int (*wait)(struct nl_machine *m, double seconds);
	double (*now)(struct nl_machine *m);
	/* Every managed process, running or ended (array owned by m). */
	int (*processes)(struct nl_machine *m,
			 const struct nl_process_info **out, size_t *n);
	/* Resident pages of pid by node (optional, may be NULL). */
	int (*node_pages)(struct nl_machine *m, int pid, double *pages);
	/* Optional (may be NULL): 1 when most of pid's memory is bound to
	 * its nodes by a policy it set itself (numactl --membind: numa_maps
	 * says "bind:"), so its pages will not follow its threads; 0 when
	 * not, or not known yet (its pages not read). */
	int (*mem_bound)(struct nl_machine *m, int pid);
	/*
	 * Move up to max_bytes of pid's pages from node `from` to node `to`
	 * (optional, may be NULL); *moved gets the bytes moved. Memory the
	 * process placed by its own policy stays as asked: always when bound
	 * (membind), and when interleaved unless flags has NL_PAGES_SOFT.
	 * -EPERM: all it had there was so; -ESRCH: gone; -EINVAL: bad nodes.
	 */
	int (*move_pages)(struct nl_machine *m, int pid, int from, int to,
			  double max_bytes, int flags, double *moved);
	/*
	 * Manage process pid (optional, may be NULL): it is listed by
	 * processes() and its threads by threads() from now on. It is known
	 * by its pid and its start time: a pid reused by another process is
	 * not it. 0, or -ESRCH (no such process), -EPERM (the caller may not
	 * act on it, or check_uid and it is not o->uid's), -EEXIST (already
	 * managed), with err set.
	 */
	int (*add_process)(struct nl_machine *m, int pid,
			   const struct nl_proc_opts *o, char *err,
			   size_t errlen);
	/* Stop managing pid and forget its threads (optional, may be NULL). */
	int (*forget)(struct nl_machine *m, int pid);
	/* Who pid is (optional, may be NULL): 0, -ESRCH or a negative errno. */
	int (*owner)(struct nl_machine *m, int pid, struct nl_proc_owner *out);
	void (*destroy)(struct nl_machine *m);
	/*
	 * Optional (may be NULL): like threads, but refresh and return only
	 * the threads of the processes in pids (and of the children they
	 * started), so that a domain that is due costs only its own threads
	 * (docs/architecture.md). Other processes' threads stay as they were.
	 */
	int (*threads_of)(struct nl_machine *m, const int *pids, size_t npids,
			  const struct nl_thread_info **out, size_t *n);
	/*
	 * Optional (may be NULL; only with threads_of): read now, for the
	 * next threads_of of these processes, at most max of the thread
	 * states it would read, so that a big domain is read in slices with
	 * the agent's socket served in between (docs/protocol.md, "Cost").
	 * Returns 1 while some are left, 0 once all are (the next threads_of
	 * uses what was read and does not read it again), or a negative
	 * errno.
	 */
	int (*read_ahead)(struct nl_machine *m, const int *pids, size_t npids,
			  size_t max);
};

struct nl_machine {
	const struct nl_machine_ops *ops;
	const struct nl_topology *topo;
	const char *
		backend; /* counter backend name: "model-pebs", "software"... */
	unsigned measured; /* enum nl_measured bits this machine provides */
	/* The simulated node: node_pages costs nothing, and is read after
	 * every step for the report. */
	int modelled;
	void *priv;
};

/*
 * The distinct jobs of the processes p[0..n), in first-seen order, into
 * jobs (room for n); returns how many.
 */
size_t nl_process_jobs(const struct nl_process_info *p, size_t n, int *jobs);

static inline void nl_machine_destroy(struct nl_machine *m)
{
	if (m)
		m->ops->destroy(m);
}

/*
 * Dry run: wraps another machine and forwards every operation to it but
 * place, release and move_pages, which it records instead of applying (as
 * if done: a page move moves all it was asked). nl_dryrun_entry lists
 * what was asked, in order, one "place TID CPU", "release TID" or "pages
 * PID FROM TO BYTES" (" soft" appended with NL_PAGES_SOFT) per entry.
 */
int nl_dryrun_create(struct nl_machine *inner, struct nl_machine **out);
size_t nl_dryrun_count(const struct nl_machine *m);
const char *nl_dryrun_entry(const struct nl_machine *m, size_t i);

#endif
