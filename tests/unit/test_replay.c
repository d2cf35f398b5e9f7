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

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "procfs.h"
#include "real.h"
#include "real_priv.h"

#ifndef DATA_DIR
#define DATA_DIR "tests/data"
#endif

/* The tree's tids 101-103 become live threads 0-2; 3-5 are spares, added
 * to the tree as threads that start. */
#define NLIVE 6
#define INTREE 3

struct replay {
	char root[NL_FS_ROOT_MAX];
	int pid;
	int tid[NLIVE];
	pthread_t th[NLIVE];
	int block[2];
	struct nl_topology *topo;
	struct nl_machine *m;
};

static pthread_barrier_t started;
static int live_tid[NLIVE];

/* Blocked on a pipe: alive, and never running. */
static void *blocked(void *arg)
{
	int *fd = arg;
	char c;
	live_tid[fd[2]] = (int)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	while (read(fd[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* The saved tree's name for a live one: the pid, tids 101-103. */
static void live_name(const struct replay *rp, const char *name, char *out,
		      size_t len)
{
	int v = atoi(name);
	if (v == 100)
		snprintf(out, len, "%d", rp->pid);
	else if (v >= 101 && v < 101 + INTREE)
		snprintf(out, len, "%d", rp->tid[v - 101]);
	else
		snprintf(out, len, "%s", name);
}

/* A saved file, the test's uid written for @UID@. */
static void copy_file(const char *from, const char *to, const char *uid)
{
	char buf[4096], *p = buf, *at;
	FILE *f = fopen(from, "r"), *g = fopen(to, "w");
	assert_non_null(f);
	assert_non_null(g);
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	while ((at = strstr(p, "@UID@"))) {
		fwrite(p, 1, (size_t)(at - p), g);
		fputs(uid, g);
		p = at + 5;
	}
	fputs(p, g);
	fclose(f);
	fclose(g);
}

static void copy_tree(const struct replay *rp, const char *from, const char *to)
{
	DIR *d = opendir(from);
	struct dirent *e;
	char uid[16];
	assert_non_null(d);
	assert_int_equal(mkdir(to, 0755), 0);
	snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
	while ((e = readdir(d))) {
		char a[512], b[512], name[NAME_MAX + 1];
		struct stat st;
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
			continue;
		live_name(rp, e->d_name, name, sizeof(name));
		snprintf(a, sizeof(a), "%s/%s", from, e->d_name);
		snprintf(b, sizeof(b), "%s/%s", to, name);
		assert_int_equal(stat(a, &st), 0);
		if (S_ISDIR(st.st_mode))
			copy_tree(rp, a, b);
		else
			copy_file(a, b, uid);
	}
	closedir(d);
}

static void task_path(const struct replay *rp, int tid, const char *file,
		      char *out, size_t len)
{
	snprintf(out, len, "%s/proc/%d/task/%d%s%s", rp->root, rp->pid, tid,
		 file ? "/" : "", file ? file : "");
}

/* Set field (1-based, as proc(5) counts) of tid's stat to v. */
static void set_field(const struct replay *rp, int tid, int field,
		      const char *v)
{
	char path[512], buf[1024], out[1100];
	FILE *f;
	size_t n, o;
	task_path(rp, tid, "stat", path, sizeof(path));
	assert_non_null(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')') + 2; /* field 3 */
	o = (size_t)(p - buf);
	memcpy(out, buf, o);
	for (int k = 3; *p; k++) {
		size_t w = strcspn(p, " \n");
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s%s",
				      k == field ? (int)strlen(v) : (int)w,
				      k == field ? v : p, p[w] ? " " : "");
		p += w + (p[w] != 0);
	}
	assert_non_null(f = fopen(path, "w"));
	fputs(out, f);
	fputc('\n', f);
	fclose(f);
}

static void add_ticks(const struct replay *rp, int tid, int ticks)
{
	char path[512], buf[1024], v[24];
	FILE *f;
	unsigned long long u = 0;
	task_path(rp, tid, "stat", path, sizeof(path));
	assert_non_null(f = fopen(path, "r"));
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	fclose(f);
	char *p = strrchr(buf, ')') + 2;
	for (int k = 3; k < 14; k++)
		p = strchr(p, ' ') + 1;
	u = strtoull(p, NULL, 10);
	snprintf(v, sizeof(v), "%llu", u + (unsigned long long)ticks);
	set_field(rp, tid, 14, v);
}

/* A thread's task directory: removed (it ended) or made from the saved
 * tid 101's (it started). */
static void task_dir(const struct replay *rp, int tid, int present)
{
	char dir[512], to[512];
	task_path(rp, tid, NULL, dir, sizeof(dir));
	if (!present) {
		task_path(rp, tid, "stat", to, sizeof(to));
		unlink(to);
		task_path(rp, tid, "children", to, sizeof(to));
		unlink(to);
		assert_int_equal(rmdir(dir), 0);
		return;
	}
	assert_int_equal(mkdir(dir, 0755), 0);
	task_path(rp, tid, "stat", to, sizeof(to));
	copy_file(DATA_DIR "/proc-replay/proc/100/task/101/stat", to, "");
	task_path(rp, tid, "children", to, sizeof(to));
	copy_file(DATA_DIR "/proc-replay/proc/100/task/100/children", to, "");
}

static int fds[NLIVE][3];

/* The tree copied and named, the real node on it, the process managed,
 * past the counter budget (its threads measured from their stat files). */
static int setup(void **state)
{
	struct replay *rp = calloc(1, sizeof(*rp));
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	char err[256];

	assert_non_null(rp);
	rp->pid = getpid();
	assert_int_equal(pipe(rp->block), 0);
	pthread_barrier_init(&started, NULL, NLIVE + 1);
	for (int i = 0; i < NLIVE; i++) {
		fds[i][0] = rp->block[0];
		fds[i][2] = i;
		assert_int_equal(
			pthread_create(&rp->th[i], NULL, blocked, fds[i]), 0);
	}
	pthread_barrier_wait(&started);
	memcpy(rp->tid, live_tid, sizeof(rp->tid));
	snprintf(rp->root, sizeof(rp->root), "/tmp/numalot-replay-XXXXXX");
	assert_non_null(mkdtemp(rp->root));
	assert_int_equal(rmdir(rp->root), 0);
	copy_tree(rp, DATA_DIR "/proc-replay", rp->root);
	assert_int_equal(nl_fs_set_root(rp->root), 0);
	assert_int_equal(nl_topology_load(NULL, &rp->topo, err, sizeof(err)),
			 0);
	assert_int_equal(nl_real_create(rp->topo, &o, &rp->m, err, sizeof(err)),
			 0);
	nl_real_set_budget(rp->m, 0, 0);
	struct nl_proc_opts po = {.job = 1};
	assert_int_equal(
		rp->m->ops->add_process(rp->m, rp->pid, &po, err, sizeof(err)),
		0);
	*state = rp;
	return 0;
}

static void rm_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		char sub[512];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		rm_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

static int teardown(void **state)
{
	struct replay *rp = *state;
	nl_machine_destroy(rp->m);
	nl_topology_free(rp->topo);
	nl_fs_set_root(NULL);
	close(rp->block[1]); /* every blocked thread reads its end */
	for (int i = 0; i < NLIVE; i++)
		pthread_join(rp->th[i], NULL);
	close(rp->block[0]);
	pthread_barrier_destroy(&started);
	rm_tree(rp->root);
	free(rp);
	return 0;
}

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
