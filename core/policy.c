/*
 * numalot: IMAR2, LBMA, monitor and static (docs/algorithms.md).
 * A policy step is a pure function of a read-only view, the parameters, the
 * state it carries between steps, and a seeded generator.
 */
#include "policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[NL_POLICY_COUNT] = {
	[NL_POLICY_MONITOR] = "monitor",
	[NL_POLICY_STATIC] = "static",
	[NL_POLICY_IMAR2] = "imar2",
	[NL_POLICY_LBMA] = "lbma",
};

const char *nl_policy_name(enum nl_policy_kind k)
{
	return (unsigned)k < NL_POLICY_COUNT ? policy_names[k] : "?";
}

int nl_policy_from_name(const char *name, enum nl_policy_kind *k)
{
	for (int i = 0; i < NL_POLICY_COUNT; i++)
		if (name && strcmp(name, policy_names[i]) == 0) {
			*k = (enum nl_policy_kind)i;
			return 0;
		}
	return -EINVAL;
}

const char *nl_policy_names(void)
{
	return "imar2, lbma, monitor, static";
}

const char *nl_action_name(enum nl_action_kind k)
{
	static const char *const names[] = {"pin", "migrate", "swap",
					    "rollback", "skip"};
	return (unsigned)k <= NL_ACT_SKIP ? names[k] : "?";
}

void nl_plan_init(struct nl_plan *p)
{
	memset(p, 0, sizeof(*p));
}

void nl_plan_clear(struct nl_plan *p)
{
	p->n = 0;
}

void nl_plan_free(struct nl_plan *p)
{
	free(p->actions);
	nl_plan_init(p);
}

static int plan_add(struct nl_plan *p, const struct nl_action *a)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct nl_action *n = realloc(p->actions, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->actions = n;
		p->cap = cap;
	}
	p->actions[p->n++] = *a;
	return 0;
}

void nl_policy_state_init(struct nl_policy_state *s)
{
	memset(s, 0, sizeof(*s));
	s->period_mult = 1;
}

void nl_policy_state_free(struct nl_policy_state *s)
{
	free(s->last);
	nl_policy_state_init(s);
}

