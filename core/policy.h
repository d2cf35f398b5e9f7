/* numalot: the migration policies IMAR2, LBMA, monitor, static (ALGORITHMS.md).
 */
#ifndef NUMALOT_POLICY_H
#define NUMALOT_POLICY_H

#include <stddef.h>
#include <hwloc.h>

#include "perf.h"
#include "rng.h"
#include "topology.h"

enum nl_policy_kind {
	NL_POLICY_MONITOR, /* observe only: no pinning, no moves */
	NL_POLICY_STATIC,  /* pin where each thread starts, never move */
	NL_POLICY_IMAR2,
	NL_POLICY_LBMA,
	NL_POLICY_COUNT
};

const char *nl_policy_name(enum nl_policy_kind k);
/* Returns 0 and sets *k, or -EINVAL for an unknown name. */
int nl_policy_from_name(const char *name, enum nl_policy_kind *k);
/* "monitor, static, imar2, lbma" */
const char *nl_policy_names(void);

struct nl_tickets {
	double better;	  /* record on the destination >= current perf (4) */
	double no_record; /* no record on the destination (2) */
	double worse;	  /* record on the destination is worse (1) */
	double free_cpu;  /* destination CPU is free: a plain migration (2) */
	double preferred; /* x local/distance when D is the preferred node (4)
			   */
	double underperforming; /* relative perf below the threshold (3) */
};

enum nl_select { NL_SELECT_LOTTERY, NL_SELECT_BEST };
enum nl_rollback { NL_ROLLBACK_ALL, NL_ROLLBACK_LOSERS };

struct nl_policy_params {
	double period_s;       /* base period (1 s) */
	int period_max_mult;   /* IMAR2 walks 1, 2, .. this (4) */
	double undo_threshold; /* IMAR2 rolls back below this ratio (0.9) */
	double perf_threshold; /* under-performing below this relative perf */
	int max_migrations;    /* candidate threads per step (5) */
	int always_worst;      /* IMAR2: none below threshold -> worst (1) */
	double idle_share;     /* below this CPU share a thread is idle */
	enum nl_select select; /* lottery draw (default) or best ticket */
	enum nl_rollback rollback;
	struct nl_tickets tickets;
	struct nl_perf_params perf;
};

void nl_policy_params_default(struct nl_policy_params *p);

/*
 * Set one parameter by name ("period", "tickets.free", ...) from text.
 * Returns 0, -ENOENT for an unknown name, -EINVAL for a bad value; err then
 * says why (an unknown name lists the valid ones).
 */
int nl_policy_param_set(struct nl_policy_params *p, const char *name,
			const char *value, char *err, size_t errlen);
/* Write every parameter into a json-c object (for reports). */
struct json_object;
struct json_object *nl_policy_params_json(const struct nl_policy_params *p);

/* One thread as a policy sees it. */
struct nl_view_thread {
	int tid;
	int pid;
	int domain;
	int cpu;	 /* dense CPU it is on now */
	int pinned;	 /* numalot already bound it to one CPU */
	int has_perf;	 /* perf of this period is known */
	double perf;	 /* 3DyRM perf this period */
	double rel_perf; /* perf / mean perf of its process */
	int has_prev;	 /* perf of the previous step is known */
	double prev_perf;
	int preferred_node; /* -1 unknown */
	int has_share;	    /* cpu_share was measured */
	double cpu_share;   /* CPU time over wall time, this period */
	const struct nl_record *record;
	hwloc_const_bitmap_t allowed; /* dense CPUs it may ever use */
};

/*
 * What a policy reads: every managed thread on the node (sorted by tid), the
 * domain being decided, and an occupancy index (nl_view_index builds it).
 */
struct nl_view {
	const struct nl_topology *topo;
	const struct nl_view_thread *threads;
	int nthreads;
	int domain;
	double now_s;
	int *occ_head; /* [ncpus] first thread index on each CPU, -1 none */
	int *occ_next; /* [nthreads] next thread index on the same CPU */
};

/* Fill occ_head / occ_next (arrays the caller allocated). */
void nl_view_index(struct nl_view *v);

enum nl_action_kind {
	NL_ACT_PIN,	 /* bind to one CPU (taking a thread over) */
	NL_ACT_MIGRATE,	 /* to a free CPU on another node */
	NL_ACT_SWAP,	 /* exchange CPUs with another thread */
	NL_ACT_ROLLBACK, /* undo a move of the previous step */
	NL_ACT_SKIP,	 /* a candidate that could not be moved */
};

const char *nl_action_name(enum nl_action_kind k);

struct nl_action {
	enum nl_action_kind kind;
	int tid;
	int other_tid; /* swap partner, -1 none */
	int from_cpu;
	int to_cpu;
	double tickets; /* tickets of the drawn move, of all candidates */
	double total_tickets;
	const char *reason; /* static text */
};

struct nl_plan {
	struct nl_action *actions;
	size_t n, cap;
	double next_period_s;
};

void nl_plan_init(struct nl_plan *p);
void nl_plan_clear(struct nl_plan *p);
void nl_plan_free(struct nl_plan *p);

/* A move kept by IMAR2 for a possible rollback. */
struct nl_memo {
	int tid;
	int from_cpu;
	int to_cpu;
	double perf_before;
};

/* What a policy carries from one step to the next (owned by the caller). */
struct nl_policy_state {
	int steps;
	int period_mult;
	struct nl_memo *last;
	size_t nlast, caplast;
};

void nl_policy_state_init(struct nl_policy_state *s);
void nl_policy_state_free(struct nl_policy_state *s);

/* Tickets thread t earns for going from its CPU to CPU to (ALGORITHMS.md). */
double nl_tickets_for(const struct nl_view *v, const struct nl_policy_params *p,
		      const struct nl_view_thread *t, int from_cpu, int to_cpu,
		      int to_free);

/*
 * One policy step for view->domain: a pure function of the view, the
 * parameters, the carried state and the generator. Appends actions to plan
 * and sets plan->next_period_s. Returns 0 or -ENOMEM.
 */
int nl_policy_step(enum nl_policy_kind k, const struct nl_policy_params *p,
		   const struct nl_view *v, struct nl_policy_state *s,
		   struct nl_rng *rng, struct nl_plan *plan);

#endif
