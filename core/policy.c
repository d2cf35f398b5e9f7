/*
 * numalot: IMAR2, LBMA, monitor and static (docs/algorithms.md).
 * A policy step is a pure function of a read-only view, the parameters, the
 * state it carries between steps, and a seeded generator.
 */
#include "policy_priv.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "util.h"

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
	static char buf[64];

	if (!buf[0]) /* alphabetical: "imar2, lbma, monitor, static" */
		nl_names_join(policy_names, NL_POLICY_COUNT, 1, buf,
			      sizeof(buf));
	return buf;
}

const char *nl_action_name(enum nl_action_kind k)
{
	static const char *const names[] = {"pin",	"migrate", "swap",
					    "rollback", "skip",	   "release",
					    "stay",	"pages"};
	return (unsigned)k <= NL_ACT_PAGES ? names[k] : "?";
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

void nl_policy_state_init(struct nl_policy_state *s)
{
	memset(s, 0, sizeof(*s));
	s->period_mult = 1;
	s->harm_backoff = 1;
	s->harm_won = 1;
	s->harm_next_s = -1;
}

void nl_policy_state_free(struct nl_policy_state *s)
{
	free(s->last);
	free(s->saved);
	free(s->hp);
	free(s->watch);
	nl_policy_state_init(s);
}

static int plan_simple(struct step *st, enum nl_action_kind kind, int i, int to,
		       const char *reason)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	return nl_plan_add(st->plan, &(struct nl_action){.kind = kind,
							 .tid = t->tid,
							 .other_tid = -1,
							 .from_cpu = st->cpu[i],
							 .to_cpu = to,
							 .reason = reason});
}

/* Paper profile: pin every thread of the domain not yet pinned, to its CPU
 * or the first free allowed one if another thread holds that. */
static int pin_new(struct step *st)
{
	const struct nl_view *v = st->v;
	int ncpus = v->topo->ncpus, rc = 0;
	char *claimed = calloc((size_t)ncpus, 1);

	if (!claimed)
		return -ENOMEM;
	for (int i = 0; i < v->nthreads; i++)
		if ((v->threads[i].pinned || !nl_step_in_domain(st, i)) &&
		    !nl_step_idle(st, i) && st->cpu[i] >= 0)
			claimed[st->cpu[i]] = 1;
	for (int i = 0; i < v->nthreads && rc == 0; i++) {
		const struct nl_view_thread *t = &v->threads[i];
		int to = t->cpu;
		if (t->pinned || !nl_step_in_domain(st, i) ||
		    nl_step_idle(st, i))
			continue;
		if (to < 0 || claimed[to] || !nl_step_allows(t, to)) {
			int first_free = -1;
			for (int c = 0; c < ncpus && first_free < 0; c++)
				if (!claimed[c] && nl_step_allows(t, c))
					first_free = c;
			if (first_free >= 0)
				to = first_free;
			else if (to < 0 || !nl_step_allows(t, to))
				to = hwloc_bitmap_first(t->allowed);
		}
		if (to < 0)
			continue;
		claimed[to] = 1;
		rc = plan_simple(st, NL_ACT_PIN, i, to, "taken over");
		nl_step_occ_move(st, i, to);
		st->moved[i] = 1;
	}
	free(claimed);
	return rc;
}

/* Release every thread numalot pinned in the domain (back to the OS). */
static int release_all(struct step *st, const char *reason)
{
	int rc = 0;
	for (int i = 0; i < st->v->nthreads && rc == 0; i++)
		if (nl_step_in_domain(st, i) && st->v->threads[i].pinned) {
			rc = plan_simple(st, NL_ACT_RELEASE, i, -1, reason);
			st->moved[i] = 1;
		}
	return rc;
}

/*
 * More busy threads on the domain's CPUs than CPUs: time-sharing, where
 * the OS balancer does better than fixed pins (docs/algorithms.md).
 */
static int oversubscribed(const struct step *st)
{
	const struct nl_view *v = st->v;
	hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
	int busy = 0, n;

	if (!cpus)
		return 0;
	for (int i = 0; i < v->nthreads; i++)
		if (nl_step_in_domain(st, i) && v->threads[i].allowed)
			hwloc_bitmap_or(cpus, cpus, v->threads[i].allowed);
	for (int i = 0; i < v->nthreads; i++)
		busy += !nl_step_idle(st, i) && st->cpu[i] >= 0 &&
			hwloc_bitmap_isset(cpus, (unsigned)st->cpu[i]);
	n = hwloc_bitmap_weight(cpus);
	hwloc_bitmap_free(cpus);
	return n > 0 && busy > n;
}

