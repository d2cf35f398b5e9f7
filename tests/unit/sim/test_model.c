/* numalot: tests of the simulated NUMA node's physics (core/sim/model.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "machine.h"
#include "model.h"
#include "jsontext.h"
#include "scenario.h"

/* A simulated machine; the scenario is freed at once (the machine must
 * own everything it needs). */
static struct nl_machine *sim(const char *text, uint64_t seed)
{
	struct nl_scenario *sc;
	struct nl_machine *m;
	char err[512] = "";

	if (nl_scenario_parse(json(text), "test.json", NULL, &sc, err,
			      sizeof(err)) < 0)
		fail_msg("scenario: %s", err);
	/* The physics alone: the idealised OS model takes no CPU time. */
	struct nl_model_opts o = {.os_set = 1, .os_mode = NL_OS_LINUX_IDEAL};
	if (strstr(text, "'os'"))
		o.os_set = 0;
	assert_int_equal(nl_sim_create_opts(sc, seed, &o, &m, err, sizeof(err)),
			 0);
	nl_scenario_free(sc);
	return m;
}

static struct nl_model_thread *thr(struct nl_machine *m, int tid)
{
	struct nl_model_thread *t = nl_model_thread(nl_sim_model(m), tid);
	assert_non_null(t);
	return t;
}

static void assert_close(double a, double b, double rel)
{
	if (fabs(a - b) > rel * fmax(fabs(a), fabs(b)))
		fail_msg("%.9g and %.9g differ by more than %g", a, b, rel);
}

#define TWO_NODES                                                              \
	"'machine': {'topology': 'numa:2 core:4 pu:1', 'distances': "          \
	"[[10, 20], [20, 10]], 'contention_k': 0, 'noise': 0}"

/* Latency-bound: remote data costs exactly the latency ratio in memory
 * time (1 + 0.5 * (20 - 10) / 10 = 1.5), and the rate drops. */
static void test_remote_latency_ratio(void **state)
{
	struct nl_machine *m = sim("{" TWO_NODES ", 'processes': [{'kind': "
				   "'latency', 'threads': 1, 'placement': "
				   "'node:0', 'start_node': 0}]}",
				   1);
	struct nl_model_thread *t = thr(m, 1000);
	double l_loc, tm_loc, r_loc;

	(void)state;
	assert_int_equal(t->cpu, 0);
	assert_int_equal(m->ops->wait(m, 0.01), 1);
	l_loc = t->l_eff_ns;
	tm_loc = t->t_memory_s;
	r_loc = t->rate_ops_per_s;
	assert_close(l_loc, 90, 1e-12);
	/* t_memory = bytes_per_op / 64 * L / MLP (latency kind: 1.0, 1.5) */
	assert_close(tm_loc, 1.0 / 64 * 90e-9 / 1.5, 1e-12);
	assert_close(r_loc, 1 / (t->t_compute_s + tm_loc), 1e-12);

	assert_int_equal(m->ops->place(m, 1000, 5), 0);
	assert_int_equal(m->ops->wait(m, 0.01), 1);
	assert_close(t->l_eff_ns / l_loc, 1.5, 1e-12);
	assert_close(t->t_memory_s / tm_loc, 1.5, 1e-12);
	assert_close((1 / t->rate_ops_per_s - t->t_compute_s) /
			     (1 / r_loc - t->t_compute_s),
		     1.5, 1e-9);
	assert_true(t->rate_ops_per_s < 0.8 * r_loc);
	nl_machine_destroy(m);
}

/* Compute-bound: placement hardly matters. */
static void test_compute_indifferent(void **state)
{
	struct nl_machine *m = sim("{" TWO_NODES ", 'processes': [{'kind': "
				   "'compute', 'threads': 1, 'placement': "
				   "'node:0', 'start_node': 0}]}",
				   1);
	struct nl_model_thread *t = thr(m, 1000);
	double r_loc;

	(void)state;
	m->ops->wait(m, 0.01);
	r_loc = t->rate_ops_per_s;
	assert_close(r_loc, 4e9 * 0.8, 0.005);
	assert_int_equal(m->ops->place(m, 1000, 4), 0);
	m->ops->wait(m, 0.01);
	assert_int_equal(t->cpu, 4);
	assert_close(t->rate_ops_per_s, r_loc, 0.002);
	nl_machine_destroy(m);
}

/* Demand beyond a node's bandwidth is served at exactly its capacity. */
static void test_saturated_node_caps_traffic(void **state)
{
	struct nl_machine *m = sim(
		"{'os': 'none', 'machine': {'topology': 'numa:2 core:8 pu:1', "
		"'node_bandwidth_bytes_per_s': 30e9}, 'processes': [{'kind': "
		"'stream', 'threads': 8, 'placement': 'node:0', 'start_node': "
		"0, 'bytes_per_op': 20, 'mlp': 50}]}",
		1);
	struct nl_model *md = nl_sim_model(m);
	double sum = 0;

	(void)state;
	m->ops->wait(m, 0.1);
	assert_true(md->mem_demand[0] > 1.2 * 30e9);
	assert_true(md->mem_served[0] <= 30e9 * (1 + 1e-12));
	assert_close(md->mem_served[0], 30e9, 1e-9);
	for (int k = 0; k < 8; k++)
		sum += thr(m, 1000 + k)->traffic_bytes_per_s;
	assert_close(sum, 30e9, 1e-9);
	/* Held back threads see a longer latency than the unloaded one. */
	assert_true(thr(m, 1000)->l_eff_ns > 5 * 90);
	nl_machine_destroy(m);
}

