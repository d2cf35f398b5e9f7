/*
 * Unit tests of the engine's loop against a scripted machine (a test edge,
 * not a real one): threads that appear, vanish, reuse a tid, or exit between
 * decision and move; every placement stays inside the allowed set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define MAXT 16

struct script {
	struct nl_machine m;
	struct nl_topology *topo;
	double now;
	int step;
	struct nl_thread_info live[MAXT];
	size_t nlive;
	int gone_on_place; /* tid that "exits" when placed */
	int places, bad_places;
	struct nl_process_info proc;
	/* The wait after step late_step wakes late_s past its time (numalot
	 * starved of CPU). */
	int late_step;
	double late_s;
};

static struct script *S(struct nl_machine *m)
{
	return m->priv;
}

static void set_thread(struct script *s, size_t i, int tid,
		       unsigned long long start, int cpu)
{
	s->live[i].tid = tid;
	s->live[i].pid = 100;
	s->live[i].start_time = start;
	s->live[i].cpu = cpu;
}

/* The script: step 0 threads 101..104; step 2 adds 105; step 3 drops 102;
 * step 4 brings tid 103 back as a new thread (other start time). */
static void play(struct script *s)
{
	size_t n = 0;
	set_thread(s, n++, 101, 1, 0);
	if (s->step < 3)
		set_thread(s, n++, 102, 1, 1);
	set_thread(s, n++, 103, s->step >= 4 ? 99 : 1, 2);
	set_thread(s, n++, 104, 1, 3);
	if (s->step >= 2)
		set_thread(s, n++, 105, 5, 0);
	s->nlive = n;
}

static int sc_threads(struct nl_machine *m, const struct nl_thread_info **out,
		      size_t *n)
{
	play(S(m));
	*out = S(m)->live;
	*n = S(m)->nlive;
	return 0;
}

static int sc_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	memset(out, 0, sizeof(*out));
	out->measured = NL_M_INSTRUCTIONS | NL_M_TASK_CLOCK | NL_M_CPU;
	out->wall_s = 0.5;
	out->task_clock_s = 0.5;
	/* Thread 101 lags far behind its siblings. */
	out->instructions = tid == 101 ? 1e6 : 1e9;
	out->cpu = -1;
	(void)m;
	return 0;
}

static int sc_place(struct nl_machine *m, int tid, int cpu)
{
	struct script *s = S(m);
	for (size_t i = 0; i < s->nlive; i++)
		if (s->live[i].tid == tid) {
			if (tid == s->gone_on_place)
				return -ESRCH;
			if (!hwloc_bitmap_isset(s->live[i].allowed,
						(unsigned)cpu))
				s->bad_places++;
			s->live[i].cpu = cpu;
			s->places++;
			return 0;
		}
	return -ESRCH;
}

static int sc_release(struct nl_machine *m, int tid)
{
	(void)m;
	(void)tid;
	return 0;
}

static int sc_wait(struct nl_machine *m, double seconds)
{
	struct script *s = S(m);
	s->now += seconds + (s->step == s->late_step ? s->late_s : 0);
	s->step++;
	return s->step < 8;
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

static const struct nl_machine_ops script_ops = {
	.threads = sc_threads,
	.sample = sc_sample,
	.place = sc_place,
	.release = sc_release,
	.wait = sc_wait,
	.now = sc_now,
	.processes = sc_processes,
	.destroy = sc_destroy,
};

static void script_init(struct script *s)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(
		nl_topology_load("numa:2 core:4 pu:1", &s->topo, NULL, 0), 0);
	for (int i = 0; i < MAXT; i++) {
		s->live[i].allowed = hwloc_bitmap_alloc();
		/* Only CPUs 0-5: 6 and 7 are not the job's. */
		hwloc_bitmap_set_range(s->live[i].allowed, 0, 5);
	}
	s->m = (struct nl_machine){.ops = &script_ops,
				   .topo = s->topo,
				   .backend = "script",
				   .measured =
					   NL_M_INSTRUCTIONS | NL_M_TASK_CLOCK,
				   .priv = s};
	s->proc = (struct nl_process_info){.pid = 100, .end_s = -1};
	strcpy(s->proc.name, "scripted");
	s->gone_on_place = -1;
	s->late_step = -1;
}

