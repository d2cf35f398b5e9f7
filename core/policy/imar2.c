/*
 * numalot: IMAR2 (docs/algorithms.md): the worst relative performers are
 * the candidates, every move is judged, and the period grows while there
 * is nothing to do.
 */
#include "policy_priv.h"

#include <errno.h>
#include <stdlib.h>

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
static int imar2_candidates(struct step *st, struct nl_rng *rng, int *cand)
{
	const struct nl_view *v = st->v;
	struct ranked *r = malloc(sizeof(*r) * (size_t)(v->nthreads + 1));
	int n = 0, below = 0;

	(void)rng;
	if (!r)
		return -ENOMEM;
	for (int i = 0; i < v->nthreads; i++)
		if (nl_step_has_reason(st, i)) {
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

/* IMAR2's period: shorter while moving, longer with nothing to do (on
 * numalot's judge; the paper's keeps period_s). */
static void imar2_period(struct step *st, int ncand)
{
	if (st->p->judge != NL_JUDGE_THREAD)
		return;
	if (ncand == 0)
		nl_step_lengthen(st->s, st->p->period_max_mult);
	else if (st->s->period_mult > 1)
		st->s->period_mult /= 2;
}

const struct nl_policy_hooks nl_imar2_hooks = {
	.judged = 1,
	.candidates = imar2_candidates,
	.period = imar2_period,
};
