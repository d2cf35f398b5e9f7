/* numalot: the policy parameters, described once: their defaults, setting
 * them by name, writing them out (policy.h). */
#include "policy.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const select_names[] = {"lottery", "best", NULL};
static const char *const rollback_names[] = {"all", "losers", NULL};
static const char *const dest_names[] = {"data", "any", NULL};
static const char *const swap_names[] = {"gain", "sum", NULL};
static const char *const judge_names[] = {"thread", "total", NULL};
static const char *const profile_names[] = {"numalot", "paper", NULL};

#define F(f) offsetof(struct nl_policy_params, f)
#define D(n, f, def, paper, lo, hi, unit, what)                                \
	{                                                                      \
		n, NL_PP_DOUBLE, F(f), def, paper, lo, hi, NULL, unit, what    \
	}
#define I(n, f, def, paper, lo, hi, unit, what)                                \
	{                                                                      \
		n, NL_PP_INT, F(f), def, paper, lo, hi, NULL, unit, what       \
	}
#define N(n, f, list, def, paper, what)                                        \
	{                                                                      \
		n, NL_PP_NAME, F(f), def, paper, 0, 1, list, "", what          \
	}
/* Every parameter, described once: parsing, the reports, numalot help
 * params and docs/algorithms.md's table come from here (tests/unit/
 * test_params.c holds the document to it). */
