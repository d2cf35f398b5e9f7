/*
 * Socket activation: the few lines of sd_listen_fds(3) numalotd needs,
 * without a dependency on libsystemd (docs/slurm.md, "The agent as a
 * service").
 */
#include "activate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

#define FIRST_FD 3 /* SD_LISTEN_FDS_START */

/* A decimal number from 0 to max, or -1. */
static long number(const char *s, long max)
{
	char *end;
	long v;
	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return *end || errno || v < 0 || v > max ? -1 : v;
}

static void forget(void)
{
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

int nl_activation_fd(char *name, size_t namelen, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	socklen_t sl = sizeof(sa);
	int type = 0, listening = 0, flags;
	socklen_t il = sizeof(int);
	long pid = number(getenv("LISTEN_PID"), LONG_MAX), n;

	if (namelen)
		name[0] = 0;
	if (pid <= 0 || pid != (long)getpid())
		return -ENOENT; /* nothing for us (or for a parent) */
	n = number(getenv("LISTEN_FDS"), 1024);
	forget();
	if (n == 0)
		return -ENOENT;
	if (n != 1)
		return nl_errf(err, errlen, -EINVAL,
			       "systemd passed %s sockets: numalotd takes "
			       "exactly one (one ListenStream= in "
			       "numalotd.socket)",
			       n < 0 ? "no valid number of" : "several");
	memset(&sa, 0, sizeof(sa));
	if (getsockopt(FIRST_FD, SOL_SOCKET, SO_TYPE, &type, &il) < 0 ||
	    getsockopt(FIRST_FD, SOL_SOCKET, SO_ACCEPTCONN, &listening, &il) <
		    0 ||
	    getsockname(FIRST_FD, (struct sockaddr *)&sa, &sl) < 0)
		return nl_errf(err, errlen, -ENOTSOCK,
			       "descriptor %d from systemd is not a socket: %s",
			       FIRST_FD, strerror(errno));
	if (sa.sun_family != AF_UNIX || type != SOCK_STREAM || !listening)
		return nl_errf(err, errlen, -EPROTOTYPE,
			       "descriptor %d from systemd is not a listening "
			       "UNIX stream socket (ListenStream=/path in "
			       "numalotd.socket)",
			       FIRST_FD);
	flags = fcntl(FIRST_FD, F_GETFL);
	if (flags < 0 || fcntl(FIRST_FD, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    fcntl(FIRST_FD, F_SETFD, FD_CLOEXEC) < 0)
		return nl_errf(err, errlen, -errno, "descriptor %d: %s",
			       FIRST_FD, strerror(errno));
	if (namelen && sl > offsetof(struct sockaddr_un, sun_path) &&
	    sa.sun_path[0])
		snprintf(name, namelen, "%.*s",
			 (int)(sl - offsetof(struct sockaddr_un, sun_path)),
			 sa.sun_path);
	return FIRST_FD;
}