static int memo_add(struct nl_policy_state *s, int tid, int from, int to,
		    double perf_before)
{
	if (s->nlast == s->caplast) {
		size_t cap = s->caplast ? s->caplast * 2 : 8;
		struct nl_memo *n = realloc(s->last, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->last = n;
		s->caplast = cap;
	}
	s->last[s->nlast++] = (struct nl_memo){tid, from, to, perf_before};
	return 0;
}

void nl_view_index(struct nl_view *v)
{
	for (int c = 0; c < v->topo->ncpus; c++)
		v->occ_head[c] = -1;
	/* Walk backwards so that each list comes out in thread order. */
	for (int i = v->nthreads - 1; i >= 0; i--) {
		int c = v->threads[i].cpu;
		v->occ_next[i] = -1;
		if (c >= 0 && c < v->topo->ncpus) {
			v->occ_next[i] = v->occ_head[c];
			v->occ_head[c] = i;
		}
	}
}

double nl_tickets_for(const struct nl_view *v, const struct nl_policy_params *p,
		      const struct nl_view_thread *t, int from_cpu, int to_cpu,
		      int to_free)
{
	const struct nl_tickets *tk = &p->tickets;
	int from = v->topo->cpu_node[from_cpu], to = v->topo->cpu_node[to_cpu];
	double rec, n;

	if (!t->has_perf ||
	    !nl_record_get(t->record, &p->perf, to, v->now_s, &rec))
		n = tk->no_record;
	else
		n = rec >= t->perf ? tk->better : tk->worse;
	if (to_free)
		n += tk->free_cpu;
	if (t->preferred_node >= 0 && t->preferred_node == to)
		n += tk->preferred * nl_topology_distance(v->topo, from, from) /
		     nl_topology_distance(v->topo, from, to);
	if (t->has_perf && t->rel_perf < p->perf_threshold)
		n += tk->underperforming;
	return n;
}

/* Scratch of one step: where each thread is as the plan unfolds. */
struct step {
	const struct nl_view *v;
	const struct nl_policy_params *p;
	struct nl_policy_state *s;
	struct nl_plan *plan;
	int *cpu;    /* [nthreads] */
	int *head;   /* [ncpus] occupancy lists over cpu[] */
	int *next;   /* [nthreads] */
	char *moved; /* [nthreads] */
	int *order;  /* [nnodes] nodes by distance */
	struct option {
		int cpu;
		int other;
		double tickets;
	} * opts; /* [ncpus] */
};

static void occ_remove(struct step *st, int i)
{
	int *pp = &st->head[st->cpu[i]];
	while (*pp != -1 && *pp != i)
		pp = &st->next[*pp];
	if (*pp == i)
		*pp = st->next[i];
}

static void occ_move(struct step *st, int i, int to)
{
	occ_remove(st, i);
	st->cpu[i] = to;
	st->next[i] = st->head[to];
	st->head[to] = i;
}

static int in_domain(const struct step *st, int i)
{
	return st->v->threads[i].domain == st->v->domain;
}

/*
 * An idle thread (a shell waiting for its child, a sleeping main thread)
 * that numalot has not pinned is left to the OS: it is not pinned, moved
 * or counted as occupying a CPU. Pinning it would pass the pin on to every
 * process and thread it starts (an OpenMP program would size itself to
 * one CPU).
 */
static int idle(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	return !t->pinned && t->has_share && t->cpu_share < st->p->idle_share;
}

static int allows(const struct nl_view_thread *t, int cpu)
{
	return t->allowed && hwloc_bitmap_isset(t->allowed, (unsigned)cpu);
}

/* Pin every thread of the domain not yet pinned: its CPU, or the first
 * free allowed one if another thread holds that (ALGORITHMS.md, IMAR2). */
static int pin_new(struct step *st)
{
	const struct nl_view *v = st->v;
	int ncpus = v->topo->ncpus, rc = 0;
	char *claimed = calloc((size_t)ncpus, 1);

	if (!claimed)
		return -ENOMEM;
	for (int i = 0; i < v->nthreads; i++)
		if ((v->threads[i].pinned || !in_domain(st, i)) &&
		    !idle(st, i) && st->cpu[i] >= 0)
			claimed[st->cpu[i]] = 1;
	for (int i = 0; i < v->nthreads && rc == 0; i++) {
		const struct nl_view_thread *t = &v->threads[i];
		int to = t->cpu;
		if (t->pinned || !in_domain(st, i) || idle(st, i))
			continue;
		if (to < 0 || claimed[to] || !allows(t, to)) {
			int first_free = -1;
			for (int c = 0; c < ncpus && first_free < 0; c++)
				if (!claimed[c] && allows(t, c))
					first_free = c;
			if (first_free >= 0)
				to = first_free;
			else if (to < 0 || !allows(t, to))
				to = hwloc_bitmap_first(t->allowed);
		}
		if (to < 0)
			continue;
		claimed[to] = 1;
		rc = plan_add(st->plan,
			      &(struct nl_action){.kind = NL_ACT_PIN,
						  .tid = t->tid,
						  .other_tid = -1,
						  .from_cpu = t->cpu,
						  .to_cpu = to,
						  .reason = "taken over"});
		if (st->cpu[i] >= 0)
			occ_move(st, i, to);
		else
			st->cpu[i] = to;
		st->moved[i] = 1;
	}
	free(claimed);
	return rc;
}

/* Nodes other than from, nearest first. */
static int nodes_by_distance(const struct nl_topology *topo, int from,
			     int *order)
{
	int n = 0;
	for (int d = 0; d < topo->nnodes; d++)
		if (d != from)
			order[n++] = d;
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i;
		while (j > 0 && nl_topology_distance(topo, from, order[j - 1]) >
					nl_topology_distance(topo, from, x)) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	return n;
}

/* Every move of thread i to another node, with its tickets. */
static int build_options(struct step *st, int i)
{
	const struct nl_view *v = st->v;
	const struct nl_topology *topo = v->topo;
	const struct nl_view_thread *t = &v->threads[i];
	int s = st->cpu[i], S = topo->cpu_node[s], n = 0;
	int nn = nodes_by_distance(topo, S, st->order);

	for (int k = 0; k < nn; k++) {
		for (int d = 0; d < topo->ncpus; d++) {
			if (topo->cpu_node[d] != st->order[k] || !allows(t, d))
				continue;
			if (st->head[d] < 0) {
				st->opts[n++] = (struct option){
					d, -1,
					nl_tickets_for(v, st->p, t, s, d, 1)};
				continue;
			}
			/* Occupied: a swap with the occupant worth most. */
			int best = -1;
			double best_tk = 0;
			for (int u = st->head[d]; u >= 0; u = st->next[u]) {
				const struct nl_view_thread *U = &v->threads[u];
				double tk;
				if (!in_domain(st, u) || st->moved[u] ||
				    !allows(U, s))
					continue;
				tk = nl_tickets_for(v, st->p, t, s, d, 0) +
				     nl_tickets_for(v, st->p, U, d, s, 0);
				if (tk > best_tk) {
					best = u;
					best_tk = tk;
				}
			}
			if (best >= 0)
				st->opts[n++] =
					(struct option){d, best, best_tk};
		}
	}
	return n;
}

static int choose(struct step *st, int n, struct nl_rng *rng, double *total)
{
	int pick = 0;
	*total = 0;
	for (int k = 0; k < n; k++)
		*total += st->opts[k].tickets;
	if (st->p->select == NL_SELECT_BEST) {
		for (int k = 1; k < n; k++)
			if (st->opts[k].tickets > st->opts[pick].tickets)
				pick = k;
		return pick;
	}
	/* Weighted lottery: probability proportional to tickets. */
	double x = nl_rng_uniform(rng) * *total;
	for (pick = 0; pick < n - 1; pick++) {
		x -= st->opts[pick].tickets;
		if (x < 0)
			break;
	}
	return pick;
}

static int move_one(struct step *st, int i, struct nl_rng *rng, int memo)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	int n = build_options(st, i), rc;
	struct nl_action a = {
		.tid = t->tid, .other_tid = -1, .from_cpu = st->cpu[i]};
	double total;

	if (n == 0) {
		a.kind = NL_ACT_SKIP;
		a.to_cpu = -1;
		a.reason = "no allowed CPU on another node to move or swap to";
		return plan_add(st->plan, &a);
	}
	int k = choose(st, n, rng, &total);
	struct option *o = &st->opts[k];
	a.to_cpu = o->cpu;
	a.tickets = o->tickets;
	a.total_tickets = total;
	if (o->other >= 0) {
		a.kind = NL_ACT_SWAP;
		a.other_tid = st->v->threads[o->other].tid;
		a.reason = "swap drawn";
	} else {
		a.kind = NL_ACT_MIGRATE;
		a.reason = "migration drawn";
	}
	if (st->p->select == NL_SELECT_BEST)
		a.reason = o->other >= 0 ? "best swap" : "best migration";
	rc = plan_add(st->plan, &a);
	if (rc == 0 && memo)
		rc = memo_add(st->s, t->tid, a.from_cpu, a.to_cpu, t->perf);
	if (rc == 0 && memo && o->other >= 0)
		rc = memo_add(st->s, a.other_tid, a.to_cpu, a.from_cpu,
			      st->v->threads[o->other].perf);
	if (o->other >= 0) {
		occ_move(st, o->other, a.from_cpu);
		st->moved[o->other] = 1;
	}
	occ_move(st, i, a.to_cpu);
	st->moved[i] = 1;
	return rc;
}

