/*
 * CG-like: conjugate gradient on a sparse symmetric positive-definite
 * matrix whose columns are scattered at random, so that the matrix-vector
 * product waits on one remote-looking load after another (latency-bound),
 * as NPB CG does. Checked against a bound CG itself guarantees.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

#define HALF 6		   /* offsets, each both ways */
#define ROW (2 * HALF + 1) /* entries a row, the diagonal first */
#define MAXT 1024
/* Gershgorin: every eigenvalue is in [SHIFT, SHIFT + 2 x 2 HALF]. */
#define SHIFT 4.0

struct cg {
	size_t n;
	uint32_t *perm, *inv; /* a random relabelling of the rows */
	size_t off[HALF];
	uint32_t *col;
	double *val, *x, *r, *p, *q, *b;
	double part[2][MAXT], rho[MAXT];
};

/* Row i's true solution: the check knows it. */
static double x_true(size_t i)
{
	return 1 + (double)(i % 13) / 10;
}

/* The weight of the pair {i, j}: the same both ways (symmetric). */
static double weight(size_t i, size_t j)
{
	size_t lo = i < j ? i : j, hi = i < j ? j : i;
	return 0.1 + 0.9 * wk_unit(lo * 0x100000001b3ULL ^ hi);
}

/* Row i's columns and values, from the labelling only: A = P C P^T with
 * C circulant, so A is symmetric and its columns scattered. */
static void row(const struct cg *c, size_t i, uint32_t *col, double *val)
{
	size_t p = c->inv[i], n = c->n;
	double sum = 0;

	for (int k = 0; k < HALF; k++) {
		size_t j1 = c->perm[(p + c->off[k]) % n];
		size_t j2 = c->perm[(p + n - c->off[k]) % n];
		col[1 + 2 * k] = (uint32_t)j1;
		col[2 + 2 * k] = (uint32_t)j2;
		val[1 + 2 * k] = -weight(i, j1);
		val[2 + 2 * k] = -weight(i, j2);
		sum += weight(i, j1) + weight(i, j2);
	}
	col[0] = (uint32_t)i;
	val[0] = sum + SHIFT;
}

