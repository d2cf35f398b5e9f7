/*
 * Unit tests of the advice (core/digest/advice.c, docs/advice.md): each rule on
 * hand-written reports, one that makes the mistake and the nearest ones
 * that do not (the thresholds' other side, the evidence missing). The
 * machines here have several NUMA nodes and SMT, which the 1-node 2-CPU
 * test machine cannot show; tests/cli/test_report_advice.sh runs the
 * rules it can show on real programs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "advice.h"
#include "collect.h"
#include "digest.h"

/* A report: machine (nodes, cpus, extra machine fields), processes and
 * threads (JSON with ' for "), events. */
static struct json_object *report(int nodes, int cpus, const char *machine,
				  const char *procs, const char *threads,
				  const char *events)
{
	static char buf[16384];
	snprintf(buf, sizeof(buf),
		 "{'numalot': 'x', 'policy': {'name': 'imar2'},"
		 " 'counters': {'measured': {'task_clock': true}},"
		 " 'machine': {'nodes': %d, 'cpus': %d%s},"
		 " 'processes': [%s], 'threads': [%s], 'events': [%s],"
		 " 'summary': {'migrations': 0, 'releases': 0}}",
		 nodes, cpus, machine, procs, threads, events);
	for (char *p = buf; *p; p++)
		if (*p == '\'')
			*p = '"';
	struct json_object *r = json_tokener_parse(buf);
	assert_non_null(r);
	return r;
}

/* A thread of pid 100 seen from 0 to 10 s with cpu_s of CPU time on
 * node 0 and on node 1, first sampled on cpu (node) at 0 s; then, when
 * later >= 0, on CPU later at later_s. */
static const char *thread(int tid, double cpu0_s, double cpu1_s, int cpu,
			  int node, int later, double later_s, int migrations)
{
	static char buf[8][512];
	static int k;
	char *b = buf[k++ % 8], more[64] = "";
	if (later >= 0)
		snprintf(more, sizeof(more), ", [%g, %d, %d]", later_s, later,
			 node);
	snprintf(b, 512,
		 "{'tid': %d, 'pid': 100, 'first_seen_s': 0, "
		 "'last_seen_s': 10, 'time_per_node_s': [%g, %g], "
		 "'migrations': %d, 'cpus': [[0, %d, %d]%s]}",
		 tid, cpu0_s, cpu1_s, migrations, cpu, node, more);
	return b;
}

static const char *proc(const char *extra)
{
	static char b[512];
	snprintf(b, sizeof(b),
		 "{'pid': 100, 'name': 'app', 'placement_limit': 'x'%s}",
		 extra);
	return b;
}

/* The rules the report's advice names, "a,b". */
static const char *rules(struct json_object *r)
{
	static char out[256];
	struct json_object *a = nl_advice(r), *v;
	size_t n = 0;
	assert_non_null(a);
	out[0] = 0;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		assert_true(json_object_object_get_ex(o, "rule", &v));
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s",
				      i ? "," : "", json_object_get_string(v));
		/* Every advice says all four things. */
		static const char *const keys[] = {"problem", "evidence",
						   "numalot_did", "next_time"};
		for (size_t k = 0; k < 4; k++) {
			assert_true(json_object_object_get_ex(o, keys[k], &v));
			assert_true(strlen(json_object_get_string(v)) > 10);
		}
	}
	json_object_put(a);
	json_object_put(r);
	return out;
}

/* The text of one field of the report's first advice. */
static char *first(struct json_object *r, const char *key)
{
	static char out[1024];
	struct json_object *a = nl_advice(r), *v;
	assert_true(json_object_array_length(a) >= 1);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(a, 0),
					      key, &v));
	snprintf(out, sizeof(out), "%s", json_object_get_string(v));
	json_object_put(a);
	json_object_put(r);
	return out;
}

