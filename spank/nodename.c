/* numalot SPANK plugin: Slurm's name of this node, never the job's. */
#include "nodename.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol.h"

/* 1 when inode is one of the sockets open in proc/self/fd. */
static int ours(const char *proc, unsigned long inode)
{
	char dir[512], target[64], want[48];
	struct dirent *d;
	DIR *fds;
	int found = 0;

	snprintf(dir, sizeof(dir), "%s/self/fd", proc);
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	if (!(fds = opendir(dir)))
		return 0;
	while (!found && (d = readdir(fds))) {
		ssize_t n = readlinkat(dirfd(fds), d->d_name, target,
				       sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			found = !strcmp(target, want);
		}
	}
	closedir(fds);
	return found;
}

/* The node's name in a step socket's path ".../NODE_JOB.STEP[.COMP]"; 0,
 * or -1 when the path is not this step's. */
static int name_in(const char *path, const char *suffix, char *out, size_t len)
{
	const char *base = strrchr(path, '/');
	const char *us = strrchr(base ? base : path, '_');
	size_t n;

	if (!base || !us || strncmp(us + 1, suffix, strlen(suffix)))
		return -1;
	const char *rest = us + 1 + strlen(suffix);
	if (*rest && (*rest != '.' ||
		      strspn(rest + 1, "0123456789") != strlen(rest + 1)))
		return -1;
	n = (size_t)(us - base - 1);
	if (n == 0 || n >= len)
		return -1;
	memcpy(out, base + 1, n);
	out[n] = 0;
	return nl_node_name_ok(out) ? 0 : -1;
}

int nl_stepd_node_name(const char *proc, uint32_t job, uint32_t step, char *out,
		       size_t len)
{
	char file[512], line[4200], suffix[32];
	FILE *f;
	int rc = -1;

	snprintf(file, sizeof(file), "%s/net/unix", proc);
	snprintf(suffix, sizeof(suffix), "%u.%u", job, step);
	if (!(f = fopen(file, "re")))
		return -1;
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		unsigned long inode;
		char path[4097];
		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %4096s", &inode,
			   path) != 2 ||
		    name_in(path, suffix, out, len) < 0)
			continue;
		if (ours(proc, inode))
			rc = 0;
	}
	fclose(f);
	if (rc < 0 && len)
		out[0] = 0;
	return rc;
}

int nl_host_node_name(char *out, size_t len)
{
	char v[256];

	if (gethostname(v, sizeof(v) - 1) < 0)
		v[0] = 0;
	v[sizeof(v) - 1] = 0;
	v[strcspn(v, ".")] = 0;
	if (!nl_node_name_ok(v) || strlen(v) >= len) {
		if (len)
			out[0] = 0;
		return -1;
	}
	strcpy(out, v);
	return 0;
}
