/*
 * numalot: the machine interface on a real node: threads from /proc,
 * counters from perf_event / PAPI, placement through hwloc thread binding.
 */
#include "real_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

/* numa_maps can be long: read it at most this often per process. */
#define PAGES_REFRESH_S 5.0
#define PAGES_YOUNG_S 20.0
/* A due look this long after the last reading reads it, whatever its
 * faults and resident size say. */
#define PAGES_STILL_MAX_S 30.0
/* A process's numa_maps is read at most once in (its mappings / this)
 * seconds: a reading costs about 1.3-3 us a mapping here, the more while
 * the process's threads run (0.7-1.4 ms for the 535 mappings of a process
 * of 256 threads, a stack each), so that it takes at most about 0.07-0.15%
 * of a CPU. Not less: a process of a few hundred mappings (its libraries)
 * would have its young readings, every 1-2 s, spaced out too. */
#define PAGES_MAPPINGS_PER_S 500.0
/* A process of many threads has its numa_maps read at most once in (its
 * threads / this) seconds: its stacks (a mapping and a guard page each)
 * make the reading costly, and while its threads start or end they are
 * most of what changes its faults and resident size, read again each
 * time (256 threads: every 2.6 s, 0.7-1.4 ms a reading here); never
 * less often than PAGES_REFRESH_S for that. */
#define PAGES_THREADS_PER_S 100.0
/* Two numa_maps readings within this share of each other are the same. */
#define PAGES_SAME 0.01
#define WAIT_SLICE_S 0.05

struct rthread *nl_real_find(struct real *r, pid_t tid)
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

static struct rthread *find(struct real *r, pid_t tid)
{
	return nl_real_find(r, tid);
}

