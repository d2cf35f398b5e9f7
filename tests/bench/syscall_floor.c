/*
 * What this machine charges for the reads numalot makes per thread and
 * period (docs/real-node.md, "Cost"), apart from numalot: N idle threads
 * (waking every 200 ms, as numalot-workload --mode idle), each with the
 * four software events numalot opens as one group, and its stat file open;
 * then, 20 times, one pass over the threads: the group read, the stat
 * pread, or getppid (a system call doing nothing). Prints the CPU time of
 * one pass per thread, in us. Built and run by tests/bench/bench_real.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXT 4096
#define ROUNDS 20

static volatile int stop;
static volatile pid_t tids[MAXT];

static void *idle(void *arg)
{
	tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	while (!stop) {
		struct timespec ts = {0, 200000000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static const int ev[4] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
		PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS};
	static const char *what[3] = {"group read of 4 software events",
				      "pread of the stat file",
				      "getppid (an empty system call)"};
	static pthread_t th[MAXT];
	static int gfd[MAXT], sfd[MAXT];
	long n = argc > 1 ? atol(argv[1]) : 1024;

	if (n < 1 || n > MAXT) {
		fprintf(stderr, "usage: %s [THREADS, 1 to %d]\n", argv[0],
			MAXT);
		return 2;
	}
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, idle, (void *)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (long i = 0; i < n; i++)
		while (!tids[i])
			usleep(1000);
	for (long i = 0; i < n; i++) {
		char path[64];
		gfd[i] = -1;
		for (int k = 0; k < 4; k++) {
			struct perf_event_attr a;
			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = PERF_TYPE_SOFTWARE;
			a.config = (unsigned long long)ev[k];
			a.read_format = PERF_FORMAT_GROUP;
			int fd = (int)syscall(SYS_perf_event_open, &a, tids[i],
					      -1, gfd[i], 0);
			if (fd < 0) {
				perror("perf_event_open");
				return 1;
			}
			if (gfd[i] < 0)
				gfd[i] = fd;
		}
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat",
			 (int)tids[i]);
		sfd[i] = open(path, O_RDONLY);
	}
	for (int mode = 0; mode < 3; mode++) {
		double t0 = cpu_s();
		for (int r = 0; r < ROUNDS; r++) {
			for (long i = 0; i < n; i++) {
				unsigned long long v[8];
				char buf[1024];
				if (mode == 0 && read(gfd[i], v, sizeof(v)) < 0)
					return 1;
				if (mode == 1 &&
				    pread(sfd[i], buf, sizeof(buf), 0) < 0)
					return 1;
				if (mode == 2)
					syscall(SYS_getppid);
			}
			usleep(100000);
		}
		printf("%ld threads: %-34s %6.2f us a thread\n", n, what[mode],
		       (cpu_s() - t0) / ROUNDS / (double)n * 1e6);
	}
	stop = 1;
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
