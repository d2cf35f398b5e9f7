/*
 * numalot-workload: a real multithreaded program for tests and the demo.
 *
 *   numalot-workload [--threads N] [--seconds S] [--mode
 * compute|memory|mixed|idle]
 *                    [--mem-mb M] [--late N] [--short N] [--exit-code K]
 *
 * Each thread runs for S seconds: compute (floating-point loop), memory
 * (strided walks over M MiB of its own), or mixed (alternating every
 * 100 ms). --late N starts N more threads at S/2; --short N makes N of the
 * threads stop at S/4. Prints each thread's throughput and the total.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum mode { COMPUTE, MEMORY, MIXED, IDLE };

struct worker {
	pthread_t th;
	int id;
	double seconds;
	enum mode mode;
	size_t bytes;
	double ops;
	volatile double sink;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double compute_burst(struct worker *w)
{
	double x = 1.0 + w->id * 1e-3, y = 0.999;
	for (int i = 0; i < 200000; i++)
		x = x * y + 1e-9;
	w->sink = x;
	return 200000 * 2;
}

static double memory_burst(struct worker *w, unsigned char *buf, size_t *pos)
{
	unsigned long sum = 0;
	const size_t stride = 4096 + 64; /* a new page and line each touch */
	for (int i = 0; i < 50000; i++) {
		*pos = (*pos + stride) % w->bytes;
		sum += buf[*pos]++;
	}
	w->sink = (double)sum;
	return 50000;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	unsigned char *buf = NULL;
	size_t pos = 0;
	double start = now_s(), end = start + w->seconds;

	if (w->mode == IDLE) {
		/* Threads that exist and wait (benchmarks of many threads). */
		struct timespec ts = {0, 200 * 1000 * 1000};
		for (double t = start; t < end; t = now_s())
			nanosleep(&ts, NULL);
		return NULL;
	}
	if (w->mode != COMPUTE) {
		buf = malloc(w->bytes);
		if (!buf)
			return NULL;
		memset(buf, 1, w->bytes); /* first touch: pages on this node */
	}
	for (double t = start; t < end; t = now_s()) {
		int mem = w->mode == MEMORY ||
			  (w->mode == MIXED && ((long)((t - start) * 10) & 1));
		w->ops += mem ? memory_burst(w, buf, &pos) : compute_burst(w);
	}
	free(buf);
	return NULL;
}

static int start(struct worker *w, int id, double seconds, enum mode m,
		 size_t bytes)
{
	memset(w, 0, sizeof(*w));
	w->id = id;
	w->seconds = seconds;
	w->mode = m;
	w->bytes = bytes;
	if (m == IDLE) { /* many of them: small stacks */
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);
		int rc = pthread_create(&w->th, &a, run, w);
		pthread_attr_destroy(&a);
		return rc;
	}
	return pthread_create(&w->th, NULL, run, w);
}

static int number(const char *opt, const char *v, double lo, double hi,
		  double *out)
{
	char *end;
	errno = 0;
	*out = v ? strtod(v, &end) : 0;
	if (!v || end == v || *end || errno || *out < lo || *out > hi) {
		fprintf(stderr,
			"numalot-workload: %s wants a number from %g to "
			"%g\n",
			opt, lo, hi);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	double threads = 4, seconds = 3, mem_mb = 16, late = 0, shorter = 0,
	       code = 0;
	enum mode mode = MIXED;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc;
		if (!strcmp(o, "--threads"))
			rc = number(o, v, 1, 16384, &threads);
		else if (!strcmp(o, "--seconds"))
			rc = number(o, v, 0, 86400, &seconds);
		else if (!strcmp(o, "--mem-mb"))
			rc = number(o, v, 1, 65536, &mem_mb);
		else if (!strcmp(o, "--late"))
			rc = number(o, v, 0, 4096, &late);
		else if (!strcmp(o, "--short"))
			rc = number(o, v, 0, 4096, &shorter);
		else if (!strcmp(o, "--exit-code"))
			rc = number(o, v, 0, 255, &code);
		else if (!strcmp(o, "--mode") && v) {
			rc = 0;
			mode = !strcmp(v, "compute")  ? COMPUTE
			       : !strcmp(v, "memory") ? MEMORY
			       : !strcmp(v, "mixed")  ? MIXED
			       : !strcmp(v, "idle")   ? IDLE
						      : (rc = -1, MIXED);
			if (rc)
				fprintf(stderr, "numalot-workload: --mode is "
						"compute, memory, mixed or "
						"idle\n");
		} else {
			fprintf(stderr, "usage: numalot-workload [--threads N] "
					"[--seconds S] [--mode "
					"compute|memory|mixed|idle] "
					"[--mem-mb M] [--late N] [--short N] "
					"[--exit-code K]\n");
			return 2;
		}
		if (rc)
			return 2;
		i++;
	}
	int n = (int)threads, nl = (int)late, total = n + nl;
	struct worker *w = calloc((size_t)total, sizeof(*w));
	size_t bytes = (size_t)(mem_mb * 1048576);
	double t0 = now_s();
	if (!w)
		return 1;
	for (int i = 0; i < n; i++)
		if (start(&w[i], i, i < (int)shorter ? seconds / 4 : seconds,
			  mode, bytes)) {
			perror("numalot-workload: pthread_create");
			return 1;
		}
	if (nl) {
		struct timespec ts = {
			(time_t)(seconds / 2),
			(long)((seconds / 2 - (time_t)(seconds / 2)) * 1e9)};
		nanosleep(&ts, NULL);
		for (int i = n; i < total; i++)
			if (start(&w[i], i, seconds / 2, mode, bytes)) {
				perror("numalot-workload: pthread_create");
				return 1;
			}
	}
	double sum = 0;
	for (int i = 0; i < total; i++) {
		pthread_join(w[i].th, NULL);
		printf("thread %d: %.1f Mops/s\n", i,
		       w[i].ops / w[i].seconds / 1e6);
		sum += w[i].ops;
	}
	printf("workload: %d threads, %.1f s, %.1f Mops/s in all\n", total,
	       now_s() - t0, sum / (now_s() - t0) / 1e6);
	free(w);
	return (int)code;
}
