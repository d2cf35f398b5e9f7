/* numalot: a folder only its owner can change, along its whole path. */
#include "rootdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* The most symbolic links followed on the way (as the kernel's 40). */
#define MAX_LINKS 40

/* Whether a folder on the way may stand: the owner's, and writable by
 * nobody else, but for a sticky folder above (/tmp), whose entries only
 * their owners can move. */
static int check(const struct stat *sb, uid_t owner, int last, int shared_ok,
		 const char *where, char *why, size_t len)
{
	if (!S_ISDIR(sb->st_mode))
		return nl_errf(why, len, -ENOTDIR, "%s is not a folder", where);
	if (sb->st_uid != owner && sb->st_uid != 0)
		return nl_errf(why, len, -EPERM, "%s belongs to uid %u, not %u",
			       where, (unsigned)sb->st_uid, (unsigned)owner);
	if ((sb->st_mode & 022) && last && shared_ok && (sb->st_mode & S_ISVTX))
		return 1; /* a shared sticky folder, where asked */
	if ((sb->st_mode & 022) && (last || !(sb->st_mode & S_ISVTX)))
		return nl_errf(why, len, -EPERM,
			       "%s is writable by others than its owner",
			       where);
	return 0;
}

/* Whether what follows a component ("", "/", "/.", "/././/") holds no
 * other one but ".": which folder is the last is decided without them,
 * else "/tmp/." would check /tmp as one on the way, where a sticky
 * folder others may write can stand (docs/slurm.md, "Security"). */
static int only_dots(const char *s)
{
	for (;;) {
		s += strspn(s, "/");
		if (!*s)
			return 1;
		if (s[0] != '.' || (s[1] && s[1] != '/'))
			return 0;
		s++;
	}
}

/* The walk of nl_owned_dir; with shared_ok, 1 when the last folder is a
 * shared sticky one (the rest checked). */