/* A node's contention factor ends each tick equal to 1 + k rho / (1 - rho)
 * of the demand computed with it, at five points 0.2 s apart. */
static void assert_fixed_point(struct nl_machine *m, double bw, double k)
{
	struct nl_model *md = nl_sim_model(m);

	for (int i = 0; i < 5; i++) {
		double rho, f;
		m->ops->wait(m, 0.2);
		rho = fmin(md->mem_demand[0] / bw, md->p.rho_cap);
		f = 1 + k * rho / (1 - rho);
		assert_close(md->mem_factor[0], f, 1e-3);
	}
}

/*
 * The contention factor is a fixed point of the demand it lets through.
 * With a small k and rho_cap near 1 the queueing curve is nearly a step:
 * fixed damped rounds swung between about 1 and 65 (a stream alone then
 * ran slower on its own node's memory than on another node's), and a step
 * that only shrank as it turned was thrown to 63 whenever the demand
 * crossed the capacity (56 threads with a core each).
 */
#define FIXED_POINT_FMT                                                        \
	"{'os': 'none', 'machine': {'topology': 'numa:2 core:%d pu:1', "       \
	"'node_bandwidth_bytes_per_s': %g, 'contention_k': %g, "               \
	"'rho_cap': %g, 'noise': 0, 'peak_ops_per_s': 5.567e9, "               \
	"'local_latency_ns': 134.5}, 'processes': [{'kind': 'stream', "        \
	"'threads': %d, 'membind': 0, 'cpunodebind': %d, 'work': %g}]}"

static void test_contention_fixed_point(void **state)
{
	double ends[2][2];
	char text[512];
	struct nl_machine *m;

	(void)state;
	for (int c = 0; c < 2; c++)
		for (int side = 0; side < 2; side++) {
			snprintf(text, sizeof(text), FIXED_POINT_FMT, 15,
				 35.46e9, 0.1451, c ? 0.999 : 0.95, 15, side,
				 2e9);
			m = sim(text, 1);
			assert_fixed_point(m, 35.46e9, 0.1451);
			while (m->ops->wait(m, 1) == 1)
				;
			ends[c][side] = nl_model_now(nl_sim_model(m));
			nl_machine_destroy(m);
		}
	/* Local memory beats remote, and the cap does not matter below it. */
	assert_true(ends[0][0] < ends[0][1]);
	assert_true(ends[1][0] < ends[1][1]);
	assert_close(ends[0][0], ends[1][0], 1e-2);

	snprintf(text, sizeof(text), FIXED_POINT_FMT, 56, 47.72e9, 0.2389,
		 0.999, 56, 0, 9.27e9);
	m = sim(text, 1);
	assert_fixed_point(m, 47.72e9, 0.2389);
	nl_machine_destroy(m);
}

/* Likewise a link: node 1's threads reading node 0 memory. */
static void test_saturated_link_caps_traffic(void **state)
{
	struct nl_machine *m = sim(
		"{'os': 'none', 'machine': {'topology': 'numa:2 core:8 pu:1', "
		"'link_bandwidth_bytes_per_s': 10e9}, 'processes': [{'kind': "
		"'stream', 'threads': 8, 'placement': 'node:0', 'start_node': "
		"1, 'bytes_per_op': 20, 'mlp': 50}]}",
		1);
	struct nl_model *md = nl_sim_model(m);

	(void)state;
	m->ops->wait(m, 0.1);
	assert_true(md->link_demand[1 * 2 + 0] > 10e9);
	assert_close(md->link_served[1 * 2 + 0], 10e9, 1e-9);
	assert_close(md->mem_served[0], 10e9, 1e-9);
	nl_machine_destroy(m);
}

/* Two threads time-sharing one CPU each run at half speed, and get half
 * the CPU time. */
static void test_time_sharing_halves(void **state)
{
	struct nl_machine *m = sim("{" TWO_NODES ", 'processes': [{'kind': "
				   "'latency', 'threads': 2, 'placement': "
				   "'node:0'}]}",
				   1);
	struct nl_model_thread *a = thr(m, 1000), *b = thr(m, 1001);
	struct nl_sample s;
	double alone;

	(void)state;
	assert_int_not_equal(a->cpu, b->cpu);
	assert_int_equal(m->ops->place(m, 1000, 0), 0);
	assert_int_equal(m->ops->place(m, 1001, 1), 0);
	m->ops->wait(m, 0.01);
	alone = a->rate_ops_per_s;
	assert_close(b->rate_ops_per_s, alone, 1e-12);
	assert_int_equal(m->ops->place(m, 1001, 0), 0);
	m->ops->sample(m, 1000, &s);
	m->ops->wait(m, 1.0);
	assert_close(a->rate_ops_per_s, alone / 2, 1e-12);
	assert_close(b->rate_ops_per_s, alone / 2, 1e-12);
	assert_int_equal(m->ops->sample(m, 1000, &s), 0);
	assert_close(s.wall_s, 1.0, 1e-9);
	assert_close(s.task_clock_s, 0.5, 1e-9);
	nl_machine_destroy(m);
}

