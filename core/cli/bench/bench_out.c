/*
 * numalot bench: what a bench prints and writes (docs/evaluation.md):
 * per scenario, each policy's improvement over linux and its gap to
 * best-static (means over the seeds); per policy, the distribution over
 * every scenario and seed; and the JSON file with every run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "bench.h"
#include "cli_out.h"
#include "scenario.h"

#define CMD "bench"
/* "More than 2% worse" (docs/evaluation.md). */
#define WORSE_BEYOND -0.02

static double metric(const struct nl_run_result *r, enum nl_bench_metric m)
{
	return m == NL_BENCH_MAKESPAN ? r->makespan_s : r->mean_completion_s;
}

double nl_bench_improvement(const struct nl_bench *b, int scen, int seed,
			    int pol, enum nl_bench_metric m)
{
	double ref = metric(nl_bench_at(b, scen, seed, b->ilinux), m);

	return (ref - metric(nl_bench_at(b, scen, seed, pol), m)) / ref;
}

double nl_bench_gap(const struct nl_bench *b, int scen, int seed, int pol)
{
	double best = nl_bench_at(b, scen, seed, b->ibest)->makespan_s;

	return (nl_bench_at(b, scen, seed, pol)->makespan_s - best) / best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int nl_bench_stats(const struct nl_bench *b, int pol, enum nl_bench_metric m,
		   int gap, struct nl_bench_stats *out)
{
	return nl_bench_class_stats(b, NULL, pol, m, gap, out);
}

int nl_bench_class_stats(const struct nl_bench *b, const char *klass, int pol,
			 enum nl_bench_metric m, int gap,
			 struct nl_bench_stats *out)
{
	int n = 0, k = 0, better = 0, worse = 0;
	double *v = malloc(sizeof(double) * ((size_t)b->nscen * b->nseeds + 1)),
	       sum = 0;

	memset(out, 0, sizeof(*out));
	if (!v)
		return -1;
	for (int i = 0; i < b->nscen; i++)
		for (int s = 0; s < b->nseeds; s++) {
			if (klass &&
			    strcmp(nl_scenario_class(b->sc[i]), klass) != 0)
				continue;
			double x = gap ? nl_bench_gap(b, i, s, pol)
				       : nl_bench_improvement(b, i, s, pol, m);
			v[k++] = x;
			sum += x;
			better += x > 0;
			worse += x < WORSE_BEYOND;
			n++;
		}
	if (n == 0) {
		free(v);
		return -1;
	}
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	out->n = n;
	out->mean = sum / n;
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	out->min = v[0];
	out->max = v[n - 1];
	out->better_share = (double)better / n;
	out->worse_share = (double)worse / n;
	free(v);
	return 0;
}

double nl_bench_scen_mean(const struct nl_bench *b, int scen, int pol,
			  enum nl_bench_metric m, int gap)
{
	double sum = 0;

	for (int s = 0; s < b->nseeds; s++)
		sum += gap ? nl_bench_gap(b, scen, s, pol)
			   : nl_bench_improvement(b, scen, s, pol, m);
	return sum / b->nseeds;
}

static int name_width(const struct nl_bench *b)
{
	int w = 8;

	for (int i = 0; i < b->nscen; i++) {
		int n = (int)strlen(nl_scenario_name(b->sc[i]));
		if (n > w)
			w = n;
	}
	return w;
}

static int col_width(enum nl_run_kind k)
{
	int n = (int)strlen(nl_run_name(k)) + 2;
	return n < 8 ? 8 : n;
}

/* A table per scenario, one column per policy but the reference(s). */
static void print_scenarios(const struct nl_bench *b, FILE *f,
			    const char *title, enum nl_bench_metric m, int gap)
{
	int w = name_width(b);

	fprintf(f, "\n%s\n%-*s", title, w, "scenario");
	for (int p = 0; p < b->npol; p++)
		if (p != b->ilinux && !(gap && p == b->ibest))
			fprintf(f, "%*s", col_width(b->pol[p]),
				nl_run_name(b->pol[p]));
	fputc('\n', f);
	for (int i = 0; i < b->nscen; i++) {
		fprintf(f, "%-*s", w, nl_scenario_name(b->sc[i]));
		for (int p = 0; p < b->npol; p++)
			if (p != b->ilinux && !(gap && p == b->ibest))
				fprintf(f, "%*.1f%%", col_width(b->pol[p]) - 1,
					100 * nl_bench_scen_mean(b, i, p, m,
								 gap));
		fputc('\n', f);
	}
}

static void print_summary(const struct nl_bench *b, FILE *f, const char *title,
			  enum nl_bench_metric m)
{
	int gap = m == NL_BENCH_MAKESPAN;

	fprintf(f, "\n%s\n%-16s %7s %7s %7s %7s %7s %9s%s\n", title, "policy",
		"mean", "median", "min", "max", "better", ">2% worse",
		gap ? "  gap to best-static" : "");
	for (int p = 0; p < b->npol; p++) {
		struct nl_bench_stats s, g;

		if (p == b->ilinux || nl_bench_stats(b, p, m, 0, &s) < 0 ||
		    nl_bench_stats(b, p, NL_BENCH_MAKESPAN, 1, &g) < 0)
			continue;
		fprintf(f,
			"%-16s %+6.1f%% %+6.1f%% %+6.1f%% %+6.1f%% %6.0f%% "
			"%8.0f%%",
			nl_run_name(b->pol[p]), 100 * s.mean, 100 * s.median,
			100 * s.min, 100 * s.max, 100 * s.better_share,
			100 * s.worse_share);
		if (gap)
			fprintf(f, "  %+6.1f%% (median %+.1f%%)", 100 * g.mean,
				100 * g.median);
		fputc('\n', f);
	}
}

/* The distinct classes of the scenarios, in first-seen order. */
int nl_bench_classes(const struct nl_bench *b, const char **out, int max)
{
	int n = 0;
	for (int i = 0; i < b->nscen; i++) {
		const char *c = nl_scenario_class(b->sc[i]);
		int seen = 0;
		for (int j = 0; j < n; j++)
			seen |= strcmp(out[j], c) == 0;
		if (!seen && n < max)
			out[n++] = c;
	}
	return n;
}

/* The makespan summary of each class, when there are several. */
static void print_classes(const struct nl_bench *b, FILE *f)
{
	const char *cls[32];
	int n = nl_bench_classes(b, cls, 32);

	if (n < 2)
		return;
	fprintf(f, "\nMakespan by class: improvement over linux (mean, "
		   "better, >2%% worse), gap to best-static\n");
	for (int c = 0; c < n; c++) {
		int runs = 0;
		for (int i = 0; i < b->nscen; i++)
			runs += strcmp(nl_scenario_class(b->sc[i]), cls[c]) ==
				0;
		fprintf(f, "class %s (%d runs per policy)\n", cls[c],
			runs * b->nseeds);
		for (int p = 0; p < b->npol; p++) {
			struct nl_bench_stats s, g;
			if (p == b->ilinux ||
			    nl_bench_class_stats(b, cls[c], p,
						 NL_BENCH_MAKESPAN, 0,
						 &s) < 0 ||
			    nl_bench_class_stats(b, cls[c], p,
						 NL_BENCH_MAKESPAN, 1, &g) < 0)
				continue;
			fprintf(f,
				"  %-16s %+6.1f%% %6.0f%% %6.0f%%  %+6.1f%%\n",
				nl_run_name(b->pol[p]), 100 * s.mean,
				100 * s.better_share, 100 * s.worse_share,
				100 * g.mean);
		}
	}
}

void nl_bench_print(const struct nl_bench *b, FILE *f)
{
	int unfinished = 0;

	fprintf(f,
		"numalot bench: %d scenarios x %d policies x %d seeds = %d "
		"runs, %d job%s, %.1f s; counters: %s\n",
		b->nscen, b->npol, b->nseeds, b->nscen * b->npol * b->nseeds,
		b->jobs, b->jobs > 1 ? "s" : "", b->wall_s,
		b->counters ? b->counters : "pebs");
	fprintf(f, "Improvement over linux: (T_linux - T) / T_linux, + is "
		   "faster; gap to best-static: (T - T_best) / T_best, + is "
		   "slower.\nPer scenario: mean over the seeds.\n");
	print_scenarios(b, f, "Makespan: improvement over linux",
			NL_BENCH_MAKESPAN, 0);
	print_scenarios(b, f,
			"Mean process completion time: improvement over "
			"linux",
			NL_BENCH_MEAN_COMPLETION, 0);
	print_scenarios(b, f, "Makespan: gap to best-static", NL_BENCH_MAKESPAN,
			1);
	fprintf(f,
		"\nOver every scenario and seed (%d runs per policy); "
		"better: faster than linux.\n",
		b->nscen * b->nseeds);
	print_summary(b, f,
		      "Makespan: improvement over linux, and mean gap "
		      "to best-static",
		      NL_BENCH_MAKESPAN);
	print_summary(b, f,
		      "Mean process completion time: improvement over "
		      "linux",
		      NL_BENCH_MEAN_COMPLETION);
	print_classes(b, f);
	for (size_t i = 0; i < (size_t)b->nscen * b->nseeds * b->npol; i++)
		unfinished += b->runs[i].unfinished;
	if (unfinished)
		fprintf(f,
			"\nnote: %d process%s stopped at duration_s; their "
			"times count up to the stop.\n",
			unfinished, unfinished > 1 ? "es" : "");
}

static struct json_object *stats_json(const struct nl_bench_stats *s, int gap)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "mean", json_object_new_double(s->mean));
	json_object_object_add(o, "median", json_object_new_double(s->median));
	json_object_object_add(o, "min", json_object_new_double(s->min));
	json_object_object_add(o, "max", json_object_new_double(s->max));
	if (!gap) {
		json_object_object_add(o, "better_share",
				       json_object_new_double(s->better_share));
		json_object_object_add(o, "worse_2pct_share",
				       json_object_new_double(s->worse_share));
	}
	return o;
}

