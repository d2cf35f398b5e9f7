/*
 * numalot: the processes of a random scenario (random.h): 1 to 5 of the
 * four kinds, numactl-style bindings, CPU lists, jobs on disjoint CPU
 * sets, staggered starts, kind overrides; or one of the paper's classes
 * (docs/scenarios.md) on the drawn machine. Every field stays within what
 * the scenario parser accepts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "model.h"
#include "random_priv.h"

#define MAX_PROCS 5

/* Where a process's memory goes: a placement or a numactl option. */
enum mem {
	M_FIRST_TOUCH,
	M_MASTER,
	M_INTERLEAVE,
	M_NODE,
	M_BIND,
	M_MEMBIND,
	M_INTERLEAVE_LIST,
	M_PREFERRED,
	M_COUNT
};

/* Chances in percent, in enum order. */
static const int mem_weight[M_COUNT] = {28, 16, 7, 8, 8, 13, 12, 8};

static const char *const kinds[] = {"compute", "stream", "latency", "mixed"};
static const char *const like[] = {"ep", "mg", "cg", "ft"};
/* The paper's classes: latency, stream, mixed, compute (generate.py). */
static const int paper_mix[] = {2, 1, 3, 0};
static const char *const classes[] = {"direct", "ind", "interleave", "spread"};

struct proc {
	int kind, job, threads, start_node, usable, explicit_ft;
	hwloc_bitmap_t allow; /* dense CPUs it may use */
	int has_cpus;
	unsigned long long bind; /* cpunodebind, 0: none */
	enum mem mem;
	int mem_node;
	unsigned long long mem_nodes;
	double start_s;
	double work_scale;
	/* kind overrides, < 0 when not given */
	double peak_fraction, bytes_per_op, mlp, shared_fraction;
};

/* The nodes holding some of the CPUs of set. */
static unsigned long long nodes_of(const struct nl_rgen *g,
				   hwloc_const_bitmap_t set)
{
	unsigned long long m = 0;
	int c;

	hwloc_bitmap_foreach_begin(c, set)
	{
		m |= 1ULL << g->topo->cpu_node[c];
	}
	hwloc_bitmap_foreach_end();
	return m;
}

static void set_nodes(const struct nl_rgen *g, hwloc_bitmap_t set,
		      unsigned long long nodes)
{
	hwloc_bitmap_zero(set);
	for (int c = 0; c < g->topo->ncpus; c++)
		if (nodes >> g->topo->cpu_node[c] & 1)
			hwloc_bitmap_set(set, (unsigned)c);
}

static int usable_cpus(const struct nl_rgen *g, const struct proc *p)
{
	int n = 0, c;

	hwloc_bitmap_foreach_begin(c, p->allow)
	{
		n += !p->bind || (p->bind >> g->topo->cpu_node[c] & 1);
	}
	hwloc_bitmap_foreach_end();
	return n;
}

/* A binding drawn as numactl users write them, within the allowed CPUs. */
static void draw_binding(struct nl_rgen *g, struct proc *p)
{
	unsigned long long all = (1ULL << g->nnodes) - 1;
	unsigned long long cn = nodes_of(g, p->allow);
	int w = nl_rgen_int(g, 0, 99), k = 0;
	double pb;

	while (k < M_COUNT - 1 && w >= mem_weight[k])
		w -= mem_weight[k++];
	p->mem = (enum mem)k;
	pb = k == M_MEMBIND || k == M_INTERLEAVE_LIST ? 0.7
	     : k == M_PREFERRED			      ? 0.3
						      : 0.1;
	if (nl_rgen_chance(g, pb))
		p->bind = nl_rgen_nodes(g, cn,
					__builtin_popcountll(cn) > 1 &&
							nl_rgen_chance(g, 0.25)
						? 2
						: 1);
	if (k == M_NODE || k == M_BIND || k == M_MEMBIND || k == M_PREFERRED)
		p->mem_node = p->bind && nl_rgen_chance(g, 0.5)
				      ? nl_rgen_node(g, p->bind)
				      : nl_rgen_node(g, all);
	if (k == M_INTERLEAVE_LIST)
		p->mem_nodes =
			nl_rgen_chance(g, 0.4)
				? all
				: nl_rgen_nodes(g, all,
						nl_rgen_int(g, 2, g->nnodes));
	p->explicit_ft = k == M_FIRST_TOUCH && nl_rgen_chance(g, 0.3);
	p->start_node = -1;
	if (nl_rgen_chance(g, 0.12))
		p->start_node = nl_rgen_node(g, p->bind ? cn & p->bind : cn);
}

