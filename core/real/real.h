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

/* How to take a process over. */
struct nl_real_proc {
	int job;
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

/*
 * Manage process pid. Checks that it exists and that the caller may act
 * on it (root, or the same user). The process is known by its pid and its
 * start time: a pid reused by another process is not it. -ESRCH, -EPERM,
 * -EEXIST (already managed), with err set.
 */
int nl_real_add_process(struct nl_machine *m, pid_t pid,
			const struct nl_real_proc *o, char *err, size_t errlen);

/*
 * Threads of pid measured with counters and measured from /proc only
 * (past the descriptor budget). 0 or -ESRCH.
 */
int nl_real_budget_of(struct nl_machine *m, int pid, size_t *counted,
		      size_t *uncounted);

/* How many threads the descriptor budget gives counters (node, user). */
void nl_real_budget(struct nl_machine *m, size_t *node, size_t *per_uid);
/* Set it (per_uid 0: no limit per user); node is kept within RLIMIT_NOFILE. */
void nl_real_set_budget(struct nl_machine *m, size_t node, size_t per_uid);

/* The backend in use (never AUTO). */
enum nl_backend nl_real_backend(const struct nl_machine *m);

#endif
