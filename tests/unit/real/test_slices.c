/*
 * Unit tests of a big domain read in slices (issue 14; docs/protocol.md,
 * "Cost"): where the machine can read ahead, a domain of more than about
 * 1,024 threads is read a slice a call, the policy runs once all of it is
 * read, and the result is the same as reading it in one go. The real
 * node's read-ahead is tried on this test's own threads. What the real
 * node leaves unread is replayed exactly in test_replay.c and
 * test_replay_pages.c; the live runs here prove the same paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "procfs.h"
#include "real.h"
#include "util.h"

/* Process 100 (domain 1, monitor): SMALL threads; process 200 (domain 2,
 * lbma): BIG threads, all there from the start. */
#define SMALL 5
#define BIG 3000
#define SLICE 1024 /* DUE_BATCH_THREADS, engine.c */

struct fake {
	struct nl_machine m;
	struct nl_topology *topo;
	hwloc_bitmap_t all;
	double now;
	struct nl_thread_info *live;
	size_t nlive;
	struct nl_process_info proc[2];
	int threads_of_calls, ahead_calls;
	long ahead_left; /* of this round (-1: none begun) */
	size_t ahead_max;
	int ahead_pid_other; /* read ahead asked for another than 200 */
	double ahead_s;	     /* machine time a slice takes */
};

static struct fake *F(struct nl_machine *m)
{
	return m->priv;
}

static void play(struct fake *f, int want100, int want200)
{
	size_t n = 0;
	for (int i = 0; want100 && i < SMALL; i++)
		f->live[n++] = (struct nl_thread_info){.tid = 100 + i,
						       .pid = 100,
						       .start_time = 1,
						       .cpu = i % 4,
						       .allowed = f->all};
	for (int i = 0; want200 && i < BIG; i++)
		f->live[n++] = (struct nl_thread_info){.tid = 1000 + i,
						       .pid = 200,
						       .start_time = 1,
						       .cpu = i % 4,
						       .allowed = f->all};
	f->nlive = n;
}

static int fk_threads(struct nl_machine *m, const struct nl_thread_info **out,
		      size_t *n)
{
	play(F(m), 1, 1);
	F(m)->ahead_left = -1;
	*out = F(m)->live;
	*n = F(m)->nlive;
	return 0;
}

static int fk_threads_of(struct nl_machine *m, const int *pids, size_t npids,
			 const struct nl_thread_info **out, size_t *n)
{
	int want100 = 0, want200 = 0;
	struct fake *f = F(m);
	f->threads_of_calls++;
	for (size_t i = 0; i < npids; i++) {
		want100 |= pids[i] == 100;
		want200 |= pids[i] == 200;
	}
	play(f, want100, want200);
	f->ahead_left = -1; /* what was read ahead is used */
	*out = f->live;
	*n = f->nlive;
	return 0;
}

/* Reads max threads a call: 1 while some are left. */
static int fk_read_ahead(struct nl_machine *m, const int *pids, size_t npids,
			 size_t max)
{
	struct fake *f = F(m);
	f->ahead_calls++;
	f->ahead_max = max;
	f->now += f->ahead_s;
	for (size_t i = 0; i < npids; i++)
		f->ahead_pid_other |= pids[i] != 200;
	if (f->ahead_left < 0)
		f->ahead_left = BIG;
	f->ahead_left -= (long)max < f->ahead_left ? (long)max : f->ahead_left;
	return f->ahead_left > 0;
}

/* A thread's CPU share moves with its tid and the time. */
static int fk_sample(struct nl_machine *m, int tid, struct nl_sample *out)
{
	memset(out, 0, sizeof(*out));
	out->measured = NL_M_TASK_CLOCK;
	out->wall_s = 1;
	out->task_clock_s = 0.1 + 0.8 * ((tid * 7 + (int)F(m)->now) % 10) / 10;
	out->cpu = -1;
	return 0;
}