/* Two busy hardware threads of one core each get smt_share of it. */
static void test_smt_share(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:1 core:2 pu:2', 'noise': 0}, "
		"'processes': [{'kind': 'compute', 'threads': 2, "
		"'bytes_per_op': 0}]}",
		1);
	const struct nl_topology *topo = m->topo;
	struct nl_model_thread *a = thr(m, 1000), *b = thr(m, 1001);
	double alone;

	(void)state;
	/* Fork balancing put them on different cores. */
	assert_int_not_equal(topo->cpu_core[a->cpu], topo->cpu_core[b->cpu]);
	m->ops->wait(m, 0.01);
	alone = a->rate_ops_per_s;
	assert_close(alone, 4e9 * 0.8, 1e-12);
	/* CPUs 0 and 1 are the two hardware threads of core 0. */
	assert_int_equal(topo->cpu_core[0], topo->cpu_core[1]);
	assert_int_equal(m->ops->place(m, 1000, 0), 0);
	assert_int_equal(m->ops->place(m, 1001, 1), 0);
	m->ops->wait(m, 0.01);
	assert_close(a->rate_ops_per_s, 0.6 * alone, 1e-12);
	assert_close(b->rate_ops_per_s, 0.6 * alone, 1e-12);
	nl_machine_destroy(m);
}

/* Busy siblings share one core's yield whatever their number: four busy
 * hardware threads of an SMT-4 core give 1.3 cores in all, not 2.4. */
static void test_smt4_core_yield(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:1 core:2 pu:4', 'noise': 0}, "
		"'processes': [{'kind': 'compute', 'threads': 4, "
		"'bytes_per_op': 0}]}",
		1);
	const struct nl_topology *topo = m->topo;
	double alone = 4e9 * 0.8, sum = 0;

	(void)state;
	for (int c = 1; c < 4; c++)
		assert_int_equal(topo->cpu_core[c], topo->cpu_core[0]);
	for (int k = 0; k < 4; k++)
		assert_int_equal(m->ops->place(m, 1000 + k, k), 0);
	m->ops->wait(m, 0.01);
	for (int k = 0; k < 4; k++) {
		sum += thr(m, 1000 + k)->rate_ops_per_s;
		assert_close(thr(m, 1000 + k)->rate_ops_per_s, alone * 1.3 / 4,
			     1e-12);
	}
	assert_true(sum <= 1.3 * alone * (1 + 1e-12));
	assert_true(sum >= alone);
	/* Three busy: 1 + 0.4 x 2/3 cores among them. */
	assert_int_equal(m->ops->place(m, 1003, 4), 0);
	m->ops->wait(m, 0.01);
	assert_close(thr(m, 1000)->rate_ops_per_s,
		     alone * (1 + 0.4 * 2 / 3) / 3, 1e-12);
	assert_close(thr(m, 1003)->rate_ops_per_s, alone, 1e-12);
	nl_machine_destroy(m);
}

/* The model's exact counters are the physics. */
static void test_counters_match_physics(void **state)
{
	struct nl_machine *m;
	struct nl_model_thread *t;
	struct nl_sample s;
	double tol = 1e-6, lines, lat1;

	(void)state;
	m = sim("{'machine': {'topology': 'numa:2 core:4 pu:1'},"
		" 'processes': [{'kind': 'latency', 'threads': 2, "
		"'placement': 'first-touch', 'shared_fraction': 0.25}]}",
		7);
	t = thr(m, 1001);
	assert_int_equal(t->cpu, 4); /* second thread: the other node */
	assert_int_equal(m->ops->wait(m, 1.0), 1);
	assert_int_equal(nl_model_take_sample(nl_sim_model(m), 1001, &s), 0);
	assert_int_equal(s.measured, NL_MODEL_MEASURED);
	assert_int_equal(s.cpu, 4);
	assert_close(s.wall_s, 1.0, 1e-9);
	assert_close(s.task_clock_s, 1.0, 1e-9);
	assert_close(s.instructions, t->rate_ops_per_s, tol);
	assert_close(s.fp_ops, 0.1 * t->rate_ops_per_s, tol);
	lines = t->traffic_bytes_per_s / 64;
	assert_close(s.llc_misses, lines, tol);
	/* 3/4 private on node 1, 1/4 shared on thread 0's node 0 */
	assert_close(s.access[1], 0.75 * lines, tol);
	assert_close(s.access[0], 0.25 * lines, tol);
	assert_close(s.lat_count[1], 0.75 * lines / 10007, tol);
	lat1 = s.lat_sum_ns[1] / s.lat_count[1];
	assert_close(lat1, 90 * nl_sim_model(m)->mem_factor[1], tol);
	assert_close(s.lat_sum_ns[0] / s.lat_count[0],
		     90 * 1.55 * nl_sim_model(m)->mem_factor[0] *
			     nl_sim_model(m)->link_factor[1 * 2 + 0],
		     tol);
	/* Deltas: a second call right away holds nothing. */
	assert_int_equal(nl_model_take_sample(nl_sim_model(m), 1001, &s), 0);
	assert_true(s.instructions == 0 && s.wall_s == 0);
	nl_machine_destroy(m);
}

/* A machine showing backend c of the two-thread latency scenario, after
 * wait seconds: thread 1001's sample into s. */
static struct nl_machine *observed(enum nl_sim_counters c, double wait,
				   struct nl_sample *s)
{
	struct nl_model_opts o = {.counters = c};
	struct nl_scenario *sc;
	struct nl_machine *m;
	char err[256];

