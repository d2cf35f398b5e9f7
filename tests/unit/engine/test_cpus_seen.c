/*
 * Unit tests of the threads' sampled CPUs in the report (threads[].cpus,
 * docs/report-format.md) against a scripted machine whose samples say
 * where each thread ran: an entry at the first sample and at each change;
 * at most 16 a thread, changes within a node thinned first so that the
 * list still says which node when; at most 40,000 in a report, the rest
 * counted in summary.cpus_dropped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"

struct script {
	struct nl_machine m;
	struct nl_topology *topo;
	double now;
	int step, steps;
	struct nl_thread_info *live;
	size_t nlive;
	struct nl_process_info proc;
	/* The CPU a sample finds tid on at this step. */
	int (*cpu_at)(int tid, int step);
	int last_cpu; /* the last sample's, of any thread */
};

static struct script *S(struct nl_machine *m)
{
	return m->priv;
}

static int sc_threads(struct nl_machine *m, const struct nl_thread_info **out,
		      size_t *n)
{
	*out = S(m)->live;
	*n = S(m)->nlive;
	return 0;
}

static int sc_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	memset(out, 0, sizeof(*out));
	out->measured = NL_M_TASK_CLOCK | NL_M_CPU;
	out->wall_s = out->task_clock_s = 1;
	out->cpu = S(m)->last_cpu = S(m)->cpu_at(tid, S(m)->step);
	return 0;
}

static int sc_place(struct nl_machine *m, int tid, int cpu)
{
	(void)m, (void)tid, (void)cpu;
	return 0;
}

static int sc_release(struct nl_machine *m, int tid)
{
	(void)m, (void)tid;
	return 0;
}

static int sc_wait(struct nl_machine *m, double seconds)
{
	struct script *s = S(m);
	s->now += seconds;
	return ++s->step < s->steps;
}

static double sc_now(struct nl_machine *m)
{
	return S(m)->now;
}

static int sc_processes(struct nl_machine *m,
			const struct nl_process_info **out, size_t *n)
{
	*out = &S(m)->proc;
	*n = 1;
	return 0;
}

static void sc_destroy(struct nl_machine *m)
{
	(void)m;
}

static const struct nl_machine_ops ops = {
	.threads = sc_threads,
	.sample = sc_sample,
	.place = sc_place,
	.release = sc_release,
	.wait = sc_wait,
	.now = sc_now,
	.processes = sc_processes,
	.destroy = sc_destroy,
};

/* Run nthreads threads (tids 1000...) for steps periods under monitor
 * (numalot moves nothing: every change is the samples'), the report. */
static int last_cpu;

static struct json_object *run(size_t nthreads, int steps,
			       int (*cpu_at)(int, int))
{
	struct script s = {.steps = steps, .cpu_at = cpu_at};
	struct nl_engine *e;
	struct nl_policy_params p;

	assert_int_equal(
		nl_topology_load("numa:2 core:4 pu:1", &s.topo, NULL, 0), 0);
	s.live = calloc(nthreads, sizeof(*s.live));
	assert_non_null(s.live);
	for (size_t i = 0; i < nthreads; i++) {
		s.live[i].tid = 1000 + (int)i;
		s.live[i].pid = 100;
		s.live[i].start_time = 1;
		s.live[i].allowed = hwloc_bitmap_alloc();
		hwloc_bitmap_set_range(s.live[i].allowed, 0, 7);
	}
	s.nlive = nthreads;
	s.m = (struct nl_machine){.ops = &ops,
				  .topo = s.topo,
				  .backend = "script",
				  .measured = NL_M_TASK_CLOCK | NL_M_CPU,
				  .priv = &s};
	s.proc = (struct nl_process_info){.pid = 100, .end_s = -1};
	nl_policy_params_default(&p);
	p.period_s = 1;
	assert_int_equal(nl_engine_create(&s.m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 1, "job 1", NL_POLICY_MONITOR, &p, 1),
		0);
	assert_int_equal(nl_engine_add_process(e, 100, 1), 0);
	assert_int_equal(nl_engine_run(e), 0);
	struct json_object *r = nl_engine_report(e, 1);
	assert_non_null(r);
	nl_engine_free(e);
	last_cpu = s.last_cpu;
	for (size_t i = 0; i < nthreads; i++)
		hwloc_bitmap_free(s.live[i].allowed);
	free(s.live);
	nl_topology_free(s.topo);
	return r;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;
	assert_true(json_object_object_get_ex(o, k, &v));
	return v;
}

static int entry(struct json_object *cpus, size_t i, int what)
{
	return json_object_get_int(json_object_array_get_idx(
		json_object_array_get_idx(cpus, i), (size_t)what));
}

/* CPU 0 for three steps, then 5 (node 1) for the rest. */
static int once(int tid, int step)
{
	(void)tid;
	return step < 3 ? 0 : 5;
}

