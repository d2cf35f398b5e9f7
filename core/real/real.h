/* numalot: the machine interface on a real Linux node. */
#ifndef NUMALOT_REAL_H
#define NUMALOT_REAL_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "counters.h"
#include "machine.h"

struct nl_real_options {
	enum nl_backend backend;	   /* AUTO is resolved by probing */
	int follow_children;		   /* manage child processes too */
	const volatile sig_atomic_t *stop; /* wait() ends early when set */
	/*
	 * A backend asked for by name that does not work here: 0 refuse
	 * (-ENOTSUP, err says why); 1 use what auto picks, and say so in err.
	 */
	int fallback;
	/*
	 * The descriptor budget: counters (several descriptors a thread) are
	 * opened for at most as many threads as RLIMIT_NOFILE allows after
	 * fd_reserve descriptors (0: 64) are kept for everything else, and for
	 * at most max_counted_per_uid threads of one user (0: no such limit).
	 * Other threads are measured from /proc (CPU time only).
	 */
	size_t fd_reserve;
	size_t max_counted_per_uid;
};

/*
 * A machine over the live node. On success err may still hold a warning
 * (a backend fallen back from); it is empty otherwise. topo is the topology
 * decisions are made on (the live one, or a description of the same CPUs for
 * testing); every CPU it names must exist here. The caller keeps topo alive.
 */
int nl_real_create(const struct nl_topology *topo,
		   const struct nl_real_options *o, struct nl_machine **out,
		   char *err, size_t errlen);

/*
 * Processes are added and forgotten through m->ops (machine.h): the real
 * node's add_process checks that the process exists and that the caller
 * may act on it (root, or the same user).
 *
 * The functions below take only a machine made by nl_real_create (another
 * gets -EINVAL, or nothing done).
 */

/*
 * Threads of pid measured with counters and measured from /proc only
 * (past the descriptor budget). 0, -ESRCH, or -EINVAL.
 */
int nl_real_budget_of(struct nl_machine *m, int pid, size_t *counted,
		      size_t *uncounted);

/* How many threads the descriptor budget gives counters (node, user). */
void nl_real_budget(struct nl_machine *m, size_t *node, size_t *per_uid);
/* Set it (per_uid 0: no limit per user); node is kept within RLIMIT_NOFILE. */
void nl_real_set_budget(struct nl_machine *m, size_t node, size_t per_uid);

/*
 * The CPU time (s, this thread's) spent taking threads over (their limit,
 * counters and stat file, once a thread) and how many were taken over:
 * what a period costs apart from that is the agent's running cost
 * (docs/real-node.md, "Cost"). 0 for another machine.
 */
double nl_real_takeover_s(struct nl_machine *m, size_t *threads);
/* The same for letting ended threads go (their descriptors closed). */
double nl_real_release_s(struct nl_machine *m, size_t *threads);
/* Threads' stat files read so far (refreshes and reads ahead): what the
 * tests count (docs/real-node.md, "Cost"). 0 for another machine. */
size_t nl_real_stat_reads(struct nl_machine *m);
/* Refreshes of a process that read all its idle threads at once, as one
 * of them woke (docs/real-node.md, "Cost"). 0 for another machine. */
size_t nl_real_wakes(struct nl_machine *m);
/* Replay tests: the monotonic clock (s) the refresh and the page looks go
 * by, nl_mono_s unless set; the machine's time starts again at 0. */
void nl_real_set_clock(struct nl_machine *m, double (*mono)(void));

/* numad's pid when its pid file names a running numad, else 0
 * (peers.c). */
#define NL_NUMAD_PIDFILE "/var/run/numad.pid"
int nl_numad_pid(void);
int nl_numad_pid_from(const char *pidfile);
/* Between two readings of a process's pages by node (before, after, n
 * nodes), the pages that left some nodes and reached others (growth or
 * shrinkage alone moves none), less own (those numalot moved or the
 * process faulted in), never below 0; the node that lost most in *from,
 * the one that gained most in *to (peers.c). */
double nl_pages_moved_by_others(const double *before, const double *after,
				int n, double own, int *from, int *to);
/* Where a batch of page moves that starts at address a ends: count pages
 * of page bytes on, but at a boundary of huge (a transparent huge page's
 * size; 0: none) where one falls past a, and never past end
 * (real_page_moves.c). */
unsigned long nl_page_batch_end(unsigned long a, unsigned long end,
				unsigned long count, unsigned long page,
				unsigned long huge);
/* Between two readings (pages under a policy of its own, all its pages),
 * the pages whose policy changed: what the first count changed by past
 * what the second did (memory allocated under a policy changes none). */
double nl_policy_changed(double own_was, double all_was, double own_now,
			 double all_now);

#endif