static void one_cpu(void **state)
{
	(void)state;
	/* Both busy on CPU 0, the OS never moved them (taskset -c 0). */
	assert_string_equal(
		rules(report(1, 2, "", proc(""),
			     "{'tid': 1, 'pid': 100, "
			     "'first_seen_s': 0, 'last_seen_s': "
			     "10, 'time_per_node_s': [0], "
			     "'cpus': [[0, 0, 0]]},"
			     /* the idle main thread */
			     "{'tid': 2, 'pid': 100, 'first_seen_s': 0,"
			     " 'last_seen_s': 10, 'time_per_node_s': [5],"
			     " 'cpus': [[0, 0, 0]]},"
			     "{'tid': 3, 'pid': 100, 'first_seen_s': 0,"
			     " 'last_seen_s': 10, 'time_per_node_s': [5],"
			     " 'cpus': [[0, 0, 0]]}",
			     "")),
		"one_cpu");
	/* numalot moved one at 2 s, the sample after saw it on CPU 1. */
	const char *moved = thread(3, 8, 0, 0, 0, 1, 2.5, 1);
	char th[1200];
	snprintf(th, sizeof(th), "%s,%s", thread(2, 5, 0, 0, 0, -1, 0, 0),
		 moved);
	assert_non_null(strstr(first(report(1, 2, "", proc(""), th,
					    "{'t_s': 2, 'kind': 'migrate', "
					    "'tid': 3, 'from_cpu': 0, "
					    "'to_cpu': 1}"),
				     "numalot_did"),
			       "moved 1 of them"));
	assert_non_null(strstr(first(report(1, 2, "", proc(""), th,
					    "{'t_s': 2, 'kind': 'migrate', "
					    "'tid': 3}"),
				     "evidence"),
			       "CPU 0"));
	/* The OS moved it before numalot did: nothing bound it. */
	assert_string_equal(rules(report(1, 2, "", proc(""), th,
					 "{'t_s': 5, 'kind': 'migrate', "
					 "'tid': 3}")),
			    "");
	/* One busy thread: nothing shared. */
	assert_string_equal(rules(report(1, 2, "", proc(""),
					 thread(2, 5, 0, 0, 0, -1, 0, 0), "")),
			    "");
	/* A one-CPU machine: nowhere else to be, but too many threads. */
	snprintf(th, sizeof(th), "%s,%s", thread(2, 5, 0, 0, 0, -1, 0, 0),
		 thread(3, 5, 0, 0, 0, -1, 0, 0));
	assert_string_equal(rules(report(1, 1, "", proc(""), th, "")),
			    "oversubscribed");
	/* On two CPUs: not this rule. */
	snprintf(th, sizeof(th), "%s,%s", thread(2, 5, 0, 0, 0, -1, 0, 0),
		 thread(3, 5, 0, 1, 0, -1, 0, 0));
	assert_string_equal(rules(report(1, 2, "", proc(""), th, "")), "");
	/* On one CPU for less than a period (20 s): maybe by chance, so
	 * not a binding; but two busy threads on the one CPU they ran on. */
	snprintf(th, sizeof(th), "%s,%s", thread(2, 5, 0, 0, 0, -1, 0, 0),
		 thread(3, 5, 0, 0, 0, -1, 0, 0));
	struct json_object *r = report(1, 2, "", proc(""), th, "");
	struct json_object *params = json_object_new_object();
	json_object_object_add(params, "period", json_object_new_double(20));
	json_object_object_add(json_object_object_get(r, "policy"), "params",
			       params);
	assert_string_equal(rules(r), "oversubscribed");
}

static void old_reports_say_nothing(void **state)
{
	(void)state;
	/* No cpus (a report from before they were kept): no guess. */
	assert_string_equal(
		rules(report(1, 2, "", proc(""),
			     "{'tid': 2, 'pid': 100, 'first_seen_s': 0,"
			     " 'last_seen_s': 10, 'time_per_node_s': [5]},"
			     "{'tid': 3, 'pid': 100, 'first_seen_s': 0,"
			     " 'last_seen_s': 10, 'time_per_node_s': [5]}",
			     "")),
		"");
	/* Without task-clock, time is wall time: no busy thread known. */
	struct json_object *r =
		report(1, 2, "", proc(""),
		       "{'tid': 2, 'pid': 100, 'first_seen_s': 0,"
		       " 'last_seen_s': 10, 'time_per_node_s': [10],"
		       " 'cpus': [[0, 0, 0]]},"
		       "{'tid': 3, 'pid': 100, 'first_seen_s': 0,"
		       " 'last_seen_s': 10, 'time_per_node_s': [10],"
		       " 'cpus': [[0, 0, 0]]}",
		       "");
	json_object_object_add(
		json_object_object_get(json_object_object_get(r, "counters"),
				       "measured"),
		"task_clock", json_object_new_boolean(0));
	assert_string_equal(rules(r), "");
	/* Not a report, ill-typed fields: no advice, no crash. */
	assert_string_equal(rules(json_object_new_int(3)), "");
	assert_string_equal(
		rules(json_tokener_parse("{\"threads\": 3, \"processes\": {}, "
					 "\"events\": [1, {\"kind\": 2}]}")),
		"");
	assert_string_equal(
		rules(report(2, 2, ", 'smt_siblings': [3, [1]]",
			     "{'pid': 100, 'pages_per_node_first': 'x',"
			     " 'pages': 4, 'children_not_followed': 'y'}, 7",
			     "{'tid': 1, 'pid': 100, 'first_seen_s': 0,"
			     " 'last_seen_s': 10, 'time_per_node_s': 5,"
			     " 'cpus': [5, [1]]}, {'cpus': {}}, 3",
			     "{'kind': 'swap', 'tid': 'a'}, []")),
		"");
}