const struct nl_policy_param nl_policy_params_table[] = {
	N("profile", profile, profile_names, 0, 1,
	  "sets every parameter whose two defaults differ"),
	D("period", period_s, 1, 1, 0.001, 86400, "s", "base period"),
	I("period_max_mult", period_max_mult, 4, 4, 1, 1024, "x period",
	  "IMAR2 walks its period through 1, 2, 4 .. this x `period`"),
	D("undo_threshold", undo_threshold, 0.9, 0.9, 0, 1, "ratio",
	  "a move is undone when what it is judged on (`judge`) falls below "
	  "this times what it was"),
	D("perf_threshold", perf_threshold, 0.8, 0.8, 0, 100, "ratio",
	  "a thread below this relative perf is under-performing"),
	I("max_migrations", max_migrations, 5, 5, 0, 1000000, "threads",
	  "candidate threads per step (the original IMAR2 used 1)"),
	I("always_worst", always_worst, 0, 1, 0, 1, "flag",
	  "IMAR2 with `dest=any`: no thread below `perf_threshold` takes the "
	  "single worst one"),
	D("idle_share", idle_share, 0.05, 0.05, 0, 1, "of a CPU",
	  "a thread numalot has not pinned is idle below this CPU share: left "
	  "to the OS"),
	N("select", select, select_names, 0, 0,
	  "`lottery` draws a move by its tickets; `best` takes the highest"),
	N("rollback", rollback, rollback_names, 0, 0,
	  "`all` undoes every move of the last step; `losers` only those "
	  "whose thread lost perf"),
	I("pin_new", pin_new, 0, 1, 0, 1, "flag",
	  "pin every thread at take-over (`static` always does)"),
	N("dest", dest, dest_names, 0, 1,
	  "`data`: a thread moves only to its data's node; `any`: to any "
	  "node"),
	N("swap", swap, swap_names, 0, 1,
	  "`gain`: only with a partner that does not lose its data by it; "
	  "`sum`: any, scored by both threads' tickets"),
	N("judge", judge, judge_names, 0, 1,
	  "a move is judged on the moved threads' own relative throughput "
	  "(`thread`) or on the domain's total perf (`total`)"),
	D("data_share", data_share, 0.5, 0.5, 0, 1, "of its accesses",
	  "a thread is a candidate with this share of its accesses on one "
	  "other node"),
	D("compute_oi", compute_oi, 20, 20, 0, 1e9, "ops/B",
	  "above this measured OI a thread is compute-bound: never moved for "
	  "its data, a free swap partner (0 off; `dest=any` and `swap=sum` "
	  "never ask)"),
	D("hold_s", hold_s, 5, 0, 0, 86400, "s",
	  "a moved thread is left alone this long, three times as long after "
	  "a rollback"),
	I("oversub_release", oversub_release, 1, 0, 0, 1, "flag",
	  "hand the threads back to the OS while the domain's CPUs are "
	  "oversubscribed"),
	D("harm_check_s", harm_check_s, 20, 0, 0, 86400, "s",
	  "the do-no-harm check every this long (0 off)"),
	I("balance_partner", balance_partner, 1, 0, 0, 1, "flag",
	  "1: no move to a free CPU that would make the kernel's balancer "
	  "push a thread off its data's node (\"The balancer's partner\")"),
	I("sibling_spread", sibling_spread, 1, 0, 0, 1, "flag",
	  "1: with no idle core left, a free sibling of a busy core only for "
	  "a thread whose own core is busier; 0: as busy will do (\"SMT\")"),
	I("remote_relief", remote_relief, 1, 0, 0, 1, "flag",
	  "1: a pinned thread on a shared core may take an idle core of "
	  "another node, with op counts, when a whole core gains it more than "
	  "the distance from its data costs (\"SMT\")"),
	I("keep_bindings", keep_bindings, 0, 0, 0, 1, "flag",
	  "1: never move a thread outside its own binding (numactl, "
	  "--cpu-bind); 0: anywhere in its allocation"),
	I("pages", pages, 1, 0, 0, 1, "flag",
	  "page placement (\"Memory follows threads\")"),
	D("page_rate", page_rate, 1e9, 1e9, 0, 1e12, "B/s",
	  "page moves per process, at most"),
	D("page_misplaced", page_misplaced, 0.3, 0.3, 0, 1, "of its pages",
	  "act when this share of a process's pages is away from its "
	  "threads' nodes"),
	D("page_hold_s", page_hold_s, 60, 60, 0, 86400, "s",
	  "no page move again this long after one that did not pay off"),
	D("page_bw_oi", page_bw_oi, 0.5, 0.5, 0, 1e9, "ops/B",
	  "below this OI a process is bandwidth-bound: its pages spread over "
	  "its threads' nodes"),
	D("tickets.better", tickets.better, 4, 4, 0, 1e6, "tickets",
	  "a record on the destination node at least the current perf"),
	D("tickets.no_record", tickets.no_record, 2, 2, 0, 1e6, "tickets",
	  "no record on the destination node"),
	D("tickets.worse", tickets.worse, 1, 1, 0, 1e6, "tickets",
	  "a record on the destination node below the current perf"),
	D("tickets.free", tickets.free_cpu, 2, 2, 0, 1e6, "tickets",
	  "the destination CPU is free (a plain migration)"),
	D("tickets.preferred", tickets.preferred, 4, 4, 0, 1e6, "tickets",
	  "x local/distance(S, D) when D is the preferred node"),
	D("tickets.underperforming", tickets.underperforming, 3, 3, 0, 1e6,
	  "tickets", "relative perf below `perf_threshold`"),
	D("tickets.stay", tickets.stay, 1, 0, 0, 1e6, "tickets",
	  "the draw's \"stay\" outcome"),
	D("alpha", perf.alpha, 1, 1, 0, 16, "exponent",
	  "3DyRM exponent of the latency"),
	D("beta", perf.beta, 1, 1, 0, 16, "exponent",
	  "3DyRM exponent of the ops/s"),
	D("gamma", perf.gamma, 1, 1, 0, 16, "exponent",
	  "3DyRM exponent of the OI"),
	D("line_bytes", perf.line_bytes, 64, 64, 1, 4096, "B",
	  "bytes per last-level miss"),
	D("record_keep_s", perf.record_keep_s, 1, 1, 0, 86400, "s",
	  "a record keeps weight 1 this long"),
	D("record_decay_s3", perf.record_decay_s3, 30, 30, 1e-6, 1e12, "s^3",
	  "then its weight is exp(-age^3 / this), age in seconds"),
	D("record_min_weight", perf.record_min_weight, 0.05, 0.05, 0, 1,
	  "weight", "below this weight a record counts as \"no record\""),
};
#undef F
#undef D
#undef I
#undef N
#define params nl_policy_params_table
#define NPARAMS (sizeof(params) / sizeof(params[0]))
const size_t nl_policy_nparams = NPARAMS;

static void put(struct nl_policy_params *p, const struct nl_policy_param *d,
		double v)
{
	char *field = (char *)p + d->off;
	if (d->type == NL_PP_DOUBLE)
		*(double *)field = v;
	else
		*(int *)field = (int)v;
}

/*
 * The paper's raw behaviour and numalot's defaults differ only in the
 * parameters whose two defaults differ (docs/algorithms.md, "What numalot
 * changes, and why").
 */