struct json_object *nl_bench_run_json(const char *scenario, enum nl_run_kind k,
				      uint64_t seed,
				      const struct nl_run_result *r)
{
	struct json_object *o = json_object_new_object();
	struct json_object *c = json_object_new_array();
	struct json_object *e = json_object_new_array();

	json_object_object_add(o, "scenario", json_object_new_string(scenario));
	json_object_object_add(o, "policy",
			       json_object_new_string(nl_run_name(k)));
	json_object_object_add(o, "seed", json_object_new_uint64(seed));
	for (int i = 0; i < r->nprocs; i++) {
		int done = r->end_s[i] >= 0;
		json_object_array_add(
			c, done ? json_object_new_double(r->end_s[i] -
							 r->start_s[i])
				: NULL);
		json_object_array_add(
			e, done ? json_object_new_double(r->end_s[i]) : NULL);
	}
	json_object_object_add(o, "completion_s", c);
	json_object_object_add(o, "end_s", e);
	json_object_object_add(o, "makespan_s",
			       json_object_new_double(r->makespan_s));
	json_object_object_add(o, "mean_completion_s",
			       json_object_new_double(r->mean_completion_s));
	json_object_object_add(o, "migrations",
			       json_object_new_int(r->migrations));
	json_object_object_add(o, "os_migrations",
			       json_object_new_int(r->os_migrations));
	json_object_object_add(o, "pages_migrated_bytes",
			       json_object_new_double(r->pages_migrated_bytes));
	json_object_object_add(o, "pages_moved_bytes",
			       json_object_new_double(r->pages_moved_bytes));
	json_object_object_add(o, "unfinished",
			       json_object_new_int(r->unfinished));
	return o;
}