static void first_and_each_change(void **state)
{
	(void)state;
	struct json_object *r = run(1, 8, once);
	struct json_object *t = json_object_array_get_idx(get(r, "threads"), 0);
	struct json_object *cpus = get(t, "cpus");
	assert_int_equal(json_object_array_length(cpus), 2);
	assert_int_equal(entry(cpus, 0, 1), 0);
	assert_int_equal(entry(cpus, 0, 2), 0);
	assert_int_equal(entry(cpus, 1, 1), 5);
	assert_int_equal(entry(cpus, 1, 2), 1);
	/* [t_s, cpu, node]: the change seen at the fourth sample. */
	assert_true(json_object_get_double(json_object_array_get_idx(
			    json_object_array_get_idx(cpus, 1), 0)) >
		    json_object_get_double(json_object_array_get_idx(
			    json_object_array_get_idx(cpus, 0), 0)));
	assert_false(json_object_object_get_ex(t, "cpus_thinned", NULL));
	json_object_put(r);
}

/* 30 steps hopping within node 0 (CPUs 0-3), then 40 steps between the
 * nodes (CPU 0, CPU 4), ending on node 1. */
static int hopping(int tid, int step)
{
	(void)tid;
	if (step < 30)
		return step % 4;
	return step % 2 ? 4 : 0;
}

static void bounded_nodes_kept(void **state)
{
	(void)state;
	struct json_object *r = run(1, 71, hopping);
	struct json_object *t = json_object_array_get_idx(get(r, "threads"), 0);
	struct json_object *cpus = get(t, "cpus");
	size_t n = json_object_array_length(cpus);
	assert_true(n >= 2 && n <= 16);
	/* The first sample stays; the list ends where the thread is. */
	assert_int_equal(entry(cpus, 0, 1), 0);
	assert_int_equal(entry(cpus, n - 1, 1), last_cpu);
	/* Entries are in time order, each a change from the one before. */
	for (size_t i = 1; i < n; i++) {
		assert_true(
			json_object_get_double(json_object_array_get_idx(
				json_object_array_get_idx(cpus, i), 0)) >
			json_object_get_double(json_object_array_get_idx(
				json_object_array_get_idx(cpus, i - 1), 0)));
		assert_int_not_equal(entry(cpus, i, 1), entry(cpus, i - 1, 1));
	}
	/* 30 + 40 changes at most, all but n counted as thinned. */
	int thinned = json_object_get_int(get(t, "cpus_thinned"));
	assert_true(thinned > 0);
	assert_true((size_t)thinned + n <= 71);
	/* Both nodes still shown. */
	int node1 = 0;
	for (size_t i = 0; i < n; i++)
		node1 |= entry(cpus, i, 2) == 1;
	assert_true(node1);
	json_object_put(r);
}

/* Every thread on the other node each step (16 samples: 0 to 15 s). */
static int every_step(int tid, int step)
{
	return (tid + step) % 2 ? 4 : 0;
}

static void report_bounded(void **state)
{
	(void)state;
	/* 2,600 threads x 16 entries would be 41,600: past 40,000. */
	struct json_object *r = run(2600, 15, every_step);
	struct json_object *th = get(r, "threads");
	size_t listed = 0, without = 0, each = 0;
	for (size_t i = 0; i < json_object_array_length(th); i++) {
		struct json_object *c;
		if (json_object_object_get_ex(json_object_array_get_idx(th, i),
					      "cpus", &c)) {
			each = json_object_array_length(c);
			listed += each;
		} else
			without++;
	}
	assert_int_equal(each, 16);
	assert_true(listed <= 40000 && listed > 40000 - 16);
	assert_true(without > 0);
	assert_int_equal(
		json_object_get_int(get(get(r, "summary"), "cpus_dropped")),
		(int)(without * each));
	json_object_put(r);
}

/* Brief trips to node 1 from a long stay on node 0, then a long stay
 * on node 1: past the bound, the brief ones go, the long ones stay. */
static int trips(int tid, int step)
{
	(void)tid;
	if (step >= 60)
		return 4;
	return step % 6 == 5 ? 4 : 0;
}

static void brief_stays_go_first(void **state)
{
	(void)state;
	struct json_object *r = run(1, 80, trips);
	struct json_object *t = json_object_array_get_idx(get(r, "threads"), 0);
	struct json_object *cpus = get(t, "cpus");
	size_t n = json_object_array_length(cpus);
	assert_true(n <= 16);
	for (size_t i = 1; i < n; i++)
		assert_int_not_equal(entry(cpus, i, 1), entry(cpus, i - 1, 1));
	/* It starts on node 0 and ends on node 1, from 59 s (its last trip). */
	assert_int_equal(entry(cpus, 0, 2), 0);
	assert_int_equal(entry(cpus, n - 1, 2), 1);
	assert_true(json_object_get_double(json_object_array_get_idx(
			    json_object_array_get_idx(cpus, n - 1), 0)) >= 59);
	assert_true(json_object_get_int(get(t, "cpus_thinned")) > 0);
	json_object_put(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_and_each_change),
		cmocka_unit_test(bounded_nodes_kept),
		cmocka_unit_test(brief_stays_go_first),
		cmocka_unit_test(report_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
