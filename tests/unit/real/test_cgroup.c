/*
 * Unit tests of a process's allocation (core/real/cgroup.c; issue 23,
 * finding 3): only a Slurm job's or step's cgroup allocates CPUs, on
 * cgroup v1 and v2; slurmd's service, system.slice, a session scope and
 * the root do not, and there the task's binding is its limit
 * (docs/slurm.md). /proc/PID/cgroup and the cpuset files are plain files
 * in a tree under a temporary folder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "cgroup.h"

static char dir[] = "/tmp/numalot-cgroup.XXXXXX";

/* Write text to dir/rel, making its folders. */
static void put(const char *rel, const char *text)
{
	char path[1200], cmd[1300];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* pid's /proc/PID/cgroup. */
static void proc(int pid, const char *text)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
	put(rel, text);
}

#define V1 "sys/fs/cgroup/cpuset"
#define V2 "sys/fs/cgroup"

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	/* cgroup v1: the root, slurmd's service and its "system" cgroup,
	 * job steps under /slurm and /slurm_<node>, a job's own cgroup. */
	put(V1 "/cpuset.cpus", "0-7\n");
	put(V1 "/cpuset.effective_cpus", "0-7\n");
	put(V1 "/system.slice/cpuset.cpus", "0-7\n");
	put(V1 "/system.slice/slurmd.service/cpuset.cpus", "0\n");
	put(V1 "/system.slice/slurmd.service/cpuset.effective_cpus", "0\n");
	put(V1 "/slurm/cpuset.cpus", "0-7\n");
	put(V1 "/slurm/system/cpuset.cpus", "0\n");
	put(V1 "/slurm/uid_0/job_3/cpuset.cpus", "2-5\n");
	put(V1 "/slurm/uid_0/job_3/step_0/cpuset.cpus", "2-3\n");
	put(V1 "/slurm/uid_0/job_3/step_0/cpuset.effective_cpus", "2-3\n");
	put(V1 "/slurm_n1/uid_1000/job_7/step_batch/cpuset.cpus", "6\n");
	put(V1 "/slurm/uid_0/job_8/cpuset.cpus", "4-7\n");
	/* cgroup v2: system.slice, slurmd's service, a session, the steps'
	 * scope; a task's cgroups without cpuset files below a step with
	 * them; a step whose job has none, below a scope that has. */
	put(V2 "/cpuset.cpus.effective", "0-7\n");
	put(V2 "/system.slice/cpuset.cpus.effective", "0-7\n");
	put(V2 "/system.slice/slurmd.service/cpuset.cpus.effective", "1\n");
	put(V2 "/user.slice/user-1000.slice/session-3.scope/"
	       "cpuset.cpus.effective",
	    "1\n");
	put(V2 "/system.slice/slurmstepd.scope/cpuset.cpus.effective", "0-7\n");
	put(V2 "/system.slice/slurmstepd.scope/job_12/cpuset.cpus.effective",
	    "4-7\n");
	put(V2 "/system.slice/slurmstepd.scope/job_12/step_0/"
	       "cpuset.cpus.effective",
	    "4-5\n");
	put(V2 "/system.slice/slurmstepd.scope/job_12/step_0/user/task_0/"
	       "cgroup.procs",
	    "");
	put(V2 "/system.slice/slurmstepd.scope/job_13/step_1/user/task_0/"
	       "cgroup.procs",
	    "");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* nl_cgroup_cpuset_at for pid in the tree; its CPU list in cpus. */
static int alloc_of(int pid, char *cpus, size_t len, char *where, size_t wlen)
{
	hwloc_bitmap_t os = hwloc_bitmap_alloc();
	assert_non_null(os);
	where[0] = cpus[0] = 0;
	int rc = nl_cgroup_cpuset_at(dir, pid, os, where, wlen);
	if (rc == 0)
		hwloc_bitmap_list_snprintf(cpus, len, os);
	hwloc_bitmap_free(os);
	return rc;
}

/* pid has no allocation: numalot's caller falls back to its binding. */
static void none(int pid, const char *cgroup)
{
	char cpus[64], where[256];
	proc(pid, cgroup);
	int rc = alloc_of(pid, cpus, sizeof(cpus), where, sizeof(where));
	if (rc != -ENOENT)
		fail_msg("%s: %d, \"%s\" (%s), not -ENOENT", cgroup, rc, where,
			 cpus);
}

/* pid's allocation is cpus, from the cgroup said. */
static void alloc(int pid, const char *cgroup, const char *want_cpus,
		  const char *want_where)
{
	char cpus[64], where[256];
	proc(pid, cgroup);
	int rc = alloc_of(pid, cpus, sizeof(cpus), where, sizeof(where));
	if (rc != 0)
		fail_msg("%s: %d, not an allocation", cgroup, rc);
	assert_string_equal(cpus, want_cpus);
	assert_string_equal(where, want_where);
}

/* The case: a task in slurmd's service cgroup (Slurm without
 * task/cgroup) bound to CPU 1 was moved to CPU 0. */
static void test_v1_service_is_not(void **state)
{
	(void)state;
	none(101, "4:memory:/system.slice/slurmd.service\n"
		  "3:cpuset:/system.slice/slurmd.service\n"
		  "0::/system.slice/slurmd.service\n");
	none(102, "3:cpuset:/system.slice\n0::/\n");
	none(103, "3:cpuset:/slurm/system\n0::/\n");
}

