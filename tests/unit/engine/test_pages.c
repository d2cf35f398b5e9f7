/*
 * Unit tests: page moves on the simulated node (the machine's move_pages),
 * page placement's plan (core/policy/page_placement.c, docs/algorithms.md) and
 * the engine applying it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "engine.h"
#include "jsontext.h"
#include "machine.h"
#include "model.h"
#include "page_placement.h"
#include "scenario.h"
#include "viewutil.h"

#define MACHINE                                                                \
	"'machine': {'topology': 'numa:2 core:4 pu:1', 'distances': "          \
	"[[10, 20], [20, 10]], 'noise': 0}"

static struct nl_scenario *parse(const char *text)
{
	struct nl_scenario *sc;
	char err[512] = "";
	if (nl_scenario_parse(json(text), "t.json", NULL, &sc, err,
			      sizeof(err)) < 0)
		fail_msg("scenario: %s", err);
	return sc;
}

static double pages_on(struct nl_machine *m, int pid, int node)
{
	double p[NL_MAX_NODES] = {0};
	assert_int_equal(m->ops->node_pages(m, pid, p), 0);
	return p[node];
}

/* The operation itself: bytes moved, where the pages are after, what it
 * refuses, and the threads waiting for the copy. */
static void model_moves_pages(void **state)
{
	struct nl_scenario *sc = parse(
		"{" MACHINE ", 'processes': [{'kind': 'stream', 'threads': 2, "
		"'placement': 'node:0', 'mem_bytes': 64e6}, {'kind': 'stream', "
		"'threads': 2, 'membind': 0, 'mem_bytes': 64e6}, {'kind': "
		"'stream', 'threads': 2, 'interleave': '0-1', 'mem_bytes': "
		"64e6}]}");
	struct nl_machine *m;
	char err[256];
	double moved, before0, before1;

	(void)state;
	assert_int_equal(nl_sim_create(sc, 1, &m, err, sizeof(err)), 0);
	m->ops->wait(m, 0.01);
	before0 = pages_on(m, 1000, 0);
	before1 = pages_on(m, 1000, 1);
	assert_true(before0 > 0 && before1 == 0);
	assert_int_equal(m->ops->move_pages(m, 1000, 0, 1, 32e6, 0, &moved), 0);
	assert_true(moved > 31.9e6 && moved <= 32e6);
	assert_true(pages_on(m, 1000, 1) * 4096 > 31.9e6);
	assert_true(pages_on(m, 1000, 0) < before0);
	/* Its threads wait for the copy. */
	struct nl_model *md = nl_sim_model(m);
	assert_true(nl_model_thread(md, 1000)->stall_s > 0);
	/* At most what is there. */
	assert_int_equal(m->ops->move_pages(m, 1000, 0, 1, 1e12, 0, &moved), 0);
	assert_true(pages_on(m, 1000, 0) < 1e-6);
	/* Bound by its own policy, bad nodes, unknown process. */
	assert_int_equal(m->ops->move_pages(m, 2000, 0, 1, 1e6, 0, &moved),
			 -EPERM);
	assert_true(moved == 0);
	/* Bound: refused even when interleaving may be improved. */
	assert_int_equal(
		m->ops->move_pages(m, 2000, 0, 1, 1e6, NL_PAGES_SOFT, &moved),
		-EPERM);
	/* Interleaved: left as asked, unless numalot may improve it. */
	assert_int_equal(m->ops->move_pages(m, 3000, 0, 1, 1e6, 0, &moved),
			 -EPERM);
	before1 = pages_on(m, 3000, 1);
	assert_int_equal(
		m->ops->move_pages(m, 3000, 0, 1, 8e6, NL_PAGES_SOFT, &moved),
		0);
	assert_true(moved > 7.9e6 && moved <= 8e6);
	assert_true((pages_on(m, 3000, 1) - before1) * 4096 > 7.9e6);
	assert_int_equal(m->ops->move_pages(m, 1000, 0, 2, 1e6, 0, &moved),
			 -EINVAL);
	assert_int_equal(m->ops->move_pages(m, 7000, 0, 1, 1e6, 0, &moved),
			 -ESRCH);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
}

struct run {
	double makespan;
	double moved; /* bytes, from the report */
	double loc_before, loc_after;
	int page_events;
	double one_half; /* the least, over processes, of the share of its
			    threads' time on one half of the nodes */
};

/* Over report r's threads: for each process, the share of its threads'
 * time on the first or the second half of the nodes, whichever is more;
 * the least over processes. */
static double least_one_half(struct json_object *r)
{
	struct json_object *th, *v;
	double lo[16] = {0}, all[16] = {0}, least = 1;
	int pids[16], np = 0;
	assert_true(json_object_object_get_ex(r, "threads", &th));
	for (size_t i = 0; i < json_object_array_length(th); i++) {
		struct json_object *t = json_object_array_get_idx(th, i);
		int k = 0, pid, nn;
		json_object_object_get_ex(t, "pid", &v);
		pid = json_object_get_int(v);
		while (k < np && pids[k] != pid)
			k++;
		if (k == np && np < 16)
			pids[np++] = pid;
		if (k == 16)
			continue;
		json_object_object_get_ex(t, "time_per_node_s", &v);
		nn = (int)json_object_array_length(v);
		for (int j = 0; j < nn; j++) {
			double s = json_object_get_double(
				json_object_array_get_idx(v, (size_t)j));
			all[k] += s;
			lo[k] += j < nn / 2 ? s : 0;
		}
	}
	for (int k = 0; k < np; k++)
		if (all[k] > 0 && fmax(lo[k], all[k] - lo[k]) / all[k] < least)
			least = fmax(lo[k], all[k] - lo[k]) / all[k];
	return least;
}

/* Moves cut short: every move that moved something then says the
 * process is gone, as a real move does when the process ends mid-way. */
static int cut_short;
static int (*model_move)(struct nl_machine *, int, int, int, double, int,
			 double *);
static struct nl_machine_ops cut_ops;

