/*
 * Unit tests of nl_writable (issue 26, items 1 and 2): whether a report
 * could be written at a path, asked before the program runs, with the
 * reason a person reads: a folder missing (or made on the way), a file on
 * the way, a folder as the report, a link or someone else's file where the
 * plugin's writer goes, and, as another user, a folder or a file that user
 * may not write.
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
#include <sys/wait.h>
#include <unistd.h>

#include "writable.h"

static char dir[] = "/tmp/numalot-writable.XXXXXX";

static void at(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void touch(const char *path, int mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	chmod(path, (mode_t)mode);
}

static void folders(void **state)
{
	char path[256], want[512], why[512];
	(void)state;
	at(path, sizeof(path), "r.json");
	assert_int_equal(nl_writable(path, 0, why, sizeof(why)), 0);
	at(path, sizeof(path), "no/such/r.json");
	assert_int_equal(nl_writable(path, 0, why, sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want), "its folder %s/no/such does not exist",
		 dir);
	assert_string_equal(why, want);
	/* The plugin makes missing folders: the nearest one must take them. */
	assert_int_equal(
		nl_writable(path, NL_WRITABLE_MAKE_DIRS, why, sizeof(why)), 0);
	at(path, sizeof(path), "file");
	touch(path, 0644);
	at(path, sizeof(path), "file/sub/r.json");
	assert_int_equal(
		nl_writable(path, NL_WRITABLE_MAKE_DIRS, why, sizeof(why)),
		-ENOTDIR);
	snprintf(want, sizeof(want), "%s/file is not a folder", dir);
	assert_string_equal(why, want);
	assert_int_equal(nl_writable(dir, 0, why, sizeof(why)), -EISDIR);
	assert_string_equal(why, "it is a folder");
	assert_int_equal(nl_writable("", 0, why, sizeof(why)), -EINVAL);
	/* A bare name: the working folder. */
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(nl_writable("bare.json", 0, why, sizeof(why)), 0);
	assert_int_equal(nl_writable("a/b/r.json", NL_WRITABLE_MAKE_DIRS, why,
				     sizeof(why)),
			 0);
	assert_int_equal(chdir("/"), 0);
}

static void links_and_owners(void **state)
{
	char path[256], link[256], why[512];
	(void)state;
	at(path, sizeof(path), "mine.json");
	touch(path, 0644);
	/* A report (root replaces no other file of its own: roots_job). */
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("{\"numalot\": \"0\"}", fp);
	fclose(fp);
	assert_int_equal(
		nl_writable(path, NL_WRITABLE_OWN_FILE, why, sizeof(why)), 0);
	at(link, sizeof(link), "link.json");
	assert_int_equal(symlink(path, link), 0);
	/* The command line writes through it; the plugin's writer never. */
	assert_int_equal(nl_writable(link, 0, why, sizeof(why)), 0);
	assert_int_equal(
		nl_writable(link, NL_WRITABLE_OWN_FILE, why, sizeof(why)),
		-EEXIST);
	assert_string_equal(why, "a file there is not yours");
	if (geteuid() == 0) {
		at(path, sizeof(path), "theirs.json");
		touch(path, 0666);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(nl_writable(path, 0, why, sizeof(why)), 0);
		assert_int_equal(nl_writable(path, NL_WRITABLE_OWN_FILE, why,
					     sizeof(why)),
				 -EEXIST);
	}
}

/* As another user (root only): what that user may not write. */
static int as_user(void)
{
	char path[256], why[512];
	if (setgid(65534) < 0 || setuid(65534) < 0)
		return 10;
	at(path, sizeof(path), "ro/r.json");
	if (nl_writable(path, 0, why, sizeof(why)) != -EACCES ||
	    strcmp(why, "Permission denied"))
		return 1;
	at(path, sizeof(path), "ro/new/r.json");
	if (nl_writable(path, NL_WRITABLE_MAKE_DIRS, why, sizeof(why)) !=
	    -EACCES)
		return 2;
	at(path, sizeof(path), "roots.json");
	if (nl_writable(path, 0, why, sizeof(why)) != -EACCES)
		return 3;
	at(path, sizeof(path), "closed/r.json");
	if (nl_writable(path, 0, why, sizeof(why)) != -EACCES)
		return 4;
	at(path, sizeof(path), "open/r.json");
	if (nl_writable(path, NL_WRITABLE_OWN_FILE | NL_WRITABLE_MAKE_DIRS, why,
			sizeof(why)) != 0)
		return 5;
	return 0;
}