static void test_v1_step_is(void **state)
{
	(void)state;
	alloc(111,
	      "4:memory:/slurm/uid_0/job_3/step_0/task_0\n"
	      "3:cpuset:/slurm/uid_0/job_3/step_0\n0::/\n",
	      "2-3", "cgroup v1 cpuset /slurm/uid_0/job_3/step_0");
	/* Several slurmd on a node: /slurm_<node>; cpuset.cpus only. */
	alloc(112, "3:cpuset:/slurm_n1/uid_1000/job_7/step_batch\n0::/\n", "6",
	      "cgroup v1 cpuset /slurm_n1/uid_1000/job_7/step_batch");
	/* A step's cgroup without its files: the job's. */
	alloc(113, "3:cpu,cpuset:/slurm/uid_0/job_8/step_extern\n0::/\n", "4-7",
	      "cgroup v1 cpuset /slurm/uid_0/job_8");
}

static void test_v2_slice_is_not(void **state)
{
	(void)state;
	none(121, "0::/system.slice\n");
	none(122, "0::/system.slice/slurmd.service\n");
	none(123, "0::/user.slice/user-1000.slice/session-3.scope\n");
	/* Below slurmd's service, nothing of its own: not its parent's. */
	none(124, "0::/system.slice/slurmd.service/system\n");
}

/* A task's cgroup without cpuset files: its step's, never above its
 * job. */
static void test_v2_task_is(void **state)
{
	(void)state;
	alloc(131,
	      "0::/system.slice/slurmstepd.scope/job_12/step_0/user/"
	      "task_0\n",
	      "4-5",
	      "cgroup v2 cpuset /system.slice/slurmstepd.scope/job_12/"
	      "step_0");
	alloc(132, "0::/system.slice/slurmstepd.scope/job_12/step_0/slurm\n",
	      "4-5",
	      "cgroup v2 cpuset /system.slice/slurmstepd.scope/job_12/"
	      "step_0");
	none(133, "0::/system.slice/slurmstepd.scope/job_13/step_1/user/"
		  "task_0\n");
	none(134, "0::/system.slice/slurmstepd.scope\n");
}

static void test_root_is_not(void **state)
{
	(void)state;
	none(141, "3:cpuset:/\n0::/\n");
	none(142, "0::/\n");
	none(143, "");
}

/* Slurm's names: job_<id>, step_<id>|batch|extern|interactive, with a
 * heterogeneous step's "+<component>"; nothing else. */
static void test_names(void **state)
{
	(void)state;
	static const char *const yes[] = {
		"job_5", "job_5/step_2", "job_5/step_interactive",
		"job_5/step_0+1", "job_5/step_extern"};
	static const char *const no[] = {"job_5b",     "myjob_5",  "job_",
					 "step_x",     "step_0+",  "step_",
					 "job_x/user", "step_TDB", "xstep_1"};
	char rel[256], text[256];
	int pid = 200;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++, pid++) {
		snprintf(rel, sizeof(rel), V2 "/n/%s/cpuset.cpus.effective",
			 yes[i]);
		put(rel, "3\n");
		snprintf(text, sizeof(text), "0::/n/%s\n", yes[i]);
		snprintf(rel, sizeof(rel), "cgroup v2 cpuset /n/%s", yes[i]);
		alloc(pid, text, "3", rel);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++, pid++) {
		snprintf(rel, sizeof(rel), V2 "/n/%s/cpuset.cpus.effective",
			 no[i]);
		put(rel, "3\n");
		snprintf(text, sizeof(text), "0::/n/%s\n", no[i]);
		none(pid, text);
	}
}

/* A cgroup file that does not read as the kernel prints it (a name with
 * a newline would print a line of a user's choosing; the kernel refuses
 * such names): another job's allocation is not read from it, nor
 * from a path the kernel would not print. */
static void refused(int pid, const char *cgroup)
{
	char cpus[64], where[256];
	proc(pid, cgroup);
	int rc = alloc_of(pid, cpus, sizeof(cpus), where, sizeof(where));
	if (rc != -EINVAL)
		fail_msg("%s: %d, \"%s\" (%s), not -EINVAL", cgroup, rc, where,
			 cpus);
}

static void test_forged_lines(void **state)
{
	(void)state;
	refused(301, "0::/user.slice/user-1000.slice/x\n"
		     "0::/system.slice/slurmstepd.scope/job_12/step_0\n");
	refused(302, "4:memory:/user/a\n3:cpuset:/user\n"
		     "3:cpuset:/slurm/uid_0/job_3/step_0\n0::/\n");
	refused(303, "2:name=x:/a\n5:cpuset:/slurm/uid_0/job_3/step_0\n"
		     "3:cpuset:/user\n0::/\n");
	refused(304, "0::/system.slice/slurmstepd.scope/job_13/step_1/../"
		     "../job_12/step_0\n");
	refused(305, "x:cpuset:/slurm/uid_0/job_3/step_0\n0::/\n");
	/* One line a hierarchy, as the kernel prints them: read. */
	alloc(306,
	      "4:memory:/slurm/uid_0/job_3/step_0\n"
	      "3:cpuset:/slurm/uid_0/job_3/step_0\n0::/user.slice\n",
	      "2-3", "cgroup v1 cpuset /slurm/uid_0/job_3/step_0");
}

static void test_gone(void **state)
{
	(void)state;
	char cpus[64], where[256];
	assert_int_equal(
		alloc_of(999, cpus, sizeof(cpus), where, sizeof(where)),
		-ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_service_is_not),
		cmocka_unit_test(test_v1_step_is),
		cmocka_unit_test(test_v2_slice_is_not),
		cmocka_unit_test(test_v2_task_is),
		cmocka_unit_test(test_root_is_not),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_forged_lines),
		cmocka_unit_test(test_gone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
