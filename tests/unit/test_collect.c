/*
 * Unit tests of site collection (docs/slurm.md, "Site collection";
 * docs/report-format.md, "Digest and site log"): a report's digest, a
 * job's totals, the site log's line, and the site's files: report_dir
 * made 0750, files 0640, one line appended per step, failures named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "collect.h"
#include "digest.h"

/* A step of two processes on a two-node machine: one whose pages were
 * read (8 pages, locality 0.5 then 1), one never read. */
static const char *report_text =
	"{\"numalot\": \"x\", \"policy\": {\"name\": \"lbma\"},"
	" \"machine\": {\"nodes\": 2},"
	" \"slurm\": {\"job\": 42, \"step\": 1, \"uid\": 1000,"
	" \"node\": \"nla\", \"tasks\": 2},"
	" \"processes\": ["
	"  {\"pid\": 1, \"name\": \"a\", \"threads\": 2,"
	"   \"pages\": {\"moves\": 3, \"moved_bytes\": 4096,"
	"    \"locality_before\": 0.5, \"locality_after\": 1},"
	"   \"pages_per_node_last\": [6, 2]},"
	"  {\"pid\": 2, \"name\": null, \"threads\": 0,"
	"   \"taken_over\": false}],"
	" \"threads\": ["
	"  {\"tid\": 1, \"time_per_node_s\": [3, 1]},"
	"  {\"tid\": 2, \"time_per_node_s\": [1, 3]}],"
	" \"summary\": {\"periods\": 9, \"migrations\": 4, \"swaps\": 1,"
	"  \"rollbacks\": 0, \"duration_s\": 9.5}}";

static char dir[] = "/tmp/numalot-collect.XXXXXX";

static double num(struct json_object *o, const char *key)
{
	struct json_object *v;
	assert_true(json_object_object_get_ex(o, key, &v));
	assert_non_null(v);
	return json_object_get_double(v);
}

static double at(struct json_object *o, const char *key, size_t i)
{
	struct json_object *v;
	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_double(json_object_array_get_idx(v, i));
}

static int is_null(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) && v == NULL;
}

static void digest_of_a_step(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text);
	struct json_object *d = nl_digest(r), *v;
	assert_true(json_object_object_get_ex(d, "node", &v));
	assert_string_equal(json_object_get_string(v), "nla");
	assert_true(json_object_object_get_ex(d, "policy", &v));
	assert_string_equal(json_object_get_string(v), "lbma");
	assert_true(num(d, "job") == 42 && num(d, "step") == 1);
	assert_true(num(d, "processes") == 2 && num(d, "threads") == 2);
	assert_true(num(d, "periods") == 9 && num(d, "migrations") == 4);
	assert_true(num(d, "page_moves") == 3);
	assert_true(num(d, "pages_moved_bytes") == 4096);
	assert_true(at(d, "cpu_s_per_numa_node", 0) == 4);
	assert_true(at(d, "cpu_share_per_numa_node", 1) == 0.5);
	/* The process never read weighs 1 page, with no locality. */
	assert_true(num(d, "locality_first") == 0.5);
	assert_true(num(d, "locality_last") == 1);
	assert_true(num(d, "pages") == 8);
	json_object_put(d);

	/* A report holding only an error: nothing made up. */
	struct json_object *e = json_tokener_parse(
		"{\"numalot\": \"x\", \"error\": \"no agent\","
		" \"slurm\": {\"job\": 42, \"step\": 1, \"node\": \"nlb\"}}");
	d = nl_digest(e);
	assert_true(json_object_object_get_ex(d, "error", &v));
	assert_true(is_null(d, "periods") && is_null(d, "policy"));
	assert_true(is_null(d, "cpu_share_per_numa_node"));
	assert_true(is_null(d, "locality_last") && is_null(d, "pages"));
	assert_true(num(d, "threads") == 0);

	/* A job's totals over its two nodes. */
	struct json_object *all = json_object_new_array();
	json_object_array_add(all, nl_digest(r));
	json_object_array_add(all, d);
	struct json_object *t = nl_digest_totals(all);
	assert_true(num(t, "job") == 42 && num(t, "reports") == 2);
	assert_true(num(t, "nodes") == 2 && num(t, "steps") == 1);
	assert_true(num(t, "errors") == 1 && num(t, "migrations") == 4);
	assert_true(at(t, "cpu_s_per_numa_node", 1) == 4);
	assert_true(num(t, "locality_last") == 1);
	json_object_put(t);
	json_object_put(all);
	json_object_put(e);
	json_object_put(r);
}