void nl_real_to_dense(const struct nl_topology *t, hwloc_const_bitmap_t os,
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

/* A thread's share of the descriptor budget, by user. */
static struct uid_count *uid_slot(struct real *r, uid_t uid, int add)
{
	for (size_t i = 0; i < r->nuids; i++)
		if (r->uids[i].uid == uid)
			return &r->uids[i];
	if (!add)
		return NULL;
	struct uid_count *n = realloc(r->uids, sizeof(*n) * (r->nuids + 1));
	if (!n)
		return NULL;
	r->uids = n;
	r->uids[r->nuids] = (struct uid_count){uid, 0};
	return &r->uids[r->nuids++];
}

void nl_real_thread_drop(struct real *r, struct rthread *t)
{
	if (t->counted) {
		struct uid_count *u = uid_slot(r, t->uid, 0);
		if (u && u->n)
			u->n--;
		if (r->counted)
			r->counted--;
		t->counted = 0;
	}
	nl_counters_close(t->ctr);
	t->ctr = NULL;
	if (t->stat_fd > 0)
		close(t->stat_fd);
	t->stat_fd = -1;
	hwloc_bitmap_free(t->orig_os);
	hwloc_bitmap_free(t->allowed);
	hwloc_bitmap_free(t->affinity);
	hwloc_bitmap_free(t->seen_os);
	t->affinity = t->seen_os = NULL;
	t->orig_os = t->allowed = NULL;
}

/*
 * Is tid still the thread we know (same process, same start time)? Asked
 * immediately before every bind: a tid reused by another thread, maybe
 * another user's process, must never get our affinity.
 */
static int same_thread(const struct rthread *t)
{
	struct nl_task_stat st;
	int rc = nl_proc_read_stat(t->pid, t->tid, &st);
	if (rc < 0)
		return rc == -ESRCH ? -ESRCH : rc;
	if (st.starttime != t->start || st.state == 'Z' || st.state == 'X')
		return -ESRCH;
	return 0;
}

/* Counters for this thread if the budget allows, else /proc only. */
static void open_counters(struct real *r, struct rproc *p, struct rthread *t)
{
	uid_t uid = p->o.check_uid ? p->o.uid : 0;
	struct uid_count *u = uid_slot(r, uid, 1);

	t->uid = uid;
	if (r->counted >= r->max_counted || !u ||
	    (r->max_counted_per_uid && u->n >= r->max_counted_per_uid)) {
		t->ctr_err = -EMFILE; /* measured from /proc */
		return;
	}
	t->ctr_err = nl_counters_open(r->o.backend, t->pid, t->tid, &t->ctr);
	if (!t->ctr)
		return;
	t->counted = 1;
	r->counted++;
	u->n++;
	/* Its stat file too, within the same budget (one more descriptor). */
	int fd = nl_proc_open_stat(t->pid, t->tid);
	t->stat_fd = fd >= 0 ? fd : -1;
	/* latency samples by the decision topology's nodes */
	nl_counters_set_node_map(t->ctr, r->m.topo->node_os, r->m.topo->nnodes);
}

/*
 * The hot-page table of t's process when t samples data addresses (made
 * on the first such thread), else NULL; its figures into the process's
 * info (docs/real-node.md, "Hot pages").
 */
static struct nl_hot *hot_of(struct real *r, const struct rthread *t)
{
	const char *src = nl_counters_sampler(t->ctr);
	struct rproc *p;

	if (!src || !(p = proc_of(r, t->pid)))
		return NULL;
	if (!p->hot) {
		p->hot = nl_hot_new();
		if (!p->hot)
			return NULL;
		snprintf(p->info.real.hot_source,
			 sizeof(p->info.real.hot_source), "%s", src);
	}
	p->info.real.hot_pages = (double)p->hot->used;
	p->info.real.hot_samples = (double)p->hot->samples;
	return p->hot;
}

static int thread_init(struct real *r, struct rproc *p, struct rthread *t,
		       pid_t tid, const struct nl_task_stat *st);

/* A thread seen for the first time: its limit, counters, affinity (the
 * caller keeps the CPU time it takes apart: nl_real_takeover_s). */
__attribute__((noinline)) int nl_real_thread_init(struct real *r,
						  struct rproc *p,
						  struct rthread *t, pid_t tid,
						  const struct nl_task_stat *st)
{
	r->taken_over++;
	return thread_init(r, p, t, tid, st);
}

static int thread_init(struct real *r, struct rproc *p, struct rthread *t,
		       pid_t tid, const struct nl_task_stat *st)
{
	memset(t, 0, sizeof(*t));
	t->stat_fd = -1;
	t->stat_pid = -1;
	t->tid = tid;
	t->turn = (unsigned)tid; /* threads' turns spread over refreshes */
	t->pid = p->info.pid;
	t->start = st->starttime;
	t->orig_os = hwloc_bitmap_alloc();
	t->allowed = hwloc_bitmap_alloc();
	t->affinity = hwloc_bitmap_alloc();
	t->seen_os = hwloc_bitmap_alloc();
	if (!t->orig_os || !t->allowed || !t->affinity || !t->seen_os)
		return -ENOMEM;
	if (hwloc_get_proc_cpubind(r->live, tid, t->orig_os,
				   HWLOC_CPUBIND_THREAD) < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	hwloc_bitmap_copy(t->seen_os, t->orig_os);
	if (tid == p->info.pid)
		nl_real_own_limit(p, t->orig_os);
	/* Born from a thread numalot had bound: it inherited that binding,
	 * not a limit of its own. Its limit is the process's. */
	if (hwloc_bitmap_weight(t->orig_os) == 1 &&
	    hwloc_bitmap_isincluded(t->orig_os, p->pinned_os))
		hwloc_bitmap_copy(t->orig_os, p->orig_os);
	nl_real_to_dense(r->m.topo, t->orig_os, t->affinity);
	/* Its limit is the allocation; its own binding, where it starts. */
	nl_real_to_dense(r->m.topo, p->alloc_os, t->allowed);
	hwloc_bitmap_or(t->allowed, t->allowed, t->affinity);
	open_counters(r, p, t);
	t->ticks = t->ticks_prev = st->utime_ticks + st->stime_ticks;
	t->ticks_t_prev = nl_mono_s();
	p->info.threads_seen++;
	return 0;
}

static int r_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	struct rthread *t = find(R(m), tid);
	int rc;
	if (!t)
		return -ESRCH;
	/* None for an idle one the refresh left unread (refresh.c,
	 * idle_in_turn): the next sample spans its time. */
	if (t->ticks_stale)
		return -ENODATA;
	if (!t->ctr && t->ctr_err == -EMFILE) {
		/* Past the descriptor budget: CPU time from the last refresh's
		 * /proc read (no descriptor of its own, no second read). */
		double now = nl_mono_s();
		memset(out, 0, sizeof(*out));
		out->wall_s = now - t->ticks_t_prev;
		out->task_clock_s = (double)(t->ticks - t->ticks_prev) /
				    (double)sysconf(_SC_CLK_TCK);
		out->measured = NL_M_TASK_CLOCK;
		t->ticks_prev = t->ticks;
		t->ticks_t_prev = now;
		out->cpu = t->cpu;
		if (t->cpu >= 0)
			out->measured |= NL_M_CPU;
		return 0;
	}
	if (!t->ctr)
		return t->ctr_err ? t->ctr_err : -ENODATA;
	rc = nl_counters_read_hot(t->ctr, out, hot_of(R(m), t));
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
	struct rproc *owner = proc_of(r, t->pid);
	if (owner && owner->info.end_s >= 0)
		return -ESRCH; /* ended, or let go of (bindings.c) */
	if ((rc = same_thread(t)) < 0)
		return rc;
	os = hwloc_bitmap_alloc();
	if (!os)
		return -ENOMEM;
	hwloc_bitmap_only(os, (unsigned)m->topo->cpu_os[cpu]);
	rc = bind(r, tid, os);
	if (rc == 0) {
		t->placed = 1;
		t->cpu = cpu;
		hwloc_bitmap_copy(t->seen_os, os);
		if (owner)
			hwloc_bitmap_set(owner->pinned_os,
					 (unsigned)m->topo->cpu_os[cpu]);
	}
	hwloc_bitmap_free(os);
	return rc;
}

void nl_real_release_pid(struct real *r, pid_t pid)
{
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].pid == pid && r->th[i].placed &&
		    same_thread(&r->th[i]) == 0 &&
		    bind(r, r->th[i].tid, r->th[i].orig_os) == 0) {
			r->th[i].placed = 0;
			hwloc_bitmap_copy(r->th[i].seen_os, r->th[i].orig_os);
		}
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
	/* The list the engine releases from can be a period old. */
	rc = same_thread(t);
	if (rc == 0)
		rc = bind(r, tid, t->orig_os);
	if (rc == 0) {
		t->placed = 0;
		hwloc_bitmap_copy(t->seen_os, t->orig_os);
	}
	return rc;
}

