/* numalot SPANK plugin: Slurm's name of this node, never the job's. */
#include "nodename.h"

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "protocol.h"

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

/*
 * The name a socket of this process is bound to, asked of the socket
 * itself (getsockname): never read from /proc/net/unix, where the kernel
 * prints every socket's name as it is, newlines too, so that any local
 * user's socket can add a line that names this process's socket's inode
 * with a path of the user's choosing (docs/slurm.md, "Security").
 */
static int bound_path(int fd, char *path, size_t len)
{
	struct sockaddr_un sa;
	socklen_t sl = sizeof(sa);
	struct stat sb;
	size_t n;

	if (fstat(fd, &sb) < 0 || !S_ISSOCK(sb.st_mode) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0 ||
	    sa.sun_family != AF_UNIX ||
	    sl <= offsetof(struct sockaddr_un, sun_path) || !sa.sun_path[0])
		return -1; /* not a socket, not AF_UNIX, unbound or abstract */
	n = strnlen(sa.sun_path, sl - offsetof(struct sockaddr_un, sun_path));
	if (n >= len)
		return -1;
	memcpy(path, sa.sun_path, n);
	path[n] = 0;
	return 0;
}

int nl_stepd_node_name(uint32_t job, uint32_t step, char *out, size_t len)
{
	char suffix[32], path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	struct dirent *d;
	DIR *fds;
	int rc = -1;

	snprintf(suffix, sizeof(suffix), "%u.%u", job, step);
	/* This process's descriptors: only the kernel writes this list. */
	if ((fds = opendir("/proc/self/fd"))) {
		while (rc < 0 && (d = readdir(fds))) {
			char *end;
			long fd = strtol(d->d_name, &end, 10);
			if (*end || end == d->d_name || fd == dirfd(fds))
				continue;
			if (bound_path((int)fd, path, sizeof(path)) == 0 &&
			    name_in(path, suffix, out, len) == 0)
				rc = 0;
		}
		closedir(fds);
	}
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
