/*
 * FT-like: a 2-D complex FFT by rows, an all-to-all transpose between
 * the threads, rows again and a transpose back, then the inverse the same
 * way, as NPB FT's transposes. Checked: spectral values against a direct
 * sum, and the round trip against the input.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

#define PROBES 4

struct ft {
	size_t n, logn;
	double complex *a, *b, *tw;   /* tw: e^(-2 pi i k / n), k < n/2 */
	double complex probe[PROBES]; /* of the first forward transform */
	size_t pk[PROBES][2];
};

/* The input, from its index alone. */
static double complex input(size_t n, size_t i, size_t j)
{
	uint64_t h = (uint64_t)i * n + j;
	return (wk_unit(2 * h) - 0.5) + I * (wk_unit(2 * h + 1) - 0.5);
}

static int setup(struct wk_run *r)
{
	struct ft *f = calloc(1, sizeof(*f));
	size_t n = 16;

	if (!f) {
		snprintf(r->verdict, sizeof(r->verdict), "out of memory");
		return -1;
	}
	r->data = f;
	while (2 * n * 2 * n * 32 <= r->bytes)
		n *= 2;
	if (n < (size_t)r->nthreads) {
		snprintf(r->verdict, sizeof(r->verdict),
			 "size: a row a thread at least (%zu rows)", n);
		return -1;
	}
	f->n = n;
	while ((1u << f->logn) < n)
		f->logn++;
	f->a = malloc(n * n * sizeof(double complex));
	f->b = malloc(n * n * sizeof(double complex));
	f->tw = malloc(n / 2 * sizeof(double complex));
	if (!f->a || !f->b || !f->tw) {
		snprintf(r->verdict, sizeof(r->verdict), "out of memory");
		return -1;
	}
	for (size_t k = 0; k < n / 2; k++)
		f->tw[k] = cexp(-2 * M_PI * I * (double)k / (double)n);
	for (int p = 0; p < PROBES; p++) {
		f->pk[p][0] = (size_t)(wk_mix(100 + p) % n);
		f->pk[p][1] = (size_t)(wk_mix(200 + p) % n);
	}
	f->pk[0][0] = f->pk[0][1] = 0; /* the mean */
	snprintf(r->detail, sizeof(r->detail), "%zu x %zu complex, %.1f MiB", n,
		 n, (double)(2 * n * n * sizeof(double complex)) / 1048576);
	return 0;
}

static void init(struct wk_run *r, int tid)
{
	struct ft *f = r->data;
	size_t lo, hi, n = f->n;

	wk_part(n, tid, r->nthreads, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		for (size_t j = 0; j < n; j++) {
			f->a[i * n + j] = input(n, i, j);
			f->b[i * n + j] = 0;
		}
}

/* In-place radix-2 FFT of one row; inverse: conjugate twiddles, 1/n. */
static void fft_row(const struct ft *f, double complex *x, int inverse)
{
	size_t n = f->n;

	for (size_t i = 1, j = 0; i < n; i++) {
		size_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j |= bit;
		if (i < j) {
			double complex t = x[i];
			x[i] = x[j];
			x[j] = t;
		}
	}
	for (size_t len = 2; len <= n; len <<= 1) {
		size_t step = n / len;
		for (size_t s = 0; s < n; s += len)
			for (size_t k = 0; k < len / 2; k++) {
				double complex w = f->tw[k * step];
				if (inverse)
					w = conj(w);
				double complex u = x[s + k];
				double complex v = x[s + k + len / 2] * w;
				x[s + k] = u + v;
				x[s + k + len / 2] = u - v;
			}
	}
	if (inverse)
		for (size_t i = 0; i < n; i++)
			x[i] /= (double)n;
}

/* Rows lo..hi of dst from the columns of src: every thread reads every
 * other's rows (the all-to-all). */
static void transpose(const struct ft *f, const double complex *src,
		      double complex *dst, size_t lo, size_t hi)
{
	size_t n = f->n;
	for (size_t i = lo; i < hi; i++)
		for (size_t j = 0; j < n; j++)
			dst[i * n + j] = src[j * n + i];
}

static void pass(struct wk_run *r, int tid, int inverse)
{
	struct ft *f = r->data;
	size_t lo, hi, n = f->n;

	wk_part(n, tid, r->nthreads, &lo, &hi);
	for (size_t i = lo; i < hi; i++)
		fft_row(f, f->a + i * n, inverse);
	wk_barrier(r);
	transpose(f, f->a, f->b, lo, hi);
	wk_barrier(r);
	for (size_t i = lo; i < hi; i++)
		fft_row(f, f->b + i * n, inverse);
	wk_barrier(r);
	transpose(f, f->b, f->a, lo, hi);
	wk_barrier(r);
}

static void iterate(struct wk_run *r, int tid, int it)
{
	struct ft *f = r->data;

	pass(r, tid, 0);
	if (it == 0) {
		if (tid == 0)
			for (int p = 0; p < PROBES; p++)
				f->probe[p] =
					f->a[f->pk[p][0] * f->n + f->pk[p][1]];
		wk_barrier(r); /* read before the inverse changes them */
	}
	pass(r, tid, 1);
}

static void inject(struct wk_run *r)
{
	struct ft *f = r->data;
	f->a[f->n * f->n / 2 + 1] += 1e-3;
}

static int verify(struct wk_run *r)
{
	struct ft *f = r->data;
	size_t n = f->n;
	double spec = 0, trip = 0, scale = 0;

	for (int p = 0; p < PROBES; p++) {
		double complex want = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++) {
				size_t ph =
					(f->pk[p][0] * i + f->pk[p][1] * j) % n;
				want += input(n, i, j) *
					(ph < n / 2 ? f->tw[ph]
						    : -f->tw[ph - n / 2]);
			}
		spec = fmax(spec, cabs(f->probe[p] - want));
		scale = fmax(scale, cabs(want));
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			trip = fmax(trip,
				    cabs(f->a[i * n + j] - input(n, i, j)));
	spec /= scale > 1 ? scale : 1;
	snprintf(r->verdict, sizeof(r->verdict),
		 "%d spectral values against a direct sum: %.2g; the round "
		 "trip against the input: %.2g (each at most 1e-9)",
		 PROBES, spec, trip);
	return spec <= 1e-9 && trip <= 1e-9 ? 0 : -1;
}

/* Mflop: 5 n^2 log2(n^2) a 2-D transform, two an iteration. */
static double work(const struct wk_run *r)
{
	const struct ft *f = r->data;
	double n2 = (double)f->n * (double)f->n;
	return (double)r->iterations * 2 * 5 * n2 * 2 * (double)f->logn / 1e6;
}

static void cleanup(struct wk_run *r)
{
	struct ft *f = r->data;
	free(f->a);
	free(f->b);
	free(f->tw);
	free(f);
}

/* The data, by rows. */
static const void *region(const struct wk_run *r, size_t *bytes)
{
	const struct ft *f = r->data;
	*bytes = f->n * f->n * sizeof(double complex);
	return f->a;
}

const struct wk_kernel wk_ft = {
	.name = "ft",
	.about = "FT-like: 2-D FFTs by rows with an all-to-all transpose "
		 "between the threads",
	.unit = "Mflop/s",
	.iterations = 4,
	.setup = setup,
	.init = init,
	.iterate = iterate,
	.inject = inject,
	.verify = verify,
	.work = work,
	.cleanup = cleanup,
	.region = region,
};
