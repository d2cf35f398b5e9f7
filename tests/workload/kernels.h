/*
 * numalot-workload --kernel: NAS-like kernels, each a real multithreaded
 * program that checks its own result and prints a figure of merit
 * (tests/workload/README.md). kernels.c runs them; k_*.c are the kernels.
 */
#ifndef NUMALOT_WORKLOAD_KERNELS_H
#define NUMALOT_WORKLOAD_KERNELS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct wk_run;

struct wk_kernel {
	const char *name;  /* cg, mg, ep, ft, is */
	const char *about; /* one line: what it is like */
	const char *unit;  /* of the figure of merit: "Mflop/s" */
	int iterations;	   /* default */
	/* Sizes and allocation from r->bytes (no page touched: the pages go
	 * where init touches them); r->detail says what was made. 0 or -1
	 * (r->verdict says why). */
	int (*setup)(struct wk_run *r);
	/* Initialise the part of thread tid (of r->nthreads): by that thread
	 * (first touch), or by the master for each tid in turn. */
	void (*init)(struct wk_run *r, int tid);
	/* One iteration of thread tid; may call wk_barrier. */
	void (*iterate)(struct wk_run *r, int tid, int it);
	/* --inject-error: spoil the result before it is checked. */
	void (*inject)(struct wk_run *r);
	/* 0 verified, -1 not; r->verdict says what was compared. */
	int (*verify)(struct wk_run *r);
	/* The figure of merit's amount of work done (in its unit x 1e6). */
	double (*work)(const struct wk_run *r);
	void (*cleanup)(struct wk_run *r);
	/* The array shared out among the threads in order (thread t's
	 * share is the t-th of nthreads), or NULL when it has none worth
	 * placing: where its pages are is told (kernels.c). */
	const void *(*region)(const struct wk_run *r, size_t *bytes);
};

struct wk_run {
	const struct wk_kernel *k;
	int nthreads, iterations, master_init, inject;
	int bind;     /* --bind: thread t on the t-th allowed CPU */
	size_t bytes; /* the data the kernel may hold */
	void *data;   /* the kernel's */
	pthread_barrier_t barrier;
	double seconds;	     /* of the iterations */
	int init_node[1024]; /* where each share's initialiser ran */
	char detail[256], verdict[256];
};

void wk_barrier(struct wk_run *r);

/* The share [*lo, *hi) of n items of thread tid. */
static inline void wk_part(size_t n, int tid, int nthreads, size_t *lo,
			   size_t *hi)
{
	*lo = n * (size_t)tid / (size_t)nthreads;
	*hi = n * (size_t)(tid + 1) / (size_t)nthreads;
}

/* A 64-bit mix (splitmix64): the kernels' data from their indexes, so a
 * check can recompute any of it without the arrays. */
static inline uint64_t wk_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Uniform in [0, 1) from a mix. */
static inline double wk_unit(uint64_t x)
{
	return (double)(wk_mix(x) >> 11) * 0x1.0p-53;
}

extern const struct wk_kernel wk_cg, wk_mg, wk_ep, wk_ft, wk_is;

/* The kernel's name, "cg, mg, ep, ft, is", or NULL when unknown. */
const struct wk_kernel *wk_find(const char *name);
extern const char wk_names[];

/* --size: small, medium, large, node (60% of node 0's memory) or MiB;
 * 0 with *bytes set, or -1. */
int wk_size(const char *s, size_t *bytes);

/* Run kernel k: 0 verified, 3 verification failed, 1 could not run. */
int wk_main(const struct wk_kernel *k, int nthreads, int iterations,
	    int master_init, int inject, int bind, size_t bytes,
	    const char *size_name);

#endif
