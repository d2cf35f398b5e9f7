/* numalot: a report's digest and a job's totals (digest.h). */
#include "digest.h"
#include "advice.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#define MAX_NUMA 1024

struct json_object *nl_digest_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

#define get nl_digest_get

static int is_number(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) ||
	       json_object_is_type(v, json_type_double);
}

static size_t length(struct json_object *a)
{
	return json_object_is_type(a, json_type_array)
		       ? json_object_array_length(a)
		       : 0;
}

/* A number as six significant digits: a site log stays short. */
static struct json_object *num(double v)
{
	char buf[32];
	if (!isfinite(v))
		return NULL;
	/* A whole number as one (no libm: the plugin links without it). */
	if (v > -1e15 && v < 1e15 && v == (double)(int64_t)v)
		return json_object_new_int64((int64_t)v);
	snprintf(buf, sizeof(buf), "%.6g", v);
	return json_object_new_double_s(v, buf);
}

static void copy(struct json_object *to, const char *key, struct json_object *v)
{
	json_object_object_add(to, key, v ? json_object_get(v) : NULL);
}

/* Sum of a numeric field over an array of objects; null when none has it. */
static struct json_object *sum_of(struct json_object *a, const char *obj,
				  const char *key)
{
	double sum = 0;
	int any = 0;
	for (size_t i = 0; i < length(a); i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		struct json_object *v = get(obj ? get(o, obj) : o, key);
		if (is_number(v)) {
			sum += json_object_get_double(v);
			any = 1;
		}
	}
	return any ? num(sum) : NULL;
}

/* A number array's sum, or -1 when it holds none. */
static double array_sum(struct json_object *a)
{
	double s = 0;
	int any = 0;
	for (size_t i = 0; i < length(a); i++) {
		struct json_object *v = json_object_array_get_idx(a, i);
		if (is_number(v)) {
			s += json_object_get_double(v);
			any = 1;
		}
	}
	return any ? s : -1;
}

/* Add an array of numbers into sums (n of them so far); returns n. */
static size_t add_into(double *sums, size_t n, struct json_object *a)
{
	for (size_t k = 0; k < length(a) && k < MAX_NUMA; k++) {
		struct json_object *v = json_object_array_get_idx(a, k);
		while (n <= k)
			sums[n++] = 0;
		if (is_number(v))
			sums[k] += json_object_get_double(v);
	}
	return n;
}

/* CPU seconds per NUMA node and their shares, into o. */
static void add_cpu(struct json_object *o, const double *cpu, size_t n,
		    int known)
{
	struct json_object *s = NULL, *share = NULL;
	double total = 0;
	if (known) {
		s = json_object_new_array();
		for (size_t k = 0; k < n; k++) {
			json_object_array_add(s, num(cpu[k]));
			total += cpu[k];
		}
	}
	if (known && total > 0) {
		share = json_object_new_array();
		for (size_t k = 0; k < n; k++)
			json_object_array_add(share, num(cpu[k] / total));
	}
	json_object_object_add(o, "cpu_s_per_numa_node", s);
	json_object_object_add(o, "cpu_share_per_numa_node", share);
}

/* A mean weighted by w; null without weight. */
static struct json_object *mean(double sum, double w)
{
	return w > 0 ? num(sum / w) : NULL;
}

struct json_object *nl_digest(struct json_object *r)
{
	struct json_object *d = json_object_new_object();
	struct json_object *slurm = get(r, "slurm"), *sum = get(r, "summary");
	struct json_object *pr = get(r, "processes"), *th = get(r, "threads");
	struct json_object *policy = get(get(r, "policy"), "name");
	static const char *const ids[] = {"job", "step", "node", "uid"};
	static const char *const counts[] = {"periods", "migrations", "swaps",
					     "rollbacks"};
	double cpu[MAX_NUMA];
	size_t n = 0;

	for (size_t i = 0; slurm && i < 4; i++)
		copy(d, ids[i], get(slurm, ids[i]));
	copy(d, "policy",
	     json_object_is_type(policy, json_type_string) ? policy : NULL);
	if (get(r, "error"))
		copy(d, "error", get(r, "error"));
	if (get(r, "warning"))
		copy(d, "warning", get(r, "warning"));
	json_object_object_add(d, "processes",
			       json_object_new_int((int)length(pr)));
	json_object_object_add(d, "threads",
			       json_object_new_int((int)length(th)));
	for (size_t i = 0; i < 4; i++) {
		struct json_object *v = get(sum, counts[i]);
		copy(d, counts[i], is_number(v) ? v : NULL);
	}
	json_object_object_add(d, "page_moves", sum_of(pr, "pages", "moves"));
	json_object_object_add(d, "pages_moved_bytes",
			       sum_of(pr, "pages", "moved_bytes"));
	struct json_object *dur = get(sum, "duration_s");
	json_object_object_add(d, "duration_s",
			       is_number(dur) ? num(json_object_get_double(dur))
					      : NULL);

