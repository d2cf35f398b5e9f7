/*
 * numalot: the machine interface on a real node: threads from /proc,
 * counters from perf_event / PAPI, placement through hwloc thread binding.
 */
#include "real_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

/* numa_maps can be long: read it at most this often per process. */
#define PAGES_REFRESH_S 5.0
#define WAIT_SLICE_S 0.05

static struct rthread *find(struct real *r, pid_t tid)
{
	size_t lo = 0, hi = r->nth;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->th[mid].tid == tid)
			return &r->th[mid];
		if (r->th[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void to_dense(const struct nl_topology *t, hwloc_const_bitmap_t os,
		     hwloc_bitmap_t dense)
{
	int id;
	hwloc_bitmap_zero(dense);
	hwloc_bitmap_foreach_begin(id, os)
	{
		int c = nl_topology_cpu_from_os(t, id);
		if (c >= 0)
			hwloc_bitmap_set(dense, (unsigned)c);
	}
	hwloc_bitmap_foreach_end();
}

void nl_real_thread_drop(struct rthread *t)
{
	nl_counters_close(t->ctr);
	hwloc_bitmap_free(t->orig_os);
	hwloc_bitmap_free(t->allowed);
	hwloc_bitmap_free(t->affinity);
}

/* A thread seen for the first time: its limit, counters, affinity. */
static int thread_init(struct real *r, struct rproc *p, struct rthread *t,
		       pid_t tid, const struct nl_task_stat *st)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = p->info.pid;
	t->start = st->starttime;
	t->orig_os = hwloc_bitmap_alloc();
	t->allowed = hwloc_bitmap_alloc();
	t->affinity = hwloc_bitmap_alloc();
	if (!t->orig_os || !t->allowed || !t->affinity)
		return -ENOMEM;
	if (hwloc_get_proc_cpubind(r->live, tid, t->orig_os,
				   HWLOC_CPUBIND_THREAD) < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	/* Born from a thread numalot had bound: it inherited that binding,
	 * not a limit of its own. Its limit is the process's. */
	if (hwloc_bitmap_weight(t->orig_os) == 1 &&
	    hwloc_bitmap_isincluded(t->orig_os, p->pinned_os))
		hwloc_bitmap_copy(t->orig_os, p->orig_os);
	to_dense(r->m.topo, t->orig_os, t->affinity);
	/* Its limit is the allocation; its own binding, where it starts. */
	to_dense(r->m.topo, p->alloc_os, t->allowed);
	hwloc_bitmap_or(t->allowed, t->allowed, t->affinity);
	t->ctr_err = nl_counters_open(r->o.backend, t->pid, tid, &t->ctr);
	if (t->ctr) /* latency samples by the decision topology's nodes */
		nl_counters_set_node_map(t->ctr, r->m.topo->node_os,
					 r->m.topo->nnodes);
	p->info.threads_seen++;
	return 0;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct rthread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int r_threads(struct nl_machine *m, const struct nl_thread_info **out,
		     size_t *n)
{
	struct real *r = R(m);
	size_t nprocs = r->nprocs;

	for (size_t i = 0; i < r->nth; i++)
		r->th[i].mark = 0;
	nl_real_note_ends(r);
	for (size_t i = 0; r->o.follow_children && i < nprocs; i++)
		if (r->procs[i].info.end_s < 0)
			nl_real_add_children(r, &r->procs[i]);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = &r->procs[i];
		pid_t *tids;
		size_t nt;
		if (p->pending && p->info.end_s < 0)
			nl_real_check_pending(r, p);
		if (p->info.end_s >= 0 || p->pending ||
		    nl_proc_list_tasks(p->info.pid, &tids, &nt) < 0)
			continue;
		for (size_t k = 0; k < nt; k++) {
			struct nl_task_stat st;
			if (nl_proc_read_stat(p->info.pid, tids[k], &st) < 0 ||
			    st.state == 'Z' || st.state == 'X')
				continue;
			if (tids[k] == p->info.pid) /* after exec: its name */
				snprintf(p->info.name, sizeof(p->info.name),
					 "%s", st.comm);
			struct rthread *t = find(r, tids[k]);
			if (t && t->start != st.starttime) {
				/* A reused tid: the old thread is gone. */
				nl_real_thread_drop(t);
				*t = r->th[--r->nth];
				qsort(r->th, r->nth, sizeof(*r->th),
				      cmp_thread);
				t = NULL;
			}
			if (!t) {
				if (r->nth == r->capth) {
					size_t cap =
						r->capth ? r->capth * 2 : 64;
					struct rthread *nt2 = realloc(
						r->th, cap * sizeof(*nt2));
					if (!nt2) {
						free(tids);
						return -ENOMEM;
					}
					r->th = nt2;
					r->capth = cap;
				}
				t = &r->th[r->nth];
				if (thread_init(r, p, t, tids[k], &st) < 0) {
					nl_real_thread_drop(t);
					continue;
				}
				r->nth++;
				qsort(r->th, r->nth, sizeof(*r->th),
				      cmp_thread);
				t = find(r, tids[k]);
			}
			t->cpu = nl_topology_cpu_from_os(m->topo, st.processor);
			t->mark = 1;
		}
		free(tids);
	}
	/* Forget threads that are gone. */
	size_t j = 0;
	for (size_t i = 0; i < r->nth; i++) {
		if (r->th[i].mark)
			r->th[j++] = r->th[i];
		else
			nl_real_thread_drop(&r->th[i]);
	}
	r->nth = j;
	if (r->nth > r->capout) {
		struct nl_thread_info *o = realloc(r->out, r->nth * sizeof(*o));
		if (!o)
			return -ENOMEM;
		r->out = o;
		r->capout = r->nth;
	}
	for (size_t i = 0; i < r->nth; i++)
		r->out[i] = (struct nl_thread_info){
			.tid = r->th[i].tid,
			.pid = r->th[i].pid,
			.start_time = r->th[i].start,
			.cpu = r->th[i].cpu,
			.allowed = r->th[i].allowed,
			.affinity = r->th[i].affinity,
		};
	*out = r->out;
	*n = r->nth;
	return 0;
}

static int r_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	struct rthread *t = find(R(m), tid);
	int rc;
	if (!t)
		return -ESRCH;
	if (!t->ctr)
		return t->ctr_err ? t->ctr_err : -ENODATA;
	rc = nl_counters_read(t->ctr, out);
	if (rc < 0)
		return rc;
	out->cpu = t->cpu;
	if (t->cpu >= 0)
		out->measured |= NL_M_CPU;
	return 0;
}

static int bind(struct real *r, pid_t tid, hwloc_const_bitmap_t os)
{
	if (hwloc_set_proc_cpubind(r->live, tid, os, HWLOC_CPUBIND_THREAD) < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	return 0;
}

static int r_place(struct nl_machine *m, int tid, int cpu)
{
	struct real *r = R(m);
	struct rthread *t = find(r, tid);
	hwloc_bitmap_t os;
	int rc;

	if (!t)
		return -ESRCH;
	if (cpu < 0 || cpu >= m->topo->ncpus ||
	    !hwloc_bitmap_isset(t->allowed, (unsigned)cpu))
		return -EINVAL;
	os = hwloc_bitmap_alloc();
	if (!os)
		return -ENOMEM;
	hwloc_bitmap_only(os, (unsigned)m->topo->cpu_os[cpu]);
	rc = bind(r, tid, os);
	if (rc == 0) {
		struct rproc *p = proc_of(r, t->pid);
		t->placed = 1;
		t->cpu = cpu;
		if (p)
			hwloc_bitmap_set(p->pinned_os,
					 (unsigned)m->topo->cpu_os[cpu]);
	}
	hwloc_bitmap_free(os);
	return rc;
}

void nl_real_release_pid(struct real *r, pid_t pid)
{
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].pid == pid && r->th[i].placed &&
		    bind(r, r->th[i].tid, r->th[i].orig_os) == 0)
			r->th[i].placed = 0;
}