	assert_int_equal(
		nl_scenario_parse(
			"{\"machine\": {\"topology\": \"numa:2 core:4 pu:1\"},"
			" \"processes\": [{\"kind\": \"latency\", \"threads\": "
			"2, \"shared_fraction\": 0.25, \"work\": 1e14}]}",
			"t", NULL, &sc, err, sizeof(err)),
		0);
	assert_int_equal(nl_sim_create_opts(sc, 7, &o, &m, err, sizeof(err)),
			 0);
	nl_scenario_free(sc);
	assert_int_equal(m->ops->wait(m, wait), 1);
	assert_int_equal(m->ops->sample(m, 1001, s), 0);
	return m;
}

/* What each backend shows: nothing it cannot measure, never the exact
 * access shares; sparse latency samples; noise that grows as the thread
 * ran less (docs/machine-model.md, "Counter backends"). */
static void test_counter_backends(void **state)
{
	struct nl_machine *m;
	struct nl_sample s;
	double lines, n1;

	(void)state;
	m = observed(NL_SIM_SOFTWARE, 1.0, &s);
	assert_string_equal(m->backend, "model-software");
	assert_int_equal(s.measured, NL_M_TASK_CLOCK | NL_M_CPU);
	assert_int_equal(m->measured, s.measured);
	assert_true(s.instructions == 0 && s.llc_misses == 0);
	assert_true(s.access[0] == 0 && s.access[1] == 0 &&
		    s.lat_count[1] == 0);
	assert_close(s.task_clock_s, 1.0, 1e-9);
	nl_machine_destroy(m);

	m = observed(NL_SIM_PERF, 1.0, &s);
	assert_string_equal(m->backend, "model-perf");
	assert_true(s.measured & NL_M_INSTRUCTIONS);
	assert_false(s.measured & (NL_M_LATENCY | NL_M_NODE_ACCESS));
	lines = thr(m, 1001)->traffic_bytes_per_s / 64;
	/* Counting noise of one CPU second: about 3%, never exact. */
	assert_true(fabs(s.llc_misses / lines - 1) < 0.15);
	assert_true(s.llc_misses != lines);
	assert_true(s.lat_count[0] == 0 && s.access[1] == 0);
	nl_machine_destroy(m);

	m = observed(NL_SIM_PEBS, 1.0, &s);
	assert_string_equal(m->backend, "model-pebs");
	assert_true(s.measured & NL_M_LATENCY);
	assert_false(s.measured & NL_M_NODE_ACCESS);
	assert_true(s.access[0] == 0 && s.access[1] == 0);
	/* Samples drawn at PEBS's period: a whole number near the mean,
	 * within five standard deviations of a Poisson draw. */
	lines = thr(m, 1001)->traffic_bytes_per_s / 64;
	n1 = 0.75 * lines / 10007;
	assert_true(s.lat_count[1] == floor(s.lat_count[1]));
	assert_true(fabs(s.lat_count[1] - n1) < 5 * sqrt(n1) + 1);
	nl_machine_destroy(m);

	/* Over a tenth of the time, the relative noise is about three
	 * times larger: over many draws, the spread of llc_misses. */
	double sd[2];
	for (int k = 0; k < 2; k++) {
		double wait = k ? 0.1 : 1.0, sum = 0, sum2 = 0;
		m = observed(NL_SIM_PERF, wait, &s);
		lines = thr(m, 1001)->traffic_bytes_per_s / 64 * wait;
		for (int r = 0; r < 200; r++) {
			double x;
			assert_true(m->ops->wait(m, wait) == 1);
			assert_int_equal(m->ops->sample(m, 1001, &s), 0);
			x = s.llc_misses / lines - 1;
			sum += x;
			sum2 += x * x;
		}
		sd[k] = sqrt(sum2 / 200 - (sum / 200) * (sum / 200));
		nl_machine_destroy(m);
	}
	assert_true(sd[0] > 0.015 && sd[0] < 0.05);
	assert_true(sd[1] > 2 * sd[0] && sd[1] < 4.5 * sd[0]);
}

#define MIX                                                                    \
	"{'machine': {'topology': 'numa:4 core:4 pu:1'}, 'processes': ["       \
	"{'kind': 'latency', 'threads': 6, 'work': 2e9}, "                     \
	"{'kind': 'stream', 'threads': 6, 'work': 3e9, 'start_s': 0.3}, "      \
	"{'kind': 'mixed', 'threads': 4, 'work': 4e9, 'placement': "           \
	"'master'}]}"

/* Run MIX with seed, sampling every thread every 0.25 s; fill sum and
 * the process end times. */
static void run_mix(uint64_t seed, double *sum, double *ends)
{
	char text[1024];
	struct nl_machine *m;
	const struct nl_thread_info *ti;
	const struct nl_process_info *pi;
	size_t n;
	int rc;

	snprintf(text, sizeof(text), "%s", MIX);
	m = sim(text, seed);
	*sum = 0;
	do {
		struct nl_sample s;
		assert_int_equal(m->ops->threads(m, &ti, &n), 0);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(m->ops->sample(m, ti[i].tid, &s), 0);
			*sum += s.instructions * (i + 1) + s.llc_misses +
				s.lat_sum_ns[0];
		}
		rc = m->ops->wait(m, 0.25);
	} while (rc == 1);
	assert_int_equal(rc, 0);
	m->ops->processes(m, &pi, &n);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		ends[i] = pi[i].end_s;
	nl_machine_destroy(m);
}

/* Same scenario and seed: identical; another seed: other noise, same
 * physics. */