static int fk_place(struct nl_machine *m, int tid, int cpu)
{
	(void)m;
	(void)tid;
	(void)cpu;
	return 0;
}

static int fk_release(struct nl_machine *m, int tid)
{
	(void)m;
	(void)tid;
	return 0;
}

static int fk_wait(struct nl_machine *m, double s)
{
	F(m)->now += s;
	return 1;
}

static double fk_now(struct nl_machine *m)
{
	return F(m)->now;
}

static int fk_processes(struct nl_machine *m,
			const struct nl_process_info **out, size_t *n)
{
	*out = F(m)->proc;
	*n = 2;
	return 0;
}

static void fk_destroy(struct nl_machine *m)
{
	(void)m;
}

static struct nl_machine_ops ops_one_go = {
	.threads = fk_threads,
	.sample = fk_sample,
	.place = fk_place,
	.release = fk_release,
	.wait = fk_wait,
	.now = fk_now,
	.processes = fk_processes,
	.destroy = fk_destroy,
	.threads_of = fk_threads_of,
};

static struct nl_machine_ops ops_sliced;

static void setup(struct fake *f, int sliced)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(
		nl_topology_load("numa:2 core:2 pu:1", &f->topo, NULL, 0), 0);
	f->all = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(f->all, 0, 3);
	f->live = calloc(SMALL + BIG + 1, sizeof(*f->live));
	f->ahead_left = -1;
	ops_sliced = ops_one_go;
	ops_sliced.read_ahead = fk_read_ahead;
	f->m = (struct nl_machine){.ops = sliced ? &ops_sliced : &ops_one_go,
				   .topo = f->topo,
				   .backend = "test",
				   .priv = f};
	f->proc[0] =
		(struct nl_process_info){.pid = 100, .job = 1, .end_s = -1};
	f->proc[1] =
		(struct nl_process_info){.pid = 200, .job = 2, .end_s = -1};
}

static void teardown(struct fake *f)
{
	free(f->live);
	hwloc_bitmap_free(f->all);
	nl_topology_free(f->topo);
}

static struct nl_engine *engine(struct fake *f)
{
	struct nl_engine *e;
	struct nl_policy_params p, q;
	nl_policy_params_default(&p);
	q = p;
	q.period_s = p.period_s * 1.5;
	assert_int_equal(nl_engine_create(&f->m, &e), 0);
	assert_int_equal(
		nl_engine_add_domain(e, 1, "small", NL_POLICY_MONITOR, &q, 1),
		0);
	assert_int_equal(
		nl_engine_add_domain(e, 2, "big", NL_POLICY_LBMA, &p, 2), 0);
	assert_int_equal(nl_engine_add_process(e, 100, 1), 0);
	assert_int_equal(nl_engine_add_process(e, 200, 2), 0);
	return e;
}

static int periods(struct nl_engine *e, int domain)
{
	struct nl_engine_summary s;
	assert_int_equal(nl_engine_summary(e, domain, &s), 0);
	return s.periods;
}

/*
 * Run for seconds of machine time, calling the engine again at once while
 * it says a domain is still due now (a slice was read, as the agent does
 * after serving its socket). Returns how many calls left one due now.
 */
static int run(struct fake *f, struct nl_engine *e, double seconds)
{
	int slices = 0;
	double end = f->now + seconds;
	while (f->now < end) {
		double due = nl_engine_step_due(e);
		assert_true(due >= 0);
		if (due <= f->now) {
			slices++;
			continue;
		}
		f->now = due < end ? due : end;
	}
	return slices;
}