static int shares_with_unpinned(const struct step *st, int i)
{
	for (int u = st->head[st->cpu[i]]; u >= 0; u = st->next[u])
		if (u != i && !st->v->threads[u].pinned)
			return 1;
	return 0;
}

/* A thread numalot pinned that shares its CPU with another busy thread is
 * handed back to the OS, whose balancer finds it a free CPU. */
static int release_crowded(struct step *st)
{
	int rc = 0;
	for (int i = 0; i < st->v->nthreads && rc == 0; i++) {
		int c = st->cpu[i];
		if (!nl_step_in_domain(st, i) || !st->v->threads[i].pinned ||
		    c < 0 || st->moved[i])
			continue;
		/* With a free CPU the policy moves it there, unless it is
		 * held (moved or undone recently), or shares with a thread
		 * numalot did not pin (whose own binding may leave it
		 * nowhere else: numalot's pin took its CPU): then the OS
		 * parts them. */
		if (!nl_step_crowded(st, i) ||
		    (nl_step_free_cpu(st, i) && !st->v->threads[i].held &&
		     !shares_with_unpinned(st, i)))
			continue;
		rc = plan_simple(st, NL_ACT_RELEASE, i, -1,
				 "shares its CPU: handed back to the OS");
		st->moved[i] = 1;
	}
	return rc;
}

/* Why thread i may be moved this step, if at all: its data is elsewhere,
 * or it shares its CPU (a binding the OS may not leave). */