static void test_determinism(void **state)
{
	double s1, s2, s3, e1[3], e2[3], e3[3];

	(void)state;
	run_mix(11, &s1, e1);
	run_mix(11, &s2, e2);
	run_mix(12, &s3, e3);
	assert_true(s1 == s2);
	assert_true(memcmp(e1, e2, sizeof(e1)) == 0);
	assert_true(s1 != s3);
	assert_true(memcmp(e1, e3, sizeof(e1)) == 0);
	for (int i = 0; i < 3; i++)
		assert_true(e1[i] > 0);
}

/* Threads appear when their process starts and vanish when done. */
static void test_threads_come_and_go(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:2 core:4 pu:1'}, 'processes': "
		"[{'kind': 'compute', 'threads': 2, 'work': 8e9, "
		"'bytes_per_op': 0}, {'name': 'late', 'kind': 'compute', "
		"'threads': 3, 'job': 4, 'start_s': 1.0, 'work': 3.2e9, "
		"'bytes_per_op': 0}]}",
		1);
	const struct nl_thread_info *ti;
	const struct nl_process_info *pi;
	struct nl_sample s;
	size_t n;

	(void)state;
	m->ops->threads(m, &ti, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ti[0].tid, 1000);
	assert_int_equal(ti[1].tid, 1001);
	assert_int_equal(m->ops->sample(m, 2000, &s), -ESRCH);
	assert_int_equal(m->ops->wait(m, 0.5), 1);
	m->ops->threads(m, &ti, &n);
	assert_int_equal(n, 2);
	m->ops->processes(m, &pi, &n);
	assert_int_equal(n, 2);
	assert_int_equal(pi[1].threads_seen, 0);
	assert_int_equal(m->ops->wait(m, 0.5), 1);
	assert_close(m->ops->now(m), 1.0, 1e-9);
	m->ops->threads(m, &ti, &n);
	assert_int_equal(n, 5);
	for (size_t i = 1; i < n; i++)
		assert_true(ti[i - 1].tid < ti[i].tid);
	assert_int_equal(ti[4].tid, 2002);
	assert_int_equal(ti[4].pid, 2000);
	m->ops->processes(m, &pi, &n);
	assert_string_equal(pi[1].name, "late");
	assert_int_equal(pi[1].job, 4);
	assert_int_equal(pi[1].threads_seen, 3);
	assert_close(pi[1].start_s, 1.0, 1e-9);
	assert_true(pi[1].end_s < 0);
	/* 3.2e9 ops at 3.2e9 ops/s: the late ones end at 2.0 s, the first
	 * ones (8e9) at 2.5 s. */
	assert_int_equal(m->ops->wait(m, 1.2), 1);
	m->ops->threads(m, &ti, &n);
	assert_int_equal(n, 2);
	assert_int_equal(m->ops->sample(m, 2000, &s), -ESRCH);
	assert_int_equal(m->ops->place(m, 2000, 0), -ESRCH);
	assert_int_equal(m->ops->release(m, 2000), -ESRCH);
	m->ops->processes(m, &pi, &n);
	assert_close(pi[1].end_s, 2.0, 1e-6);
	assert_true(pi[0].end_s < 0);
	assert_int_equal(m->ops->wait(m, 100), 0);
	assert_close(m->ops->now(m), 2.5, 0.01);
	m->ops->processes(m, &pi, &n);
	assert_close(pi[0].end_s, 2.5, 1e-6);
	m->ops->threads(m, &ti, &n);
	assert_int_equal(n, 0);
	assert_int_equal(m->ops->wait(m, 1), 0);
	assert_int_equal(m->ops->wait(m, -1), -EINVAL);
	nl_machine_destroy(m);
}

/* The duration cap stops the clock with work left. */
static void test_duration_cap(void **state)
{
	struct nl_machine *m =
		sim("{'machine': {'topology': 'numa:1 core:2 pu:1'},"
		    " 'duration_s': 1.5, 'processes': [{'kind':"
		    " 'compute', 'threads': 1}]}",
		    1);
	const struct nl_process_info *pi;
	size_t n;

	(void)state;
	assert_int_equal(m->ops->wait(m, 1.0), 1);
	assert_int_equal(m->ops->wait(m, 1.0), 0);
	assert_close(m->ops->now(m), 1.5, 1e-9);
	m->ops->processes(m, &pi, &n);
	assert_true(pi[0].end_s < 0);
	nl_machine_destroy(m);
}

/* place() keeps to the allowed set; release() unpins. */
static void test_place_checks(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:2 core:4 pu:1'}, 'processes': "
		"[{'kind': 'latency', 'threads': 2, 'cpus': '0-3'}]}",
		1);
	const struct nl_thread_info *ti;
	size_t n;

	(void)state;
	m->ops->threads(m, &ti, &n);
	assert_int_equal(hwloc_bitmap_weight(ti[0].allowed), 4);
	assert_true(ti[0].cpu >= 0 && ti[0].cpu < 4);
	assert_int_equal(m->ops->place(m, 1000, 4), -EINVAL);
	assert_int_equal(m->ops->place(m, 1000, 8), -EINVAL);
	assert_int_equal(m->ops->place(m, 1000, -1), -EINVAL);
	assert_int_equal(m->ops->place(m, 1005, 1), -ESRCH);
	assert_int_equal(m->ops->place(m, 999, 1), -ESRCH);
	assert_int_equal(m->ops->place(m, 7000, 1), -ESRCH);
	assert_int_equal(m->ops->place(m, 1000, 3), 0);
	assert_true(thr(m, 1000)->pinned);
	m->ops->threads(m, &ti, &n);
	assert_int_equal(ti[0].cpu, 3);
	/* The allowed set is not narrowed by pinning. */
	assert_int_equal(hwloc_bitmap_weight(ti[0].allowed), 4);
	assert_int_equal(m->ops->release(m, 1000), 0);
	assert_false(thr(m, 1000)->pinned);
	m->ops->wait(m, 1);
	assert_int_equal(thr(m, 1000)->cpu, 3);
	nl_machine_destroy(m);
}