void nl_policy_params_profile(struct nl_policy_params *p, enum nl_profile k)
{
	for (size_t i = 0; i < NPARAMS; i++)
		if (params[i].paper != params[i].def)
			put(p, &params[i],
			    k == NL_PROFILE_PAPER ? params[i].paper
						  : params[i].def);
	p->profile = k;
}

void nl_policy_params_default(struct nl_policy_params *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < NPARAMS; i++)
		put(p, &params[i], params[i].def);
}

static int pick_name(const char *const *names, const char *value)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], value) == 0)
			return i;
	return -1;
}

int nl_policy_param_set(struct nl_policy_params *p, const char *name,
			const char *value, char *err, size_t errlen)
{
	const struct nl_policy_param *d = NULL;
	char *end;
	double v;

	for (size_t i = 0; i < NPARAMS; i++)
		if (strcmp(params[i].name, name) == 0)
			d = &params[i];
	if (!d) {
		size_t len = 0;
		if (err && errlen) {
			len = (size_t)snprintf(
				err, errlen,
				"unknown parameter \"%s\" (valid:", name);
			for (size_t i = 0; i < NPARAMS && len < errlen; i++)
				len += (size_t)snprintf(err + len, errlen - len,
							"%s %s", i ? "," : "",
							params[i].name);
			if (len < errlen)
				snprintf(err + len, errlen - len, ")");
		}
		return -ENOENT;
	}
	char *field = (char *)p + d->off;
	if (d->type == NL_PP_NAME) {
		int k = pick_name(d->names, value);
		if (k < 0) {
			snprintf(err, errlen,
				 "parameter %s: \"%s\" is not one of %s, %s",
				 name, value, d->names[0], d->names[1]);
			return -EINVAL;
		}
		/* A profile sets every parameter it decides. */
		if (d->off == offsetof(struct nl_policy_params, profile))
			nl_policy_params_profile(p, (enum nl_profile)k);
		*(int *)field = k;
		return 0;
	}
	errno = 0;
	v = strtod(value, &end);
	if (end == value || *end || errno || !isfinite(v) || v < d->min ||
	    v > d->max || (d->type == NL_PP_INT && v != floor(v))) {
		snprintf(err, errlen,
			 "parameter %s: \"%s\" is not %s from %g to %g", name,
			 value,
			 d->type == NL_PP_INT ? "a whole number" : "a number",
			 d->min, d->max);
		return -EINVAL;
	}
	if (d->type == NL_PP_INT)
		*(int *)field = (int)v;
	else
		*(double *)field = v;
	return 0;
}

struct json_object *nl_policy_params_json(const struct nl_policy_params *p)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < NPARAMS; i++) {
		const struct nl_policy_param *d = &params[i];
		const char *field = (const char *)p + d->off;
		struct json_object *v;
		switch (d->type) {
		case NL_PP_DOUBLE:
			v = json_object_new_double(*(const double *)field);
			break;
		case NL_PP_INT:
			v = json_object_new_int(*(const int *)field);
			break;
		default:
			v = json_object_new_string(
				d->names[*(const int *)field]);
			break;
		}
		json_object_object_add(o, d->name, v);
	}
	return o;
}

/* A default as the table of docs/algorithms.md writes it. */
static void value_md(FILE *f, const struct nl_policy_param *d, double v)
{
	if (d->type == NL_PP_NAME)
		fprintf(f, "`%s`", d->names[(int)v]);
	else
		fprintf(f, "%g", v);
}

void nl_policy_params_markdown(FILE *f)
{
	fputs("| parameter | numalot | paper | range | unit | meaning |\n"
	      "| --- | --- | --- | --- | --- | --- |\n",
	      f);
	for (size_t i = 0; i < NPARAMS; i++) {
		const struct nl_policy_param *d = &params[i];
		fprintf(f, "| `%s` | ", d->name);
		value_md(f, d, d->def);
		fputs(" | ", f);
		value_md(f, d, d->paper);
		fputs(" | ", f);
		if (d->type == NL_PP_NAME)
			for (int k = 0; d->names[k]; k++)
				fprintf(f, "%s`%s`", k ? ", " : "",
					d->names[k]);
		else
			fprintf(f, "%g to %g", d->min, d->max);
		fprintf(f, " | %s | %s |\n", d->unit, d->what);
	}
}
