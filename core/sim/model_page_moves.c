/*
 * numalot: page moves on the simulated node (docs/machine-model.md, "Page
 * moves"). A move takes a share of a process's pages on one node to
 * another: every thread's private data and the process's shared data in
 * the same proportion, as move_pages(2) over the whole address space
 * would. The process's threads wait while the pages are copied.
 */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int nl_model_move_pages(struct nl_model *m, int pid, int from, int to,
			double max_bytes, int interleaved_too, double *moved)
{
	int i = nl_model_proc_index(m, pid), n = m->topo->nnodes;
	struct nl_model_proc *pr;
	double on = 0, f, bytes;

	*moved = 0;
	if (i < 0)
		return -ESRCH;
	pr = &m->procs[i];
	if (!pr->started || pr->done)
		return -ESRCH;
	if (from < 0 || from >= n || to < 0 || to >= n || !(max_bytes >= 0))
		return -EINVAL;
	/* Bound by its own policy, or interleaved unless numalot may
	 * improve that: left as the user asked. */
	if (pr->spec.placement == NL_PLACE_BIND ||
	    (pr->spec.placement == NL_PLACE_INTERLEAVE && !interleaved_too))
		return -EPERM;
	if (from == to)
		return 0;
	for (int k = 0; k < pr->spec.nthreads; k++)
		on += pr->spec.kind.mem_bytes *
		      m->threads[pr->first_thread + k].data_frac[from];
	if (!(on > 0))
		return 0;
	f = fmin(1, max_bytes / on);
	bytes = f * on;
	pr->shared_frac[to] += pr->shared_frac[from] * f;
	pr->shared_frac[from] *= 1 - f;
	for (int k = 0; k < pr->spec.nthreads; k++) {
		struct nl_model_thread *t = &m->threads[pr->first_thread + k];
		t->priv_frac[to] += t->priv_frac[from] * f;
		t->priv_frac[from] *= 1 - f;
		nl_model_refresh_data(m, t);
		/* Its threads wait for the copy, shared out among them. */
		if (t->state == NL_T_RUNNING)
			t->stall_s +=
				bytes / m->p.page_move_bytes_per_s / pr->live;
	}
	m->pages_moved_bytes += bytes;
	*moved = bytes;
	return 0;
}