static int setup(struct wk_run *r)
{
	struct cg *c = calloc(1, sizeof(*c));
	size_t per_row = ROW * 12 + 6 * 8 + 8, n;

	n = r->bytes / per_row;
	if (!c || n < 64 || n > UINT32_MAX || r->nthreads > MAXT) {
		snprintf(r->verdict, sizeof(r->verdict), "%s",
			 !c		      ? "out of memory"
			 : r->nthreads > MAXT ? "at most 1024 threads"
					      : "size: 64 to 2^32 rows");
		free(c);
		return -1;
	}
	c->n = n;
	r->data = c;
	c->perm = malloc(n * 4);
	c->inv = malloc(n * 4);
	c->col = malloc(n * ROW * 4);
	c->val = malloc(n * ROW * 8);
	c->x = malloc(n * 8);
	c->r = malloc(n * 8);
	c->p = malloc(n * 8);
	c->q = malloc(n * 8);
	c->b = malloc(n * 8);
	if (!c->perm || !c->inv || !c->col || !c->val || !c->x || !c->r ||
	    !c->p || !c->q || !c->b) {
		snprintf(r->verdict, sizeof(r->verdict), "out of memory");
		return -1;
	}
	/* The labelling (small: setting up, not the kernel's data). */
	for (size_t i = 0; i < n; i++)
		c->perm[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = wk_mix(i) % (i + 1);
		uint32_t t = c->perm[i];
		c->perm[i] = c->perm[j];
		c->perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		c->inv[c->perm[i]] = (uint32_t)i;
	for (int k = 0; k < HALF; k++) /* distinct, in [1, n/2) */
		c->off[k] = 1 + (size_t)k + (n / 2 - HALF - 1) / HALF * k;
	snprintf(r->detail, sizeof(r->detail),
		 "%zu rows, %zu nonzeros, %.1f MiB", n, n * ROW,
		 (double)(n * per_row) / 1048576);
	return 0;
}

static void init(struct wk_run *r, int tid)
{
	struct cg *c = r->data;
	size_t lo, hi;

	wk_part(c->n, tid, r->nthreads, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		uint32_t *col = c->col + i * ROW;
		double *val = c->val + i * ROW, bi = 0;
		row(c, i, col, val);
		for (int k = 0; k < ROW; k++)
			bi += val[k] * x_true(col[k]);
		c->b[i] = c->r[i] = c->p[i] = bi;
		c->x[i] = c->q[i] = 0;
	}
}

/* The sum over threads of each one's part, the same order for all. */
static double reduce(struct wk_run *r, int which, int tid, double mine)
{
	struct cg *c = r->data;
	double s = 0;

	c->part[which][tid] = mine;
	wk_barrier(r);
	for (int t = 0; t < r->nthreads; t++)
		s += c->part[which][t];
	return s;
}

static void iterate(struct wk_run *r, int tid, int it)
{
	struct cg *c = r->data;
	size_t lo, hi;
	double pq = 0, rr = 0, alpha, beta;

	wk_part(c->n, tid, r->nthreads, &lo, &hi);
	if (it == 0) {
		for (size_t i = lo; i < hi; i++)
			rr += c->r[i] * c->r[i];
		c->rho[tid] = reduce(r, 1, tid, rr);
		rr = 0;
	}
	wk_barrier(r); /* every p of the last iteration written */
	for (size_t i = lo; i < hi; i++) {
		const uint32_t *col = c->col + i * ROW;
		const double *val = c->val + i * ROW;
		double s = 0;
		for (int k = 0; k < ROW; k++)
			s += val[k] * c->p[col[k]];
		c->q[i] = s;
		pq += c->p[i] * s;
	}
	alpha = c->rho[tid] / reduce(r, 0, tid, pq);
	for (size_t i = lo; i < hi; i++) {
		c->x[i] += alpha * c->p[i];
		c->r[i] -= alpha * c->q[i];
		rr += c->r[i] * c->r[i];
	}
	rr = reduce(r, 1, tid, rr);
	beta = rr / c->rho[tid];
	c->rho[tid] = rr;
	for (size_t i = lo; i < hi; i++)
		c->p[i] = c->r[i] + beta * c->p[i];
}

static void inject(struct wk_run *r)
{
	struct cg *c = r->data;
	c->x[c->n / 2] += 1;
}

/* Two checks: the residual b - A x recomputed from the matrix's formula
 * (not its arrays) against the one CG carried along, and the error
 * against CG's own bound, 2 sqrt(k) ((sqrt(k) - 1) / (sqrt(k) + 1))^K,
 * with k the condition number Gershgorin allows. */
static int verify(struct wk_run *r)
{
	struct cg *c = r->data;
	uint32_t col[ROW];
	double val[ROW], dr = 0, bb = 0, e = 0, xx = 0;
	double kappa = (SHIFT + 4 * HALF) / SHIFT, sk = sqrt(kappa), bound;

	for (size_t i = 0; i < c->n; i++) {
		double ax = 0;
		row(c, i, col, val);
		for (int k = 0; k < ROW; k++)
			ax += val[k] * c->x[col[k]];
		dr += (c->b[i] - ax - c->r[i]) * (c->b[i] - ax - c->r[i]);
		bb += c->b[i] * c->b[i];
		e += (c->x[i] - x_true(i)) * (c->x[i] - x_true(i));
		xx += x_true(i) * x_true(i);
	}
	dr = sqrt(dr / bb);
	e = sqrt(e / xx);
	bound = 2 * sk * pow((sk - 1) / (sk + 1), r->iterations) + 1e-12;
	snprintf(r->verdict, sizeof(r->verdict),
		 "residual recomputed against CG's %.2g (at most 1e-9), error "
		 "|x - x*| / |x*| %.2g (CG's bound %.2g)",
		 dr, e, bound);
	return dr <= 1e-9 && e <= bound ? 0 : -1;
}

/* Mflop: the product 2 a nonzero, the vectors 10 a row. */
static double work(const struct wk_run *r)
{
	const struct cg *c = r->data;
	return (double)r->iterations * (double)c->n * (2.0 * ROW + 10) / 1e6;
}

static void cleanup(struct wk_run *r)
{
	struct cg *c = r->data;
	free(c->perm);
	free(c->inv);
	free(c->col);
	free(c->val);
	free(c->x);
	free(c->r);
	free(c->p);
	free(c->q);
	free(c->b);
	free(c);
}

/* The matrix's values, by rows. */
static const void *region(const struct wk_run *r, size_t *bytes)
{
	const struct cg *c = r->data;
	*bytes = c->n * ROW * 8;
	return c->val;
}

const struct wk_kernel wk_cg = {
	.name = "cg",
	.about = "CG-like: conjugate gradient, a sparse matrix-vector product "
		 "with scattered columns (latency-bound)",
	.unit = "Mflop/s",
	.iterations = 25,
	.setup = setup,
	.init = init,
	.iterate = iterate,
	.inject = inject,
	.verify = verify,
	.work = work,
	.cleanup = cleanup,
	.region = region,
};
