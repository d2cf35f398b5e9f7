/* numalot: the JSON report of a domain (docs/report-format.md). */
#include "engine_priv.h"
#include "version.h"

#include <json-c/json.h>
#include <string.h>

static struct json_object *jint_array(const int *v, int n)
{
	struct json_object *a = json_object_new_array();
	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int(v[i]));
	return a;
}

static struct json_object *jmean(double sum, int n)
{
	return n > 0 ? json_object_new_double(sum / n) : NULL;
}

static struct json_object *counters_json(const struct nl_machine *m,
					 unsigned terms)
{
	static const struct {
		const char *name;
		unsigned bit;
	} fields[] = {
		{"instructions", NL_M_INSTRUCTIONS}, {"fp_ops", NL_M_FP_OPS},
		{"llc_misses", NL_M_LLC_MISSES},     {"latency", NL_M_LATENCY},
		{"task_clock", NL_M_TASK_CLOCK},     {"cpu", NL_M_CPU},
		{"node_access", NL_M_NODE_ACCESS},
	};
	struct json_object *c = json_object_new_object();
	struct json_object *meas = json_object_new_object();
	struct json_object *t = json_object_new_object();

	json_object_object_add(c, "backend",
			       json_object_new_string(m->backend));
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		json_object_object_add(
			meas, fields[i].name,
			json_object_new_boolean(m->measured & fields[i].bit));
	json_object_object_add(c, "measured", meas);
	/* The 3DyRM terms that really entered perf in this run. */
	json_object_object_add(t, "ops_per_s",
			       json_object_new_boolean(terms & NL_T_OPS));
	json_object_object_add(t, "oi",
			       json_object_new_boolean(terms & NL_T_OI));
	json_object_object_add(t, "latency",
			       json_object_new_boolean(terms & NL_T_LATENCY));
	json_object_object_add(t, "cpu_share",
			       json_object_new_boolean(terms & NL_T_CPU_SHARE));
	json_object_object_add(c, "perf_terms", t);
	return c;
}

struct json_object *nl_report_machine(const struct nl_topology *topo)
{
	struct json_object *o = json_object_new_object();
	struct json_object *dist = json_object_new_array();
	int n = topo->nnodes;

	json_object_object_add(o, "topology",
			       json_object_new_string(topo->source));
	json_object_object_add(o, "nodes", json_object_new_int(n));
	json_object_object_add(o, "cpus", json_object_new_int(topo->ncpus));
	json_object_object_add(o, "cpus_per_node",
			       jint_array(topo->node_ncpus, n));
	for (int i = 0; i < n; i++) {
		struct json_object *row = json_object_new_array();
		for (int j = 0; j < n; j++)
			json_object_array_add(
				row,
				json_object_new_int(
					(int)nl_topology_distance(topo, i, j)));
		json_object_array_add(dist, row);
	}
	json_object_object_add(o, "distances", dist);
	/* SMT: the OS CPUs of each core that has more than one (advice.c's
	 * shared-core rule); absent on a machine without. */
	struct json_object *smt = json_object_new_array();
	for (int c = 0; c < topo->ncores; c++) {
		struct json_object *pus = json_object_new_array();
		for (int k = 0; k < topo->ncpus; k++)
			if (topo->cpu_core[k] == c)
				json_object_array_add(
					pus,
					json_object_new_int(topo->cpu_os[k]));
		if (json_object_array_length(pus) > 1)
			json_object_array_add(smt, pus);
		else
			json_object_put(pus);
	}
	if (json_object_array_length(smt))
		json_object_object_add(o, "smt_siblings", smt);
	else
		json_object_put(smt);
	json_object_object_add(o, "distances_source",
			       json_object_new_string(topo->distances_from_os
							      ? "machine"
							      : "default"));
	return o;
}

/* The processes a report covers: all of the domain's (NULL), or these. */
struct pidset {
	const int *pids;
	size_t n;
};

