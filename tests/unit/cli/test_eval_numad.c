/* Unit tests: what numalot eval reads in numad's log (core/cli/eval_sys.c):
 * the processes of a run that numad moved, from the lines numad 0.5 writes
 * (docs/evaluation.md, "On your own nodes"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "eval.h"

static char path[] = "/tmp/numalot-test-numad-XXXXXX";

static long write_log(const char *text, const char *mode)
{
	FILE *f = fopen(path, mode);
	long size;
	assert_non_null(f);
	fputs(text, f);
	size = ftell(f);
	fclose(f);
	return size;
}

/* Lines as numad writes them (numad_log: ctime, then the message). */
static const char *earlier =
	"Thu Dec  3 15:08:53 2026: Registering numad version 20150602 PID 25\n"
	"Thu Dec  3 15:09:01 2026: PID 101 moved to node(s) 1 in 0.1 "
	"seconds\n";
static const char *run =
	"Thu Dec  3 15:10:00 2026: Adding PID 102 to inclusion PID list\n"
	"Thu Dec  3 15:10:02 2026: Advising pid 102 (numalot-worklo) move "
	"from nodes (0-3) to nodes (2-3)\n"
	"Thu Dec  3 15:10:02 2026: Tried to move PID 103, TID 104, but it "
	"apparently went away.\n"
	"Thu Dec  3 15:10:02 2026: Tried to move PID 103, but 7 pages would "
	"not move.\n"
	"Thu Dec  3 15:10:03 2026: PID 102 moved to node(s) 2-3 in 0.52 "
	"seconds\n"
	"Thu Dec  3 15:10:09 2026: PID 102 moved to node(s) 1 in 0.40 "
	"seconds\n"
	"Thu Dec  3 15:10:10 2026: PID 999 moved to node(s) 0 in 0.01 "
	"seconds\n";

static void counts_the_runs_processes(void **state)
{
	pid_t pid[] = {101, 102, 103};
	long from;
	(void)state;
	assert_int_not_equal(mkstemp(path), -1);
	from = write_log(earlier, "w");
	write_log(run, "a");
	/* From numad's start on: 102 moved (twice: one process), 103's
	 * attempts failed, 999 is not the run's, 101 moved before. */
	assert_int_equal(nl_eval_numad_log_moved(path, from, pid, 3), 1);
	/* The whole log: 101 too. */
	assert_int_equal(nl_eval_numad_log_moved(path, 0, pid, 3), 2);
	/* A log cut short (rotated) since: read from its start. */
	write_log(run, "w");
	assert_int_equal(nl_eval_numad_log_moved(path, from + 4096, pid, 3), 1);
	/* Nothing of the run's. */
	write_log(earlier, "w");
	assert_int_equal(nl_eval_numad_log_moved(path, from, pid, 3), 0);
	unlink(path);
	assert_int_equal(nl_eval_numad_log_moved(path, 0, pid, 3), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_the_runs_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
