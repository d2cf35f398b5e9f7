/*
 * Replay tests of when the real node reads where a process's pages are
 * (numa_maps; docs/real-node.md, "Cost"), on the saved tree
 * tests/data/proc-replay/ and a clock the test moves (nl_real_set_clock):
 * exact, and no sleeps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "replay_tree.h"

static double now_s;
static double clock_of_test(void)
{
	return now_s;
}

static int setup_clocked(void **state)
{
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	now_s = 1000;
	return replay_setup(state, &o, clock_of_test);
}

/* The process's anonymous pages as the machine has them, the clock moved
 * on by dt first; its numa_maps readings and looks left unread so far. */
static double look(struct replay *rp, double dt, unsigned long *reads,
		   unsigned long *kept)
{
	const struct nl_process_info *pi;
	double pg[NL_MAX_NODES] = {0}, sum = 0;
	size_t n;

	now_s += dt;
	assert_int_equal(rp->m->ops->node_pages(rp->m, rp->pid, pg), 0);
	for (int i = 0; i < rp->m->topo->nnodes; i++)
		sum += pg[i];
	assert_int_equal(rp->m->ops->processes(rp->m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (pi[i].pid == rp->pid) {
			*reads = pi[i].real.pages_reads;
			*kept = pi[i].real.pages_skipped;
		}
	return sum;
}

/* The heap mapping's pages now (the saved numa_maps has 12, and 3 of
 * stack: 15 anonymous pages; the file mapping does not count). */
static void heap_pages(const struct replay *rp, int pages)
{
	char path[512];
	FILE *f;
	snprintf(path, sizeof(path), "%s/proc/%d/numa_maps", rp->root, rp->pid);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f,
		"55d4c8a00000 default file=/usr/bin/replay mapped=2 N0=2 "
		"kernelpagesize_kB=4\n"
		"55d4c8c00000 default heap anon=%d dirty=%d N0=%d "
		"kernelpagesize_kB=4\n"
		"7ffd1a300000 default stack anon=3 dirty=3 N0=3 "
		"kernelpagesize_kB=4\n",
		pages, pages, pages);
	fclose(f);
}

/* The process faulted (minor faults, field 10): its pages may have moved. */
static void faulted(const struct replay *rp)
{
	add_field(rp, 0, 10, 100);
}

/*
 * A young process's pages are read every second, every 2 s once two
 * readings in a row found the same; a change brings the 1 s back.
 */
static void replay_young_pages_every_second_then_two(void **state)
{
	struct replay *rp = *state;
	unsigned long reads, kept;

	assert_true(look(rp, 0, &reads, &kept) == 15);
	assert_int_equal(reads, 1);
	faulted(rp);
	assert_true(look(rp, 1.1, &reads, &kept) == 15);
	assert_int_equal(reads, 2); /* the same as before: now every 2 s */
	faulted(rp);
	heap_pages(rp, 5000);
	assert_true(look(rp, 1.1, &reads, &kept) == 15);
	assert_int_equal(reads, 2);
	assert_true(look(rp, 1.0, &reads, &kept) == 5003);
	assert_int_equal(reads, 3); /* changed: every second again */
	faulted(rp);
	assert_true(look(rp, 1.1, &reads, &kept) == 5003);
	assert_int_equal(reads, 4);
}

/*
 * A due reading is left out while the process's faults and resident size
 * stay as they were (its stat, one short read); memory touched (faults)
 * or freed (resident size) is read at the next due look, and a reading
 * is never older than 30 s.
 */
static void replay_still_pages_left_unread(void **state)
{
	struct replay *rp = *state;
	unsigned long reads, kept;

	look(rp, 0, &reads, &kept);
	assert_int_equal(reads, 1);
	heap_pages(rp, 5000); /* as no fault made it: not read */
	assert_true(look(rp, 1.1, &reads, &kept) == 15);
	assert_int_equal(reads, 1);
	assert_int_equal(kept, 1);
	assert_true(look(rp, 2.1, &reads, &kept) == 15);
	assert_int_equal(reads, 1);
	faulted(rp);
	assert_true(look(rp, 2.1, &reads, &kept) == 5003);
	assert_int_equal(reads, 2);
	heap_pages(rp, 12);
	set_field(rp, 0, 24, "1000"); /* resident size: 3359 pages, now 1000 */
	assert_true(look(rp, 1.1, &reads, &kept) == 15);
	assert_int_equal(reads, 3);
	/* Still for 30 s: read all the same (every 5 s past 20 s of age). */
	unsigned long k0 = kept;
	for (int i = 0; i < 6; i++)
		look(rp, 5.1, &reads, &kept);
	assert_int_equal(reads, 4);
	assert_true(kept > k0);
}

/* A process of many mappings has them read less often: 6,000 mappings,
 * once in 12 s at most, faults or not. */
static void replay_costly_pages_read_less(void **state)
{
	struct replay *rp = *state;
	unsigned long reads, kept;
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/%d/numa_maps", rp->root, rp->pid);
	assert_non_null(f = fopen(path, "w"));
	for (int i = 0; i < 6000; i++)
		fprintf(f, "%x000 default anon=1 dirty=1 N0=1\n", 0x10000 + i);
	fclose(f);
	assert_true(look(rp, 0, &reads, &kept) == 6000);
	assert_int_equal(reads, 1);
	heap_pages(rp, 12);
	for (int i = 0; i < 5; i++) {
		faulted(rp);
		assert_true(look(rp, 2.1, &reads, &kept) == 6000);
		assert_int_equal(reads, 1);
	}
	faulted(rp);
	assert_true(look(rp, 2.1, &reads, &kept) == 15); /* 12.6 s */
	assert_int_equal(reads, 2);
}

/* A process of many threads has its pages read at most once in
 * (threads / 100) s: 300 threads, 3 s. */
static void replay_many_threads_pages_read_less(void **state)
{
	enum { NTHR = 300 };
	struct replay *rp = *state;
	unsigned long reads, kept;
	pthread_t th[NTHR];
	pthread_attr_t a;
	const struct nl_thread_info *ti;
	int p[2], tid[NTHR];
	size_t n;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(pthread_attr_init(&a), 0);
	assert_int_equal(pthread_attr_setstacksize(&a, 64 << 10), 0);
	pthread_barrier_destroy(&started);
	pthread_barrier_init(&started, NULL, NTHR + 1);
	static int fd[NTHR][3];
	for (int i = 0; i < NTHR; i++) {
		fd[i][0] = p[0];
		fd[i][2] = 0; /* live_tid[0] is overwritten: read below */
		assert_int_equal(pthread_create(&th[i], &a, blocked, fd[i]), 0);
	}
	pthread_barrier_wait(&started);
	/* Their tids: each task directory of this process not yet known. */
	size_t k = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	assert_non_null(d);
	while ((e = readdir(d)) && k < NTHR) {
		int t = atoi(e->d_name), known = t == rp->pid;
		for (int i = 0; i < NLIVE; i++)
			known |= t == rp->tid[i];
		if (t > 0 && !known)
			tid[k++] = t;
	}
	closedir(d);
	assert_int_equal(k, NTHR);
	for (size_t i = 0; i < k; i++)
		task_dir(rp, tid[i], 1);
	assert_int_equal(rp->m->ops->threads(rp->m, &ti, &n), 0);
	assert_int_equal(n, 1 + INTREE + NTHR);
	look(rp, 0, &reads, &kept);
	assert_int_equal(reads, 1);
	faulted(rp);
	look(rp, 2.1, &reads, &kept);
	assert_int_equal(reads, 1);
	faulted(rp);
	look(rp, 1.0, &reads, &kept);
	assert_int_equal(reads, 2);
	close(p[1]);
	for (int i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
	close(p[0]);
	pthread_attr_destroy(&a);
	pthread_barrier_destroy(&started);
	pthread_barrier_init(&started, NULL, NLIVE + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			replay_young_pages_every_second_then_two, setup_clocked,
			teardown),
		cmocka_unit_test_setup_teardown(replay_still_pages_left_unread,
						setup_clocked, teardown),
		cmocka_unit_test_setup_teardown(replay_costly_pages_read_less,
						setup_clocked, teardown),
		cmocka_unit_test_setup_teardown(
			replay_many_threads_pages_read_less, setup_clocked,
			teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
