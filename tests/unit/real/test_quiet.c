/*
 * Unit tests of what the real node leaves unread on a quiet node, and of
 * how it sees a process end (issue 14; docs/real-node.md, "Cost"): an
 * idle thread's stat is read again to catch a reused tid only once a
 * task was created on the node since it was last read; a process is
 * running until its pidfd says every thread of it has exited, a zombie
 * leader's other threads included.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counters.h"
#include "procfs.h"
#include "real.h"

static struct nl_machine *real_here(struct nl_topology **topo)
{
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	struct nl_machine *m;
	char err[256];

	if (nl_topology_load(NULL, topo, err, sizeof(err)) < 0)
		return NULL;
	if (nl_real_create(*topo, &o, &m, err, sizeof(err)) < 0) {
		nl_topology_free(*topo);
		return NULL;
	}
	return m;
}

/* The node's last pid (-1 where it cannot be read). */
static long last_pid(void)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "r");
	long v = -1;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* One refresh of pid as the engine makes it: its threads, then each
 * thread's sample. */
static void refresh(struct nl_machine *m, int pid)
{
	const struct nl_thread_info *ti;
	size_t n;
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
	for (size_t i = 0; i < n; i++) {
		struct nl_sample s;
		m->ops->sample(m, ti[i].tid, &s);
	}
}

#define IDLE 4
#define WINDOW 16	 /* refreshes: twice STAT_RECHECK (refresh.c) */
#define SETTLE_US 150000 /* over LAST_PID_SETTLE_S (refresh.c) */
static int idle_fd[2];
static volatile pid_t idle_tid[IDLE];

static void *idle_thread(void *arg)
{
	char c;
	idle_tid[(intptr_t)arg] = (pid_t)syscall(SYS_gettid);
	while (read(idle_fd[0], &c, 1) < 0)
		;
	return NULL;
}

/* Wait (bounded) until every idle thread sleeps in its read. */
static void idle_threads_asleep(void)
{
	struct nl_task_stat st;
	for (int i = 0; i < IDLE; i++)
		for (int k = 0; k < 400; k++) {
			if (idle_tid[i] &&
			    nl_proc_read_stat(getpid(), idle_tid[i], &st) ==
				    0 &&
			    st.state == 'S')
				break;
			usleep(5000);
		}
}

/* Start the IDLE threads (th), and wait until they sleep. */
static void idle_threads_start(pthread_t *th)
{
	assert_int_equal(pipe(idle_fd), 0);
	for (intptr_t i = 0; i < IDLE; i++)
		assert_int_equal(
			pthread_create(&th[i], NULL, idle_thread, (void *)i),
			0);
	idle_threads_asleep();
}

static void idle_threads_stop(pthread_t *th)
{
	assert_int_equal(write(idle_fd[1], "xxxx", IDLE), IDLE);
	for (int i = 0; i < IDLE; i++)
		pthread_join(th[i], NULL);
	close(idle_fd[0]);
	close(idle_fd[1]);
}

static void *no_op(void *arg)
{
	return arg;
}

/*
 * Four threads blocked on a pipe, the whole time idle. Once no task was
 * created on the node for a window of refreshes (each idle thread's stat
 * read once meanwhile), a second such window reads no stat but the main
 * thread's (read every refresh); a thread started makes the idle ones'
 * stat read again. A busy node may create tasks all the time: the test
 * looks for two quiet windows in a row, and skips if it never finds them.
 */
