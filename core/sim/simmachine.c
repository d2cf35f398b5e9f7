/*
 * numalot: the simulated NUMA node behind the engine's machine interface
 * (machine.h). The physics is model.c; this file adds what a real node's
 * samplers would show: counter noise, thread and process lists, and which
 * processes are managed (all of them, or those added, as on an agent's
 * node).
 */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "machine.h"
#include "scenario.h"
#include "util.h"

/* The machine's view of one process of the model. */
struct sim_proc {
	int managed; /* listed by processes(), its threads by threads() */
	int job;
	uid_t uid; /* its owner: root unless nl_sim_set_owner says */
	int ppid;
};

struct sim {
	struct nl_machine m;
	struct nl_model *model;
	struct nl_thread_info *tinfo;  /* [model->nthreads] */
	struct nl_process_info *pinfo; /* [model->nprocs] */
	struct sim_proc *procs;	       /* [model->nprocs] */
	enum nl_sim_counters counters; /* what its samples show */
	struct json_object *trace;     /* its timeline (not owned), or NULL */
	double trace_s, trace_next;
};

static const struct nl_machine_ops sim_ops;

static struct sim *sim_of(struct nl_machine *m)
{
	return m->priv;
}

static int sim_threads(struct nl_machine *m, const struct nl_thread_info **out,
		       size_t *n)
{
	struct sim *s = sim_of(m);
	struct nl_model *md = s->model;
	size_t k = 0;

	/* Model threads are stored in tid order already. */
	for (int x = 0; x < md->nthreads; x++) {
		const struct nl_model_thread *t = &md->threads[x];
		struct nl_thread_info *ti = &s->tinfo[k];

		if (t->state != NL_T_RUNNING || !s->procs[t->proc].managed)
			continue;
		ti->tid = t->tid;
		ti->pid = t->pid;
		ti->start_time = (unsigned long long)llround(t->start_s * 1e9);
		ti->cpu = t->cpu;
		ti->allowed = t->allowed;
		ti->affinity = t->affinity;
		k++;
	}
	*out = s->tinfo;
	*n = k;
	return 0;
}

static int sim_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	struct sim *s = sim_of(m);
	struct nl_model *md = s->model;
	struct nl_observe_params op = {md->p.noise,
				       md->p.latency_sample_period};
	int rc = nl_model_take_sample(md, tid, out);

	if (rc < 0)
		return rc;
	/* What the backend would show, never the physics; task-clock and
	 * time are the kernel's exact accounting. */
	nl_observe(s->counters, &op, &nl_model_thread(md, tid)->noise_rng,
		   md->topo->nnodes, out);
	return 0;
}

static int sim_place(struct nl_machine *m, int tid, int cpu)
{
	return nl_model_place(sim_of(m)->model, tid, cpu);
}

static int sim_release(struct nl_machine *m, int tid)
{
	return nl_model_release(sim_of(m)->model, tid);
}

/*
 * A timeline sample: each running process's pages by node, its threads'
 * nodes, and its locality as numalot's report measures it (the sum over
 * nodes of min(its share of the pages there, its share of the threads
 * there), docs/report-format.md); the pages the OS migrated and numalot
 * moved so far. Read from the model itself: the engine may hold what
 * threads() and processes() handed out.
 */
