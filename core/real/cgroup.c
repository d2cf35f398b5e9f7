/*
 * numalot: a process's allocation, the CPUs of its cgroup's cpuset
 * (docs/real-node.md, "Where a thread may go"). Under Slurm with
 * task/cgroup that is the step's allocated CPUs; a task's narrower
 * binding (numactl, --cpu-bind) lies inside it.
 */
#include "cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Where the hierarchies are mounted on the systems numalot runs on. */
static const char *const v1_roots[] = {"/sys/fs/cgroup/cpuset", NULL};
static const char *const v2_roots[] = {"/sys/fs/cgroup",
				       "/sys/fs/cgroup/unified", NULL};

/* Read a CPU list file into os; 0, or -1 when absent or empty. */
static int read_cpus(const char *path, hwloc_bitmap_t os)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	if (!ok || !buf[0] || hwloc_bitmap_list_sscanf(os, buf) < 0 ||
	    hwloc_bitmap_iszero(os))
		return -1;
	return 0;
}

/*
 * The effective cpuset of cgroup `path` under one of roots, walking up to
 * the nearest ancestor that has one (on cgroup v2 a cgroup without the
 * cpuset controller inherits its parent's). The root cgroup's is not an
 * allocation (every process is there when nothing allocates CPUs): a
 * process in it has none, and its own binding is its limit.
 */
static int cpus_of(const char *fsroot, const char *const *roots,
		   const char *path, const char *const *files,
		   hwloc_bitmap_t os)
{
	char p[2048], file[5300];

	for (int r = 0; roots[r]; r++) {
		snprintf(p, sizeof(p), "%s", path[0] == '/' ? path : "/");
		for (;;) {
			for (int k = 0; files[k]; k++) {
				snprintf(file, sizeof(file), "%s%s%s/%s",
					 fsroot, roots[r],
					 strcmp(p, "/") ? p : "", files[k]);
				if (read_cpus(file, os) == 0)
					return 0;
			}
			*strrchr(p, '/') =
				0; /* up to the parent, not the root */
			if (!p[0])
				break;
		}
	}
	return -1;
}

int nl_cgroup_cpuset_at(const char *fsroot, pid_t pid, hwloc_bitmap_t os,
			char *where, size_t wherelen)
{
	static const char *const v1_files[] = {"cpuset.effective_cpus",
					       "cpuset.cpus", NULL};
	static const char *const v2_files[] = {"cpuset.cpus.effective", NULL};
	char path[1100], *line = NULL, v2[2048] = "";
	size_t cap = 0;
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "%s/proc/%d/cgroup", fsroot, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (rc != 0 && getline(&line, &cap, f) > 0) {
		char *ctl = strchr(line, ':'), *cg;
		if (!ctl || !(cg = strchr(ctl + 1, ':')))
			continue;
		*cg++ = 0;
		cg[strcspn(cg, "\n")] = 0;
		ctl++;
		if (!strcmp(line, "0") && !*ctl) {
			snprintf(v2, sizeof(v2), "%s", cg);
			continue;
		}
		/* v1: the line whose controllers include cpuset. */
		for (char *tok = strtok(ctl, ","); tok; tok = strtok(NULL, ","))
			if (!strcmp(tok, "cpuset") && strcmp(cg, "/") &&
			    cpus_of(fsroot, v1_roots, cg, v1_files, os) == 0) {
				snprintf(where, wherelen, "cgroup v1 cpuset %s",
					 cg);
				rc = 0;
			}
	}
	free(line);
	fclose(f);
	if (rc != 0 && v2[0] && strcmp(v2, "/") &&
	    cpus_of(fsroot, v2_roots, v2, v2_files, os) == 0) {
		snprintf(where, wherelen, "cgroup v2 cpuset %s", v2);
		rc = 0;
	}
	return rc;
}

int nl_cgroup_cpuset(pid_t pid, hwloc_bitmap_t os, char *where, size_t wherelen)
{
	return nl_cgroup_cpuset_at("", pid, os, where, wherelen);
}