static int move_then_gone(struct nl_machine *m, int pid, int from, int to,
			  double max_bytes, int flags, double *moved)
{
	int rc = model_move(m, pid, from, to, max_bytes, flags, moved);
	return rc == 0 && *moved > 0 ? -ESRCH : rc;
}

static void run_keep(const char *path, int pages, int keep, struct run *out)
{
	struct nl_scenario *sc;
	struct nl_machine *m;
	struct nl_engine *e;
	struct nl_policy_params p;
	const struct nl_process_info *pi;
	size_t n;
	char err[512];

	memset(out, 0, sizeof(*out));
	if (nl_scenario_load(path, &sc, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(nl_sim_create(sc, 1, &m, err, sizeof(err)), 0);
	if (cut_short) {
		cut_ops = *m->ops;
		model_move = m->ops->move_pages;
		cut_ops.move_pages = move_then_gone;
		m->ops = &cut_ops;
	}
	nl_policy_params_default(&p);
	p.pages = pages;
	p.keep_bindings = keep;
	assert_int_equal(nl_engine_create(m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 0, "j", NL_POLICY_IMAR2, &p, 1), 0);
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nl_engine_add_process(e, pi[i].pid, 0), 0);
	assert_int_equal(nl_engine_run(e), 0);
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (pi[i].end_s > out->makespan)
			out->makespan = pi[i].end_s;
	struct json_object *r = nl_engine_report(e, 0), *x, *pg, *v;
	assert_true(json_object_object_get_ex(r, "processes", &x));
	for (size_t i = 0; i < json_object_array_length(x); i++) {
		assert_true(json_object_object_get_ex(
			json_object_array_get_idx(x, i), "pages", &pg));
		json_object_object_get_ex(pg, "moved_bytes", &v);
		out->moved += json_object_get_double(v);
		json_object_object_get_ex(pg, "locality_before", &v);
		out->loc_before += json_object_get_double(v) / 2;
		json_object_object_get_ex(pg, "locality_after", &v);
		out->loc_after += json_object_get_double(v) / 2;
	}
	out->one_half = least_one_half(r);
	assert_true(json_object_object_get_ex(r, "events", &x));
	for (size_t i = 0; i < json_object_array_length(x); i++) {
		json_object_object_get_ex(json_object_array_get_idx(x, i),
					  "kind", &v);
		out->page_events +=
			strcmp(json_object_get_string(v), "pages") == 0;
	}
	json_object_put(r);
	nl_engine_free(e);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
}

static void run(const char *path, int pages, struct run *out)
{
	run_keep(path, pages, 0, out);
}

/* A latency-bound process bound to node 0 (--cpunodebind) whose memory
 * it interleaved over both nodes: a starting placement when bindings are
 * free (its pages come to its threads, and it runs faster), left as asked
 * when they are kept. */
static void engine_improves_interleaved_memory(void **state)
{
	static const char *const path =
		"etc/scenarios/set/paper-interleave-n2-1p.json";
	struct run on, off, keep;
	(void)state;
	run(path, 1, &on);
	run(path, 0, &off);
	run_keep(path, 1, 1, &keep);
	assert_true(on.moved > 0 && on.page_events > 0);
	assert_true(on.makespan < 0.95 * off.makespan);
	assert_true(keep.moved == 0);
	assert_true(keep.makespan > 0.99 * off.makespan);
}

/* Two bandwidth-bound processes, each with all its data on one node and
 * threads on all four: their pages spread, and they run faster. */
static void engine_spreads_concentrated_pages(void **state)
{
	struct run on, off;
	(void)state;
	run("etc/scenarios/set/n4-mg16-mg16-master.json", 1, &on);
	run("etc/scenarios/set/n4-mg16-mg16-master.json", 0, &off);
	assert_true(off.moved == 0 && off.page_events == 0);
	assert_true(on.moved > 1e9);
	assert_true(on.page_events > 0);
	assert_true(on.loc_before < 0.3 && on.loc_after > 0.9);
	assert_true(on.makespan < 0.9 * off.makespan);
}

/* Two latency-bound processes of 32 threads, both with all their data on
 * node 0 of a machine of two sockets of four nodes: the one that keeps
 * node 0 gathers on its socket, the other goes to the other socket, and
 * each one's pages follow its threads there (docs/algorithms.md,
 * "Gathering"). Without page moves the second stays across the sockets
 * from its data. */
static void engine_gathers_on_sockets(void **state)
{
	static const char *const path =
		"etc/scenarios/set/n8-cg32-cg32-master.json";
	struct run on, off;
	(void)state;
	run(path, 1, &on);
	run(path, 0, &off);
	/* Half the machine would be 0.5. 0.89-0.9: threads released at
	 * the end are spread over the sockets by the modelled balancer. */
	assert_true(on.one_half > 0.85);
	assert_true(on.moved > 1e9);
	/* 0.84 while the modelled Linux found a share of the misplaced pages
	 * left each tick; 0.88 since its scan passes find each once (it then
	 * moves more of the second process's pages itself, in both runs). */
	assert_true(on.makespan < 0.9 * off.makespan);
}

/*
 * The do-no-harm check hands the domain to the OS to compare: its threads
 * go back to the CPUs the OS had them on, but never two to one CPU (the OS
 * had three of these four on one CPU at different times), and no page
 * moves while the OS has the domain (pages that followed the threads just
 * handed back cost the check 1.5 GiB and the makespan 6%).
 */
static void harm_check_moves_no_pages(void **state)
{
	struct nl_scenario *sc;
	struct nl_machine *m;
	struct nl_engine *e;
	struct nl_policy_params p;
	const struct nl_process_info *pi;
	struct json_object *r, *ev, *x, *v;
	size_t n;
	char err[512];
	double os_from = -1, os_until = -1;
	int checks = 0, to[8], nto = 0;

	(void)state;
	if (nl_scenario_parse(
		    json("{'machine': {'topology': 'numa:2 core:8 pu:1'}, "
			 "'processes': [{'kind': 'latency', 'threads': 2, "
			 "'placement': 'master'}, {'kind': 'stream', "
			 "'threads': 2, 'placement': 'master'}]}"),
		    "t.json", NULL, &sc, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(nl_sim_create(sc, 1, &m, err, sizeof(err)), 0);
	nl_policy_params_default(&p);
	assert_int_equal(nl_engine_create(m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 0, "j", NL_POLICY_IMAR2, &p, 1), 0);
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nl_engine_add_process(e, pi[i].pid, 0), 0);
	assert_int_equal(nl_engine_run(e), 0);
	r = nl_engine_report(e, 0);
	assert_true(json_object_object_get_ex(r, "events", &ev));
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		x = json_object_array_get_idx(ev, i);
		json_object_object_get_ex(x, "t_s", &v);
		double t = json_object_get_double(v);
		json_object_object_get_ex(x, "kind", &v);
		const char *kind = json_object_get_string(v);
		json_object_object_get_ex(x, "reason", &v);
		const char *why = json_object_get_string(v);
		if (!strcmp(kind, "release") && strstr(why, "do-no-harm")) {
			if (t != os_from) {
				checks++;
				nto = 0;
			}
			os_from = t;
			os_until = 1e9;
			json_object_object_get_ex(x, "to_cpu", &v);
			if (!json_object_is_type(v, json_type_null)) {
				for (int k = 0; k < nto; k++)
					assert_int_not_equal(
						to[k], json_object_get_int(v));
				if (nto < 8)
					to[nto++] = json_object_get_int(v);
			}
		} else if (!strcmp(kind, "pin") && strstr(why, "do-no-harm")) {
			os_until = t;
		} else if (!strcmp(kind, "pages") && t >= os_from &&
			   t < os_until) {
			json_object_object_get_ex(x, "bytes", &v);
			assert_true(json_object_get_double(v) == 0);
		}
	}
	assert_true(checks > 0);
	json_object_put(r);
	nl_engine_free(e);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
}

/* A move that stopped early (the process ended mid-way) still counts
 * what it moved, in the report's bytes and events. */
static void engine_counts_moves_cut_short(void **state)
{
	struct run on;
	(void)state;
	cut_short = 1;
	run("etc/scenarios/set/n4-mg16-mg16-master.json", 1, &on);
	cut_short = 0;
	assert_true(on.moved > 0);
	assert_true(on.page_events > 0);
}

/* First-touch data already where the threads are: nothing moves. */
static void engine_leaves_local_pages(void **state)
{
	struct run on;
	(void)state;
	run("etc/scenarios/set/n4-ft32.json", 1, &on);
	assert_true(on.moved == 0);
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;
	assert_true(json_object_object_get_ex(o, k, &v));
	return v;
}

/* Pages by pid for the planner: all on one node, counted per read. */
struct fixed_pages {
	int pid[4], node[4], n, reads;
	double pages;
};

static int read_fixed(void *ctx, int pid, double *pages)
{
	struct fixed_pages *f = ctx;
	f->reads++;
	for (int i = 0; i < f->n; i++)
		if (f->pid[i] == pid) {
			memset(pages, 0, sizeof(double) * NL_MAX_NODES);
			pages[f->node[i]] = f->pages;
			return 0;
		}
	return -ESRCH;
}

static struct nl_view_thread *busy(struct vu *u, int tid, int pid, int cpu)
{
	struct nl_view_thread *t = vu_add(u, tid, pid, cpu, 1);
	t->moved_s = -1;
	t->tput = 1e6;
	t->tput_ops = 1;
	return t;
}

static void assert_move(const struct nl_action *a, int pid, int from, int to,
			double pages)
{
	assert_int_equal(a->kind, NL_ACT_PAGES);
	assert_int_equal(a->tid, -1);
	assert_int_equal(a->pid, pid);
	assert_int_equal(a->from_cpu, from);
	assert_int_equal(a->to_cpu, to);
	assert_true(fabs(a->bytes - pages * 4096) < 1);
}

/* Two processes, 1e5 pages each on one node, the parameters' defaults but
 * a page rate that never binds, and an empty plan. */
struct two {
	struct vu u;
	struct nl_policy_params p;
	struct nl_page_state st[2];
	struct nl_pages_proc procs[2];
	struct fixed_pages f;
	struct nl_plan plan;
};

static void two_init(struct two *w, const char *topo, int pid0, int node0,
		     int pid1, int node1)
{
	memset(w, 0, sizeof(*w));
	w->procs[0] = (struct nl_pages_proc){pid0, &w->st[0]};
	w->procs[1] = (struct nl_pages_proc){pid1, &w->st[1]};
	w->f = (struct fixed_pages){.pid = {pid0, pid1},
				    .node = {node0, node1},
				    .n = 2,
				    .pages = 1e5};
	nl_policy_params_default(&w->p);
	w->p.page_rate = 1e12;
	vu_init(&w->u, topo);
	nl_plan_init(&w->plan);
}

static struct nl_pages_domain two_domain(struct two *w, double now_s,
					 size_t nprocs)
{
	return (struct nl_pages_domain){.params = &w->p,
					.v = vu_view(&w->u, now_s),
					.procs = w->procs,
					.nprocs = nprocs,
					.read = read_fixed,
					.ctx = &w->f};
}

static void two_free(struct two *w)
{
	nl_plan_free(&w->plan);
	vu_free(&w->u);
}

/* Page placement is a plan: from a view and the pages' locations alone
 * (no machine), the moves to make, one at a time, each from where the
 * ones before left the pages (as much as they moved). */
static void placement_plans_without_a_machine(void **state)
{
	struct vu u;
	struct nl_policy_params p;
	struct nl_page_state st[3];
	struct nl_pages_proc procs[3] = {
		{100, &st[0]}, {200, &st[1]}, {300, &st[2]}};
	struct fixed_pages f = {.pid = {100, 200, 300},
				.node = {0, 2, 0},
				.n = 3,
				.pages = 1e5};
	struct nl_plan plan;
	(void)state;
	memset(st, 0, sizeof(st));
	nl_policy_params_default(&p);
	p.page_rate = 1e12; /* the budget does not bind */
	vu_init(&u, "numa:3 core:2 pu:1");
	/* 100: its threads on node 1, its pages on node 0. */
	busy(&u, 101, 100, 2);
	busy(&u, 102, 100, 3);
	/* 200: local already. */
	busy(&u, 201, 200, 4);
	/* 300: bandwidth-bound, over nodes 1 and 2, pages on node 0. */
	busy(&u, 301, 300, 3);
	busy(&u, 302, 300, 5);
	u.t[3].has_oi = u.t[4].has_oi = 1;
	u.t[3].oi = u.t[4].oi = 0.1;
	struct nl_pages_domain dm = {.params = &p,
				     .v = vu_view(&u, 10),
				     .procs = procs,
				     .nprocs = 3,
				     .read = read_fixed,
				     .ctx = &f};
	nl_plan_init(&plan);
	assert_true(nl_pages_wanted(&dm));
	for (size_t k = 0; k < 3; k++)
		assert_int_equal(nl_pages_plan(&dm, k, &plan), 0);
	/* Each process's pages once, and the other two's again for 300,
	 * bandwidth-bound, as it starts: its pages go to no node whose
	 * memory is busier than the one they leave. */
	assert_int_equal(f.reads, 5);
	assert_int_equal(plan.n, 2);
	assert_move(&plan.actions[0], 100, 0, 1, 1e5);
	/* 300: half of them to each of its threads' nodes, node 1 first. */
	assert_move(&plan.actions[1], 300, 0, 1, 0.5e5);
	/* 100's went in full: nothing more for it. */
	assert_int_equal(nl_pages_moved(&dm, 0, 1e5 * 4096, &plan), 0);
	assert_int_equal(plan.n, 2);
	/* Only a quarter of them moved: the next move is from what is left
	 * where; then the rest to node 1; then nothing (balanced). */
	assert_int_equal(nl_pages_moved(&dm, 2, 0.25e5 * 4096, &plan), 0);
	assert_int_equal(plan.n, 3);
	assert_move(&plan.actions[2], 300, 0, 2, 0.5e5);
	assert_int_equal(nl_pages_moved(&dm, 2, 0.5e5 * 4096, &plan), 0);
	assert_int_equal(plan.n, 4);
	assert_move(&plan.actions[3], 300, 0, 1, 0.25e5);
	assert_int_equal(nl_pages_moved(&dm, 2, 0.25e5 * 4096, &plan), 0);
	assert_int_equal(plan.n, 4);
	/* Planning moved nothing and counted nothing moved: the engine
	 * does, as it applies the plan. */
	for (int k = 0; k < 3; k++)
		assert_true(st[k].bytes == 0 && st[k].moves == 0 &&
			    !st[k].judge);
	/* More busy threads than CPUs: the OS time-shares them, and where
	 * one runs says little of where its pages should be. Only a
	 * process whose threads are over several nodes and its pages on
	 * clearly fewer spreads them (300): two streams' pages on one
	 * node, their threads on all six, under a balancer that had them
	 * time-shared, ran 14% slower than linux. 100 (its threads on one
	 * node) waits. */
	for (int i = 0; i < 2; i++)
		busy(&u, 400 + i, 400, i);
	dm.v = vu_view(&u, 10);
	assert_false(nl_pages_wanted(&dm));
	dm.oversub = 1;
	memset(st, 0, sizeof(st));
	nl_plan_clear(&plan);
	for (size_t k = 0; k < 3; k++)
		assert_int_equal(nl_pages_plan(&dm, k, &plan), 0);
	assert_int_equal(plan.n, 1);
	assert_move(&plan.actions[0], 300, 0, 1, 0.5e5);
	nl_plan_free(&plan);
	vu_free(&u);
}

/*
 * A bandwidth-bound process's pages go to no node whose memory would then
 * be busier than the one they leave was (docs/algorithms.md, "Memory
 * follows threads"). 300 streams from node 0's memory with two threads
 * on node 1 and two on node 2; 500's three memory-bound threads run on
 * node 1 with their pages there. Half of 300's pages go to node 2; node 1
 * takes a quarter of them at most (its memory then as busy as node 0's
 * was), and after the first move none (node 0 is then the lighter). A
 * stream's pages spread onto the node a 54-thread stream's memory was
 * bound to made that stream 6% slower than linux (random seed 71993,
 * scenario 142). Without 500, half goes to each, node 1 first.
 */
static void pages_go_to_no_busier_memory(void **state)
{
	(void)state;
	for (int other = 0; other < 2; other++) {
		struct two w;
		two_init(&w, "numa:3 core:6 pu:1", 300, 0, 500, 1);
		int cpus[4] = {7, 8, 13, 14};
		for (int i = 0; i < 4; i++) {
			struct nl_view_thread *t =
				busy(&w.u, 301 + i, 300, cpus[i]);
			t->has_oi = 1;
			t->oi = 0.1;
		}
		for (int i = 0; other && i < 3; i++) {
			struct nl_view_thread *t =
				busy(&w.u, 501 + i, 500, 9 + i);
			t->has_oi = 1;
			t->oi = 1;
		}
		struct nl_pages_domain dm = two_domain(&w, 10, other ? 2 : 1);
		assert_int_equal(nl_pages_plan(&dm, 0, &w.plan), 0);
		assert_int_equal(w.plan.n, 1);
		assert_move(&w.plan.actions[0], 300, 0, other ? 2 : 1, 0.5e5);
		assert_int_equal(nl_pages_moved(&dm, 0, 0.5e5 * 4096, &w.plan),
				 0);
		if (other) {
			assert_int_equal(w.plan.n, 1);
		} else {
			assert_int_equal(w.plan.n, 2);
			assert_move(&w.plan.actions[1], 300, 0, 2, 0.5e5);
		}
		two_free(&w);
	}
}

/*
 * Without a PMU (neither intensity nor ops measured) a process may be a
 * stream: its pages go to no node whose memory would be busier than the
 * one they leave, unless no more busy threads read that node's memory
 * than it has CPUs. 300's two threads run on node 1 (4 CPUs), its pages
 * on node 0; 500, measured alike, has its pages on node 1 and `readers`
 * busy threads. With none, all of 300's pages go to node 1; with 3, half
 * (node 1's memory then read by 4 threads, as many as its CPUs); with 6,
 * none (a stream's pages taken onto the node a bound 54-thread stream
 * read, 18 CPUs' worth: random seed 71993, scenario 142, -5% under
 * software).
 */
static void unmeasured_pages_go_to_no_busier_memory(void **state)
{
	(void)state;
	static const int readers[3] = {0, 3, 6};
	static const double moved[3] = {1e5, 0.5e5, 0};
	static const int cpus[6] = {6, 0, 1, 7, 2, 3};
	for (int k = 0; k < 3; k++) {
		struct two w;
		two_init(&w, "numa:2 core:4 pu:1", 300, 0, 500, 1);
		for (int i = 0; i < 2; i++)
			busy(&w.u, 301 + i, 300, 4 + i)->tput_ops = 0;
		for (int i = 0; i < readers[k]; i++)
			busy(&w.u, 501 + i, 500, cpus[i])->tput_ops = 0;
		struct nl_pages_domain dm =
			two_domain(&w, 10, readers[k] ? 2 : 1);
		assert_int_equal(nl_pages_plan(&dm, 0, &w.plan), 0);
		assert_int_equal(w.plan.n, moved[k] > 0);
		if (moved[k] > 0)
			assert_move(&w.plan.actions[0], 300, 0, 1, moved[k]);
		two_free(&w);
	}
}

/*
 * Room on the pages' node is counted in cores, as the thread policy fills
 * it (docs/algorithms.md, "SMT"), for a process no PMU measures: with
 * more busy threads than that node has free cores they cannot all go to
 * its pages, so its pages go to its threads once that has lasted
 * (CROWDED_PERIODS).
 * Node 0 of "numa:4 core:2 pu:2" has 4 hardware threads, 2 cores. Four
 * threads on nodes 1 to 3: counted in hardware threads they fitted and the
 * pages stayed on node 0 (a 16-thread master-initialised stream, 8 cores
 * a node, ran 2.5% slower than linux under software). Two threads fit;
 * another process's busy thread on a core's sibling takes the whole core.
 * With more busy threads than the machine's 8 cores, cores are shared
 * anyway: room is counted in hardware threads, and four fit (counted in
 * cores there, an oversubscribed mix on an SMT-4 machine lost 4 points).
 * So they are for a process measured latency-bound: its pages spread by
 * its threads' shares would bring no thread its own (a mixed process's,
 * 2 cores a node of SMT-4: random seed 15445, scenario 81, -2.2% under
 * perf); unmeasured, it may be a stream, which the spread relieves.
 */
static void room_is_counted_in_cores(void **state)
{
	(void)state;
	static const int cpus[4] = {4, 8, 12, 6};
	static const int other_cpus[2][5] = {{1}, {5, 7, 9, 13, 14}};
	struct {
		int threads, others, where, measured, moves;
	} cases[5] = {{4, 0, 0, 0, 1},
		      {2, 0, 0, 0, 0},
		      {2, 1, 0, 0, 1},
		      {4, 5, 1, 0, 0},
		      {4, 0, 0, 1, 0}};
	for (int k = 0; k < 5; k++) {
		struct two w;
		two_init(&w, "numa:4 core:2 pu:2", 100, 0, 200, 3);
		for (int i = 0; i < cases[k].threads; i++) {
			struct nl_view_thread *t =
				busy(&w.u, 101 + i, 100, cpus[i]);
			t->has_oi = cases[k].measured;
			t->oi = 2; /* latency-bound */
		}
		for (int i = 0; i < cases[k].others; i++)
			busy(&w.u, 201 + i, 200, other_cpus[cases[k].where][i]);
		for (int period = 0; period < 4; period++) {
			struct nl_pages_domain dm =
				two_domain(&w, 10 + period, 1);
			assert_int_equal(nl_pages_plan(&dm, 0, &w.plan), 0);
		}
		assert_int_equal(w.plan.n > 0, cases[k].moves);
		if (w.plan.n > 0)
			assert_int_equal(w.plan.actions[0].from_cpu, 0);
		two_free(&w);
	}
}

/* Pages by pid and node the test changes as moves apply. */
struct moving_pages {
	int pid;
	double pages[NL_MAX_NODES];
};

static int read_moving(void *ctx, int pid, double *pages)
{
	struct moving_pages *m = ctx;
	if (pid != m->pid)
		return -ESRCH;
	memcpy(pages, m->pages, sizeof(double) * NL_MAX_NODES);
	return 0;
}

/* One period of a process whose threads run at tput ops/s (op counts, or
 * a CPU share only): page placement's plan, applied in full. Returns the
 * moves made, and the last one's nodes in *from, *to. */
static int trial_period(struct vu *u, struct nl_pages_domain *dm,
			struct moving_pages *m, double now, double tput,
			int ops, int *from, int *to)
{
	struct nl_plan plan;
	int moves = 0;
	for (int i = 0; i < u->n; i++) {
		u->t[i].tput = tput;
		u->t[i].tput_ops = ops;
		u->t[i].has_share = 1;
		u->t[i].cpu_share = 1;
	}
	dm->v = vu_view(u, now);
	nl_plan_init(&plan);
	assert_int_equal(nl_pages_plan(dm, 0, &plan), 0);
	for (size_t a = 0; a < plan.n; a++) {
		const struct nl_action *x = &plan.actions[a];
		if (x->from_cpu < 0)
			continue;
		m->pages[x->from_cpu] -= x->bytes / 4096;
		m->pages[x->to_cpu] += x->bytes / 4096;
		/* as the engine counts what it applied */
		dm->procs[0].st->bytes += x->bytes;
		dm->procs[0].st->judge = 1;
		*from = x->from_cpu;
		*to = x->to_cpu;
		moves++;
		assert_int_equal(nl_pages_moved(dm, 0, x->bytes, &plan), 0);
	}
	nl_plan_free(&plan);
	return moves;
}

/*
 * A run that takes a process's memory onto fewer nodes (its interleave
 * over two, its threads on one) is a trial: judged over the periods after
 * the run against its throughput before, and undone, the pages back where
 * they were, when it lost; kept when it did not. Without op counts no such
 * run is made: a CPU share says nothing of memory speed.
 */
static void concentrating_run_is_a_trial(void **state)
{
	(void)state;
	for (int lose = 0; lose < 3; lose++) {
		struct vu u;
		struct nl_policy_params p;
		struct nl_page_state st;
		struct nl_pages_proc proc = {100, &st};
		struct moving_pages m = {.pid = 100};
		int from = -1, to = -1, ops = lose < 2;
		memset(&st, 0, sizeof(st));
		nl_policy_params_default(&p);
		p.page_rate = 1e12;
		vu_init(&u, "numa:2 core:2 pu:1");
		busy(&u, 101, 100, 2);
		busy(&u, 102, 100, 3);
		m.pages[0] = m.pages[1] = 5e4;
		struct nl_pages_domain dm = {.params = &p,
					     .procs = &proc,
					     .nprocs = 1,
					     .read = read_moving,
					     .ctx = &m};
		int moved = trial_period(&u, &dm, &m, 10, 1e6, ops, &from, &to);
		if (!ops) {
			/* lose == 2: CPU shares only */
			assert_int_equal(moved, 0);
			assert_true(m.pages[0] == 5e4);
			vu_free(&u);
			continue;
		}
		assert_int_equal(moved, 1);
		assert_true(from == 0 && to == 1 && m.pages[0] < 1);
		/* The run is over; then three periods at 10% less (lose) or
		 * as before: the third decides. */
		double after = lose ? 0.9e6 : 1e6;
		for (int t = 11; t < 14; t++)
			assert_int_equal(trial_period(&u, &dm, &m, t, after,
						      ops, &from, &to),
					 0);
		moved = trial_period(&u, &dm, &m, 14, after, ops, &from, &to);
		if (lose) {
			assert_int_equal(moved, 1);
			assert_true(from == 1 && to == 0);
			assert_true(fabs(m.pages[0] - 5e4) < 1);
			assert_int_equal(st.failed, 1);
		} else {
			assert_int_equal(moved, 0);
			assert_true(m.pages[1] > 1e5 - 1 && !st.trial);
		}
		vu_free(&u);
	}
}

/* trial_period with every thread at operational intensity oi. */
static int phase_period(struct vu *u, struct nl_pages_domain *dm,
			struct moving_pages *m, double now, double tput,
			double oi, int *from, int *to)
{
	for (int i = 0; i < u->n; i++) {
		u->t[i].has_oi = 1;
		u->t[i].oi = oi;
	}
	return trial_period(u, dm, m, now, tput, 1, from, to);
}

/*
 * A trial is judged against the calm periods of its own phase. A mixed
 * process at intensity 10 runs at 1e6 ops/s and at intensity 2 at 0.3e6;
 * its memory, interleaved over both nodes, follows its threads onto node
 * 1. (a) Begun in the first phase with no calm period of the second,
 * which is all that follows: no period can be judged, and after
 * TRIAL_AFTER of them the trial ends, kept (it stayed a trial for good,
 * and no calm period was recorded again). (b) Calm
 * periods of both phases seen first: the second phase at its calm speed
 * keeps the run; 10% below it undoes it.
 */
static void trial_judged_in_its_phase(void **state)
{
	(void)state;
	for (int c = 0; c < 3; c++) {
		struct vu u;
		struct nl_policy_params p;
		struct nl_page_state st;
		struct nl_pages_proc proc = {100, &st};
		struct moving_pages m = {.pid = 100};
		int from = -1, to = -1;
		memset(&st, 0, sizeof(st));
		nl_policy_params_default(&p);
		p.page_rate = 1e12;
		vu_init(&u, "numa:2 core:2 pu:1");
		struct nl_view_thread *t101 = busy(&u, 101, 100, c ? 0 : 2);
		busy(&u, 102, 100, 3);
		m.pages[0] = m.pages[1] = 5e4;
		struct nl_pages_domain dm = {.params = &p,
					     .procs = &proc,
					     .nprocs = 1,
					     .read = read_moving,
					     .ctx = &m};
		double t = 10, P = p.period_s;
		if (c) {
			/* Spread over both nodes like its pages: calm, in
			 * both phases; then both threads on node 1. */
			for (int k = 0; k < 4; k++, t += P)
				assert_int_equal(
					phase_period(&u, &dm, &m, t,
						     k % 2 ? 0.3e6 : 1e6,
						     k % 2 ? 2 : 10, &from,
						     &to),
					0);
			t101->cpu = 2;
			for (int k = 0; k < 2; k++, t += P)
				assert_int_equal(phase_period(&u, &dm, &m, t,
							      1e6, 10, &from,
							      &to),
						 0);
		}
		assert_int_equal(
			phase_period(&u, &dm, &m, t, 1e6, 10, &from, &to), 1);
		assert_true(from == 0 && to == 1 && m.pages[0] < 1 && st.trial);
		/* The second phase from now on (in case 2 10% slower than
		 * its calm periods): the run ends, then the third period
		 * after it decides. */
		double slow = c == 2 ? 0.27e6 : 0.3e6;
		for (int k = 1; k <= 3; k++)
			assert_int_equal(phase_period(&u, &dm, &m, t + k * P,
						      slow, 2, &from, &to),
					 0);
		int moved = phase_period(&u, &dm, &m, t + 4 * P, slow, 2, &from,
					 &to);
		if (c < 2) {
			assert_int_equal(moved, 0);
			assert_true(m.pages[1] > 1e5 - 1 && !st.trial);
			assert_int_equal(st.failed, 0);
		} else {
			assert_int_equal(moved, 1);
			assert_true(from == 1 && to == 0);
			assert_true(fabs(m.pages[0] - 5e4) < 1);
			assert_int_equal(st.failed, 1);
		}
		vu_free(&u);
	}
}

/*
 * A run that concentrates memory waits SETTLED_STEPS steps after the
 * process's threads last moved between nodes: after a process ends, the
 * kernel's balancer moves threads between nodes over a few steps, and
 * an interleave gathered onto the node the balancer had put 4 of 5
 * threads on for one step was left behind one controller when it evened
 * them again (random seed 15445, scenario 74: -5.6% under perf). Threads
 * 101 and 102 run on nodes 0 and 1 over an interleave of both; then the
 * balancer puts 101 on node 1: the pages follow only two steps later.
 */
static void concentrating_waits_for_settled_threads(void **state)
{
	struct vu u;
	struct nl_policy_params p;
	struct nl_page_state st;
	struct nl_pages_proc proc = {100, &st};
	struct moving_pages m = {.pid = 100};
	int from = -1, to = -1;
	(void)state;
	memset(&st, 0, sizeof(st));
	nl_policy_params_default(&p);
	p.page_rate = 1e12;
	vu_init(&u, "numa:2 core:2 pu:1");
	struct nl_view_thread *t101 = busy(&u, 101, 100, 0);
	busy(&u, 102, 100, 3);
	m.pages[0] = m.pages[1] = 5e4;
	struct nl_pages_domain dm = {.params = &p,
				     .procs = &proc,
				     .nprocs = 1,
				     .read = read_moving,
				     .ctx = &m};
	double P = p.period_s;
	assert_int_equal(trial_period(&u, &dm, &m, 10, 1e6, 1, &from, &to), 0);
	assert_int_equal(trial_period(&u, &dm, &m, 10 + P, 1e6, 1, &from, &to),
			 0);
	t101->cpu = 2;
	for (int k = 2; k < 4; k++)
		assert_int_equal(trial_period(&u, &dm, &m, 10 + k * P, 1e6, 1,
					      &from, &to),
				 0);
	assert_true(m.pages[0] == 5e4 && !st.active);
	assert_int_equal(
		trial_period(&u, &dm, &m, 10 + 4 * P, 1e6, 1, &from, &to), 1);
	assert_true(from == 0 && to == 1 && st.trial);
	vu_free(&u);
}

/*
 * A trial whose process falls far below its throughput before the run
 * (below undo_threshold of it, beyond what its threads waited for the
 * copies) is undone at once: not held where it is (the move judge's
 * verdict), nor left to be judged periods later.
 */
static void trial_far_below_is_undone_at_once(void **state)
{
	struct vu u;
	struct nl_policy_params p;
	struct nl_page_state st;
	struct nl_pages_proc proc = {100, &st};
	struct moving_pages m = {.pid = 100};
	int from = -1, to = -1;
	(void)state;
	memset(&st, 0, sizeof(st));
	nl_policy_params_default(&p);
	/* A quarter of the pages to move a period: its two threads wait
	 * half of the next period for the copy (at page_rate). */
	p.page_rate = 1.25e4 * 4096 / p.period_s;
	vu_init(&u, "numa:2 core:2 pu:1");
	busy(&u, 101, 100, 2);
	busy(&u, 102, 100, 3);
	m.pages[0] = m.pages[1] = 5e4;
	struct nl_pages_domain dm = {.params = &p,
				     .procs = &proc,
				     .nprocs = 1,
				     .read = read_moving,
				     .ctx = &m};
	double t = 10, P = p.period_s;
	assert_int_equal(trial_period(&u, &dm, &m, t, 1e6, 1, &from, &to), 1);
	assert_true(from == 0 && to == 1 && st.trial && st.active);
	assert_true(fabs(m.pages[0] - 3.75e4) < 1);
	/* At 60%: the copies explain it (it waited half the period), but
	 * the move judge ends the run there; the pages stay. */
	t += P;
	assert_int_equal(trial_period(&u, &dm, &m, t, 0.6e6, 1, &from, &to), 0);
	assert_true(st.trial && !st.active && !st.undoing);
	assert_true(fabs(m.pages[0] - 3.75e4) < 1);
	/* At 60% with nothing copied: the quarter goes back at once. */
	t += P;
	assert_int_equal(trial_period(&u, &dm, &m, t, 0.6e6, 1, &from, &to), 1);
	assert_true(from == 1 && to == 0);
	assert_true(fabs(m.pages[0] - 5e4) < 1 && !st.active);
	assert_int_equal(st.failed, 2);
	/* Then nothing for page_hold_s: the undo is over. */
	assert_int_equal(trial_period(&u, &dm, &m, t + P, 1e6, 1, &from, &to),
			 0);
	assert_true(fabs(m.pages[0] - 5e4) < 1 && !st.trial && !st.undoing);
	vu_free(&u);
}

/*
 * Pages off a node that none of the process's threads is on go only where
 * the worst-placed thread ends no farther from them (three nodes in a
 * line, 10/20/40): a process that is not bandwidth-bound, its threads at
 * both ends and its pages in the middle, keeps them there (half to either
 * end puts that end's thread at mean distance 30, not 20, and it ends with
 * its slowest thread; rand-31337-0100, -5%); a bandwidth-bound one
 * spreads them; with its threads on the middle node and one end, pages at
 * the other end go to both (the far thread's distance falls 40 -> 30).
 * Node 2 at 40 from both others, threads on 0 and 2, pages on 1: they
 * spread to 0 and 2 though thread 0 gets farther, as the worst (thread 2,
 * 40) gains (rand-8642-0117). Other processes fill the pages' node, so
 * the threads cannot go there.
 */
static void pages_leave_the_worst_no_farther(void **state)
{
	static const unsigned d[2][9] = {{10, 20, 40, 20, 10, 20, 40, 20, 10},
					 {10, 20, 40, 20, 10, 40, 40, 40, 10}};
	static const struct {
		int cpu[2], pages, other, bw, moves, d;
	} c[4] = {{{0, 4}, 1, 2, 0, 0, 0},
		  {{0, 4}, 1, 2, 1, 2, 0},
		  {{2, 4}, 0, 0, 0, 2, 0},
		  {{0, 4}, 1, 2, 0, 2, 1}};
	(void)state;
	for (int k = 0; k < 4; k++) {
		struct vu u;
		struct nl_policy_params p;
		struct nl_page_state st;
		struct nl_pages_proc proc = {100, &st};
		struct moving_pages m = {.pid = 100};
		int from = -1, to = -1, moves = 0;

		memset(&st, 0, sizeof(st));
		nl_policy_params_default(&p);
		p.page_rate = 1e12;
		vu_init(&u, "numa:3 core:2 pu:1");
		assert_int_equal(nl_topology_set_distances(u.topo, d[c[k].d]),
				 0);
		for (int i = 0; i < 2; i++) {
			struct nl_view_thread *t =
				busy(&u, 101 + i, 100, c[k].cpu[i]);
			t->has_oi = c[k].bw;
			t->oi = 0.1;
			busy(&u, 201 + i, 200, c[k].other + i);
		}
		m.pages[c[k].pages] = 1e5;
		struct nl_pages_domain dm = {.params = &p,
					     .procs = &proc,
					     .nprocs = 1,
					     .read = read_moving,
					     .ctx = &m};
		for (int i = 0; i < 4; i++)
			moves += trial_period(&u, &dm, &m, 10 + i, 1e6, 1,
					      &from, &to);
		assert_int_equal(moves, c[k].moves);
		if (moves) {
			int a = u.topo->cpu_node[c[k].cpu[0]],
			    b = u.topo->cpu_node[c[k].cpu[1]];
			assert_true(fabs(m.pages[a] - 5e4) < 1);
			assert_true(fabs(m.pages[b] - 5e4) < 1);
		} else {
			assert_true(fabs(m.pages[1] - 1e5) < 1);
		}
		vu_free(&u);
	}
}

/* A dry run shows page moves: the engine applies page placement's plan
 * through the machine, so the dry-run machine sees each move, in the
 * plan's order, as the journal has it, and the model's pages stay. */
static void dry_run_lists_page_moves(void **state)
{
	struct nl_scenario *sc;
	struct nl_machine *m, *dry;
	struct nl_engine *e;
	struct nl_policy_params p;
	const struct nl_process_info *pi;
	size_t n, k = 0, moves = 0;
	char err[512];
	(void)state;
	if (nl_scenario_load("etc/scenarios/set/n4-mg16-mg16-master.json", &sc,
			     err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(nl_sim_create(sc, 1, &m, err, sizeof(err)), 0);
	assert_int_equal(nl_dryrun_create(m, &dry), 0);
	nl_policy_params_default(&p);
	p.pages = 1;
	assert_int_equal(nl_engine_create(dry, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 0, "j", NL_POLICY_IMAR2, &p, 1), 0);
	assert_int_equal(dry->ops->processes(dry, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nl_engine_add_process(e, pi[i].pid, 0), 0);
	assert_int_equal(nl_engine_run(e), 0);
	struct json_object *r = nl_engine_report(e, 0), *x, *v;
	assert_true(json_object_object_get_ex(r, "events", &x));
	for (size_t i = 0; i < json_object_array_length(x); i++) {
		struct json_object *ev = json_object_array_get_idx(x, i);
		int pid, from, to;
		double bytes;
		json_object_object_get_ex(ev, "kind", &v);
		if (strcmp(json_object_get_string(v), "pages") != 0 ||
		    !json_object_object_get_ex(ev, "from_node", &v))
			continue;
		/* The next page move the machine was asked for. */
		while (k < nl_dryrun_count(dry) &&
		       strncmp(nl_dryrun_entry(dry, k), "pages ", 6) != 0)
			k++;
		assert_true(k < nl_dryrun_count(dry));
		assert_int_equal(sscanf(nl_dryrun_entry(dry, k++),
					"pages %d %d %d %lf", &pid, &from, &to,
					&bytes),
				 4);
		assert_int_equal(pid, json_object_get_int(get(ev, "pid")));
		assert_int_equal(from, json_object_get_int(v));
		assert_int_equal(to, json_object_get_int(get(ev, "to_node")));
		assert_true(fabs(bytes -
				 json_object_get_double(get(ev, "bytes"))) < 1);
		moves++;
	}
	/* Several moves, and none the journal does not have. */
	assert_true(moves > 1);
	while (k < nl_dryrun_count(dry))
		assert_true(strncmp(nl_dryrun_entry(dry, k++), "pages ", 6));
	/* The machine behind it moved no page. */
	assert_true(nl_sim_model(m)->pages_moved_bytes == 0);
	json_object_put(r);
	nl_engine_free(e);
	nl_machine_destroy(dry);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model_moves_pages),
		cmocka_unit_test(engine_spreads_concentrated_pages),
		cmocka_unit_test(engine_leaves_local_pages),
		cmocka_unit_test(engine_improves_interleaved_memory),
		cmocka_unit_test(engine_gathers_on_sockets),
		cmocka_unit_test(engine_counts_moves_cut_short),
		cmocka_unit_test(harm_check_moves_no_pages),
		cmocka_unit_test(placement_plans_without_a_machine),
		cmocka_unit_test(pages_go_to_no_busier_memory),
		cmocka_unit_test(unmeasured_pages_go_to_no_busier_memory),
		cmocka_unit_test(room_is_counted_in_cores),
		cmocka_unit_test(concentrating_run_is_a_trial),
		cmocka_unit_test(trial_far_below_is_undone_at_once),
		cmocka_unit_test(trial_judged_in_its_phase),
		cmocka_unit_test(concentrating_waits_for_settled_threads),
		cmocka_unit_test(pages_leave_the_worst_no_farther),
		cmocka_unit_test(dry_run_lists_page_moves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