	/* CPU time per NUMA node: the machine's nodes, even unused. */
	struct json_object *nodes = get(get(r, "machine"), "nodes");
	int64_t nn = is_number(nodes) ? json_object_get_int64(nodes) : 0;
	for (; n < (size_t)(nn > 0 && nn <= MAX_NUMA ? nn : 0); n++)
		cpu[n] = 0;
	for (size_t i = 0; i < length(th); i++)
		n = add_into(cpu, n,
			     get(json_object_array_get_idx(th, i),
				 "time_per_node_s"));
	add_cpu(d, cpu, n, th != NULL || n > 0);

	/* Locality of pages, weighted by each process's resident pages. */
	double lf = 0, ll = 0, wf = 0, wl = 0, pages = 0;
	int read = 0;
	for (size_t i = 0; i < length(pr); i++) {
		struct json_object *p = json_object_array_get_idx(pr, i);
		struct json_object *b = get(get(p, "pages"), "locality_before");
		struct json_object *a = get(get(p, "pages"), "locality_after");
		double np = array_sum(get(p, "pages_per_node_last"));
		double w = np > 0 ? np : 1;
		if (np >= 0) {
			pages += np;
			read = 1;
		}
		if (is_number(b)) {
			lf += w * json_object_get_double(b);
			wf += w;
		}
		if (is_number(a)) {
			ll += w * json_object_get_double(a);
			wl += w;
		}
	}
	json_object_object_add(d, "locality_first", mean(lf, wf));
	json_object_object_add(d, "locality_last", mean(ll, wl));
	json_object_object_add(d, "pages", read ? num(pages) : NULL);

	/* The advice's rules (advice.h): a site counts them per user. */
	struct json_object *adv = nl_advice(r),
			   *rules = json_object_new_array();
	for (size_t i = 0; i < length(adv); i++)
		json_object_array_add(
			rules,
			json_object_get(get(json_object_array_get_idx(adv, i),
					    "rule")));
	json_object_put(adv);
	json_object_object_add(d, "advice", rules);
	return d;
}

/* How many distinct values of key the digests hold. */
static int distinct(struct json_object *ds, const char *key)
{
	int n = 0;
	for (size_t i = 0; i < length(ds); i++) {
		const char *v = json_object_get_string(
			get(json_object_array_get_idx(ds, i), key));
		int seen = !v;
		for (size_t j = 0; j < i && !seen; j++) {
			const char *w = json_object_get_string(
				get(json_object_array_get_idx(ds, j), key));
			seen = w && !strcmp(v, w);
		}
		n += !seen;
	}
	return n;
}

struct json_object *nl_digest_totals(struct json_object *ds)
{
	static const char *const sums[] = {
		"processes", "threads",	   "migrations",       "swaps",
		"rollbacks", "page_moves", "pages_moved_bytes"};
	struct json_object *t = json_object_new_object();
	double cpu[MAX_NUMA], lf = 0, ll = 0, wf = 0, wl = 0, longest = -1;
	size_t n = 0;
	int errors = 0, known = 0;

	if (length(ds))
		copy(t, "job", get(json_object_array_get_idx(ds, 0), "job"));
	json_object_object_add(t, "reports",
			       json_object_new_int((int)length(ds)));
	json_object_object_add(t, "nodes",
			       json_object_new_int(distinct(ds, "node")));
	json_object_object_add(t, "steps",
			       json_object_new_int(distinct(ds, "step")));
	for (size_t k = 0; k < sizeof(sums) / sizeof(sums[0]); k++)
		json_object_object_add(t, sums[k], sum_of(ds, NULL, sums[k]));
	for (size_t i = 0; i < length(ds); i++) {
		struct json_object *d = json_object_array_get_idx(ds, i);
		struct json_object *c = get(d, "cpu_s_per_numa_node");
		struct json_object *p = get(d, "pages"), *v;
		double w = is_number(p) && json_object_get_double(p) > 0
				   ? json_object_get_double(p)
				   : 1;
		errors += get(d, "error") != NULL;
		if (c) {
			n = add_into(cpu, n, c);
			known = 1;
		}
		if (is_number(v = get(d, "locality_first"))) {
			lf += w * json_object_get_double(v);
			wf += w;
		}
		if (is_number(v = get(d, "locality_last"))) {
			ll += w * json_object_get_double(v);
			wl += w;
		}
		if (is_number(v = get(d, "duration_s")) &&
		    json_object_get_double(v) > longest)
			longest = json_object_get_double(v);
	}
	json_object_object_add(t, "errors", json_object_new_int(errors));
	json_object_object_add(t, "duration_s",
			       longest >= 0 ? num(longest) : NULL);
	add_cpu(t, cpu, n, known);
	json_object_object_add(t, "locality_first", mean(lf, wf));
	json_object_object_add(t, "locality_last", mean(ll, wl));
	return t;
}