/* Fork balancing spreads over nodes first; start_node keeps them on one. */
static void test_start_placement(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:2 core:4 pu:1'}, 'processes': "
		"[{'kind': 'compute', 'threads': 4}, {'kind': 'compute', "
		"'threads': 2, 'start_node': 1}]}",
		1);
	const struct nl_topology *topo = m->topo;
	int seen[8] = {0};

	(void)state;
	for (int k = 0; k < 4; k++) {
		int cpu = thr(m, 1000 + k)->cpu;
		assert_int_equal(topo->cpu_node[cpu], k % 2);
		assert_int_equal(seen[cpu]++, 0);
	}
	for (int k = 0; k < 2; k++) {
		int cpu = thr(m, 2000 + k)->cpu;
		assert_int_equal(topo->cpu_node[cpu], 1);
		assert_int_equal(seen[cpu]++, 0); /* an idle CPU of node 1 */
	}
	nl_machine_destroy(m);
}

/*
 * The load balancer evens busy CPUs between nodes as 6.1's does: once
 * they differ by 2, unless the destination stays lightly loaded (at most
 * imb_numa_nr, a quarter of its CPUs here) and they differ by only 2;
 * threads that share a core first. Six threads started on node 0 of a
 * 2 x 4 x 2 machine (two cores shared, node 1 idle) end three a node, one
 * a core (the old rule, a difference above the quarter, left four and
 * two). Two threads on one node of an idle machine stay together.
 */
static void test_balancer_spreads_nodes(void **state)
{
	struct nl_machine *m =
		sim("{'os': 'linux-nonuma', 'machine': {'topology': "
		    "'numa:2 core:4 pu:2', 'noise': 0}, 'processes': [{'kind': "
		    "'compute', 'threads': 6, 'start_node': 0}]}",
		    1);
	const struct nl_topology *topo = m->topo;
	int on[2] = {0}, core[8] = {0};

	(void)state;
	for (int k = 0; k < 6; k++)
		on[topo->cpu_node[thr(m, 1000 + k)->cpu]]++;
	assert_int_equal(on[0], 6);
	m->ops->wait(m, 0.01);
	on[0] = on[1] = 0;
	for (int k = 0; k < 6; k++) {
		int cpu = thr(m, 1000 + k)->cpu;
		on[topo->cpu_node[cpu]]++;
		assert_int_equal(core[topo->cpu_core[cpu]]++, 0);
	}
	assert_int_equal(on[0], 3);
	assert_int_equal(on[1], 3);
	nl_machine_destroy(m);

	m = sim("{'os': 'linux-nonuma', 'machine': {'topology': "
		"'numa:2 core:8 pu:1', 'noise': 0}, 'processes': [{'kind': "
		"'compute', 'threads': 2, 'start_node': 0}]}",
		1);
	m->ops->wait(m, 0.01);
	for (int k = 0; k < 2; k++)
		assert_int_equal(m->topo->cpu_node[thr(m, 1000 + k)->cpu], 0);
	nl_machine_destroy(m);
}

/* Busy threads of the machine on node j. */
static int busy_on_node(struct nl_machine *m, int j, int from, int to)
{
	int n = 0;
	for (int tid = from; tid < to; tid++)
		n += m->topo->cpu_node[thr(m, tid)->cpu] == j;
	return n;
}

/*
 * The least busy node pulls from the busiest (6.1's find_busiest_group),
 * not each thread to its nearest node less busy by 2. Six threads on
 * node 0 and three on node 1 of a 3 x 8 machine, node 2 idle: node 2
 * pulls three from node 0, 3 / 3 / 3, and node 1's threads stay. The old
 * rule took node 1's later threads to their nearest node first.
 */
static void test_balancer_pulls_from_busiest(void **state)
{
	struct nl_machine *m = sim(
		"{'os': 'linux-nonuma', 'machine': {'topology': "
		"'numa:3 core:8 pu:1', 'distances': [[10, 30, 30], [30, 10, "
		"12], [30, 12, 10]], 'noise': 0}, 'processes': [{'kind': "
		"'compute', 'threads': 6, 'start_node': 0}, {'kind': "
		"'compute', 'threads': 3, 'start_node': 1}]}",
		1);

	(void)state;
	assert_int_equal(busy_on_node(m, 0, 1000, 1006), 6);
	assert_int_equal(busy_on_node(m, 1, 2000, 2003), 3);
	m->ops->wait(m, 0.01);
	assert_int_equal(busy_on_node(m, 0, 1000, 1006), 3);
	assert_int_equal(busy_on_node(m, 2, 1000, 1006), 3);
	assert_int_equal(busy_on_node(m, 1, 2000, 2003), 3);
	nl_machine_destroy(m);
}

/*
 * fbq_type (6.1's find_busiest_queue): a node that holds a thread off its
 * data's node gives only such threads to the balancer. Node 0 of a
 * 2 x 4 machine holds two first-touch threads on their own data and two
 * pinned threads of a process whose data is on node 1; node 1 idles. The
 * local threads stay (the old model pulled them off their data). With no
 * such thread there, local threads are pulled as any.
 */
