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
	assert_int_equal(pipe(idle_fd), 0);
	for (intptr_t i = 0; i < IDLE; i++)
		assert_int_equal(
			pthread_create(&th[i], NULL, idle_thread, (void *)i),
			0);
	idle_threads_asleep();
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
		/* A task created: within STAT_RECHECK + IDLE_RECHECK
		 * refreshes each idle thread's stat is read again. */
		pthread_t t;
		size_t s0 = nl_real_stat_reads(m);
		assert_int_equal(pthread_create(&t, NULL, no_op, NULL), 0);
		pthread_join(t, NULL);
		for (int r = 0; r < 12; r++)
			refresh(m, pid);
		assert_true(nl_real_stat_reads(m) - s0 >= 12 + IDLE);
	}
	assert_int_equal(write(idle_fd[1], "xxxx", IDLE), IDLE);
	for (int i = 0; i < IDLE; i++)
		pthread_join(th[i], NULL);
	close(idle_fd[0]);
	close(idle_fd[1]);
	nl_machine_destroy(m);
	nl_topology_free(topo);
	if (!found) {
		print_message("the node was never quiet for two windows of "
			      "%d refreshes: not tried\n",
			      WINDOW);
		skip();
	}
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_node_quiet_node_rereads_no_stat),
		cmocka_unit_test(real_node_zombie_leader_runs_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