static char *report_text(struct nl_engine *e, int domain)
{
	struct json_object *r = nl_engine_report(e, domain);
	char *s = strdup(json_object_to_json_string_ext(
		r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(r);
	return s;
}

/* The big domain's periods are read in slices of 1,024 threads: its
 * policy does not run until the last slice; the small one never is. */
static void big_domain_waits_for_its_slices(void **state)
{
	struct fake f;
	struct nl_engine *e;
	struct nl_policy_params p;
	(void)state;
	nl_policy_params_default(&p);
	setup(&f, 1);
	e = engine(&f);
	f.now = p.period_s; /* the big domain's first period: taken over */
	assert_true(nl_engine_step_due(e) > f.now);
	assert_int_equal(periods(e, 2), 1);
	f.now = 1.5 * p.period_s; /* the small one's: read in one go */
	assert_true(nl_engine_step_due(e) > f.now);
	assert_int_equal(periods(e, 1), 1);
	assert_int_equal(f.ahead_calls, 0);
	f.now = 2 * p.period_s;
	/* 3,000 threads: two calls read a slice each and step nothing. */
	for (int k = 1; k <= 2; k++) {
		int calls = f.threads_of_calls;
		assert_true(nl_engine_step_due(e) == f.now);
		assert_int_equal(f.ahead_calls, k);
		assert_int_equal(f.threads_of_calls, calls);
		assert_int_equal(periods(e, 2), 1);
	}
	/* The third reads the last slice, then the period runs. */
	assert_true(nl_engine_step_due(e) > f.now);
	assert_int_equal(f.ahead_calls, 3);
	assert_int_equal(periods(e, 2), 2);
	assert_int_equal((int)f.ahead_max, SLICE);
	assert_int_equal(f.ahead_pid_other, 0);
	nl_engine_free(e);
	teardown(&f);
}

/* Sliced or in one go, both domains' reports are the same, byte for
 * byte (the slices take no machine time here). */
static void slices_give_the_same_reports(void **state)
{
	struct fake one, sl;
	struct nl_engine *e1, *e2;
	int slices;
	(void)state;
	setup(&one, 0);
	setup(&sl, 1);
	e1 = engine(&one);
	e2 = engine(&sl);
	run(&one, e1, 20);
	slices = run(&sl, e2, 20);
	/* Every period of the big domain but its first: three calls read
	 * ahead, two of them a slice only. */
	assert_int_equal(sl.ahead_calls, 3 * (periods(e2, 2) - 1));
	assert_true(slices >= 2 * (periods(e2, 2) - 1));
	assert_true(periods(e2, 2) >= 10);
	assert_int_equal(one.ahead_calls, 0);
	for (int d = 1; d <= 2; d++) {
		char *a = report_text(e1, d), *b = report_text(e2, d);
		assert_int_equal(periods(e1, d), periods(e2, d));
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	nl_engine_free(e1);
	nl_engine_free(e2);
	teardown(&one);
	teardown(&sl);
}

/* Slices that take time do not stretch the big domain's period: it is
 * timed from its first slice, as if read in one go. */
static void slices_keep_the_period(void **state)
{
	struct fake one, sl;
	struct nl_engine *e1, *e2;
	(void)state;
	setup(&one, 0);
	setup(&sl, 1);
	sl.ahead_s = 0.05;
	e1 = engine(&one);
	e2 = engine(&sl);
	run(&one, e1, 20);
	run(&sl, e2, 20);
	assert_true(sl.ahead_calls > 0);
	assert_true(periods(e2, 2) >= 10);
	assert_int_equal(periods(e2, 2), periods(e1, 2));
	assert_int_equal(periods(e2, 1), periods(e1, 1));
	nl_engine_free(e1);
	nl_engine_free(e2);
	teardown(&one);
	teardown(&sl);
}

/* The real node: this test's own threads, all past the counter budget. */
#define NT 40
static volatile int stop[NT];
static volatile int tids_of[NT];

static void *idle_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	while (!stop[i])
		usleep(1000);
	return NULL;
}

/* The real node (this machine's topology) with options o, or NULL when
 * this machine cannot have one (the test skips). */
static struct nl_machine *real_here(const struct nl_real_options *o,
				    struct nl_topology **topo)
{
	struct nl_machine *m;
	char err[256];

	if (nl_topology_load(NULL, topo, err, sizeof(err)) < 0)
		return NULL;
	if (nl_real_create(*topo, o, &m, err, sizeof(err)) < 0) {
		nl_topology_free(*topo);
		return NULL;
	}
	return m;
}

/* The real node (software counters) managing this process, or NULL
 * when this machine cannot have one (the test skips). */
static struct nl_machine *self_managed(struct nl_topology **topo)
{
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	struct nl_proc_opts po = {.job = 1};
	struct nl_machine *m = real_here(&o, topo);
	char err[256];

	if (m)
		assert_int_equal(
			m->ops->add_process(m, getpid(), &po, err, sizeof(err)),
			0);
	return m;
}

/* Read ahead until done: how many calls said some were left. */
static int ahead_calls(struct nl_machine *m, int pid, size_t max)
{
	int calls = 0, rc;
	while ((rc = m->ops->read_ahead(m, &pid, 1, max)) == 1)
		calls++;
	assert_int_equal(rc, 0);
	return calls;
}

static void real_node_reads_ahead(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	struct nl_proc_opts po = {.job = 1};
	const struct nl_thread_info *ti;
	pthread_t th[NT];
	char err[256];
	size_t n, k;
	int pid = getpid();
	(void)state;
	if (!(m = real_here(&o, &topo)))
		skip();
	nl_real_set_budget(m, 0, 0); /* nobody gets counters */
	for (int i = 0; i < NT; i++)
		assert_int_equal(pthread_create(&th[i], NULL, idle_thread,
						(void *)(intptr_t)i),
				 0);
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
	assert_true(n >= NT + 1);
	/* All but the main thread (read at the refresh), 16 a call. */
	k = n - 1;
	assert_int_equal(ahead_calls(m, pid, 16), (int)((k + 15) / 16 - 1));
	assert_int_equal(ahead_calls(m, pid, 16), 0); /* all read ahead */
	/* The refresh takes what was read, and sees a thread that ended
	 * since (its task list is read then). */
	stop[0] = 1;
	pthread_join(th[0], NULL);
	/* A joined thread may still be finishing its exit for a moment (the
	 * kernel wakes the joiner before it lets the thread go): wait, with
	 * a bound, until the kernel no longer counts it. */
	for (int w = 0; w < 1000 && nl_proc_count_tasks(pid) != (long)k; w++)
		usleep(1000);
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
	assert_int_equal(n, k);
	for (size_t i = 0; i < n; i++)
		assert_true(ti[i].cpu >= 0);
	/* Taken, so read again for the next refresh. */
	assert_int_equal(ahead_calls(m, pid, 16), (int)((k - 1 + 15) / 16 - 1));
	for (int i = 1; i < NT; i++) {
		stop[i] = 1;
		pthread_join(th[i], NULL);
	}
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

/* Whether tid is among the n threads ti. */
static int has_tid(const struct nl_thread_info *ti, size_t n, int tid)
{
	for (size_t i = 0; i < n; i++)
		if (ti[i].tid == tid)
			return 1;
	return 0;
}

static void *tid_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	tids_of[i] = (int)syscall(SYS_gettid);
	while (!stop[i])
		usleep(1000);
	return NULL;
}

/* As tid_thread, busy (spinning) the whole time. */
static void *busy_tid_thread(void *arg)
{
	int i = (int)(intptr_t)arg;
	tids_of[i] = (int)syscall(SYS_gettid);
	while (!stop[i])
		;
	return NULL;
}

/* Refresh pid (sampling its threads, as the engine does) until tid is
 * among its threads and gone is not, at most max times: how many it
 * took, or max + 1. Refreshes are 20 ms apart: a process's CPU clock
 * leaves out what its threads on a CPU ran since the last tick (up to
 * 4-10 ms), so refreshes back to back would not see a busy one. */
static int refreshes_to_see(struct nl_machine *m, int pid, int tid, int gone,
			    int max, size_t *n)
{
	const struct nl_thread_info *ti;
	for (int r = 1; r <= max; r++) {
		usleep(20000);
		assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, n), 0);
		for (size_t i = 0; i < *n; i++) {
			struct nl_sample s;
			m->ops->sample(m, ti[i].tid, &s);
		}
		if (has_tid(ti, *n, tid) && !has_tid(ti, *n, gone))
			return r;
	}
	return max + 1;
}

