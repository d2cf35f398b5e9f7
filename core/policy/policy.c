/*
 * numalot: the policy registry and the step every policy shares
 * (docs/algorithms.md; docs/architecture.md, "Adding a policy"). A policy
 * step is a pure function of a read-only view, the parameters, the state
 * it carries between steps, and a seeded generator.
 */
#include "policy_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The registry: each policy's hooks, by its row in policy_list.h. */
static const struct nl_policy_hooks *const registry[NL_POLICY_COUNT] = {
#define NL_POLICY(id, name, where, about, hooks) [NL_POLICY_##id] = &hooks,
#include "policy_list.h"
#undef NL_POLICY
};

int nl_policy_observes(enum nl_policy_kind k)
{
	return (unsigned)k < NL_POLICY_COUNT && registry[k]->observes;
}

int nl_policy_moves(enum nl_policy_kind k)
{
	return (unsigned)k < NL_POLICY_COUNT && registry[k]->candidates;
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

/* Busy threads by core (calloc'ed; NULL out of memory). */
static int *core_busy(const struct step *st)
{
	const struct nl_topology *topo = st->v->topo;
	int *busy = calloc((size_t)topo->ncores, sizeof(int));

	for (int c = 0; busy && c < topo->ncpus; c++)
		for (int u = st->head[c]; u >= 0; u = st->next[u])
			busy[topo->cpu_core[c]]++;
	return busy;
}

/* Plan thread i's move off its shared core to idle CPU to, as relief. */
static int plan_relief(struct step *st, int *busy, int i, int to,
		       const char *why)
{
	const struct nl_topology *topo = st->v->topo;
	int c = st->cpu[i], rc;

	busy[topo->cpu_core[c]]--;
	busy[topo->cpu_core[to]]++;
	st->moved[i] = 1;
	rc = nl_plan_add(st->plan,
			 &(struct nl_action){.kind = NL_ACT_MIGRATE,
					     .tid = st->v->threads[i].tid,
					     .other_tid = -1,
					     .from_cpu = c,
					     .to_cpu = to,
					     .relief = 1,
					     .reason = why});
	nl_step_occ_move(st, i, to);
	return rc;
}

/* The busy threads on thread i's core when numalot pinned it there, it
 * has not moved this step and another shares that core; else 0. */
static int pinned_shared(const struct step *st, const int *busy, int i)
{
	int c = st->cpu[i], k;

	if (!nl_step_in_domain(st, i) || !st->v->threads[i].pinned || c < 0 ||
	    st->moved[i])
		return 0;
	k = busy[st->v->topo->cpu_core[c]];
	return k < 2 ? 0 : k;
}

/* The busy threads on thread i's core when numalot did not pin it, its
 * own binding (numactl --cpunodebind, taskset) holds it and leaves no
 * wholly idle core the kernel could move it to, and another shares that
 * core; else 0. */
static int bound_shared(const struct step *st, const int *busy, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	const struct nl_topology *topo = st->v->topo;
	int c = st->cpu[i], k, d;

	if (!nl_step_in_domain(st, i) || t->pinned || !t->own || c < 0 ||
	    st->moved[i])
		return 0;
	k = busy[topo->cpu_core[c]];
	hwloc_bitmap_foreach_begin(d, t->own)
	{
		if (d >= topo->ncpus)
			break;
		if (!busy[topo->cpu_core[d]]) {
			k = 0;
			break;
		}
	}
	hwloc_bitmap_foreach_end();
	return k < 2 ? 0 : k;
}

/*
 * A thread numalot pinned whose core another busy thread shares, while a
 * core of its node it may use is wholly idle: pinned, it cannot take that
 * core as the kernel's select_idle_core would (the core emptied since it
 * was put there), so it goes there. An idle core on another node would
 * cost it its memory's node: relieve_remote weighs that.
 */
static int relieve_shared_cores(struct step *st)
{
	const struct nl_topology *topo = st->v->topo;
	int *busy = core_busy(st), rc = 0;

	if (!busy)
		return -ENOMEM;
	for (int i = 0; i < st->v->nthreads && rc == 0; i++) {
		const struct nl_view_thread *t = &st->v->threads[i];
		int c = st->cpu[i], to = -1;
		if (!pinned_shared(st, busy, i))
			continue;
		for (int d = 0; d < topo->ncpus && to < 0; d++)
			if (!busy[topo->cpu_core[d]] &&
			    topo->cpu_node[d] == topo->cpu_node[c] &&
			    nl_step_allows(t, d))
				to = d;
		if (to >= 0)
			rc = plan_relief(st, busy, i, to,
					 "shared its core: to an idle core of "
					 "its node");
	}
	free(busy);
	return rc;
}

/*
 * A thread numalot pinned whose core k busy threads share, with no idle
 * core of its node left to it, while a core of another node it may use is
 * wholly idle (a process ended there): pinned, it cannot go as the
 * kernel's balancer would take it. There its compute gains up to k / Y(k)
 * and its memory's latency grows by at most the distance ratio, so it goes
 * to the idle core nearest its data when the gain is the larger or it is
 * compute-bound. Only with op counts, and judged as a drawn move is
 * (rolled back, watched): what it costs the thread's memory shows only in
 * its ops (docs/algorithms.md, "SMT").
 */
static int relieve_remote(struct step *st)
{
	const struct nl_topology *topo = st->v->topo;
	int *busy = core_busy(st), rc = 0;

	if (!busy)
		return -ENOMEM;
	for (int i = 0; i < st->v->nthreads && rc == 0; i++) {
		const struct nl_view_thread *t = &st->v->threads[i];
		int c = st->cpu[i], to = -1, k = pinned_shared(st, busy, i);
		int own, home;
		if (!k)
			k = bound_shared(st, busy, i);
		unsigned best = 0, here;
		if (!k || t->held || !t->has_perf || !t->tput_ops)
			continue;
		own = topo->cpu_node[c];
		home = t->preferred_node >= 0 ? t->preferred_node : own;
		here = nl_topology_distance(topo, home, own);
		for (int d = 0; d < topo->ncpus; d++) {
			unsigned dist;
			if (busy[topo->cpu_core[d]] || !nl_step_allows(t, d))
				continue;
			if (topo->cpu_node[d] == own && t->pinned) {
				to = -1; /* the node's own relief comes first */
				break;
			}
			dist = nl_topology_distance(topo, home,
						    topo->cpu_node[d]);
			if (to < 0 || dist < best)
				to = d, best = dist;
		}
		if (to < 0 || !(nl_step_compute_bound(st, i) ||
				best * nl_smt_yield(k) < k * here))
			continue;
		rc = plan_relief(st, busy, i, to,
				 "shared its core: to an idle core of another "
				 "node");
		if (rc == 0)
			rc = nl_memo_add(
				st->s,
				&(struct nl_memo){t->tid, c, to, t->perf,
						  nl_step_judge_metric(st, i),
						  -1, t->pinned});
	}
	free(busy);
	return rc;
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
static int moves(struct step *st, const struct nl_policy_hooks *h,
		 struct nl_rng *rng)
{
	const struct nl_view *v = st->v;
	int *cand = malloc(sizeof(int) *
			   (size_t)(v->nthreads > 0 ? v->nthreads : 1));
	int ncand, rc = 0;

	if (!cand)
		return -ENOMEM;
	ncand = h->candidates(st, rng, cand);
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
				  h->judged || st->p->judge == NL_JUDGE_THREAD);
		planned += st->plan->n > before &&
			   st->plan->actions[before].kind != NL_ACT_SKIP;
	}
	if (rc == 0 && h->period)
		h->period(st, ncand);
	free(cand);
	return rc;
}

