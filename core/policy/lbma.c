/*
 * numalot: LBMA (docs/algorithms.md): candidates drawn at random among the
 * threads with a reason to move; its moves are judged on numalot's judge
 * only (the paper's LBMA keeps whatever its draws did).
 */
#include "policy_priv.h"

/* LBMA candidates: drawn uniformly at random among those with a reason. */
static int lbma_candidates(struct step *st, struct nl_rng *rng, int *cand)
{
	int n = 0, k;
	for (int i = 0; i < st->v->nthreads; i++)
		if (nl_step_has_reason(st, i))
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

const struct nl_policy_hooks nl_lbma_hooks = {
	.candidates = lbma_candidates,
};
