/* Unit tests of the real node's pieces: /proc parsing against recorded
 * text, this process's own threads, software counters, probe wording. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "procfs.h"

/* Recorded from a real thread whose name holds ") (" and spaces. */
static const char *STAT =
	"4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 540 0 2 0 17 5 0 0 "
	"20 0 3 0 123456 10240000 800 18446744073709551615 1 1 0 0 0 0 0 0 "
	"0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

static void parse_stat(void **state)
{
	(void)state;
	struct nl_task_stat st;
	assert_int_equal(nl_proc_parse_stat(STAT, &st), 0);
	assert_string_equal(st.comm, "my (odd) prog");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.utime_ticks, 17);
	assert_int_equal(st.stime_ticks, 5);
	assert_int_equal(st.starttime, 123456);
	assert_int_equal(st.processor, 1);
	assert_int_equal(st.faults, 542); /* minor + major */
	assert_int_equal(st.rss_pages, 800);
	assert_int_equal(nl_proc_parse_stat("4242 no parens S 1", &st),
			 -EINVAL);
	assert_int_equal(nl_proc_parse_stat("4242 (x) S 1 2", &st), -EINVAL);
	/* Numbers read by hand as strtoull reads them: a number too big is
	 * refused, one followed by other text is taken up to it. */
	char big[512];
	snprintf(big, sizeof(big), "%s", STAT);
	memcpy(strstr(big, "123456"), "99999999999999999999999", 6);
	assert_int_equal(nl_proc_parse_stat(big, &st), 0);
	assert_int_equal(st.starttime, 999999);
	assert_int_equal(
		nl_proc_parse_stat("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 "
				   "15 16 17 18 99999999999999999999999 ",
				   &st),
		-EINVAL);
	assert_int_equal(
		nl_proc_parse_stat("1 (x) S 1 2 3 4 5 6 7 8 9 10 7x 3 12 13 "
				   "14 15 16 17 5 ",
				   &st),
		0);
	assert_int_equal(st.utime_ticks, 7);
	assert_int_equal(st.starttime, 5);
}

static const char *NUMA_MAPS =
	"00400000 default file=/bin/x mapped=3 N0=3 kernelpagesize_kB=4\n"
	"7f0000000000 interleave:0-1 anon=300 dirty=300 N0=100 N1=200 "
	"kernelpagesize_kB=4\n"
	"7f1000000000 bind:1 anon=5 N1=5 N7=9 kernelpagesize_kB=4\n";

static void parse_numa_maps(void **state)
{
	(void)state;
	double pages[2] = {0, 0};
	assert_int_equal(nl_proc_parse_numa_maps(NUMA_MAPS, pages, 2), 0);
	/* Anonymous memory only (not the binary's 3 pages on N0). */
	assert_true(pages[0] == 100);
	assert_true(pages[1] == 205); /* N7 is beyond this machine: ignored */
	assert_int_equal(nl_proc_parse_numa_maps(" N0=x", pages, 2), -EINVAL);
	assert_int_equal(nl_proc_parse_numa_maps(" N0=-1", pages, 2), -EINVAL);
	/* Not whole numbers (no kernel writes them): read as before. */
	pages[0] = pages[1] = 0;
	assert_int_equal(
		nl_proc_parse_numa_maps(" anon=2 N0=1.5 N1=2e1\n", pages, 2),
		0);
	assert_true(pages[0] == 1.5 && pages[1] == 20);
	/* Under a bind: policy: 5 of the 305 anonymous pages; most, with a
	 * large bound heap; none without. */
	assert_true(fabs(nl_proc_numa_maps_bound(NUMA_MAPS) - 5.0 / 305) <
		    1e-12);
	assert_true(nl_proc_numa_maps_bound("1000 bind:0 anon=900 N0=900\n"
					    "2000 default anon=100 N0=100\n") >
		    0.85);
	assert_true(nl_proc_numa_maps_bound("1000 default anon=9 N0=9\n") == 0);
	assert_true(nl_proc_numa_maps_bound("") == 0);
	/* Under a policy of its own, any but default: bind, interleave,
	 * prefer; not the binary's pages (no anon=). */
	assert_true(fabs(nl_proc_numa_maps_own(
				 "1000 bind:0 anon=10 N0=10\n"
				 "2000 interleave:0-1 anon=20 N0=10 N1=10\n"
				 "3000 prefer:1 anon=30 N1=30\n"
				 "4000 default anon=40 N0=40\n"
				 "5000 prefer:0 file=/bin/x mapped=9 N0=9\n") -
			 0.6) < 1e-12);
	assert_true(nl_proc_numa_maps_own("1000 default anon=9 N0=9\n") == 0);
	assert_true(nl_proc_numa_maps_own("") == 0);
}