static void test_balancer_keeps_local_threads(void **state)
{
	(void)state;
	for (int remote = 0; remote < 2; remote++) {
		struct nl_machine *m = sim(
			remote ? "{'os': 'linux', 'machine': {'topology': "
				 "'numa:2 core:4 pu:1', 'noise': 0}, "
				 "'processes': [{'kind': 'latency', 'threads': "
				 "2, 'start_node': 0}, {'kind': 'latency', "
				 "'threads': 2, 'placement': 'master', "
				 "'start_node': 1}]}"
			       : "{'os': 'linux', 'machine': {'topology': "
				 "'numa:2 core:4 pu:1', 'noise': 0}, "
				 "'processes': [{'kind': 'latency', 'threads': "
				 "4, 'start_node': 0}]}",
			1);
		struct nl_model *md = nl_sim_model(m);
		int n = remote ? 2 : 4;

		assert_int_equal(busy_on_node(m, 0, 1000, 1000 + n), n);
		if (remote) {
			assert_int_equal(busy_on_node(m, 1, 2000, 2002), 2);
			assert_int_equal(nl_model_place(md, 2000, 2), 0);
			assert_int_equal(nl_model_place(md, 2001, 3), 0);
		}
		m->ops->wait(m, 0.01);
		assert_int_equal(busy_on_node(m, 0, 1000, 1000 + n), 2);
		if (remote)
			assert_int_equal(busy_on_node(m, 0, 2000, 2002), 2);
		nl_machine_destroy(m);
	}
}

/*
 * Active balancing (6.1's group_imbalance): a bound process's second thread
 * shares a CPU of its node, which an unbound thread fills, while the other
 * node idles. The unbound thread goes and the crowded one takes its CPU;
 * when numalot pinned the unbound thread, nothing moves (the kernel cannot
 * move a pinned thread).
 */
static void test_active_balance(void **state)
{
	static const char *text =
		"{'os': 'linux-nonuma', 'machine': {'topology': "
		"'numa:2 core:2 pu:1', 'noise': 0}, 'processes': [{'kind': "
		"'compute', 'threads': 1, 'start_node': 0}, {'kind': "
		"'compute', "
		"'threads': 2, 'cpunodebind': 0}]}";

	(void)state;
	for (int pin = 0; pin < 2; pin++) {
		struct nl_machine *m = sim(text, 1);
		struct nl_model *md = nl_sim_model(m);
		const struct nl_topology *topo = m->topo;
		int a = thr(m, 1000)->cpu, other = a == 0 ? 1 : 0;

		/* The unbound thread alone on a CPU of node 0, the bound
		 * pair on the other. */
		assert_int_equal(topo->cpu_node[a], 0);
		nl_model_move(md, thr(m, 2000), other);
		nl_model_move(md, thr(m, 2001), other);
		if (pin)
			assert_int_equal(nl_model_place(md, 1000, a), 0);
		m->ops->wait(m, 0.05);
		int b0 = thr(m, 2000)->cpu, b1 = thr(m, 2001)->cpu;
		assert_int_equal(topo->cpu_node[b0], 0);
		assert_int_equal(topo->cpu_node[b1], 0);
		if (pin) {
			assert_int_equal(thr(m, 1000)->cpu, a);
			assert_int_equal(b0, b1);
		} else {
			assert_int_equal(topo->cpu_node[thr(m, 1000)->cpu], 1);
			assert_int_not_equal(b0, b1);
		}
		nl_machine_destroy(m);
	}
}

/* The spread between the most and the least loaded CPU of node. */
static int load_spread(struct nl_machine *m, int node)
{
	struct nl_model *md = nl_sim_model(m);
	int lo = 1 << 20, hi = 0;

	for (int c = 0; c < m->topo->ncpus; c++) {
		if (m->topo->cpu_node[c] != node)
			continue;
		lo = md->cpu_load[c] < lo ? md->cpu_load[c] : lo;
		hi = md->cpu_load[c] > hi ? md->cpu_load[c] : hi;
	}
	return hi - lo;
}

/*
 * An overloaded node is evened by running threads (6.1's group_overloaded,
 * no idle CPU anywhere): five threads stacked on one CPU while the others
 * hold one each end two a CPU; pinned, they stay. A thread released while
 * no CPU of its binding idles goes to the least loaded one, not to the
 * binding's first CPU (rand-3141-0005: 13 threads stacked on CPU 0 for
 * 21 s).
 */
