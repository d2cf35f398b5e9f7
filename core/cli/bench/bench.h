/*
 * numalot bench: every scenario under every policy and baseline, several
 * seeds (docs/evaluation.md). Shared by cmd_bench.c (running),
 * bench_out.c (table, JSON) and bench_svg.c (chart).
 */
#ifndef NUMALOT_CLI_BENCH_H
#define NUMALOT_CLI_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "run.h"

struct nl_scenario;

struct nl_bench {
	int nscen, npol, nseeds;
	struct nl_scenario **sc;
	const char **files;    /* as given */
	enum nl_run_kind *pol; /* in column order */
	int ilinux, ibest;     /* columns of the references */
	/* [scenario][seed][policy]; a run read back from a job has no
	 * final_cpu */
	struct nl_run_result *runs;
	int jobs;
	double wall_s;
	const char *counters; /* the modelled backend (observe.h) */
};

static inline struct nl_run_result *nl_bench_at(const struct nl_bench *b,
						int scen, int seed, int pol)
{
	return &b->runs[((size_t)scen * b->nseeds + seed) * b->npol + pol];
}

/* Seeds are 1..nseeds. */
static inline uint64_t nl_bench_seed(int s)
{
	return (uint64_t)s + 1;
}

/*
 * --random=N --seed=S --save=DIR --perturb=F (bench_random.c): N random
 * scenarios run after the files given.
 */
#define NL_BENCH_MAX_RANDOM 10000
enum {
	NL_BENCH_OPT_RANDOM = 'R',
	NL_BENCH_OPT_SEED = 'E',
	NL_BENCH_OPT_SAVE = 'D',
	NL_BENCH_OPT_PERTURB = 'F',
};
struct nl_bench_random {
	int n; /* 0: none */
	uint64_t seed;
	int seed_set; /* else drawn from the clock, and printed */
	double perturb;
	const char *save; /* the folder, or NULL */
	char **names;	  /* [n] what the bench's files[] says for them */
};
/* One of those options: 0, or -1 after printing why. */
int nl_bench_random_option(struct nl_bench_random *r, int opt, const char *arg);
/* After the options: --seed, --save, --perturb need --random. */
int nl_bench_random_check(const struct nl_bench_random *r);
/* Append the scenarios to b->sc and b->files (room for r->n more), saving
 * each when asked: 0, or a negative errno after printing why. */
int nl_bench_random_load(struct nl_bench_random *r, struct nl_bench *b);
void nl_bench_random_free(struct nl_bench_random *r);

/* What a summary says about one policy, over every scenario and seed. */
struct nl_bench_stats {
	int n;
	double mean, median, min, max;
	double better_share; /* improvement > 0 */
	double worse_share;  /* improvement < -2% */
};

/* Which figure: makespan or mean process completion time. */
enum nl_bench_metric { NL_BENCH_MAKESPAN, NL_BENCH_MEAN_COMPLETION };

/* (T_linux - T) / T_linux of one run. */
double nl_bench_improvement(const struct nl_bench *b, int scen, int seed,
			    int pol, enum nl_bench_metric m);
/* (T - T_best-static) / T_best-static of one run (makespan). */
double nl_bench_gap(const struct nl_bench *b, int scen, int seed, int pol);
/* The mean over the seeds of one scenario's improvement (gap: gap). */
double nl_bench_scen_mean(const struct nl_bench *b, int scen, int pol,
			  enum nl_bench_metric m, int gap);
/* Improvements of pol over every scenario and seed (gap: gap instead). */
int nl_bench_stats(const struct nl_bench *b, int pol, enum nl_bench_metric m,
		   int gap, struct nl_bench_stats *out);

/* The same over the scenarios of one class only (NULL: all); -1 if none. */
int nl_bench_class_stats(const struct nl_bench *b, const char *klass, int pol,
			 enum nl_bench_metric m, int gap,
			 struct nl_bench_stats *out);
/* The distinct scenario classes, first-seen order; returns how many. */
int nl_bench_classes(const struct nl_bench *b, const char **out, int max);

void nl_bench_print(const struct nl_bench *b, FILE *f);
/* One run as JSON: what the bench's file holds for it, and what numalot
 * sim's report of a baseline starts from. */
struct json_object *nl_bench_run_json(const char *scenario, enum nl_run_kind k,
				      uint64_t seed,
				      const struct nl_run_result *r);
/* 0, or -1 after printing why. */
int nl_bench_write_json(const struct nl_bench *b, const char *path);
int nl_bench_write_svg(const struct nl_bench *b, const char *path);
/* The chart into f: 0, or -ENOMEM. */
int nl_bench_svg(const struct nl_bench *b, FILE *f);
/* The evaluation as one self-contained page (bench_html.c). */
int nl_bench_write_html(const struct nl_bench *b, const char *path);

/* The backends of a --counters list, in order, into c (room for max):
 * how many, or -1 after printing why. */
int nl_bench_parse_counters(const char *list, enum nl_sim_counters *c, int max);
/* An output path for backend c: path itself, or with several backends
 * r.json -> r.perf.json (malloc'd; NULL without memory). */
char *nl_bench_output_path(const char *path, enum nl_sim_counters c, int many);
/* --fail-worse: the runs of a policy more than pct % slower than linux
 * (makespan), each told on stderr; how many. */
int nl_bench_worse_runs(const struct nl_bench *b, double pct);

#endif