static void trace_sample(struct sim *s)
{
	struct nl_model *md = s->model;
	int n = md->topo->nnodes;
	struct json_object *o = json_object_new_object();
	struct json_object *procs = json_object_new_array();

	json_object_object_add(o, "t",
			       json_object_new_double(nl_model_now(md)));
	json_object_object_add(
		o, "pages_migrated_bytes",
		json_object_new_double(md->pages_migrated_bytes));
	json_object_object_add(o, "pages_moved_bytes",
			       json_object_new_double(md->pages_moved_bytes));
	for (int i = 0; i < md->nprocs; i++) {
		const struct nl_model_proc *pr = &md->procs[i];
		double pages[NL_MAX_NODES] = {0}, on[NL_MAX_NODES] = {0};
		double all = 0, threads = 0, loc = 0;
		struct json_object *p, *pn, *tn;

		if (!pr->started || pr->done ||
		    nl_model_node_pages(md, nl_sim_pid(i), pages) < 0)
			continue;
		p = json_object_new_object();
		pn = json_object_new_array();
		tn = json_object_new_array();
		for (int x = 0; x < md->nthreads; x++) {
			const struct nl_model_thread *t = &md->threads[x];
			int node;
			if (t->proc != i || t->state != NL_T_RUNNING ||
			    t->cpu < 0)
				continue;
			node = nl_model_node_of(md, t->cpu);
			on[node]++;
			threads++;
			json_object_array_add(tn, json_object_new_int(node));
		}
		for (int k = 0; k < n; k++) {
			all += pages[k];
			json_object_array_add(pn,
					      json_object_new_double(pages[k]));
		}
		for (int k = 0; k < n && all > 0 && threads > 0; k++)
			loc += fmin(pages[k] / all, on[k] / threads);
		json_object_object_add(p, "pid",
				       json_object_new_int(nl_sim_pid(i)));
		json_object_object_add(p, "locality",
				       json_object_new_double(loc));
		json_object_object_add(p, "pages_per_node", pn);
		json_object_object_add(p, "thread_nodes", tn);
		json_object_array_add(procs, p);
	}
	json_object_object_add(o, "processes", procs);
	json_object_array_add(s->trace, o);
}

/*
 * Whole ticks until at least seconds have passed (so any wait > 0 makes
 * progress), stopping early when everything is done or the scenario's
 * duration cap is reached; a timeline sample at each trace_s it passes.
 */
static int sim_wait(struct nl_machine *m, double seconds)
{
	struct sim *s = sim_of(m);
	struct nl_model *md = s->model;
	double end;

	if (!(seconds >= 0) || isinf(seconds))
		return -EINVAL;
	end = nl_model_now(md) + seconds - md->p.tick_s * 1e-6;
	while (nl_model_active(md) && nl_model_now(md) < end) {
		nl_model_tick(md);
		if (s->trace &&
		    nl_model_now(md) >= s->trace_next - md->p.tick_s * 1e-6) {
			trace_sample(s);
			s->trace_next += s->trace_s;
		}
	}
	return nl_model_active(md);
}

static double sim_now(struct nl_machine *m)
{
	return nl_model_now(sim_of(m)->model);
}

static int sim_processes(struct nl_machine *m,
			 const struct nl_process_info **out, size_t *n)
{
	struct sim *s = sim_of(m);
	struct nl_model *md = s->model;
	size_t k = 0;

	for (int i = 0; i < md->nprocs; i++) {
		const struct nl_model_proc *pr = &md->procs[i];
		struct nl_process_info *pi = &s->pinfo[k];

		if (!s->procs[i].managed)
			continue;
		k++;
		pi->pid = nl_sim_pid(i);
		pi->job = s->procs[i].job;
		snprintf(pi->name, sizeof(pi->name), "%s", pr->spec.name);
		pi->start_s = pr->started ? pr->start_s : pr->spec.start_s;
		pi->end_s = pr->done ? pr->end_s : -1;
		pi->threads_seen = pr->threads_seen;
		snprintf(pi->limit, sizeof(pi->limit), "%s",
			 pr->spec.limit_binding
				 ? "its own CPU binding (the scenario's limit "
				   "\"binding\": no job's cgroup)"
				 : "the scenario's cpus for the process");
	}
	*out = s->pinfo;
	*n = k;
	return 0;
}

/* A process runs from its start to its end: before and after, there is
 * no such process. */
static int sim_running(struct sim *s, int i)
{
	return i >= 0 && s->model->procs[i].started && !s->model->procs[i].done;
}

