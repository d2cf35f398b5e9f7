/*
 * numalot: one scenario on the simulated node under a policy (the engine on
 * the simulated machine) or a baseline (docs/machine-model.md,
 * "Baselines"), the OS model underneath every run alike: what `numalot sim`
 * and `numalot bench` run.
 */
#ifndef NUMALOT_SIM_RUN_H
#define NUMALOT_SIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "observe.h"
#include "os_mode.h"
#include "policy.h"

struct nl_engine;
struct nl_machine;
struct nl_scenario;

/*
 * A run: a policy of the registry (policy_list.h) with the parameters
 * given, a baseline, or a policy with NL_POLICY_PAPER under profile=paper
 * ("<name>-paper"). Numbers of no run (a policy without a paper run) have
 * no name and are refused.
 */
enum nl_run_kind {
	/* 0 .. NL_POLICY_COUNT - 1: the policy of that kind */
	NL_RUN_LINUX = NL_POLICY_COUNT,
	NL_RUN_LINUX_NONUMA,
	NL_RUN_BEST_STATIC,
	NL_RUN_IDEAL_LOCALITY,
	NL_RUN_PAPER, /* + a policy's kind: that policy, profile=paper */
	NL_RUN_COUNT = NL_RUN_PAPER + NL_POLICY_COUNT,
	/* The runs numalot's own code names. */
	NL_RUN_IMAR2 = NL_POLICY_IMAR2,
	NL_RUN_LBMA = NL_POLICY_LBMA,
	NL_RUN_MONITOR = NL_POLICY_MONITOR,
	NL_RUN_STATIC = NL_POLICY_STATIC,
	NL_RUN_IMAR2_PAPER = NL_RUN_PAPER + NL_POLICY_IMAR2,
	NL_RUN_LBMA_PAPER = NL_RUN_PAPER + NL_POLICY_LBMA,
};

/* Its name, or "?" for a number of no run. */
const char *nl_run_name(enum nl_run_kind k);
/* 0 and *k, or -EINVAL for an unknown name. */
int nl_run_from_name(const char *name, enum nl_run_kind *k);
/* The policies (sorted), the baselines, the paper runs (sorted): "imar2,
 * lbma, monitor, static, linux, linux-nonuma, best-static, ideal-locality,
 * imar2-paper, lbma-paper" */
const char *nl_run_names(void);
/* 1 and *p for a policy the engine runs, 0 for a baseline. */
int nl_run_engine_policy(enum nl_run_kind k, enum nl_policy_kind *p);
/* The profile a run sets over the parameters given: 1 and *pr (paper
 * runs), or 0 (the parameters as given). */
int nl_run_profile(enum nl_run_kind k, enum nl_profile *pr);

struct nl_run_opts {
	struct nl_policy_params params; /* of the engine's policies */
	int os_set;			/* override the scenario's "os" */
	enum nl_os_mode os_mode;
	int search_evals; /* evaluations per climb of the search */
	/* What the policies' counters show (observe.h; 0: pebs). */
	enum nl_sim_counters counters;
	/* A policy's run and the linux baselines: a timeline sample every
	 * trace_s simulated seconds into the json-c array trace (model.h,
	 * nl_model_opts; 0 or NULL: none). */
	double trace_s;
	struct json_object *trace;
};

void nl_run_opts_default(struct nl_run_opts *o);

/* What one run gives. Times are simulated seconds from the start. */
struct nl_run_result {
	int nprocs, nthreads;
	double *start_s;   /* [nprocs] */
	double *end_s;	   /* [nprocs]; < 0 if unfinished */
	double stop_s;	   /* when the simulation stopped */
	double makespan_s; /* the last end (stop_s if unfinished) */
	/* Mean over processes of end - start (stop - start if unfinished). */
	double mean_completion_s;
	int unfinished;		     /* processes cut by duration_s */
	int migrations;		     /* thread moves by numalot (swap: 2) */
	int os_migrations;	     /* thread moves by the simulated OS */
	double pages_migrated_bytes; /* by the OS model */
	double pages_moved_bytes;    /* by numalot */
	int *final_cpu; /* [nthreads, tid order] the CPU each ended on */
};

void nl_run_result_free(struct nl_run_result *r);
/* A deep copy of src into dst. 0 or -ENOMEM (dst then empty). */
int nl_run_result_copy(struct nl_run_result *dst,
		       const struct nl_run_result *src);

/*
 * Run an engine policy to the end on a fresh simulated machine: one
 * migration domain per job (generator seed + job). The caller frees *m and
 * *e (for reports). 0, or a negative errno with err set.
 */
int nl_run_engine(const struct nl_scenario *sc, enum nl_policy_kind k,
		  const struct nl_run_opts *o, uint64_t seed,
		  struct nl_machine **m, struct nl_engine **e, char *err,
		  size_t errlen);

/* Fill r from a finished simulated machine and its engine (or NULL). */
int nl_run_result_fill(struct nl_machine *m, struct nl_engine *e,
		       struct nl_run_result *r);

/*
 * Every run of one scenario and seed, each made once on demand: the
 * baselines need the policies' runs (their final placements start the
 * search), and a caller asking for several gets them without repeats.
 * The scenario must outlive the set.
 */
struct nl_runs;

int nl_runs_create(const struct nl_scenario *sc, uint64_t seed,
		   const struct nl_run_opts *o, struct nl_runs **out);
/* The run of k (owned by the set). 0, or a negative errno with err set. */
int nl_runs_get(struct nl_runs *rs, enum nl_run_kind k,
		const struct nl_run_result **out, char *err, size_t errlen);
void nl_runs_free(struct nl_runs *rs);

#endif
