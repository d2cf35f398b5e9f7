/*
 * numalot: the engine's loop (docs/architecture.md): threads, sample, model,
 * policy, place, journal. It talks to the world only through the machine.
 */
#include "engine_priv.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nl_engine_create(struct nl_machine *m, struct nl_engine **out)
{
	struct nl_engine *e = calloc(1, sizeof(*e));
	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->m = m;
	e->due_slack_s = NL_DUE_SLACK_S;
	e->start_s = m->ops->now(m);
	nl_plan_init(&e->plan);
	*out = e;
	return 0;
}

void nl_engine_free(struct nl_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nall; i++) {
		hwloc_bitmap_free(e->all[i]->allowed);
		hwloc_bitmap_free(e->all[i]->own);
		free(e->all[i]);
	}
	free(e->all);
	free(e->live);
	free(e->live_key);
	for (size_t i = 0; i < e->ndomains; i++) {
		nl_policy_state_free(&e->domains[i].state);
		free(e->domains[i].events);
	}
	free(e->domains);
	free(e->procs);
	free(e->pidx.slot);
	nl_plan_free(&e->plan);
	free(e->scratch.vt);
	free(e->scratch.perf);
	free(e->scratch.rel);
	free(e->scratch.group);
	free(e->scratch.has);
	free(e->scratch.pages);
	free(e);
}

struct edomain *nl_engine_domain(struct nl_engine *e, int id)
{
	for (size_t i = 0; i < e->ndomains; i++)
		if (e->domains[i].id == id)
			return &e->domains[i];
	return NULL;
}

int nl_engine_add_domain(struct nl_engine *e, int domain, const char *name,
			 enum nl_policy_kind k,
			 const struct nl_policy_params *p, uint64_t seed)
{
	struct edomain *d;

	if (nl_engine_domain(e, domain))
		return -EEXIST;
	if ((unsigned)k >= NL_POLICY_COUNT || !(p->period_s > 0))
		return -EINVAL;
	d = realloc(e->domains, sizeof(*d) * (e->ndomains + 1));
	if (!d)
		return -ENOMEM;
	e->domains = d;
	d = &e->domains[e->ndomains++];
	memset(d, 0, sizeof(*d));
	d->id = domain;
	snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
	d->kind = k;
	d->params = *p;
	nl_rng_seed(&d->rng, seed);
	nl_policy_state_init(&d->state);
	d->first_s = e->m->ops->now(e->m);
	d->next_due_s = d->first_s + p->period_s;
	return 0;
}

/*
 * Keep a reading of pid's pages for the report's locality: its first and
 * its last. The engine reads pages only when it needs them anyway (the
 * policy's data node, page_shares), so that the report never changes what
 * a machine that caches its /proc readings (realmachine.c) tells the
 * policy; on a machine that measures node access the policy rarely asks,
 * and nl_engine_read_pages reads them after each step of a domain.
 */
static void note_pages(struct nl_engine *e, int pid, const double *pages)
{
	int n = e->m->topo->nnodes;
	double sum = 0, now = e->m->ops->now(e->m);
	struct eprocess *p = nl_engine_proc(e, pid);

	for (int k = 0; k < n; k++)
		sum += pages[k];
	if (!p || !(sum > 0))
		return;
	if (!p->pages_read) {
		memcpy(p->pages_first, pages, sizeof(double) * (size_t)n);
		p->pages_first_s = now;
	}
	memcpy(p->pages_last, pages, sizeof(double) * (size_t)n);
	p->pages_last_s = now;
	p->pages_read = 1;
}

void nl_engine_read_pages(struct nl_engine *e, const struct edomain *d)
{
	if (!e->m->ops->node_pages ||
	    !(e->m->modelled || (e->m->measured & NL_M_NODE_ACCESS)))
		return;
	for (size_t i = 0; i < e->nprocs; i++) {
		double pages[NL_MAX_NODES] = {0};
		if (e->procs[i].domain == d->id &&
		    e->m->ops->node_pages(e->m, e->procs[i].pid, pages) == 0)
			note_pages(e, e->procs[i].pid, pages);
	}
}

/* Fewer pages than this (1 MiB) say nothing of where a process's data
 * will be: a young process has touched its libraries and stack, not its
 * data (a thread moved towards those was then held away from its data). */
#define DATA_MIN_PAGES 256