struct ranked {
	double rel_perf;
	int tid;
	int index;
};

static int cmp_rel(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->rel_perf != y->rel_perf)
		return x->rel_perf < y->rel_perf ? -1 : 1;
	return x->tid - y->tid;
}

/* IMAR2 candidates: under-performing threads, worst first; when none is,
 * the single worst one (always_worst). */
static int imar2_candidates(struct step *st, int *cand)
{
	const struct nl_view *v = st->v;
	struct ranked *r = malloc(sizeof(*r) * (size_t)(v->nthreads + 1));
	int n = 0;

	if (!r)
		return -ENOMEM;
	int below = 0;
	for (int i = 0; i < v->nthreads; i++)
		if (in_domain(st, i) && v->threads[i].has_perf &&
		    !st->moved[i] && !idle(st, i)) {
			r[n++] = (struct ranked){v->threads[i].rel_perf,
						 v->threads[i].tid, i};
			below += v->threads[i].rel_perf < st->p->perf_threshold;
		}
	qsort(r, (size_t)n, sizeof(*r), cmp_rel);
	/* The original IMAR2 always took the single worst thread; the later
	 * variant takes those below the threshold. Both, by parameter. */
	if (below == 0 && st->p->always_worst && n > 0)
		below = 1;
	n = below;
	if (n > st->p->max_migrations)
		n = st->p->max_migrations;
	for (int j = 0; j < n; j++)
		cand[j] = r[j].index;
	free(r);
	return n;
}

/* LBMA candidates: drawn uniformly at random. */
static int lbma_candidates(struct step *st, struct nl_rng *rng, int *cand)
{
	int n = 0, k;
	for (int i = 0; i < st->v->nthreads; i++)
		if (in_domain(st, i) && !st->moved[i] && !idle(st, i))
			cand[n++] = i;
	k = n < st->p->max_migrations ? n : st->p->max_migrations;
	for (int j = 0; j < k; j++) { /* partial Fisher-Yates */
		int r = j + (int)nl_rng_below(rng, (uint64_t)(n - j));
		int x = cand[j];
		cand[j] = cand[r];
		cand[r] = x;
	}
	return k;
}

