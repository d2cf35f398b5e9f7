/*
 * Unit tests of the engine under churn and many domains (issue 14): one
 * job's short threads never erase another job's records (a cap per
 * domain), and a machine that can refresh some processes is asked only
 * for the domains that are due.
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

/*
 * Process 100 (domain 1) has 5 threads that end after the first period;
 * process 200 (domain 2) has CHURN new threads every period, each gone
 * by the next.
 */
#define CHURN 12000

struct churn {
	struct nl_machine m;
	struct nl_topology *topo;
	hwloc_bitmap_t all;
	double now;
	int step;
	struct nl_thread_info *live;
	size_t nlive;
	struct nl_process_info proc[2];
	int threads_calls, threads_of_calls;
	int last_pids[8];
	size_t last_npids;
};

static struct churn *C(struct nl_machine *m)
{
	return m->priv;
}

static void play(struct churn *c, int want100, int want200)
{
	size_t n = 0;
	if (want100 && c->step == 0)
		for (int i = 0; i < 5; i++)
			c->live[n++] =
				(struct nl_thread_info){.tid = 100 + i,
							.pid = 100,
							.start_time = 1,
							.cpu = 0,
							.allowed = c->all};
	if (want200)
		for (int i = 0; i < CHURN; i++)
			c->live[n++] = (struct nl_thread_info){
				.tid = 1000 + c->step * CHURN + i,
				.pid = 200,
				.start_time = 1,
				.cpu = 1,
				.allowed = c->all};
	c->nlive = n;
}

static int ch_threads(struct nl_machine *m, const struct nl_thread_info **out,
		      size_t *n)
{
	C(m)->threads_calls++;
	play(C(m), 1, 1);
	*out = C(m)->live;
	*n = C(m)->nlive;
	return 0;
}

static int ch_threads_of(struct nl_machine *m, const int *pids, size_t npids,
			 const struct nl_thread_info **out, size_t *n)
{
	int want100 = 0, want200 = 0;
	struct churn *c = C(m);
	c->threads_of_calls++;
	c->last_npids = npids < 8 ? npids : 8;
	for (size_t i = 0; i < npids; i++) {
		if (i < 8)
			c->last_pids[i] = pids[i];
		want100 |= pids[i] == 100;
		want200 |= pids[i] == 200;
	}
	play(c, want100, want200);
	*out = c->live;
	*n = c->nlive;
	return 0;
}

static int ch_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	(void)m;
	(void)tid;
	memset(out, 0, sizeof(*out));
	out->measured = NL_M_TASK_CLOCK;
	out->wall_s = 1;
	out->task_clock_s = 0.5;
	out->cpu = -1;
	return 0;
}

static int ch_place(struct nl_machine *m, int tid, int cpu)
{
	(void)m;
	(void)tid;
	(void)cpu;
	return 0;
}

static int ch_release(struct nl_machine *m, int tid)
{
	(void)m;
	(void)tid;
	return 0;
}

static int ch_wait(struct nl_machine *m, double s)
{
	C(m)->now += s;
	return 1;
}

static double ch_now(struct nl_machine *m)
{
	return C(m)->now;
}

static int ch_processes(struct nl_machine *m,
			const struct nl_process_info **out, size_t *n)
{
	*out = C(m)->proc;
	*n = 2;
	return 0;
}

static void ch_destroy(struct nl_machine *m)
{
	(void)m;
}

static struct nl_machine_ops ops = {
	.threads = ch_threads,
	.sample = ch_sample,
	.place = ch_place,
	.release = ch_release,
	.wait = ch_wait,
	.now = ch_now,
	.processes = ch_processes,
	.destroy = ch_destroy,
};

static void setup(struct churn *c, int with_threads_of)
{
	memset(c, 0, sizeof(*c));
	assert_int_equal(
		nl_topology_load("numa:2 core:1 pu:1", &c->topo, NULL, 0), 0);
	c->all = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(c->all, 0, 1);
	c->live = calloc(CHURN + 8, sizeof(*c->live));
	ops.threads_of = with_threads_of ? ch_threads_of : NULL;
	c->m = (struct nl_machine){
		.ops = &ops, .topo = c->topo, .backend = "test", .priv = c};
	c->proc[0] =
		(struct nl_process_info){.pid = 100, .job = 1, .end_s = -1};
	c->proc[1] =
		(struct nl_process_info){.pid = 200, .job = 2, .end_s = -1};
}

