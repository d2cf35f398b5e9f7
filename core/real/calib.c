/*
 * numalot calibrate's measurements (calib.h; docs/real-node.md,
 * "Calibrating the model"). Every measurement runs on threads of its own,
 * bound with hwloc, so the caller's binding is never changed.
 */
#include "calib.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rng.h"
#include "topology.h"
#include "util.h"

#define LINE 64
/* Pages sampled to check where the buffer is (move_pages query). */
#define CHECK_PAGES 64
/* Loads between two looks at the clock (about 10 us to 1 ms). */
#define CHASE_STEPS 4096
/* Bytes one reader reads between two looks at the clock. */
#define READ_BLOCK (1 << 20)

static volatile uint64_t sink;

/* Threads that start together wait for *go: 1 go, -1 give up (another
 * could not be started). A flag, not a barrier: a barrier would never
 * open after a failed pthread_create. */
static int wait_go(int *go)
{
	int v;

	while (!(v = __atomic_load_n(go, __ATOMIC_ACQUIRE)))
		sched_yield();
	return v > 0 ? 0 : -1;
}

static void set_go(int *go, int v)
{
	__atomic_store_n(go, v, __ATOMIC_RELEASE);
}

/* memory on node dst (OS number dst_os), touched; NULL when none. Without
 * NUMA support (one node) plain anonymous memory. */
static void *alloc_on(int dst_os, size_t bytes)
{
	void *p;

	if (numa_available() >= 0)
		p = numa_alloc_onnode(bytes, dst_os);
	else {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
	}
	if (p)
		memset(p, 1, bytes);
	return p;
}

static void free_on(void *p, size_t bytes)
{
	if (!p)
		return;
	if (numa_available() >= 0)
		numa_free(p, bytes);
	else
		munmap(p, bytes);
}

/* Share of CHECK_PAGES pages of buf found on node dst_os (-1: unknown). */
static double share_on(void *buf, size_t bytes, int dst_os)
{
	void *pages[CHECK_PAGES];
	int status[CHECK_PAGES], n = 0, on = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), npages = bytes / page;

	if (numa_available() < 0 || npages == 0)
		return -1;
	for (int k = 0; k < CHECK_PAGES && (size_t)k < npages; k++, n++)
		pages[k] =
			(char *)buf + (npages * (size_t)k / CHECK_PAGES) * page;
	if (numa_move_pages(0, (unsigned long)n, pages, NULL, status, 0) < 0)
		return -1;
	for (int k = 0; k < n; k++)
		on += status[k] == dst_os;
	return (double)on / n;
}

static int bind_self(const struct nl_topology *t, int cpu)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int rc;

	if (!set)
		return -ENOMEM;
	hwloc_bitmap_only(set, (unsigned)t->cpu_os[cpu]);
	rc = hwloc_set_cpubind(t->hw, set, HWLOC_CPUBIND_THREAD);
	hwloc_bitmap_free(set);
	return rc < 0 ? -errno : 0;
}

/* The first CPU of each core of node n into cpus (room for ncpus). */
static int node_core_cpus(const struct nl_topology *t, int n, int *cpus)
{
	int k = 0;

	for (int c = 0; c < t->ncpus; c++) {
		int seen = 0;
		if (t->cpu_node[c] != n)
			continue;
		for (int i = 0; i < k && !seen; i++)
			seen = t->cpu_core[cpus[i]] == t->cpu_core[c];
		if (!seen)
			cpus[k++] = c;
	}
	return k;
}

int nl_calib_node_cores(const struct nl_topology *t, int n)
{
	int *cpus = malloc(sizeof(int) * (size_t)t->ncpus), k;

	if (!cpus)
		return 0;
	k = node_core_cpus(t, n, cpus);
	free(cpus);
	return k;
}

/* --- latency: one thread chasing pointers ------------------------------ */

struct chase {
	const struct nl_topology *t;
	int cpu, dst_os;
	size_t bytes;
	double seconds;
	struct nl_calib_result r;
	int rc;
	char why[160];
};

