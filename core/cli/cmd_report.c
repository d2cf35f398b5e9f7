/* numalot report FILE...: a person's summary of numalot JSON reports. */
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "cli.h"
#include "report_html.h"
#include "report_jobs.h"
#include "report_text.h"
#include "report_view.h"

#define CMD "report"

struct report_args {
	const char *html, *svg;
	int json, events;
	char **files; /* the reports, folders expanded (malloc'd) */
	int n;
};

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

/* A field as text for a terminal: control characters (an escape
 * sequence in a report) are shown, not sent (\xNN). */
static const char *s(struct json_object *o, const char *path)
{
	static char buf[8][512];
	static int k;
	struct json_object *v = at(o, path);
	const char *in = v ? json_object_get_string(v) : "-";
	char *out = buf[k++ % 8];
	size_t n = 0;
	for (; in && *in && n + 5 < sizeof(buf[0]); in++) {
		unsigned char c = (unsigned char)*in;
		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(out + n, sizeof(buf[0]) - n,
					      "\\x%02x", c);
		else
			out[n++] = (char)c;
	}
	out[n] = 0;
	return out;
}

/* A field that must be an array, or NULL. */
static struct json_object *array_at(struct json_object *o, const char *path)
{
	struct json_object *v = at(o, path);
	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

static int i(struct json_object *o, const char *path)
{
	return json_object_get_int(at(o, path));
}

static void summarise(const char *file, struct json_object *r, int events)
{
	struct json_object *th = array_at(r, "threads"),
			   *pr = array_at(r, "processes");
	if (!json_object_is_type(r, json_type_object)) {
		printf("%s\n  not a report (a JSON object)\n", file);
		return;
	}
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
	printf("  machine: %s NUMA node%s, %s CPU%s (%s)\n",
	       s(r, "machine.nodes"), nl_s(i(r, "machine.nodes")),
	       s(r, "machine.cpus"), nl_s(i(r, "machine.cpus")),
	       s(r, "machine.topology"));
	for (size_t k = 0; pr && k < json_object_array_length(pr); k++) {
		struct json_object *p = json_object_array_get_idx(pr, k);
		if (!json_object_is_type(p, json_type_object))
			continue;
		if (at(p, "taken_over") &&
		    !json_object_get_boolean(at(p, "taken_over"))) {
			printf("  process %s (%s): ended before numalot took "
			       "it over\n",
			       s(p, "pid"), s(p, "name"));
			continue;
		}
		printf("  process %s (%s): %s thread%s, %s %s s\n", s(p, "pid"),
		       s(p, "name"), s(p, "threads"), nl_s(i(p, "threads")),
		       at(p, "completion_s") ? "completed at" : "running for",
		       at(p, "completion_s") ? s(p, "completion_s")
					     : s(p, "runtime_s"));
	}
	size_t nth = th ? json_object_array_length(th) : 0;
	printf("  %zu thread%s, %d period%s: %d migration%s, %d swap%s, %d "
	       "rollback%s, %d skipped move%s\n",
	       nth, nl_s((long)nth), i(r, "summary.periods"),
	       nl_s(i(r, "summary.periods")), i(r, "summary.migrations"),
	       nl_s(i(r, "summary.migrations")), i(r, "summary.swaps"),
	       nl_s(i(r, "summary.swaps")), i(r, "summary.rollbacks"),
	       nl_s(i(r, "summary.rollbacks")), i(r, "summary.skips"),
	       nl_s(i(r, "summary.skips")));
	if (at(r, "warning"))
		printf("  warning: %s\n", s(r, "warning"));
	fflush(stdout);
	nl_report_events_text(r, stdout, events);
	nl_report_advice_text(r, stdout);
}

/* Why r (an object) is not a numalot report, or NULL when it is one: a
 * report has a policy or an error (docs/report-format.md), a file of
 * several reports a "reports" array of them. */
static const char *not_a_report(struct json_object *r)
{
	struct json_object *list = at(r, "reports");
	if (json_object_is_type(list, json_type_array)) {
		for (size_t k = 0; k < json_object_array_length(list); k++)
			if (not_a_report(json_object_array_get_idx(list, k)))
				return "not a numalot report (an entry of "
				       "\"reports\" is not a report)";
		return NULL;
	}
	if (list)
		return "not a numalot report (\"reports\" must be an array)";
	if (!json_object_is_type(r, json_type_object))
		return "not a numalot report (not a JSON object)";
	if (at(r, "policy") || at(r, "error"))
		return NULL;
	if (at(r, "machine") && at(r, "processes"))
		return "not a numalot report but a scenario (it has no policy "
		       "and no error): run it with numalot sim";
	return "not a numalot report (it has no policy and no error)";
}

/* The report files named: a folder stands for its *.json files, in name
 * order. Appended to *files (malloc'd names); -1 on a folder without. */
static int add_operand(const char *arg, char ***files, int *n)
{
	struct stat sb;
	char pattern[PATH_MAX];
	glob_t g = {0};
	int dir = stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode);

