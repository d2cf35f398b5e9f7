/*
 * EP-like: pairs of Gaussian deviates by Marsaglia's polar method,
 * counted by annulus, as NPB EP (compute-bound: almost no memory). The
 * random stream is cut in blocks, each from its own seed, so a block's
 * result is the same whichever thread made it: the check recomputes some
 * blocks and tests the totals against the normal distribution.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

#define BLOCK 65536 /* pairs a block */
#define RINGS 10

struct block {
	double sx, sy;
	uint64_t accepted;
	uint64_t q[RINGS];
};

struct ep {
	size_t nblocks;
	struct block *b;
};

static int setup(struct wk_run *r)
{
	struct ep *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(r->verdict, sizeof(r->verdict), "out of memory");
		return -1;
	}
	r->data = e;
	/* Its work from the size (a pair for every 4 bytes): EP holds no
	 * data to fill a node with, only a result a block. */
	e->nblocks = r->bytes / 4 / BLOCK;
	if (e->nblocks < (size_t)r->nthreads)
		e->nblocks = (size_t)r->nthreads;
	e->b = malloc(e->nblocks * sizeof(*e->b));
	if (!e->b) {
		snprintf(r->verdict, sizeof(r->verdict), "out of memory");
		return -1;
	}
	snprintf(r->detail, sizeof(r->detail),
		 "%zu blocks of %d pairs (%.3g pairs)", e->nblocks, BLOCK,
		 (double)e->nblocks * BLOCK);
	return 0;
}

static void init(struct wk_run *r, int tid)
{
	struct ep *e = r->data;
	size_t lo, hi;

	wk_part(e->nblocks, tid, r->nthreads, &lo, &hi);
	memset(e->b + lo, 0, (hi - lo) * sizeof(*e->b));
}

static void one_block(size_t k, struct block *out)
{
	uint64_t s = wk_mix(k + 1);
	struct block b = {0};

	for (int i = 0; i < BLOCK; i++) {
		/* xorshift64*: two uniforms in (-1, 1). */
		s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
		double x = 2 * (double)((s * 0x2545f4914f6cdd1dULL) >> 11) *
				   0x1.0p-53 -
			   1;
		s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
		double y = 2 * (double)((s * 0x2545f4914f6cdd1dULL) >> 11) *
				   0x1.0p-53 -
			   1;
		double t = x * x + y * y;
		if (t > 1 || t == 0)
			continue;
		double f = sqrt(-2 * log(t) / t), gx = x * f, gy = y * f;
		int l = (int)fmax(fabs(gx), fabs(gy));
		b.q[l < RINGS ? l : RINGS - 1]++;
		b.sx += gx;
		b.sy += gy;
		b.accepted++;
	}
	*out = b;
}

static void iterate(struct wk_run *r, int tid, int it)
{
	struct ep *e = r->data;
	size_t lo, hi;

	(void)it;
	wk_part(e->nblocks, tid, r->nthreads, &lo, &hi);
	for (size_t k = lo; k < hi; k++)
		one_block(k, &e->b[k]);
}

static void inject(struct wk_run *r)
{
	struct ep *e = r->data;
	e->b[e->nblocks - 1].sx += 1;
}

static int verify(struct wk_run *r)
{
	struct ep *e = r->data;
	double sx = 0, sy = 0, acc = 0, pairs = (double)e->nblocks * BLOCK;
	double p = M_PI / 4, sd_acc, sd_mean;
	size_t probe[4] = {0, e->nblocks / 3, e->nblocks / 2, e->nblocks - 1};
	uint64_t rings = 0;
	int same = 1;

	for (int i = 0; i < 4; i++) {
		struct block b;
		one_block(probe[i], &b);
		same &= !memcmp(&b, &e->b[probe[i]], sizeof(b));
	}
	for (size_t k = 0; k < e->nblocks; k++) {
		sx += e->b[k].sx;
		sy += e->b[k].sy;
		acc += (double)e->b[k].accepted;
		for (int l = 0; l < RINGS; l++)
			rings += e->b[k].q[l];
	}
	sd_acc = sqrt(pairs * p * (1 - p));
	sd_mean = 1 / sqrt(acc);
	snprintf(r->verdict, sizeof(r->verdict),
		 "4 blocks recomputed %s; %.0f pairs accepted (%.1f sd from "
		 "pi/4), rings %s, means %.2g and %.2g (%.1f and %.1f sd; at "
		 "most 6)",
		 same ? "alike" : "DIFFERENT", acc,
		 fabs(acc - pairs * p) / sd_acc,
		 rings == (uint64_t)acc ? "add up" : "DO NOT ADD UP", sx / acc,
		 sy / acc, fabs(sx / acc) / sd_mean, fabs(sy / acc) / sd_mean);
	return same && rings == (uint64_t)acc &&
			       fabs(acc - pairs * p) <= 6 * sd_acc &&
			       fabs(sx / acc) <= 6 * sd_mean &&
			       fabs(sy / acc) <= 6 * sd_mean
		       ? 0
		       : -1;
}

/* Millions of pairs. */
static double work(const struct wk_run *r)
{
	const struct ep *e = r->data;
	return (double)r->iterations * (double)e->nblocks * BLOCK / 1e6;
}

static void cleanup(struct wk_run *r)
{
	struct ep *e = r->data;
	free(e->b);
	free(e);
}

/* A result a block: nothing worth placing. */
static const void *region(const struct wk_run *r, size_t *bytes)
{
	(void)r;
	*bytes = 0;
	return NULL;
}

const struct wk_kernel wk_ep = {
	.name = "ep",
	.about = "EP-like: Gaussian pairs by the polar method, counted by "
		 "annulus (compute-bound)",
	.unit = "Mpairs/s",
	.iterations = 1,
	.setup = setup,
	.init = init,
	.iterate = iterate,
	.inject = inject,
	.verify = verify,
	.work = work,
	.cleanup = cleanup,
	.region = region,
};
