/* numalot: the machine interface on a real Linux node. */
#ifndef NUMALOT_REAL_H
#define NUMALOT_REAL_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "counters.h"
#include "machine.h"

struct nl_real_options {
	enum nl_backend backend;       /* AUTO is resolved by probing */
	int follow_children;           /* manage child processes too */
	const volatile sig_atomic_t *stop; /* wait() ends early when set */
};

/*
 * A machine over the live node. topo is the topology decisions are made
 * on (the live one, or a description of the same CPUs for testing); every
 * CPU it names must exist here. The caller keeps topo alive.
 */
int nl_real_create(const struct nl_topology *topo,
		   const struct nl_real_options *o, struct nl_machine **out,
		   char *err, size_t errlen);

/*
 * Manage process pid under job. Checks that it exists and that the caller
 * may act on it (root, or the same user). -ESRCH, -EPERM with err set.
 */
int nl_real_add_process(struct nl_machine *m, pid_t pid, int job, char *err,
			size_t errlen);

/* The backend in use (never AUTO). */
enum nl_backend nl_real_backend(const struct nl_machine *m);

#endif