/* Sometimes a process may use a stretch of the machine's CPUs only. */
static void draw_cpus(struct nl_rgen *g, struct proc *p)
{
	int n = g->topo->ncpus, len, a;

	if (p->has_cpus || !nl_rgen_chance(g, 0.12))
		return;
	len = nl_rgen_int(g, 2, n / 2 > 2 ? n / 2 : 2);
	a = nl_rgen_int(g, 0, n - len);
	hwloc_bitmap_set_range(p->allow, (unsigned)a, (unsigned)(a + len - 1));
	p->has_cpus = 1;
}

static void draw_overrides(struct nl_rgen *g, struct proc *p)
{
	const struct nl_kind *k = nl_kind_find(kinds[p->kind]);
	int any = 0;

	p->peak_fraction = p->bytes_per_op = p->mlp = p->shared_fraction = -1;
	if (!nl_rgen_chance(g, 0.25))
		return;
	while (!any) {
		if (nl_rgen_chance(g, 0.5) && ++any)
			p->peak_fraction = nl_rgen_real(g, 0.2, 1);
		if (nl_rgen_chance(g, 0.5) && ++any)
			p->bytes_per_op =
				k->bytes_per_op * nl_rgen_real(g, 0.5, 2);
		if (nl_rgen_chance(g, 0.5) && ++any)
			p->mlp = nl_rgen_real(g, 1, 16);
		if (nl_rgen_chance(g, 0.5) && ++any)
			p->shared_fraction = nl_rgen_real(g, 0, 0.6);
	}
}

/*
 * Threads: a total mostly under the machine's CPUs, sometimes exactly
 * its CPUs (or cores), sometimes over; shared out by the CPUs each
 * process may use, and at most 2 (3 when oversubscribing) per such CPU.
 */
static void draw_threads(struct nl_rgen *g, struct proc *ps, int np)
{
	int ncpus = g->topo->ncpus, regime = nl_rgen_int(g, 0, 99), sum = 0;
	double target, w[MAX_PROCS], wsum = 0;

	if (regime < 55)
		target = nl_rgen_real(g, 0.2, 0.9) * ncpus;
	else if (regime < 80)
		target = g->smt > 1 && nl_rgen_chance(g, 0.5) ? g->topo->ncores
							      : ncpus;
	else
		target = nl_rgen_real(g, 1.1, 1.8) * ncpus;
	for (int i = 0; i < np; i++) {
		w[i] = nl_rgen_real(g, 0.5, 1.5) * ps[i].usable;
		wsum += w[i];
	}
	for (int i = 0; i < np; i++) {
		int t = i < np - 1 ? (int)(target * w[i] / wsum + 0.5)
				   : (int)(target + 0.5) - sum;
		int cap = ps[i].usable * (regime >= 80 ? 3 : 2);
		if (cap > NL_MAX_PROC_THREADS)
			cap = NL_MAX_PROC_THREADS;
		ps[i].threads = t < 1 ? 1 : t > cap ? cap : t;
		sum += ps[i].threads;
	}
}

/* Runs of tens of seconds: 30 to 70% of the kind's work, less where the
 * process's CPUs are oversubscribed, more on a faster drawn machine. */
static void draw_work(struct nl_rgen *g, struct proc *ps, int np)
{
	int total = 0;

	for (int i = 0; i < np; i++)
		total += ps[i].threads;
	for (int i = 0; i < np; i++) {
		double load = (double)total / g->topo->ncpus;
		double own = (double)ps[i].threads / ps[i].usable;
		if (own > load)
			load = own;
		ps[i].work_scale = nl_rgen_real(g, 0.3, 0.7) * g->peak_scale /
				   (load > 1 ? load : 1);
	}
}

/* Staggered arrivals: every few seconds, or at random in [0, 8] s. */
static void draw_starts(struct nl_rgen *g, struct proc *ps, int np)
{
	int step = nl_rgen_int(g, 1, 5), regular = nl_rgen_chance(g, 0.5);

	for (int i = 1; i < np; i++)
		ps[i].start_s =
			regular ? i * step : 0.5 * nl_rgen_int(g, 0, 16);
	nl_rgen_say(g, "; staggered starts (%s)",
		    regular ? "every few seconds" : "at random");
}

