/*
 * Unit tests of socket activation: numalotd takes the one
 * listening socket systemd passes (LISTEN_PID / LISTEN_FDS, descriptor
 * 3) and refuses anything else; the plugin only connects to a socket that
 * is a service's and starts an agent of its own only where there is no
 * socket, or one that an agent it started left behind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "activate.h"
/* The plugin's agent control, with stand-ins for what slurmstepd gives. */
#include "agentctl.c"

spank_err_t spank_get_item(spank_t spank, spank_item_t item, ...)
{
	(void)spank;
	(void)item;
	return ESPANK_ERROR;
}

void nl_slurm_error(const char *format, ...)
{
	(void)format;
}

void nl_slurm_info(const char *format, ...)
{
	(void)format;
}

static char dir[] = "/tmp/numalot-activate.XXXXXX";

/* A UNIX stream socket bound at dir/name; listening if listen_too. */
static int unix_socket(const char *name, int listen_too, char *path, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(path, len, "%s/%s", dir, name);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listen_too)
		assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* fd becomes descriptor 3, passed to this process "by systemd". */
static void pass(int fd, const char *nfds)
{
	char pid[32];
	if (fd != 3) {
		assert_int_equal(dup2(fd, 3), 3);
		close(fd);
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", nfds, 1);
	setenv("LISTEN_FDNAMES", "numalotd.socket", 1);
}

static void nothing_passed(void **state)
{
	char name[108], err[256];
	(void)state;
	unsetenv("LISTEN_PID");
	assert_int_equal(nl_activation_fd(name, sizeof(name), err, sizeof(err)),
			 -ENOENT);
	/* Another process's sockets (a parent's environment). */
	setenv("LISTEN_PID", "1", 1);
	setenv("LISTEN_FDS", "1", 1);
	assert_int_equal(nl_activation_fd(name, sizeof(name), err, sizeof(err)),
			 -ENOENT);
	pass(open("/dev/null", O_RDONLY), "0");
	assert_int_equal(nl_activation_fd(name, sizeof(name), err, sizeof(err)),
			 -ENOENT);
	close(3);
}

static void takes_the_listening_socket(void **state)
{
	char path[108], name[108], err[256];
	(void)state;
	pass(unix_socket("a.sock", 1, path, sizeof(path)), "1");
	assert_int_equal(nl_activation_fd(name, sizeof(name), err, sizeof(err)),
			 3);
	assert_string_equal(name, path);
	assert_true(fcntl(3, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(3, F_GETFD) & FD_CLOEXEC);
	/* No child of the agent takes the socket for its own. */
	assert_null(getenv("LISTEN_PID"));
	assert_null(getenv("LISTEN_FDS"));
	assert_null(getenv("LISTEN_FDNAMES"));
	close(3);
}

static void refuses_what_is_not_one(void **state)
{
	char path[108], name[108], err[256];
	int p[2];
	(void)state;
	assert_int_equal(pipe(p), 0);
	close(p[1]);
	pass(p[0], "1");
	assert_int_equal(nl_activation_fd(name, sizeof(name), err, sizeof(err)),
			 -ENOTSOCK);
	assert_non_null(strstr(err, "not a socket"));
	close(3);
	pass(unix_socket("b.sock", 0, path, sizeof(path)), "1");
	assert_int_equal(nl_activation_fd(name, sizeof(name), err, sizeof(err)),
			 -EPROTOTYPE);
	assert_non_null(strstr(err, "listening UNIX stream socket"));
	close(3);
	pass(unix_socket("c.sock", 1, path, sizeof(path)), "2");
	assert_int_equal(nl_activation_fd(name, sizeof(name), err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "exactly one"));
	close(3);
}

/* A socket file nobody listens on any more. */
static void refusing_socket(const char *name, char *path, size_t len)
{
	close(unix_socket(name, 1, path, len));
}

static void plugin_only_connects_to_a_services_socket(void **state)
{
	struct nl_site s;
	char why[512], lock[200];
	struct stat sb;
	(void)state;
	nl_site_default(&s, "/nonexistent/numalotd");
	/* systemd's socket (no PATH.serving), its service stopped: no
	 * agent is started beside it, not even its lock taken. */
	refusing_socket("svc.sock", s.socket, sizeof(s.socket));
	assert_int_equal(nl_agentctl_ensure(&s, nl_mono_s() * 1e3 + 1000, why,
					    sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "is a service's"));
	snprintf(lock, sizeof(lock), "%s.lock", s.socket);
	assert_int_equal(stat(lock, &sb), -1);
}

static void plugin_starts_one_without_a_service(void **state)
{
	struct nl_site s;
	char why[512], serving[200];
	(void)state;
	nl_site_default(&s, "/nonexistent/numalotd");
	/* No socket at all: start one (here: the agent cannot be run). */
	snprintf(s.socket, sizeof(s.socket), "%s/none.sock", dir);
	assert_int_equal(nl_agentctl_ensure(&s, nl_mono_s() * 1e3 + 1000, why,
					    sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "cannot be run"));
	/* The socket of an agent the plugin started, killed: its
	 * PATH.serving is there, and a new agent is started. */
	refusing_socket("dead.sock", s.socket, sizeof(s.socket));
	snprintf(serving, sizeof(serving), "%s.serving", s.socket);
	close(open(serving, O_CREAT | O_WRONLY, 0600));
	assert_int_equal(nl_agentctl_ensure(&s, nl_mono_s() * 1e3 + 1000, why,
					    sizeof(why)),
			 -1);
	assert_non_null(strstr(why, "cannot be run"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_passed),
		cmocka_unit_test(takes_the_listening_socket),
		cmocka_unit_test(refuses_what_is_not_one),
		cmocka_unit_test(plugin_only_connects_to_a_services_socket),
		cmocka_unit_test(plugin_starts_one_without_a_service),
	};
	int rc;
	if (!mkdtemp(dir))
		return 1;
	/* Descriptor 3 is the one systemd passes: keep it free. */
	if (fcntl(3, F_GETFD) >= 0) {
		dup2(3, 100);
		close(3);
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
