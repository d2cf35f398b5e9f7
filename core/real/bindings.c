/* numalot: threads whose CPU binding someone else changed: the program
 * itself, a wrapper it exec'd (taskset, numactl) or a placement daemon
 * (docs/real-node.md, "Other placers"). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "procfs.h"
#include "real_priv.h"

static int any_placed(const struct real *r, pid_t pid)
{
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].pid == pid && r->th[i].tid > 0 && r->th[i].placed)
			return 1;
	return 0;
}

/* Its limit anew from its threads' allocation and own bindings. */
static void limits_anew(struct real *r, pid_t pid, hwloc_const_bitmap_t alloc)
{
	for (size_t i = 0; i < r->nth; i++) {
		struct rthread *t = &r->th[i];
		if (t->pid != pid || t->tid <= 0 || !t->allowed)
			continue;
		nl_real_to_dense(r->m.topo, alloc, t->allowed);
		hwloc_bitmap_or(t->allowed, t->allowed, t->affinity);
	}
}

void nl_real_own_limit(struct rproc *p, hwloc_const_bitmap_t main_os)
{
	if (p->limit_own && hwloc_bitmap_isincluded(main_os, p->alloc_os)) {
		hwloc_bitmap_copy(p->alloc_os, main_os);
		hwloc_bitmap_copy(p->orig_os, main_os);
	}
}

/* A thread numalot had not moved got another binding: it starts from it.
 * The main thread of a process limited by its own binding, before numalot
 * moved any of its threads, narrows that limit: `run -- taskset -c 0 cmd`
 * is taken over at taskset's exec, before taskset binds. */
static void adopt(struct real *r, struct rproc *p, struct rthread *t,
		  hwloc_const_bitmap_t cur)
{
	hwloc_bitmap_copy(t->seen_os, cur);
	hwloc_bitmap_copy(t->orig_os, cur);
	nl_real_to_dense(r->m.topo, cur, t->affinity);
	if (t->tid == p->info.pid && !any_placed(r, p->info.pid))
		nl_real_own_limit(p, cur);
	limits_anew(r, p->info.pid, p->alloc_os);
}

/* A binding someone else set on t (now cur): numalot stays out of its
 * process from now on and leaves every binding as it is (none is given
 * back at detach: the other program's stand). */
static void let_go(struct real *r, struct rproc *p, const struct rthread *t,
		   hwloc_const_bitmap_t cur, int numad)
{
	char *set = NULL, *was = NULL, who[48] = "another program bound";
	hwloc_bitmap_list_asprintf(&set, cur);
	hwloc_bitmap_list_asprintf(&was, t->placed ? t->seen_os : p->alloc_os);
	if (numad > 0)
		snprintf(who, sizeof(who), "numad (pid %d) runs and bound",
			 numad);
	if (t->placed)
		nl_real_let_go(r, p, 0,
			       "%s its thread %d to CPUs %s, where numalot had "
			       "placed it on CPU %s: numalot left the process "
			       "to it",
			       who, (int)t->tid, set ? set : "?",
			       was ? was : "?");
	else if (numad > 0)
		nl_real_let_go(r, p, 0,
			       "%s its thread %d to CPUs %s: numalot left the "
			       "process to it",
			       who, (int)t->tid, set ? set : "?");
	else
		nl_real_let_go(r, p, 0,
			       "%s its thread %d to CPUs %s, outside its limit "
			       "%s: numalot left the process to it",
			       who, (int)t->tid, set ? set : "?",
			       was ? was : "?");
	free(set);
	free(was);
}

/* numad binds only processes of more than 300 MB resident (numad 0.5's
 * MEMORY_THRESHOLD, MiB). */
#define NUMAD_MIN_BYTES (300.0 * 1024 * 1024)

/* The binding of a wrapper the process runs before its program: its main
 * thread, alone, binds itself (within its limit) before numalot placed any
 * of its threads (`run -- taskset -c 1 cmd`, taken over at taskset's
 * exec), the process smaller than numad binds. A single-threaded process
 * of 341 MiB bound by numad was taken for a wrapper in the 2-node guest:
 * numalot adopted numad's binding and went on moving its pages away. */
static int wrapper(const struct real *r, const struct rproc *p,
		   const struct rthread *t)
{
	struct nl_task_stat st;
	if (t->tid != p->info.pid || p->nthreads > 1 ||
	    any_placed(r, p->info.pid))
		return 0;
	return nl_proc_read_process_stat(p->info.pid, &st) < 0 ||
	       (double)st.rss_pages * (double)sysconf(_SC_PAGESIZE) <=
		       NUMAD_MIN_BYTES;
}

void nl_real_check_bindings(struct real *r, int pid)
{
	hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	if (!cur)
		return;
	for (size_t i = 0; i < r->nth; i++) {
		struct rthread *t = &r->th[i];
		struct rproc *p;
		/* Threads left unread this refresh (idle) are looked at when
		 * next read. */
		if ((pid > 0 && t->pid != pid) || t->gen != r->gen ||
		    t->ticks_stale || t->tid <= 0 || !t->seen_os ||
		    hwloc_get_proc_cpubind(r->live, t->tid, cur,
					   HWLOC_CPUBIND_THREAD) < 0 ||
		    hwloc_bitmap_isequal(cur, t->seen_os))
			continue;
		p = proc_of(r, t->pid);
		if (!p || p->info.end_s >= 0)
			continue;
		/* Another placer's hand: on a thread numalot placed, outside
		 * the process's limit, or while numad runs (bar a wrapper's);
		 * else the program's own binding, where it starts from
		 * (docs/real-node.md, "Other placers"). */
		int numad = nl_numad_pid();
		if (t->placed || !hwloc_bitmap_isincluded(cur, p->alloc_os) ||
		    (numad > 0 && !wrapper(r, p, t))) {
			let_go(r, p, t, cur, numad);
			continue;
		}
		adopt(r, p, t, cur);
	}
	hwloc_bitmap_free(cur);
}