/* Where pid's pages are, by share of node; the node holding most, or -1. */
static int page_shares(struct nl_engine *e, int pid, double *share)
{
	double pages[NL_MAX_NODES] = {0}, best = 0, total = 0;
	int node = -1;
	if (!e->m->ops->node_pages || e->m->ops->node_pages(e->m, pid, pages))
		return -1;
	note_pages(e, pid, pages);
	for (int i = 0; i < e->m->topo->nnodes; i++) {
		total += pages[i];
		if (pages[i] > best) {
			best = pages[i];
			node = i;
		}
	}
	for (int i = 0; i < e->m->topo->nnodes; i++)
		share[i] = total > 0 ? pages[i] / total : 0;
	return total >= DATA_MIN_PAGES ? node : -1;
}

/*
 * A thread's class by intensity against threshold thr, with hysteresis: it
 * changes class only when its OI passes thr by a factor of OI_BAND either
 * way, so a process whose phases straddle thr keeps one class
 * (docs/algorithms.md, "Thresholds"). +1 above, -1 below; the first
 * measured OI decides by the threshold itself.
 */
#define OI_BAND 1.41421356 /* sqrt(2): the band is a factor 2 wide */
static int oi_class(int cls, double oi, double thr)
{
	if (cls == 0)
		return oi > thr ? 1 : -1;
	if (cls > 0 && oi < thr / OI_BAND)
		return -1;
	if (cls < 0 && oi > thr * OI_BAND)
		return 1;
	return cls;
}

/* Step 3: the 3DyRM model of every thread of the domain. */
static void model_domain(struct nl_engine *e, struct edomain *d, double now,
			 struct ethread *const *mine, size_t nmine)
{
	const struct nl_topology *topo = e->m->topo;
	int last_pid = -1, last_node = -1;
	double pshare[NL_MAX_NODES] = {0};

	for (size_t i = 0; i < nmine; i++) {
		struct ethread *t = mine[i];
		struct nl_perf pf;
		struct nl_sample s; /* what nl_perf_compute reads of it */
		t->has_prev = t->has_perf;
		t->prev_perf = t->perf;
		if (!t->acc_added) {
			/* No sample this period (an idle thread read in
			 * turns): acc is as the last step left it, empty. */
			t->has_perf = 0;
			t->acc_measured = 0;
			continue;
		}
		t->acc_added = 0;
		nl_sample_sum_get(&t->acc, topo->nnodes, &s);
		t->has_perf = nl_perf_compute(&s, &d->params.perf, topo->nnodes,
					      &pf) == 0;
		int cpu = t->acc.cpu >= 0 ? t->acc.cpu : t->cpu;
		t->acc_measured = t->acc.measured;
		nl_sample_sum_clear(&t->acc, t->acc_nodes ? topo->nnodes : 0);
		t->acc_nodes = 0;
		if (!t->has_perf)
			continue;
		t->perf = pf.perf;
		t->has_share = (t->acc_measured & NL_M_TASK_CLOCK) != 0;
		t->cpu_share = pf.cpu_share;
		d->terms_seen |= pf.terms;
		t->process_share = pf.preferred_node < 0;
		if (pf.preferred_node < 0) {
			if (t->pid != last_pid) {
				last_pid = t->pid;
				last_node = page_shares(e, t->pid, pshare);
			}
			pf.preferred_node = last_node;
			memcpy(pf.share, pshare, sizeof(pf.share));
		}
		t->preferred_node = pf.preferred_node;
		t->pref_share = pf.preferred_node >= 0
					? pf.share[pf.preferred_node]
					: 0;
		t->here_share = 0;
		t->has_oi = (pf.terms & NL_T_OI) != 0;
		t->oi = pf.oi;
		if (t->has_oi) {
			t->compute_cls = oi_class(t->compute_cls, pf.oi,
						  d->params.compute_oi);
			t->compute_periods =
				t->compute_cls > 0 ? t->compute_periods + 1 : 0;
			t->bw_cls = oi_class(t->bw_cls, pf.oi,
					     d->params.page_bw_oi);
		}
		t->tput_ops = (pf.terms & NL_T_OPS) != 0;
		t->tput = t->tput_ops ? pf.ops_per_s : pf.cpu_share;
		if (cpu >= 0 && cpu < topo->ncpus) {
			nl_record_note(&t->record, topo->cpu_node[cpu], t->perf,
				       now);
			t->here_share = pf.share[topo->cpu_node[cpu]];
		}
		t->periods_measured++;
		t->sum_perf += pf.perf;
		if (pf.terms & NL_T_OPS) {
			t->sum_ops_per_s += pf.ops_per_s;
			t->n_ops++;
		}
		if (pf.terms & NL_T_OI) {
			t->sum_oi += pf.oi;
			t->n_oi++;
		}
		if (pf.terms & NL_T_LATENCY) {
			t->sum_latency_ns += pf.latency_ns;
			t->n_latency++;
		}
	}
}

