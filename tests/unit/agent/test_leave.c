/*
 * Unit tests of the agent leaving a Slurm job's cgroups (issue 11, item
 * 1): which hierarchies it leaves, where it goes (v1: the root; v2: its own
 * cgroup, else the root), what it says. Hierarchies here are folders with a
 * plain cgroup.procs file; the real moves are checked from outside by the
 * Slurm tests (cgroup v1) and the guest's (cgroup v2).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "leave.h"

static char dir[] = "/tmp/numalot-leave.XXXXXX";
static char cgfile[600], mountinfo[600];

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = 0;
	buf[0] = 0;
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

/* Hierarchies freezer, cpu+cpuacct, name=systemd (v1) and a v2 one, each
 * a folder with an empty cgroup.procs, described in mountinfo. */
static int setup(void **state)
{
	(void)state;
	static const char *const h[] = {"freezer", "cpu,cpuacct", "systemd",
					"unified"};
	char path[700], text[4000] = "";
	size_t used = 0;
	if (!mkdtemp(dir))
		return -1;
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, h[i]);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", dir, h[i]);
		put(path, "");
	}
	used += (size_t)snprintf(
		text + used, sizeof(text) - used,
		"30 22 0:27 / %s rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"33 30 0:30 / %s/freezer rw,relatime - cgroup cgroup "
		"rw,freezer\n"
		"34 30 0:31 / %s/cpu,cpuacct rw - cgroup cgroup "
		"rw,cpu,cpuacct\n"
		"35 30 0:32 /sub %s/elsewhere rw - cgroup cgroup rw,memory\n"
		"39 30 0:36 / %s/systemd rw - cgroup cgroup rw,name=systemd\n"
		"40 30 0:37 / %s/unified rw,relatime - cgroup2 cgroup2 rw\n",
		dir, dir, dir, dir, dir, dir);
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", dir);
	put(mountinfo, text);
	snprintf(cgfile, sizeof(cgfile), "%s/cgroup", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *procs(const char *h)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", dir, h);
	return slurp(path);
}

static void clear(void)
{
	char path[700];
	static const char *const h[] = {"freezer", "cpu,cpuacct", "systemd",
					"unified", "unified/numalotd"};
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", dir, h[i]);
		if (access(path, F_OK) == 0)
			put(path, "");
	}
}

static void test_job_paths(void **state)
{
	(void)state;
	assert_true(nl_cgroup_is_job("/slurm/uid_0/job_12/step_0"));
	assert_true(nl_cgroup_is_job("/system.slice/n1_slurmstepd.scope/"
				     "job_3/step_batch/user/task_0"));
	assert_true(nl_cgroup_is_job("/slurm/uid_0/job_7"));
	assert_false(nl_cgroup_is_job("/"));
	assert_false(nl_cgroup_is_job("/system.slice/slurmd.service"));
	assert_false(nl_cgroup_is_job("/user/job_x/step_0"));
	assert_false(nl_cgroup_is_job("/a/job_12b"));
	assert_false(nl_cgroup_is_job("/myjob_3"));
}

/* cgroup v1 (with the v2 hierarchy unused, as on hybrid systems): the
 * job's hierarchies are left for their roots, the others are untouched. */
static void test_v1_job(void **state)
{
	(void)state;
	char said[1024];
	clear();
	put(cgfile, "9:name=systemd:/\n"
		    "6:freezer:/slurm/uid_0/job_1/step_0\n"
		    "2:cpu,cpuacct:/slurm/uid_0/job_1/step_0\n"
		    "0::/\n");
	int rc = nl_leave_job_cgroups_at(cgfile, mountinfo, 4242, said,
					 sizeof(said));
	assert_int_equal(rc, 2);
	assert_string_equal(procs("freezer"), "4242\n");
	assert_string_equal(procs("cpu,cpuacct"), "4242\n");
	assert_string_equal(procs("systemd"), "");
	assert_string_equal(procs("unified"), "");
	assert_non_null(strstr(said, "freezer /slurm/uid_0/job_1/step_0 -> /"));
	assert_non_null(strstr(said, "cpu,cpuacct /slurm/uid_0/job_1/step_0"));
}

/* cgroup v2: to its own cgroup below the root, else to the root. */
static void test_v2_job(void **state)
{
	(void)state;
	char said[1024], path[700];
	clear();
	put(cgfile, "0::/system.slice/n_slurmstepd.scope/job_4/step_0/slurm\n");
	/* A plain folder stands in for a cgroup: no cgroup.procs in the new
	 * one, so the root. */
	int rc = nl_leave_job_cgroups_at(cgfile, mountinfo, 77, said,
					 sizeof(said));
	assert_int_equal(rc, 1);
	assert_string_equal(procs("unified"), "77\n");
	assert_non_null(strstr(said, "v2 /system.slice/n_slurmstepd.scope/"
				     "job_4/step_0/slurm -> /"));
	/* Where the kernel made the new cgroup's files: there. */
	clear();
	snprintf(path, sizeof(path), "%s/unified/numalotd/cgroup.procs", dir);
	put(path, "");
	rc = nl_leave_job_cgroups_at(cgfile, mountinfo, 78, said, sizeof(said));
	assert_int_equal(rc, 1);
	assert_string_equal(procs("unified/numalotd"), "78\n");
	assert_string_equal(procs("unified"), "");
	assert_non_null(strstr(said, "-> /numalotd"));
}

/* Not in a job: nothing moves, nothing said. */
static void test_not_in_job(void **state)
{
	(void)state;
	char said[1024];
	clear();
	put(cgfile, "6:freezer:/\n2:cpu,cpuacct:/system.slice/slurmd.service\n"
		    "0::/system.slice/numalotd.service\n");
	assert_int_equal(nl_leave_job_cgroups_at(cgfile, mountinfo, 5, said,
						 sizeof(said)),
			 0);
	assert_string_equal(said, "");
	assert_string_equal(procs("freezer"), "");
	assert_string_equal(procs("unified"), "");
}

/* A job's hierarchy that is not mounted at its root (memory here), or
 * whose cgroup.procs cannot be written: -1, each named, the rest done. */
static void test_cannot_leave(void **state)
{
	(void)state;
	char said[1024], path[700];
	clear();
	put(cgfile, "4:memory:/slurm/uid_0/job_9/step_0\n"
		    "3:blkio:/slurm/uid_0/job_9/step_0\n"
		    "6:freezer:/slurm/uid_0/job_9/step_0\n");
	int rc = nl_leave_job_cgroups_at(cgfile, mountinfo, 9, said,
					 sizeof(said));
	assert_int_equal(rc, -1);
	assert_string_equal(procs("freezer"), "9\n");
	assert_non_null(strstr(said, "stays in memory /slurm/uid_0/job_9/"
				     "step_0: its hierarchy is not mounted"));
	assert_non_null(strstr(said, "stays in blkio"));
	/* Unreadable inputs say which. */
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(
		nl_leave_job_cgroups_at(path, mountinfo, 9, said, sizeof(said)),
		-1);
	assert_non_null(strstr(said, path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_paths),
		cmocka_unit_test(test_v1_job),
		cmocka_unit_test(test_v2_job),
		cmocka_unit_test(test_not_in_job),
		cmocka_unit_test(test_cannot_leave),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
