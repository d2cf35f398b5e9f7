/*
 * numalot: IMAR2's rollback, and LBMA's on numalot's judge: the moves of
 * the last step judged on their threads' own progress, or on the
 * domain's total (the paper's); undone where they lost
 * (docs/algorithms.md, "What numalot changes").
 */
#include "policy_priv.h"

#include <math.h>

static int plan_rollback(struct step *st, const struct nl_memo *m, int i,
			 const char *reason)
{
	const struct nl_policy_state *ps = st->s;
	int partner = m->pair >= 0 && (size_t)m->pair < ps->nlast
			      ? ps->last[m->pair].tid
			      : -1;
	int rc;
	if (st->moved[i] || st->cpu[i] != m->to_cpu ||
	    !nl_step_allows(&st->v->threads[i], m->from_cpu))
		return 0;
	/* Its old CPU is busy now (another thread went there, or it came
	 * from a CPU it shared): pinned back, it would share a CPU; the OS
	 * finds it one instead. */
	for (int u = st->head[m->from_cpu]; u >= 0; u = st->next[u])
		if (u != i && st->v->threads[u].tid != partner) {
			rc = nl_plan_add(
				st->plan,
				&(struct nl_action){
					.kind = NL_ACT_RELEASE,
					.tid = m->tid,
					.other_tid = -1,
					.from_cpu = m->to_cpu,
					.to_cpu = -1,
					.reason = "its move lost, and its old "
						  "CPU is busy: handed back to "
						  "the OS"});
			st->moved[i] = 1;
			return rc;
		}
	/* Undone is as it was: a thread the OS placed goes back to its old
	 * CPU and to the OS, whose balancers a pin there would stop. */
	rc = nl_plan_add(st->plan,
			 &(struct nl_action){.kind = NL_ACT_ROLLBACK,
					     .tid = m->tid,
					     .other_tid = -1,
					     .from_cpu = m->to_cpu,
					     .to_cpu = m->from_cpu,
					     .then_release = !m->was_pinned,
					     .reason = reason});
	nl_step_occ_move(st, i, m->from_cpu);
	st->moved[i] = 1;
	return rc;
}

/* The judge's ratio of memo k: its metric now over before (1 unknown). */
static double memo_ratio(const struct step *st, const struct nl_memo *m)
{
	int i = nl_step_find(st->v, m->tid);
	if (i < 0 || !st->v->threads[i].has_perf || !(m->judge_before > 0))
		return 1;
	/* Without op counts the metric is the CPU share, which says nothing
	 * of memory speed: a move for its data is not judged on it (on a
	 * busy machine its noise undid such moves). */
	if (st->p->judge == NL_JUDGE_THREAD && !st->v->threads[i].tput_ops)
		return 1;
	return nl_step_judge_metric(st, i) / m->judge_before;
}

/* A kept move whose thread has op counts: watched from now on (a swap's
 * threads as a pair, as they were judged). */
static int keep_watching(struct step *st, const struct nl_memo *m)
{
	const struct nl_policy_state *s = st->s;
	const struct nl_memo *o = m->pair >= 0 && (size_t)m->pair < s->nlast
					  ? &s->last[m->pair]
					  : NULL;
	int i = nl_step_find(st->v, m->tid);
	if (i < 0 || !(m->judge_before > 0))
		return 0;
	/* Only its CPU share measured: watched on that times its share of
	 * its core, from the first period it spends where it went. */
	if (!st->v->threads[i].tput_ops)
		return nl_watch_add(st->s, &(struct nl_watch){m->tid, m->to_cpu,
							      -1, 0, -1, 0});
	return nl_watch_add(
		st->s,
		&(struct nl_watch){m->tid, m->to_cpu, m->judge_before, 0,
				   o && o->judge_before > 0 ? o->tid : -1,
				   o ? o->judge_before : 0});
}

/*
 * Default rollback: each move of the last step is judged on its own
 * threads' relative perf (which a phase of the whole process does not
 * move); a swap is judged and undone as a pair, never split, on the
 * geometric mean of its two threads.
 */
int nl_rollback_threads(struct step *st)
{
	struct nl_policy_state *s = st->s;
	int undone = 0, rc = 0;

	for (size_t k = 0; k < s->nlast && rc == 0; k++) {
		const struct nl_memo *m = &s->last[k];
		double r = memo_ratio(st, m);
		int i = nl_step_find(st->v, m->tid);
		if (m->pair >= 0 && (size_t)m->pair < k)
			continue; /* judged with its partner */
		/* A swap is judged by its pair's geometric mean (taking the
		 * worse of the two undid more gathering than it saved). */
		if (m->pair >= 0 && (size_t)m->pair < s->nlast)
			r = sqrt(r * memo_ratio(st, &s->last[m->pair]));
		if (i >= 0 && r >= st->p->undo_threshold) {
			rc = keep_watching(st, m);
			if (rc == 0 && m->pair >= 0 &&
			    (size_t)m->pair < s->nlast)
				rc = keep_watching(st, &s->last[m->pair]);
			continue;
		}
		if (i < 0)
			continue;
		rc = plan_rollback(st, m, i, "the moved thread lost perf");
		if (rc == 0 && m->pair >= 0 && (size_t)m->pair < s->nlast) {
			const struct nl_memo *o = &s->last[m->pair];
			int j = nl_step_find(st->v, o->tid);
			if (j >= 0)
				rc = plan_rollback(
					st, o, j, "its swap partner lost perf");
		}
		undone++;
	}
	if (undone)
		nl_step_lengthen(s, st->p->period_max_mult);
	s->nlast = 0;
	return rc;
}

/*
 * The paper's rollback: when the domain's total perf (threads measured in
 * both periods) fell below undo_threshold x the previous one, undo the last
 * step's moves and end the step (returns 1). Adapts the period either way.
 */
int nl_rollback_total(struct step *st)
{
	const struct nl_view *v = st->v;
	struct nl_policy_state *s = st->s;
	double now = 0, before = 0, ratio;
	int maxm = st->p->period_max_mult, rc;

	for (int i = 0; i < v->nthreads; i++)
		if (nl_step_in_domain(st, i) && v->threads[i].has_perf &&
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
			int i = nl_step_find(v, m->tid);
			if (i < 0)
				continue;
			if (st->p->rollback == NL_ROLLBACK_LOSERS &&
			    v->threads[i].perf >= m->perf_before)
				continue;
			rc = plan_rollback(st, m, i,
					   "total perf fell below the undo "
					   "threshold");
			if (rc)
				return rc;
		}
		s->nlast = 0;
		nl_step_lengthen(s, maxm);
		return 1;
	}
	if (ratio < 1)
		nl_step_lengthen(s, maxm);
	else
		s->period_mult =
			s->period_mult / 2 < 1 ? 1 : s->period_mult / 2;
	s->nlast = 0;
	return 0;
}