/*
 * Tasks are listed when the kernel's count changes, or every few refreshes
 * (docs/real-node.md, "Cost"): a thread that starts is seen at the next
 * refresh; of one that ends as another starts, a busy one within 17
 * (IDLE_COUNTED_RECHECK + STAT_RECHECK, then the listing), an idle one at
 * the latest with the full listing (LIST_RECHECK, 32). Counted threads.
 */
static void real_node_lists_when_counts_change(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	struct nl_proc_opts po = {.job = 1};
	const struct nl_thread_info *ti;
	pthread_t th[5];
	char err[256];
	size_t n, n0;
	int pid = getpid();
	(void)state;
	if (!(m = real_here(&o, &topo)))
		skip();
	memset((void *)stop, 0, sizeof(stop));
	memset((void *)tids_of, 0, sizeof(tids_of));
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, tid_thread,
						(void *)(intptr_t)i),
				 0);
	while (!tids_of[0] || !tids_of[1])
		usleep(1000);
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n0), 0);
	assert_true(has_tid(ti, n0, tids_of[0]) && has_tid(ti, n0, tids_of[1]));
	/* A third thread: one more than known, listed at once. */
	assert_int_equal(
		pthread_create(&th[2], NULL, tid_thread, (void *)(intptr_t)2),
		0);
	while (!tids_of[2])
		usleep(1000);
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
	assert_int_equal(n, n0 + 1);
	assert_true(has_tid(ti, n, tids_of[2]));
	/* Thread 0 ends, thread 3 starts, busy: as many as before. The
	 * process is not quiet (quiet.c): thread 0's stat read fails within
	 * 16 refreshes (known_tasks), and the next lists thread 3. */
	stop[0] = 1;
	pthread_join(th[0], NULL);
	assert_int_equal(pthread_create(&th[3], NULL, busy_tid_thread,
					(void *)(intptr_t)3),
			 0);
	while (!tids_of[3])
		usleep(1000);
	assert_true(refreshes_to_see(m, pid, tids_of[3], tids_of[0], 18, &n) <=
		    18);
	assert_int_equal(n, n0 + 1);
	/* Thread 3 ends, thread 4 starts, idle: within the full listing. */
	stop[3] = 1;
	pthread_join(th[3], NULL);
	assert_int_equal(
		pthread_create(&th[4], NULL, tid_thread, (void *)(intptr_t)4),
		0);
	while (!tids_of[4])
		usleep(1000);
	assert_true(refreshes_to_see(m, pid, tids_of[4], tids_of[3], 34, &n) <=
		    34);
	assert_int_equal(n, n0 + 1);
	for (int i = 1; i < 5; i++) {
		if (i == 3)
			continue;
		stop[i] = 1;
		pthread_join(th[i], NULL);
	}
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