/* ps's pids are sorted (nl_engine_report_pids). */
static int covers(const struct pidset *ps, int pid)
{
	return !ps || bsearch(&pid, ps->pids, ps->n, sizeof(int),
			      nl_engine_cmp_int) != NULL;
}

/* What page placement did for one process (docs/report-format.md). */
static struct json_object *pages_json(const struct nl_page_state *pg,
				      const struct nl_process_info *pi,
				      unsigned measured, int model)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "moved_bytes",
			       json_object_new_double(pg->bytes));
	json_object_object_add(o, "moves", json_object_new_int(pg->moves));
	json_object_object_add(o, "move_wall_s",
			       json_object_new_double(pg->wall_s));
	if (pg->loc_known) {
		json_object_object_add(o, "locality_before",
				       json_object_new_double(pg->loc_before));
		json_object_object_add(o, "locality_after",
				       json_object_new_double(pg->loc_after));
	}
	json_object_object_add(o, "bound_by_its_policy",
			       json_object_new_boolean(pg->refused));
	json_object_object_add(o, "moves_not_paid",
			       json_object_new_int(pg->failed));
	if (!model) {
		json_object_object_add(
			o, "locations_read",
			json_object_new_int64((int64_t)pi->real.pages_reads));
		json_object_object_add(
			o, "locations_unchanged",
			json_object_new_int64((int64_t)pi->real.pages_skipped));
	}
	/* What chose the pages (docs/real-node.md, "Hot pages"). */
	if (pi->real.hot_source[0]) {
		char g[96];
		struct json_object *h = json_object_new_object();
		snprintf(g, sizeof(g),
			 "hot pages first (sampled data addresses: %s), then "
			 "page locations",
			 pi->real.hot_source);
		json_object_object_add(o, "guided_by",
				       json_object_new_string(g));
		json_object_object_add(
			h, "source",
			json_object_new_string(pi->real.hot_source));
		json_object_object_add(
			h, "samples",
			json_object_new_double(pi->real.hot_samples));
		json_object_object_add(
			h, "pages_held",
			json_object_new_double(pi->real.hot_pages));
		json_object_object_add(
			h, "moved_first_bytes",
			json_object_new_double(pi->real.hot_moved_bytes));
		json_object_object_add(o, "hot_pages", h);
	} else {
		json_object_object_add(
			o, "guided_by",
			json_object_new_string(
				model ? "page locations only (the model has "
					"no page addresses)"
				: (measured & NL_M_LATENCY)
					? "page locations only (no address "
					  "samples from this process's "
					  "threads)"
					: "page locations only (no sampled "
					  "data addresses on this machine)"));
	}
	return o;
}

static struct json_object *jdouble_array(const double *v, int n)
{
	struct json_object *a = json_object_new_array();
	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_double(v[i]));
	return a;
}

/* Pages by node at numalot's first and last reading (null: never read). */
static void page_readings_json(struct json_object *o, const struct eprocess *ep,
			       int nnodes)
{
	int have = ep && ep->pages_read;

	json_object_object_add(o, "pages_per_node_first",
			       have ? jdouble_array(ep->pages_first, nnodes)
				    : NULL);
	json_object_object_add(o, "pages_first_s",
			       have ? json_object_new_double(ep->pages_first_s)
				    : NULL);
	json_object_object_add(o, "pages_per_node_last",
			       have ? jdouble_array(ep->pages_last, nnodes)
				    : NULL);
	json_object_object_add(o, "pages_last_s",
			       have ? json_object_new_double(ep->pages_last_s)
				    : NULL);
}