static int walk(const char *dir, int mode, uid_t owner, int shared_ok,
		char *why, size_t len)
{
	/* What is left to walk, in place: a link's target goes in front. */
	char rest[2 * PATH_MAX + 2], done[PATH_MAX] = "";
	struct stat sb;
	int fd, links = 0, rc = 0, open_here = 0;

	if (!dir || dir[0] != '/')
		return nl_errf(why, len, -EINVAL, "%s is not an absolute path",
			       dir ? dir : "(none)");
	if (snprintf(rest, sizeof(rest), "%s", dir) >= PATH_MAX)
		return nl_errf(why, len, -ENAMETOOLONG, "%s is too long", dir);
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return nl_errf(why, len, -errno, "/: %s", strerror(errno));
	for (char *p = rest; rc == 0;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *comp = p, *end = strchr(p, '/');
		p = end ? end : p + strlen(p);
		char saved = *p;
		*p = 0;
		int last = !saved || only_dots(p + 1);
		if (!strcmp(comp, ".")) {
			*p = saved;
			continue;
		}
		if (!strcmp(comp, "..")) {
			rc = nl_errf(why, len, -EINVAL, "%s holds \"..\"", dir);
			break;
		}
		size_t dl = strlen(done);
		if (snprintf(done + dl, sizeof(done) - dl, "/%s", comp) >=
		    (int)(sizeof(done) - dl)) {
			rc = nl_errf(why, len, -ENAMETOOLONG, "%s is too long",
				     dir);
			break;
		}
		if (fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT && mode) {
			/* The mode whatever the umask. */
			int made = mkdirat(fd, comp, (mode_t)mode) == 0;
			if ((!made && errno != EEXIST) ||
			    (made && fchmodat(fd, comp, (mode_t)mode, 0) < 0))
				rc = nl_errf(why, len, -errno,
					     "cannot create %s: %s", done,
					     strerror(errno));
		}
		if (rc == 0 && fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			rc = nl_errf(why, len, -errno, "%s: %s", done,
				     strerror(errno));
		if (rc == 0 && S_ISLNK(sb.st_mode)) {
			/* Root's own link stands; anyone else's may point
			 * anywhere. Its target is walked as the rest is. In
			 * a folder others may write (a sticky one), a link
			 * of root's may be a user's hard link of one of
			 * root's links elsewhere (fs.protected_hardlinks=0,
			 * the kernel's default): nobody can tell who put
			 * it there, so none is followed. */
			char target[PATH_MAX];
			ssize_t n = readlinkat(fd, comp, target,
					       sizeof(target) - 1);
			if (sb.st_uid != 0)
				rc = nl_errf(why, len, -EPERM,
					     "%s is a symbolic link of uid %u",
					     done, (unsigned)sb.st_uid);
			else if (open_here)
				rc = nl_errf(
					why, len, -EPERM,
					"%s is a symbolic link in a folder "
					"others may write",
					done);
			else if (n <= 0 || ++links > MAX_LINKS)
				rc = nl_errf(why, len, -ELOOP,
					     "%s: too many links", done);
			if (rc)
				break;
			target[n] = 0;
			*p = saved;
			char tail[PATH_MAX + 1];
			snprintf(tail, sizeof(tail), "%s", p);
			if (snprintf(rest, sizeof(rest), "%s/%s", target,
				     tail) >= (int)sizeof(rest)) {
				rc = nl_errf(why, len, -ENAMETOOLONG,
					     "%s: its link is too long", done);
				break;
			}
			done[dl] = 0;
			if (target[0] == '/') {
				close(fd);
				fd = open("/",
					  O_PATH | O_DIRECTORY | O_CLOEXEC);
				done[0] = 0;
				open_here = 0;
			}
			p = rest;
			continue;
		}
		int shared = 0;
		if (rc == 0 && (rc = check(&sb, owner, last, shared_ok, done,
					   why, len)) == 1) {
			shared = 1;
			rc = 0;
		}
		if (rc == 0) {
			/* The folder checked is the one entered. */
			int next = openat(fd, comp,
					  O_PATH | O_DIRECTORY | O_NOFOLLOW |
						  O_CLOEXEC);
			struct stat now;
			if (next < 0 || fstat(next, &now) < 0 ||
			    now.st_ino != sb.st_ino || now.st_dev != sb.st_dev)
				rc = nl_errf(why, len, -EAGAIN,
					     "%s changed while checked", done);
			open_here = rc == 0 && (now.st_mode & 022);
			close(fd);
			fd = next;
			if (rc == 0 && shared)
				rc = 1; /* the last: the walk ends here */
		}
		*p = saved;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int nl_owned_dir(const char *dir, int mode, uid_t owner, char *why, size_t len)
{
	return walk(dir, mode, owner, 0, why, len);
}

int nl_owned_or_shared_dir(const char *dir, uid_t owner, char *why, size_t len)
{
	return walk(dir, 0, owner, 1, why, len);
}

int nl_owned_parent(const char *path, int mode, uid_t owner, char *why,
		    size_t len)
{
	char dir[PATH_MAX];
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (!path || path[0] != '/' || !slash)
		return nl_errf(why, len, -EINVAL, "%s is not an absolute path",
			       path ? path : "(none)");
	if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >=
	    (int)sizeof(dir))
		return nl_errf(why, len, -ENAMETOOLONG, "%s is too long", path);
	return nl_owned_dir(dir[0] ? dir : "/", mode, owner, why, len);
}

int nl_open_owned_log(const char *path, int mode, char *why, size_t len)
{
	struct stat sb;
	int rc = nl_owned_parent(path, 0, geteuid(), why, len), fd;

	if (rc < 0)
		return rc;
	fd = open(path,
		  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			  O_NOCTTY | O_CLOEXEC,
		  (mode_t)mode);
	if (fd < 0)
		return nl_errf(why, len, -errno, "%s: %s", path,
			       errno == ELOOP ? "a symbolic link"
					      : strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || sb.st_nlink != 1) {
		close(fd);
		return nl_errf(why, len, -EEXIST,
			       "%s is not a regular file of uid %u's alone",
			       path, (unsigned)geteuid());
	}
	if (sb.st_size == 0)
		fchmod(fd,
		       (mode_t)mode); /* new: the mode, whatever the umask */
	/* Written to blocking, as a log is. */
	fcntl(fd, F_SETFL, O_APPEND);
	return fd;
}
