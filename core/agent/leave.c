/*
 * numalot: the agent leaves the cgroups of the Slurm job it was started
 * from, not to be confined, frozen and killed with it (docs/slurm.md,
 * "Where the agent runs").
 */
#include "leave.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOUNTS_MAX 32

struct cg_mount {
	char point[512];
	char opts[264]; /* ",rw,cpu,cpuacct," */
	int v2;
};

/* A path with a component "job_<digits>": Slurm's job cgroups, v1
 * (/slurm/uid_U/job_J/step_S) and v2 (/system.slice/..._slurmstepd.scope/
 * job_J/step_S/...). */
int nl_cgroup_is_job(const char *path)
{
	for (const char *p = path; (p = strstr(p, "/job_")); p++) {
		const char *d = p + 5;
		if (*d < '0' || *d > '9')
			continue;
		while (*d >= '0' && *d <= '9')
			d++;
		if (!*d || *d == '/')
			return 1;
	}
	return 0;
}

/* The cgroup file systems mounted at their root; their count. */
static int read_mounts(const char *mountinfo, struct cg_mount *m, int max)
{
	FILE *f = fopen(mountinfo, "re");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	if (!f)
		return -1;
	while (n < max && getline(&line, &cap, f) > 0) {
		/* id parent major:minor root point options... - type src super
		 */
		char root[512], point[512], type[32], super[256];
		const char *dash = strstr(line, " - ");
		if (!dash ||
		    sscanf(line, "%*s %*s %*s %511s %511s", root, point) != 2 ||
		    sscanf(dash + 3, "%31s %*s %255s", type, super) != 2)
			continue;
		if (strcmp(root, "/") ||
		    (strcmp(type, "cgroup") && strcmp(type, "cgroup2")))
			continue;
		snprintf(m[n].point, sizeof(m[n].point), "%s", point);
		snprintf(m[n].opts, sizeof(m[n].opts), ",%s,", super);
		m[n].v2 = !strcmp(type, "cgroup2");
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

/* The mount of the hierarchy whose controllers are ctrls ("" for v2). */
static const struct cg_mount *mount_of(const struct cg_mount *m, int n,
				       const char *ctrls)
{
	for (int i = 0; i < n; i++) {
		if (!ctrls[0]) {
			if (m[i].v2)
				return &m[i];
			continue;
		}
		if (m[i].v2)
			continue;
		char buf[256], *save, *tok;
		int all = 1;
		snprintf(buf, sizeof(buf), "%s", ctrls);
		for (tok = strtok_r(buf, ",", &save); tok && all;
		     tok = strtok_r(NULL, ",", &save)) {
			char want[80];
			snprintf(want, sizeof(want), ",%s,", tok);
			all = strstr(m[i].opts, want) != NULL;
		}
		if (all)
			return &m[i];
	}
	return NULL;
}

/* Write pid into dir/cgroup.procs; 0 or -errno. */
static int join(const char *dir, pid_t pid)
{
	char file[600], buf[32];
	int fd, len, rc = 0;

	snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	if (write(fd, buf, (size_t)len) != len)
		rc = -errno;
	close(fd);
	return rc;
}

/* Append "text" to out (bounded), separated by "; ". */
static void say(char *out, size_t len, const char *text)
{
	size_t used = strlen(out);
	if (used + 3 < len)
		snprintf(out + used, len - used, "%s%s", used ? "; " : "",
			 text);
}

int nl_leave_job_cgroups_at(const char *proc_cgroup, const char *mountinfo,
			    pid_t pid, char *said, size_t len)
{
	struct cg_mount m[MOUNTS_MAX];
	FILE *f;
	char *line = NULL, text[1400];
	size_t cap = 0;
	int n, moved = 0, failed = 0;

	said[0] = 0;
	n = read_mounts(mountinfo, m, MOUNTS_MAX);
	f = fopen(proc_cgroup, "re");
	if (n < 0 || !f) {
		if (f)
			fclose(f);
		snprintf(said, len, "cannot read %s: %s",
			 n < 0 ? mountinfo : proc_cgroup, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		/* id:controllers:path */
		char *ctrls = strchr(line, ':'), *path;
		if (!ctrls || !(path = strchr(++ctrls, ':')))
			continue;
		*path++ = 0;
		path[strcspn(path, "\n")] = 0;
		if (!nl_cgroup_is_job(path))
			continue;
		const struct cg_mount *mt = mount_of(m, n, ctrls);
		const char *kind = ctrls[0] ? ctrls : "v2";
		if (!mt) {
			snprintf(text, sizeof(text),
				 "stays in %s %s: its hierarchy is not mounted",
				 kind, path);
			say(said, len, text);
			failed++;
			continue;
		}
		char dest[600];
		int rc;
		if (mt->v2) {
			/* Its own cgroup (a leaf: a process may not sit in a
			 * cgroup whose controllers its children use), else the
			 * root. */
			snprintf(dest, sizeof(dest), "%s/numalotd", mt->point);
			if (mkdir(dest, 0755) < 0 && errno != EEXIST)
				rc = -errno;
			else
				rc = join(dest, pid);
			if (rc < 0) {
				snprintf(dest, sizeof(dest), "%s", mt->point);
				rc = join(dest, pid);
			}
		} else {
			snprintf(dest, sizeof(dest), "%s", mt->point);
			rc = join(dest, pid);
		}
		if (rc < 0) {
			snprintf(text, sizeof(text), "stays in %s %s: %s: %s",
				 kind, path, dest, strerror(-rc));
			failed++;
		} else {
			const char *rel = dest + strlen(mt->point);
			snprintf(text, sizeof(text), "%s %s -> %s", kind, path,
				 rel[0] ? rel : "/");
			moved++;
		}
		say(said, len, text);
	}
	free(line);
	fclose(f);
	return failed ? -1 : moved;
}

int nl_leave_job_cgroups(char *said, size_t len)
{
	return nl_leave_job_cgroups_at("/proc/self/cgroup",
				       "/proc/self/mountinfo", getpid(), said,
				       len);
}
