/* numalot report: a job's reports as one table (report_jobs.h). */
#include "report_jobs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "digest.h"

#define get nl_digest_get

static int64_t id_of(struct json_object *d, const char *key)
{
	struct json_object *v = get(d, key);
	return json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
						     : -1;
}

/* Rows by step, then node. */
static int by_step_node(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	int64_t sx = id_of(x, "step"), sy = id_of(y, "step");
	if (sx != sy)
		return sx < sy ? -1 : 1;
	const char *nx = json_object_get_string(get(x, "node"));
	const char *ny = json_object_get_string(get(y, "node"));
	return strcmp(nx ? nx : "", ny ? ny : "");
}

struct json_object *nl_jobs_merge(struct json_object *const *reports, int n)
{
	struct json_object *out = json_object_new_object();
	struct json_object *jobs = json_object_new_array();
	int64_t *ids = calloc((size_t)(n > 0 ? n : 1), sizeof(*ids));
	int njobs = 0;

	json_object_object_add(out, "jobs", jobs);
	if (!ids)
		return out;
	/* The jobs, in order. */
	for (int i = 0; i < n; i++) {
		int64_t j = id_of(get(reports[i], "slurm"), "job");
		int seen = j < 0;
		for (int k = 0; k < njobs && !seen; k++)
			seen = ids[k] == j;
		if (!seen)
			ids[njobs++] = j;
	}
	for (int a = 1; a < njobs; a++)
		for (int b = a; b > 0 && ids[b - 1] > ids[b]; b--) {
			int64_t t = ids[b];
			ids[b] = ids[b - 1];
			ids[b - 1] = t;
		}
	for (int k = 0; k < njobs; k++) {
		struct json_object *job = json_object_new_object();
		struct json_object *rows = json_object_new_array();
		for (int i = 0; i < n; i++)
			if (id_of(get(reports[i], "slurm"), "job") == ids[k])
				json_object_array_add(rows,
						      nl_digest(reports[i]));
		json_object_array_sort(rows, by_step_node);
		json_object_object_add(job, "job",
				       json_object_new_int64(ids[k]));
		json_object_object_add(job, "nodes", rows);
		json_object_object_add(job, "totals", nl_digest_totals(rows));
		json_object_array_add(jobs, job);
	}
	free(ids);
	return out;
}

/* A field as text ("-" when null or absent). */
static const char *text(struct json_object *o, const char *key, char *buf,
			size_t len)
{
	struct json_object *v = get(o, key);
	if (!v)
		return "-";
	snprintf(buf, len, "%s", json_object_get_string(v));
	/* A report's strings are shown, not obeyed (a terminal escape). */
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return buf;
}

/* "62% 38%": the share of CPU time on each NUMA node. */
static const char *shares(struct json_object *o, char *buf, size_t len)
{
	struct json_object *a = get(o, "cpu_share_per_numa_node");
	size_t n = 0;
	if (!json_object_is_type(a, json_type_array))
		return "-";
	buf[0] = 0;
	for (size_t k = 0; k < json_object_array_length(a) && n + 8 < len; k++)
		n += (size_t)snprintf(
			buf + n, len - n, "%s%.0f%%", k ? " " : "",
			100 * json_object_get_double(
				      json_object_array_get_idx(a, k)));
	return buf;
}

/* One share as a percentage, "?" when not known. */
static int pct(char *buf, size_t len, struct json_object *v)
{
	return v ? snprintf(buf, len, "%.0f%%", 100 * json_object_get_double(v))
		 : snprintf(buf, len, "?");
}

/* "62% -> 95%": the pages' locality at the first and last reading, as
 * the HTML page shows it. */
static const char *locality(struct json_object *o, char *buf, size_t len)
{
	struct json_object *f = get(o, "locality_first");
	struct json_object *l = get(o, "locality_last");
	if (!f && !l)
		return "-";
	int n = pct(buf, len, f);
	if (n >= 0 && (size_t)n < len) {
		n += snprintf(buf + n, len - (size_t)n, " -> ");
		if (n >= 0 && (size_t)n < len)
			pct(buf + n, len - (size_t)n, l);
	}
	return buf;
}

static double mib(struct json_object *o)
{
	return json_object_get_double(get(o, "pages_moved_bytes")) / 1048576;
}

static void row(FILE *f, struct json_object *d, const char *who,
		const char *what)
{
	char b[9][160];
	fprintf(f,
		"  %-12s %-15s %5s %7s %7s %10s %5s %9s %10s %9.1f  %-20s %s\n",
		who, what, text(d, "processes", b[0], sizeof(b[0])),
		text(d, "threads", b[1], sizeof(b[1])),
		text(d, "periods", b[2], sizeof(b[2])),
		text(d, "migrations", b[3], sizeof(b[3])),
		text(d, "swaps", b[4], sizeof(b[4])),
		text(d, "rollbacks", b[5], sizeof(b[5])),
		text(d, "page_moves", b[6], sizeof(b[6])), mib(d),
		shares(d, b[7], sizeof(b[7])), locality(d, b[8], sizeof(b[8])));
}

void nl_jobs_print(struct json_object *merged, FILE *f)
{
	struct json_object *jobs = get(merged, "jobs");
	char b[3][160], what[64];

	for (size_t k = 0; k < json_object_array_length(jobs); k++) {
		struct json_object *job = json_object_array_get_idx(jobs, k);
		struct json_object *rows = get(job, "nodes");
		struct json_object *t = get(job, "totals");
		fprintf(f, "\njob %s: %s node(s), %s step(s)\n",
			text(job, "job", b[0], sizeof(b[0])),
			text(t, "nodes", b[1], sizeof(b[1])),
			text(t, "steps", b[2], sizeof(b[2])));
		fprintf(f,
			"  %-12s %-6s %-8s %5s %7s %7s %10s %5s %9s %10s %9s  "
			"%-20s %s\n",
			"node", "step", "policy", "procs", "threads", "periods",
			"migrations", "swaps", "rollbacks", "page moves",
			"MiB moved", "CPU per NUMA node", "page locality");
		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			struct json_object *d =
				json_object_array_get_idx(rows, i);
			snprintf(what, sizeof(what), "%-6s %-8s",
				 text(d, "step", b[0], sizeof(b[0])),
				 text(d, "policy", b[1], sizeof(b[1])));
			row(f, d, text(d, "node", b[2], sizeof(b[2])), what);
			if (get(d, "error"))
				fprintf(f, "    error: %s\n",
					text(d, "error", b[0], sizeof(b[0])));
		}
		snprintf(what, sizeof(what), "%s reports",
			 text(t, "reports", b[0], sizeof(b[0])));
		row(f, t, "all", what);
	}
}