static struct json_object *summary_json(const struct nl_bench *b)
{
	struct json_object *o = json_object_new_object();
	struct json_object *ps = json_object_new_array();
	struct json_object *pp = json_object_new_array();

	for (int i = 0; i < b->nscen; i++)
		for (int p = 0; p < b->npol; p++) {
			struct json_object *x = json_object_new_object();
			json_object_object_add(
				x, "scenario",
				json_object_new_string(
					nl_scenario_name(b->sc[i])));
			json_object_object_add(
				x, "policy",
				json_object_new_string(nl_run_name(b->pol[p])));
			json_object_object_add(
				x, "makespan_improvement",
				json_object_new_double(nl_bench_scen_mean(
					b, i, p, NL_BENCH_MAKESPAN, 0)));
			json_object_object_add(
				x, "mean_completion_improvement",
				json_object_new_double(nl_bench_scen_mean(
					b, i, p, NL_BENCH_MEAN_COMPLETION, 0)));
			json_object_object_add(
				x, "gap_to_best_static",
				json_object_new_double(nl_bench_scen_mean(
					b, i, p, NL_BENCH_MAKESPAN, 1)));
			json_object_array_add(ps, x);
		}
	for (int p = 0; p < b->npol; p++) {
		struct json_object *x = json_object_new_object();
		struct nl_bench_stats s;

		json_object_object_add(
			x, "policy",
			json_object_new_string(nl_run_name(b->pol[p])));
		json_object_object_add(
			x, "runs", json_object_new_int(b->nscen * b->nseeds));
		nl_bench_stats(b, p, NL_BENCH_MAKESPAN, 0, &s);
		json_object_object_add(x, "makespan_improvement",
				       stats_json(&s, 0));
		nl_bench_stats(b, p, NL_BENCH_MEAN_COMPLETION, 0, &s);
		json_object_object_add(x, "mean_completion_improvement",
				       stats_json(&s, 0));
		nl_bench_stats(b, p, NL_BENCH_MAKESPAN, 1, &s);
		json_object_object_add(x, "gap_to_best_static",
				       stats_json(&s, 1));
		json_object_array_add(pp, x);
	}
	json_object_object_add(o, "per_scenario", ps);
	json_object_object_add(o, "per_policy", pp);
	return o;
}

