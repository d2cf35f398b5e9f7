/*
 * Replay tests of the real node's refresh and quiet gate (docs/real-node.md,
 * "Saved trees"): the saved /proc tree tests/data/proc-replay/ is copied,
 * named after this process and its idle threads, and edited between
 * refreshes; tests/data/quiet/ holds readings of a process's CPU clock.
 * Exact, and no sleeps: what the refresh reads is what the tree says.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "real_priv.h"
#include "replay_tree.h"

static int has(const struct nl_thread_info *ti, size_t n, int tid)
{
	for (size_t i = 0; i < n; i++)
		if (ti[i].tid == tid)
			return 1;
	return 0;
}

static size_t refresh(struct replay *rp, const struct nl_thread_info **ti)
{
	const struct nl_thread_info *t;
	size_t n;
	assert_int_equal(rp->m->ops->threads_of(rp->m, &rp->pid, 1, &t, &n), 0);
	if (ti)
		*ti = t;
	return n;
}

/* An idle thread is read one refresh in 4, with no sample in between;
 * the read after it ran gives all its time at once, then it is read at
 * every refresh while it runs. */
static void replay_idle_threads_read_in_turns(void **state)
{
	struct replay *rp = *state;
	struct nl_sample s;
	int read[INTREE] = {0};
	long tck = sysconf(_SC_CLK_TCK);

	for (int r = 0; r < 3; r++) /* taken over, then two idle reads */
		assert_int_equal(refresh(rp, NULL), 1 + INTREE);
	size_t reads0 = nl_real_stat_reads(rp->m);
	for (int r = 0; r < 12; r++) {
		refresh(rp, NULL);
		for (int i = 0; i < INTREE; i++) {
			int rc = rp->m->ops->sample(rp->m, rp->tid[i], &s);
			assert_true(rc == 0 || rc == -ENODATA);
			read[i] += rc == 0;
			assert_true(rc != 0 || s.task_clock_s == 0);
		}
	}
	for (int i = 0; i < INTREE; i++)
		assert_int_equal(read[i], 3);
	/* The main thread every time, the others 3 times each. */
	assert_int_equal(nl_real_stat_reads(rp->m) - reads0, 12 + 3 * INTREE);

	/* Thread 0 runs 50 ticks: its next read says so, all of it. */
	add_ticks(rp, rp->tid[0], 50);
	int rc = -ENODATA, waited = 0;
	while (rc == -ENODATA && waited++ < 4) {
		refresh(rp, NULL);
		rc = rp->m->ops->sample(rp->m, rp->tid[0], &s);
	}
	assert_int_equal(rc, 0);
	assert_true(s.task_clock_s == 50.0 / (double)tck);
	/* Running on: read at every refresh, each its own ticks. */
	for (int r = 0; r < 3; r++) {
		add_ticks(rp, rp->tid[0], 10);
		refresh(rp, NULL);
		assert_int_equal(rp->m->ops->sample(rp->m, rp->tid[0], &s), 0);
		assert_true(s.task_clock_s == 10.0 / (double)tck);
	}
	/* Idle again: two reads that find no time, then in turns. */
	for (int r = 0; r < 2; r++) {
		refresh(rp, NULL);
		assert_int_equal(rp->m->ops->sample(rp->m, rp->tid[0], &s), 0);
	}
	int left = 0;
	for (int r = 0; r < 4; r++) {
		refresh(rp, NULL);
		left += rp->m->ops->sample(rp->m, rp->tid[0], &s) == -ENODATA;
	}
	assert_int_equal(left, 3);
}

/* Read ahead until done: how many calls said some were left. */
static int ahead_calls(struct replay *rp, size_t max)
{
	int calls = 0, rc;
	while ((rc = rp->m->ops->read_ahead(rp->m, &rp->pid, 1, max)) == 1)
		calls++;
	assert_int_equal(rc, 0);
	return calls;
}

/* Past the budget a thread's stat is read ahead, max a call, and the
 * refresh takes that reading rather than reading again. */
static void replay_reads_ahead(void **state)
{
	struct replay *rp = *state;
	struct nl_sample s;
	long tck = sysconf(_SC_CLK_TCK);

	refresh(rp, NULL);
	assert_int_equal(ahead_calls(rp, 1), INTREE - 1);
	assert_int_equal(ahead_calls(rp, 1), 0); /* all read ahead */
	add_ticks(rp, rp->tid[1], 7);		 /* after its reading */
	size_t reads0 = nl_real_stat_reads(rp->m);
	assert_int_equal(refresh(rp, NULL), 1 + INTREE);
	assert_int_equal(nl_real_stat_reads(rp->m) - reads0, 1); /* main */
	assert_int_equal(rp->m->ops->sample(rp->m, rp->tid[1], &s), 0);
	assert_true(s.task_clock_s == 0); /* the reading ahead's */
	/* Taken: read again for the next refresh, which then sees the 7. */
	assert_int_equal(ahead_calls(rp, 2), (INTREE + 1) / 2 - 1);
	refresh(rp, NULL);
	assert_int_equal(rp->m->ops->sample(rp->m, rp->tid[1], &s), 0);
	assert_true(s.task_clock_s == 7.0 / (double)tck);
}