/* A random cycle through every line of buf (Sattolo's shuffle), so that
 * no prefetcher can guess the next line. */
static int build_chain(char *buf, size_t lines)
{
	uint32_t *idx = malloc(sizeof(*idx) * lines);
	struct nl_rng rng;

	if (!idx)
		return -ENOMEM;
	nl_rng_seed(&rng, 42);
	for (size_t i = 0; i < lines; i++)
		idx[i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = nl_rng_below(&rng, i);
		uint32_t x = idx[i];
		idx[i] = idx[j];
		idx[j] = x;
	}
	for (size_t i = 0; i < lines; i++)
		*(void **)(buf + (size_t)idx[i] * LINE) =
			buf + (size_t)idx[(i + 1) % lines] * LINE;
	free(idx);
	return 0;
}

static void *chase_thread(void *arg)
{
	struct chase *c = arg;
	size_t lines = c->bytes / LINE;
	char *buf;
	void **p;
	double t0, end, now;
	unsigned long steps = 0;

	c->rc = bind_self(c->t, c->cpu);
	if (c->rc < 0) {
		snprintf(c->why, sizeof(c->why), "cannot bind to CPU %d: %s",
			 c->t->cpu_os[c->cpu], strerror(-c->rc));
		return NULL;
	}
	buf = alloc_on(c->dst_os, c->bytes);
	if (!buf || build_chain(buf, lines) < 0) {
		c->rc = -ENOMEM;
		snprintf(c->why, sizeof(c->why),
			 "cannot have %zu MiB on node %d", c->bytes >> 20,
			 c->dst_os);
		free_on(buf, c->bytes);
		return NULL;
	}
	c->r.on_node = share_on(buf, c->bytes, c->dst_os);
	p = (void **)buf;
	/* Warm-up: the TLB and the caches as the measurement finds them. */
	for (size_t i = 0; i < lines && i < (1u << 16); i++)
		p = *p;
	t0 = nl_mono_s();
	end = t0 + c->seconds;
	do {
		for (int i = 0; i < CHASE_STEPS; i += 8) {
			p = *p, p = *p, p = *p, p = *p;
			p = *p, p = *p, p = *p, p = *p;
		}
		steps += CHASE_STEPS;
		now = nl_mono_s();
	} while (now < end);
	sink = (uint64_t)(uintptr_t)p;
	c->r.seconds = now - t0;
	c->r.count = steps;
	c->r.value = c->r.seconds * 1e9 / (double)steps;
	free_on(buf, c->bytes);
	return NULL;
}

static int first_cpu_of(const struct nl_topology *t, int n)
{
	for (int c = 0; c < t->ncpus; c++)
		if (t->cpu_node[c] == n)
			return c;
	return -1;
}

static int check_nodes(const struct nl_topology *t, int src, int dst,
		       size_t bytes, char *err, size_t errlen)
{
	if (src < 0 || src >= t->nnodes || dst < 0 || dst >= t->nnodes)
		return nl_errf(err, errlen, -EINVAL, "no such node");
	if (first_cpu_of(t, src) < 0)
		return nl_errf(err, errlen, -EINVAL, "node %d has no CPU",
			       t->node_os[src]);
	if (bytes < (size_t)LINE * 1024 || bytes / LINE > UINT32_MAX)
		return nl_errf(err, errlen, -EINVAL,
			       "buffer of %zu bytes: 64 KiB to 256 GiB", bytes);
	return 0;
}

int nl_calib_latency(const struct nl_topology *t, int src, int dst,
		     size_t bytes, double seconds, struct nl_calib_result *out,
		     char *err, size_t errlen)
{
	struct chase c = {.t = t, .bytes = bytes, .seconds = seconds};
	pthread_t th;
	int rc = check_nodes(t, src, dst, bytes, err, errlen);

	if (rc < 0)
		return rc;
	c.cpu = first_cpu_of(t, src);
	c.dst_os = t->node_os[dst];
	rc = pthread_create(&th, NULL, chase_thread, &c);
	if (rc)
		return nl_errf(err, errlen, -rc, "cannot start a thread: %s",
			       strerror(rc));
	pthread_join(th, NULL);
	if (c.rc < 0)
		return nl_errf(err, errlen, c.rc, "%s", c.why);
	*out = c.r;
	return 0;
}