static int has_reason(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	if (!nl_step_in_domain(st, i) || !t->has_perf || st->moved[i] ||
	    nl_step_idle(st, i) || st->cpu[i] < 0)
		return 0;
	if (st->p->dest == NL_DEST_ANY)
		return 1;
	int data = nl_step_data_node(st, i);
	/* A held thread may still go to its data node, found elsewhere since
	 * it moved, but never back to the node it left (docs/algorithms.md,
	 * hold_s). */
	if (t->held)
		return data >= 0 && data != t->left_node;
	return data >= 0 || nl_step_crowded_by_pins(st, i);
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

/*
 * IMAR2 candidates, worst relative perf first. Paper: the threads under
 * perf_threshold (none: the single worst one, with always_worst). Default:
 * every thread with a reason in its counters (data elsewhere).
 */
static int imar2_candidates(struct step *st, int *cand)
{
	const struct nl_view *v = st->v;
	struct ranked *r = malloc(sizeof(*r) * (size_t)(v->nthreads + 1));
	int n = 0, below = 0;

	if (!r)
		return -ENOMEM;
	for (int i = 0; i < v->nthreads; i++)
		if (has_reason(st, i)) {
			r[n++] = (struct ranked){v->threads[i].rel_perf,
						 v->threads[i].tid, i};
			below += v->threads[i].rel_perf < st->p->perf_threshold;
		}
	qsort(r, (size_t)n, sizeof(*r), cmp_rel);
	if (st->p->dest == NL_DEST_ANY) {
		if (below == 0 && st->p->always_worst && n > 0)
			below = 1;
		n = below;
	}
	if (n > st->p->max_migrations)
		n = st->p->max_migrations;
	for (int j = 0; j < n; j++)
		cand[j] = r[j].index;
	free(r);
	return n;
}

/* LBMA candidates: drawn uniformly at random among those with a reason. */
static int lbma_candidates(struct step *st, struct nl_rng *rng, int *cand)
{
	int n = 0, k;
	for (int i = 0; i < st->v->nthreads; i++)
		if (has_reason(st, i))
			cand[n++] = i;
	/* All of them in a random order: moves() takes the first
	 * max_migrations, and more while some of those could not move. */
	k = n;
	for (int j = 0; j < k; j++) { /* Fisher-Yates */
		int r = j + (int)nl_rng_below(rng, (uint64_t)(n - j));
		int x = cand[j];
		cand[j] = cand[r];
		cand[r] = x;
	}
	return k;
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
	st->opts = malloc(sizeof(*st->opts) * (size_t)(nc + 1));
	if (!st->cpu || !st->next || !st->moved || !st->head || !st->order ||
	    !st->opts)
		return -ENOMEM;
	st->owner_pid = -1;
	st->owner_node = -1;
	for (int c = 0; c < nc; c++)
		st->head[c] = -1;
	for (int i = st->v->nthreads - 1; i >= 0; i--) {
		int c = st->v->threads[i].cpu;
		st->cpu[i] = c >= 0 && c < nc ? c : -1;
		st->next[i] = -1;
		if (st->cpu[i] >= 0 && !nl_step_idle(st, i)) {
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

/* The policy's moves for this step (after takeover and rollback). */
static int moves(struct step *st, enum nl_policy_kind k, struct nl_rng *rng)
{
	const struct nl_view *v = st->v;
	int *cand = malloc(sizeof(int) *
			   (size_t)(v->nthreads > 0 ? v->nthreads : 1));
	int ncand, rc = 0;

	if (!cand)
		return -ENOMEM;
	ncand = k == NL_POLICY_IMAR2 ? imar2_candidates(st, cand)
				     : lbma_candidates(st, rng, cand);
	if (ncand < 0)
		rc = ncand;
	int quota = st->p->max_migrations, planned = 0;
	for (int j = 0; j < ncand && rc == 0; j++) {
		int i = cand[j];
		if (j >= quota && planned >= quota)
			break;
		if (st->moved[i] || st->cpu[i] < 0)
			continue;
		/* LBMA: past its first draws, only threads that can move. */
		if (j >= quota && !nl_step_can_move(st, i))
			continue;
		size_t before = st->plan->n;
		rc = nl_step_move(st, i, rng,
				  k == NL_POLICY_IMAR2 ||
					  st->p->judge == NL_JUDGE_THREAD);
		planned += st->plan->n > before &&
			   st->plan->actions[before].kind != NL_ACT_SKIP;
	}
	/* IMAR2's period: shorter while moving, longer with nothing to do. */
	if (rc == 0 && k == NL_POLICY_IMAR2 &&
	    st->p->judge == NL_JUDGE_THREAD) {
		if (ncand == 0)
			nl_step_lengthen(st->s, st->p->period_max_mult);
		else if (st->s->period_mult > 1)
			st->s->period_mult /= 2;
	}
	free(cand);
	return rc;
}

/* The paper's IMAR2/LBMA step, and numalot's (docs/algorithms.md). */
static int policy_moves(struct step *st, enum nl_policy_kind k,
			struct nl_rng *rng)
{
	const struct nl_policy_params *p = st->p;
	int rc;

	if (p->oversub_release && oversubscribed(st))
		return release_all(st, "the domain's CPUs are oversubscribed: "
				       "threads handed back to the OS");
	if (p->dest == NL_DEST_DATA) {
		rc = release_crowded(st);
		if (rc)
			return rc;
	}
	/* Every move is watched: LBMA's too, on numalot's judge (the
	 * paper's LBMA keeps whatever its draws did). */
	if (k == NL_POLICY_IMAR2 || p->judge == NL_JUDGE_THREAD) {
		rc = p->judge == NL_JUDGE_TOTAL ? nl_rollback_total(st)
						: nl_rollback_threads(st);
		if (rc == 0 && p->judge == NL_JUDGE_THREAD)
			rc = nl_watch_step(st);
		if (rc)
			return rc;
	}
	rc = nl_harm_check(st);
	if (rc)
		return rc > 0 ? 0 : rc;
	return moves(st, k, rng);
}

int nl_policy_step(enum nl_policy_kind k, const struct nl_policy_params *p,
		   const struct nl_view *v, struct nl_policy_state *s,
		   struct nl_rng *rng, struct nl_plan *plan)
{
	struct step st = {.v = v, .p = p, .s = s, .plan = plan};
	int rc, first = s->steps == 0;

	if (s->period_mult < 1)
		s->period_mult = 1;
	s->steps++;
	if (k == NL_POLICY_MONITOR) {
		plan->next_period_s = p->period_s;
		return 0;
	}
	rc = step_alloc(&st);
	if (rc == 0 && (p->pin_new || k == NL_POLICY_STATIC))
		rc = pin_new(&st);
	/* A pinning first step has measured nothing pinned yet. */
	if (rc == 0 && k != NL_POLICY_STATIC &&
	    !(first && (p->pin_new || p->judge == NL_JUDGE_TOTAL)))
		rc = policy_moves(&st, k, rng);
	if (rc > 0)
		rc = 0;
	/* IMAR2's longer periods, but not while the do-no-harm check has
	 * the domain with the OS: that lasts HARM_PERIODS short periods. */
	if (k != NL_POLICY_IMAR2 || s->harm_phase == 1)
		s->period_mult = 1;
	plan->next_period_s = p->period_s * s->period_mult;
	step_free(&st);
	return rc;
}