/*
 * Sleep until the deadline or until a managed process ends, whichever is
 * first: one wake-up a period (pidfds), not one every WAIT_SLICE_S (which
 * cost more than the period's own work on a virtual machine). Slices are
 * the fallback where pidfds do not tell (no pidfd, a leader that ended
 * before its threads).
 */
static int r_wait(struct nl_machine *m, double seconds)
{
	struct real *r = R(m);
	double end = nl_mono_s() + seconds;
	int use_pidfd = 1;

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
		struct pollfd *pf =
			use_pidfd ? calloc(r->nprocs, sizeof(*pf)) : NULL;
		size_t n = 0;
		for (size_t i = 0; pf && i < r->nprocs; i++) {
			struct rproc *p = &r->procs[i];
			if (p->info.end_s >= 0)
				continue;
			int fd = nl_real_proc_pidfd(p);
			if (fd < 0) { /* none, or ended: slices see it */
				n = 0;
				break;
			}
			pf[n++] = (struct pollfd){fd, POLLIN, 0};
		}
		if (n) {
			int rc = poll(pf, n, (int)(left * 1e3) + 1);
			int readable = 0;
			for (size_t i = 0; rc > 0 && i < n; i++)
				readable |= (pf[i].revents & POLLIN) != 0;
			free(pf);
			if (rc == 0 && end - nl_mono_s() <= 0)
				return 1; /* no end told of: none to look for */
			if (readable) {
				/* An end the kernel told of: noted next round;
				 * if it is not one (a leader gone before its
				 * threads), slices from now on. */
				int before = 0, after = 0;
				for (size_t i = 0; i < r->nprocs; i++)
					before += r->procs[i].info.end_s < 0;
				nl_real_note_ends(r);
				for (size_t i = 0; i < r->nprocs; i++)
					after += r->procs[i].info.end_s < 0;
				if (after == before)
					use_pidfd = 0;
			}
			continue; /* a signal (stop) ends the poll early */
		}
		free(pf);
		use_pidfd = 0;
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
	/* As of the last refresh or wait: ends are noted there, once, not
	 * every time someone asks (docs/architecture.md). */
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

/* Can p's numa_maps reading stand? Pages move only as it faults or its
 * resident size changes, which its stat says in one short read; at most
 * PAGES_STILL_MAX_S old all the same (docs/real-node.md, "Cost"). */
static int still(struct rproc *p, double now)
{
	struct nl_task_stat st;

	if (nl_proc_read_process_stat(p->info.pid, &st) < 0) {
		p->now_faults = p->now_rss = 0;
		return 0;
	}
	p->now_faults = st.faults;
	p->now_rss = st.rss_pages;
	return p->have_pages && now - p->pages_read_t < PAGES_STILL_MAX_S &&
	       st.faults == p->pages_faults &&
	       fabs((double)st.rss_pages - (double)p->pages_rss) <=
		       PAGES_SAME * (double)p->pages_rss;
}

static int r_mem_bound(struct nl_machine *m, int pid)
{
	struct rproc *p = proc_of(R(m), pid);
	return p && p->have_pages && p->bound_share > 0.5;
}

static int r_node_pages(struct nl_machine *m, int pid, double *pages)
{
	struct real *r = R(m);
	struct rproc *p = proc_of(r, pid);
	double now = r_now(m);
	const struct nl_topology *t = m->topo;

	if (!p || p->info.real.let_go[0]) /* left to another placer */
		return -ESRCH;
	/* A young process is still placing its memory: read it every
	 * second for its first PAGES_YOUNG_S seconds (every 2 s while two
	 * readings in a row found it as it was: the read walks every
	 * mapping, thread stacks included), then every PAGES_REFRESH_S. */
	double every = now - p->info.start_s >= PAGES_YOUNG_S ? PAGES_REFRESH_S
		       : p->pages_same			      ? 2.0
							      : 1.0;
	/* A costly read (many mappings: a process of many threads) is made
	 * less often (PAGES_MAPPINGS_PER_S, PAGES_THREADS_PER_S). */
	if (p->pages_maps / PAGES_MAPPINGS_PER_S > every)
		every = p->pages_maps / PAGES_MAPPINGS_PER_S;
	double by_threads = (double)p->nthreads / PAGES_THREADS_PER_S;
	if (by_threads > PAGES_REFRESH_S) /* its first-touch placement */
		by_threads = PAGES_REFRESH_S;
	if (by_threads > every)
		every = by_threads;
	if ((!p->have_pages || now - p->pages_t > every) && still(p, now)) {
		p->pages_t = now; /* as it was: not read */
		p->pages_same = 1;
		p->info.real.pages_skipped++;
	} else if (!p->have_pages || now - p->pages_t > every) {
		double os[NL_MAX_NODES * 4] = {0}, was = 0, diff = 0;
		double before[NL_MAX_NODES], own = 0;
		double c0 = p->info.real.pages_reads ? 0 : nl_thread_cpu_s();
		int rc = nl_proc_read_numa_maps(pid, os, NL_MAX_NODES * 4,
						&p->bound_share, &own);
		if (rc < 0)
			return rc;
		p->pages_maps = rc;
		/* The first reading is part of taking the process over. */
		if (p->info.real.pages_reads == 0)
			r->takeover_s += nl_thread_cpu_s() - c0;
		memcpy(before, p->pages, sizeof(double) * (size_t)t->nnodes);
		for (int n = 0; n < t->nnodes; n++) {
			double v = t->node_os[n] < NL_MAX_NODES * 4
					   ? os[t->node_os[n]]
					   : 0;
			was += p->pages[n];
			diff += fabs(v - p->pages[n]);
			p->pages[n] = v;
		}
		p->pages_same = p->have_pages && diff <= PAGES_SAME * was;
		p->pages_t = now;
		p->pages_read_t = now;
		p->have_pages = 1;
		/* Another placer's hand (docs/real-node.md, "Other placers").
		 */
		if (p->info.real.pages_reads++)
			nl_real_check_pages(
				r, p, before, own,
				(double)(p->now_faults - p->pages_faults));
		else
			p->own_share = own;
		p->pages_faults = p->now_faults;
		p->pages_rss = p->now_rss;
		if (p->info.real.let_go[0])
			return -ESRCH;
	}
	memcpy(pages, p->pages, sizeof(double) * (size_t)t->nnodes);
	return 0;
}

static void r_destroy(struct nl_machine *m)
{
	struct real *r = R(m);
	for (size_t i = 0; i < r->nth; i++)
		nl_real_thread_drop(r, &r->th[i]);
	for (size_t i = 0; i < r->nprocs; i++) {
		if (r->procs[i].pidfd > 0)
			close(r->procs[i].pidfd);
		hwloc_bitmap_free(r->procs[i].orig_os);
		hwloc_bitmap_free(r->procs[i].pinned_os);
		hwloc_bitmap_free(r->procs[i].alloc_os);
		nl_hot_free(r->procs[i].hot);
	}
	free(r->th);
	free(r->procs);
	free(r->out);
	free(r->infos);
	free(r->uids);
	if (r->last_pid_fd >= 0)
		close(r->last_pid_fd);
	if (r->live)
		hwloc_topology_destroy(r->live);
	free(r);
}

static const struct nl_machine_ops real_ops = {
	.threads = nl_real_threads,
	.sample = r_sample,
	.place = r_place,
	.release = r_release,
	.wait = r_wait,
	.now = r_now,
	.processes = r_processes,
	.node_pages = r_node_pages,
	.mem_bound = r_mem_bound,
	.move_pages = nl_real_move_pages,
	.add_process = nl_real_add_process,
	.forget = nl_real_forget,
	.owner = nl_real_owner,
	.destroy = r_destroy,
	.threads_of = nl_real_threads_of,
	.read_ahead = nl_real_read_ahead,
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
	r->last_pid_fd = -1;
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
	/* One perf_event file per counter per thread: raise the limit, and
	 * budget it, so that many threads never take the descriptors the
	 * rest of the program needs (an agent's socket). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	{
		size_t reserve = o->fd_reserve ? o->fd_reserve : 64;
		/* Its counters', and its stat file's one. */
		size_t per = nl_counters_fds(r->o.backend) + 1;
		size_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
					     rl.rlim_cur != RLIM_INFINITY
				     ? (size_t)rl.rlim_cur
				     : 1048576;
		r->max_counted = lim > reserve ? (lim - reserve) / per : 0;
		r->max_counted_per_uid = o->max_counted_per_uid;
	}
	char path[NL_FS_PATH];
	nl_fs_path(path, sizeof(path), "/proc/sys/kernel/ns_last_pid");
	r->last_pid_fd = open(path, O_RDONLY | O_CLOEXEC);
	r->last_pid = r->mark_pid = -1;
	r->mono = nl_mono_s;
	r->t0 = nl_mono_s();
	*out = &r->m;
	return 0;
}

