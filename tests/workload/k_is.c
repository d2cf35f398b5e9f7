/*
 * IS-like: integer keys sorted by buckets, as NPB IS: each thread counts
 * its keys by bucket, then scatters them to their places all over the
 * output (random-access writes), then sorts its buckets by counting.
 * Checked: the output in order, and the same keys as the input (a sum of
 * a hash of each, which any lost or changed key upsets).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

#define BUCKET_BITS 10
#define BUCKETS (1u << BUCKET_BITS)
#define MAXT 1024

struct is {
	size_t n;
	unsigned key_bits, shift;
	uint32_t *keys, *out;
	uint32_t (*hist)[BUCKETS]; /* [thread][bucket] */
	uint64_t sum_in;	   /* the input's multiset hash */
};

/* Key i: the mean of four uniforms, bell-shaped like NPB IS's keys. */
static uint32_t key(const struct is *s, size_t i)
{
	uint64_t h = wk_mix(i), m = (1ULL << s->key_bits) - 1;
	uint64_t k = (h & 0xffff) + (h >> 16 & 0xffff) + (h >> 32 & 0xffff) +
		     (h >> 48);
	return (uint32_t)((k * m) / (4 * 0xffffULL));
}

static int setup(struct wk_run *r)
{
	struct is *s = calloc(1, sizeof(*s));

	if (!s || r->nthreads > MAXT) {
		snprintf(r->verdict, sizeof(r->verdict), "%s",
			 !s ? "out of memory" : "at most 1024 threads");
		free(s);
		return -1;
	}
	r->data = s;
	s->n = r->bytes / 8;
	s->key_bits = s->n < (1u << 20) ? 19 : 23;
	s->shift = s->key_bits - BUCKET_BITS;
	s->keys = malloc(s->n * 4);
	s->out = malloc(s->n * 4);
	s->hist = malloc((size_t)r->nthreads * sizeof(*s->hist));
	if (!s->keys || !s->out || !s->hist || s->n < 1024) {
		snprintf(r->verdict, sizeof(r->verdict), "%s",
			 s->n < 1024 ? "size: at least 1024 keys"
				     : "out of memory");
		return -1;
	}
	for (size_t i = 0; i < s->n; i++)
		s->sum_in += wk_mix(key(s, i));
	snprintf(r->detail, sizeof(r->detail),
		 "%zu keys of %u bits, %u buckets, %.1f MiB", s->n, s->key_bits,
		 BUCKETS, (double)(s->n * 8) / 1048576);
	return 0;
}

static void init(struct wk_run *r, int tid)
{
	struct is *s = r->data;
	size_t lo, hi;

	wk_part(s->n, tid, r->nthreads, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		s->keys[i] = key(s, i);
		s->out[i] = 0;
	}
	memset(s->hist[tid], 0, sizeof(s->hist[tid]));
}

static void iterate(struct wk_run *r, int tid, int it)
{
	struct is *s = r->data;
	size_t lo, hi, blo, bhi, at = 0;
	size_t *next = malloc(BUCKETS * sizeof(size_t));
	uint32_t *count = calloc((size_t)1 << s->shift, sizeof(uint32_t));

	(void)it;
	if (!next || !count) {
		fprintf(stderr, "numalot-workload: is: out of memory\n");
		exit(1);
	}
	wk_part(s->n, tid, r->nthreads, &lo, &hi);
	memset(s->hist[tid], 0, sizeof(s->hist[tid]));
	for (size_t i = lo; i < hi; i++)
		s->hist[tid][s->keys[i] >> s->shift]++;
	wk_barrier(r);
	/* Where this thread's keys of each bucket go: after every key of
	 * the buckets below, and after the other threads' of this one. */
	for (unsigned b = 0; b < BUCKETS; b++) {
		size_t mine = at;
		for (int t = 0; t < r->nthreads; t++) {
			if (t == tid)
				mine = at;
			at += s->hist[t][b];
		}
		next[b] = mine;
	}
	for (size_t i = lo; i < hi; i++)
		s->out[next[s->keys[i] >> s->shift]++] = s->keys[i];
	wk_barrier(r);
	/* Its buckets, sorted by counting. */
	wk_part(BUCKETS, tid, r->nthreads, &blo, &bhi);
	at = 0;
	for (unsigned b = 0; b < blo; b++)
		for (int t = 0; t < r->nthreads; t++)
			at += s->hist[t][b];
	for (size_t b = blo; b < bhi; b++) {
		size_t len = 0, w = at;
		for (int t = 0; t < r->nthreads; t++)
			len += s->hist[t][b];
		for (size_t i = at; i < at + len; i++)
			count[s->out[i] & ((1u << s->shift) - 1)]++;
		for (uint32_t v = 0; v < 1u << s->shift; v++)
			for (; count[v]; count[v]--)
				s->out[w++] = (uint32_t)(b << s->shift | v);
		at += len;
	}
	wk_barrier(r); /* hist is read until here */
	free(next);
	free(count);
}

static void inject(struct wk_run *r)
{
	struct is *s = r->data;
	s->out[s->n / 2] ^= 1;
}

static int verify(struct wk_run *r)
{
	struct is *s = r->data;
	size_t disorder = 0;
	uint64_t sum = 0;

	for (size_t i = 0; i < s->n; i++) {
		sum += wk_mix(s->out[i]);
		disorder += i && s->out[i - 1] > s->out[i];
	}
	snprintf(r->verdict, sizeof(r->verdict),
		 "%zu key%s out of order, the keys %s the input's", disorder,
		 disorder == 1 ? "" : "s",
		 sum == s->sum_in ? "are" : "ARE NOT");
	return disorder == 0 && sum == s->sum_in ? 0 : -1;
}

/* Millions of keys ranked. */
static double work(const struct wk_run *r)
{
	const struct is *s = r->data;
	return (double)r->iterations * (double)s->n / 1e6;
}

static void cleanup(struct wk_run *r)
{
	struct is *s = r->data;
	free(s->keys);
	free(s->out);
	free(s->hist);
	free(s);
}

/* The keys, by thread. */
static const void *region(const struct wk_run *r, size_t *bytes)
{
	const struct is *s = r->data;
	*bytes = s->n * 4;
	return s->keys;
}

const struct wk_kernel wk_is = {
	.name = "is",
	.about = "IS-like: a bucket sort of integer keys, scattered to their "
		 "places (random access)",
	.unit = "Mkeys/s",
	.iterations = 10,
	.setup = setup,
	.init = init,
	.iterate = iterate,
	.inject = inject,
	.verify = verify,
	.work = work,
	.cleanup = cleanup,
	.region = region,
};
