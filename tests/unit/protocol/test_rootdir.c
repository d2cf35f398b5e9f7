/*
 * Unit tests of the agent's log and socket folder as root opens them
 * (core/protocol/rootdir.c; docs/slurm.md, "Security"): in a shared sticky
 * folder a user may reach a name first, with a link, a FIFO, a file of
 * their own or a hard link; root writes through none of them.
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
#include <sys/stat.h>
#include <unistd.h>

#include "rootdir.h"

#define NOBODY 65534

static char d[] = "/tmp/numalot-rootdir.XXXXXX";

static void path(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", d, rel);
}

/* Whether the folder rel holds nothing. */
static int empty(const char *rel)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s/%s)\"", d, rel);
	return system(cmd) == 0;
}

static void log_refuses_what_a_user_planted(void **state)
{
	char p[300], q[300], why[700];
	struct stat sb;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(d));
	assert_int_equal(chmod(d, 0755), 0);
	path(p, sizeof(p), "rootonly");
	assert_int_equal(mkdir(p, 0700), 0);
	path(p, sizeof(p), "sticky");
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 01777), 0);

	/* A user's link in the shared folder, where the log's folder goes:
	 * nothing made through it. */
	path(p, sizeof(p), "sticky/logs");
	path(q, sizeof(q), "rootonly");
	assert_int_equal(symlink(q, p), 0);
	assert_int_equal(lchown(p, NOBODY, NOBODY), 0);
	path(p, sizeof(p), "sticky/logs/agent.log");
	assert_int_equal(nl_open_owned_log(p, 0640, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "is a symbolic link of uid 65534"));
	assert_true(empty("rootonly"));
	/* ...nor a lock or folder for a socket there. */
	path(p, sizeof(p), "sticky/logs/numalotd.sock");
	assert_int_equal(nl_owned_parent(p, 0755, 0, why, sizeof(why)), -EPERM);
	assert_true(empty("rootonly"));
	/* A link of root's in the shared folder: where the kernel lets
	 * users hard-link files they do not own (fs.protected_hardlinks=0,
	 * its default), any user can put one of root's links there (ln
	 * /var/run /tmp/x). Made here by root, it looks just the same:
	 * nothing is made or written through it. */
	path(p, sizeof(p), "sticky/rootlink");
	assert_int_equal(symlink(q, p), 0);
	path(p, sizeof(p), "sticky/rootlink/agent.log");
	assert_int_equal(nl_open_owned_log(p, 0640, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "a folder others may write"));
	path(p, sizeof(p), "sticky/rootlink/made");
	assert_int_equal(nl_owned_dir(p, 0750, 0, why, sizeof(why)), -EPERM);
	assert_int_equal(nl_owned_or_shared_dir(p, 0, why, sizeof(why)),
			 -EPERM);
	assert_true(empty("rootonly"));
	/* The same link in root's own folder still leads there. */
	path(p, sizeof(p), "logdir0");
	assert_int_equal(mkdir(p, 0755), 0);
	path(p, sizeof(p), "logdir0/rootlink");
	assert_int_equal(symlink(q, p), 0);
	path(p, sizeof(p), "logdir0/rootlink/made");
	assert_int_equal(nl_owned_dir(p, 0750, 0, why, sizeof(why)), 0);
	assert_false(empty("rootonly"));
	assert_int_equal(rmdir(p), 0);

	/* Straight in the shared folder: a FIFO (which would hold root's
	 * open), a user's file, anything: the folder is others' to write. */
	path(p, sizeof(p), "sticky/fifo.log");
	assert_int_equal(mkfifo(p, 0666), 0);
	assert_int_equal(nl_open_owned_log(p, 0640, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "writable by others"));

	/* In root's own folder: a FIFO, another's file, a hard link and a
	 * link are refused; a new file is made 0640 whatever the umask. */
	path(p, sizeof(p), "logdir");
	assert_int_equal(mkdir(p, 0755), 0);
	path(p, sizeof(p), "logdir/fifo.log");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_true(nl_open_owned_log(p, 0640, why, sizeof(why)) < 0);
	path(p, sizeof(p), "logdir/users.log");
	assert_true((fd = open(p, O_CREAT | O_WRONLY, 0666)) >= 0);
	close(fd);
	assert_int_equal(chown(p, NOBODY, NOBODY), 0);
	assert_int_equal(nl_open_owned_log(p, 0640, why, sizeof(why)), -EEXIST);
	assert_non_null(strstr(why, "not a regular file of uid 0's alone"));
	path(q, sizeof(q), "logdir/two.log");
	assert_int_equal(chown(p, 0, 0), 0);
	assert_int_equal(link(p, q), 0);
	assert_int_equal(nl_open_owned_log(q, 0640, why, sizeof(why)), -EEXIST);
	path(q, sizeof(q), "logdir/link.log");
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(nl_open_owned_log(q, 0640, why, sizeof(why)), -ELOOP);
	assert_non_null(strstr(why, "a symbolic link"));
	path(p, sizeof(p), "logdir/agent.log");
	mode_t old = umask(0077);
	fd = nl_open_owned_log(p, 0640, why, sizeof(why));
	umask(old);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
	/* Appended to, as it is. */
	fd = nl_open_owned_log(p, 0600, why, sizeof(why));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "y\n", 2), 2);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_size, 4);
	close(fd);
	assert_int_equal(nl_owned_parent("agent.log", 0, 0, why, sizeof(why)),
			 -EINVAL);

	/* The command line's folders as root (cli.h): root's alone (0), a
	 * shared sticky one itself (1: files made anew there), anything
	 * else refused: a folder others may write that is not sticky, a
	 * sticky one of a user's, a user's link to a sticky one. */
	path(p, sizeof(p), "logdir");
	assert_int_equal(nl_owned_or_shared_dir(p, 0, why, sizeof(why)), 0);
	path(p, sizeof(p), "sticky");
	assert_int_equal(nl_owned_or_shared_dir(p, 0, why, sizeof(why)), 1);
	assert_int_equal(nl_owned_dir(p, 0, 0, why, sizeof(why)), -EPERM);
	path(p, sizeof(p), "open");
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 0777), 0);
	assert_int_equal(nl_owned_or_shared_dir(p, 0, why, sizeof(why)),
			 -EPERM);
	path(p, sizeof(p), "theirs");
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 01777), 0);
	assert_int_equal(chown(p, NOBODY, NOBODY), 0);
	assert_int_equal(nl_owned_or_shared_dir(p, 0, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "belongs to uid 65534"));
	path(p, sizeof(p), "sticky/to-sticky");
	path(q, sizeof(q), "sticky");
	assert_int_equal(symlink(q, p), 0);
	assert_int_equal(lchown(p, NOBODY, NOBODY), 0);
	assert_int_equal(nl_owned_or_shared_dir(p, 0, why, sizeof(why)),
			 -EPERM);
	/* Below a shared one, a folder of root's: root's alone again. */
	path(p, sizeof(p), "sticky/mine");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(nl_owned_or_shared_dir(p, 0, why, sizeof(why)), 0);

	snprintf(p, sizeof(p), "rm -rf %s", d);
	assert_int_equal(system(p), 0);
}

