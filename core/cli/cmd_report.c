/* numalot report FILE...: a person's summary of numalot JSON reports. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "report_html.h"

static struct json_object *at(struct json_object *o, const char *path)
{
	char buf[128], *save, *k;
	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && o;
	     k = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(o, k, &o))
			return NULL;
	return o;
}

static const char *s(struct json_object *o, const char *path)
{
	struct json_object *v = at(o, path);
	return v ? json_object_get_string(v) : "-";
}

static int i(struct json_object *o, const char *path)
{
	return json_object_get_int(at(o, path));
}

static void summarise(const char *file, struct json_object *r)
{
	struct json_object *th = at(r, "threads"), *pr = at(r, "processes");
	printf("%s\n", file);
	if (at(r, "slurm"))
		printf("  job %s step %s on %s\n", s(r, "slurm.job"),
		       s(r, "slurm.step"), s(r, "slurm.node"));
	if (at(r, "error"))
		printf("  error: %s\n", s(r, "error"));
	if (!at(r, "policy"))
		return;
	printf("  policy %s, period %s s; counters %s (3DyRM terms: ops/s %s, "
	       "OI %s, latency %s%s)\n",
	       s(r, "policy.name"), s(r, "policy.params.period"),
	       s(r, "counters.backend"),
	       json_object_get_boolean(at(r, "counters.perf_terms.ops_per_s"))
		       ? "yes"
		       : "no",
	       json_object_get_boolean(at(r, "counters.perf_terms.oi")) ? "yes"
									: "no",
	       json_object_get_boolean(at(r, "counters.perf_terms.latency"))
		       ? "yes"
		       : "no",
	       json_object_get_boolean(at(r, "counters.perf_terms.cpu_share"))
		       ? "; CPU share stood in for ops/s"
		       : "");
	printf("  machine: %s NUMA nodes, %s CPUs (%s)\n",
	       s(r, "machine.nodes"), s(r, "machine.cpus"),
	       s(r, "machine.topology"));
	for (size_t k = 0; pr && k < json_object_array_length(pr); k++) {
		struct json_object *p = json_object_array_get_idx(pr, k);
		printf("  process %s (%s): %s threads, %s %s s\n", s(p, "pid"),
		       s(p, "name"), s(p, "threads"),
		       at(p, "completion_s") ? "completed at" : "running for",
		       at(p, "completion_s") ? s(p, "completion_s")
					     : s(p, "runtime_s"));
	}
	printf("  %zu threads, %d periods: %d migrations, %d swaps, %d "
	       "rollbacks, %d skipped moves\n",
	       th ? json_object_array_length(th) : 0, i(r, "summary.periods"),
	       i(r, "summary.migrations"), i(r, "summary.swaps"),
	       i(r, "summary.rollbacks"), i(r, "summary.skips"));
	if (at(r, "warning"))
		printf("  warning: %s\n", s(r, "warning"));
}

int nl_cmd_report(int argc, char **argv)
{
	int status = NL_EXIT_OK;
	const char *html = NULL, *svg = NULL;
	if (nl_report_picture_options(&argc, argv, &html, &svg) < 0)
		return NL_EXIT_USAGE;
	if (argc < 2) {
		nl_cli_error("report", "usage: numalot report [--html=FILE] "
				       "[--svg=PREFIX] FILE...");
		return NL_EXIT_USAGE;
	}
	for (int k = 1; k < argc; k++) {
		struct json_object *r = json_object_from_file(argv[k]), *list;
		if (!r || !json_object_is_type(r, json_type_object)) {
			nl_cli_error("report", "%s: not a numalot report (%s)",
				     argv[k], json_util_get_last_err());
			status = NL_EXIT_USAGE;
			json_object_put(r);
			continue;
		}
		if (json_object_object_get_ex(r, "reports", &list))
			for (size_t j = 0; j < json_object_array_length(list);
			     j++)
				summarise(argv[k],
					  json_object_array_get_idx(list, j));
		else
			summarise(argv[k], r);
		json_object_put(r);
	}
	if (html || svg) {
		int rc = nl_report_pictures(html, svg, argv + 1, argc - 1);
		if (status == NL_EXIT_OK)
			status = rc;
	}
	return status;
}
