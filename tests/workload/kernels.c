/*
 * numalot-workload --kernel: the harness of the NAS-like kernels
 * (kernels.h): the team of threads, first-touch or master initialisation,
 * the timed iterations, the check and the figure of merit.
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

const char wk_names[] = "cg, mg, ep, ft, is";

const struct wk_kernel *wk_find(const char *name)
{
	const struct wk_kernel *all[] = {&wk_cg, &wk_mg, &wk_ep, &wk_ft,
					 &wk_is};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(name, all[i]->name))
			return all[i];
	return NULL;
}

/* Node 0's memory (sysfs), else the machine's. */
static size_t node_bytes(void)
{
	FILE *f = fopen("/sys/devices/system/node/node0/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Node 0 MemTotal: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (kb)
		return (size_t)kb * 1024;
	return (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
}

int wk_size(const char *s, size_t *bytes)
{
	char *end;
	double mib;

	if (!strcmp(s, "small"))
		*bytes = 4 * MIB;
	else if (!strcmp(s, "medium"))
		*bytes = 256 * MIB;
	else if (!strcmp(s, "large"))
		*bytes = 2048 * MIB;
	else if (!strcmp(s, "node"))
		*bytes = node_bytes() / 10 * 6;
	else {
		mib = strtod(s, &end);
		if (end == s || *end || !(mib >= 1 && mib <= 1 << 22))
			return -1;
		*bytes = (size_t)(mib * (double)MIB);
	}
	return 0;
}

void wk_barrier(struct wk_run *r)
{
	pthread_barrier_wait(&r->barrier);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct member {
	struct wk_run *r;
	int tid;
	pthread_t th;
};

static void *member(void *arg)
{
	struct member *m = arg;
	struct wk_run *r = m->r;
	double t0 = 0;

	if (!r->master_init)
		r->k->init(r, m->tid); /* first touch: its pages here */
	wk_barrier(r);
	if (m->tid == 0)
		t0 = now_s();
	for (int it = 0; it < r->iterations; it++)
		r->k->iterate(r, m->tid, it);
	wk_barrier(r);
	if (m->tid == 0)
		r->seconds = now_s() - t0;
	return NULL;
}

int wk_main(const struct wk_kernel *k, int nthreads, int iterations,
	    int master_init, int inject, size_t bytes, const char *size_name)
{
	struct wk_run r = {.k = k,
			   .nthreads = nthreads,
			   .iterations =
				   iterations > 0 ? iterations : k->iterations,
			   .master_init = master_init,
			   .inject = inject,
			   .bytes = bytes};
	struct member *m;
	int ok;

	printf("%s: %s\n%s: %d thread%s, %s data, size %s (%zu MiB)\n", k->name,
	       k->about, k->name, nthreads, nthreads == 1 ? "" : "s",
	       master_init ? "master-initialised" : "first-touch", size_name,
	       bytes / MIB);
	if (k->setup(&r) < 0) {
		fprintf(stderr, "numalot-workload: %s: %s\n", k->name,
			r.verdict);
		return 1;
	}
	printf("%s: %s, %d iteration%s\n", k->name, r.detail, r.iterations,
	       r.iterations == 1 ? "" : "s");
	fflush(stdout);
	m = calloc((size_t)nthreads, sizeof(*m));
	if (!m || pthread_barrier_init(&r.barrier, NULL, (unsigned)nthreads)) {
		fprintf(stderr, "numalot-workload: out of memory\n");
		return 1;
	}
	if (master_init)
		for (int t = 0; t < nthreads; t++)
			k->init(&r, t); /* serial: every page on this node */
	for (int t = 0; t < nthreads; t++) {
		m[t] = (struct member){.r = &r, .tid = t};
		if (pthread_create(&m[t].th, NULL, member, &m[t])) {
			/* The barrier would never open: nothing to save. */
			perror("numalot-workload: pthread_create");
			exit(1);
		}
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(m[t].th, NULL);
	pthread_barrier_destroy(&r.barrier);
	free(m);
	if (inject)
		k->inject(&r);
	ok = k->verify(&r) == 0;
	printf("%s: %.3f s, %.1f %s\n", k->name, r.seconds,
	       k->work(&r) / (r.seconds > 0 ? r.seconds : 1e-9), k->unit);
	printf("%s: verification %s: %s%s\n", k->name, ok ? "passed" : "FAILED",
	       r.verdict,
	       inject ? " (an error was injected: --inject-error)" : "");
	k->cleanup(&r);
	return ok ? 0 : 3;
}
