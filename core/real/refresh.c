/*
 * numalot: the real node's refresh (realmachine.c's threads, threads_of and
 * read_ahead): which threads the managed processes have, read from /proc
 * and their counters as cheaply as each allows (docs/real-node.md, "Cost"),
 * and the children they started.
 */
#include "real_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

static int cmp_thread(const void *a, const void *b)
{
	const struct rthread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static struct rthread *find_in(struct rthread *th, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (th[mid].tid == tid)
			return &th[mid];
		if (th[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* find_in, looking first just past *at (where the last one was found: a
 * process's threads come in tid order, its known ones always), and
 * leaving *at past the one found. */
static struct rthread *find_next(struct rthread *th, size_t n, pid_t tid,
				 size_t *at)
{
	struct rthread *t = NULL;

	for (size_t i = *at; i < n && i < *at + 4 && th[i].tid <= tid; i++)
		if (th[i].tid == tid) {
			t = &th[i];
			break;
		}
	if (!t)
		t = find_in(th, n, tid);
	if (t)
		*at = (size_t)(t - th) + 1;
	return t;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The pids of the processes under refresh, for a quick lookup. */
struct pid_set {
	int *slot;
	size_t mask;
};

static int pid_set_init(struct pid_set *ps, const struct real *r)
{
	size_t n = 0, cap = 16;
	for (size_t i = 0; i < r->nprocs; i++)
		n += r->procs[i].refresh != 0;
	while (cap < 2 * n)
		cap *= 2;
	ps->slot = calloc(cap, sizeof(int));
	ps->mask = cap - 1;
	if (!ps->slot)
		return -ENOMEM;
	for (size_t i = 0; i < r->nprocs; i++) {
		if (!r->procs[i].refresh)
			continue;
		size_t h =
			(size_t)r->procs[i].info.pid * 2654435761u & ps->mask;
		while (ps->slot[h] && ps->slot[h] != r->procs[i].info.pid)
			h = (h + 1) & ps->mask;
		ps->slot[h] = r->procs[i].info.pid;
	}
	return 0;
}

static int pid_set_has(const struct pid_set *ps, int pid)
{
	size_t h = (size_t)pid * 2654435761u & ps->mask;
	while (ps->slot[h]) {
		if (ps->slot[h] == pid)
			return 1;
		h = (h + 1) & ps->mask;
	}
	return 0;
}

/* Every thread's children file is read at most this often (the main
 * thread's every refresh): most programs fork from their main thread. */
#define CHILDREN_SCAN_S 2.0
/* A process of more threads than this has them read in turns, a share
 * each refresh, so that no refresh of it reads them all (docs/real-node.md,
 * "Cost"). */
#define CHILDREN_TURN_THREADS 1024

/* Keep every known thread of pid (its task list could not be read now:
 * out of descriptors or memory is not the kernel saying it is gone). */
static void keep_threads_of(struct real *r, pid_t pid, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r->th[i].pid == pid)
			r->th[i].gen = r->gen;
}

/* An idle counted thread's stat is read at least every this many of its
 * process's refreshes (rthread.turn), to catch a reused tid. */
#define STAT_RECHECK 8
/* A process's task list is read in full at least this often: a safety
 * net behind known_tasks. */
#define LIST_RECHECK 32

/* Idle here below this share of a CPU: under the policies' idle_share
 * (0.05), so every thread they call busy has its CPU read. */
#define STAT_IDLE_SHARE 0.02
/* An idle thread that ran on another CPU has its stat (its CPU) read once
 * in this many refreshes: no one's business while it stays idle. */
#define STAT_CPU_RECHECK 32

/* Can this counted thread's stat read be left out? Its software events,
 * peeked now, say whether it ran or moved (docs/real-node.md, "Cost"). */
static int stat_unchanged(struct rthread *t, unsigned turn, long last_pid,
			  double win_s)
{
	double share = 0;
	int migrated = 1;

	if (!t->ctr || t->stat_fd < 0 || !t->start || t->cpu < 0 ||
	    t->tid == t->pid)
		return 0;
	if (nl_counters_peek(t->ctr, &share, &migrated) < 0)
		return 0;
	t->idle_reads = share < STAT_IDLE_SHARE ? t->idle_reads + 1 : 0;
	if (win_s > 0 &&
	    nl_counters_peek_cpu_s(t->ctr) >= STAT_IDLE_SHARE * win_s)
		t->idle_reads = 0; /* busy in that window, maybe */
	t->peeked = 1;
	if (migrated && share >= STAT_IDLE_SHARE)
		return 0;
	if (share > 0)
		return !migrated || turn % STAT_CPU_RECHECK != 0;
	return turn % STAT_RECHECK != 0 ||
	       (!migrated && last_pid >= 0 && t->stat_pid == last_pid);
}

/* An idle thread (idle_in_turn) is read once in this many refreshes, */
#define IDLE_RECHECK 4
/* a counted one of a process whose CPU clock can be read once in this
 * many (the clock tells sooner when one woke: nl_real_wake, quiet.c),
 * unless its threads came or went at each of its last this many
 * refreshes (no wake could be judged), */
#define IDLE_COUNTED_RECHECK 8
/* and once in this many while its process is quiet: it ran under 5% of a
 * CPU since its last refresh (quiet.c), so none of its threads woke busy. */
#define IDLE_QUIET_RECHECK 16

/* Is t idle enough to be read in turns? No sample between them: the next
 * read's spans the whole time (docs/real-node.md, "Cost"). */
static int idle_thread(const struct rthread *t)
{
	return (t->ctr || t->ctr_err == -EMFILE) && t->start &&
	       t->tid != t->pid && t->cpu >= 0 &&
	       t->idle_reads >= (t->peeked ? 1 : 2);
}

/* p: t's process (NULL: not known, as for one without counters). */
static int idle_in_turn(const struct rthread *t, const struct rproc *p,
			unsigned turn)
{
	unsigned every = t->ctr && p && p->clk_state > 0 &&
					 p->wake_unjudged < IDLE_COUNTED_RECHECK
				 ? IDLE_COUNTED_RECHECK
				 : IDLE_RECHECK;
	return idle_thread(t) && turn % every != 0;
}

/* An idle counted thread's turn of IDLE_COUNTED_RECHECK but not of
 * IDLE_QUIET_RECHECK: left unread while its process is quiet (quiet.c). */
static int quiet_turn(const struct rthread *t)
{
	return t->ctr && idle_thread(t) &&
	       t->turn % IDLE_COUNTED_RECHECK == 0 &&
	       t->turn % IDLE_QUIET_RECHECK != 0;
}

/* The stat read ahead for t (r_read_ahead), taken once: 1 if there was. */
static int ahead_take(struct rthread *t, struct nl_task_stat *st)
{
	int had = t->ahead > 0;

	t->ahead = 0;
	if (!had)
		return 0;
	memset(st, 0, sizeof(*st)); /* no name: never a main thread */
	st->state = t->ahead_state;
	st->processor = t->ahead_processor;
	st->starttime = t->ahead_start;
	st->utime_ticks = t->ahead_ticks;
	return 1;
}

/* tid's stat for this refresh: read ahead, from its open file, or now. */
static int thread_stat(struct real *r, struct rthread *t, pid_t pid, pid_t tid,
		       struct nl_task_stat *st)
{
	int rc;

	if (t && ahead_take(t, st))
		return 0;
	r->stat_reads++;
	rc = t && t->stat_fd >= 0 ? nl_proc_pread_stat(t->stat_fd, st) : -EBADF;
	if (rc == -ESRCH && t) /* that thread ended: its tid reused */
		st->starttime = 0;
	if (rc < 0)
		rc = nl_proc_read_stat(pid, tid, st);
	return rc;
}

/* The process's known threads (1, *tids malloc'd) when the kernel counts
 * as many and the last full listing is recent; else 0: list them. How an
 * ended-and-replaced thread is still seen: docs/real-node.md, "Cost". */
static int known_tasks(struct real *r, struct rproc *p, size_t nsorted,
		       pid_t **tids, size_t *nt)
{
	size_t known = 0, k = 0;
	long count;

	if (r->gen - p->listed_gen >= LIST_RECHECK)
		return 0;
	for (size_t i = 0; i < nsorted; i++)
		known += r->th[i].pid == p->info.pid && r->th[i].start;
	if (known == 0 || (count = nl_proc_count_tasks(p->info.pid)) < 0 ||
	    (size_t)count != known)
		return 0;
	*tids = malloc(known * sizeof(**tids));
	if (!*tids)
		return 0;
	for (size_t i = 0; i < nsorted; i++)
		if (r->th[i].pid == p->info.pid && r->th[i].start)
			(*tids)[k++] = r->th[i].tid;
	*nt = k;
	return 1;
}

/* A new thread's record, appended past the sorted ones; NULL without
 * memory. */
static struct rthread *append_thread(struct real *r)
{
	if (r->nth == r->capth) {
		size_t cap = r->capth ? r->capth * 2 : 64;
		struct rthread *n2 = realloc(r->th, cap * sizeof(*n2));
		if (!n2)
			return NULL;
		r->th = n2;
		r->capth = cap;
	}
	return &r->th[r->nth];
}

/*
 * Read one thread of p this refresh: t is what numalot knows of tid (NULL:
 * a new one, taken over now). woke: one of p's idle threads woke
 * (nl_real_wake): no counted one is left unread in its turns. 0, or
 * -ENOMEM.
 */
static int read_thread(struct real *r, struct rproc *p, struct rthread *t,
		       pid_t tid, int woke)
{
	struct nl_task_stat st;
	int fresh = 1; /* its first read: says nothing of idle */
	unsigned turn = t ? t->turn++ : 0; /* its process's refreshes */
	int rc;

	if (t && !(woke && t->ctr) && idle_in_turn(t, p, turn)) {
		t->gen = r->gen; /* as it was, not sampled */
		t->ticks_stale = 1;
		return 0;
	}
	if (t) {
		t->ticks_stale = 0;
		t->peeked = 0;
	}
	if (t && stat_unchanged(t, turn, r->last_pid,
				woke && t->ctr ? p->win_s : 0)) {
		t->gen = r->gen; /* its CPU as it was */
		return 0;
	}
	int ahead = t && t->ahead > 0;
	rc = thread_stat(r, t, p->info.pid, tid, &st);
	if (rc < 0 && rc != -ESRCH && t && t->start) {
		t->gen = r->gen; /* could not read it now: keep it */
		return 0;
	}
	if (rc < 0 || st.state == 'Z' || st.state == 'X')
		return 0;
	if (tid == p->info.pid) /* after exec: its name */
		snprintf(p->info.name, sizeof(p->info.name), "%s", st.comm);
	if (t && t->start != st.starttime) {
		/* A reused tid: the old thread is gone, a new one taken
		 * over in its place. */
		double c0 = nl_thread_cpu_s();
		nl_real_thread_drop(r, t);
		double c1 = nl_thread_cpu_s();
		r->release_s += c1 - c0; /* letting the old one go */
		r->released++;
		rc = nl_real_thread_init(r, p, t, tid, &st);
		r->takeover_s += nl_thread_cpu_s() - c1;
		if (rc < 0) {
			nl_real_thread_drop(r, t);
			t->start = 0; /* dropped below */
			return 0;
		}
	} else if (t) {
		fresh = 0;
	} else {
		if (!(t = append_thread(r)))
			return -ENOMEM;
		if (nl_real_thread_init(r, p, t, tid, &st) < 0) {
			nl_real_thread_drop(r, t);
			return 0;
		}
		r->nth++;
	}
	t->cpu = nl_topology_cpu_from_os(r->m.topo, st.processor);
	unsigned long long ticks = st.utime_ticks + st.stime_ticks;
	if (!t->peeked && !fresh) /* a counted one's: its task-clock */
		t->idle_reads = ticks == t->ticks ? t->idle_reads + 1 : 0;
	t->ticks = ticks;
	t->gen = r->gen;
	t->stat_pid = ahead ? -1 : r->mark_pid;
	return 0;
}

/*
 * Read one process's threads; new ones are appended past nsorted. The
 * known ones are read first; the new ones after, with the listing that
 * found them, are their taking over (r->takeover_s, one clock reading
 * for them all: a reading costs a system call here).
 */
static int refresh_proc(struct real *r, struct rproc *p, size_t nsorted)
{
	double c0 = nl_thread_cpu_s(), listing = 0;
	size_t nt, nnew = 0;
	pid_t *tids;
	int rc = 0;

	if (!known_tasks(r, p, nsorted, &tids, &nt)) {
		rc = nl_proc_list_tasks(p->info.pid, &tids, &nt);
		p->listed_gen = r->gen;
		listing = nl_thread_cpu_s() - c0;
	}
	if (rc < 0) {
		if (rc != -ESRCH)
			keep_threads_of(r, p->info.pid, nsorted);
		return 0;
	}
	int quiet = nl_real_quiet(p);
	/* One of its idle threads woke (quiet.c): read them all now. Judged
	 * only when it has the threads it had (as many). */
	int woke = nl_real_wake(p, nt == p->nthreads);
	r->wakes += woke != 0;
	size_t at = 0;
	for (size_t k = 0; k < nt && rc == 0; k++) {
		struct rthread *t = find_next(r->th, nsorted, tids[k], &at);
		if (t && quiet && quiet_turn(t)) {
			t->turn++; /* as read_thread leaves an idle one */
			t->gen = r->gen;
			t->ticks_stale = 1;
		} else if (t) {
			rc = read_thread(r, p, t, tids[k], woke);
		} else {
			tids[nnew++] = tids[k]; /* k >= nnew: read already */
		}
	}
	if (nnew && rc == 0) {
		double c1 = nl_thread_cpu_s();
		for (size_t k = 0; k < nnew && rc == 0; k++)
			rc = read_thread(r, p, NULL, tids[k], 0);
		r->takeover_s += nl_thread_cpu_s() - c1 + listing;
	}
	free(tids);
	p->nthreads = nt;
	return rc;
}

/* A task's pid is given out a moment before it joins its process (or
 * its parent's children): a last pid is trusted once it has stood this
 * long (a fork can wait on cgroup changes at a job's start). */
#define LAST_PID_SETTLE_S 0.1

/* The node's last pid (ns_last_pid), once a refresh: while it stands no
 * task was created anywhere, so no tid reused and no child started
 * (docs/real-node.md, "Cost"). Marked only once it has stood a while. */
static void read_last_pid(struct real *r, double now)
{
	char buf[32], *end;
	ssize_t n = r->last_pid_fd >= 0
			    ? pread(r->last_pid_fd, buf, sizeof(buf) - 1, 0)
			    : -1;
	long v = -1;

	if (n > 0) {
		buf[n] = 0;
		v = strtol(buf, &end, 10);
		if (end == buf || v < 0)
			v = -1;
	}
	if (v != r->last_pid) {
		r->last_pid = v;
		r->last_pid_since = now;
	}
	r->mark_pid =
		v >= 0 && now - r->last_pid_since >= LAST_PID_SETTLE_S ? v : -1;
}

/* Mark the processes to refresh: those in pids, or all (pids NULL). */
static int mark_refresh(struct real *r, const int *pids, size_t npids)
{
	int *sorted = NULL;

	if (pids) {
		sorted = malloc(sizeof(int) * (npids + 1));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, pids, sizeof(int) * npids);
		qsort(sorted, npids, sizeof(int), cmp_int);
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = &r->procs[i];
		p->refresh = !pids || bsearch(&p->info.pid, sorted, npids,
					      sizeof(int), cmp_int);
	}
	free(sorted);
	return 0;
}

/* Manage the children the refreshed processes started (their threads
 * are refreshed with theirs). */
static void follow_children(struct real *r, double now)
{
	size_t nprocs = r->nprocs;

	for (size_t i = 0; i < nprocs; i++) {
		struct rproc *p = &r->procs[i];
		if (!p->refresh || p->info.end_s >= 0)
			continue;
		if (p->children_ahead) { /* read ahead: r_read_ahead */
			p->children_ahead = 0;
			continue;
		}
		if (nl_real_add_children_turn(r, p, now, CHILDREN_SCAN_S,
					      CHILDREN_TURN_THREADS) == 0)
			continue;
		int all = now - p->children_t >= CHILDREN_SCAN_S;
		long lp = r->last_pid;
		/* No task created since these were read without a miss
		 * (read_last_pid): no child started since. */
		if (lp >= 0 &&
		    (all ? p->children_pid_all : p->children_pid_main) == lp)
			continue;
		if (all)
			p->children_t = now;
		int missed = nl_real_add_children(r, p, all);
		p = &r->procs[i]; /* children added: r->procs may move */
		if (!missed) {
			p->children_pid_main = r->mark_pid;
			if (all)
				p->children_pid_all = r->mark_pid;
		}
	}
	for (size_t i = nprocs; i < r->nprocs; i++)
		r->procs[i].refresh = 1; /* children found just now */
}

/* Forget the refreshed processes' threads that are gone; keep the others'
 * as they were. The array keeps its order. */
static int drop_gone(struct real *r)
{
	struct pid_set set;
	size_t j = 0;
	/* Letting ended threads go is kept apart from the periods' cost,
	 * as taking them over is: one clock reading for them all. */
	double c0 = -1;

	if (pid_set_init(&set, r) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < r->nth; i++) {
		struct rthread *t = &r->th[i];
		if (t->gen == r->gen ||
		    (t->start && !pid_set_has(&set, t->pid)))
			continue; /* seen now, or not refreshed: as it was */
		if (c0 < 0)
			c0 = nl_thread_cpu_s();
		nl_real_thread_drop(r, t);
		r->released++;
		t->tid = -1; /* gone: left out below */
	}
	if (c0 >= 0)
		r->release_s += nl_thread_cpu_s() - c0;
	free(set.slot);
	for (size_t i = 0; i < r->nth; i++) {
		if (r->th[i].tid < 0)
			continue;
		if (j != i) /* most refreshes drop none: no copy onto itself */
			r->th[j] = r->th[i];
		j++;
	}
	r->nth = j;

	return 0;
}

/* The refreshed threads, in tid order, as the machine interface has them. */
static int hand_out(struct real *r, const struct nl_thread_info **out,
		    size_t *n)
{
	size_t j = 0;

	if (r->nth > r->capout) {
		struct nl_thread_info *o = realloc(r->out, r->nth * sizeof(*o));
		if (!o)
			return -ENOMEM;
		r->out = o;
		r->capout = r->nth;
	}
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].gen == r->gen)
			r->out[j++] = (struct nl_thread_info){
				.tid = r->th[i].tid,
				.pid = r->th[i].pid,
				.start_time = r->th[i].start,
				.cpu = r->th[i].cpu,
				.allowed = r->th[i].allowed,
				.affinity = r->th[i].affinity,
			};
	*out = r->out;
	*n = j;
	return 0;
}

/* How often a process's children are counted when not followed. */
#define CHILDREN_COUNT_S 1.0

/*
 * Not following children (numalot run/attach without --children): count
 * those of each process's main thread, the most at one look, so that its
 * report can say they ran unmanaged (info.real.children_unfollowed). Looked at
 * most every CHILDREN_COUNT_S, and not while no task was created on the
 * node since the last look (read_last_pid).
 */
static void count_children(struct real *r, double now)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = &r->procs[i];
		char path[NL_FS_PATH], *text;
		int n = 0;
		if (!p->refresh || p->info.end_s >= 0 || p->pending ||
		    (p->children_t > 0 &&
		     now - p->children_t < CHILDREN_COUNT_S) ||
		    (r->last_pid >= 0 && p->children_pid_main == r->last_pid))
			continue;
		p->children_t = now;
		nl_fs_path(path, sizeof(path), "/proc/%d/task/%d/children",
			   p->info.pid, p->info.pid);
		if (nl_proc_slurp(path, &text, NULL) < 0)
			continue;
		for (char *c = text, *end;; c = end) {
			long v = strtol(c, &end, 10);
			if (end == c)
				break;
			n += v > 0;
		}
		free(text);
		p->children_pid_main = r->mark_pid;
		if (n > p->info.real.children_unfollowed)
			p->info.real.children_unfollowed = n;
	}
}

