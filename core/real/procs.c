/*
 * numalot: the real node's managed processes: known by pid and start time,
 * taken over at once or at their exec, their uids rechecked, let go of
 * when they end or change hands.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procfs.h"
#include "real_priv.h"

#include "cgroup.h"
#include "util.h"

int nl_real_proc_pidfd(struct rproc *p)
{
	struct nl_task_stat st;
	int fd, rc;

	if (p->pidfd > 0)
		return p->pidfd;
	fd = (int)syscall(SYS_pidfd_open, p->info.pid, 0);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -EBADF;
	if (fd == 0) { /* 0 stands for "none" (rproc.pidfd) */
		fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		close(0);
		if (fd < 0)
			return -EBADF;
	}
	/* Opened by pid: it names p only if p still had that pid then. */
	rc = nl_proc_read_stat(p->info.pid, p->info.pid, &st);
	if (rc < 0 || st.starttime != p->start) {
		close(fd);
		return rc == -ESRCH || (rc == 0 && st.starttime != p->start)
			       ? -ESRCH
			       : -EBADF;
	}
	p->pidfd = fd;
	return fd;
}

/*
 * Has p's pidfd told that the whole process ended? 1 it has, 0 it runs,
 * -1 where it cannot tell: no pidfd open (only the wait opens them, for
 * the few processes of a command numalot runs; the agent's many do not
 * get a descriptor each), or poll failed. The kernel makes it readable
 * once every thread has exited, the leader included: a zombie leader
 * whose other threads run is running.
 */
static int pidfd_ended(const struct rproc *p)
{
	struct pollfd pf = {p->pidfd, POLLIN, 0};

	if (p->pidfd <= 0 || poll(&pf, 1, 0) < 0 || (pf.revents & POLLNVAL))
		return -1;
	return (pf.revents & (POLLIN | POLLHUP)) != 0;
}

/*
 * p's leader's stat, by its stat file kept open where numalot has it (one
 * system call; bound to that thread, so that it says -ESRCH once the
 * leader is gone, whatever took its pid), else by its path.
 */
static int leader_stat(struct real *r, const struct rproc *p,
		       struct nl_task_stat *st)
{
	struct rthread *t = nl_real_find(r, p->info.pid);
	int rc;

	if (t && t->pid == p->info.pid && t->start == p->start &&
	    t->stat_fd >= 0) {
		rc = nl_proc_pread_stat(t->stat_fd, st);
		if (rc == 0 || rc == -ESRCH)
			return rc;
	}
	return nl_proc_read_stat(p->info.pid, p->info.pid, st);
}

/*
 * Is the process still the one registered, running, and (if asked) its
 * user's? A zombie leader whose other threads run is alive. Only the
 * kernel's word that it is gone (or another process under its pid, or
 * another owner) ends it: a failure to read (out of descriptors, memory)
 * does not. An open pidfd, or the leader's kept stat file, tells in one
 * system call; the owner, where asked (the agent's processes), takes a
 * read of its status file (docs/real-node.md, "Cost").
 */
static int alive(struct real *r, const struct rproc *p, int *changed_hands)
{
	struct nl_task_stat st;
	pid_t pid = p->info.pid, *tids;
	size_t n;
	int running = 0, rc, ended = pidfd_ended(p);

	if (ended == 1)
		return 0;
	if (ended < 0) {
		rc = leader_stat(r, p, &st);
		if (rc == -ESRCH || (rc == 0 && st.starttime != p->start))
			return 0;
		if (rc < 0)
			return 1;
	}
	if (p->o.check_uid && !p->pending &&
	    nl_proc_owned_by(pid, p->o.uid) == -EPERM) {
		*changed_hands = 1;
		return 0;
	}
	if (ended == 0 || (st.state != 'Z' && st.state != 'X'))
		return 1;
	if (nl_proc_list_tasks(pid, &tids, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && !running; i++)
		running = tids[i] != pid &&
			  nl_proc_read_stat(pid, tids[i], &st) == 0 &&
			  st.state != 'Z' && st.state != 'X';
	free(tids);
	return running;
}

static void note_ends(struct real *r, int only_refresh)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		int changed = 0;
		if (r->procs[i].info.end_s >= 0 ||
		    (only_refresh && !r->procs[i].refresh) ||
		    alive(r, &r->procs[i], &changed))
			continue;
		r->procs[i].info.end_s = r_now(&r->m);
		if (r->procs[i].pidfd > 0) { /* no wait for it from now */
			close(r->procs[i].pidfd);
			r->procs[i].pidfd = 0;
		}
		/* Let go of a process that changed hands (a setuid program):
		 * its threads get back what they had. */
		if (changed)
			nl_real_release_pid(r, r->procs[i].info.pid);
	}
}

