/* numalot: the migration policies (policy_list.h; docs/algorithms.md):
 * their parameters, what they see and what they plan.
 */
#ifndef NUMALOT_POLICY_H
#define NUMALOT_POLICY_H

#include <stddef.h>
#include <stdio.h>
#include <hwloc.h>

#include "perf.h"
#include "policy_names.h"
#include "rng.h"
#include "topology.h"

struct nl_tickets {
	double better;	  /* record on the destination >= current perf (4) */
	double no_record; /* no record on the destination (2) */
	double worse;	  /* record on the destination is worse (1) */
	double free_cpu;  /* destination CPU is free: a plain migration (2) */
	double preferred; /* x local/distance when D is the preferred node (4)
			   */
	double underperforming; /* relative perf below the threshold (3) */
	double stay;		/* the "stay" outcome of a draw (1; paper 0) */
};

enum nl_select { NL_SELECT_LOTTERY, NL_SELECT_BEST };
enum nl_rollback { NL_ROLLBACK_ALL, NL_ROLLBACK_LOSERS };
/* Where a move may go: the thread's data node, or any node (paper). */
enum nl_dest { NL_DEST_DATA, NL_DEST_ANY };
/* Swaps: only with a partner that does not lose its data (gain), or any
 * partner, scored by the sum of both threads' tickets (paper). */
enum nl_swap { NL_SWAP_GAIN, NL_SWAP_SUM };
/* IMAR2 judges a move on the moved threads' own relative perf (thread), or
 * on the domain's total perf (paper). */
enum nl_judge { NL_JUDGE_THREAD, NL_JUDGE_TOTAL };
/* Parameter profiles: numalot's defaults, or the paper's raw behaviour. */
enum nl_profile { NL_PROFILE_NUMALOT, NL_PROFILE_PAPER };

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
	enum nl_profile profile; /* the profile the others started from */
	int pin_new;		 /* pin every thread at take-over (paper 1) */
	enum nl_dest dest;
	enum nl_swap swap;
	enum nl_judge judge;
	double data_share; /* a thread is a candidate with this share of its
			      accesses on one other node (0.5) */
	double compute_oi; /* above this measured OI a thread is compute-bound:
			      never moved for its data, a free swap partner */
	double hold_s;	   /* a moved thread is left alone this long (5 s) */
	int oversub_release;   /* hand threads back to the OS when the domain's
				  CPUs are oversubscribed (1) */
	double harm_check_s;   /* do-no-harm check every this long, 0 off */
	int pages;	       /* page placement (page_placement.c) on */
	double page_rate;      /* bytes/s of page moves per process, at most */
	double page_misplaced; /* act when this share of a process's pages
				  is away from its threads' nodes */
	double page_hold_s;    /* after a page move that did not pay off */
	double page_bw_oi;     /* below this OI a process is bandwidth-bound:
				  its pages spread over its threads' nodes */
	int balance_partner;   /* no move that makes the balancer push a
				  local thread off its node (balance.c) */
	int sibling_spread;    /* a free sibling of a busy core only from a
				  busier core (policy_move.c) */
	int remote_relief;     /* a pinned thread on a shared core may take
				  an idle core of another node (policy.c) */
	int keep_bindings;     /* never leave a thread's own binding (0: may go
				  anywhere in its allocation) */
	struct nl_tickets tickets;
	struct nl_perf_params perf;
};

/* One parameter, described once (params.c): parsing, the reports' params,
 * numalot help params and docs/algorithms.md's table come from it. */
enum nl_pp_type { NL_PP_DOUBLE, NL_PP_INT, NL_PP_NAME };
struct nl_policy_param {
	const char *name; /* as --param and the reports write it */
	enum nl_pp_type type;
	size_t off;		  /* of its field in struct nl_policy_params */
	double def;		  /* numalot's default (a name: its index) */
	double paper;		  /* under profile=paper */
	double min, max;	  /* the range (numbers) */
	const char *const *names; /* NL_PP_NAME: its values, by enum order */
	const char *unit;
	const char *what; /* one line of meaning */
};
extern const struct nl_policy_param nl_policy_params_table[];
extern const size_t nl_policy_nparams;

/* The table of docs/algorithms.md ("How numalot implements this"). */
void nl_policy_params_markdown(FILE *f);

void nl_policy_params_default(struct nl_policy_params *p);
/* Set every parameter a profile decides ("numalot" or "paper"). */
void nl_policy_params_profile(struct nl_policy_params *p, enum nl_profile k);

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
	int origin_cpu;	 /* where the OS had it before numalot (-1 unknown) */
	int has_perf;	 /* perf of this period is known */
	double perf;	 /* 3DyRM perf this period */
	double rel_perf; /* perf / mean perf of its process */
	int has_prev;	 /* perf of the previous step is known */
	double prev_perf;
	int preferred_node; /* -1 unknown */
	double pref_share;  /* share of its accesses (or pages) there */
	double here_share;  /* share on the node it ran on */
	/* the shares are its process's pages by node (no sampled accesses
	 * of its own): they say where the process's data is, not this
	 * thread's */
	int process_share;
	/* The most threads its process had, when fewer live now (else 0):
	 * pages the ended ones touched stay where they ran (step.c). */
	int threads_peak;
	int has_oi; /* operational intensity was measured */
	double oi;  /* ops per byte from memory */
	/* its class against compute_oi and page_bw_oi, with hysteresis:
	 * +1 above, -1 below, 0 none kept (the plain threshold then) */
	int compute_cls, bw_cls;
	/* periods in a row its class has been compute-bound (with
	 * compute_cls; 0 otherwise) */
	int compute_periods;
	double moved_s;	  /* when numalot last moved it (-1 never) */
	int held;	  /* moved recently (hold_s): leave it alone */
	int left_node;	  /* while held: the node it was moved from */
	int mem_bound;	  /* its process's memory is bound by its own
			     policy: its pages cannot follow it */
	int pages_held;	  /* its pages will not follow it for now: a page
			     move that did not pay (page_hold_s), or page
			     placement off */
	double tput;	  /* ops/s, or the CPU share without op counts */
	int tput_ops;	  /* tput is ops/s */
	int has_share;	  /* cpu_share was measured */
	double cpu_share; /* CPU time over wall time, this period */
	const struct nl_record *record;
	hwloc_const_bitmap_t allowed; /* dense CPUs it may ever use */
	/* its own binding (numactl --cpunodebind, taskset), where the OS
	 * keeps it while numalot does not pin it; NULL: allowed */
	hwloc_const_bitmap_t own;
};

