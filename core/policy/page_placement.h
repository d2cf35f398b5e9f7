/*
 * numalot: page placement, a policy (docs/algorithms.md, "Memory follows
 * threads"). It reads the node's threads after a step's thread moves and
 * where a process's pages are, and returns page moves (NL_ACT_PAGES) as
 * plan actions; the engine applies them through the machine.
 */
#ifndef NUMALOT_PAGE_PLACEMENT_H
#define NUMALOT_PAGE_PLACEMENT_H

#include <stddef.h>

#include "policy.h"
#include "sample.h"

/* A process's moves within one step: its pages and busy threads by node
 * as the moves so far left them, the bytes still allowed, the rounds made
 * and the last move's nodes. */
struct nl_page_step {
	double pages[NL_MAX_NODES], threads[NL_MAX_NODES];
	double nthreads, npages, budget;
	int rounds, from, to;
	int near_only; /* off a node with no thread: the worst no farther */
	/* by_load: a bandwidth-bound process's pages go to no node whose
	 * memory would then be busier than the one they leave was; others:
	 * the other processes' memory-bound busy threads there, each
	 * counted over the nodes of its process's pages. */
	int by_load;
	double others[NL_MAX_NODES];
	/* ...or, for a process no PMU measures (it may be one), busier
	 * than that only while no more of them read it than it has CPUs
	 * (cpus: by node; 0 for a measured process) */
	double cpus[NL_MAX_NODES];
};

/* Calm periods a process's trials are judged against. */
#define NL_CALM_SAMPLES 8

/* What page placement keeps of one process from step to step. */
struct nl_page_state {
	/* Written by the engine as it applies the moves. */
	double bytes, wall_s; /* moved, and time spent in the moves */
	int moves;
	int refused; /* its memory is bound by its own policy */
	int judge;   /* the last step moved: judge it now */
	/* Page placement's own. */
	double loc_before, loc_after; /* pages on its threads' nodes */
	int loc_known;
	double tput_before; /* its throughput before the last move */
	double hold_until_s;
	double last_s;
	int active; /* moving until its pages are where its threads are */
	double max_threads; /* most busy threads seen at once */
	int failed;	    /* moves that did not pay off */
	int crowded;	    /* periods its threads found no room by its pages */
	/* A run that takes its memory onto fewer nodes is a trial, judged
	 * each period against its throughput before the run, and undone
	 * when it lost: the bytes each node gained by it. */
	int trial, undoing;
	/* ...and the other processes' threads on the nodes it loads: their
	 * ops/s then (< 0: not counted), and those nodes */
	double trial_nb;
	unsigned long long trial_nodes;
	/* ...summed over the periods it is judged on */
	double j_own, j_nb;
	int j_n;
	/* Its throughput and its neighbours' (on calm_mask's nodes, < 0
	 * unknown) while no run of its pages was going on. */
	double calm_tput, calm_nb;
	/* The last calm periods' intensity (0: not measured) and
	 * throughput: a period is judged against those in its own phase
	 * (page_placement.c). */
	double calm_s_oi[NL_CALM_SAMPLES], calm_s_tput[NL_CALM_SAMPLES];
	int calm_s_n, calm_s_next;
	/* Periods since a trial's run ended with no calm period in their
	 * phase to judge them against; and the oi before the last move. */
	int j_miss;
	double oi_before;
	/* bytes and wall_s as the last step saw them: what moved since */
	double bytes_seen, wall_seen;
	unsigned long long calm_mask;
	/* Its busy threads by node at the last step, and the steps since
	 * they last moved between nodes (a shape that still changes is no
	 * target to concentrate its memory on). */
	double shape_threads[NL_MAX_NODES];
	int shape_steady;
	double trial_delta[NL_MAX_NODES];
	struct nl_page_step step;
};

/* Where pid's resident pages are, by node: 0 or a negative errno (the
 * engine reads them through the machine, for page placement to look at). */
typedef int (*nl_pages_read_fn)(void *ctx, int pid, double *pages);

struct nl_pages_proc {
	int pid;
	struct nl_page_state *st;
};

/* What page placement sees of a domain's step. */
struct nl_pages_domain {
	const struct nl_policy_params *params;
	const struct nl_view *v; /* every thread, after this step's moves */
	const struct nl_pages_proc *procs; /* the domain's processes */
	size_t nprocs;
	nl_pages_read_fn read;
	void *ctx;
	/* More busy threads than CPUs (nl_pages_wanted is 0): only spreads */
	int oversub;
};

/* 0 when page placement has nothing to do this step (more busy threads
 * than CPUs: where a thread runs says little about its pages). */
int nl_pages_wanted(const struct nl_pages_domain *dm);

/*
 * Process dm->procs[k]'s first page move of this step, appended to plan,
 * or none. A move has from_cpu and to_cpu nodes and bytes; one with
 * from_cpu < 0 is a note for the journal only. The caller applies it and,
 * when some of it moved, says how much with nl_pages_moved, which appends
 * the next one (its amount depends on what moved), until none comes.
 * Each process's moves are applied before the next process is asked (its
 * choice may look at where the earlier ones' pages went). 0 or -ENOMEM.
 */
int nl_pages_plan(const struct nl_pages_domain *dm, size_t k,
		  struct nl_plan *plan);
/* The last move of dm->procs[k] moved `moved` bytes (> 0): its next move,
 * appended to plan, or none. 0 or -ENOMEM. */
int nl_pages_moved(const struct nl_pages_domain *dm, size_t k, double moved,
		   struct nl_plan *plan);

#endif