static void real_node_quiet_node_rereads_no_stat(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_proc_opts po = {.job = 1};
	struct nl_probe probe;
	pthread_t th[IDLE];
	char err[256];
	size_t counted = 0, uncounted = 0;
	int pid = getpid(), found = 0;
	(void)state;
	/* Idle threads are told idle by their events: without them every
	 * thread's stat is read each refresh, and there is nothing to see. */
	nl_counters_probe(0, &probe);
	if (last_pid() < 0 || !probe.backend[NL_BACKEND_SOFTWARE].available ||
	    !(m = real_here(&topo)))
		skip();
	idle_threads_start(th);
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	refresh(m, pid);
	assert_int_equal(nl_real_budget_of(m, pid, &counted, &uncounted), 0);
	assert_int_equal(counted, IDLE + 1);
	for (int tries = 0; tries < 40 && !found; tries++) {
		long v0 = last_pid();
		usleep(SETTLE_US); /* what is read from now on is marked */
		for (int r = 0; r < WINDOW; r++)
			refresh(m, pid);
		long v1 = last_pid();
		size_t s0 = nl_real_stat_reads(m);
		for (int r = 0; r < WINDOW; r++)
			refresh(m, pid);
		size_t reads = nl_real_stat_reads(m) - s0;
		if (v0 != v1 || last_pid() != v1)
			continue; /* a task was created: not quiet */
		found = 1;
		assert_int_equal(reads, WINDOW); /* the main thread's only */
	}
	if (found) {
		/* A task created: within IDLE_QUIET_RECHECK refreshes (a
		 * thread's turn of 16, its longest: quiet.c) each idle
		 * thread's stat is read again. */
		pthread_t t;
		size_t s0 = nl_real_stat_reads(m);
		assert_int_equal(pthread_create(&t, NULL, no_op, NULL), 0);
		pthread_join(t, NULL);
		for (int r = 0; r < 16; r++)
			refresh(m, pid);
		assert_true(nl_real_stat_reads(m) - s0 >= 16 + IDLE);
	}
	idle_threads_stop(th);
	nl_machine_destroy(m);
	nl_topology_free(topo);
	if (!found) {
		print_message("the node was never quiet for two windows of "
			      "%d refreshes: not tried\n",
			      WINDOW);
		skip();
	}
}

/* Refreshes 40 ms apart: this thread's own refresh, well under 5% of a
 * CPU (quiet.c) even under a sanitizer. */
#define QUIET_WAIT 40000

/* Refresh pid, wait_us after the last (quiet.c judges a process by its CPU
 * clock, which leaves out what a thread on a CPU ran since the last tick:
 * refreshes back to back would see no time at all), and sample its
 * threads. Each of the n threads in tids that had a sample counts one
 * in got[] (if not NULL) and has in share[] (if not NULL) its share of a
 * CPU, -1 without a sample. */
static void refresh_counting(struct nl_machine *m, int pid, int wait_us,
			     const volatile pid_t *tids, int n, int *got,
			     double *share)
{
	const struct nl_thread_info *ti;
	size_t nt;
	for (int k = 0; k < n && share; k++)
		share[k] = -1;
	usleep((useconds_t)wait_us);
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &nt), 0);
	for (size_t i = 0; i < nt; i++) {
		struct nl_sample s;
		int rc = m->ops->sample(m, ti[i].tid, &s);
		for (int k = 0; k < n; k++) {
			if (rc != 0 || ti[i].tid != tids[k])
				continue;
			if (got)
				got[k]++;
			if (share && s.wall_s > 0)
				share[k] = s.task_clock_s / s.wall_s;
		}
	}
}

#define SPIN 8
static volatile int spin_stop;
static volatile pid_t spin_tid[SPIN];
static int spin_fd[2];

/* Blocked until a byte comes on spin_fd, then busy until spin_stop. */
static void *spinner(void *arg)
{
	char c;
	spin_tid[(intptr_t)arg] = (pid_t)syscall(SYS_gettid);
	while (read(spin_fd[0], &c, 1) < 0)
		;
	while (!spin_stop)
		;
	return NULL;
}

/*
 * A quiet process (under 5% of a CPU since its last refresh) reads its
 * idle counted threads 1 refresh in 16, not 8; threads that wake busy are
 * read busy within 6 refreshes (docs/real-node.md, "Cost"), sooner than
 * the turns of 16 of eight of them could all come.
 */
