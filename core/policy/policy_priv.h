/*
 * numalot: the scratch of one policy step and its helpers (step.c), shared
 * by the dispatcher (policy.c), the policies and the parts they call:
 * policy_move.c (destinations, tickets, draw), rollback.c, watch.c, harm.c.
 */
#ifndef NUMALOT_POLICY_PRIV_H
#define NUMALOT_POLICY_PRIV_H

#include "policy.h"

/* Where each thread is as the plan unfolds. */
struct step {
	const struct nl_view *v;
	const struct nl_policy_params *p;
	struct nl_policy_state *s;
	struct nl_plan *plan;
	int *cpu;    /* [nthreads] */
	int *head;   /* [ncpus] occupancy lists over cpu[] (busy threads) */
	int *next;   /* [nthreads] */
	char *moved; /* [nthreads] */
	int *order;  /* [nnodes] nodes by distance */
	/* While the moves of a thread whose data is on owner_node are built:
	 * the process that keeps that node's group (-1 none). */
	int owner_pid, owner_node;
	/* A destination of the draw: a CPU, the thread swapped with there
	 * (-1 none; cpu -1: stay), its tickets. */
	struct nl_destination {
		int cpu;
		int other;
		double tickets;
	} * opts; /* [ncpus + 1] */
};

int nl_plan_add(struct nl_plan *p, const struct nl_action *a);
int nl_memo_add(struct nl_policy_state *s, const struct nl_memo *m);

int nl_step_in_domain(const struct step *st, int i);
int nl_step_idle(const struct step *st, int i);
int nl_step_allows(const struct nl_view_thread *t, int cpu);
void nl_step_occ_move(struct step *st, int i, int to);
/* Node the thread i sits on in the plan (-1 unknown). */
int nl_step_node(const struct step *st, int i);
/* Data node of thread i when its data calls it elsewhere, else -1. */
int nl_step_data_node(const struct step *st, int i);
/*
 * Thread i's shares are its process's pages (process_share): do they call
 * it from its node to node P? Only when P holds more of the pages than of
 * the process's busy threads and its own node less than half its threads'
 * share (docs/algorithms.md, "What a node can measure").
 */
int nl_step_pages_say_away(const struct step *st, int i, int P);
/*
 * Thread u's shares are its process's pages, u on node D: does D hold at
 * least half the pages its process's busy threads there would have
 * touched themselves (first touch: u's own data may well be there)?
 */
int nl_step_pages_local(const struct step *st, int u, int D);
/* What IMAR2 judges a move of thread i by: its relative perf, or its perf
 * when it is alone in its process. */
double nl_step_judge_metric(const struct step *st, int i);
/* The cores k busy hardware threads of one core yield together, Y(k). */
double nl_smt_yield(int k);
/* The share of a core thread i gets from the busy threads on its core:
 * its progress where only its CPU share is measured is that times it. */
double nl_step_core_share(const struct step *st, int i);
/* Would thread i's migration to free CPU d make the kernel's balancer
 * push a thread off d's node that loses its data by it (balance.c)? */
int nl_balance_pushes_local(const struct step *st, int i, int d);
/* Moves that give a thread crowded within its full limit a CPU of it
 * (room.c). */
int nl_make_room(struct step *st);
/* Thread i shares its CPU with another busy thread. */
int nl_step_crowded(const struct step *st, int i);
/* ...and the OS cannot part them: numalot's pins keep it so (its own, or
 * a co-runner's that stays pinned this step), or its own binding has no
 * free CPU. Any other crowd is the OS's to spread. */
int nl_step_crowded_by_pins(const struct step *st, int i);
/* Some CPU of thread i's own binding (within what numalot may use) is
 * free: the OS can move it there itself. */
int nl_step_own_free_cpu(const struct step *st, int i);
/* Some CPU thread i may use is free. */
int nl_step_free_cpu(const struct step *st, int i);
/* Compute-bound: its measured OI is above compute_oi. */
int nl_step_compute_bound(const struct step *st, int i);
/*
 * Compute-bound for STEADY_PERIODS periods in a row: only such a thread is
 * sent off its data's node as a partner (a swap's, or the balancer's) as if
 * it lost nothing by it. A thread whose phases straddle compute_oi is
 * memory-bound in the next one (docs/algorithms.md, "Partners").
 */
#define STEADY_PERIODS 3
int nl_step_steady_compute(const struct step *st, int i);

/* The period multiplier doubled, up to maxm. */
void nl_step_lengthen(struct nl_policy_state *s, int maxm);
/*
 * Rollback (rollback.c) of the last step's moves: each judged on its own
 * threads (a swap as a pair), or, for the paper's judge, on the domain's
 * total (then 1 ends the step). 0, 1 or a negative errno.
 */
int nl_rollback_threads(struct step *st);
int nl_rollback_total(struct step *st);
/* Why thread i may be moved this step, if at all: its data is elsewhere,
 * or it shares its CPU (a binding the OS may not leave). */
int nl_step_has_reason(const struct step *st, int i);
/* Thread tid's index in the view (sorted by tid), or -1. */
int nl_step_find(const struct nl_view *v, int tid);

/*
 * The watch (watch.c): a kept move's thread is judged again every period
 * while it stays where numalot put it, against its metric before the
 * move; released to the OS after WATCH_LOW_PERIODS periods below
 * undo_threshold. 0 or a negative errno.
 */
int nl_watch_add(struct nl_policy_state *s, const struct nl_watch *w);
int nl_watch_step(struct step *st);

/*
 * The do-no-harm check (harm.c). Returns 1 when it takes this step (no
 * moves), 0 when the policy moves as usual, or a negative errno.
 */
int nl_harm_check(struct step *st);

/*
 * Draw and plan a move of candidate i (docs/algorithms.md): to its data
 * node (dest=data) or any node (dest=any), by lottery or best ticket, with
 * a stay outcome. memo: remember it for IMAR2's rollback.
 */
int nl_step_move(struct step *st, int i, struct nl_rng *rng, int memo);
/* Thread i has somewhere to go (a free CPU or a willing partner). */
int nl_step_can_move(struct step *st, int i);

/*
 * What a policy's file gives the dispatcher (policy.c; its row in
 * policy_list.h names it). A step: pin every thread when asked, then
 * (with candidates) release, roll back, watch, check for harm, and move
 * up to max_migrations of the candidates.
 */
struct nl_policy_hooks {
	int observes; /* a step plans nothing at all (monitor) */
	int pins_all; /* pin every thread at take-over, pin_new or not */
	int judged;   /* its moves are judged (rolled back, watched) on
			 the paper's judge too, not only on numalot's */
	/* The threads it would move this step into cand[], best first:
	 * their count or a negative errno. NULL: it never moves one. */
	int (*candidates)(struct step *st, struct nl_rng *rng, int *cand);
	/* After its moves (ncand candidates): set s->period_mult. NULL: the
	 * period is always period_s. */
	void (*period)(struct step *st, int ncand);
};

#define NL_POLICY(id, name, where, about, hooks)                               \
	extern const struct nl_policy_hooks hooks;
#include "policy_list.h"
#undef NL_POLICY

#endif
