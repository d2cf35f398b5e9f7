/* numalot: whether a report could be written at a path (writable.h). */
#include "writable.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootdir.h"
#include "rwrite.h"
#include "util.h"

/* The first part of path that is there and is not a folder. */
static int not_a_folder(const char *path, char *why, size_t len)
{
	char part[PATH_MAX];
	struct stat sb;

	snprintf(part, sizeof(part), "%s", path);
	for (char *p = strchr(part + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		if (stat(part, &sb) == 0 && !S_ISDIR(sb.st_mode))
			return nl_errf(why, len, -ENOTDIR, "%s is not a folder",
				       part);
		*p = '/';
	}
	return nl_errf(why, len, -ENOTDIR, "%s", strerror(ENOTDIR));
}

static int from_errno(int err, const char *path, char *why, size_t len)
{
	if (err == ENOTDIR)
		return not_a_folder(path, why, len);
	return nl_errf(why, len, -err, "%s", strerror(err));
}

/* path's folder into dir: "." for a bare name, "/" for "/name". */
static void folder_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == path)
		snprintf(dir, size, "/");
	else
		snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* The folder a new file (or a missing folder of it) goes into: there, a
 * folder, and this process may add to it. */
static int folder_takes(char *dir, int make_dirs, char *why, size_t len)
{
	struct stat sb;

	while (stat(dir, &sb) < 0) {
		int err = errno;
		char *slash = strrchr(dir, '/');
		if (err != ENOENT)
			return from_errno(err, dir, why, len);
		if (!make_dirs)
			return nl_errf(why, len, -ENOENT,
				       "its folder %s does not exist", dir);
		/* Made as the writer: the nearest folder there must take
		 * them (the working folder itself, gone, cannot). */
		if (!strcmp(dir, "."))
			return nl_errf(why, len, -ENOENT,
				       "the working folder does not exist");
		if (!slash)
			snprintf(dir, 2, ".");
		else if (slash == dir)
			dir[1] = 0; /* "/" */
		else
			*slash = 0;
	}
	if (!S_ISDIR(sb.st_mode))
		return nl_errf(why, len, -ENOTDIR, "%s is not a folder", dir);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
		return from_errno(errno, dir, why, len);
	return 0;
}

/*
 * Root's report (a job of root's, written by root: rwrite.h's dir_mode):
 * dir, the nearest folder there, must be root's all along its path or a
 * shared sticky one such as /tmp, as the writer will want (docs/slurm.md,
 * "Security"). 0, or a negative errno with why.
 */
static int roots_folder(const char *dir, char *why, size_t len)
{
	char abs[PATH_MAX + 2], cwd[PATH_MAX], what[PATH_MAX + 64];
	int rc;

	if (dir[0] == '/')
		snprintf(abs, sizeof(abs), "%s", dir);
	else if (!getcwd(cwd, sizeof(cwd)) ||
		 snprintf(abs, sizeof(abs), "%s/%s", cwd, dir) >=
			 (int)sizeof(abs))
		return nl_errf(why, len, -ENAMETOOLONG,
			       "the working folder is too long");
	rc = nl_owned_or_shared_dir(abs, 0, what, sizeof(what));
	if (rc >= 0)
		return 0;
	return nl_errf(why, len, rc,
		       "%s (a job of root's has its report only in root's "
		       "folders or a shared sticky one such as /tmp)",
		       what);
}

/* path, a regular file, opened without following a link or waiting on
 * it, holds a numalot report. Found first without opening it (O_PATH):
 * a name swapped for a device or a FIFO after the caller's lstat is
 * never opened (its open may act). */
static int root_report(const char *path)
{
	char self[64];
	struct stat sb;
	int at = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	int fd = -1;
	if (at >= 0 && fstat(at, &sb) == 0 && S_ISREG(sb.st_mode)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
		fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	}
	int yes = fd >= 0 && nl_file_is_report(fd);
	if (fd >= 0)
		close(fd);
	if (at >= 0)
		close(at);
	return yes;
}

int nl_writable(const char *path, int flags, char *why, size_t len)
{
	char dir[PATH_MAX];
	struct stat sb;
	size_t n = path ? strlen(path) : 0;
	int own = (flags & NL_WRITABLE_OWN_FILE) != 0;

	if (n == 0)
		return nl_errf(why, len, -EINVAL, "no file name");
	if (n >= sizeof(dir))
		return nl_errf(why, len, -ENAMETOOLONG, "%s",
			       strerror(ENAMETOOLONG));
	if (path[n - 1] == '/')
		return nl_errf(why, len, -EISDIR, "it names a folder");
	/* A file there: written over (the command line), or replaced by a
	 * rename (rwrite.h), never through a link. */
	if ((own ? lstat(path, &sb) : stat(path, &sb)) == 0) {
		if (S_ISDIR(sb.st_mode))
			return nl_errf(why, len, -EISDIR, "it is a folder");
		if (own && (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid()))
			return nl_errf(why, len, -EEXIST,
				       "a file there is not yours");
		/* Root's job: what it would replace must be a report (the
		 * writer's rule, rwrite.h), whoever's environment named it. */
		if (own && geteuid() == 0 && !root_report(path))
			return nl_errf(why, len, -EEXIST,
				       "a file of root's there is not a "
				       "numalot report (a job of root's "
				       "replaces only a report)");
		if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0)
			return from_errno(errno, path, why, len);
		if (!own)
			return 0;
	} else if (errno != ENOENT) {
		return from_errno(errno, path, why, len);
	}
	folder_of(path, dir, sizeof(dir));
	int rc = folder_takes(dir, flags & NL_WRITABLE_MAKE_DIRS, why, len);
	if (rc == 0 && own && (flags & NL_WRITABLE_MAKE_DIRS) && geteuid() == 0)
		rc = roots_folder(dir, why, len);
	return rc;
}
