/*
 * numalot: advice from a report (advice.h). Each rule reads only the
 * report, with the thresholds docs/advice.md gives and why; a rule whose
 * evidence the report lacks (an old report, a backend without CPU time)
 * says nothing rather than guess.
 */
#include "advice_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nl_advice_add(struct ctx *c, const char *rule, const char *problem,
		   const char *evidence, const char *did, const char *next)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "rule", json_object_new_string(rule));
	json_object_object_add(o, "problem", json_object_new_string(problem));
	json_object_object_add(o, "evidence", json_object_new_string(evidence));
	json_object_object_add(o, "numalot_did", json_object_new_string(did));
	json_object_object_add(o, "next_time", json_object_new_string(next));
	json_object_array_add(c->out, o);
}

struct move {
	int tid;
	double t_s;
};

static int cmp_move(const void *a, const void *b)
{
	const struct move *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid - y->tid;
	return (x->t_s > y->t_s) - (x->t_s < y->t_s);
}

/* Every move numalot made (migrate, swap: both threads, rollback), by
 * tid then time, so that each thread's first is a binary search. */
static struct move *moves_of(struct json_object *events, size_t *n)
{
	struct move *m = malloc(sizeof(*m) * (2 * len(events) + 1));
	*n = 0;
	for (size_t i = 0; m && i < len(events); i++) {
		struct json_object *e = idx(events, i);
		const char *k = json_object_get_string(get(e, "kind"));
		double t = num(get(e, "t_s"), -1);
		int a = inum(get(e, "tid"), -1),
		    b = inum(get(e, "other_tid"), -1);
		if (!k || (strcmp(k, "migrate") && strcmp(k, "swap") &&
			   strcmp(k, "rollback")))
			continue;
		if (a >= 0)
			m[(*n)++] = (struct move){a, t};
		if (b >= 0)
			m[(*n)++] = (struct move){b, t};
	}
	if (m)
		qsort(m, *n, sizeof(*m), cmp_move);
	return m;
}

/* The first move of tid at or after from_s (a reused tid: the later
 * thread's), or a time past every other. */
static double first_move_s(const struct move *m, size_t n, int tid,
			   double from_s)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m[mid].tid < tid ||
		    (m[mid].tid == tid && m[mid].t_s < from_s - 1e-9))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && m[lo].tid == tid ? m[lo].t_s : 1e300;
}

static void read_thread(struct ctx *c, struct json_object *o, struct th *t,
			const struct move *m, size_t nm)
{
	struct json_object *tn = get(o, "time_per_node_s"),
			   *cpus = get(o, "cpus");
	memset(t, 0, sizeof(*t));
	t->tid = inum(get(o, "tid"), -1);
	t->pid = inum(get(o, "pid"), -1);
	t->t0_s = num(get(o, "first_seen_s"), 0);
	t->t1_s = num(get(o, "last_seen_s"), t->t0_s);
	for (size_t k = 0; k < len(tn) && k < MAX_NODES; k++) {
		t->node_s[k] = num(idx(tn, k), 0);
		t->cpu_s += t->node_s[k];
	}
	t->share = t->t1_s > t->t0_s ? t->cpu_s / (t->t1_s - t->t0_s) : 0;
	t->busy = c->cpu_time && t->share >= BUSY_SHARE;
	t->migrations = inum(get(o, "migrations"), 0);
	t->cpu0 = t->node0 = -1;
	if (len(cpus) && len(idx(cpus, 0)) >= 3) {
		struct json_object *f = idx(cpus, 0);
		t->cpu0 = inum(idx(f, 1), -1);
		t->node0 = inum(idx(f, 2), -1);
		/* A second entry before numalot's first move: the OS moved
		 * it, so nothing bound it there. Held for less than a period,
		 * it may have been there by chance. */
		double next =
			len(cpus) > 1 ? num(idx(idx(cpus, 1), 0), 0) : 1e300;
		double moved = first_move_s(m, nm, t->tid, t->t0_s);
		double until = next < moved ? next : moved;
		until = until < t->t1_s ? until : t->t1_s;
		t->held = t->cpu0 >= 0 && next >= moved - 1e-9 &&
			  until - num(idx(f, 0), t->t0_s) >= c->period_s - 1e-9;
	}
}

static int load(struct ctx *c)
{
	struct json_object *th = get(c->r, "threads"),
			   *events = get(c->r, "events");
	struct json_object *tc =
		get(get(get(c->r, "counters"), "measured"), "task_clock");
	c->nodes = inum(get(get(c->r, "machine"), "nodes"), 0);
	c->cpus = inum(get(get(c->r, "machine"), "cpus"), 0);
	c->period_s = num(get(get(get(c->r, "policy"), "params"), "period"), 0);
	/* Without task-clock, time_per_node_s is wall time: nothing tells
	 * a busy thread from a sleeping one. */
	c->cpu_time = !tc || json_object_get_boolean(tc);
	size_t nm;
	struct move *m = moves_of(events, &nm);
	c->th = calloc(len(th) + 1, sizeof(*c->th));
	if (!c->th || !m) {
		free(m);
		return -1;
	}
	for (size_t i = 0; i < len(th); i++) {
		if (!json_object_is_type(idx(th, i), json_type_object))
			continue;
		read_thread(c, idx(th, i), &c->th[c->n], m, nm);
		c->nbusy += c->th[c->n].busy;
		c->n++;
	}
	free(m);
	return 0;
}