int nl_engine_journal(struct edomain *d, const struct nl_action *a, double t_s,
		      const char *reason, int pid, int other_pid)
{
	if (d->nevents >= NL_MAX_EVENTS) {
		d->events_dropped++;
		return 0;
	}
	if (d->nevents == d->capevents) {
		size_t cap = d->capevents ? d->capevents * 2 : 64;
		struct event *n = realloc(d->events, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->events = n;
		d->capevents = cap;
	}
	d->events[d->nevents++] =
		(struct event){.t_s = t_s,
			       .kind = reason ? NL_ACT_SKIP : a->kind,
			       .tid = a->tid,
			       .other_tid = a->other_tid,
			       .pid = pid,
			       .other_pid = other_pid,
			       .from_cpu = a->from_cpu,
			       .to_cpu = a->to_cpu,
			       .tickets = a->tickets,
			       .total_tickets = a->total_tickets,
			       .bytes = a->bytes,
			       .reason = reason ? reason : a->reason};
	return 0;
}

static struct ethread *live_thread(struct nl_engine *e, int tid)
{
	size_t lo = 0, hi = e->nlive;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (e->live_key[mid].tid == tid)
			return e->live[mid];
		if (e->live_key[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Place one thread, never outside the CPUs it had when taken over. */
static const char *place(struct nl_engine *e, struct ethread *t, int cpu)
{
	int rc;
	if (!t || cpu < 0 || !hwloc_bitmap_isset(t->allowed, (unsigned)cpu))
		return "destination outside the thread's allowed CPUs";
	rc = e->m->ops->place(e->m, t->tid, cpu);
	if (rc == -ESRCH) {
		t->alive = 0;
		return "thread exited before the move";
	}
	if (rc < 0)
		return "the machine refused the move";
	if (!t->pinned)
		t->origin_cpu = t->cpu;
	t->cpu = cpu;
	t->pinned = 1;
	return NULL;
}

static int node_of(const struct nl_engine *e, int cpu)
{
	const struct nl_topology *topo = e->m->topo;
	return cpu >= 0 && cpu < topo->ncpus ? topo->cpu_node[cpu] : -1;
}

/* Step 5: apply the plan, journal what was done and what was not. */
static int apply(struct nl_engine *e, struct edomain *d, double now)
{
	int rc = 0;
	for (size_t i = 0; i < e->plan.n && rc == 0; i++) {
		const struct nl_action *a = &e->plan.actions[i];
		struct ethread *t = live_thread(e, a->tid);
		struct ethread *u = a->kind == NL_ACT_SWAP
					    ? live_thread(e, a->other_tid)
					    : NULL;
		const char *why = NULL;

		int pid = t ? t->pid : -1, upid = u ? u->pid : -1;
		if (a->kind == NL_ACT_SKIP || a->kind == NL_ACT_STAY) {
			d->sum.skips += a->kind == NL_ACT_SKIP;
			d->sum.stays += a->kind == NL_ACT_STAY;
			rc = nl_engine_journal(d, a, now, NULL, pid, upid);
			continue;
		}
		if (a->kind == NL_ACT_RELEASE) {
			/* Back where the OS had it first, when asked (the
			 * do-no-harm check compares with the OS's placement,
			 * not with numalot's left to the OS). */
			if (t && t->pinned && t->alive && a->to_cpu >= 0 &&
			    a->to_cpu != t->cpu &&
			    hwloc_bitmap_isset(t->allowed,
					       (unsigned)a->to_cpu) &&
			    e->m->ops->place(e->m, t->tid, a->to_cpu) == 0)
				t->cpu = a->to_cpu;
			if (t && t->pinned && t->alive)
				e->m->ops->release(e->m, t->tid);
			if (t)
				t->pinned = 0;
			d->sum.releases++;
			rc = nl_engine_journal(d, a, now, NULL, pid, upid);
			continue;
		}
		if (a->kind == NL_ACT_SWAP &&
		    (!u ||
		     !hwloc_bitmap_isset(u->allowed, (unsigned)a->from_cpu)))
			why = "swap partner may not use this CPU";
		if (!why)
			why = place(e, t, a->to_cpu);
		if (!why && u)
			why = place(e, u, a->from_cpu);
		if (why) {
			d->sum.skips++;
			rc = nl_engine_journal(d, a, now, why, pid, upid);
			continue;
		}
		/* The node it left, when it left it for its data: a move off
		 * a shared CPU, or one made before its data was found, does
		 * not keep it from its data's node (it may go back there
		 * once that has a free CPU; held, nothing else moves it). */
		t->left_node = t->preferred_node >= 0 && !a->relief
				       ? node_of(e, a->from_cpu)
				       : -1;
		t->moved_s = now;
		if (u) {
			u->left_node = u->preferred_node >= 0
					       ? node_of(e, a->to_cpu)
					       : -1;
			u->moved_s = now;
		}
		switch (a->kind) {
		case NL_ACT_PIN:
			t->hold_until_s = now + d->params.hold_s;
			d->sum.pins++;
			t->pins++;
			continue;
		case NL_ACT_MIGRATE:
			d->sum.migrations++;
			break;
		case NL_ACT_SWAP:
			d->sum.swaps++;
			u->migrations++;
			u->hold_until_s = now + d->params.hold_s;
			break;
		default:
			d->sum.rollbacks++;
			/* A move that did not pay: not tried again soon. */
			t->hold_until_s = now + 3 * d->params.hold_s;
			break;
		}
		if (a->kind != NL_ACT_ROLLBACK)
			t->hold_until_s = now + d->params.hold_s;
		else if (a->then_release &&
			 e->m->ops->release(e->m, t->tid) == 0)
			t->pinned = 0;
		t->migrations++;
		rc = nl_engine_journal(d, a, now, NULL, pid, upid);
	}
	return rc;
}

/* Steps 3-6 for one domain. */
/* Room for n + 1 threads in nl_engine_step_domain's arrays: every period needs
 * them, so they are kept rather than allocated each time. */
static int scratch_reserve(struct nl_engine *e, size_t n)
{
	if (n + 1 <= e->scratch.cap)
		return 0;
	size_t cap = e->scratch.cap ? e->scratch.cap : 64;
	while (cap < n + 1)
		cap *= 2;
	struct nl_view_thread *vt =
		realloc(e->scratch.vt, cap * sizeof(*e->scratch.vt));
	if (vt)
		e->scratch.vt = vt;
	double *perf = realloc(e->scratch.perf, cap * sizeof(double));
	if (perf)
		e->scratch.perf = perf;
	double *rel = realloc(e->scratch.rel, cap * sizeof(double));
	if (rel)
		e->scratch.rel = rel;
	int *group = realloc(e->scratch.group, cap * sizeof(int));
	if (group)
		e->scratch.group = group;
	unsigned char *has = realloc(e->scratch.has, cap);
	if (has)
		e->scratch.has = has;
	if (!vt || !perf || !rel || !group || !has)
		return -ENOMEM;
	e->scratch.cap = cap;
	return 0;
}

/* pid's memory is bound by its own policy (a page move was refused). */
static int mem_bound(struct nl_engine *e, int pid)
{
	struct eprocess *p = nl_engine_proc(e, pid);
	if (p && p->pg.refused)
		return 1;
	return e->m->ops->mem_bound && e->m->ops->mem_bound(e->m, pid) == 1;
}

/*
 * Step domain d: mine are its live threads, in tid order. Its policy sees
 * every thread of the node (where the other jobs' threads are), except
 * monitor, which looks at none: a step costs by its own threads then.
 */
/* Each of the domain's processes' live threads, and the most it had. */
static void count_threads(struct nl_engine *e, struct ethread *const *mine,
			  size_t nmine)
{
	struct eprocess *ep = NULL;
	for (size_t i = 0; i < nmine; i++)
		if ((ep = nl_engine_proc(e, mine[i]->pid)))
			ep->threads_now = 0;
	for (size_t i = 0; i < nmine; i++)
		if ((ep = nl_engine_proc(e, mine[i]->pid)))
			ep->threads_now++;
	for (size_t i = 0; i < nmine; i++)
		if ((ep = nl_engine_proc(e, mine[i]->pid)) &&
		    ep->threads_now > ep->threads_peak)
			ep->threads_peak = ep->threads_now;
}

int nl_engine_step_domain(struct nl_engine *e, struct edomain *d, double now,
			  struct ethread *const *mine, size_t nmine)
{
	size_t n = nl_policy_observes(d->kind) ? 0 : e->nlive;
	int rc = scratch_reserve(e, n > nmine ? n : nmine);

	if (rc < 0)
		return rc;
	struct nl_view_thread *vt = e->scratch.vt;
	double *perf = e->scratch.perf, *rel = e->scratch.rel;
	int *group = e->scratch.group;
	unsigned char *has = e->scratch.has;

	memset(&vt[n], 0, sizeof(*vt)); /* as calloc'd: one past the end */
	perf[n] = rel[n] = 0;
	group[n] = 0;
	has[n] = 0;
	d->threads_seen = nmine;
	model_domain(e, d, now, mine, nmine);
	/* Relative perf is per process of this domain: computed over its
	 * threads only (in tid order, as they are summed); the others' is 1,
	 * as it would be in a group of their own with no perf. So a step
	 * costs by its own threads, however many steps share the node. */
	size_t m = 0, j = 0;
	for (size_t i = 0; n > 0 && i < nmine; i++) {
		perf[m] = mine[i]->perf;
		group[m] = mine[i]->pid;
		has[m++] = mine[i]->has_perf;
	}
	nl_perf_relative(perf, group, has, (int)m, rel);
	count_threads(e, mine, nmine);
	int bound_pid = -1, bound = 0, held = 0, peak = 0;
	for (size_t i = 0; i < n; i++) {
		struct ethread *t = e->live[i];
		double rel_i = t->domain == d->id && j < m ? rel[j++] : 1.0;
		if (t->domain == d->id && t->pid != bound_pid) {
			struct eprocess *ep = nl_engine_proc(e, t->pid);
			bound_pid = t->pid;
			bound = mem_bound(e, t->pid);
			held = !d->params.pages ||
			       (ep && now < ep->pg.hold_until_s);
			peak = ep && ep->threads_now < ep->threads_peak
				       ? ep->threads_peak
				       : 0;
		}
		vt[i] = (struct nl_view_thread){
			.tid = t->tid,
			.pid = t->pid,
			.domain = t->domain,
			.cpu = t->cpu,
			.pinned = t->pinned,
			.origin_cpu = t->pinned ? t->origin_cpu : t->cpu,
			.has_perf = t->has_perf,
			.perf = t->perf,
			.rel_perf = rel_i,
			.has_prev = t->has_prev,
			.prev_perf = t->prev_perf,
			.preferred_node = t->preferred_node,
			.pref_share = t->pref_share,
			.here_share = t->here_share,
			.process_share = t->process_share,
			.threads_peak = t->domain == d->id ? peak : 0,
			.has_oi = t->has_oi,
			.oi = t->oi,
			.compute_cls = t->has_oi ? t->compute_cls : 0,
			.compute_periods = t->has_oi ? t->compute_periods : 0,
			.bw_cls = t->has_oi ? t->bw_cls : 0,
			.moved_s = t->moved_s,
			.held = now < t->hold_until_s,
			.left_node = now < t->hold_until_s ? t->left_node : -1,
			.mem_bound = t->domain == d->id && bound,
			.pages_held = t->domain == d->id && held,
			.tput = t->tput,
			.tput_ops = t->tput_ops,
			.has_share = t->has_share,
			.cpu_share = t->cpu_share,
			.record = &t->record,
			.allowed = t->allowed,
			.own = t->own,
		};
	}
	struct nl_view v = {
		.topo = e->m->topo,
		.threads = vt,
		.nthreads = (int)n,
		.domain = d->id,
		.now_s = now,
	};
	nl_plan_clear(&e->plan);
	rc = nl_policy_step(d->kind, &d->params, &v, &d->state, &d->rng,
			    &e->plan);
	if (rc == 0)
		rc = apply(e, d, now);
	if (rc == 0 && d->params.pages && nl_policy_moves(d->kind))
		rc = nl_engine_pages_step(e, d, now, vt, n);
	d->sum.periods++;
	d->next_due_s = now + (e->plan.next_period_s > 0 ? e->plan.next_period_s
							 : d->params.period_s);
	return rc;
}

void nl_engine_release(struct nl_engine *e, int domain)
{
	for (size_t i = 0; i < e->nlive; i++) {
		struct ethread *t = e->live[i];
		if ((domain < 0 || t->domain == domain) && t->pinned &&
		    t->alive) {
			e->m->ops->release(e->m, t->tid);
			t->pinned = 0;
		}
	}
}

int nl_engine_remove_domain(struct nl_engine *e, int domain)
{
	struct edomain *d = nl_engine_domain(e, domain);
	size_t j;

	if (!d)
		return -ENOENT;
	nl_engine_release(e, domain);
	j = 0;
	for (size_t i = 0; i < e->nlive; i++)
		if (e->live_key[i].domain != domain) {
			e->live_key[j] = e->live_key[i];
			e->live[j++] = e->live[i];
		}
	e->nlive = j;
	j = 0;
	for (size_t i = 0; i < e->nall; i++) {
		if (e->all[i]->domain == domain) {
			hwloc_bitmap_free(e->all[i]->allowed);
			hwloc_bitmap_free(e->all[i]->own);
			free(e->all[i]);
		} else {
			e->all[j++] = e->all[i];
		}
	}
	e->nall = j;
	j = 0;
	for (size_t i = 0; i < e->nprocs; i++) {
		if (e->procs[i].domain == domain) {
			if (e->m->ops->forget)
				e->m->ops->forget(e->m, e->procs[i].pid);
		} else {
			e->procs[j++] = e->procs[i];
		}
	}
	e->nprocs = j;
	e->pidx.stale = 1;
	nl_policy_state_free(&d->state);
	free(d->events);
	*d = e->domains[--e->ndomains];
	return 0;
}

int nl_engine_remove_process(struct nl_engine *e, int pid)
{
	size_t j = 0, k;

	for (k = 0; k < e->nprocs && e->procs[k].pid != pid; k++)
		;
	if (k == e->nprocs)
		return -ENOENT;
	for (size_t i = 0; i < e->nlive; i++) {
		struct ethread *t = e->live[i];
		if (t->pid == pid && t->pinned && t->alive)
			e->m->ops->release(e->m, t->tid);
		if (t->pid != pid) {
			e->live_key[j] = e->live_key[i];
			e->live[j++] = t;
		}
	}
	e->nlive = j;
	j = 0;
	for (size_t i = 0; i < e->nall; i++) {
		if (e->all[i]->pid == pid) {
			hwloc_bitmap_free(e->all[i]->allowed);
			hwloc_bitmap_free(e->all[i]->own);
			free(e->all[i]);
		} else {
			e->all[j++] = e->all[i];
		}
	}
	e->nall = j;
	if (e->m->ops->forget)
		e->m->ops->forget(e->m, pid);
	e->procs[k] = e->procs[--e->nprocs];
	e->pidx.stale = 1;
	return 0;
}

int nl_engine_domain_done(struct nl_engine *e, int domain)
{
	const struct nl_process_info *p;
	size_t n;

	if (!nl_engine_domain(e, domain))
		return -ENOENT;
	if (e->m->ops->processes(e->m, &p, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct eprocess *q =
			p[i].end_s < 0 ? nl_engine_proc(e, p[i].pid) : NULL;
		if (q && q->domain == domain)
			return 0;
	}
	return 1;
}

size_t nl_engine_ndomains(const struct nl_engine *e)
{
	return e->ndomains;
}

int nl_engine_summary(struct nl_engine *e, int domain,
		      struct nl_engine_summary *out)
{
	struct edomain *d = nl_engine_domain(e, domain);
	if (!d)
		return -ENOENT;
	*out = d->sum;
	return 0;
}

double nl_engine_takeover_cpu_s(const struct nl_engine *e)
{
	return e ? e->takeover_cpu_s : 0;
}

void nl_engine_lateness(const struct nl_engine *e, double *max_s,
			double *mean_s)
{
	*max_s = e ? e->late_max_s : 0;
	*mean_s = e && e->late_n ? e->late_sum_s / (double)e->late_n : 0;
}