/* The paper's class c (generate.py's table) on the CPU nodes cn. */
static int paper_procs(struct nl_rgen *g, struct proc *ps, int c,
		       unsigned long long cn)
{
	unsigned long long all = (1ULL << g->nnodes) - 1;
	int ncn = __builtin_popcountll(cn), np = nl_rgen_int(g, 1, 4);

	g->klass = classes[c];
	for (int i = 0; i < np; i++) {
		struct proc *p = &ps[i];
		int here = nl_rgen_nth(cn, i % ncn),
		    next = nl_rgen_nth(cn, (i + 1) % ncn);

		p->kind = paper_mix[i];
		p->threads = np <= ncn ? g->cores : g->cores * ncn / np;
		if (p->threads < 1)
			p->threads = 1;
		p->start_node = -1;
		p->peak_fraction = p->bytes_per_op = p->mlp =
			p->shared_fraction = -1;
		p->bind = c == 3 ? 0 : 1ULL << (c == 1 ? next : here);
		p->mem = c == 2 ? M_INTERLEAVE_LIST : M_MEMBIND;
		p->mem_node = here;
		p->mem_nodes = all;
		p->usable = usable_cpus(g, p);
	}
	nl_rgen_say(g, "; the paper's '%s' class, %d NPB-like process%s",
		    g->klass, np, np > 1 ? "es" : "");
	snprintf(g->tag + strlen(g->tag), sizeof(g->tag) - strlen(g->tag),
		 "-%s-%dp", g->klass, np);
	return np;
}

/* Processes in jobs: each job the CPUs of its share of the CPU nodes. */
static int draw_jobs(struct nl_rgen *g, struct proc *ps, int np,
		     unsigned long long cn)
{
	int ncn = __builtin_popcountll(cn);
	int nj = ncn >= 3 && np >= 3 && nl_rgen_chance(g, 0.3) ? 3 : 2;

	for (int i = 0; i < np; i++) {
		int j = i % nj;
		unsigned long long mine = 0;
		for (int k = j * ncn / nj; k < (j + 1) * ncn / nj; k++)
			mine |= 1ULL << nl_rgen_nth(cn, k);
		set_nodes(g, ps[i].allow, mine);
		ps[i].has_cpus = 1;
		ps[i].job = j + 1;
	}
	nl_rgen_say(g, "; %d jobs on disjoint CPU sets", nj);
	return nj;
}

static int general_procs(struct nl_rgen *g, struct proc *ps,
			 unsigned long long cn)
{
	int r = nl_rgen_int(g, 0, 99);
	int np = r < 15 ? 1 : r < 45 ? 2 : r < 70 ? 3 : r < 90 ? 4 : 5;

	if (np >= 2 && __builtin_popcountll(cn) >= 2 && nl_rgen_chance(g, 0.25))
		draw_jobs(g, ps, np, cn);
	for (int i = 0; i < np; i++) {
		struct proc *p = &ps[i];
		p->kind = nl_rgen_int(g, 0, 3);
		draw_cpus(g, p);
		if (!p->has_cpus)
			hwloc_bitmap_set_range(p->allow, 0, g->topo->ncpus - 1);
		draw_binding(g, p);
		draw_overrides(g, p);
		p->usable = usable_cpus(g, p);
	}
	draw_threads(g, ps, np);
	if (np > 1 && nl_rgen_chance(g, 0.4))
		draw_starts(g, ps, np);
	snprintf(g->tag + strlen(g->tag), sizeof(g->tag) - strlen(g->tag),
		 "-p%d", np);
	return np;
}

static struct json_object *nodes_json(unsigned long long m)
{
	char buf[64];

	if (__builtin_popcountll(m) == 1)
		return json_object_new_int(nl_rgen_nth(m, 0));
	return json_object_new_string(nl_rgen_node_list(m, buf, sizeof(buf)));
}

static void add_num(struct json_object *o, const char *key, double v, int d)
{
	if (v >= 0)
		json_object_object_add(o, key, nl_rgen_num(v, d));
}

/* The memory fields of p, and its words in the description. */
static void mem_json(struct nl_rgen *g, const struct proc *p,
		     struct json_object *o)
{
	static const char *const place[] = {"first-touch", "master",
					    "interleave"};
	char buf[64];

	if (p->mem <= M_INTERLEAVE) {
		if (p->mem != M_FIRST_TOUCH || p->explicit_ft)
			json_object_object_add(
				o, "placement",
				json_object_new_string(place[p->mem]));
		nl_rgen_say(g, " %s", place[p->mem]);
	} else if (p->mem == M_NODE || p->mem == M_BIND) {
		snprintf(buf, sizeof(buf), "%s:%d",
			 p->mem == M_NODE ? "node" : "bind", p->mem_node);
		json_object_object_add(o, "placement",
				       json_object_new_string(buf));
		nl_rgen_say(g, " %s", buf);
	} else {
		const char *key = p->mem == M_MEMBIND	  ? "membind"
				  : p->mem == M_PREFERRED ? "preferred"
							  : "interleave";
		unsigned long long m = p->mem == M_INTERLEAVE_LIST
					       ? p->mem_nodes
					       : 1ULL << p->mem_node;
		json_object_object_add(o, key, nodes_json(m));
		nl_rgen_say(g, " %s=%s", key,
			    nl_rgen_node_list(m, buf, sizeof(buf)));
	}
}