void nl_real_note_ends(struct real *r)
{
	note_ends(r, 0);
}

void nl_real_note_ends_some(struct real *r)
{
	note_ends(r, 1);
}

static int exe_id(pid_t pid, dev_t *dev, ino_t *ino)
{
	char path[NL_FS_PATH];
	struct stat st;
	nl_fs_path(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st) < 0)
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/*
 * Take the process over now. Its limit is its allocation, the cpuset of
 * its Slurm job's or step's cgroup; its CPUs as they are (a binding inside
 * it) are where its threads start. In no job's cgroup, without a readable
 * cpuset, or with a binding outside it, the binding is the limit.
 */
static int take_over(struct real *r, struct rproc *p)
{
	if (p->o.check_uid && nl_proc_owned_by(p->info.pid, p->o.uid) != 0)
		return -EPERM;
	if (hwloc_get_proc_cpubind(r->live, p->info.pid, p->orig_os,
				   HWLOC_CPUBIND_PROCESS) < 0)
		return -ESRCH;
	int rc = nl_cgroup_cpuset(p->info.pid, p->alloc_os, p->info.limit,
				  sizeof(p->info.limit));
	if (rc < 0 || !hwloc_bitmap_isincluded(p->orig_os, p->alloc_os)) {
		hwloc_bitmap_copy(p->alloc_os, p->orig_os);
		p->limit_own = 1;
		snprintf(p->info.limit, sizeof(p->info.limit), "%s",
			 rc == -EINVAL ? "its own CPU binding (its cgroup file "
					 "does not read as the kernel prints "
					 "it; no allocation read)"
				       : "its own CPU binding (no job's cgroup "
					 "allocates its CPUs)");
	}
	p->pending = 0;
	p->info.pending = 0;
	return 0;
}

/* A pending process that has exec'd is taken over; one that ran
 * something unexpected, or another user's program, is let go. */
void nl_real_check_pending(struct real *r, struct rproc *p)
{
	dev_t dev = 0;
	ino_t ino = 0;
	if (exe_id(p->info.pid, &dev, &ino) < 0)
		return; /* note_ends will see it gone */
	if (dev == p->exe_dev && ino == p->exe_ino)
		return;
	struct nl_task_stat st;
	if (take_over(r, p) < 0)
		p->info.end_s = r_now(&r->m);
	else if (nl_proc_read_stat(p->info.pid, p->info.pid, &st) == 0)
		snprintf(p->info.name, sizeof(p->info.name), "%s", st.comm);
}

/*
 * A child forked by a thread numalot had bound inherited that binding: its
 * limit is its parent's, and it gets it back at once.
 */
static void inherit_limit(struct real *r, pid_t parent, pid_t child)
{
	struct rproc *pp = proc_of(r, parent), *cp = proc_of(r, child);
	if (!pp || !cp || hwloc_bitmap_weight(cp->orig_os) != 1 ||
	    !hwloc_bitmap_isincluded(cp->orig_os, pp->pinned_os))
		return;
	hwloc_bitmap_copy(cp->orig_os, pp->orig_os);
	hwloc_set_proc_cpubind(r->live, child, cp->orig_os,
			       HWLOC_CPUBIND_PROCESS);
}

/* Has the kernel's word that pid is gone (or a zombie)? Not a failure to
 * read its stat (out of descriptors, memory). */
static int gone(pid_t pid)
{
	struct nl_task_stat st;
	int rc = nl_proc_read_stat(pid, pid, &st);
	return rc == -ESRCH ||
	       (rc == 0 && (st.state == 'Z' || st.state == 'X'));
}

/* New children taken over from one children file at one read. */
#define NL_CHILDREN_PER_READ 32

/*
 * Manage the children thread tid of process pid started. 0 when its file
 * was read and each child is managed now, already, or gone; -1 when one
 * may have been missed (the file unreadable, a failure, another user's
 * child, which may be the user's again later): read again next time.
 */
