/*
 * numalot-workload: a real multithreaded program for tests and the demo,
 * synthetic threads (--mode) or a NAS-like kernel (--kernel, kernels.h);
 * its options and what each does: tests/workload/README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels.h"

enum mode { COMPUTE, MEMORY, MIXED, IDLE, SLEEP };

struct worker {
	pthread_t th;
	int id;
	double seconds;
	enum mode mode;
	size_t bytes;
	unsigned char *buf; /* touched by the main thread (--init master) */
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

/* --go-file, --start-file, or NULL. */
static const char *go_file, *start_file;

/* Until file exists (NULL: at once). */
static double wait_for(const char *file)
{
	struct timespec ts = {0, 50 * 1000 * 1000};
	while (file && access(file, F_OK) != 0)
		nanosleep(&ts, NULL);
	return now_s();
}

/* Until the --go-file exists (none: at once); the S seconds start then. */
static double go_time(void)
{
	return wait_for(go_file);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	unsigned char *buf = NULL;
	size_t pos = 0;
	double start = w->mode == MEMORY || w->mode == MIXED ? now_s()
							     : go_time(),
	       end = start + w->seconds;

	if (w->mode == SLEEP) {
		/* Threads that exist and block: they never wake until the end
		 * (benchmarks of the agent with many threads on few CPUs). */
		for (double t = start; t < end; t = now_s()) {
			double left = end - t;
			struct timespec ts = {
				(time_t)left,
				(long)((left - (double)(time_t)left) * 1e9)};
			nanosleep(&ts, NULL);
		}
		return NULL;
	}
	if (w->mode == IDLE) {
		/* Threads that exist and wait (benchmarks of many threads). */
		struct timespec ts = {0, 200 * 1000 * 1000};
		for (double t = start; t < end; t = now_s())
			nanosleep(&ts, NULL);
		return NULL;
	}
	if (w->mode != COMPUTE) {
		buf = w->buf;
		if (!buf) {
			buf = malloc(w->bytes);
			if (!buf)
				return NULL;
			/* first touch: pages on this node */
			memset(buf, 1, w->bytes);
		}
		start = go_time();
		end = start + w->seconds;
	}
	for (double t = start; t < end; t = now_s()) {
		int mem = w->mode == MEMORY ||
			  (w->mode == MIXED && ((long)((t - start) * 10) & 1));
		w->ops += mem ? memory_burst(w, buf, &pos) : compute_burst(w);
	}
	free(buf);
	return NULL;
}

