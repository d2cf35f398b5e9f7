/* numalot report FILE...: a person's summary of numalot JSON reports. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "report_html.h"

/* A report is at most the agent's largest reply (docs/protocol.md). */
#define REPORT_MAX_BYTES (16 * 1024 * 1024)

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

static void summarise(const char *file, struct json_object *r)
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
	printf("  machine: %s NUMA nodes, %s CPUs (%s)\n",
	       s(r, "machine.nodes"), s(r, "machine.cpus"),
	       s(r, "machine.topology"));
	for (size_t k = 0; pr && k < json_object_array_length(pr); k++) {
		struct json_object *p = json_object_array_get_idx(pr, k);
		if (!json_object_is_type(p, json_type_object))
			continue;
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

/* Read a report: a regular file of at most REPORT_MAX_BYTES. */
static struct json_object *load(const char *path, char *err, size_t len)
{
	struct stat sb;
	struct json_object *o = NULL;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, len, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > REPORT_MAX_BYTES) {
		snprintf(err, len,
			 S_ISREG(sb.st_mode) ? "over %d bytes"
					     : "not a regular file",
			 REPORT_MAX_BYTES);
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	while (buf && got < (size_t)sb.st_size &&
	       (n = read(fd, buf + got, (size_t)sb.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (!buf) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	buf[got] = 0;
	o = json_tokener_parse(buf);
	free(buf);
	if (!o)
		snprintf(err, len, "not JSON");
	return o;
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
		char err[128];
		struct json_object *r = load(argv[k], err, sizeof(err)), *list;
		if (r && !json_object_is_type(r, json_type_object))
			snprintf(err, sizeof(err), "not a JSON object");
		if (!r || !json_object_is_type(r, json_type_object)) {
			nl_cli_error("report", "%s: not a numalot report (%s)",
				     argv[k], err);
			status = NL_EXIT_USAGE;
			json_object_put(r);
			continue;
		}
		if (json_object_object_get_ex(r, "reports", &list) &&
		    !json_object_is_type(list, json_type_array)) {
			nl_cli_error("report",
				     "%s: \"reports\" must be an array",
				     argv[k]);
			status = NL_EXIT_USAGE;
		} else if (list) {
			for (size_t j = 0; j < json_object_array_length(list);
			     j++)
				summarise(argv[k],
					  json_object_array_get_idx(list, j));
		} else {
			summarise(argv[k], r);
		}
		json_object_put(r);
	}
	if (html || svg) {
		int rc = nl_report_pictures(html, svg, argv + 1, argc - 1);
		if (status == NL_EXIT_OK)
			status = rc;
	}
	return status;
}