	if (dir) {
		/* numalot-1/ lists numalot-1/0.vm.json, not numalot-1//0... */
		int dl = (int)strlen(arg);
		while (dl > 0 && arg[dl - 1] == '/')
			dl--;
		snprintf(pattern, sizeof(pattern), "%.*s/*.json", dl, arg);
		if (glob(pattern, 0, NULL, &g) != 0) {
			nl_cli_error(CMD,
				     "%s: a folder with no report (*.json)",
				     arg);
			return -1;
		}
	}
	size_t count = dir ? g.gl_pathc : 1;
	char **more = realloc(*files, sizeof(**files) * ((size_t)*n + count));
	if (more) {
		*files = more;
		for (size_t k = 0; k < count; k++)
			more[(*n)++] = strdup(dir ? g.gl_pathv[k] : arg);
	}
	if (dir)
		globfree(&g);
	return more ? 0 : -1;
}

/* 0 parsed, 1 --help given, -1 bad (error printed). */
static int parse(int argc, char **argv, struct report_args *a)
{
	static const struct option lo[] = {
		{"html", required_argument, NULL, 'H'},
		{"svg", required_argument, NULL, 'S'},
		{"json", no_argument, NULL, 'j'},
		{"events", no_argument, NULL, 'e'},
		NL_ARGS_HELP,
		{0}};
	int c;

	nl_args_start();
	while ((c = nl_args_next(CMD, argc, argv, "h", lo)) != -1) {
		if (c == 'H')
			a->html = optarg;
		else if (c == 'S')
			a->svg = optarg;
		else if (c == 'j')
			a->json = 1;
		else if (c == 'e')
			a->events = 1;
		else if (c == 'h') {
			nl_cli_usage(CMD, stdout);
			return 1;
		} else
			return -1;
	}
	if (optind >= argc) {
		nl_cli_error(CMD, "no report given (usage: numalot report "
				  "[--json] [--events] [--html=FILE] "
				  "[--svg=PREFIX] "
				  "REPORT.json|FOLDER...)");
		return -1;
	}
	for (int k = optind; k < argc; k++)
		if (add_operand(argv[k], &a->files, &a->n) < 0)
			return -1;
	return 0;
}

int nl_cmd_report(int argc, char **argv)
{
	struct report_args a = {0};
	int status = NL_EXIT_OK, rc = parse(argc, argv, &a), nr = 0;
	struct json_object **reports = NULL;

	if (rc)
		status = rc > 0 ? NL_EXIT_OK : NL_EXIT_USAGE;
	else if (!(reports = calloc((size_t)a.n + 1, sizeof(*reports))))
		status = NL_EXIT_FAIL;
	for (int k = 0; !rc && reports && k < a.n; k++) {
		char err[128];
		struct json_object *r = rv_read(a.files[k], err, sizeof(err)),
				   *list;
		const char *why = r ? not_a_report(r) : err;
		if (why) {
			int scen = strstr(why, "scenario") != NULL;
			nl_cli_error(CMD, "%s: %s%s%s%s", a.files[k], why,
				     scen ? " " : "", scen ? a.files[k] : "",
				     scen ? " --report=REPORT.json" : "");
			status = NL_EXIT_USAGE;
			json_object_put(r);
			continue;
		}
		if (json_object_object_get_ex(r, "reports", &list)) {
			for (size_t j = 0; j < json_object_array_length(list);
			     j++)
				if (!a.json)
					summarise(a.files[k],
						  json_object_array_get_idx(
							  list, j),
						  a.events);
		} else if (!a.json) {
			summarise(a.files[k], r, a.events);
		}
		/* A file of several reports is a simulation's, not a
		 * job's: only single reports go into the job table. */
		if (list)
			json_object_put(r);
		else
			reports[nr++] = r;
	}
	if (!rc && reports) {
		struct json_object *jobs = nl_jobs_merge(reports, nr);
		if (a.json)
			printf("%s\n",
			       json_object_to_json_string_ext(
				       jobs,
				       JSON_C_TO_STRING_PRETTY |
					       JSON_C_TO_STRING_SPACED |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
		else
			nl_jobs_print(jobs, stdout);
		json_object_put(jobs);
	}
	for (int k = 0; k < nr; k++)
		json_object_put(reports[k]);
	free(reports);
	if (!rc && (a.html || a.svg)) {
		int prc = nl_report_pictures(a.html, a.svg, a.files, a.n);
		if (status == NL_EXIT_OK)
			status = prc;
	}
	for (int k = 0; k < a.n; k++)
		free(a.files[k]);
	free(a.files);
	return status;
}