static void site_line(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text), *v;
	struct nl_collect_ids id = {.job = 42,
				    .step = 1,
				    .uid = 1000,
				    .node = "nla",
				    .user = "alice",
				    .cluster = "c1"};
	char *line = nl_site_line(r, &id, 86400);
	assert_non_null(line);
	/* One line, ending the line. */
	assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "time", &v));
	assert_string_equal(json_object_get_string(v), "1970-01-02T00:00:00Z");
	assert_true(json_object_object_get_ex(o, "user", &v));
	assert_string_equal(json_object_get_string(v), "alice");
	assert_true(json_object_object_get_ex(o, "cluster", &v));
	assert_string_equal(json_object_get_string(v), "c1");
	assert_true(num(o, "job") == 42 && num(o, "migrations") == 4);
	assert_true(at(o, "cpu_share_per_numa_node", 0) == 0.5);
	assert_true(num(o, "locality_last") == 1);
	/* Who and where first, for a person reading the log. */
	assert_ptr_equal(strstr(line, "{\"time\":"), line);
	json_object_put(o);
	free(line);
	json_object_put(r);
}

static int mode_of(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

static int lines_of(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;
	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

static int complaints;
static char last[1500];
static void complain(const char *msg)
{
	complaints++;
	snprintf(last, sizeof(last), "%s", msg);
}

static void site_files(void **state)
{
	(void)state;
	struct json_object *r = json_tokener_parse(report_text);
	struct nl_collect_ids id = {
		.job = 42, .step = 1, .node = "nla", .user = "alice"};
	struct nl_site s;
	char path[600];

	if (geteuid() != 0)
		skip(); /* the site's files are root's */
	assert_non_null(mkdtemp(dir));
	nl_site_default(&s, "/usr/sbin/numalotd");
	/* report_dir and the log's folder do not exist yet. */
	snprintf(s.report_dir, sizeof(s.report_dir), "%s/site/reports", dir);
	snprintf(s.site_log, sizeof(s.site_log), "%s/log/steps.jsonl", dir);
	complaints = 0;
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 0);
	id.step = 2;
	id.node = "nlb";
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 0);
	assert_int_equal(complaints, 0);
	assert_int_equal(mode_of(s.report_dir), 0750);
	snprintf(path, sizeof(path), "%s/site", dir);
	assert_int_equal(mode_of(path), 0750);
	snprintf(path, sizeof(path), "%s/numalot-42.1.nla.json", s.report_dir);
	assert_int_equal(mode_of(path), 0640);
	assert_int_equal(mode_of(s.site_log), 0640);
	assert_int_equal(lines_of(s.site_log), 2);

	/* A site log that cannot be written is named, and so is the copy. */
	snprintf(s.site_log, sizeof(s.site_log), "%.400s/x", path);
	snprintf(s.report_dir, sizeof(s.report_dir), "%.400s", path);
	assert_int_equal(nl_collect(&s, "{}\n", r, &id, complain), 2);
	assert_int_equal(complaints, 2);
	assert_non_null(strstr(last, "cannot append to the site log"));
	assert_non_null(strstr(last, "numalot-42.1.nla.json/x"));
	json_object_put(r);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(digest_of_a_step),
		cmocka_unit_test(site_line),
		cmocka_unit_test(site_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