static int find_thread(const struct nl_view *v, int tid)
{
	int lo = 0, hi = v->nthreads - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (v->threads[mid].tid == tid)
			return mid;
		if (v->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * IMAR2's rollback check. Returns 1 when it rolled back (the step ends),
 * 0 otherwise; adapts the period either way.
 */
static int imar2_rollback(struct step *st)
{
	const struct nl_view *v = st->v;
	struct nl_policy_state *s = st->s;
	double now = 0, before = 0, ratio;
	int maxm = st->p->period_max_mult;

	for (int i = 0; i < v->nthreads; i++)
		if (in_domain(st, i) && v->threads[i].has_perf &&
		    v->threads[i].has_prev) {
			now += v->threads[i].perf;
			before += v->threads[i].prev_perf;
		}
	if (!(before > 0))
		return 0;
	ratio = now / before;
	if (s->nlast > 0 && ratio < st->p->undo_threshold) {
		for (size_t k = 0; k < s->nlast; k++) {
			struct nl_memo *m = &s->last[k];
			int i = find_thread(v, m->tid);
			if (i < 0 || st->cpu[i] != m->to_cpu ||
			    !allows(&v->threads[i], m->from_cpu))
				continue;
			if (st->p->rollback == NL_ROLLBACK_LOSERS &&
			    v->threads[i].perf >= m->perf_before)
				continue;
			int rc = plan_add(
				st->plan,
				&(struct nl_action){
					.kind = NL_ACT_ROLLBACK,
					.tid = m->tid,
					.other_tid = -1,
					.from_cpu = m->to_cpu,
					.to_cpu = m->from_cpu,
					.reason = "total perf fell below the "
						  "undo threshold"});
			if (rc)
				return rc;
			occ_move(st, i, m->from_cpu);
		}
		s->nlast = 0;
		s->period_mult =
			s->period_mult * 2 > maxm ? maxm : s->period_mult * 2;
		return 1;
	}
	if (ratio < 1)
		s->period_mult =
			s->period_mult * 2 > maxm ? maxm : s->period_mult * 2;
	else
		s->period_mult =
			s->period_mult / 2 < 1 ? 1 : s->period_mult / 2;
	return 0;
}

static int step_alloc(struct step *st)
{
	int n = st->v->nthreads > 0 ? st->v->nthreads : 1;
	int nc = st->v->topo->ncpus;
	st->cpu = malloc(sizeof(int) * (size_t)n);
	st->next = malloc(sizeof(int) * (size_t)n);
	st->moved = calloc((size_t)n, 1);
	st->head = malloc(sizeof(int) * (size_t)nc);
	st->order = malloc(sizeof(int) * (size_t)st->v->topo->nnodes);
	st->opts = malloc(sizeof(*st->opts) * (size_t)nc);
	if (!st->cpu || !st->next || !st->moved || !st->head || !st->order ||
	    !st->opts)
		return -ENOMEM;
	for (int c = 0; c < nc; c++)
		st->head[c] = -1;
	for (int i = st->v->nthreads - 1; i >= 0; i--) {
		int c = st->v->threads[i].cpu;
		st->cpu[i] = c;
		st->next[i] = -1;
		if (c >= 0 && c < nc && !idle(st, i)) {
			st->next[i] = st->head[c];
			st->head[c] = i;
		}
	}
	return 0;
}

static void step_free(struct step *st)
{
	free(st->cpu);
	free(st->next);
	free(st->moved);
	free(st->head);
	free(st->order);
	free(st->opts);
}

int nl_policy_step(enum nl_policy_kind k, const struct nl_policy_params *p,
		   const struct nl_view *v, struct nl_policy_state *s,
		   struct nl_rng *rng, struct nl_plan *plan)
{
	struct step st = {.v = v, .p = p, .s = s, .plan = plan};
	int rc, ncand, first = s->steps == 0, *cand = NULL;

	if (s->period_mult < 1)
		s->period_mult = 1;
	s->steps++;
	if (k == NL_POLICY_MONITOR) {
		plan->next_period_s = p->period_s;
		return 0;
	}
	rc = step_alloc(&st);
	if (rc == 0)
		rc = pin_new(&st);
	if (rc || k == NL_POLICY_STATIC || first)
		goto out;

	if (k == NL_POLICY_IMAR2) {
		rc = imar2_rollback(&st);
		if (rc)
			goto out;
		s->nlast = 0;
	}
	cand = malloc(sizeof(int) *
		      (size_t)(v->nthreads > 0 ? v->nthreads : 1));
	if (!cand) {
		rc = -ENOMEM;
		goto out;
	}
	ncand = k == NL_POLICY_IMAR2 ? imar2_candidates(&st, cand)
				     : lbma_candidates(&st, rng, cand);
	if (ncand < 0)
		rc = ncand;
	for (int j = 0; j < ncand && rc == 0; j++)
		if (!st.moved[cand[j]] && st.cpu[cand[j]] >= 0)
			rc = move_one(&st, cand[j], rng, k == NL_POLICY_IMAR2);
out:
	if (rc > 0)
		rc = 0;
	if (k != NL_POLICY_IMAR2)
		s->period_mult = 1;
	plan->next_period_s = p->period_s * s->period_mult;
	free(cand);
	step_free(&st);
	return rc;
}
