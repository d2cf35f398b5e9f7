/* numalot: policy parameters, their defaults and setting them by name. */
#include "policy.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nl_policy_params_default(struct nl_policy_params *p)
{
	memset(p, 0, sizeof(*p));
	p->period_s = 1.0;
	p->period_max_mult = 4;
	p->undo_threshold = 0.9;
	p->perf_threshold = 0.8;
	p->max_migrations = 5;
	p->always_worst = 1;
	p->idle_share = 0.05;
	p->select = NL_SELECT_LOTTERY;
	p->rollback = NL_ROLLBACK_ALL;
	p->tickets = (struct nl_tickets){
		.better = 4,
		.no_record = 2,
		.worse = 1,
		.free_cpu = 2,
		.preferred = 4,
		.underperforming = 3,
	};
	nl_perf_params_default(&p->perf);
}

enum ptype { P_DOUBLE, P_INT, P_SELECT, P_ROLLBACK };

struct pdesc {
	const char *name;
	enum ptype type;
	size_t off;
	double min, max;
};

#define D(n, f, lo, hi)                                                        \
	{                                                                      \
		n, P_DOUBLE, offsetof(struct nl_policy_params, f), lo, hi      \
	}
#define I(n, f, lo, hi)                                                        \
	{                                                                      \
		n, P_INT, offsetof(struct nl_policy_params, f), lo, hi         \
	}
static const struct pdesc params[] = {
	D("period", period_s, 0.001, 86400),
	I("period_max_mult", period_max_mult, 1, 1024),
	D("undo_threshold", undo_threshold, 0, 1),
	D("perf_threshold", perf_threshold, 0, 100),
	I("max_migrations", max_migrations, 0, 1000000),
	I("always_worst", always_worst, 0, 1),
	D("idle_share", idle_share, 0, 1),
	{"select", P_SELECT, offsetof(struct nl_policy_params, select), 0, 0},
	{"rollback", P_ROLLBACK, offsetof(struct nl_policy_params, rollback), 0,
	 0},
	D("tickets.better", tickets.better, 0, 1e6),
	D("tickets.no_record", tickets.no_record, 0, 1e6),
	D("tickets.worse", tickets.worse, 0, 1e6),
	D("tickets.free", tickets.free_cpu, 0, 1e6),
	D("tickets.preferred", tickets.preferred, 0, 1e6),
	D("tickets.underperforming", tickets.underperforming, 0, 1e6),
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
#define NPARAMS (sizeof(params) / sizeof(params[0]))

static const char *const select_names[] = {"lottery", "best"};
static const char *const rollback_names[] = {"all", "losers"};

static int pick_name(const char *const *names, int n, const char *value)
{
	for (int i = 0; i < n; i++)
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
	if (d->type == P_SELECT || d->type == P_ROLLBACK) {
		const char *const *names =
			d->type == P_SELECT ? select_names : rollback_names;
		int k = pick_name(names, 2, value);
		if (k < 0) {
			snprintf(err, errlen,
				 "parameter %s: \"%s\" is not one of %s, %s",
				 name, value, names[0], names[1]);
			return -EINVAL;
		}
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
		case P_SELECT:
			v = json_object_new_string(
				select_names[*(const int *)field]);
			break;
		default:
			v = json_object_new_string(
				rollback_names[*(const int *)field]);
			break;
		}
		json_object_object_add(o, d->name, v);
	}
	return o;
}