/* This process's resident pages, all nodes, as the machine has them. */
static double pages_now(struct nl_machine *m, int pid)
{
	double pg[NL_MAX_NODES] = {0}, sum = 0;
	assert_int_equal(m->ops->node_pages(m, pid, pg), 0);
	for (int i = 0; i < m->topo->nnodes; i++)
		sum += pg[i];
	return sum;
}

/* This process's numa_maps readings and the looks that left it unread. */
static void page_looks(struct nl_machine *m, int pid, unsigned long *reads,
		       unsigned long *kept)
{
	const struct nl_process_info *pi;
	size_t n;
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (pi[i].pid == pid) {
			*reads = pi[i].real.pages_reads;
			*kept = pi[i].real.pages_skipped;
			return;
		}
	fail();
}

/* Touch len bytes of new memory, wait 2.1 s, look at the pages: the
 * readings made so far into *reads. Returns the memory. */
static char *touch_then_look(struct nl_machine *m, int pid, size_t len,
			     unsigned long *reads)
{
	unsigned long kept;
	char *mem = malloc(len);
	assert_non_null(mem);
	memset(mem, 1, len);
	usleep(2100000);
	pages_now(m, pid);
	page_looks(m, pid, reads, &kept);
	return mem;
}

/*
 * A process of many mappings (a thread stack each, say) has its numa_maps
 * read less often: 6,000 mappings, at most once in 12 s, memory touched
 * or not (docs/real-node.md, "Cost").
 */
