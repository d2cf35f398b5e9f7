/* numalot: policy parameters, their defaults and setting them by name. */
#include "policy.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The paper's raw behaviour and numalot's defaults differ only in these
 * (docs/algorithms.md, "What numalot changes, and why").
 */
void nl_policy_params_profile(struct nl_policy_params *p, enum nl_profile k)
{
	int paper = k == NL_PROFILE_PAPER;

	p->profile = k;
	p->pin_new = paper;
	p->dest = paper ? NL_DEST_ANY : NL_DEST_DATA;
	p->swap = paper ? NL_SWAP_SUM : NL_SWAP_GAIN;
	p->judge = paper ? NL_JUDGE_TOTAL : NL_JUDGE_THREAD;
	p->always_worst = paper;
	p->tickets.stay = paper ? 0 : 1;
	p->hold_s = paper ? 0 : 5;
	p->oversub_release = !paper;
	p->harm_check_s = paper ? 0 : 20;
	p->pages = !paper; /* the paper moved threads only */
}

void nl_policy_params_default(struct nl_policy_params *p)
{
	memset(p, 0, sizeof(*p));
	p->period_s = 1.0;
	p->period_max_mult = 4;
	p->undo_threshold = 0.9;
	p->perf_threshold = 0.8;
	p->max_migrations = 5;
	p->idle_share = 0.05;
	p->select = NL_SELECT_LOTTERY;
	p->rollback = NL_ROLLBACK_ALL;
	p->data_share = 0.5;
	p->compute_oi = 20;
	p->tickets = (struct nl_tickets){
		.better = 4,
		.no_record = 2,
		.worse = 1,
		.free_cpu = 2,
		.preferred = 4,
		.underperforming = 3,
	};
	p->page_rate = 1e9;
	p->page_misplaced = 0.3;
	p->page_hold_s = 60;
	p->page_bw_oi = 0.5;
	nl_policy_params_profile(p, NL_PROFILE_NUMALOT);
	nl_perf_params_default(&p->perf);
}

enum ptype { P_DOUBLE, P_INT, P_NAME };

struct pdesc {
	const char *name;
	enum ptype type;
	size_t off;
	double min, max;
	const char *const *names; /* P_NAME: the values, by enum order */
};

static const char *const select_names[] = {"lottery", "best", NULL};
static const char *const rollback_names[] = {"all", "losers", NULL};
static const char *const dest_names[] = {"data", "any", NULL};
static const char *const swap_names[] = {"gain", "sum", NULL};
static const char *const judge_names[] = {"thread", "total", NULL};
static const char *const profile_names[] = {"numalot", "paper", NULL};

#define D(n, f, lo, hi)                                                        \
	{                                                                      \
		n, P_DOUBLE, offsetof(struct nl_policy_params, f), lo, hi,     \
			NULL                                                   \
	}
#define I(n, f, lo, hi)                                                        \
	{                                                                      \
		n, P_INT, offsetof(struct nl_policy_params, f), lo, hi, NULL   \
	}
#define N(n, f, list)                                                          \
	{                                                                      \
		n, P_NAME, offsetof(struct nl_policy_params, f), 0, 0, list    \
	}
static const struct pdesc params[] = {
	N("profile", profile, profile_names),
	D("period", period_s, 0.001, 86400),
	I("period_max_mult", period_max_mult, 1, 1024),
	D("undo_threshold", undo_threshold, 0, 1),
	D("perf_threshold", perf_threshold, 0, 100),
	I("max_migrations", max_migrations, 0, 1000000),
	I("always_worst", always_worst, 0, 1),
	D("idle_share", idle_share, 0, 1),
	N("select", select, select_names),
	N("rollback", rollback, rollback_names),
	I("pin_new", pin_new, 0, 1),
	N("dest", dest, dest_names),
	N("swap", swap, swap_names),
	N("judge", judge, judge_names),
	D("data_share", data_share, 0, 1),
	D("compute_oi", compute_oi, 0, 1e9),
	D("hold_s", hold_s, 0, 86400),
	I("oversub_release", oversub_release, 0, 1),
	D("harm_check_s", harm_check_s, 0, 86400),
	I("keep_bindings", keep_bindings, 0, 1),
	I("pages", pages, 0, 1),
	D("page_rate", page_rate, 0, 1e12),
	D("page_misplaced", page_misplaced, 0, 1),
	D("page_hold_s", page_hold_s, 0, 86400),
	D("page_bw_oi", page_bw_oi, 0, 1e9),
	D("tickets.better", tickets.better, 0, 1e6),
	D("tickets.no_record", tickets.no_record, 0, 1e6),
	D("tickets.worse", tickets.worse, 0, 1e6),
	D("tickets.free", tickets.free_cpu, 0, 1e6),
	D("tickets.preferred", tickets.preferred, 0, 1e6),
	D("tickets.underperforming", tickets.underperforming, 0, 1e6),
	D("tickets.stay", tickets.stay, 0, 1e6),
	D("alpha", perf.alpha, 0, 16),
	D("beta", perf.beta, 0, 16),
	D("gamma", perf.gamma, 0, 16),
	D("line_bytes", perf.line_bytes, 1, 4096),
	D("record_keep_s", perf.record_keep_s, 0, 86400),
	D("record_decay_s3", perf.record_decay_s3, 1e-6, 1e12),
	D("record_min_weight", perf.record_min_weight, 0, 1),
};
#undef D
#undef I
#undef N
#define NPARAMS (sizeof(params) / sizeof(params[0]))

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
	const struct pdesc *d = NULL;
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
	if (d->type == P_NAME) {
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
	    v > d->max || (d->type == P_INT && v != floor(v))) {
		snprintf(err, errlen,
			 "parameter %s: \"%s\" is not %s from %g to %g", name,
			 value,
			 d->type == P_INT ? "a whole number" : "a number",
			 d->min, d->max);
		return -EINVAL;
	}
	if (d->type == P_INT)
		*(int *)field = (int)v;
	else
		*(double *)field = v;
	return 0;
}

struct json_object *nl_policy_params_json(const struct nl_policy_params *p)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < NPARAMS; i++) {
		const struct pdesc *d = &params[i];
		const char *field = (const char *)p + d->off;
		struct json_object *v;
		switch (d->type) {
		case P_DOUBLE:
			v = json_object_new_double(*(const double *)field);
			break;
		case P_INT:
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