/*
 * A "." after the last folder ("/tmp/.", "/tmp/./", a socket at
 * "/tmp/./x.sock") leaves it the last: a shared sticky folder is not
 * taken for one its owner alone may change. Before, the "." made /tmp a
 * folder on the way, where sticky ones may stand, and nl_owned_dir took
 * it. Any user can run it: the folders are the caller's own.
 */
static void dots_leave_the_last_folder_last(void **state)
{
	char t[] = "/tmp/numalot-dots.XXXXXX", p[300], why[700];
	const char *dots[] = {"/.", "/./", "/./.", "//.//", "/./././"};
	uid_t me = geteuid();

	(void)state;
	assert_non_null(mkdtemp(t));
	snprintf(p, sizeof(p), "%s/sticky", t);
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 01777), 0);
	snprintf(p, sizeof(p), "%s/sticky/mine", t);
	assert_int_equal(mkdir(p, 0755), 0);
	for (size_t i = 0; i < sizeof(dots) / sizeof(dots[0]); i++) {
		snprintf(p, sizeof(p), "%s/sticky%s", t, dots[i]);
		assert_int_equal(nl_owned_dir(p, 0, me, why, sizeof(why)),
				 -EPERM);
		assert_non_null(strstr(why, "writable by others"));
		assert_int_equal(nl_owned_dir(p, 0755, me, why, sizeof(why)),
				 -EPERM);
		/* A shared one, where asked: files there made anew. */
		assert_int_equal(
			nl_owned_or_shared_dir(p, me, why, sizeof(why)), 1);
		/* The caller's own below it still is. */
		snprintf(p, sizeof(p), "%s/sticky%s/mine%s", t, dots[i],
			 dots[i]);
		assert_int_equal(nl_owned_dir(p, 0, me, why, sizeof(why)), 0);
		assert_int_equal(
			nl_owned_or_shared_dir(p, me, why, sizeof(why)), 0);
	}
	snprintf(p, sizeof(p), "%s/sticky/./numalotd.sock", t);
	assert_int_equal(nl_owned_parent(p, 0755, me, why, sizeof(why)),
			 -EPERM);
	snprintf(p, sizeof(p), "%s/sticky/./mine/./numalotd.sock", t);
	assert_int_equal(nl_owned_parent(p, 0755, me, why, sizeof(why)), 0);
	/* Made where missing, a "." after it or not. */
	snprintf(p, sizeof(p), "%s/sticky/./made/.", t);
	assert_int_equal(nl_owned_dir(p, 0750, me, why, sizeof(why)), 0);
	snprintf(p, sizeof(p), "rm -rf %s", t);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log_refuses_what_a_user_planted),
		cmocka_unit_test(dots_leave_the_last_folder_last),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
