/* numalot: threads whose CPU binding someone else changed: the program
 * itself, a wrapper it exec'd (taskset, numactl) or a placement daemon
 * (docs/real-node.md, "Other placers"). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* A thread numalot had placed was moved by another program: numalot
 * stays out of the process from now on and leaves every binding as it
 * is (none is given back at detach). */
static void let_go(struct real *r, struct rproc *p, const struct rthread *t,
		   hwloc_const_bitmap_t cur)
{
	char *set = NULL, *was = NULL;
	hwloc_bitmap_list_asprintf(&set, cur);
	hwloc_bitmap_list_asprintf(&was, t->seen_os);
	snprintf(p->info.real.let_go, sizeof(p->info.real.let_go),
		 "another program bound its thread %d to CPUs %s, where "
		 "numalot had placed it on CPU %s: numalot left the process "
		 "to it",
		 (int)t->tid, set ? set : "?", was ? was : "?");
	free(set);
	free(was);
	/* Not handed out from this refresh on: never placed again. */
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].pid == p->info.pid) {
			r->th[i].placed = 0;
			r->th[i].gen = r->gen - 1;
		}
	p->info.end_s = r_now(&r->m);
	if (p->pidfd > 0) {
		close(p->pidfd);
		p->pidfd = 0;
	}
}

void nl_real_check_bindings(struct real *r)
{
	hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	if (!cur)
		return;
	for (size_t i = 0; i < r->nth; i++) {
		struct rthread *t = &r->th[i];
		struct rproc *p;
		/* Threads left unread this refresh (idle) are looked at when
		 * next read. */
		if (t->gen != r->gen || t->ticks_stale || t->tid <= 0 ||
		    !t->seen_os ||
		    hwloc_get_proc_cpubind(r->live, t->tid, cur,
					   HWLOC_CPUBIND_THREAD) < 0 ||
		    hwloc_bitmap_isequal(cur, t->seen_os))
			continue;
		p = proc_of(r, t->pid);
		if (!p || p->info.end_s >= 0)
			continue;
		if (t->placed)
			let_go(r, p, t, cur);
		else
			adopt(r, p, t, cur);
	}
	hwloc_bitmap_free(cur);
}