static int children_of(struct real *r, pid_t pid, pid_t tid,
		       const struct nl_proc_opts *o)
{
	char path[NL_FS_PATH], *text;
	int missed = 0, taken = 0;

	nl_fs_path(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
		   (int)tid);
	if (nl_proc_slurp(path, &text, NULL) < 0)
		return -1;
	for (char *s = text, *end; *s; s = end) {
		long c = strtol(s, &end, 10);
		int rc;
		if (end == s)
			break;
		if (c <= 0 || proc_of(r, (pid_t)c))
			continue;
		/* One job's churn costs the agent a bounded time a read: the
		 * rest are read again next time (docs/real-node.md). */
		if (taken++ == NL_CHILDREN_PER_READ) {
			missed = 1;
			break;
		}
		rc = nl_real_add_process(&r->m, (int)c, o, NULL, 0);
		if (rc == 0)
			inherit_limit(r, pid, (pid_t)c);
		else if (rc != -EEXIST && !(rc == -ESRCH && gone((pid_t)c)))
			missed = 1; /* another user's (for now), or a failure */
	}
	free(text);
	return missed ? -1 : 0;
}

/*
 * Can thread tid of process pid have started a process since its children
 * file was last read in full? Not if it has not run since (its task-clock,
 * exact to the ns, has not moved): its file is then left unread. A thread
 * without counters (CPU time from /proc counts in ticks, too coarse to
 * tell) always can. *clock gets the value to keep once the file is read
 * (children_read), 0 when there is none to keep.
 */
static int may_have_children(struct real *r, pid_t pid, pid_t tid,
			     uint64_t *clock)
{
	struct rthread *t = nl_real_find(r, tid);

	*clock = 0;
	if (!t || t->pid != pid || !t->ctr ||
	    nl_counters_clock_ns(t->ctr, clock) < 0) {
		*clock = 0;
		return 1;
	}
	if (*clock == 0)
		*clock = 1;
	return !(t->children_clock && *clock == t->children_clock);
}

/* tid's children file was read and all its children managed: keep its
 * task-clock then (looked up again: adding processes may move r->th). */
static void children_read(struct real *r, pid_t pid, pid_t tid, uint64_t clock)
{
	struct rthread *t = clock ? nl_real_find(r, tid) : NULL;
	if (t && t->pid == pid)
		t->children_clock = clock;
}

/* Read tid's children file unless it cannot have changed. */
static int children_if_ran(struct real *r, pid_t pid, pid_t tid,
			   const struct nl_proc_opts *o)
{
	uint64_t clock;
	if (!may_have_children(r, pid, tid, &clock))
		return 0;
	if (children_of(r, pid, tid, o) < 0)
		return -1;
	children_read(r, pid, tid, clock);
	return 0;
}

/* What a child of p is managed with. */
static struct nl_proc_opts child_opts(const struct rproc *p)
{
	struct nl_proc_opts o = p->o;
	o.job = p->info.job;
	o.wait_exec = 0;
	return o;
}

int nl_real_add_children(struct real *r, struct rproc *p, int all)
{
	pid_t *tids;
	size_t n;
	pid_t pid = p->info.pid;
	/* Copies: adding a process may move r->procs, and p with it. */
	struct nl_proc_opts o = child_opts(p);

	int missed = 0;

	if (!all)
		return children_of(r, pid, pid, &o) < 0;
	if (nl_proc_list_tasks(pid, &tids, &n) < 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (tids[i] == pid)
			missed |= children_of(r, pid, tids[i], &o) < 0;
		else
			missed |= children_if_ran(r, pid, tids[i], &o) < 0;
	free(tids);
	return missed;
}

int nl_real_add_children_turn(struct real *r, struct rproc *p, double now,
			      double every_s, size_t min_threads)
{
	pid_t pid = p->info.pid, *tids;
	size_t n = 0, share, from;
	struct nl_proc_opts o = child_opts(p);

	/* Its count at its last refresh first: most processes are small,
	 * and counting them over the node's threads costs more. */
	if (p->nthreads <= min_threads)
		return 1;
	for (size_t i = 0; i < r->nth; i++)
		n += r->th[i].pid == pid;
	if (n <= min_threads || !(tids = malloc(sizeof(*tids) * n)))
		return 1;
	n = 0;
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].pid == pid)
			tids[n++] = r->th[i].tid;
	share = now - p->children_t >= every_s
			? n
			: (size_t)((double)n * (now - p->children_t) /
				   every_s) +
				  1;
	from = p->children_next % n;
	p->children_next = (from + share) % n;
	p->children_t = now;
	/* p may move from here on (children added). */
	children_of(r, pid, pid, &o);
	for (size_t k = 0; k < share; k++)
		if (tids[(from + k) % n] != pid)
			children_if_ran(r, pid, tids[(from + k) % n], &o);
	free(tids);
	return 0;
}