static int sim_add_process(struct nl_machine *m, int pid,
			   const struct nl_proc_opts *o, char *err,
			   size_t errlen)
{
	struct sim *s = sim_of(m);
	int i = nl_model_proc_index(s->model, pid);

	if (i >= 0 && s->procs[i].managed)
		return nl_errf(err, errlen, -EEXIST,
			       "process %d is already managed", pid);
	if (!sim_running(s, i))
		return nl_errf(err, errlen, -ESRCH, "no process %d", pid);
	/* There is no exec on the model: a process is taken over at once. */
	if (o->check_uid && s->procs[i].uid != o->uid)
		return nl_errf(err, errlen, -EPERM,
			       "process %d does not belong to uid %u", pid,
			       (unsigned)o->uid);
	s->procs[i].managed = 1;
	s->procs[i].job = o->job;
	return 0;
}

static int sim_forget(struct nl_machine *m, int pid)
{
	struct sim *s = sim_of(m);
	int i = nl_model_proc_index(s->model, pid);

	if (i < 0 || !s->procs[i].managed)
		return -ESRCH;
	s->procs[i].managed = 0;
	return 0;
}

static int sim_owner(struct nl_machine *m, int pid, struct nl_proc_owner *out)
{
	struct sim *s = sim_of(m);
	int i = nl_model_proc_index(s->model, pid);

	if (!sim_running(s, i))
		return -ESRCH;
	out->ppid = s->procs[i].ppid;
	out->uid = s->procs[i].uid;
	out->one_uid = 1;
	return 0;
}

static int sim_mem_bound(struct nl_machine *m, int pid)
{
	struct nl_model *md = sim_of(m)->model;
	int i = nl_model_proc_index(md, pid);
	return i >= 0 && md->procs[i].spec.placement == NL_PLACE_BIND;
}

static int sim_node_pages(struct nl_machine *m, int pid, double *pages)
{
	return nl_model_node_pages(sim_of(m)->model, pid, pages);
}

static int sim_move_pages(struct nl_machine *m, int pid, int from, int to,
			  double max_bytes, int flags, double *moved)
{
	return nl_model_move_pages(sim_of(m)->model, pid, from, to, max_bytes,
				   flags & NL_PAGES_SOFT, moved);
}

static void sim_destroy(struct nl_machine *m)
{
	struct sim *s = sim_of(m);

	nl_model_free(s->model);
	free(s->tinfo);
	free(s->pinfo);
	free(s->procs);
	free(s);
}

static const struct nl_machine_ops sim_ops = {
	.threads = sim_threads,
	.sample = sim_sample,
	.place = sim_place,
	.release = sim_release,
	.wait = sim_wait,
	.now = sim_now,
	.processes = sim_processes,
	.node_pages = sim_node_pages,
	.mem_bound = sim_mem_bound,
	.move_pages = sim_move_pages,
	.add_process = sim_add_process,
	.forget = sim_forget,
	.owner = sim_owner,
	.destroy = sim_destroy,
};

struct nl_topology *nl_sim_topology_dup(const struct nl_topology *src)
{
	struct nl_topology *t = calloc(1, sizeof(*t));
	size_t nc = (size_t)src->ncpus, nn = (size_t)src->nnodes;

	if (!t)
		return NULL;
	*t = *src;
	t->hw = NULL;
	t->cpu_os = malloc(nc * sizeof(int));
	t->cpu_node = malloc(nc * sizeof(int));
	t->cpu_core = malloc(nc * sizeof(int));
	t->node_os = malloc(nn * sizeof(int));
	t->node_ncpus = malloc(nn * sizeof(int));
	t->distance = malloc(nn * nn * sizeof(unsigned));
	t->source = strdup(src->source ? src->source : "");
	if (!t->cpu_os || !t->cpu_node || !t->cpu_core || !t->node_os ||
	    !t->node_ncpus || !t->distance || !t->source ||
	    hwloc_topology_dup(&t->hw, src->hw) < 0) {
		nl_topology_free(t);
		return NULL;
	}
	memcpy(t->cpu_os, src->cpu_os, nc * sizeof(int));
	memcpy(t->cpu_node, src->cpu_node, nc * sizeof(int));
	memcpy(t->cpu_core, src->cpu_core, nc * sizeof(int));
	memcpy(t->node_os, src->node_os, nn * sizeof(int));
	memcpy(t->node_ncpus, src->node_ncpus, nn * sizeof(int));
	memcpy(t->distance, src->distance, nn * nn * sizeof(unsigned));
	return t;
}