static void script_free(struct script *s)
{
	for (int i = 0; i < MAXT; i++)
		hwloc_bitmap_free(s->live[i].allowed);
	nl_topology_free(s->topo);
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;
	assert_true(json_object_object_get_ex(o, k, &v));
	return v;
}

static void appear_vanish_reuse(void **state)
{
	(void)state;
	struct script s;
	struct nl_engine *e;
	struct nl_policy_params p;

	script_init(&s);
	nl_policy_params_default(&p);
	/* The paper's profile moves without a reason in the data. */
	nl_policy_params_profile(&p, NL_PROFILE_PAPER);
	p.period_s = 0.5;
	assert_int_equal(nl_engine_create(&s.m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 1, "job 1", NL_POLICY_LBMA, &p, 3), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 1, "again", NL_POLICY_LBMA, &p, 3),
		-EEXIST);
	assert_int_equal(nl_engine_add_process(e, 100, 1), 0);
	assert_int_equal(nl_engine_add_process(e, 100, 1), -EEXIST);
	assert_int_equal(nl_engine_add_process(e, 200, 9), -ENOENT);
	assert_int_equal(nl_engine_run(e), 0);

	struct json_object *r = nl_engine_report(e, 1);
	assert_non_null(r);
	/* 101..105 plus the second life of 103: six threads. */
	struct json_object *threads = get(r, "threads");
	assert_int_equal(json_object_array_length(threads), 6);
	int n103 = 0;
	for (size_t i = 0; i < 6; i++) {
		struct json_object *t = json_object_array_get_idx(threads, i);
		n103 += json_object_get_int(get(t, "tid")) == 103;
	}
	assert_int_equal(n103, 2);
	struct json_object *sum = get(r, "summary");
	assert_true(json_object_get_int(get(sum, "periods")) >= 6);
	/* Moves happened, and none left the allowed CPUs 0-5. */
	assert_true(json_object_get_int(get(sum, "migrations")) +
			    json_object_get_int(get(sum, "swaps")) >
		    0);
	assert_true(s.places > 0);
	assert_int_equal(s.bad_places, 0);
	assert_string_equal(
		json_object_get_string(get(get(r, "counters"), "backend")),
		"script");
	json_object_put(r);
	assert_null(nl_engine_report(e, 42));

	/* A report on part of the domain: its process only. */
	int mine = 100, other = 555;
	r = nl_engine_report_pids(e, 1, &mine, 1);
	assert_int_equal(json_object_array_length(get(r, "threads")), 6);
	json_object_put(r);
	r = nl_engine_report_pids(e, 1, &other, 1);
	assert_int_equal(json_object_array_length(get(r, "threads")), 0);
	assert_int_equal(json_object_array_length(get(r, "processes")), 0);
	assert_int_equal(json_object_array_length(get(r, "events")), 0);
	assert_int_equal(json_object_get_int(get(get(r, "summary"), "swaps")),
			 0);
	json_object_put(r);
	/* Removing the process forgets its threads; the domain stays. */
	assert_int_equal(nl_engine_remove_process(e, 100), 0);
	assert_int_equal(nl_engine_remove_process(e, 100), -ENOENT);
	r = nl_engine_report(e, 1);
	assert_int_equal(json_object_array_length(get(r, "threads")), 0);
	json_object_put(r);
	nl_engine_free(e);
	script_free(&s);
}

/* How late periods start is kept: the most and the mean (numalot's own
 * timeliness, in the report of numalot run). */
static void lateness_is_kept(void **state)
{
	(void)state;
	struct script s;
	struct nl_engine *e;
	struct nl_policy_params p;
	struct nl_engine_summary sum;
	double max_s, mean_s;

	for (int late = 0; late <= 1; late++) {
		script_init(&s);
		nl_policy_params_default(&p);
		p.period_s = 0.5;
		if (late) {
			s.late_step = 3;
			s.late_s = 0.7;
		}
		assert_int_equal(nl_engine_create(&s.m, &e), 0);
		assert_int_equal(nl_engine_add_domain(e, 1, "job 1",
						      NL_POLICY_MONITOR, &p, 3),
				 0);
		assert_int_equal(nl_engine_add_process(e, 100, 1), 0);
		assert_int_equal(nl_engine_run(e), 0);
		assert_int_equal(nl_engine_summary(e, 1, &sum), 0);
		assert_true(sum.periods >= 4);
		nl_engine_lateness(e, &max_s, &mean_s);
		if (late) {
			assert_float_equal(max_s, 0.7, 1e-9);
			assert_float_equal(mean_s, 0.7 / (double)sum.periods,
					   1e-9);
		} else {
			assert_float_equal(max_s, 0, 1e-12);
			assert_float_equal(mean_s, 0, 1e-12);
		}
		nl_engine_free(e);
		script_free(&s);
	}
}

