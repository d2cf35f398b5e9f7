/*
 * MG-like: a 7-point stencil swept over a periodic 3-D grid, two arrays
 * streamed through memory each sweep (bandwidth-bound), as the smoothing
 * of NPB MG. The grid starts as one Fourier mode, which each sweep scales
 * by a known factor: the check compares every point with it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

/* v = C0 u + C1 (the six neighbours of u). */
#define C0 0.5
#define C1 (1.0 / 12)
#define KX 1
#define KY 2
#define KZ 3

struct mg {
	size_t n; /* points a side */
	double *u, *v, *cx, *cy, *cz;
	double lambda; /* a sweep's factor on the mode */
};

static int setup(struct wk_run *r)
{
	struct mg *g = calloc(1, sizeof(*g));
	size_t n = (size_t)cbrt((double)r->bytes / 16);
	const double two_pi = 6.283185307179586;

	if (!g || n < 8 || (size_t)r->nthreads > n) {
		snprintf(r->verdict, sizeof(r->verdict), "%s",
			 !g ? "out of memory"
			    : "size: at least 8 points a side, and a plane a "
			      "thread");
		free(g);
		return -1;
	}
	r->data = g;
	g->n = n;
	g->u = malloc(n * n * n * 8);
	g->v = malloc(n * n * n * 8);
	g->cx = malloc(n * 8);
	g->cy = malloc(n * 8);
	g->cz = malloc(n * 8);
	if (!g->u || !g->v || !g->cx || !g->cy || !g->cz) {
		snprintf(r->verdict, sizeof(r->verdict), "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		g->cx[i] = cos(two_pi * KX * (double)i / (double)n);
		g->cy[i] = cos(two_pi * KY * (double)i / (double)n);
		g->cz[i] = cos(two_pi * KZ * (double)i / (double)n);
	}
	g->lambda = C0 + 2 * C1 *
				 (cos(two_pi * KX / (double)n) +
				  cos(two_pi * KY / (double)n) +
				  cos(two_pi * KZ / (double)n));
	snprintf(r->detail, sizeof(r->detail), "%zu^3 points, %.1f MiB", n,
		 (double)(2 * n * n * n * 8) / 1048576);
	return 0;
}

/* Thread tid's planes (z). */
static void planes(const struct wk_run *r, int tid, size_t *lo, size_t *hi)
{
	const struct mg *g = r->data;
	wk_part(g->n, tid, r->nthreads, lo, hi);
}

static void init(struct wk_run *r, int tid)
{
	struct mg *g = r->data;
	size_t lo, hi, n = g->n;

	planes(r, tid, &lo, &hi);
	for (size_t z = lo; z < hi; z++)
		for (size_t y = 0; y < n; y++)
			for (size_t x = 0; x < n; x++) {
				size_t i = (z * n + y) * n + x;
				g->u[i] = g->cx[x] * g->cy[y] * g->cz[z];
				g->v[i] = 0;
			}
}

static void iterate(struct wk_run *r, int tid, int it)
{
	struct mg *g = r->data;
	const double *s = it % 2 ? g->v : g->u;
	double *d = it % 2 ? g->u : g->v;
	size_t lo, hi, n = g->n, nn = n * n;

	planes(r, tid, &lo, &hi);
	for (size_t z = lo; z < hi; z++) {
		size_t zm = (z + n - 1) % n, zp = (z + 1) % n;
		for (size_t y = 0; y < n; y++) {
			size_t ym = (y + n - 1) % n, yp = (y + 1) % n;
			const double *c = s + z * nn + y * n;
			const double *a = s + z * nn + ym * n;
			const double *b = s + z * nn + yp * n;
			const double *e = s + zm * nn + y * n;
			const double *f = s + zp * nn + y * n;
			double *o = d + z * nn + y * n;
			o[0] = C0 * c[0] + C1 * (c[n - 1] + c[1] + a[0] + b[0] +
						 e[0] + f[0]);
			for (size_t x = 1; x < n - 1; x++)
				o[x] = C0 * c[x] +
				       C1 * (c[x - 1] + c[x + 1] + a[x] + b[x] +
					     e[x] + f[x]);
			o[n - 1] = C0 * c[n - 1] +
				   C1 * (c[n - 2] + c[0] + a[n - 1] + b[n - 1] +
					 e[n - 1] + f[n - 1]);
		}
	}
	wk_barrier(r); /* the next sweep reads every plane */
}

static double *result(const struct wk_run *r)
{
	const struct mg *g = r->data;
	return r->iterations % 2 ? g->v : g->u;
}

static void inject(struct wk_run *r)
{
	struct mg *g = r->data;
	result(r)[g->n * g->n * g->n / 2] += 1e-3;
}

static int verify(struct wk_run *r)
{
	struct mg *g = r->data;
	const double *res = result(r);
	double f = pow(g->lambda, r->iterations), worst = 0;
	size_t n = g->n;

	for (size_t z = 0; z < n; z++)
		for (size_t y = 0; y < n; y++)
			for (size_t x = 0; x < n; x++) {
				double want =
					f * g->cx[x] * g->cy[y] * g->cz[z];
				double d =
					fabs(res[(z * n + y) * n + x] - want);
				worst = d > worst ? d : worst;
			}
	snprintf(r->verdict, sizeof(r->verdict),
		 "every point against the mode scaled by %.6f^%d: worst "
		 "difference %.2g (at most 1e-10)",
		 g->lambda, r->iterations, worst);
	return worst <= 1e-10 ? 0 : -1;
}

/* MB moved: a point read and written, 16 bytes a sweep (figure: MB/s). */
static double work(const struct wk_run *r)
{
	const struct mg *g = r->data;
	return (double)r->iterations * (double)(g->n * g->n * g->n) * 16 / 1e6;
}

static void cleanup(struct wk_run *r)
{
	struct mg *g = r->data;
	free(g->u);
	free(g->v);
	free(g->cx);
	free(g->cy);
	free(g->cz);
	free(g);
}

/* The first grid, by planes. */
static const void *region(const struct wk_run *r, size_t *bytes)
{
	const struct mg *g = r->data;
	*bytes = g->n * g->n * g->n * 8;
	return g->u;
}

const struct wk_kernel wk_mg = {
	.name = "mg",
	.about = "MG-like: a 7-point stencil streamed over a periodic 3-D grid "
		 "(bandwidth-bound)",
	.unit = "MB/s",
	.iterations = 20,
	.setup = setup,
	.init = init,
	.iterate = iterate,
	.inject = inject,
	.verify = verify,
	.work = work,
	.cleanup = cleanup,
	.region = region,
};
