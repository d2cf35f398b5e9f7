/*
 * numalot: the engine's page step. Page placement (page_placement.c) plans
 * each process's page moves, one at a time (how much the last one moved
 * decides the next); the engine applies them through the machine, checked
 * and journalled as thread moves are, one process after the other.
 */
#include "engine_priv.h"

#include <errno.h>
#include <stdlib.h>

#include "util.h"

static int read_pages(void *ctx, int pid, double *pages)
{
	struct nl_machine *m = ctx;
	return m->ops->node_pages(m, pid, pages);
}

/* Journal a's event with bytes and reason of its own. */
static int journal_as(struct edomain *d, const struct nl_action *a,
		      double bytes, const char *reason, double now)
{
	struct nl_action j = *a;
	j.bytes = bytes;
	j.reason = reason;
	return nl_engine_journal(d, &j, now, NULL, a->pid, -1);
}

/* Apply one page action: 0 (*moved: the bytes moved), 1 when that
 * process's next moves are not to be tried (refused, gone, nothing moved),
 * or a negative errno. */
static int apply_pages(struct nl_engine *e, struct edomain *d,
		       const struct nl_action *a, double now, double *moved)
{
	struct eprocess *p = nl_engine_proc(e, a->pid);
	int n = e->m->topo->nnodes, rc, jr;
	double t0;

	*moved = 0;
	/* Only the pages of this domain's processes, between its nodes. */
	if (!p || p->domain != d->id) {
		d->sum.skips++;
		jr = nl_engine_journal(d, a, now, "not a process of this job",
				       a->pid, -1);
		return jr ? jr : 1;
	}
	if (a->from_cpu < 0) /* a note: nothing moves */
		return nl_engine_journal(d, a, now, NULL, a->pid, -1);
	if (a->from_cpu >= n || a->to_cpu < 0 || a->to_cpu >= n) {
		d->sum.skips++;
		jr = nl_engine_journal(d, a, now, "no such node", a->pid, -1);
		return jr ? jr : 1;
	}
	t0 = nl_mono_s();
	/* Interleaved memory is a starting placement, as a CPU binding is,
	 * unless bindings are kept. */
	rc = e->m->ops->move_pages(
		e->m, a->pid, a->from_cpu, a->to_cpu, a->bytes,
		d->params.keep_bindings ? 0 : NL_PAGES_SOFT, moved);
	/* The host's time: none on the simulated node (its reports are the
	 * same for the same seed). */
	if (!e->m->modelled)
		p->pg.wall_s += nl_mono_s() - t0;
	if (rc == -EPERM) {
		p->pg.refused = 1;
		jr = journal_as(d, a, 0,
				d->params.keep_bindings
					? "its memory is placed by its own "
					  "policy (bindings kept): left as "
					  "asked"
					: "its memory is bound by its own "
					  "policy: left as asked",
				now);
		return jr ? jr : 1;
	}
	/* What moved counts even when the move stopped early (the process
	 * ended, a page could not go). */
	if (*moved > 0) {
		p->pg.bytes += *moved;
		p->pg.moves++;
		p->pg.judge = 1;
		jr = journal_as(d, a, *moved, a->reason, now);
		if (jr && rc >= 0)
			rc = jr;
	}
	if (rc < 0)
		return rc == -ESRCH ? 1 : rc;
	return rc || *moved <= 0;
}

/* Room for the domain's processes in e->scratch.pages; how many, or
 * -ENOMEM. */
static long domain_procs(struct nl_engine *e, const struct edomain *d)
{
	size_t k = 0;
	if (e->nprocs > e->scratch.cap_pages) {
		struct nl_pages_proc *n =
			realloc(e->scratch.pages, e->nprocs * sizeof(*n));
		if (!n)
			return -ENOMEM;
		e->scratch.pages = n;
		e->scratch.cap_pages = e->nprocs;
	}
	for (size_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].domain == d->id)
			e->scratch.pages[k++] = (struct nl_pages_proc){
				.pid = e->procs[i].pid, .st = &e->procs[i].pg};
	return (long)k;
}

int nl_engine_pages_step(struct nl_engine *e, struct edomain *d, double now,
			 struct nl_view_thread *vt, size_t n)
{
	int rc = 0;

	if (!e->m->ops->move_pages || !e->m->ops->node_pages)
		return 0;
	/* While the do-no-harm check has the domain with the OS, or the OS
	 * won it, pages are the OS's too: moved after threads just handed
	 * back, they cost the check and the return (docs/algorithms.md). */
	if (d->state.harm_phase == 1 || d->state.harm_passive)
		return 0;
	/* Where the thread moves just applied left them. */
	for (size_t i = 0; i < n; i++) {
		vt[i].cpu = e->live[i]->cpu;
		vt[i].moved_s = e->live[i]->moved_s;
	}
	struct nl_view v = {.topo = e->m->topo,
			    .threads = vt,
			    .nthreads = (int)n,
			    .domain = d->id,
			    .now_s = now};
	long np = domain_procs(e, d);
	if (np < 0)
		return (int)np;
	struct nl_pages_domain dm = {.params = &d->params,
				     .v = &v,
				     .procs = e->scratch.pages,
				     .nprocs = (size_t)np,
				     .read = read_pages,
				     .ctx = e->m};
	dm.oversub = !nl_pages_wanted(&dm);
	for (size_t k = 0; k < dm.nprocs && rc == 0; k++) {
		size_t next = e->plan.n;
		rc = nl_pages_plan(&dm, k, &e->plan);
		while (rc == 0 && next < e->plan.n) {
			double moved;
			rc = apply_pages(e, d, &e->plan.actions[next], now,
					 &moved);
			next = e->plan.n;
			if (rc == 0 && moved > 0)
				rc = nl_pages_moved(&dm, k, moved, &e->plan);
		}
		if (rc > 0) /* its next moves are not tried */
			rc = 0;
	}
	return rc;
}