/* --- bandwidth: readers, one a core ------------------------------------ */

struct readers {
	const struct nl_topology *t;
	int go; /* 1: read; -1: give up (not every reader started) */
	const char *buf;
	size_t slice;
	double seconds;
	int *cpus;
};

struct reader {
	struct readers *all;
	int k, rc;
	double t0, t1;
	unsigned long bytes;
};

/* The sum of a block: four accumulators, so that loads, not adds, bound
 * it (the compiler vectorises it at -O2). */
static uint64_t read_block(const uint64_t *w, size_t n)
{
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (size_t i = 0; i + 4 <= n; i += 4) {
		a += w[i];
		b += w[i + 1];
		c += w[i + 2];
		d += w[i + 3];
	}
	return a + b + c + d;
}

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	struct readers *all = r->all;
	const char *mine = all->buf + all->slice * (size_t)r->k;
	size_t off = 0,
	       block = all->slice < READ_BLOCK ? all->slice : READ_BLOCK;
	uint64_t sum = 0;
	double end;

	r->rc = bind_self(all->t, all->cpus[r->k]);
	if (wait_go(&all->go) < 0)
		return NULL;
	r->t0 = nl_mono_s();
	end = r->t0 + all->seconds;
	do {
		sum += read_block((const uint64_t *)(mine + off), block / 8);
		r->bytes += block;
		off = off + 2 * block > all->slice ? 0 : off + block;
		r->t1 = nl_mono_s();
	} while (r->t1 < end);
	sink += sum;
	return NULL;
}

int nl_calib_bandwidth(const struct nl_topology *t, int src, int dst,
		       int nthreads, size_t bytes, double seconds,
		       struct nl_calib_result *out, char *err, size_t errlen)
{
	struct readers all = {.t = t, .seconds = seconds};
	struct reader *r = NULL;
	pthread_t *th = NULL;
	int rc = check_nodes(t, src, dst, bytes, err, errlen), ncores, started;
	double t0 = 0, t1 = 0, total = 0;
	char *buf = NULL;

	if (rc < 0)
		return rc;
	all.cpus = malloc(sizeof(int) * (size_t)t->ncpus);
	if (!all.cpus)
		return -ENOMEM;
	ncores = node_core_cpus(t, src, all.cpus);
	if (nthreads < 1 || nthreads > ncores) {
		free(all.cpus);
		return nl_errf(err, errlen, -EINVAL,
			       "%d readers: node %d has %d core%s", nthreads,
			       t->node_os[src], ncores, ncores == 1 ? "" : "s");
	}
	buf = alloc_on(t->node_os[dst], bytes);
	r = calloc((size_t)nthreads, sizeof(*r));
	th = calloc((size_t)nthreads, sizeof(*th));
	if (!buf || !r || !th) {
		rc = nl_errf(err, errlen, -ENOMEM,
			     "cannot have %zu MiB on node %d", bytes >> 20,
			     t->node_os[dst]);
		goto out;
	}
	all.buf = buf;
	/* Slices of whole blocks of 32 bytes, one a reader. */
	all.slice = bytes / (size_t)nthreads / 32 * 32;
	for (started = 0; started < nthreads; started++) {
		r[started] = (struct reader){.all = &all, .k = started};
		if (pthread_create(&th[started], NULL, reader_thread,
				   &r[started]))
			break;
	}
	set_go(&all.go, started < nthreads ? -1 : 1);
	if (started < nthreads)
		rc = nl_errf(err, errlen, -EAGAIN,
			     "cannot start %d reader threads", nthreads);
	for (int k = 0; k < started; k++) {
		pthread_join(th[k], NULL);
		if (r[k].rc < 0 && rc == 0)
			rc = nl_errf(err, errlen, r[k].rc,
				     "cannot bind to CPU %d: %s",
				     t->cpu_os[all.cpus[k]],
				     strerror(-r[k].rc));
		if (k == 0 || r[k].t0 < t0)
			t0 = r[k].t0;
		if (r[k].t1 > t1)
			t1 = r[k].t1;
		total += (double)r[k].bytes;
	}
	if (rc == 0) {
		out->on_node = share_on(buf, bytes, t->node_os[dst]);
		out->seconds = t1 - t0;
		out->count = (unsigned long)total;
		out->value = total / (t1 - t0);
	}
out:
	free_on(buf, bytes);
	free(r);
	free(th);
	free(all.cpus);
	return rc;
}

