/*
 * numalot-workload --kernel: the harness of the NAS-like kernels
 * (kernels.h): the team of threads, first-touch or master initialisation,
 * the timed iterations, the check and the figure of merit.
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
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

#define MAXT 1024
#define SAMPLES 64 /* pages a share */

/* The node the calling thread runs on (-1: unknown). */
static int my_node(void)
{
	unsigned cpu, node;
	return getcpu(&cpu, &node) == 0 ? (int)node : -1;
}

/* The huge page size when THP is on for all memory (enabled: always),
 * else 0. */
static size_t thp_always(void)
{
	char buf[128] = "";
	unsigned long long size = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	if (!strstr(buf, "[always]"))
		return 0;
	f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (f) {
		if (fscanf(f, "%llu", &size) != 1)
			size = 0;
		fclose(f);
	}
	return size ? (size_t)size : 2 * MIB;
}

/* Where the region's pages are, share by share, against the node its
 * initialiser ran on: the first touch placed them there (or, with
 * --init master, all on the master's). move_pages(2) with no target
 * only asks. */
static void tell_pages(struct wk_run *r)
{
	size_t bytes, page = (size_t)sysconf(_SC_PAGESIZE);
	const char *base = r->k->region ? r->k->region(r, &bytes) : NULL;
	int where = 0, seen = 0, nodes = 0, last = -2;
	char list[256] = "";
	size_t len = 0;

	size_t huge = thp_always();

	if (!base) {
		printf("%s: pages: no data worth placing\n", r->k->name);
		return;
	}
	for (int t = 0; t < r->nthreads; t++) {
		void *pages[SAMPLES];
		int status[SAMPLES], n = 0;
		size_t lo, hi;
		wk_part(bytes, t, r->nthreads, &lo, &hi);
		/* The middle of the share: a page at its ends may hold a
		 * neighbour's items, and a huge page there (THP) goes to
		 * whichever thread touched it first. */
		size_t margin = (hi - lo) / 10 > huge ? (hi - lo) / 10 : huge;
		if (hi - lo <= 2 * margin)
			continue;
		lo += margin;
		hi -= margin;
		for (size_t at = lo; at + page <= hi && n < SAMPLES;
		     at += (hi - lo) / SAMPLES + page)
			pages[n++] = (void *)((uintptr_t)(base + at) &
					      ~(uintptr_t)(page - 1));
		if (n == 0 || syscall(SYS_move_pages, 0, (unsigned long)n,
				      pages, NULL, status, 0) < 0)
			continue;
		for (int k = 0; k < n; k++) {
			seen += status[k] >= 0;
			where += status[k] == r->init_node[t];
		}
		if (r->init_node[t] != last && len < sizeof(list) - 8) {
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s%d", nodes ? "," : "",
						r->init_node[t]);
			last = r->init_node[t];
			nodes++;
		}
	}
	if (!seen)
		printf("%s: pages: not known here (move_pages), or shares too "
		       "small to sample\n",
		       r->k->name);
	else
		printf("%s: pages: %.0f%% on the node their initialiser ran "
		       "on (%d sampled; initialised on node%s %s)\n",
		       r->k->name, 100.0 * where / seen, seen,
		       nodes == 1 ? "" : "s", list);
}

struct member {
	struct wk_run *r;
	int tid;
	pthread_t th;
};

/* --bind: the calling thread on the k-th of the CPUs the process may
 * use (modulo their number). */
static void bind_to(const cpu_set_t *allowed, int k)
{
	int n = CPU_COUNT(allowed), seen = 0;
	cpu_set_t one;

	k %= n;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, allowed) && seen++ == k) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			sched_setaffinity(0, sizeof(one), &one);
			return;
		}
}

static cpu_set_t allowed;

static void *member(void *arg)
{
	struct member *m = arg;
	struct wk_run *r = m->r;
	double t0 = 0;

	if (r->bind)
		bind_to(&allowed, m->tid);

	if (!r->master_init) {
		r->k->init(r, m->tid); /* first touch: its pages here */
		r->init_node[m->tid] = my_node();
	}
	wk_barrier(r);
	if (m->tid == 0) {
		tell_pages(r);
		fflush(stdout);
	}
	wk_barrier(r); /* (before any page could move) */
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
	    int master_init, int inject, int bind, size_t bytes,
	    const char *size_name)
{
	struct wk_run r = {.k = k,
			   .nthreads = nthreads,
			   .iterations =
				   iterations > 0 ? iterations : k->iterations,
			   .master_init = master_init,
			   .inject = inject,
			   .bind = bind,
			   .bytes = bytes};
	struct member *m;
	int ok;

	if (bind && sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		perror("numalot-workload: sched_getaffinity");
		return 1;
	}
	printf("%s: %s\n%s: %d thread%s%s, %s data, size %s (%zu MiB)\n",
	       k->name, k->about, k->name, nthreads, nthreads == 1 ? "" : "s",
	       bind ? " (bound, one a CPU)" : "",
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
	if (nthreads > MAXT) {
		fprintf(stderr, "numalot-workload: at most %d threads\n", MAXT);
		return 1;
	}
	if (master_init) {
		/* --bind: the master too, while it initialises (unbound, a
		 * busy guest's balancer moved it between nodes mid-share:
		 * 75% where it began); then back to what it may use. */
		if (bind)
			bind_to(&allowed, 0);
		for (int t = 0; t < nthreads; t++) {
			k->init(&r, t); /* serial: every page on this node */
			r.init_node[t] = my_node();
		}
		if (bind)
			sched_setaffinity(0, sizeof(allowed), &allowed);
	}
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