static void oversubscribed(void **state)
{
	(void)state;
	char th[2400];
	/* Four busy threads on the 2 CPUs they ran on, half a CPU each. */
	snprintf(th, sizeof(th), "%s,%s,%s,%s", thread(1, 5, 0, 0, 0, -1, 0, 0),
		 thread(2, 5, 0, 1, 0, -1, 0, 0),
		 thread(3, 5, 0, 0, 0, 1, 3, 0),
		 thread(4, 5, 0, 1, 0, 0, 3, 0));
	assert_string_equal(rules(report(1, 2, "", proc(""), th, "")),
			    "oversubscribed");
	assert_non_null(
		strstr(first(report(1, 2, "", proc(""), th, ""), "evidence"),
		       "4 busy threads at once on the 2 CPUs"));
	/* Two threads at half a CPU each on two CPUs: other jobs' load,
	 * not this one's mistake. */
	snprintf(th, sizeof(th), "%s,%s", thread(1, 5, 0, 0, 0, -1, 0, 0),
		 thread(2, 5, 0, 1, 0, -1, 0, 0));
	assert_string_equal(rules(report(1, 2, "", proc(""), th, "")), "");
	/* Four at nearly a CPU each (8 CPUs, 2 seen only so far): no. */
	snprintf(th, sizeof(th), "%s,%s,%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 9, 0, 1, 0, -1, 0, 0),
		 thread(3, 9, 0, 0, 0, 1, 3, 0),
		 thread(4, 9, 0, 1, 0, 0, 3, 0));
	assert_string_equal(rules(report(1, 8, "", proc(""), th, "")), "");
	/* Four one after another: never more than one at once. */
	assert_string_equal(
		rules(report(1, 2, "", proc(""),
			     "{'tid': 1, 'first_seen_s': 0, 'last_seen_s': 1,"
			     " 'time_per_node_s': [0.5], 'cpus': [[0,0,0]]},"
			     "{'tid': 2, 'first_seen_s': 1, 'last_seen_s': 2,"
			     " 'time_per_node_s': [0.5], 'cpus': [[1,1,0]]},"
			     "{'tid': 3, 'first_seen_s': 2, 'last_seen_s': 3,"
			     " 'time_per_node_s': [0.5], 'cpus': [[1,1,0]]}",
			     "")),
		"");
}

static const char *smt = ", 'smt_siblings': [[0, 2], [1, 3]]";

