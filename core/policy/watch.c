/*
 * numalot: every thread numalot placed stays watched while it stays where
 * it was put (docs/algorithms.md, "Watch"): a move judged good one period
 * after can turn bad when its neighbours change, and a pinned thread
 * cannot leave by itself.
 */
#include "policy_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Periods in a row below undo_threshold before a watched thread is
 * released: not one noisy period, nor the seconds its pages take to
 * follow it (a swap partner gathered away from its data). */
#define WATCH_LOW_PERIODS 5

int nl_watch_add(struct nl_policy_state *s, const struct nl_watch *w)
{
	for (size_t k = 0; k < s->nwatch; k++)
		if (s->watch[k].tid == w->tid) {
			s->watch[k] = *w;
			return 0;
		}
	if (s->nwatch == s->capwatch) {
		size_t c = s->capwatch ? s->capwatch * 2 : 16;
		struct nl_watch *x = realloc(s->watch, c * sizeof(*x));
		if (!x)
			return -ENOMEM;
		s->watch = x;
		s->capwatch = c;
	}
	s->watch[s->nwatch++] = *w;
	return 0;
}

static int release(struct step *st, int i)
{
	st->moved[i] = 1;
	return nl_plan_add(
		st->plan,
		&(struct nl_action){.kind = NL_ACT_RELEASE,
				    .tid = st->v->threads[i].tid,
				    .other_tid = -1,
				    .from_cpu = st->cpu[i],
				    .to_cpu = -1,
				    .reason = "watched since its move, it ran "
					      "slower than before it, or "
					      "behind its process with a CPU "
					      "free, for 5 periods: handed "
					      "back to the OS"});
}

static const struct nl_watch *watch_of(const struct nl_policy_state *s, int tid)
{
	for (size_t k = 0; k < s->nwatch; k++)
		if (s->watch[k].tid == tid)
			return &s->watch[k];
	return NULL;
}

static int back(struct step *st, int i, int to)
{
	int from = st->cpu[i];
	st->moved[i] = 1;
	nl_step_occ_move(st, i, to);
	return nl_plan_add(st->plan,
			   &(struct nl_action){
				   .kind = NL_ACT_ROLLBACK,
				   .tid = st->v->threads[i].tid,
				   .other_tid = -1,
				   .from_cpu = from,
				   .to_cpu = to,
				   .then_release = 1,
				   .reason = "watched since its swap, the pair "
					     "ran slower than before it for "
					     "5 periods: swapped back and "
					     "handed to the OS"});
}

/*
 * Watched thread i lost with its swap partner (w judged them as a pair):
 * when both are still where the swap put them, each alone on its CPU and
 * allowed on the other's, each goes back to the CPU it came from (the
 * other's) and to the OS, as a rollback undoes a move. Released where it
 * is, a thread stays there: the OS moves it only when a CPU is free (a
 * compute-bound partner swapped beside a thread that ran 10 s longer than
 * its old neighbour kept it 16 s, -14%: random seed 71993, scenario 109).
 * 1 when planned, with *rc.
 */
static int swap_back(struct step *st, const struct nl_watch *w, int i, int *rc)
{
	int j = w->partner >= 0 ? nl_step_find(st->v, w->partner) : -1;
	const struct nl_watch *wj = j >= 0 ? watch_of(st->s, w->partner) : NULL;
	if (!wj || st->moved[j] || !st->v->threads[j].pinned ||
	    st->cpu[j] != wj->cpu)
		return 0;
	int a = st->cpu[i], b = st->cpu[j];
	if (st->head[a] != i || st->next[i] >= 0 || st->head[b] != j ||
	    st->next[j] >= 0 || !nl_step_allows(&st->v->threads[i], b) ||
	    !nl_step_allows(&st->v->threads[j], a))
		return 0;
	*rc = back(st, i, b);
	if (*rc == 0)
		*rc = back(st, j, a);
	return 1;
}

/*
 * Compute-bound thread i, relative throughput now, runs behind its
 * process's others while a CPU of its own binding is free (a thread that
 * waits for its data to follow it lags too, and is not asked): pinned, it waits
 * for numalot, where the OS's balancer, which keeps to that binding, would have
 * taken that CPU (its neighbours changed since it was put there).
 */
static int lagging(const struct step *st, int i, double now)
{
	const struct nl_view *v = st->v;
	int siblings = 0;
	for (int j = 0; j < v->nthreads && siblings < 2; j++)
		siblings += v->threads[j].pid == v->threads[i].pid &&
			    v->threads[j].has_perf;
	return siblings > 1 && now < st->p->undo_threshold &&
	       nl_step_compute_bound(st, i) && nl_step_own_free_cpu(st, i);
}

/* Thread w's metric now over before; with its swap partner still where
 * the swap put it, the pair's geometric mean (rollback.c). */
static double ratio(const struct step *st, const struct nl_watch *w, double now)
{
	double r = now / w->before;
	int j = w->partner >= 0 ? nl_step_find(st->v, w->partner) : -1;
	if (j >= 0 && st->v->threads[j].pinned && st->v->threads[j].has_perf &&
	    st->v->threads[j].tput_ops)
		r = sqrt(r * nl_step_judge_metric(st, j) / w->partner_before);
	return r;
}

int nl_watch_step(struct step *st)
{
	struct nl_policy_state *s = st->s;
	size_t kept = 0;
	int rc = 0;

	for (size_t j = 0; j < s->nwatch; j++) {
		struct nl_watch w = s->watch[j];
		int i = nl_step_find(st->v, w.tid);
		/* Gone, handed back, or moved since: no longer numalot's
		 * placement to answer for. */
		if (i < 0 || !st->v->threads[i].pinned || st->cpu[i] != w.cpu)
			continue;
		const struct nl_view_thread *t = &st->v->threads[i];
		if (rc == 0 && !st->moved[i] && t->has_share && !t->tput_ops &&
		    !nl_step_idle(st, i)) {
			/* Its progress where nothing else is measured. */
			double now = t->cpu_share * nl_step_core_share(st, i);
			if (w.before < 0)
				w.before = now;
			else
				w.low = now < st->p->undo_threshold * w.before
						? w.low + 1
						: 0;
		} else if (rc == 0 && !st->moved[i] && t->has_perf &&
			   t->tput_ops && !nl_step_idle(st, i)) {
			double now = nl_step_judge_metric(st, i);
			w.low = ratio(st, &w, now) < st->p->undo_threshold ||
						lagging(st, i, now)
					? w.low + 1
					: 0;
		}
		if (w.low >= WATCH_LOW_PERIODS) {
			if (!swap_back(st, &w, i, &rc))
				rc = release(st, i);
			continue;
		}
		s->watch[kept++] = w;
	}
	s->nwatch = kept;
	return rc;
}
