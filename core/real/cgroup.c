/*
 * numalot: a process's allocation, the CPUs of its Slurm job's or step's
 * cgroup's cpuset (docs/slurm.md, --numalot-bindings). Under Slurm with
 * task/cgroup that is the step's allocated CPUs; a task's narrower
 * binding (numactl, --cpu-bind) lies inside it. Any other cgroup
 * allocates nothing.
 */
#include "cgroup.h"
#include "procfs.h"

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

/* Past the digits at d, or NULL when there are none. */
static const char *digits(const char *d, const char *end)
{
	const char *s = d;
	while (d < end && *d >= '0' && *d <= '9')
		d++;
	return d > s ? d : NULL;
}

/* Is the component [c, end) one of Slurm's: job_<id>, or step_<id>,
 * step_batch, step_extern, step_interactive, each maybe with a
 * heterogeneous step's "+<component>" (Slurm 22.05's cgroup plugins)? */
static int slurm_name(const char *c, const char *end)
{
	static const char *const named[] = {"batch", "extern", "interactive",
					    NULL};
	size_t n = (size_t)(end - c);
	const char *d;

	if (n > 4 && !strncmp(c, "job_", 4))
		return digits(c + 4, end) == end;
	if (n <= 5 || strncmp(c, "step_", 5))
		return 0;
	c += 5;
	d = digits(c, end);
	for (int k = 0; !d && named[k]; k++) {
		size_t len = strlen(named[k]);
		if ((size_t)(end - c) >= len && !strncmp(c, named[k], len))
			d = c + len;
	}
	if (d && d < end && *d == '+')
		d = digits(d + 1, end);
	return d == end;
}

/* Is path a Slurm job's or step's cgroup, or below one? */
static int in_slurm_job(const char *path)
{
	for (const char *c = path; *c;) {
		const char *end;
		c += *c == '/';
		end = c + strcspn(c, "/");
		if (end > c && slurm_name(c, end))
			return 1;
		c = end;
	}
	return 0;
}

/*
 * The effective cpuset of cgroup `path` under one of roots, walking up to
 * the nearest ancestor that has one (on cgroup v2 a cgroup without the
 * cpuset controller inherits its parent's), but never above the job's
 * cgroup: only a Slurm job's or step's cgroup is an allocation. Another
 * (slurmd's service, system.slice, a session, the root) merely holds the
 * process; its own binding is its limit. from: the cgroup read.
 */
static int cpus_of(const char *fsroot, const char *const *roots,
		   const char *path, const char *const *files,
		   hwloc_bitmap_t os, char *from, size_t fromlen)
{
	char p[2048], file[5300];

	for (int r = 0; roots[r]; r++) {
		snprintf(p, sizeof(p), "%s", path);
		while (in_slurm_job(p)) {
			for (int k = 0; files[k]; k++) {
				snprintf(file, sizeof(file), "%s%s%s/%s",
					 fsroot, roots[r], p, files[k]);
				if (read_cpus(file, os) == 0) {
					snprintf(from, fromlen, "%s", p);
					return 0;
				}
			}
			*strrchr(p, '/') = 0; /* up to the parent */
		}
	}
	return -1;
}

/* A path the kernel would print: absolute, no "." or ".." part. */
static int plain_path(const char *cg)
{
	if (cg[0] != '/')
		return 0;
	for (const char *c = cg; (c = strchr(c, '/')); c++)
		if ((c[1] == '.' && (!c[2] || c[2] == '/')) ||
		    (c[1] == '.' && c[2] == '.' && (!c[3] || c[3] == '/')))
			return 0;
	return 1;
}

int nl_cgroup_cpuset_at(const char *fsroot, pid_t pid, hwloc_bitmap_t os,
			char *where, size_t wherelen)
{
	static const char *const v1_files[] = {"cpuset.effective_cpus",
					       "cpuset.cpus", NULL};
	static const char *const v2_files[] = {"cpuset.cpus.effective", NULL};
	char path[1100], *line = NULL, v1[2048] = "", v2[2048] = "", from[2048];
	unsigned char seen[256] = {0};
	size_t cap = 0;
	FILE *f;
	int n_v1 = 0, bad = 0;

	snprintf(path, sizeof(path), "%s/proc/%d/cgroup", fsroot, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	/*
	 * The whole file first: one that does not read as the kernel prints
	 * it (a hierarchy seen twice, cpuset in two lines, a "." or ".."
	 * part) gives no allocation. The kernel refuses a newline in a
	 * cgroup's name (which would print a line of a user's choosing);
	 * this does not rely on that (docs/slurm.md).
	 */
	while (getline(&line, &cap, f) > 0) {
		/* id:controllers:path; v2's is "0::path". */
		char *ctl = strchr(line, ':'), *cg, *end;
		long id;
		if (!ctl || !(cg = strchr(ctl + 1, ':')))
			continue;
		*ctl++ = 0;
		*cg++ = 0;
		cg[strcspn(cg, "\n")] = 0;
		id = strtol(line, &end, 10);
		if (end == line || *end || id < 0 || id > 255 || seen[id]++ ||
		    !plain_path(cg)) {
			bad = 1;
			continue;
		}
		if (id == 0 && !*ctl) {
			snprintf(v2, sizeof(v2), "%s", cg);
			continue;
		}
		/* v1: the line whose controllers include cpuset. */
		for (char *tok = strtok(ctl, ","); tok; tok = strtok(NULL, ","))
			if (!strcmp(tok, "cpuset") && n_v1++ == 0)
				snprintf(v1, sizeof(v1), "%s", cg);
	}
	free(line);
	fclose(f);
	if (bad || n_v1 > 1)
		return -EINVAL;
	if (v1[0] && cpus_of(fsroot, v1_roots, v1, v1_files, os, from,
			     sizeof(from)) == 0) {
		snprintf(where, wherelen, "cgroup v1 cpuset %s", from);
		return 0;
	}
	if (v2[0] && cpus_of(fsroot, v2_roots, v2, v2_files, os, from,
			     sizeof(from)) == 0) {
		snprintf(where, wherelen, "cgroup v2 cpuset %s", from);
		return 0;
	}
	return -ENOENT;
}

int nl_cgroup_cpuset(pid_t pid, hwloc_bitmap_t os, char *where, size_t wherelen)
{
	return nl_cgroup_cpuset_at(nl_fs_root(), pid, os, where, wherelen);
}