static void real_node_quiet_process_reads_idle_less(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_proc_opts po = {.job = 1};
	struct nl_probe probe;
	pthread_t th[IDLE], sp[SPIN];
	char err[256];
	int pid = getpid(), got[IDLE] = {0}, total = 0, seen[SPIN] = {0};
	(void)state;
	nl_counters_probe(0, &probe);
	if (!probe.backend[NL_BACKEND_SOFTWARE].available ||
	    !(m = real_here(&topo)))
		skip();
	idle_threads_start(th);
	assert_int_equal(pipe(spin_fd), 0);
	spin_stop = 0;
	for (intptr_t i = 0; i < SPIN; i++) {
		spin_tid[i] = 0;
		assert_int_equal(
			pthread_create(&sp[i], NULL, spinner, (void *)i), 0);
		while (!spin_tid[i])
			usleep(1000);
	}
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	for (int r = 0; r < 8; r++) /* idle reads first: then in turns */
		refresh_counting(m, pid, QUIET_WAIT, idle_tid, IDLE, NULL,
				 NULL);
	for (int r = 0; r < 16; r++)
		refresh_counting(m, pid, QUIET_WAIT, idle_tid, IDLE, got, NULL);
	for (int i = 0; i < IDLE; i++) {
		assert_true(got[i] >= 1); /* its turn of 16 came */
		total += got[i];
	}
	/* 1 each; a few more if the process once looked busy (2 each when
	 * idle threads are read 1 refresh in 8, as in a busy process) */
	assert_true(total <= 2 * IDLE);
	assert_int_equal(write(spin_fd[1], "xxxxxxxx", SPIN), SPIN);
	for (int r = 0; r < 6; r++) {
		double sh[SPIN];
		refresh_counting(m, pid, QUIET_WAIT, spin_tid, SPIN, NULL, sh);
		for (int i = 0; i < SPIN; i++)
			seen[i] |= sh[i] > 0.05; /* beside CPU hogs: 0.2 */
	}
	spin_stop = 1;
	for (int i = 0; i < SPIN; i++)
		pthread_join(sp[i], NULL);
	close(spin_fd[0]);
	close(spin_fd[1]);
	for (int i = 0; i < SPIN; i++)
		assert_true(seen[i]);
	idle_threads_stop(th);
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

static int hop_fd[2];

/* At each byte on hop_fd ('q': ends), onto the other of CPUs a and b
 * (arg: a * 4096 + b), then blocked again. */
static void *hopper(void *arg)
{
	int a = (int)((intptr_t)arg / 4096), b = (int)((intptr_t)arg % 4096);
	char c = 0;
	for (int k = 0; c != 'q'; k++) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(k % 2 ? b : a, &set);
		sched_setaffinity(0, sizeof(set), &set);
		while (read(hop_fd[0], &c, 1) < 0)
			;
	}
	return NULL;
}

/*
 * An idle thread that runs a little and wakes on another CPU each time has
 * its stat read 1 in 32 of its process's refreshes (STAT_CPU_RECHECK), the
 * main thread's every refresh (docs/real-node.md, "Cost"). It hops every 4
 * refreshes, as told: one waking oftener by itself could be read busy (a
 * virtual machine's stolen time counts).
 */