/* w ready for run(); its thread started unless here (the main thread). */
static int start(struct worker *w, int id, double seconds, enum mode m,
		 size_t bytes, int here)
{
	unsigned char *buf = w->buf;
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->id = id;
	w->seconds = seconds;
	w->mode = m;
	w->bytes = bytes;
	if (here)
		return 0;
	if (m == IDLE || m == SLEEP) { /* many of them: small stacks */
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: numalot-workload [--threads N] [--seconds S] [--mode "
		"compute|memory|mixed|idle|sleep]\n"
		"                        [--mem-mb M] [--late N] [--short N] "
		"[--exit-code K] [--go-file F]\n"
		"                        [--start-file F] "
		"[--init first-touch|master]\n"
		"       numalot-workload --kernel cg|mg|ep|ft|is [--threads N] "
		"[--size small|medium|large|node|MIB]\n"
		"                        [--init first-touch|master] "
		"[--iterations K] [--inject-error] [--bind]\n"
		"kernels (NAS-like, each checks its result: exit 3 when "
		"wrong):\n"
		"  cg  conjugate gradient, sparse matrix-vector product, "
		"scattered columns (latency)\n"
		"  mg  7-point stencil streamed over a 3-D grid (bandwidth)\n"
		"  ep  Gaussian pairs by the polar method (compute)\n"
		"  ft  2-D FFTs with an all-to-all transpose\n"
		"  is  bucket sort of integer keys (random access)\n"
		"sizes: small 4 MiB, medium 256 MiB, large 2 GiB, node 60%% of "
		"node 0's memory\n"
		"--bind: thread t on the t-th CPU it may use, the master on "
		"the first while it initialises (else the scheduler places "
		"them)\n"
		"See tests/workload/README.md.\n");
}

int main(int argc, char **argv)
{
	double threads = 4, seconds = 3, mem_mb = 16, late = 0, shorter = 0,
	       code = 0;
	enum mode mode = MIXED;

	static const struct option lo[] = {
		{"threads", required_argument, NULL, 't'},
		{"seconds", required_argument, NULL, 's'},
		{"mem-mb", required_argument, NULL, 'm'},
		{"late", required_argument, NULL, 'l'},
		{"short", required_argument, NULL, 'S'},
		{"exit-code", required_argument, NULL, 'x'},
		{"mode", required_argument, NULL, 'M'},
		{"go-file", required_argument, NULL, 'g'},
		{"start-file", required_argument, NULL, 'F'},
		{"kernel", required_argument, NULL, 'K'},
		{"size", required_argument, NULL, 'z'},
		{"init", required_argument, NULL, 'i'},
		{"iterations", required_argument, NULL, 'I'},
		{"inject-error", no_argument, NULL, 'E'},
		{"bind", no_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{0}};
	const struct wk_kernel *kernel = NULL;
	const char *size = "small";
	size_t bytes_k = 0;
	double iterations = 0;
	int master = 0, inject = 0, bind = 0;
	int c, rc = 0, k = 0;
	char o[32];
	while (rc == 0 && (c = getopt_long(argc, argv, "", lo, &k)) != -1) {
		/* The option's name, for a message. */
		snprintf(o, sizeof(o), "--%s", c == '?' ? "" : lo[k].name);
		switch (c) {
		case 't':
			rc = number(o, optarg, 1, 16384, &threads);
			break;
		case 's':
			rc = number(o, optarg, 0, 86400, &seconds);
			break;
		case 'm':
			rc = number(o, optarg, 1, 65536, &mem_mb);
			break;
		case 'l':
			rc = number(o, optarg, 0, 4096, &late);
			break;
		case 'S':
			rc = number(o, optarg, 0, 4096, &shorter);
			break;
		case 'x':
			rc = number(o, optarg, 0, 255, &code);
			break;
		case 'g':
			go_file = optarg;
			break;
		case 'F':
			start_file = optarg;
			break;
		case 'K':
			kernel = wk_find(optarg);
			if (!kernel) {
				fprintf(stderr,
					"numalot-workload: unknown kernel "
					"\"%s\" (valid: %s)\n",
					optarg, wk_names);
				rc = -1;
			}
			break;
		case 'z':
			size = optarg;
			break;
		case 'i':
			master = !strcmp(optarg, "master");
			if (!master && strcmp(optarg, "first-touch")) {
				fprintf(stderr, "numalot-workload: --init is "
						"first-touch or master\n");
				rc = -1;
			}
			break;
		case 'I':
			rc = number(o, optarg, 1, 1e6, &iterations);
			break;
		case 'E':
			inject = 1;
			break;
		case 'B':
			bind = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'M':
			mode = !strcmp(optarg, "compute")  ? COMPUTE
			       : !strcmp(optarg, "memory") ? MEMORY
			       : !strcmp(optarg, "mixed")  ? MIXED
			       : !strcmp(optarg, "idle")   ? IDLE
			       : !strcmp(optarg, "sleep")  ? SLEEP
							   : (rc = -1, MIXED);
			if (rc)
				fprintf(stderr, "numalot-workload: --mode is "
						"compute, memory, mixed, idle "
						"or sleep\n");
			break;
		default:
			rc = -1;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr,
			"numalot-workload: takes no operand (got \"%s\")\n",
			argv[optind]);
		rc = -1;
	}
	if (rc) {
		usage(stderr);
		return 2;
	}
	if (kernel) {
		if (wk_size(size, &bytes_k) < 0) {
			fprintf(stderr,
				"numalot-workload: --size is small, medium, "
				"large, node or MiB from 1, not \"%s\"\n",
				size);
			return 2;
		}
		return wk_main(kernel, (int)threads, (int)iterations, master,
			       inject, bind, bytes_k, size);
	}
	wait_for(start_file);
	int n = (int)threads, nl = (int)late, total = n + nl;
	/* The main thread is thread 0 (an OpenMP master). */
	int own = master && mode != COMPUTE && mode != IDLE && mode != SLEEP;
	if (own && nl) {
		fprintf(stderr, "numalot-workload: --init master makes the "
				"main thread a worker: no --late\n");
		return 2;
	}
	struct worker *w = calloc((size_t)total, sizeof(*w));
	size_t bytes = (size_t)(mem_mb * 1048576);
	double t0 = now_s();
	if (!w)
		return 1;
	/* A serial initialisation: every page on the main thread's node. */
	for (int i = 0; own && i < total; i++) {
		w[i].buf = malloc(bytes);
		if (!w[i].buf) {
			perror("numalot-workload: malloc");
			return 1;
		}
		memset(w[i].buf, 1, bytes);
	}
	for (int i = 0; i < n; i++)
		if (start(&w[i], i, i < (int)shorter ? seconds / 4 : seconds,
			  mode, bytes, own && i == 0)) {
			perror("numalot-workload: pthread_create");
			return 1;
		}
	if (own)
		run(&w[0]);
	if (nl) {
		struct timespec ts = {
			(time_t)(seconds / 2),
			(long)((seconds / 2 - (time_t)(seconds / 2)) * 1e9)};
		nanosleep(&ts, NULL);
		for (int i = n; i < total; i++)
			if (start(&w[i], i, seconds / 2, mode, bytes, 0)) {
				perror("numalot-workload: pthread_create");
				return 1;
			}
	}
	double sum = 0;
	for (int i = 0; i < total; i++) {
		if (!(own && i == 0))
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