/* Moved: how many busy threads numalot moved at least once. */
static int busy_moved(const struct ctx *c)
{
	int k = 0;
	for (int i = 0; i < c->n; i++)
		k += c->th[i].busy && c->th[i].migrations > 0;
	return k;
}

static const char *limit_of(struct json_object *r, int pid)
{
	struct json_object *pr = get(r, "processes");
	for (size_t i = 0; i < len(pr); i++)
		if (inum(get(idx(pr, i), "pid"), -2) == pid)
			return json_object_get_string(
				get(idx(pr, i), "placement_limit"));
	return NULL;
}

/* Every busy thread started on one CPU and stayed there until numalot
 * moved it: a binding to one CPU (taskset -c N, a --cpu-bind mask). */
static int one_cpu(struct ctx *c)
{
	int cpu = -1, pid = -1;
	char ev[256], did[512];

	if (c->nbusy < 2 || c->cpus < 2)
		return 0;
	for (int i = 0; i < c->n; i++) {
		const struct th *t = &c->th[i];
		if (!t->busy)
			continue;
		if (!t->held || (cpu >= 0 && t->cpu0 != cpu))
			return 0;
		cpu = t->cpu0;
		pid = t->pid;
	}
	snprintf(ev, sizeof(ev),
		 "its %d busy threads were all on CPU %d when numalot first "
		 "sampled them, and the OS left them there; the machine has "
		 "%d CPUs",
		 c->nbusy, cpu, c->cpus);
	int moved = busy_moved(c);
	const char *lim = limit_of(c->r, pid);
	if (moved)
		snprintf(did, sizeof(did),
			 "numalot moved %d of them to other CPUs", moved);
	else
		snprintf(did, sizeof(did),
			 "numalot did not move them (where it may place them: "
			 "%s)",
			 lim ? lim : "not recorded");
	nl_advice_add(
		c, "one_cpu", "all its threads shared one CPU", ev, did,
		"give each thread a CPU of its own: bind the job to as many "
		"CPUs as it has busy threads, not one (taskset -c 0-N or "
		"numactl --physcpubind=0-N rather than a single CPU); under "
		"Slurm, srun --cpus-per-task=N --cpu-bind=cores; with OpenMP, "
		"OMP_PLACES=cores OMP_PROC_BIND=close");
	return 1;
}

struct edge {
	double t_s;
	int d; /* +1 a start, -1 an end */
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->t_s != y->t_s)
		return (x->t_s > y->t_s) - (x->t_s < y->t_s);
	return x->d - y->d; /* an end before a start at the same time */
}

/* The most busy threads alive at once. */
static int peak_busy(const struct ctx *c)
{
	struct edge *ev = malloc(sizeof(*ev) * 2 * ((size_t)c->nbusy + 1));
	int n = 0, cur = 0, peak = 0;
	if (!ev)
		return 0;
	for (int i = 0; i < c->n; i++)
		if (c->th[i].busy) {
			ev[n++] = (struct edge){c->th[i].t0_s, 1};
			ev[n++] = (struct edge){c->th[i].t1_s, -1};
		}
	qsort(ev, (size_t)n, sizeof(*ev), cmp_edge);
	for (int i = 0; i < n; i++) {
		cur += ev[i].d;
		peak = cur > peak ? cur : peak;
	}
	free(ev);
	return peak;
}

#define MAX_CPU_SEEN 8192

/* How many CPUs the job's threads were seen on (its cpus lists); 0 when
 * the report has none. */
static int cpus_seen(const struct ctx *c)
{
	struct json_object *th = get(c->r, "threads");
	unsigned char *seen = calloc(MAX_CPU_SEEN, 1);
	int n = 0;
	if (!seen)
		return 0;
	for (size_t i = 0; i < len(th); i++) {
		struct json_object *l = get(idx(th, i), "cpus");
		for (size_t k = 0; k < len(l); k++) {
			int cpu = inum(idx(idx(l, k), 1), -1);
			if (cpu >= 0 && cpu < MAX_CPU_SEEN && !seen[cpu]) {
				seen[cpu] = 1;
				n++;
			}
		}
	}
	free(seen);
	return n;
}

/* More busy threads at once than the CPUs they ran on, each getting
 * well under a CPU: the job asked too little, or started too many. */