static int r_release(struct nl_machine *m, int tid)
{
	struct real *r = R(m);
	struct rthread *t = find(r, tid);
	int rc;
	if (!t)
		return -ESRCH;
	if (!t->placed)
		return 0;
	rc = bind(r, tid, t->orig_os);
	if (rc == 0)
		t->placed = 0;
	return rc;
}

static int r_wait(struct nl_machine *m, double seconds)
{
	struct real *r = R(m);
	double end = nl_mono_s() + seconds;

	for (;;) {
		int running = 0;
		if (r->o.stop && *r->o.stop)
			return 0;
		nl_real_note_ends(r);
		for (size_t i = 0; i < r->nprocs; i++)
			running |= r->procs[i].info.end_s < 0;
		if (!running)
			return 0;
		double left = end - nl_mono_s();
		if (left <= 0)
			return 1;
		if (left > WAIT_SLICE_S)
			left = WAIT_SLICE_S;
		struct timespec ts = {(time_t)left,
				      (long)((left - (time_t)left) * 1e9)};
		nanosleep(&ts, NULL); /* a signal just ends the slice early */
	}
}

static int r_processes(struct nl_machine *m, const struct nl_process_info **out,
		       size_t *n)
{
	struct real *r = R(m);
	nl_real_note_ends(r);
	/* The infos live inside rproc: hand out a packed copy. */
	struct nl_process_info *c =
		realloc(r->infos, (r->nprocs + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	r->infos = c;
	for (size_t i = 0; i < r->nprocs; i++)
		c[i] = r->procs[i].info;
	*out = c;
	*n = r->nprocs;
	return 0;
}

static int r_node_pages(struct nl_machine *m, int pid, double *pages)
{
	struct real *r = R(m);
	struct rproc *p = proc_of(r, pid);
	double now = r_now(m);
	const struct nl_topology *t = m->topo;

	if (!p)
		return -ESRCH;
	if (!p->have_pages || now - p->pages_t > PAGES_REFRESH_S) {
		double os[NL_MAX_NODES * 4] = {0};
		int rc = nl_proc_read_numa_maps(pid, os, NL_MAX_NODES * 4);
		if (rc < 0)
			return rc;
		for (int n = 0; n < t->nnodes; n++)
			p->pages[n] = t->node_os[n] < NL_MAX_NODES * 4
					      ? os[t->node_os[n]]
					      : 0;
		p->pages_t = now;
		p->have_pages = 1;
	}
	memcpy(pages, p->pages, sizeof(double) * (size_t)t->nnodes);
	return 0;
}

static void r_destroy(struct nl_machine *m)
{
	struct real *r = R(m);
	for (size_t i = 0; i < r->nth; i++)
		nl_real_thread_drop(&r->th[i]);
	for (size_t i = 0; i < r->nprocs; i++) {
		hwloc_bitmap_free(r->procs[i].orig_os);
		hwloc_bitmap_free(r->procs[i].pinned_os);
		hwloc_bitmap_free(r->procs[i].alloc_os);
	}
	free(r->th);
	free(r->procs);
	free(r->out);
	free(r->infos);
	if (r->live)
		hwloc_topology_destroy(r->live);
	free(r);
}

static const struct nl_machine_ops real_ops = {
	.threads = r_threads,
	.sample = r_sample,
	.place = r_place,
	.release = r_release,
	.wait = r_wait,
	.now = r_now,
	.processes = r_processes,
	.node_pages = r_node_pages,
	.move_pages = nl_real_move_pages,
	.forget = nl_real_forget,
	.destroy = r_destroy,
};

/* Every CPU of the decision topology must be a CPU of this machine. */
static int check_cpus(struct real *r, char *err, size_t errlen)
{
	hwloc_const_bitmap_t here = hwloc_topology_get_complete_cpuset(r->live);
	for (int c = 0; c < r->m.topo->ncpus; c++)
		if (!hwloc_bitmap_isset(here, (unsigned)r->m.topo->cpu_os[c])) {
			nl_errf(err, errlen, 0,
				"topology %s names CPU %d, which this machine "
				"does "
				"not have",
				r->m.topo->source, r->m.topo->cpu_os[c]);
			return -EINVAL;
		}
	return 0;
}

int nl_real_create(const struct nl_topology *topo,
		   const struct nl_real_options *o, struct nl_machine **out,
		   char *err, size_t errlen)
{
	struct real *r = calloc(1, sizeof(*r));
	struct rlimit rl;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (!r)
		return -ENOMEM;
	r->o = *o;
	/* A backend is used only if it works here, found by trying. */
	struct nl_probe p;
	nl_counters_probe(0, &p);
	if (r->o.backend != NL_BACKEND_AUTO &&
	    !p.backend[r->o.backend].available) {
		if (!o->fallback) {
			nl_errf(err, errlen, 0,
				"counter backend %s does not work here: %s "
				"(numalot info says more)",
				nl_backend_name(r->o.backend),
				p.backend[r->o.backend].reason);
			free(r);
			return -ENOTSUP;
		}
		nl_errf(err, errlen, 0,
			"counter backend %s does not work here (%s): using %s",
			nl_backend_name(r->o.backend),
			p.backend[r->o.backend].reason,
			nl_backend_name(p.best));
		r->o.backend = p.best;
	}
	if (r->o.backend == NL_BACKEND_AUTO)
		r->o.backend = p.best;
	r->m = (struct nl_machine){.ops = &real_ops,
				   .topo = topo,
				   .backend = nl_backend_name(r->o.backend),
				   .measured =
					   nl_counters_measured(r->o.backend),
				   .priv = r};
	if (hwloc_topology_init(&r->live) < 0 ||
	    hwloc_topology_load(r->live) < 0) {
		nl_errf(err, errlen, 0, "cannot read this machine's topology");
		r_destroy(&r->m);
		return -EIO;
	}
	rc = check_cpus(r, err, errlen);
	if (rc < 0) {
		r_destroy(&r->m);
		return rc;
	}
	/* One perf_event file per counter per thread: raise the limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	r->t0 = nl_mono_s();
	*out = &r->m;
	return 0;
}

enum nl_backend nl_real_backend(const struct nl_machine *m)
{
	return ((const struct real *)m->priv)->o.backend;
}