int nl_bench_write_json(const struct nl_bench *b, const char *path)
{
	struct json_object *o = json_object_new_object();
	struct json_object *pol = json_object_new_array();
	struct json_object *scen = json_object_new_array();
	struct json_object *runs = json_object_new_array();
	int rc;

	json_object_object_add(o, "reference", json_object_new_string("linux"));
	json_object_object_add(o, "seeds", json_object_new_int(b->nseeds));
	json_object_object_add(
		o, "counters",
		json_object_new_string(b->counters ? b->counters : "pebs"));
	for (int p = 0; p < b->npol; p++)
		json_object_array_add(
			pol, json_object_new_string(nl_run_name(b->pol[p])));
	json_object_object_add(o, "policies", pol);
	for (int i = 0; i < b->nscen; i++) {
		struct json_object *x = json_object_new_object();
		struct json_object *names = json_object_new_array();
		json_object_object_add(
			x, "name",
			json_object_new_string(nl_scenario_name(b->sc[i])));
		json_object_object_add(x, "file",
				       json_object_new_string(b->files[i]));
		struct nl_scenario_proc sp;
		for (int k = 0; nl_scenario_proc(b->sc[i], k, &sp) == 0; k++)
			json_object_array_add(names,
					      json_object_new_string(sp.name));
		json_object_object_add(x, "processes", names);
		json_object_array_add(scen, x);
	}
	json_object_object_add(o, "scenarios", scen);
	for (int i = 0; i < b->nscen; i++)
		for (int s = 0; s < b->nseeds; s++)
			for (int p = 0; p < b->npol; p++)
				json_object_array_add(
					runs,
					nl_bench_run_json(
						nl_scenario_name(b->sc[i]),
						b->pol[p], nl_bench_seed(s),
						nl_bench_at(b, i, s, p)));
	json_object_object_add(o, "runs", runs);
	json_object_object_add(o, "summary", summary_json(b));
	rc = nl_cli_write_json(CMD, path, o);
	json_object_put(o);
	return rc;
}