/* A thread that exits between decision and move is journaled, not fatal. */
static void exit_before_move(void **state)
{
	(void)state;
	struct script s;
	struct nl_engine *e;
	struct nl_policy_params p;
	struct nl_engine_summary sum;

	script_init(&s);
	s.gone_on_place = 104;
	nl_policy_params_default(&p);
	/* The paper's profile moves without a reason in the data. */
	nl_policy_params_profile(&p, NL_PROFILE_PAPER);
	p.period_s = 0.5;
	assert_int_equal(nl_engine_create(&s.m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 0, "j", NL_POLICY_IMAR2, &p, 1), 0);
	assert_int_equal(nl_engine_add_process(e, 100, 0), 0);
	assert_int_equal(nl_engine_run(e), 0);
	assert_int_equal(nl_engine_summary(e, 0, &sum), 0);
	assert_true(sum.skips >= 1);
	struct json_object *r = nl_engine_report(e, 0);
	struct json_object *ev = get(r, "events");
	int found = 0;
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		struct json_object *x = json_object_array_get_idx(ev, i);
		if (json_object_get_int(get(x, "tid")) == 104 &&
		    strstr(json_object_get_string(get(x, "reason")), "exited"))
			found = 1;
	}
	assert_true(found);
	json_object_put(r);
	nl_engine_free(e);
	script_free(&s);
}

/* monitor observes: it never places a thread. */
static void monitor_places_nothing(void **state)
{
	(void)state;
	struct script s;
	struct nl_engine *e;
	struct nl_policy_params p;

	script_init(&s);
	nl_policy_params_default(&p);
	assert_int_equal(nl_engine_create(&s.m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 0, "j", NL_POLICY_MONITOR, &p, 1), 0);
	assert_int_equal(nl_engine_add_process(e, 100, 0), 0);
	assert_int_equal(nl_engine_run(e), 0);
	assert_int_equal(s.places, 0);
	struct json_object *r = nl_engine_report(e, 0);
	struct json_object *t0 =
		json_object_array_get_idx(get(r, "threads"), 0);
	/* Measured: the report carries ops/s of the thread. */
	assert_true(json_object_get_double(get(t0, "ops_per_s")) > 0);
	json_object_put(r);
	nl_engine_free(e);
	script_free(&s);
}

/* The dry run records placements and applies none of them. */
static void dry_run_records(void **state)
{
	(void)state;
	struct script s;
	struct nl_machine *dry;
	struct nl_engine *e;
	struct nl_policy_params p;
	size_t places = 0, releases = 0;

	script_init(&s);
	nl_policy_params_default(&p);
	/* The paper's profile moves without a reason in the data. */
	nl_policy_params_profile(&p, NL_PROFILE_PAPER);
	p.period_s = 0.5;
	assert_int_equal(nl_dryrun_create(&s.m, &dry), 0);
	assert_int_equal(nl_engine_create(dry, &e), 0);
	assert_int_equal(nl_engine_add_domain(e, 0, "j", NL_POLICY_LBMA, &p, 5),
			 0);
	assert_int_equal(nl_engine_add_process(e, 100, 0), 0);
	assert_int_equal(nl_engine_run(e), 0);
	for (size_t i = 0; i < nl_dryrun_count(dry); i++) {
		const char *x = nl_dryrun_entry(dry, i);
		places += strncmp(x, "place ", 6) == 0;
		releases += strncmp(x, "release ", 8) == 0;
	}
	assert_true(places > 0);       /* it would have moved threads */
	assert_true(releases > 0);     /* and given them back at the end */
	assert_int_equal(s.places, 0); /* but touched nothing */
	assert_null(nl_dryrun_entry(dry, nl_dryrun_count(dry)));
	nl_engine_free(e);
	nl_machine_destroy(dry);
	script_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(appear_vanish_reuse),
		cmocka_unit_test(exit_before_move),
		cmocka_unit_test(lateness_is_kept),
		cmocka_unit_test(monitor_places_nothing),
		cmocka_unit_test(dry_run_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