static void test_overloaded_node_evened(void **state)
{
	static const char *text =
		"{'os': 'linux-nonuma', 'machine': {'topology': "
		"'numa:2 core:4 pu:1', 'noise': 0}, 'processes': [{'kind': "
		"'compute', 'threads': 8, 'cpunodebind': 0}, {'kind': "
		"'compute', 'threads': 8, 'cpunodebind': 1, 'start_s': 0}]}";

	(void)state;
	for (int pin = 0; pin < 2; pin++) {
		struct nl_machine *m = sim(text, 1);
		struct nl_model *md = nl_sim_model(m);

		assert_int_equal(load_spread(m, 0), 0);
		for (int c = 1; c < 4; c++)
			for (int k = 0; k < 8; k++)
				if (thr(m, 1000 + k)->cpu == c) {
					nl_model_move(md, thr(m, 1000 + k), 0);
					break;
				}
		assert_int_equal(md->cpu_load[0], 5);
		if (pin)
			for (int k = 0; k < 8; k++)
				if (thr(m, 1000 + k)->cpu == 0)
					assert_int_equal(
						nl_model_place(md, 1000 + k, 0),
						0);
		m->ops->wait(m, 0.05);
		assert_int_equal(load_spread(m, 0), pin ? 4 : 0);
		nl_machine_destroy(m);
	}

	/* Three threads bound to node 0, pinned on node 1, released. */
	struct nl_machine *m = sim(text, 1);
	for (int k = 0; k < 3; k++)
		assert_int_equal(m->ops->place(m, 1000 + k, 4 + k), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(m->ops->release(m, 1000 + k), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(m->topo->cpu_node[thr(m, 1000 + k)->cpu], 0);
	assert_true(load_spread(m, 0) <= 1);
	nl_machine_destroy(m);
}

/* Where data lands, and that moving a thread leaves it there. */
static void test_data_placement(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:2 core:4 pu:1', 'noise': 0}, "
		"'processes': [{'kind': 'latency', 'threads': 2, "
		"'shared_fraction': 0.2, 'mem_bytes': 4096000}, "
		"{'kind': 'latency', 'threads': 2, 'placement': 'master', "
		"'start_node': 1}, {'kind': 'latency', 'threads': 2, "
		"'placement': 'interleave'}]}",
		1);
	struct nl_model_thread *t = thr(m, 1001);
	double pages[2];

	(void)state;
	assert_int_equal(t->cpu, 4);
	/* first-touch: private on its node 1, shared on thread 0's node 0 */
	assert_close(t->data_frac[1], 0.8, 1e-12);
	assert_close(t->data_frac[0], 0.2, 1e-12);
	assert_int_equal(m->ops->node_pages(m, 1000, pages), 0);
	assert_close(pages[0], 1000 * (1 + 0.2), 1e-12);
	assert_close(pages[1], 1000 * 0.8, 1e-12);
	assert_close(thr(m, 2000)->data_frac[1], 1, 1e-12);
	assert_close(thr(m, 2001)->data_frac[1], 1, 1e-12);
	assert_close(thr(m, 3000)->data_frac[0], 0.5, 1e-12);
	assert_close(thr(m, 3001)->data_frac[1], 0.5, 1e-12);
	assert_int_equal(m->ops->node_pages(m, 1500, pages), -ESRCH);
	assert_int_equal(m->ops->place(m, 1001, 0), 0);
	m->ops->wait(m, 0.1);
	assert_close(t->data_frac[1], 0.8, 1e-12);
	nl_machine_destroy(m);
}

/* The mixed kind alternates phases; bytes per op averages to its value. */
static void test_mixed_phases(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:1 core:2 pu:1', 'noise': 0}, "
		"'processes': [{'kind': 'mixed', 'threads': 1}]}",
		1);
	struct nl_model_thread *t = thr(m, 1000);
	struct nl_sample s;
	double lo = 1e9, hi = 0;

	(void)state;
	/* Ten whole cycles of 4e9 ops. */
	while (t->work_ops - t->work_left < 4e10) {
		assert_int_equal(m->ops->wait(m, 0.01), 1);
		lo = fmin(lo, t->bytes_per_op);
		hi = fmax(hi, t->bytes_per_op);
	}
	assert_close(lo, 0.6 * 0.1, 1e-12);
	assert_close(hi, 0.6 * 2.35, 1e-12);
	m->ops->sample(m, 1000, &s);
	assert_close(s.llc_misses * 64 / s.instructions, 0.6, 0.02);
	nl_machine_destroy(m);
}

/* Machine parameters from the scenario reach the model. */
static void test_params_reach_the_model(void **state)
{
	struct nl_machine *m = sim(
		"{'machine': {'topology': 'numa:2 core:1 pu:1', 'distances': "
		"[[10, 30], [30, 10]], 'remote_factor': 1, "
		"'local_latency_ns': 100, 'tick_s': 0.02}, 'processes': "
		"[{'kind': 'compute', 'threads': 1}]}",
		1);
	struct nl_model *md = nl_sim_model(m);

	(void)state;
	assert_close(md->latency_ns[0], 100, 1e-12);
	assert_close(md->latency_ns[1], 300, 1e-12);
	m->ops->wait(m, 0.01);
	assert_close(m->ops->now(m), 0.02, 1e-12);
	assert_int_equal(nl_sim_set_os_mode(m, NL_OS_NONE), 0);
	assert_null(nl_sim_model(NULL));
	nl_machine_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remote_latency_ratio),
		cmocka_unit_test(test_balancer_spreads_nodes),
		cmocka_unit_test(test_balancer_pulls_from_busiest),
		cmocka_unit_test(test_balancer_keeps_local_threads),
		cmocka_unit_test(test_active_balance),
		cmocka_unit_test(test_overloaded_node_evened),
		cmocka_unit_test(test_compute_indifferent),
		cmocka_unit_test(test_saturated_node_caps_traffic),
		cmocka_unit_test(test_saturated_link_caps_traffic),
		cmocka_unit_test(test_contention_fixed_point),
		cmocka_unit_test(test_time_sharing_halves),
		cmocka_unit_test(test_smt_share),
		cmocka_unit_test(test_smt4_core_yield),
		cmocka_unit_test(test_counters_match_physics),
		cmocka_unit_test(test_counter_backends),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_threads_come_and_go),
		cmocka_unit_test(test_duration_cap),
		cmocka_unit_test(test_place_checks),
		cmocka_unit_test(test_start_placement),
		cmocka_unit_test(test_data_placement),
		cmocka_unit_test(test_mixed_phases),
		cmocka_unit_test(test_params_reach_the_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