int nl_sim_create(const struct nl_scenario *sc, uint64_t seed,
		  struct nl_machine **out, char *err, size_t errlen)
{
	return nl_sim_create_opts(sc, seed, NULL, out, err, errlen);
}

int nl_sim_create_opts(const struct nl_scenario *sc, uint64_t seed,
		       const struct nl_model_opts *o, struct nl_machine **out,
		       char *err, size_t errlen)
{
	struct nl_topology *topo;
	struct sim *s;
	int rc;

	*out = NULL;
	if (!sc || !sc->topo)
		return nl_errf(err, errlen, -EINVAL, "sim: no scenario");
	topo = nl_sim_topology_dup(sc->topo);
	s = calloc(1, sizeof(*s));
	if (!topo || !s) {
		nl_topology_free(topo);
		free(s);
		return nl_errf(err, errlen, -ENOMEM, "sim: out of memory");
	}
	rc = nl_model_create_opts(topo, sc, seed, o, &s->model);
	if (rc < 0) {
		free(s);
		return nl_errf(err, errlen, rc,
			       rc == -ENOMEM ? "sim: out of memory"
					     : "sim: scenario does not fit the "
					       "topology");
	}
	s->tinfo = calloc((size_t)s->model->nthreads + 1, sizeof(*s->tinfo));
	s->pinfo = calloc((size_t)s->model->nprocs + 1, sizeof(*s->pinfo));
	s->procs = calloc((size_t)s->model->nprocs + 1, sizeof(*s->procs));
	if (!s->tinfo || !s->pinfo || !s->procs) {
		nl_model_free(s->model);
		free(s->tinfo);
		free(s->pinfo);
		free(s->procs);
		free(s);
		return nl_errf(err, errlen, -ENOMEM, "sim: out of memory");
	}
	if (o && o->trace && o->trace_s > 0) {
		s->trace = o->trace;
		s->trace_s = s->trace_next = o->trace_s;
	}
	for (int i = 0; i < s->model->nprocs; i++)
		s->procs[i] =
			(struct sim_proc){.managed = !o || !o->unmanaged,
					  .job = s->model->procs[i].spec.job,
					  .ppid = 1};
	s->m.ops = &sim_ops;
	s->m.topo = s->model->topo;
	s->counters = o ? o->counters : NL_SIM_PEBS;
	s->m.backend = nl_sim_counters_backend(s->counters);
	s->m.measured = nl_sim_counters_measured(s->counters);
	s->m.modelled = 1;
	s->m.priv = s;
	*out = &s->m;
	return 0;
}

struct nl_model *nl_sim_model(struct nl_machine *m)
{
	return m && m->ops == &sim_ops ? sim_of(m)->model : NULL;
}

int nl_sim_stats(struct nl_machine *m, struct nl_sim_stats *out, int *cpu)
{
	struct nl_model *md = nl_sim_model(m);

	if (!md)
		return -EINVAL;
	out->nthreads = md->nthreads;
	out->os_moves = md->os_moves;
	out->pages_migrated_bytes = md->pages_migrated_bytes;
	out->pages_moved_bytes = md->pages_moved_bytes;
	for (int x = 0; cpu && x < md->nthreads; x++)
		cpu[x] = md->threads[x].cpu;
	return 0;
}

int nl_sim_set_owner(struct nl_machine *m, int pid, uid_t uid, int ppid)
{
	struct nl_model *md = nl_sim_model(m);
	int i = md ? nl_model_proc_index(md, pid) : -1;

	if (i < 0)
		return md ? -ESRCH : -EINVAL;
	sim_of(m)->procs[i].uid = uid;
	sim_of(m)->procs[i].ppid = ppid;
	return 0;
}

int nl_sim_set_os_mode(struct nl_machine *m, enum nl_os_mode mode)
{
	struct nl_model *md = nl_sim_model(m);

	if (!md || !nl_os_mode_name(mode))
		return -EINVAL;
	md->os_mode = mode;
	return 0;
}
