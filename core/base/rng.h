/* numalot: a small seeded pseudo-random generator (xoshiro256**). */
#ifndef NUMALOT_RNG_H
#define NUMALOT_RNG_H

#include <stdint.h>

/* Our own state, never the C library's global rand(): runs are repeatable. */
struct nl_rng {
	uint64_t s[4];
};

void nl_rng_seed(struct nl_rng *r, uint64_t seed);
uint64_t nl_rng_next(struct nl_rng *r);
/* Uniform double in [0, 1). */
double nl_rng_uniform(struct nl_rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t nl_rng_below(struct nl_rng *r, uint64_t n);

#endif