/*
 * Refresh the threads of the managed processes (pids == NULL: all of
 * them; else those in pids and the children they start) and hand out the
 * refreshed ones, sorted by tid. New threads are appended past the sorted
 * ones, and the array sorted again only when there are some.
 */
static int refresh(struct real *r, const int *pids, size_t npids,
		   const struct nl_thread_info **out, size_t *n)
{
	double now = r->mono();
	size_t nsorted;
	int rc = mark_refresh(r, pids, npids);

	if (rc < 0)
		return rc;
	r->gen++;
	read_last_pid(r, now);
	for (size_t i = 0; i < r->nprocs; i++) {
		r->procs[i].refresh |= r->procs[i].found_ahead;
		r->procs[i].found_ahead = 0;
	}
	nl_real_note_ends_some(r);
	if (r->o.follow_children)
		follow_children(r, now);
	else
		count_children(r, now);
	nsorted = r->nth;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = &r->procs[i];
		if (!p->refresh)
			continue;
		if (p->pending && p->info.end_s < 0)
			nl_real_check_pending(r, p);
		if (p->info.end_s >= 0 || p->pending)
			continue;
		/* A process's first read (its task list, each thread's first
		 * stat, counters and limit) is its taking over, all of it. */
		double c0 = p->taken ? 0 : nl_thread_cpu_s();
		double tk0 = r->takeover_s;
		rc = refresh_proc(r, p, nsorted);
		if (!p->taken) {
			r->takeover_s = tk0 + (nl_thread_cpu_s() - c0);
			p->taken = 1;
		}
		if (rc < 0)
			break;
	}
	int appended = r->nth > nsorted;
	/* After a failure (no memory) nothing is dropped: what was not read
	 * is kept as it was; the new threads are sorted in all the same, as
	 * every later search needs. */
	if (rc == 0)
		rc = drop_gone(r);
	if (rc == 0)
		nl_real_check_bindings(r, 0);
	if (appended) { /* sorting the new threads in: their taking over */
		double c0 = nl_thread_cpu_s();
		qsort(r->th, r->nth, sizeof(*r->th), cmp_thread);
		r->takeover_s += nl_thread_cpu_s() - c0;
	}
	return rc < 0 ? rc : hand_out(r, out, n);
}