static void teardown(struct churn *c)
{
	free(c->live);
	hwloc_bitmap_free(c->all);
	nl_topology_free(c->topo);
}

static size_t report_threads(struct nl_engine *e, int domain)
{
	struct json_object *r = nl_engine_report(e, domain), *t;
	size_t n = json_object_object_get_ex(r, "threads", &t)
			   ? json_object_array_length(t)
			   : 0;
	json_object_put(r);
	return n;
}

/* 5 ended threads of one job survive another job's 36,000 short ones. */
static void churn_keeps_other_domains(void **state)
{
	struct churn c;
	struct nl_engine *e;
	struct nl_policy_params p;
	(void)state;
	setup(&c, 0);
	nl_policy_params_default(&p);
	assert_int_equal(nl_engine_create(&c.m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 1, "a", NL_POLICY_MONITOR, &p, 1), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 2, "b", NL_POLICY_MONITOR, &p, 2), 0);
	assert_int_equal(nl_engine_add_process(e, 100, 1), 0);
	assert_int_equal(nl_engine_add_process(e, 200, 2), 0);
	for (c.step = 0; c.step < 4; c.step++) {
		c.now += p.period_s;
		assert_true(nl_engine_step_due(e) > 0);
	}
	assert_int_equal(report_threads(e, 1), 5);
	/* The churning domain keeps at most its cap of ended threads. */
	assert_true(report_threads(e, 2) <= 20000 + CHURN);
	nl_engine_free(e);
	teardown(&c);
}

/* Two domains due at different times: each period asks the machine only
 * for the due domain's processes. */
static void only_due_domains_are_read(void **state)
{
	struct churn c;
	struct nl_engine *e;
	struct nl_policy_params p, q;
	(void)state;
	setup(&c, 1);
	nl_policy_params_default(&p);
	q = p;
	q.period_s = p.period_s * 3;
	assert_int_equal(nl_engine_create(&c.m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 1, "a", NL_POLICY_MONITOR, &p, 1), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 2, "b", NL_POLICY_MONITOR, &q, 2), 0);
	assert_int_equal(nl_engine_add_process(e, 100, 1), 0);
	assert_int_equal(nl_engine_add_process(e, 200, 2), 0);
	c.now += p.period_s;
	assert_true(nl_engine_step_due(e) > 0);
	assert_int_equal(c.threads_calls, 0);
	assert_int_equal(c.threads_of_calls, 1);
	assert_int_equal(c.last_npids, 1);
	assert_int_equal(c.last_pids[0], 100);
	/* Domain 2's threads were not read, so none of them is known yet. */
	assert_int_equal(report_threads(e, 2), 0);
	assert_int_equal(report_threads(e, 1), 5);
	nl_engine_free(e);
	teardown(&c);
}

/* Two domains due 30 ms apart: stepped one at a time, or together
 * within the engine's slack (what the agent sets for many steps). */
static void due_slack_steps_together(void **state)
{
	(void)state;
	for (int slack = 0; slack < 2; slack++) {
		struct churn c;
		struct nl_engine *e;
		struct nl_policy_params p, q;
		setup(&c, 1);
		nl_policy_params_default(&p);
		q = p;
		q.period_s = p.period_s + 0.03;
		assert_int_equal(nl_engine_create(&c.m, &e), 0);
		if (slack)
			nl_engine_set_due_slack(e, 0.05);
		assert_int_equal(nl_engine_add_domain(e, 1, "a",
						      NL_POLICY_MONITOR, &p, 1),
				 0);
		assert_int_equal(nl_engine_add_domain(e, 2, "b",
						      NL_POLICY_MONITOR, &q, 2),
				 0);
		assert_int_equal(nl_engine_add_process(e, 100, 1), 0);
		assert_int_equal(nl_engine_add_process(e, 200, 2), 0);
		c.now += p.period_s; /* the first due, the other in 30 ms */
		assert_true(nl_engine_step_due(e) > 0);
		/* Without slack only domain 1's process is read; with it,
		 * both domains are due, so every thread is. */
		assert_int_equal(c.threads_of_calls, slack ? 0 : 1);
		assert_int_equal(c.threads_calls, slack ? 1 : 0);
		if (!slack)
			assert_int_equal(c.last_pids[0], 100);
		nl_engine_free(e);
		teardown(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(churn_keeps_other_domains),
		cmocka_unit_test(only_due_domains_are_read),
		cmocka_unit_test(due_slack_steps_together),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
