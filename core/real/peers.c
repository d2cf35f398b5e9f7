/* numalot: other placers on the node, and letting go of a process one of
 * them placed (docs/real-node.md, "Other placers"). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "real_priv.h"

/* Pages moved, or whose memory policy changed, without numalot count once
 * they are this share of the process's and this many: below, a program
 * freeing memory on one node and touching as much on another would pass
 * for a placer. */
#define OTHERS_SHARE 0.25
#define OTHERS_MIN_BYTES (16.0 * 1024 * 1024)

int nl_numad_pid_from(const char *pidfile)
{
	char path[NL_FS_PATH], *text = NULL;
	long pid;
	int rc = 0;

	if (nl_proc_slurp(pidfile, &text, NULL) < 0)
		return 0;
	pid = strtol(text, NULL, 10);
	free(text);
	if (pid <= 0 || pid > 4194304)
		return 0;
	nl_fs_path(path, sizeof(path), "/proc/%ld/comm", pid);
	if (nl_proc_slurp(path, &text, NULL) < 0)
		return 0; /* a pid file left behind */
	if (!strcmp(text, "numad\n"))
		rc = (int)pid;
	free(text);
	return rc;
}

int nl_numad_pid(void)
{
	char path[NL_FS_PATH];
	/* Under the tests' saved tree too (docs/real-node.md, "Saved
	 * trees"). */
	if (nl_fs_path(path, sizeof(path), "%s", NL_NUMAD_PIDFILE) < 0)
		return 0;
	return nl_numad_pid_from(path);
}

void nl_real_let_go(struct real *r, struct rproc *p, int give_back,
		    const char *fmt, ...)
{
	va_list ap;

	if (give_back) {
		/* Only the bindings still numalot's: another program's stay. */
		hwloc_bitmap_t cur = hwloc_bitmap_alloc();
		for (size_t i = 0; i < r->nth; i++) {
			struct rthread *t = &r->th[i];
			if (t->pid == p->info.pid && t->placed &&
			    (!cur ||
			     hwloc_get_proc_cpubind(r->live, t->tid, cur,
						    HWLOC_CPUBIND_THREAD) < 0 ||
			     !hwloc_bitmap_isequal(cur, t->seen_os)))
				t->placed = 0;
		}
		hwloc_bitmap_free(cur);
		nl_real_release_pid(r, p->info.pid);
	}
	va_start(ap, fmt);
	vsnprintf(p->info.real.let_go, sizeof(p->info.real.let_go), fmt, ap);
	va_end(ap);
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

double nl_pages_moved_by_others(const double *before, const double *after,
				int n, double own, int *from, int *to)
{
	double lost = 0, gained = 0, most_lost = 0, most_gained = 0, moved;

	*from = *to = -1;
	for (int i = 0; i < n; i++) {
		double d = after[i] - before[i];
		if (d < 0) {
			lost -= d;
			if (-d > most_lost) {
				most_lost = -d;
				*from = i;
			}
		} else if (d > 0) {
			gained += d;
			if (d > most_gained) {
				most_gained = d;
				*to = i;
			}
		}
	}
	moved = (lost < gained ? lost : gained) - own;
	return moved > 0 ? moved : 0;
}

double nl_policy_changed(double own_was, double all_was, double own_now,
			 double all_now)
{
	double changed = fabs(own_now - own_was) - fabs(all_now - all_was);
	return changed > 0 ? changed : 0;
}

/* NUMA balancing on (the kernel moves pages too): 1, 0 off, -1 unknown. */
static int balancing(void)
{
	char path[NL_FS_PATH], *text = NULL;
	int on = -1;

	nl_fs_path(path, sizeof(path), "/proc/sys/kernel/numa_balancing");
	if (nl_proc_slurp(path, &text, NULL) == 0)
		on = atoi(text) != 0;
	free(text);
	return on;
}

void nl_real_check_pages(struct real *r, struct rproc *p, const double *before,
			 double own_share, double faults)
{
	const struct nl_topology *t = r->m.topo;
	double page = (double)sysconf(_SC_PAGESIZE), was = 0, all = 0;
	double moved, changed, min = OTHERS_MIN_BYTES / page;
	double own_was = p->own_share;
	int from, to, numad = 0;

	for (int n = 0; n < t->nnodes; n++) {
		was += before[n];
		all += p->pages[n];
	}
	/* numalot's own moves and the pages the process faulted in (new
	 * ones, or NUMA balancing's: a hinting fault each) are not a
	 * placer's. */
	moved = nl_pages_moved_by_others(before, p->pages, t->nnodes,
					 p->moved_since / page + faults, &from,
					 &to);
	changed = nl_policy_changed(own_was * was, was, own_share * all, all);
	p->moved_since = 0;
	p->own_share = own_share;
	if (from >= 0 && to >= 0 && moved > OTHERS_SHARE * all &&
	    moved >= min &&
	    ((numad = nl_numad_pid()) > 0 || balancing() == 0)) {
		char who[40] = "";
		if (numad > 0)
			snprintf(who, sizeof(who), "numad (pid %d) runs and ",
				 numad);
		nl_real_let_go(r, p, 1,
			       "%s%.0f MiB of its pages moved from node %d to "
			       "node %d without numalot: numalot left the "
			       "process to it",
			       who, moved * page / 1048576, t->node_os[from],
			       t->node_os[to]);
	} else if (changed > OTHERS_SHARE * all && changed >= min) {
		/* mbind, set_mempolicy after numalot took it over: the
		 * process places its memory itself. */
		nl_real_let_go(r, p, 1,
			       "the memory policy of %.0f MiB of its pages "
			       "changed (%.0f%% under a policy of its own, "
			       "%.0f%% before): numalot left the process to it",
			       changed * page / 1048576, 100 * own_share,
			       100 * own_was);
	}
}
