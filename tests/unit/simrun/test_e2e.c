/*
 * End to end on the simulated node: the engine, the policies and the model
 * together. Run from the repository root (tests/run-tests.sh does).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "scenario.h"
#include "sim.h"

#define REMOTE "etc/scenarios/two-node-remote.json"

struct result {
	double makespan_s;
	struct nl_engine_summary sum;
	char *report; /* JSON text */
};

static void run(const char *path, enum nl_policy_kind k, uint64_t seed,
		struct result *out)
{
	struct nl_scenario *sc;
	struct nl_machine *m;
	struct nl_engine *e;
	struct nl_policy_params p;
	const struct nl_process_info *pi;
	size_t n;
	char err[512];

	if (nl_scenario_load(path, &sc, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(nl_sim_create(sc, seed, &m, err, sizeof(err)), 0);
	nl_policy_params_default(&p);
	assert_int_equal(nl_engine_create(m, &e), 0);
	assert_int_equal(nl_engine_add_domain(e, 0, "job 0", k, &p, seed), 0);
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nl_engine_add_process(e, pi[i].pid, 0), 0);
	assert_int_equal(nl_engine_run(e), 0);
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	out->makespan_s = 0;
	for (size_t i = 0; i < n; i++) {
		assert_true(pi[i].end_s > 0); /* every process finished */
		if (pi[i].end_s > out->makespan_s)
			out->makespan_s = pi[i].end_s;
	}
	assert_int_equal(nl_engine_summary(e, 0, &out->sum), 0);
	struct json_object *r = nl_engine_report(e, 0);
	out->report = strdup(
		json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY));
	json_object_put(r);
	nl_engine_free(e);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
}

/* Data on node 0, threads started on node 1: moving them must pay off. */
static void policies_beat_static_on_remote_data(void **state)
{
	(void)state;
	struct result st, im, lb;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		run(REMOTE, NL_POLICY_STATIC, seed, &st);
		run(REMOTE, NL_POLICY_IMAR2, seed, &im);
		run(REMOTE, NL_POLICY_LBMA, seed, &lb);
		print_message(
			"seed %d: static %.2f s, imar2 %.2f s, lbma %.2f s\n",
			(int)seed, st.makespan_s, im.makespan_s, lb.makespan_s);
		assert_int_equal(st.sum.migrations + st.sum.swaps, 0);
		assert_true(im.sum.migrations + im.sum.swaps > 0);
		assert_true(lb.sum.migrations + lb.sum.swaps > 0);
		assert_true(im.makespan_s < st.makespan_s * 0.95);
		assert_true(lb.makespan_s < st.makespan_s * 0.95);
		free(st.report);
		free(im.report);
		free(lb.report);
	}
}

static void same_seed_same_report(void **state)
{
	(void)state;
	struct result a, b, c;
	run(REMOTE, NL_POLICY_LBMA, 5, &a);
	run(REMOTE, NL_POLICY_LBMA, 5, &b);
	run(REMOTE, NL_POLICY_LBMA, 6, &c);
	assert_string_equal(a.report, b.report);
	/* ...and the seed matters (the lottery and the noise draw on it). */
	assert_true(strcmp(a.report, c.report) != 0);
	free(a.report);
	free(b.report);
	free(c.report);
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;
	if (!json_object_object_get_ex(o, k, &v))
		fail_msg("report has no field \"%s\"", k);
	return v;
}

/* The report carries what docs/report-format.md promises. */
static void report_fields(void **state)
{
	(void)state;
	struct result r;
	run(REMOTE, NL_POLICY_IMAR2, 2, &r);
	struct json_object *j = json_tokener_parse(r.report);
	assert_non_null(j);
	assert_string_equal(
		json_object_get_string(get(get(j, "policy"), "name")), "imar2");
	get(get(get(j, "policy"), "params"), "tickets.preferred");
	struct json_object *c = get(j, "counters");
	assert_string_equal(json_object_get_string(get(c, "backend")),
			    "model-pebs");
	assert_true(json_object_get_boolean(
		get(get(c, "measured"), "instructions")));
	assert_true(
		json_object_get_boolean(get(get(c, "perf_terms"), "latency")));
	struct json_object *mach = get(j, "machine");
	assert_int_equal(json_object_get_int(get(mach, "nodes")), 2);
	assert_int_equal(json_object_array_length(get(mach, "distances")), 2);
	struct json_object *procs = get(j, "processes");
	assert_true(json_object_array_length(procs) >= 1);
	get(json_object_array_get_idx(procs, 0), "completion_s");
	struct json_object *t0 =
		json_object_array_get_idx(get(j, "threads"), 0);
	assert_true(json_object_get_double(get(t0, "oi")) > 0);
	assert_true(json_object_get_double(get(t0, "latency_ns")) > 0);
	assert_int_equal(json_object_array_length(get(t0, "time_per_node_s")),
			 2);
	struct json_object *ev = get(j, "events");
	assert_true(json_object_array_length(ev) > 0);
	struct json_object *e0 = json_object_array_get_idx(ev, 0);
	get(e0, "t_s");
	get(e0, "kind");
	get(e0, "from_node");
	get(e0, "to_node");
	get(e0, "reason");
	struct json_object *sum = get(j, "summary");
	assert_int_equal(json_object_get_int(get(sum, "migrations")),
			 r.sum.migrations);
	assert_int_equal(json_object_get_int(get(sum, "rollbacks")),
			 r.sum.rollbacks);
	json_object_put(j);
	free(r.report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(policies_beat_static_on_remote_data),
		cmocka_unit_test(same_seed_same_report),
		cmocka_unit_test(report_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