static volatile int spin_stop;

static void *spinner(void *arg)
{
	(void)arg;
	while (!spin_stop)
		;
	return NULL;
}

/* Our own threads, seen through /proc; a new thread appears. */
static void own_tasks(void **state)
{
	(void)state;
	pid_t *tids;
	size_t n, n2;
	pthread_t th;
	pid_t me = getpid();

	assert_int_equal(nl_proc_list_tasks(me, &tids, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(tids[0], me);
	free(tids);
	spin_stop = 0;
	assert_int_equal(pthread_create(&th, NULL, spinner, NULL), 0);
	assert_int_equal(nl_proc_list_tasks(me, &tids, &n2), 0);
	assert_int_equal(n2, n + 1);
	/* The kernel's count, without listing, agrees. */
	assert_int_equal(nl_proc_count_tasks(me), (long)n2);
	assert_int_equal(nl_proc_count_tasks(999999999), -ESRCH);
	for (size_t i = 1; i < n2; i++)
		assert_true(tids[i] > tids[i - 1]); /* sorted */
	free(tids);
	spin_stop = 1;
	pthread_join(th, NULL);

	struct nl_task_stat st;
	assert_int_equal(nl_proc_read_stat(me, me, &st), 0);
	assert_true(st.processor >= 0);
	assert_int_equal(nl_proc_read_stat(me, 999999999, &st), -ESRCH);
	pid_t *none;
	assert_int_equal(nl_proc_list_tasks(999999999, &none, &n), -ESRCH);
	uid_t uid;
	assert_int_equal(nl_proc_uid(me, &uid), 0);
	assert_int_equal(uid, getuid());
}

/* The software backend measures a busy thread's CPU time. */
static void software_counters(void **state)
{
	(void)state;
	struct nl_tcounters *c;
	struct nl_sample s;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	volatile double x = 1;

	assert_int_equal(
		nl_counters_open(NL_BACKEND_SOFTWARE, getpid(), tid, &c), 0);
	for (long i = 0; i < 30000000; i++)
		x = x * 1.0000001;
	assert_int_equal(nl_counters_read(c, &s), 0);
	assert_true(s.measured & NL_M_TASK_CLOCK);
	assert_false(s.measured & NL_M_INSTRUCTIONS);
	assert_true(s.task_clock_s > 0.005);
	assert_true(s.task_clock_s <= s.wall_s * 1.05 + 0.01);
	/* A delta, not a running total. */
	assert_int_equal(nl_counters_read(c, &s), 0);
	assert_true(s.task_clock_s < 0.005);
	nl_counters_close(c);
	assert_int_equal(
		nl_counters_open(NL_BACKEND_SOFTWARE, getpid(), 999999999, &c),
		-ESRCH);
}

/* A peek reads the events once for the next read: whether the thread ran
 * and changed CPU since the last read (docs/real-node.md, "Cost"). */
static void counters_peek(void **state)
{
	(void)state;
	struct nl_tcounters *c;
	struct nl_sample s;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	volatile double x = 1;
	double share = -1;
	int migrated = -1;

	assert_int_equal(
		nl_counters_open(NL_BACKEND_SOFTWARE, getpid(), tid, &c), 0);
	for (long i = 0; i < 30000000; i++)
		x = x * 1.0000001;
	assert_int_equal(nl_counters_peek(c, &share, &migrated), 0);
	/* It ran, busy: a good share of a CPU (less on a busy machine). */
	assert_true(share > 0.05 && share < 1.5);
	/* Work after the peek belongs to the next period, not this one. */
	for (long i = 0; i < 30000000; i++)
		x = x * 1.0000001;
	assert_int_equal(nl_counters_read(c, &s), 0);
	assert_true(s.task_clock_s > 0.005);
	double first = s.task_clock_s;
	assert_int_equal(nl_counters_read(c, &s), 0);
	assert_true(s.task_clock_s > 0.005); /* the work after the peek */
	assert_true(first + s.task_clock_s > 0.01);
	nl_counters_close(c);
}

/* The probe's words for each refusal, as an administrator needs them. */
static void probe_reasons(void **state)
{
	(void)state;
	char buf[256];
	nl_probe_perf_reason(buf, sizeof(buf), EACCES, 3, 1);
	assert_non_null(strstr(buf, "perf_event_paranoid=3"));
	assert_non_null(strstr(buf, "CAP_PERFMON"));
	nl_probe_perf_reason(buf, sizeof(buf), ENOENT, 2, 0);
	assert_non_null(strstr(buf, "no PMU"));
	nl_probe_perf_reason(buf, sizeof(buf), ENOENT, 2, 1);
	assert_non_null(strstr(buf, "not supported"));
	nl_probe_perf_reason(buf, sizeof(buf), EBUSY, 2, 1);
	assert_non_null(strstr(buf, "another tool"));
	/* A missing preset is said to be missing, beside what PAPI finds. */
	nl_probe_papi_reason(buf, sizeof(buf), "PAPI_FP_OPS", 20);
	assert_non_null(strstr(buf, "missing: PAPI_FP_OPS is no preset"));
	assert_non_null(strstr(buf, "PAPI finds 20 hardware counters, none"));
	assert_null(strstr(buf, "not available"));
	nl_probe_papi_reason(buf, sizeof(buf), "PAPI_L3_TCM", 1);
	assert_non_null(strstr(buf, "1 hardware counter,"));
	nl_probe_papi_reason(buf, sizeof(buf), "PAPI_L3_TCM", 0);
	assert_non_null(
		strstr(buf, "no hardware counters here, so no PAPI_L3_TCM"));
	nl_probe_perf_reason(buf, sizeof(buf), EMFILE, 2, 1);
	assert_non_null(strstr(buf, "RLIMIT_NOFILE"));
}

/* What auto picks, with backends failing as we say. */
static void probe_pick(void **state)
{
	(void)state;
	struct nl_probe p;
	memset(&p, 0, sizeof(p));
	p.backend[NL_BACKEND_SOFTWARE].available = 1;
	assert_int_equal(nl_probe_pick(&p), NL_BACKEND_SOFTWARE);
	p.backend[NL_BACKEND_PERF].available = 1;
	assert_int_equal(nl_probe_pick(&p), NL_BACKEND_PERF);
	p.backend[NL_BACKEND_PAPI].available = 1;
	assert_int_equal(nl_probe_pick(&p), NL_BACKEND_PAPI);
	/* PAPI listed but unusable (found so by trying): perf. */
	p.backend[NL_BACKEND_PAPI].available = 0;
	assert_int_equal(nl_probe_pick(&p), NL_BACKEND_PERF);
}

/* The live probe never fails and always offers the software backend. */
static void live_probe(void **state)
{
	(void)state;
	struct nl_probe p;
	nl_counters_probe(0, &p);
	assert_true(p.backend[NL_BACKEND_SOFTWARE].available);
	assert_true(p.best != NL_BACKEND_AUTO);
	assert_true(p.backend[p.best].available);
	/* What auto picks agrees with what is there. */
	if (!p.backend[NL_BACKEND_PAPI].available &&
	    !p.backend[NL_BACKEND_PERF].available)
		assert_int_equal(p.best, NL_BACKEND_SOFTWARE);
	enum nl_backend b;
	assert_int_equal(nl_backend_from_name("perf", &b), 0);
	assert_int_equal(b, NL_BACKEND_PERF);
	assert_int_equal(nl_backend_from_name("pmu", &b), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_stat),
		cmocka_unit_test(parse_numa_maps),
		cmocka_unit_test(counters_peek),
		cmocka_unit_test(own_tasks),
		cmocka_unit_test(software_counters),
		cmocka_unit_test(probe_reasons),
		cmocka_unit_test(probe_pick),
		cmocka_unit_test(live_probe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
