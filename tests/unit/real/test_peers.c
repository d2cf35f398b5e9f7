/* numad found from its pid file only when the pid is a running numad;
 * pages moved and policies changed by others (core/real/peers.c); numalot's
 * own page moves in batches that never cut a huge page, so that it counts
 * what it moved (core/real/real_page_moves.c). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "real.h"

static char dir[] = "/tmp/numalot-peers.XXXXXX";

static void write_pid(const char *file, long pid)
{
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "%ld\n", pid);
	fclose(f);
}

/* A process whose name is "numad": a copy of sleep by that name. */
static pid_t start_named(const char *name)
{
	char bin[256], cmd[600];
	snprintf(bin, sizeof(bin), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cp \"$(command -v sleep)\" %s", bin);
	assert_int_equal(system(cmd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(bin, name, "30", (char *)NULL);
		_exit(127);
	}
	/* Its name is numad's once it has exec'd. */
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	for (int i = 0; i < 500 && strncmp(comm, name, strlen(name)); i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		usleep(10000);
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_numad_running(void **state)
{
	(void)state;
	char file[300];
	snprintf(file, sizeof(file), "%s/numad.pid", dir);
	pid_t pid = start_named("numad");
	write_pid(file, pid);
	assert_int_equal(nl_numad_pid_from(file), pid);
	stop(pid);
	/* Left behind by a numad that ended. */
	assert_int_equal(nl_numad_pid_from(file), 0);
}

static void test_not_numad(void **state)
{
	(void)state;
	char file[300];
	snprintf(file, sizeof(file), "%s/other.pid", dir);
	pid_t pid = start_named("notnumad");
	write_pid(file, pid);
	assert_int_equal(nl_numad_pid_from(file), 0);
	stop(pid);
	write_pid(file, -5);
	assert_int_equal(nl_numad_pid_from(file), 0);
	snprintf(file, sizeof(file), "%s/none.pid", dir);
	assert_int_equal(nl_numad_pid_from(file), 0);
}

/* Pages that left nodes and reached others, less numalot's own; growth
 * or shrinkage alone moves none. A policy change past growth. */
static void test_moved_and_changed(void **state)
{
	(void)state;
	double a[3] = {100, 0, 50}, b[3] = {20, 70, 60},
	       grown[3] = {100, 80, 50};
	int from, to;
	assert_true(nl_pages_moved_by_others(a, b, 3, 0, &from, &to) == 80);
	assert_int_equal(from, 0);
	assert_int_equal(to, 1);
	assert_true(nl_pages_moved_by_others(a, b, 3, 30, &from, &to) == 50);
	assert_true(nl_pages_moved_by_others(a, b, 3, 90, &from, &to) == 0);
	assert_true(nl_pages_moved_by_others(a, grown, 3, 0, &from, &to) == 0);
	assert_int_equal(from, -1);
	assert_true(nl_pages_moved_by_others(grown, a, 3, 0, &from, &to) == 0);
	assert_true(nl_policy_changed(0, 100, 100, 100) == 100);
	assert_true(nl_policy_changed(100, 100, 0, 100) == 100);
	assert_true(nl_policy_changed(0, 100, 50, 150) == 0);
	assert_true(nl_policy_changed(0, 100, 80, 130) == 50);
}

/* A batch of 1,024 pages ends at a 2 MiB boundary: a huge page moves
 * whole, and one cut by a batch's end would move uncounted. */
static void test_batch_end(void **state)
{
	(void)state;
	unsigned long k = 4096, m = 2UL << 20, a = 0x7f0000000000UL;
	/* From an unaligned start: to the last boundary within 4 MiB; then
	 * 4 MiB at a time. */
	assert_true(nl_page_batch_end(a + 160 * k, a + 64 * m, 1024, k, m) ==
		    a + 2 * m);
	assert_true(nl_page_batch_end(a + 2 * m, a + 64 * m, 1024, k, m) ==
		    a + 4 * m);
	/* Never past the mapping's end. */
	assert_true(nl_page_batch_end(a + 2 * m, a + 3 * m, 1024, k, m) ==
		    a + 3 * m);
	/* No huge pages, or bigger than a batch (64 KiB pages, 512 MiB):
	 * 1,024 pages. */
	assert_true(nl_page_batch_end(a + 160 * k, a + 64 * m, 1024, k, 0) ==
		    a + 1184 * k);
	assert_true(nl_page_batch_end(a + 16 * k, a + 64 * m, 1024, 65536,
				      512 * m / 2) ==
		    a + 16 * k + 1024 * 65536);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numad_running),
		cmocka_unit_test(test_not_numad),
		cmocka_unit_test(test_moved_and_changed),
		cmocka_unit_test(test_batch_end),
	};
	if (!mkdtemp(dir))
		return 1;
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[100];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