static struct json_object *proc_json(struct nl_rgen *g, const struct proc *p,
				     int i)
{
	const struct nl_kind *k = nl_kind_find(kinds[p->kind]);
	struct json_object *o = json_object_new_object();
	char name[32], buf[64];

	if (!o)
		return NULL;
	snprintf(name, sizeof(name), "%s%d%c", like[p->kind], p->threads,
		 'a' + i);
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "kind", json_object_new_string(k->name));
	json_object_object_add(o, "threads", json_object_new_int(p->threads));
	nl_rgen_say(g, "%s %s %d", i ? "," : "", k->name, p->threads);
	if (p->job) {
		json_object_object_add(o, "job", json_object_new_int(p->job));
		nl_rgen_say(g, " job %d", p->job);
	}
	if (p->start_s > 0) {
		json_object_object_add(o, "start_s",
				       nl_rgen_num(p->start_s, 3));
		nl_rgen_say(g, " @%gs", p->start_s);
	}
	if (p->has_cpus) {
		hwloc_bitmap_t os = hwloc_bitmap_alloc();
		char *list = NULL;
		int c;
		hwloc_bitmap_foreach_begin(c, p->allow)
		{
			if (os)
				hwloc_bitmap_set(os,
						 (unsigned)g->topo->cpu_os[c]);
		}
		hwloc_bitmap_foreach_end();
		if (os && hwloc_bitmap_list_asprintf(&list, os) >= 0)
			json_object_object_add(o, "cpus",
					       json_object_new_string(list));
		nl_rgen_say(g, " cpus=%s", list ? list : "?");
		free(list);
		hwloc_bitmap_free(os);
	}
	if (p->bind) {
		json_object_object_add(o, "cpunodebind", nodes_json(p->bind));
		nl_rgen_say(g, " cpunodebind=%s",
			    nl_rgen_node_list(p->bind, buf, sizeof(buf)));
	}
	mem_json(g, p, o);
	if (p->start_node >= 0) {
		json_object_object_add(o, "start_node",
				       json_object_new_int(p->start_node));
		nl_rgen_say(g, " start_node=%d", p->start_node);
	}
	json_object_object_add(o, "work",
			       nl_rgen_num(k->work_ops * p->work_scale, 3));
	add_num(o, "peak_fraction", p->peak_fraction, 2);
	add_num(o, "bytes_per_op", p->bytes_per_op, 3);
	add_num(o, "mlp", p->mlp, 2);
	add_num(o, "shared_fraction", p->shared_fraction, 2);
	if (p->peak_fraction >= 0 || p->bytes_per_op >= 0 || p->mlp >= 0 ||
	    p->shared_fraction >= 0)
		nl_rgen_say(g, " (kind overridden)");
	return o;
}

int nl_rgen_processes(struct nl_rgen *g, struct json_object *root)
{
	struct proc ps[MAX_PROCS];
	struct json_object *arr = json_object_new_array();
	unsigned long long cn = 0;
	int np, total = 0, rc = 0;

	memset(ps, 0, sizeof(ps));
	for (int i = 0; i < MAX_PROCS; i++) {
		ps[i].allow = hwloc_bitmap_alloc();
		if (!ps[i].allow)
			rc = -ENOMEM;
	}
	if (!arr || rc < 0)
		goto out;
	for (int n = 0; n < g->nnodes; n++)
		if (g->topo->node_ncpus[n] > 0)
			cn |= 1ULL << n;
	if (__builtin_popcountll(cn) >= 2 && nl_rgen_chance(g, 0.2)) {
		for (int i = 0; i < MAX_PROCS; i++)
			hwloc_bitmap_set_range(ps[i].allow, 0,
					       g->topo->ncpus - 1);
		np = paper_procs(g, ps, nl_rgen_int(g, 0, 3), cn);
	} else {
		np = general_procs(g, ps, cn);
	}
	draw_work(g, ps, np);
	for (int i = 0; i < np; i++)
		total += ps[i].threads;
	nl_rgen_say(g, "; %d thread%s on %d CPUs (%s):", total,
		    total > 1 ? "s" : "", g->topo->ncpus,
		    total < g->topo->ncpus    ? "undersubscribed"
		    : total == g->topo->ncpus ? "full"
					      : "oversubscribed");
	for (int i = 0; i < np && rc == 0; i++) {
		struct json_object *o = proc_json(g, &ps[i], i);
		if (!o || json_object_array_add(arr, o) < 0)
			rc = -ENOMEM;
	}
	nl_rgen_say(g, ".");
out:
	for (int i = 0; i < MAX_PROCS; i++)
		hwloc_bitmap_free(ps[i].allow);
	if (rc == 0)
		json_object_object_add(root, "processes", arr);
	else
		json_object_put(arr);
	return rc;
}
