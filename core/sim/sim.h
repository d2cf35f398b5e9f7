/*
 * numalot: the simulated NUMA node as the rest of numalot takes it
 * (docs/machine-model.md): a machine (machine.h) running a scenario, the
 * options the baselines build it with, and what its OS did. The physics
 * behind it (model.h) is core/sim/'s own.
 */
#ifndef NUMALOT_SIM_H
#define NUMALOT_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "observe.h"
#include "os_mode.h"

struct json_object;
struct nl_machine;
struct nl_scenario;

/*
 * How to build a model beyond what the scenario says (the baselines and
 * the placement search use these; NULL means all defaults).
 */
struct nl_model_opts {
	enum nl_os_mode os_mode; /* used when os_set; else the scenario's */
	int os_set;
	/* [threads, in tid order] start there, pinned (-1: fork balancing) */
	const int *start_cpu;
	int ideal_locality; /* data always on its thread's node, no cost */
	int start_all;	    /* every process starts at time 0 (search) */
	/* The machine (nl_sim_create_opts) manages no process until it is
	 * added (add_process), as on an agent's node; else all of them. */
	int unmanaged;
	/* What the machine's samples show (observe.h); 0: pebs. */
	enum nl_sim_counters counters;
	/* Every trace_s simulated seconds (0: never) the machine appends a
	 * sample to the json-c array trace (`numalot sim --timeline`; the
	 * report's "timeline", docs/report-format.md). */
	double trace_s;
	struct json_object *trace;
};

/*
 * A simulated NUMA node running the scenario from time 0; noise and any
 * other randomness of the model come from seed. The machine owns its own
 * copy of what it needs (the scenario may be freed after).
 */
int nl_sim_create(const struct nl_scenario *sc, uint64_t seed,
		  struct nl_machine **out, char *err, size_t errlen);
/* What a simulated machine's OS and numalot did (nl_sim_stats). */
struct nl_sim_stats {
	int nthreads;		     /* of the scenario */
	int os_moves;		     /* thread moves by the OS (a swap: 2) */
	double pages_migrated_bytes; /* by the OS's NUMA balancing */
	double pages_moved_bytes;    /* by numalot */
};
/*
 * Fill out, and cpu (room for nthreads, or NULL) with the dense CPU each
 * thread is on, in tid order (-1: never started). 0, or -EINVAL when m is
 * not a simulated machine.
 */
int nl_sim_stats(struct nl_machine *m, struct nl_sim_stats *out, int *cpu);
/*
 * Who process pid is, for add_process's uid check and the owner op: its
 * owner uid (root by default) and parent (1 by default). 0, -ESRCH, or
 * -EINVAL when m is not a simulated machine.
 */
int nl_sim_set_owner(struct nl_machine *m, int pid, uid_t uid, int ppid);
/* Choose how the simulated OS treats threads and pages. 0 or -EINVAL. */
int nl_sim_set_os_mode(struct nl_machine *m, enum nl_os_mode mode);
/* nl_sim_create with model options (o may be NULL). */
int nl_sim_create_opts(const struct nl_scenario *sc, uint64_t seed,
		       const struct nl_model_opts *o, struct nl_machine **out,
		       char *err, size_t errlen);

#endif