static void real_node_reads_costly_pages_less(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	const size_t nmap = 6000, len = 16 << 20;
	unsigned long reads, reads0, kept0;
	long pgsz = sysconf(_SC_PAGESIZE);
	char *mem, *many;
	int pid = getpid();
	(void)state;
	if (!(m = self_managed(&topo)))
		skip();
	/* nmap mappings of one page each (every other one read-only, so
	 * the kernel cannot merge them), all touched. */
	many = mmap(NULL, nmap * (size_t)pgsz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(many != MAP_FAILED);
	for (size_t i = 0; i < nmap; i++)
		many[i * (size_t)pgsz] = 1;
	for (size_t i = 0; i < nmap; i += 2)
		assert_int_equal(mprotect(many + i * (size_t)pgsz, (size_t)pgsz,
					  PROT_READ),
				 0);
	pages_now(m, pid); /* the first reading, with them */
	page_looks(m, pid, &reads0, &kept0);
	assert_int_equal(reads0, 1);
	/* Memory touched: a process of few mappings would have it read
	 * again after 1 s (real_node_leaves_still_pages_unread). */
	mem = touch_then_look(m, pid, len, &reads);
	assert_int_equal(reads, reads0);
	free(mem);
	munmap(many, nmap * (size_t)pgsz);
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

static int fork_pipe[2];
static volatile pid_t forked;

/* Waits (without running) until told, then starts a child that waits. */
static void *waking_thread(void *arg)
{
	char c;
	(void)arg;
	while (read(fork_pipe[0], &c, 1) < 0)
		;
	pid_t k = fork();
	if (k == 0) {
		pause();
		_exit(0);
	}
	forked = k;
	return NULL;
}

static int managed(struct nl_machine *m, int pid)
{
	const struct nl_process_info *pi;
	size_t n;
	assert_int_equal(m->ops->processes(m, &pi, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (pi[i].pid == pid)
			return 1;
	return 0;
}

/*
 * A thread that has not run since its children file was read is not read
 * again (docs/real-node.md, "Cost"); once it runs and starts a process,
 * that process is managed at the next scan (every 2 s).
 */
static void real_node_children_of_a_thread_that_woke(void **state)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1,
				    .follow_children = 1};
	struct nl_proc_opts po = {.job = 1};
	const struct nl_thread_info *ti;
	pthread_t th;
	char err[256];
	size_t n;
	int pid = getpid(), found = 0;
	(void)state;
	if (!(m = real_here(&o, &topo)))
		skip();
	assert_int_equal(pipe(fork_pipe), 0);
	forked = 0;
	assert_int_equal(pthread_create(&th, NULL, waking_thread, NULL), 0);
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	/* Refreshes over more than a scan: the thread's file read once,
	 * then left alone while it waits. */
	for (int r = 0; r < 6; r++) {
		assert_int_equal(m->ops->threads(m, &ti, &n), 0);
		for (size_t i = 0; i < n; i++) {
			struct nl_sample s;
			m->ops->sample(m, ti[i].tid, &s);
		}
		usleep(500000);
	}
	assert_int_equal(write(fork_pipe[1], "x", 1), 1);
	pthread_join(th, NULL);
	assert_true(forked > 0);
	for (int r = 0; r < 40 && !found; r++) {
		assert_int_equal(m->ops->threads(m, &ti, &n), 0);
		for (size_t i = 0; i < n; i++) {
			struct nl_sample s;
			m->ops->sample(m, ti[i].tid, &s);
		}
		found = managed(m, forked);
		if (!found)
			usleep(200000);
	}
	kill(forked, SIGKILL);
	waitpid(forked, NULL, 0);
	assert_true(found);
	close(fork_pipe[0]);
	close(fork_pipe[1]);
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

#define NSPIN 4
static volatile int spin_go, spin_stop;
static volatile pid_t spin_tids[NSPIN];

/* Idle until spin_go, then busy until spin_stop. */
static void *late_spinner(void *arg)
{
	volatile double x = 1;
	spin_tids[(intptr_t)arg] = (pid_t)syscall(SYS_gettid);
	while (!spin_go)
		usleep(2000);
	while (!spin_stop)
		x = x * 1.0000001;
	return NULL;
}

/* Refresh pid's threads as the agent does beside other jobs: three
 * refreshes of no process of this one's in between. */
static void refresh_among_others(struct nl_machine *m, int pid)
{
	const struct nl_thread_info *ti;
	size_t n;
	int none = -1;
	assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(m->ops->threads_of(m, &none, 1, &ti, &n), 0);
}

/*
 * An idle thread is read in turns, with no sample in between; once it
 * wakes, a sample says so within a few periods, its share not inflated
 * (docs/real-node.md, "Cost"). Live, with counters (counted 1); past the
 * budget test_replay.c replays it exactly. The node is refreshed four
 * times for each of this process's, as beside other jobs.
 */
static void idle_in_turns(int counted)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1};
	struct nl_proc_opts po = {.job = 1};
	struct nl_sample s;
	pthread_t th[NSPIN];
	char err[256];
	int pid = getpid(), skipped = 0;
	double busiest[NSPIN] = {0}, most = 0;
	if (!(m = real_here(&o, &topo)))
		skip();
	if (!counted)
		nl_real_set_budget(m, 0, 0); /* nobody gets counters */
	spin_go = spin_stop = 0;
	for (intptr_t i = 0; i < NSPIN; i++) {
		spin_tids[i] = 0;
		assert_int_equal(
			pthread_create(&th[i], NULL, late_spinner, (void *)i),
			0);
		while (!spin_tids[i])
			usleep(1000);
	}
	assert_int_equal(m->ops->add_process(m, pid, &po, err, sizeof(err)), 0);
	/* Idle for 8 periods: after idle reads, some periods give no
	 * sample for them. */
	for (int r = 0; r < 8; r++) {
		refresh_among_others(m, pid);
		for (int i = 0; i < NSPIN; i++) {
			int rc = m->ops->sample(m, spin_tids[i], &s);
			if (rc == -ENODATA)
				skipped++;
			else if (r > 0) /* not the taking over's: microseconds,
					   where one wake-up can be 10% */
				/* idle: a wake-up every 2 ms, a few % */
				assert_true(rc == 0 &&
					    s.task_clock_s <= 0.1 * s.wall_s);
		}
		usleep(100000);
	}
	assert_true(skipped > 0);
	/* Busy: each seen busy within 8 periods; no share above a CPU. */
	spin_go = 1;
	for (int r = 0; r < 8; r++) {
		usleep(200000);
		refresh_among_others(m, pid);
		for (int i = 0; i < NSPIN; i++) {
			if (m->ops->sample(m, spin_tids[i], &s) != 0 ||
			    !(s.wall_s > 0))
				continue;
			double share = s.task_clock_s / s.wall_s;
			if (share > busiest[i])
				busiest[i] = share;
			most = share > most ? share : most;
		}
	}
	spin_stop = 1;
	for (int i = 0; i < NSPIN; i++) {
		pthread_join(th[i], NULL);
		/* seen running (more on a quiet node) */
		assert_true(busiest[i] > 0.05);
	}
	/* ticks: a little over 1 at most; task-clock: exact */
	assert_true(most < (counted ? 1.05 : 1.3));
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

static void real_node_counted_idle_in_turns(void **state)
{
	(void)state;
	idle_in_turns(1);
}

/*
 * A process of more than 1,024 threads: its threads' children files are
 * read in turns, each about every 2 s, so a child started by one of them
 * after the take-over is managed within about 2 s.
 */
#define MANY 1100
static int block_fd[2];

static void *blocked_thread(void *arg)
{
	char c;
	(void)arg;
	while (read(block_fd[0], &c, 1) < 0)
		;
	return NULL;
}

static void *forking_thread(void *arg)
{
	pid_t c = fork();
	if (c == 0) {
		sleep(30);
		_exit(0);
	}
	*(pid_t *)arg = c;
	return blocked_thread(NULL); /* its child stays its own */
}

/* Is a thread of pid among those handed out? */
static int handed_out(const struct nl_thread_info *ti, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (ti[i].pid == pid)
			return 1;
	return 0;
}

/* Refreshed every 0.1 s, read ahead before each refresh or not; children
 * followed (found within 3 s) or not (never). */
static void children_in_turns(int read_ahead, int follow)
{
	struct nl_topology *topo;
	struct nl_machine *m;
	struct nl_real_options o = {.backend = NL_BACKEND_SOFTWARE,
				    .fallback = 1,
				    .follow_children = follow};
	struct nl_proc_opts po = {.job = 1};
	const struct nl_thread_info *ti;
	pthread_t *th = calloc(MANY, sizeof(*th)), f;
	char err[256];
	size_t n;
	int pid = getpid(), found = 0;
	pid_t child = 0;
	if (!(m = real_here(&o, &topo)))
		skip();
	nl_real_set_budget(m, 0, 0);
	assert_int_equal(pipe(block_fd), 0);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(
			pthread_create(&th[i], NULL, blocked_thread, NULL), 0);
	/* A thread that forks and stays: its children file names the child
	 * (a thread's children are its own, not its process's). Not
	 * followed: there from the start, for the first look to see. */
	for (int k = 0; k < 2; k++) {
		if (k == follow) {
			assert_int_equal(pthread_create(&f, NULL,
							forking_thread, &child),
					 0);
			while (!child)
				usleep(1000);
		} else {
			assert_int_equal(m->ops->add_process(m, pid, &po, err,
							     sizeof(err)),
					 0);
			assert_int_equal(
				m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
			assert_true(n > MANY);
		}
	}
	for (int k = 0; k < 30 && !found; k++) {
		usleep(100000);
		if (read_ahead)
			ahead_calls(m, pid, SLICE);
		assert_int_equal(m->ops->threads_of(m, &pid, 1, &ti, &n), 0);
		found = handed_out(ti, n, child);
	}
	assert_int_equal(found, follow);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(block_fd[1]);
	pthread_join(f, NULL);
	for (int i = 0; i < MANY; i++)
		pthread_join(th[i], NULL);
	close(block_fd[0]);
	free(th);
	nl_machine_destroy(m);
	nl_topology_free(topo);
}

static void many_threads_children_in_turns(void **state)
{
	(void)state;
	children_in_turns(0, 1);
	children_in_turns(1, 1);
	children_in_turns(1, 0); /* not asked for: no child taken */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(big_domain_waits_for_its_slices),
		cmocka_unit_test(slices_give_the_same_reports),
		cmocka_unit_test(slices_keep_the_period),
		cmocka_unit_test(real_node_reads_ahead),
		cmocka_unit_test(real_node_lists_when_counts_change),
		cmocka_unit_test(real_node_reads_costly_pages_less),
		cmocka_unit_test(real_node_children_of_a_thread_that_woke),
		cmocka_unit_test(real_node_counted_idle_in_turns),
		cmocka_unit_test(many_threads_children_in_turns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