static void oversubscribed(struct ctx *c)
{
	int peak = peak_busy(c), on = cpus_seen(c);
	double sum = 0;
	char ev[320], did[320];

	if (!on)
		on = c->cpus;
	if (!on || peak <= on)
		return;
	for (int i = 0; i < c->n; i++)
		sum += c->th[i].busy ? c->th[i].share : 0;
	double mean = sum / c->nbusy;
	if (!(mean < OVERSUB_SHARE))
		return;
	snprintf(ev, sizeof(ev),
		 "%d busy threads at once on the %d CPU%s its threads ran "
		 "on; a busy thread had %d%% of a CPU on average",
		 peak, on, plural(on), (int)(100 * mean + 0.5));
	int rel = inum(get(get(c->r, "summary"), "releases"), 0);
	int mig = inum(get(get(c->r, "summary"), "migrations"), 0);
	if (rel > 0)
		snprintf(did, sizeof(did),
			 "numalot handed %d thread%s back to the OS: moving "
			 "threads between full CPUs gains nothing",
			 rel, plural(rel));
	else if (mig > 0)
		snprintf(did, sizeof(did),
			 "numalot made %d migration%s; no move makes room "
			 "on full CPUs",
			 mig, plural(mig));
	else
		snprintf(did, sizeof(did),
			 "numalot moved no thread: no move makes room on "
			 "full CPUs");
	nl_advice_add(
		c, "oversubscribed", "more busy threads than CPUs", ev, did,
		"run no more busy threads than CPUs (OMP_NUM_THREADS, or the "
		"program's own thread count, at most the CPUs it has), or ask "
		"for more CPUs: srun --cpus-per-task=N (with "
		"--cpu-bind=cores)");
}

/* Two busy threads held on the two hardware threads of one core while
 * another core had none of the job's: a binding by PU, not by core. */
static void smt_shared(struct ctx *c)
{
	struct json_object *smt = get(get(c->r, "machine"), "smt_siblings");
	size_t ncores = len(smt), idle = 0;
	char ev[320], did[256];
	int a = -1, b = -1;

	if (ncores < 2 || c->nbusy < 2)
		return;
	/* Each core's first held busy thread (index + 1, 0 none), and each
	 * OS CPU's core (index + 1). */
	int *first = calloc(ncores, sizeof(int));
	int *core = calloc(MAX_CPU_SEEN, sizeof(int));
	for (size_t k = 0; first && core && k < ncores; k++)
		for (size_t j = 0; j < len(idx(smt, k)); j++) {
			int cpu = inum(idx(idx(smt, k), j), -1);
			if (cpu >= 0 && cpu < MAX_CPU_SEEN)
				core[cpu] = (int)k + 1;
		}
	for (int i = 0; first && core && i < c->n; i++) {
		const struct th *t = &c->th[i];
		int k = t->busy && t->held && t->cpu0 >= 0 &&
					t->cpu0 < MAX_CPU_SEEN
				? core[t->cpu0] - 1
				: -1;
		if (k < 0)
			continue;
		if (!first[k])
			first[k] = i + 1;
		else if (a < 0 && c->th[first[k] - 1].cpu0 != t->cpu0) {
			a = first[k] - 1;
			b = i;
		}
	}
	for (size_t k = 0; first && k < ncores; k++)
		idle += !first[k];
	free(first);
	free(core);
	if (a < 0 || !idle)
		return;
	snprintf(ev, sizeof(ev),
		 "threads %d and %d ran on CPUs %d and %d, two hardware "
		 "threads of one core, until numalot moved them or they ended, "
		 "while %zu "
		 "core%s had none of its threads",
		 c->th[a].tid, c->th[b].tid, c->th[a].cpu0, c->th[b].cpu0, idle,
		 plural((long)idle));
	int moved = (c->th[a].migrations > 0) + (c->th[b].migrations > 0);
	if (moved)
		snprintf(did, sizeof(did),
			 "numalot moved %d of the two to another core", moved);
	else
		snprintf(did, sizeof(did), "numalot did not move them");
	nl_advice_add(c, "smt_shared",
		      "threads shared a core while cores were idle", ev, did,
		      "one busy thread per core: OMP_PLACES=cores "
		      "OMP_PROC_BIND=spread; "
		      "srun --hint=nomultithread --cpu-bind=cores; or numactl "
		      "--physcpubind with one CPU of each core");
}

struct json_object *nl_advice(struct json_object *report)
{
	struct ctx c = {.r = report, .out = json_object_new_array()};
	struct json_object *pr = get(report, "processes");

	if (!c.out)
		return NULL;
	if (!json_object_is_type(report, json_type_object) || load(&c) < 0) {
		free(c.th);
		return c.out;
	}
	if (!one_cpu(&c))
		oversubscribed(&c);
	smt_shared(&c);
	for (size_t i = 0; i < len(pr); i++) {
		struct json_object *p = idx(pr, i);
		if (!json_object_is_type(p, json_type_object))
			continue;
		nl_advice_data_on_one_node(&c, p);
		nl_advice_memory_bound_away(&c, p);
		nl_advice_children_not_followed(&c, p);
	}
	free(c.th);
	return c.out;
}