/* The task list is read when the kernel counts more or fewer threads
 * than numalot knows; a thread that ended as another started (as many)
 * is seen when its stat read fails, the new one at the listing after. */
static void replay_lists_when_counts_change(void **state)
{
	struct replay *rp = *state;
	const struct nl_thread_info *ti;
	size_t n;

	assert_int_equal(refresh(rp, NULL), 1 + INTREE);
	task_dir(rp, rp->tid[3], 1); /* one more: listed at once */
	n = refresh(rp, &ti);
	assert_int_equal(n, 2 + INTREE);
	assert_true(has(ti, n, rp->tid[3]));
	/* Not idle yet (read every refresh): thread 0's read fails at the
	 * next, thread 4 is listed at the one after. */
	task_dir(rp, rp->tid[0], 0);
	task_dir(rp, rp->tid[4], 1);
	n = refresh(rp, &ti);
	assert_false(has(ti, n, rp->tid[0]));
	assert_false(has(ti, n, rp->tid[4]));
	n = refresh(rp, &ti);
	assert_true(has(ti, n, rp->tid[4]));
	assert_int_equal(n, 2 + INTREE);
	/* Idle (read in turns of 4): thread 1 is seen gone at its turn, and
	 * thread 5 one refresh later. */
	for (int r = 0; r < 3; r++)
		refresh(rp, NULL);
	task_dir(rp, rp->tid[1], 0);
	task_dir(rp, rp->tid[5], 1);
	int r = 0;
	do
		n = refresh(rp, &ti);
	while (!has(ti, n, rp->tid[5]) && ++r < 8);
	assert_true(r >= 1 && r <= 4);
	assert_false(has(ti, n, rp->tid[1]));
	assert_int_equal(n, 2 + INTREE);
}

/* A tid whose start time changed is another thread: the old one let go,
 * the new one taken over, in its place. */
static void replay_reused_tid_taken_over(void **state)
{
	struct replay *rp = *state;
	size_t released0, taken0, released, taken;

	refresh(rp, NULL);
	nl_real_release_s(rp->m, &released0);
	nl_real_takeover_s(rp->m, &taken0);
	set_field(rp, rp->tid[2], 22, "400000");
	assert_int_equal(refresh(rp, NULL), 1 + INTREE);
	nl_real_release_s(rp->m, &released);
	nl_real_takeover_s(rp->m, &taken);
	assert_int_equal(released, released0 + 1);
	assert_int_equal(taken, taken0 + 1);
	/* A zombie thread is gone. */
	set_field(rp, rp->tid[2], 3, "Z");
	const struct nl_thread_info *ti;
	size_t n = refresh(rp, &ti);
	assert_int_equal(n, INTREE);
	assert_false(has(ti, n, rp->tid[2]));
}

/* Replay one file of tests/data/quiet/ through quiet.c. */
static void replay_quiet_file(const char *name)
{
	char path[256], line[256];
	struct rproc p;
	FILE *f;
	int lines = 0;

	snprintf(path, sizeof(path), DATA_DIR "/quiet/%s", name);
	assert_non_null(f = fopen(path, "r"));
	memset(&p, 0, sizeof(p));
	p.nthreads = 2;
	p.clk_state = 1;
	while (fgets(line, sizeof(line), f)) {
		double t;
		unsigned long long ns;
		int judged, quiet, woke;
		if (line[0] == '#' || sscanf(line, "%lf %llu %d %d %d", &t, &ns,
					     &judged, &quiet, &woke) != 5)
			continue;
		int q = nl_real_quiet_at(&p, ns, t);
		int w = nl_real_wake(&p, judged);
		if (q != quiet || w != woke)
			fail_msg("%s, t=%g: quiet %d woke %d, want %d %d", name,
				 t, q, w, quiet, woke);
		lines++;
	}
	fclose(f);
	assert_true(lines >= 6);
}

static void replay_quiet_and_wakes(void **state)
{
	(void)state;
	replay_quiet_file("wake.txt");	/* a quiet process, a thread wakes */
	replay_quiet_file("noise.txt"); /* a busy one's swing is no wake */
	replay_quiet_file("churn.txt"); /* threads came or went: not judged */
	replay_quiet_file("tick.txt");	/* a short window, a tick's lag */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			replay_idle_threads_read_in_turns, setup, teardown),
		cmocka_unit_test_setup_teardown(replay_reads_ahead, setup,
						teardown),
		cmocka_unit_test_setup_teardown(replay_lists_when_counts_change,
						setup, teardown),
		cmocka_unit_test_setup_teardown(replay_reused_tid_taken_over,
						setup, teardown),
		cmocka_unit_test(replay_quiet_and_wakes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