static void smt_shared(void **state)
{
	(void)state;
	char th[1200];
	/* CPUs 0 and 2 are one core; core 1 (CPUs 1, 3) had none. */
	snprintf(th, sizeof(th), "%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 9, 0, 2, 0, -1, 0, 0));
	assert_string_equal(rules(report(1, 4, smt, proc(""), th, "")),
			    "smt_shared");
	assert_non_null(
		strstr(first(report(1, 4, smt, proc(""), th, ""), "evidence"),
		       "CPUs 0 and 2"));
	/* One a core: right. */
	snprintf(th, sizeof(th), "%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 9, 0, 1, 0, -1, 0, 0));
	assert_string_equal(rules(report(1, 4, smt, proc(""), th, "")), "");
	/* Both cores busy as well: no idle core to go to. */
	snprintf(th, sizeof(th), "%s,%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 9, 0, 2, 0, -1, 0, 0),
		 thread(3, 9, 0, 1, 0, -1, 0, 0));
	assert_string_equal(rules(report(1, 4, smt, proc(""), th, "")), "");
	/* A machine without SMT siblings in the report: nothing said. */
	snprintf(th, sizeof(th), "%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 9, 0, 2, 0, -1, 0, 0));
	assert_string_equal(rules(report(1, 4, "", proc(""), th, "")), "");
}

static void data_on_one_node(void **state)
{
	(void)state;
	char th[1200];
	/* Threads on nodes 0 and 1 alike, 90% of the pages on node 0. */
	snprintf(th, sizeof(th), "%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 0, 9, 4, 1, -1, 0, 0));
	assert_string_equal(
		rules(report(2, 8, "",
			     proc(", 'pages_per_node_first': [900, 100],"
				  " 'pages': {'moves': 2, 'moved_bytes': 0}"),
			     th, "")),
		"data_on_one_node");
	assert_non_null(strstr(
		first(report(2, 8, "",
			     proc(", 'pages_per_node_first': [900, 100]"), th,
			     ""),
		      "next_time"),
		"numactl --cpunodebind=0 --membind=0"));
	/* Spread pages: right. */
	assert_string_equal(
		rules(report(2, 8, "",
			     proc(", 'pages_per_node_first': [500, 500]"), th,
			     "")),
		"");
	/* A small process: no data to speak of. */
	assert_string_equal(
		rules(report(2, 8, "",
			     proc(", 'pages_per_node_first': [90, 0]"), th,
			     "")),
		"");
	/* Threads on node 0 with their data: right. */
	snprintf(th, sizeof(th), "%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 9, 0, 1, 0, -1, 0, 0));
	assert_string_equal(
		rules(report(2, 8, "",
			     proc(", 'pages_per_node_first': [900, 100]"), th,
			     "")),
		"");
	/* One node: nothing spread. */
	assert_string_equal(
		rules(report(1, 8, "", proc(", 'pages_per_node_first': [900]"),
			     th, "")),
		"");
}

static void memory_bound_away(void **state)
{
	(void)state;
	char th[1200];
	snprintf(th, sizeof(th), "%s,%s", thread(1, 9, 0, 0, 0, -1, 0, 0),
		 thread(2, 9, 0, 1, 0, -1, 0, 0));
	/* Bound to node 1, threads on node 0 (numactl --membind=1). */
	const char *bound = ", 'pages_per_node_first': [0, 1000],"
			    " 'pages': {'bound_by_its_policy': true}";
	assert_string_equal(rules(report(2, 8, "", proc(bound), th, "")),
			    "memory_bound_away");
	assert_non_null(strstr(
		first(report(2, 8, "", proc(bound), th, ""), "numalot_did"),
		"left its pages where their policy binds them"));
	/* Bound where the threads are: right. */
	assert_string_equal(
		rules(report(2, 8, "",
			     proc(", 'pages_per_node_first': [1000, 0],"
				  " 'pages': {'bound_by_its_policy': true}"),
			     th, "")),
		"");
	/* Not bound: the data rule's, not this one's. */
	assert_string_equal(
		rules(report(2, 8, "",
			     proc(", 'pages_per_node_first': [0, 1000]"), th,
			     "")),
		"data_on_one_node");
}

static void children_not_followed(void **state)
{
	(void)state;
	assert_string_equal(
		rules(report(1, 2, "", proc(", 'children_not_followed': 2"), "",
			     "")),
		"children_not_followed");
	assert_non_null(strstr(
		first(report(1, 2, "", proc(", 'children_not_followed': 2"), "",
			     ""),
		      "next_time"),
		"--children"));
	assert_string_equal(rules(report(1, 2, "", proc(""), "", "")), "");
}

/* The site log's line names them too (spank/collect.c). */
static void site_line_names_them(void **state)
{
	(void)state;
	struct json_object *r =
		report(1, 2, "", proc(", 'children_not_followed': 3"), "", "");
	struct nl_collect_ids id = {.job = 7, .step = 0, .node = "n1"};
	char *line = nl_site_line(r, &id, 0);
	assert_non_null(line);
	assert_non_null(strstr(line, "\"advice\":[\"children_not_followed\"]"));
	free(line);
	json_object_put(r);
}

/* The digest (and so the site log's line) names the rules. */
static void digest_names_them(void **state)
{
	(void)state;
	struct json_object *r =
		report(1, 2, "", proc(", 'children_not_followed': 3"), "", "");
	struct json_object *d = nl_digest(r), *a;
	assert_true(json_object_object_get_ex(d, "advice", &a));
	assert_int_equal(json_object_array_length(a), 1);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(a, 0)),
		"children_not_followed");
	json_object_put(d);
	json_object_put(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_cpu),
		cmocka_unit_test(old_reports_say_nothing),
		cmocka_unit_test(oversubscribed),
		cmocka_unit_test(smt_shared),
		cmocka_unit_test(data_on_one_node),
		cmocka_unit_test(memory_bound_away),
		cmocka_unit_test(children_not_followed),
		cmocka_unit_test(digest_names_them),
		cmocka_unit_test(site_line_names_them),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