static struct json_object *processes_json(struct nl_engine *e, int domain,
					  const struct pidset *ps)
{
	struct json_object *a = json_object_new_array();
	const struct nl_process_info *p;
	size_t n;
	double now = e->m->ops->now(e->m);

	if (e->m->ops->processes(e->m, &p, &n) < 0)
		return a;
	for (size_t i = 0; i < n; i++) {
		const struct eprocess *ep = nl_engine_proc(e, p[i].pid);
		if (!ep || ep->domain != domain || !covers(ps, p[i].pid))
			continue;
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(p[i].pid));
		json_object_object_add(
			o, "name",
			p[i].name[0] ? json_object_new_string(p[i].name)
				     : NULL);
		if (p[i].pending)
			json_object_object_add(o, "taken_over",
					       json_object_new_boolean(0));
		json_object_object_add(o, "threads",
				       json_object_new_int(p[i].threads_seen));
		json_object_object_add(o, "start_s",
				       json_object_new_double(p[i].start_s));
		if (p[i].end_s >= 0)
			json_object_object_add(
				o, "completion_s",
				json_object_new_double(p[i].end_s));
		else
			json_object_object_add(
				o, "runtime_s",
				json_object_new_double(now - p[i].start_s));
		struct edomain *d = nl_engine_domain(e, domain);
		json_object_object_add(
			o, "placement_limit",
			json_object_new_string(
				d && d->params.keep_bindings
					? "its threads' own CPU bindings "
					  "(keep_bindings=1)"
				: p[i].limit[0] ? p[i].limit
						: "its threads' CPUs when "
						  "taken over"));
		if (e->m->ops->move_pages)
			json_object_object_add(o, "pages",
					       pages_json(&ep->pg, &p[i],
							  e->m->measured,
							  e->m->modelled));
		page_readings_json(o, ep, e->m->topo->nnodes);
		if (p[i].real.let_go[0])
			json_object_object_add(
				o, "let_go",
				json_object_new_string(p[i].real.let_go));
		if (p[i].real.children_unfollowed > 0)
			json_object_object_add(
				o, "children_not_followed",
				json_object_new_int(
					p[i].real.children_unfollowed));
		json_object_array_add(a, o);
	}
	return a;
}

/* Where t's samples found it: [t_s, CPU, node] from each time on
 * (docs/report-format.md); *budget entries left for the report. */
static void cpus_json(struct json_object *o, const struct ethread *t,
		      const struct nl_topology *topo, long *budget,
		      unsigned long *dropped)
{
	if (t->ncpus_seen > *budget) {
		*dropped += (unsigned long)t->ncpus_seen;
		return;
	}
	struct json_object *a = json_object_new_array();
	for (int i = 0; i < t->ncpus_seen; i++) {
		struct json_object *x = json_object_new_array();
		int cpu = t->cpus_seen[i].cpu;
		json_object_array_add(
			x, json_object_new_double(t->cpus_seen[i].t_s));
		json_object_array_add(x,
				      json_object_new_int(topo->cpu_os[cpu]));
		json_object_array_add(x,
				      json_object_new_int(topo->cpu_node[cpu]));
		json_object_array_add(a, x);
	}
	*budget -= t->ncpus_seen;
	json_object_object_add(o, "cpus", a);
	if (t->cpus_thinned)
		json_object_object_add(
			o, "cpus_thinned",
			json_object_new_int64((int64_t)t->cpus_thinned));
}