/* The paper's IMAR2/LBMA step, and numalot's (docs/algorithms.md). */
static int policy_moves(struct step *st, const struct nl_policy_hooks *h,
			struct nl_rng *rng)
{
	const struct nl_policy_params *p = st->p;
	int rc;

	if (p->oversub_release && oversubscribed(st))
		return release_all(st, "the domain's CPUs are oversubscribed: "
				       "threads handed back to the OS");
	if (p->dest == NL_DEST_DATA) {
		rc = release_crowded(st);
		if (rc == 0)
			rc = relieve_shared_cores(st);
		if (rc == 0)
			rc = nl_make_room(st);
		if (rc)
			return rc;
	}
	/* Every move is watched: LBMA's too, on numalot's judge (the
	 * paper's LBMA keeps whatever its draws did). */
	if (h->judged || p->judge == NL_JUDGE_THREAD) {
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
	if (p->dest == NL_DEST_DATA && p->remote_relief &&
	    (h->judged || p->judge == NL_JUDGE_THREAD)) {
		rc = relieve_remote(st);
		if (rc)
			return rc;
	}
	return moves(st, h, rng);
}

int nl_policy_step(enum nl_policy_kind k, const struct nl_policy_params *p,
		   const struct nl_view *v, struct nl_policy_state *s,
		   struct nl_rng *rng, struct nl_plan *plan)
{
	struct step st = {.v = v, .p = p, .s = s, .plan = plan};
	const struct nl_policy_hooks *h;
	int rc, first = s->steps == 0;

	if ((unsigned)k >= NL_POLICY_COUNT)
		return -EINVAL;
	h = registry[k];
	if (s->period_mult < 1)
		s->period_mult = 1;
	s->steps++;
	if (h->observes) {
		plan->next_period_s = p->period_s;
		return 0;
	}
	rc = step_alloc(&st);
	if (rc == 0 && (p->pin_new || h->pins_all))
		rc = pin_new(&st);
	/* A pinning first step has measured nothing pinned yet. */
	if (rc == 0 && h->candidates &&
	    !(first && (p->pin_new || p->judge == NL_JUDGE_TOTAL)))
		rc = policy_moves(&st, h, rng);
	if (rc > 0)
		rc = 0;
	/* A policy's longer periods, but not while the do-no-harm check has
	 * the domain with the OS: that lasts HARM_PERIODS short periods. */
	if (!h->period || s->harm_phase == 1)
		s->period_mult = 1;
	plan->next_period_s = p->period_s * s->period_mult;
	step_free(&st);
	return rc;
}