/* --- SMT: a compute loop alone and beside its sibling ------------------ */

struct spinner {
	const struct nl_topology *t;
	int *go; /* NULL: alone */
	int cpu, rc;
	double seconds, rate;
};

static void *spin_thread(void *arg)
{
	struct spinner *s = arg;
	/* Four independent multiply-add chains: a core's integer units, no
	 * memory. */
	uint64_t x0 = 1, x1 = 2, x2 = 3, x3 = 4, ops = 0;
	double t0, now, end;

	s->rc = bind_self(s->t, s->cpu);
	if (s->go && wait_go(s->go) < 0)
		return NULL;
	t0 = nl_mono_s();
	end = t0 + s->seconds;
	do {
		for (int i = 0; i < 1 << 14; i++) {
			x0 = x0 * 6364136223846793005ULL +
			     1442695040888963407ULL;
			x1 = x1 * 6364136223846793005ULL +
			     1442695040888963407ULL;
			x2 = x2 * 6364136223846793005ULL +
			     1442695040888963407ULL;
			x3 = x3 * 6364136223846793005ULL +
			     1442695040888963407ULL;
		}
		ops += 4 << 14;
		now = nl_mono_s();
	} while (now < end);
	sink += x0 ^ x1 ^ x2 ^ x3;
	s->rate = (double)ops / (now - t0);
	return NULL;
}

int nl_calib_smt(const struct nl_topology *t, double seconds, double *yield,
		 double *alone_ops_per_s, char *err, size_t errlen)
{
	struct spinner s[2] = {{.t = t, .seconds = seconds},
			       {.t = t, .seconds = seconds}};
	pthread_t th[2];
	int a = -1, b = -1, go = 0;

	for (int c = 0; c < t->ncpus && b < 0; c++)
		for (int d = c + 1; d < t->ncpus && b < 0; d++)
			if (t->cpu_core[c] == t->cpu_core[d])
				a = c, b = d;
	if (b < 0)
		return nl_errf(err, errlen, -ENOTSUP,
			       "no core has two hardware threads (no SMT)");
	s[0].cpu = a;
	if (pthread_create(&th[0], NULL, spin_thread, &s[0]))
		return nl_errf(err, errlen, -EAGAIN, "cannot start a thread");
	pthread_join(th[0], NULL);
	*alone_ops_per_s = s[0].rate;
	s[0].go = s[1].go = &go;
	s[1].cpu = b;
	if (pthread_create(&th[0], NULL, spin_thread, &s[0]))
		return nl_errf(err, errlen, -EAGAIN, "cannot start a thread");
	if (pthread_create(&th[1], NULL, spin_thread, &s[1])) {
		set_go(&go, -1);
		pthread_join(th[0], NULL);
		return nl_errf(err, errlen, -EAGAIN, "cannot start a thread");
	}
	set_go(&go, 1);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	if (s[0].rc < 0 || s[1].rc < 0)
		return nl_errf(err, errlen, -EPERM,
			       "cannot bind to CPUs %d and %d", t->cpu_os[a],
			       t->cpu_os[b]);
	*yield = (s[0].rate + s[1].rate) / *alone_ops_per_s;
	return 0;
}