static struct json_object *threads_json(struct nl_engine *e, int domain,
					const struct pidset *ps, int *pins,
					unsigned long *cpus_dropped)
{
	long budget = NL_MAX_CPUS_LISTED;
	const struct nl_topology *topo = e->m->topo;
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < e->nall; i++) {
		const struct ethread *t = e->all[i];
		struct json_object *o, *nodes;
		if (t->domain != domain || !covers(ps, t->pid))
			continue;
		*pins += t->pins;
		o = json_object_new_object();
		nodes = json_object_new_array();
		for (int k = 0; k < topo->nnodes; k++)
			json_object_array_add(
				nodes,
				json_object_new_double(t->time_on_node[k]));
		json_object_object_add(o, "tid", json_object_new_int(t->tid));
		json_object_object_add(o, "pid", json_object_new_int(t->pid));
		json_object_object_add(
			o, "last_cpu",
			t->cpu >= 0 ? json_object_new_int(topo->cpu_os[t->cpu])
				    : NULL);
		json_object_object_add(o, "time_per_node_s", nodes);
		cpus_json(o, t, topo, &budget, cpus_dropped);
		json_object_object_add(o, "first_seen_s",
				       json_object_new_double(t->first_seen_s));
		/* Alive: seen until now, as far as the report knows. */
		json_object_object_add(
			o, "last_seen_s",
			json_object_new_double(t->alive ? e->m->ops->now(e->m)
							: t->last_seen_s));
		json_object_object_add(o, "migrations",
				       json_object_new_int(t->migrations));
		json_object_object_add(
			o, "periods", json_object_new_int(t->periods_measured));
		json_object_object_add(o, "ops_per_s",
				       jmean(t->sum_ops_per_s, t->n_ops));
		json_object_object_add(o, "oi", jmean(t->sum_oi, t->n_oi));
		json_object_object_add(o, "latency_ns",
				       jmean(t->sum_latency_ns, t->n_latency));
		json_object_object_add(o, "perf",
				       jmean(t->sum_perf, t->periods_measured));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *cpu_json(const struct nl_topology *topo, int cpu)
{
	return cpu >= 0 && cpu < topo->ncpus
		       ? json_object_new_int(topo->cpu_os[cpu])
		       : NULL;
}

static struct json_object *node_json(const struct nl_topology *topo, int cpu)
{
	return cpu >= 0 && cpu < topo->ncpus
		       ? json_object_new_int(topo->cpu_node[cpu])
		       : NULL;
}

static struct json_object *events_json(struct nl_engine *e,
				       const struct edomain *d,
				       const struct pidset *ps,
				       struct nl_engine_summary *sum)
{
	const struct nl_topology *topo = e->m->topo;
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < d->nevents; i++) {
		const struct event *ev = &d->events[i];
		if (!covers(ps, ev->pid) &&
		    (ev->other_pid < 0 || !covers(ps, ev->other_pid)))
			continue;
		sum->migrations += ev->kind == NL_ACT_MIGRATE;
		sum->swaps += ev->kind == NL_ACT_SWAP;
		sum->rollbacks += ev->kind == NL_ACT_ROLLBACK;
		sum->skips += ev->kind == NL_ACT_SKIP;
		sum->releases += ev->kind == NL_ACT_RELEASE;
		sum->stays += ev->kind == NL_ACT_STAY;
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "t_s",
				       json_object_new_double(ev->t_s));
		json_object_object_add(
			o, "kind",
			json_object_new_string(nl_action_name(ev->kind)));
		if (ev->kind == NL_ACT_PAGES) {
			/* A process's pages: from/to are nodes. */
			json_object_object_add(o, "pid",
					       json_object_new_int(ev->pid));
			if (ev->from_cpu >= 0)
				json_object_object_add(
					o, "from_node",
					json_object_new_int(ev->from_cpu));
			if (ev->to_cpu >= 0)
				json_object_object_add(
					o, "to_node",
					json_object_new_int(ev->to_cpu));
			json_object_object_add(
				o, "bytes", json_object_new_double(ev->bytes));
			json_object_object_add(
				o, "reason",
				json_object_new_string(ev->reason));
			json_object_array_add(a, o);
			continue;
		}
		json_object_object_add(o, "tid", json_object_new_int(ev->tid));
		if (ev->other_tid >= 0)
			json_object_object_add(
				o, "other_tid",
				json_object_new_int(ev->other_tid));
		json_object_object_add(o, "from_cpu",
				       cpu_json(topo, ev->from_cpu));
		json_object_object_add(o, "to_cpu", cpu_json(topo, ev->to_cpu));
		json_object_object_add(o, "from_node",
				       node_json(topo, ev->from_cpu));
		json_object_object_add(o, "to_node",
				       node_json(topo, ev->to_cpu));
		if (ev->total_tickets > 0) {
			json_object_object_add(
				o, "tickets",
				json_object_new_double(ev->tickets));
			json_object_object_add(
				o, "total_tickets",
				json_object_new_double(ev->total_tickets));
		}
		json_object_object_add(o, "reason",
				       json_object_new_string(ev->reason));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *build(struct nl_engine *e, int domain,
				 const struct pidset *ps)
{
	struct edomain *d = nl_engine_domain(e, domain);
	struct json_object *r, *pol, *sum;
	struct nl_engine_summary mine = {0};

	if (!d)
		return NULL;
	/* Ends noted since the last period count against the cap too. */
	nl_engine_forget_ended_procs(e);
	r = json_object_new_object();
	pol = json_object_new_object();
	json_object_object_add(r, "numalot",
			       json_object_new_string(NUMALOT_VERSION));
	json_object_object_add(pol, "name",
			       json_object_new_string(nl_policy_name(d->kind)));
	json_object_object_add(pol, "params",
			       nl_policy_params_json(&d->params));
	json_object_object_add(r, "policy", pol);
	json_object_object_add(r, "domain", json_object_new_string(d->name));
	json_object_object_add(r, "counters",
			       counters_json(e->m, d->terms_seen));
	json_object_object_add(r, "machine", nl_report_machine(e->m->topo));
	json_object_object_add(r, "processes", processes_json(e, domain, ps));
	unsigned long cpus_dropped = 0;
	json_object_object_add(
		r, "threads",
		threads_json(e, domain, ps, &mine.pins, &cpus_dropped));
	json_object_object_add(r, "events", events_json(e, d, ps, &mine));
	/* A whole domain's counts are the journal's own; a part's are
	 * counted from its events (a swap with another part counts in both). */
	if (!ps)
		mine = d->sum;
	sum = json_object_new_object();
	json_object_object_add(sum, "periods",
			       json_object_new_int(d->sum.periods));
	json_object_object_add(sum, "migrations",
			       json_object_new_int(mine.migrations));
	json_object_object_add(sum, "swaps", json_object_new_int(mine.swaps));
	json_object_object_add(sum, "rollbacks",
			       json_object_new_int(mine.rollbacks));
	json_object_object_add(sum, "skips", json_object_new_int(mine.skips));
	json_object_object_add(sum, "pins", json_object_new_int(mine.pins));
	json_object_object_add(sum, "releases",
			       json_object_new_int(mine.releases));
	json_object_object_add(sum, "stays", json_object_new_int(mine.stays));
	json_object_object_add(
		sum, "events_dropped",
		json_object_new_int64((int64_t)d->events_dropped));
	json_object_object_add(
		sum, "threads_dropped",
		json_object_new_int64((int64_t)d->threads_dropped));
	json_object_object_add(
		sum, "processes_dropped",
		json_object_new_int64((int64_t)d->procs_dropped));
	json_object_object_add(sum, "cpus_dropped",
			       json_object_new_int64((int64_t)cpus_dropped));
	json_object_object_add(
		sum, "duration_s",
		json_object_new_double(e->m->ops->now(e->m) - d->first_s));
	json_object_object_add(r, "summary", sum);
	return r;
}

struct json_object *nl_engine_report(struct nl_engine *e, int domain)
{
	return build(e, domain, NULL);
}

struct json_object *nl_engine_report_pids(struct nl_engine *e, int domain,
					  const int *pids, size_t npids)
{
	int *sorted = malloc(sizeof(int) * (npids + 1));
	if (!sorted)
		return NULL;
	memcpy(sorted, pids, sizeof(int) * npids);
	qsort(sorted, npids, sizeof(int), nl_engine_cmp_int);
	struct pidset ps = {sorted, npids};
	struct json_object *r = build(e, domain, &ps);
	free(sorted);
	return r;
}