int nl_real_threads(struct nl_machine *m, const struct nl_thread_info **out,
		    size_t *n)
{
	return refresh(R(m), NULL, 0, out, n);
}

int nl_real_threads_of(struct nl_machine *m, const int *pids, size_t npids,
		       const struct nl_thread_info **out, size_t *n)
{
	return refresh(R(m), pids, npids, out, n);
}

/* Would the next refresh open, read and close this thread's stat (a
 * known thread without counters, not its process's main thread, and not
 * one it leaves unread, idle)? */
static int reads_ahead(const struct rthread *t)
{
	return !t->ctr && t->start && t->tid != t->pid && !t->ahead &&
	       !idle_in_turn(t, NULL, t->turn);
}

/*
 * A big process's share of children files (nl_real_add_children_turn),
 * read ahead in a call of its own: its refresh does not read them again,
 * and the children found are refreshed with it. 1 if one was read.
 */
static int children_ahead(struct real *r, double now)
{
	size_t nprocs = r->nprocs;

	if (!r->o.follow_children) /* not asked for */
		return 0;
	for (size_t i = 0; i < nprocs; i++) {
		struct rproc *p = &r->procs[i];
		if (!p->refresh || p->info.end_s >= 0 || p->pending ||
		    p->children_ahead ||
		    nl_real_add_children_turn(r, p, now, CHILDREN_SCAN_S,
					      CHILDREN_TURN_THREADS) != 0)
			continue;
		r->procs[i].children_ahead = 1; /* p may have moved */
		for (size_t k = nprocs; k < r->nprocs; k++)
			r->procs[k].found_ahead = 1;
		return 1;
	}
	return 0;
}