static void another_user(void **state)
{
	char path[256];
	int st;
	(void)state;
	if (geteuid() != 0)
		skip();
	chmod(dir, 0755);
	at(path, sizeof(path), "ro");
	assert_int_equal(mkdir(path, 0755), 0);
	at(path, sizeof(path), "roots.json");
	touch(path, 0644);
	at(path, sizeof(path), "closed");
	assert_int_equal(mkdir(path, 0700), 0);
	at(path, sizeof(path), "open");
	assert_int_equal(mkdir(path, 0777), 0);
	chmod(path, 0777);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(as_user());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * A job of root's (root only): its report is written by root, and only in
 * root's folders or a shared sticky one (rwrite.h): the check before the
 * program says so, naming the folder at fault, rather than the report
 * going missing at the end. The command line's check (no
 * NL_WRITABLE_OWN_FILE) is as before.
 */
static void roots_job(void **state)
{
	char path[256], link[256], why[512];
	const int f = NL_WRITABLE_MAKE_DIRS | NL_WRITABLE_OWN_FILE;
	(void)state;
	if (geteuid() != 0)
		skip();
	at(path, sizeof(path), "rj-rootonly");
	assert_int_equal(mkdir(path, 0700), 0);
	at(path, sizeof(path), "rj-sticky");
	assert_int_equal(mkdir(path, 0777), 0);
	assert_int_equal(chmod(path, 01777), 0);
	at(path, sizeof(path), "rj-open");
	assert_int_equal(mkdir(path, 0777), 0);
	assert_int_equal(chmod(path, 0777), 0);
	at(path, sizeof(path), "rj-theirs");
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);

	/* Root's folder, fresh folders in it, a shared sticky one. */
	at(path, sizeof(path), "numalot-5/0.n1.json");
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), 0);
	at(path, sizeof(path), "rj-sticky/numalot-5/0.n1.json");
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), 0);
	at(path, sizeof(path), "rj-sticky/r.json");
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), 0);
	/* A user's link where the job's folder goes, a user's folder, one
	 * others may write: refused, saying which and why. */
	at(link, sizeof(link), "rj-sticky/numalot-6");
	at(path, sizeof(path), "rj-rootonly");
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	at(path, sizeof(path), "rj-sticky/numalot-6/0.n1.json");
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "numalot-6 is a symbolic link of uid "
				    "65534 (a job of root's"));
	at(path, sizeof(path), "rj-theirs/numalot-7/0.n1.json");
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "rj-theirs belongs to uid 65534"));
	assert_int_equal(
		nl_writable(path, NL_WRITABLE_MAKE_DIRS, why, sizeof(why)), 0);
	at(path, sizeof(path), "rj-open/r.json");
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "rj-open is writable by others"));
	/* A relative path, from the working folder. */
	at(path, sizeof(path), "rj-theirs");
	assert_int_equal(chdir(path), 0);
	assert_int_equal(
		nl_writable("numalot-8/0.n1.json", f, why, sizeof(why)),
		-EPERM);
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(
		nl_writable("numalot-8/0.n1.json", f, why, sizeof(why)), 0);
	assert_int_equal(chdir("/"), 0);
	/* A file of root's there: replaced only when it is a report (its
	 * path may come from a user's environment root ran srun in). */
	at(path, sizeof(path), "rj-sticky/passwd");
	touch(path, 0644);
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), -EEXIST);
	assert_non_null(strstr(why, "is not a numalot report"));
	at(path, sizeof(path), "rj-sticky/old.json");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	const char *report = "{\"numalot\": \"0\"}";
	assert_int_equal(write(fd, report, strlen(report)),
			 (ssize_t)strlen(report));
	close(fd);
	assert_int_equal(nl_writable(path, f, why, sizeof(why)), 0);
}

static int make_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folders),
		cmocka_unit_test(links_and_owners),
		cmocka_unit_test(another_user),
		cmocka_unit_test(roots_job),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