int nl_real_forget(struct nl_machine *m, int pid)
{
	struct real *r = R(m);
	struct rproc *p = proc_of(r, pid);
	size_t j = 0;

	if (!p)
		return -ESRCH;
	for (size_t i = 0; i < r->nth; i++) {
		if (r->th[i].pid == pid)
			nl_real_thread_drop(r, &r->th[i]);
		else
			r->th[j++] = r->th[i];
	}
	r->nth = j;
	hwloc_bitmap_free(p->orig_os);
	hwloc_bitmap_free(p->pinned_os);
	hwloc_bitmap_free(p->alloc_os);
	nl_hot_free(p->hot);
	if (p->pidfd > 0)
		close(p->pidfd);
	*p = r->procs[--r->nprocs];
	return 0;
}

int nl_real_add_process(struct nl_machine *m, int pid,
			const struct nl_proc_opts *o, char *err, size_t errlen)
{
	struct real *r = R(m);
	struct nl_task_stat st;
	struct rproc *p;
	uid_t uid;
	int rc;

	if (proc_of(r, pid))
		return nl_errf(err, errlen, -EEXIST,
			       "process %d is already managed", (int)pid);
	rc = nl_proc_read_stat(pid, pid, &st);
	if (rc < 0 || st.state == 'Z' || st.state == 'X')
		return nl_errf(err, errlen, -ESRCH, "no process %d", (int)pid);
	rc = nl_proc_uid(pid, &uid);
	if (rc == 0 && geteuid() != 0 && uid != geteuid())
		return nl_errf(err, errlen, -EPERM,
			       "process %d belongs to uid %u: only root may "
			       "manage another user's process",
			       (int)pid, (unsigned)uid);
	p = realloc(r->procs, sizeof(*p) * (r->nprocs + 1));
	if (!p)
		return nl_errf(err, errlen, -ENOMEM, "out of memory");
	r->procs = p;
	p = &r->procs[r->nprocs];
	memset(p, 0, sizeof(*p));
	p->o = *o;
	p->info.pid = pid;
	p->start = st.starttime;
	p->children_pid_main = p->children_pid_all = -1;
	p->orig_os = hwloc_bitmap_alloc();
	p->pinned_os = hwloc_bitmap_alloc();
	p->alloc_os = hwloc_bitmap_alloc();
	rc = !p->orig_os || !p->pinned_os || !p->alloc_os ? -ENOMEM : 0;
	if (rc == 0 && o->wait_exec) {
		p->pending = 1;
		rc = exe_id(pid, &p->exe_dev, &p->exe_ino);
	} else if (rc == 0) {
		rc = take_over(r, p);
	}
	if (rc < 0) {
		hwloc_bitmap_free(p->orig_os);
		hwloc_bitmap_free(p->pinned_os);
		hwloc_bitmap_free(p->alloc_os);
		return rc == -EPERM ? nl_errf(err, errlen, rc,
					      "process %d does not belong to "
					      "uid %u",
					      (int)pid, (unsigned)o->uid)
				    : nl_errf(err, errlen, rc,
					      "cannot take process %d over: %s",
					      (int)pid, strerror(-rc));
	}
	p->info.pid = pid;
	p->info.job = o->job;
	p->info.start_s = r_now(m);
	p->info.end_s = -1;
	/* A task before its exec bears its starter's name (slurmstepd): it
	 * has none of its own until it runs its program. */
	snprintf(p->info.name, sizeof(p->info.name), "%s",
		 p->pending ? "" : st.comm);
	p->info.pending = p->pending;
	r->nprocs++;
	return 0;
}

int nl_real_owner(struct nl_machine *m, int pid, struct nl_proc_owner *out)
{
	struct nl_task_stat st;
	uid_t u[4];
	int rc;

	(void)m;
	rc = nl_proc_read_stat(pid, pid, &st);
	if (rc == 0)
		rc = nl_proc_uids(pid, u);
	if (rc < 0)
		return rc;
	out->ppid = st.ppid;
	out->uid = u[0];
	out->one_uid = u[1] == u[0] && u[2] == u[0] && u[3] == u[0];
	return 0;
}