static void real_node_idle_hopper_stat_in_turns(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_proc_opts po = {.job = 1};
	struct nl_probe probe;
	cpu_set_t mine;
	pthread_t th;
	char err[256];
	int pid = getpid(), cpu[2], nc = 0;
	(void)state;
	nl_counters_probe(0, &probe);
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	for (int c = 0; c < CPU_SETSIZE && nc < 2; c++)
		if (CPU_ISSET(c, &mine))
			cpu[nc++] = c;
	if (nc < 2 || !probe.backend[NL_BACKEND_SOFTWARE].available ||
	    !(m = real_here(&topo)))
		skip(); /* one CPU: nowhere to hop */
	assert_int_equal(pipe(hop_fd), 0);
	assert_int_equal(
		pthread_create(&th, NULL, hopper,
			       (void *)(intptr_t)(cpu[0] * 4096 + cpu[1])),
		0);
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	size_t s0 = 0, wakes = 0;
	for (int r = 0; r < 8 + 128; r++) {
		if (r == 8) {
			s0 = nl_real_stat_reads(m);
			wakes = nl_real_wakes(m);
		}
		if (r % 4 == 0)
			assert_int_equal(write(hop_fd[1], "h", 1), 1);
		refresh_counting(m, pid, 20000, NULL, 0, NULL, NULL);
	}
	/* 4 (its turns of 32), where a stat read at every other of its
	 * reads gives 8 (read 1 in 16 or 8) or 16 (1 in 4); 1 more each time it
	 * was seen busy all the same */
	size_t hopper_reads = nl_real_stat_reads(m) - s0 - 128;
	wakes = nl_real_wakes(m) - wakes;
	assert_int_equal(write(hop_fd[1], "q", 1), 1);
	pthread_join(th, NULL);
	close(hop_fd[0]);
	close(hop_fd[1]);
	/* a refresh that read every idle thread for a wake (its clock rose:
	 * quiet.c) may catch it changing CPU with over 2% of that window, and
	 * read it again at the next: 2 more at most each */
	assert_true(hopper_reads <= 6 + 2 * wakes);
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

static int worker_fd[2], leader_fd[2];

static void *child_worker(void *arg)
{
	char c;
	(void)arg;
	while (read(worker_fd[0], &c, 1) < 0)
		;
	return NULL;
}

/* Is pid's process ended, as the machine has it after a refresh? */
static int ended(struct nl_machine *m, int pid)
{
	const struct nl_process_info *p;
	size_t n;
	refresh(m, pid);
	assert_int_equal(m->ops->processes(m, &p, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (p[i].pid == pid)
			return p[i].end_s >= 0;
	fail_msg("process %d is not managed", pid);
	return 1;
}

/* A child of this process whose main thread waits for a byte on
 * leader_fd, then exits alone; its other thread waits on worker_fd. */
static pid_t zombie_to_be(void)
{
	pid_t child;
	char c;
	assert_int_equal(pipe(worker_fd), 0);
	assert_int_equal(pipe(leader_fd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, child_worker, NULL) != 0)
			_exit(1);
		while (read(leader_fd[0], &c, 1) < 0)
			;
		pthread_exit(NULL); /* the leader only: the worker runs on */
	}
	return child;
}

/* Let child's leader exit; wait (bounded) until it is a zombie. */
static void leader_exits(pid_t child)
{
	struct nl_task_stat st = {.state = '?'};
	assert_int_equal(write(leader_fd[1], "x", 1), 1);
	for (int i = 0; i < 400; i++) {
		if (nl_proc_read_stat(child, child, &st) == 0 &&
		    st.state == 'Z')
			break;
		usleep(5000);
	}
	assert_int_equal(st.state, 'Z');
}

static void close_pipes(void)
{
	for (int i = 0; i < 2; i++) {
		close(worker_fd[i]);
		close(leader_fd[i]);
	}
}

/*
 * A process whose main thread has exited while another runs on (its
 * leader a zombie) is running; it ends when that thread does. Seen by a
 * refresh (the leader's kept stat file: no pidfd), its end before it is
 * reaped; and by the wait (its pidfd), at the end, not at the deadline.
 */
static void real_node_zombie_leader_runs_on(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_proc_opts po = {.job = 1};
	char err[256];
	pid_t child;
	int over = 0;
	(void)state;
	if (!(m = real_here(&topo)))
		skip();
	/* By refreshes only. */
	child = zombie_to_be();
	assert_int_equal(m->ops->add_process(m, child, &po, err, sizeof(err)),
			 0);
	assert_false(ended(m, child)); /* its threads taken over */
	leader_exits(child);
	assert_false(ended(m, child));
	assert_int_equal(write(worker_fd[1], "x", 1), 1);
	for (int i = 0; i < 400 && !over; i++) {
		over = ended(m, child);
		if (!over)
			usleep(5000);
	}
	assert_true(over); /* not reaped yet: a zombie, ended */
	assert_int_equal(waitpid(child, NULL, 0), child);
	close_pipes();
	/* By the wait. */
	child = zombie_to_be();
	assert_int_equal(m->ops->add_process(m, child, &po, err, sizeof(err)),
			 0);
	leader_exits(child);
	assert_int_equal(m->ops->wait(m, 0.05), 1); /* the deadline */
	assert_false(ended(m, child));
	assert_int_equal(write(worker_fd[1], "x", 1), 1);
	assert_int_equal(m->ops->wait(m, 30), 0); /* the end, at once */
	assert_true(ended(m, child));
	assert_int_equal(waitpid(child, NULL, 0), child);
	close_pipes();
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

static int wake_fd[2];
static volatile pid_t waker_tid;

/* Blocked until a byte comes on wake_fd, then busy until spin_stop. */
static void *waker(void *arg)
{
	char c;
	waker_tid = (pid_t)syscall(SYS_gettid);
	while (read(wake_fd[0], &c, 1) < 0)
		;
	while (!spin_stop)
		;
	return arg;
}

/* The start of the wake tests: IDLE idle threads (th) and the waker (w),
 * busy from now if busy, in this process, taken over; NULL: no software
 * events or no machine here (skip). */
static struct nl_machine *wake_start(struct nl_topology **topo, pthread_t *th,
				     pthread_t *w, int busy)
{
	struct nl_proc_opts po = {.job = 1};
	struct nl_probe probe;
	struct nl_machine *m;
	char err[256];

	nl_counters_probe(0, &probe);
	if (!probe.backend[NL_BACKEND_SOFTWARE].available ||
	    !(m = real_here(topo)))
		return NULL;
	idle_threads_start(th);
	assert_int_equal(pipe(wake_fd), 0);
	spin_stop = 0;
	waker_tid = 0;
	assert_int_equal(pthread_create(w, NULL, waker, NULL), 0);
	while (!waker_tid)
		usleep(1000);
	if (busy)
		assert_int_equal(write(wake_fd[1], "x", 1), 1);
	assert_int_equal(
		m->ops->add_process(m, getpid(), &po, err, sizeof(err)), 0);
	return m;
}

static void wake_stop(struct nl_machine *m, struct nl_topology *topo,
		      pthread_t *th, pthread_t w)
{
	spin_stop = 1;
	pthread_join(w, NULL);
	close(wake_fd[0]);
	close(wake_fd[1]);
	idle_threads_stop(th);
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

/* Refreshes 100 ms apart: a wake shows well past the clock's lag. */
#define WAKE_WAIT 100000

/*
 * An idle counted thread that wakes busy just after its turn is read, busy,
 * within two refreshes, not at its next turn (8 refreshes on, 4 before
 * issue 14's gate): its process's clock rose past a busy thread's share
 * and past how it moves of late, so the refresh reads every idle thread
 * (quiet.c, nl_real_wake; docs/real-node.md, "Cost").
 */
static void real_node_wake_read_at_once(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	pthread_t th[IDLE], w;
	int pid = getpid(), got = 0, last = 0, skipped = 0, seen = 0;
	(void)state;
	if (!(m = wake_start(&topo, th, &w, 0)))
		skip();
	for (int r = 0; r < 8; r++) /* idle reads first: then in turns */
		refresh_counting(m, pid, QUIET_WAIT, &waker_tid, 1, NULL, NULL);
	/* Its turn: read now, after refreshes that left it unread. */
	for (int r = 0; r < 40 && !(skipped && got > last); r++) {
		last = got;
		refresh_counting(m, pid, WAKE_WAIT, &waker_tid, 1, &got, NULL);
		skipped |= got == last;
	}
	int turn_found = skipped && got > last;
	size_t wakes = nl_real_wakes(m);
	assert_int_equal(write(wake_fd[1], "x", 1), 1);
	for (int r = 0; r < 2; r++) {
		double sh;
		refresh_counting(m, pid, WAKE_WAIT, &waker_tid, 1, NULL, &sh);
		seen |= sh > 0.05; /* beside CPU hogs: 0.2 */
	}
	wakes = nl_real_wakes(m) - wakes;
	wake_stop(m, topo, th, w);
	assert_true(turn_found);
	assert_true(seen);
	assert_true(wakes > 0);
}

/*
 * In a busy process (one thread spins: not quiet), an idle counted thread
 * is read 1 refresh in 8 (IDLE_COUNTED_RECHECK), not 4: over 32
 * refreshes, 4 reads each (5 as turns fall), and 1 more for each time the
 * process's clock told of a wake (blocked, they are not read again at
 * the refresh after: refresh.c, stat_unchanged) (docs/real-node.md,
 * "Cost").
 */
static void real_node_busy_process_idle_turns_of_8(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	pthread_t th[IDLE], w;
	int pid = getpid(), got[IDLE] = {0};
	(void)state;
	if (!(m = wake_start(&topo, th, &w, 1)))
		skip();
	for (int r = 0; r < 8; r++) /* idle reads first: then in turns */
		refresh_counting(m, pid, 20000, idle_tid, IDLE, NULL, NULL);
	size_t wakes = nl_real_wakes(m);
	for (int r = 0; r < 32; r++)
		refresh_counting(m, pid, 20000, idle_tid, IDLE, got, NULL);
	wakes = nl_real_wakes(m) - wakes;
	wake_stop(m, topo, th, w);
	for (int i = 0; i < IDLE; i++) {
		assert_true(got[i] >= 3); /* its turns came */
		assert_true((size_t)got[i] <= 5 + wakes);
	}
}

#define CHURN 24
static int churn_fd[2];

static void *blocked(void *arg)
{
	char c;
	while (read(churn_fd[0], &c, 1) < 0)
		;
	return arg;
}

/*
 * A busy process whose threads come or go at every refresh: no wake can
 * be judged from its clock (the new threads' share of the window is not
 * known: quiet.c), so after 8 such refreshes its idle threads are read in
 * turns of 4 again, not 8: over 16 refreshes, 4 reads each, where turns
 * of 8 give 2 (docs/real-node.md, "Cost").
 */
static void real_node_churn_idle_turns_of_4(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	pthread_t th[IDLE], w, ch[CHURN];
	int pid = getpid(), got[IDLE] = {0}, k = 0;
	(void)state;
	if (!(m = wake_start(&topo, th, &w, 1)))
		skip();
	assert_int_equal(pipe(churn_fd), 0);
	for (int r = 0; r < 8; r++) /* idle reads first: then in turns */
		refresh_counting(m, pid, 20000, idle_tid, IDLE, NULL, NULL);
	for (int r = 0; r < CHURN; r++) {
		/* one thread more each refresh: the count never the same */
		assert_int_equal(pthread_create(&ch[k++], NULL, blocked, NULL),
				 0);
		refresh_counting(m, pid, 20000, idle_tid, IDLE,
				 r >= CHURN - 16 ? got : NULL, NULL);
	}
	for (int i = 0; i < k; i++)
		assert_int_equal(write(churn_fd[1], "x", 1), 1);
	for (int i = 0; i < k; i++)
		pthread_join(ch[i], NULL);
	close(churn_fd[0]);
	close(churn_fd[1]);
	wake_stop(m, topo, th, w);
	for (int i = 0; i < IDLE; i++)
		assert_true(got[i] >= 3); /* 4, one turn maybe read at once */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_node_quiet_node_rereads_no_stat),
		cmocka_unit_test(real_node_zombie_leader_runs_on),
		cmocka_unit_test(real_node_quiet_process_reads_idle_less),
		cmocka_unit_test(real_node_idle_hopper_stat_in_turns),
		cmocka_unit_test(real_node_wake_read_at_once),
		cmocka_unit_test(real_node_busy_process_idle_turns_of_8),
		cmocka_unit_test(real_node_churn_idle_turns_of_4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