/*
 * Read ahead, for the next refresh of these processes, the stat of at
 * most max of their threads that it would read by open, read and close:
 * those past the counter budget, the costly ones; first, in a call of
 * its own, a big process's share of children files (docs/protocol.md,
 * "Cost"). 1 while some are left, else 0.
 */
int nl_real_read_ahead(struct nl_machine *m, const int *pids, size_t npids,
		       size_t max)
{
	struct real *r = R(m);
	struct pid_set set;
	size_t done = 0;
	int rc = mark_refresh(r, pids, npids);

	if (rc < 0 || pid_set_init(&set, r) < 0)
		return rc < 0 ? rc : -ENOMEM;
	if (children_ahead(r, r->mono()))
		rc = 1; /* a slice of its own */
	for (size_t i = 0; i < r->nth && rc == 0; i++) {
		struct rthread *t = &r->th[i];
		struct nl_task_stat st;
		if (!reads_ahead(t) || !pid_set_has(&set, t->pid))
			continue;
		if (done++ == max) {
			rc = 1;
			break;
		}
		r->stat_reads++;
		t->ahead = nl_proc_read_stat(t->pid, t->tid, &st) < 0 ? -1 : 1;
		if (t->ahead < 0)
			continue;
		t->ahead_state = st.state;
		t->ahead_processor = st.processor;
		t->ahead_start = st.starttime;
		t->ahead_ticks = st.utime_ticks + st.stime_ticks;
	}
	free(set.slot);
	return rc;
}