/*
 * What a policy reads: every managed thread on the node (sorted by tid) and
 * the domain being decided.
 */
struct nl_view {
	const struct nl_topology *topo;
	const struct nl_view_thread *threads;
	int nthreads;
	int domain;
	double now_s;
};

enum nl_action_kind {
	NL_ACT_PIN,	 /* bind to one CPU (taking a thread over) */
	NL_ACT_MIGRATE,	 /* to a free CPU on another node */
	NL_ACT_SWAP,	 /* exchange CPUs with another thread */
	NL_ACT_ROLLBACK, /* undo a move of the previous step */
	NL_ACT_SKIP,	 /* a candidate that could not be moved */
	NL_ACT_RELEASE,	 /* hand a thread back to the OS */
	NL_ACT_STAY,	 /* a candidate the draw left where it is */
	NL_ACT_PAGES,	 /* pages of a process moved between nodes
			    (page_placement.h) */
};

const char *nl_action_name(enum nl_action_kind k);

struct nl_action {
	enum nl_action_kind kind;
	int tid;
	int other_tid; /* swap partner, -1 none */
	int from_cpu;
	int to_cpu;
	int pid;	/* NL_ACT_PAGES: the process (tid is -1) */
	double bytes;	/* NL_ACT_PAGES: bytes (from/to_cpu hold nodes;
			   from_cpu < 0: a note, nothing moves) */
	double tickets; /* tickets of the drawn move, of all candidates */
	double total_tickets;
	const char *reason; /* static text */
	int relief;	    /* a move off a shared CPU, not for its data */
	int then_release;   /* NL_ACT_ROLLBACK: then handed back to the OS,
			       as it was before the move it undoes */
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
	double judge_before; /* rel perf (or perf, alone in its process) */
	int pair;	     /* the swap partner's memo, -1 none */
	int was_pinned;	     /* numalot had pinned it before this move */
};

/* A thread numalot placed, watched while it stays where it was put
 * (watch.c). */
struct nl_watch {
	int tid;
	int cpu;
	double before; /* its judge metric before it was moved */
	int low;       /* periods in a row below undo_threshold of it */
	int partner;   /* its swap partner's tid, judged with it (-1 none) */
	double partner_before;
};

/* What a policy carries from one step to the next (owned by the caller). */
struct nl_policy_state {
	int steps;
	int period_mult;
	struct nl_memo *last;
	size_t nlast, caplast;
	/* Do-no-harm check (docs/algorithms.md): the placement numalot made,
	 * released to compare with what the OS does with it. */
	int harm_phase;	       /* 0 placing, 1 released and measuring */
	int harm_count;	       /* threads measured when released */
	double harm_next_s;    /* next check */
	double harm_backoff;   /* multiplies harm_check_s after a lost check */
	double harm_won;       /* multiplies it after checks numalot won */
	double harm_sum;       /* released throughput summed over periods */
	int harm_n;	       /* periods summed */
	double harm_placed;    /* recent throughput under numalot's placement */
	int harm_passive;      /* the OS won the last check: no moves */
	int harm_procs;	       /* ...with this many processes running */
	struct nl_memo *saved; /* placement to re-apply (tid, to_cpu) */
	size_t nsaved, capsaved;
	/* ...and each process's throughput: recent under numalot's
	 * placement, summed under the OS's (harm.c) */
	struct nl_harm_proc {
		int pid;
		double placed, os_sum;
	} * hp;
	size_t nhp, caphp;
	struct nl_watch *watch; /* placed threads still watched */
	size_t nwatch, capwatch;
};

void nl_policy_state_init(struct nl_policy_state *s);
void nl_policy_state_free(struct nl_policy_state *s);

/* Tickets thread t earns for going from its CPU to CPU to (docs/algorithms.md).
 */
double nl_tickets_for(const struct nl_view *v, const struct nl_policy_params *p,
		      const struct nl_view_thread *t, int from_cpu, int to_cpu,
		      int to_free);

/* From its hooks: it looks at no thread (monitor). */
int nl_policy_observes(enum nl_policy_kind k);
/* It may move threads, so page placement runs beside it (not monitor,
 * static). */
int nl_policy_moves(enum nl_policy_kind k);

/*
 * One policy step for view->domain: a pure function of the view, the
 * parameters, the carried state and the generator. Appends actions to plan
 * and sets plan->next_period_s. Returns 0 or -ENOMEM.
 */
int nl_policy_step(enum nl_policy_kind k, const struct nl_policy_params *p,
		   const struct nl_view *v, struct nl_policy_state *s,
		   struct nl_rng *rng, struct nl_plan *plan);

#endif