/* The real node behind m, NULL when m is another machine. */
static struct real *real_of(const struct nl_machine *m)
{
	return m && m->ops == &real_ops ? m->priv : NULL;
}

int nl_real_budget_of(struct nl_machine *m, int pid, size_t *counted,
		      size_t *uncounted)
{
	struct real *r = real_of(m);
	*counted = *uncounted = 0;
	if (!r)
		return -EINVAL;
	if (!proc_of(r, pid))
		return -ESRCH;
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].pid == pid) {
			if (r->th[i].ctr)
				(*counted)++;
			else if (r->th[i].ctr_err == -EMFILE)
				(*uncounted)++;
		}
	return 0;
}

void nl_real_budget(struct nl_machine *m, size_t *node, size_t *per_uid)
{
	struct real *r = real_of(m);
	*node = r ? r->max_counted : 0;
	*per_uid = r ? r->max_counted_per_uid : 0;
}

double nl_real_release_s(struct nl_machine *m, size_t *threads)
{
	struct real *r = real_of(m);
	if (threads)
		*threads = r ? r->released : 0;
	return r ? r->release_s : 0;
}

double nl_real_takeover_s(struct nl_machine *m, size_t *threads)
{
	struct real *r = real_of(m);
	if (threads)
		*threads = r ? r->taken_over : 0;
	return r ? r->takeover_s : 0;
}

size_t nl_real_stat_reads(struct nl_machine *m)
{
	struct real *r = real_of(m);
	return r ? r->stat_reads : 0;
}

size_t nl_real_wakes(struct nl_machine *m)
{
	struct real *r = real_of(m);
	return r ? r->wakes : 0;
}

void nl_real_set_clock(struct nl_machine *m, double (*mono)(void))
{
	struct real *r = real_of(m);
	if (!r || !mono)
		return;
	r->mono = mono;
	r->t0 = mono();
}

void nl_real_set_budget(struct nl_machine *m, size_t node, size_t per_uid)
{
	struct real *r = real_of(m);
	if (!r)
		return;
	if (node < r->max_counted)
		r->max_counted = node;
	r->max_counted_per_uid = per_uid;
}
