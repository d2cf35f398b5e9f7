/* numalot: a report file written safely and atomically (rwrite.h). */
#include "rwrite.h"
#include "rootdir.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The JSON text fd holds (at most 64 MiB), or NULL. */
static struct json_object *read_json(int fd)
{
	struct stat sb;
	struct json_object *o = NULL;
	char *buf;
	ssize_t n;

	if (fstat(fd, &sb) < 0 || sb.st_size <= 0 ||
	    sb.st_size > 64 * 1024 * 1024 ||
	    !(buf = malloc((size_t)sb.st_size + 1)))
		return NULL;
	n = pread(fd, buf, (size_t)sb.st_size, 0);
	if (n > 0) {
		buf[n] = 0;
		o = json_tokener_parse(buf);
	}
	free(buf);
	return o;
}

/* A report of job.step that holds data (threads): one to keep. */
static int has_data(int fd, uint32_t job, uint32_t step)
{
	struct json_object *o = read_json(fd), *sl, *v;
	int keep = o && json_object_object_get_ex(o, "threads", &v) &&
		   json_object_object_get_ex(o, "slurm", &sl) &&
		   json_object_object_get_ex(sl, "job", &v) &&
		   (uint32_t)json_object_get_int64(v) == job &&
		   json_object_object_get_ex(sl, "step", &v) &&
		   (uint32_t)json_object_get_int64(v) == step;
	json_object_put(o);
	return keep;
}

int nl_file_is_report(int fd)
{
	struct json_object *o = read_json(fd), *v;
	int yes = o && json_object_is_type(o, json_type_object) &&
		  json_object_object_get_ex(o, "numalot", &v);
	json_object_put(o);
	return yes;
}

/* Write all of text; 0 or the errno of the failure (EIO: nothing
 * written). */
static int write_all(int fd, const char *text, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		done += (size_t)w;
	}
	return 0;
}

int nl_write_report_here(const char *path, const char *text, int mode,
			 uid_t owner, int keep_data, uint32_t job,
			 uint32_t step)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len = strlen(text);
	struct stat sb;
	int fd, err = 0;

	/* What is there now: nothing, or the owner's own regular file,
	 * looked at before it is opened (a device or a FIFO of another's is
	 * never opened), and the same file once open. */
	if (lstat(path, &sb) < 0) {
		if (errno != ENOENT)
			return errno;
		fd = -1;
	} else if (!S_ISREG(sb.st_mode) || sb.st_uid != owner) {
		return EEXIST; /* someone else's, or not a file */
	} else {
		dev_t dev = sb.st_dev;
		ino_t ino = sb.st_ino;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT)
			return errno == ELOOP ? EEXIST : errno;
		if (fd >= 0 && (fstat(fd, &sb) < 0 || sb.st_dev != dev ||
				sb.st_ino != ino)) {
			close(fd);
			return EEXIST;
		}
	}
	if (fd >= 0) {
		if (!S_ISREG(sb.st_mode) || sb.st_uid != owner) {
			close(fd);
			return EEXIST; /* someone else's, or not a file */
		}
		/* Root's file: replaced only when it is a numalot report. A
		 * path root takes from a job's option can come from a
		 * user's environment root ran srun in (sudo -E): never
		 * /etc/passwd (docs/slurm.md, "Security"). */
		if (owner == 0 && !nl_file_is_report(fd)) {
			close(fd);
			return EEXIST;
		}
		if (keep_data && !strstr(text, "\"threads\"") &&
		    has_data(fd, job, step)) {
			close(fd);
			return EALREADY;
		}
		close(fd);
	}
	/* A temporary file beside it, then a rename: a full disk or a
	 * failed write leaves the old file whole. */
	if (snprintf(tmp, sizeof(tmp), "%.*s.numalot-XXXXXX",
		     (int)(slash ? slash - path + 1 : 0),
		     path) >= (int)sizeof(tmp))
		return ENAMETOOLONG;
	{
		/* Our own mkstemp: O_NOFOLLOW and the mode we want. */
		static const char abc[] =
			"abcdefghijklmnopqrstuvwxyz0123456789";
		char *x = tmp + strlen(tmp) - 6;
		/* Names a user cannot foresee and take first (the
		 * folder may be one others can write, as /tmp). */
		unsigned seed;
		if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(seed))
			seed = (unsigned)getpid() ^ (unsigned)(uintptr_t)&sb;
		fd = -1;
		for (int tries = 0; fd < 0 && tries < 100; tries++) {
			for (int i = 0; i < 6; i++) {
				seed = seed * 1103515245u + 12345u;
				x[i] = abc[(seed >> 16) % 36];
			}
			fd = open(tmp,
				  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					  O_CLOEXEC,
				  mode);
			if (fd < 0 && errno != EEXIST)
				return errno;
			if (fd >= 0)
				fchmod(fd,
				       (mode_t)mode); /* whatever the umask */
		}
		if (fd < 0)
			return EEXIST;
	}
	err = write_all(fd, text, len);
	if (!err && fsync(fd) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err)
		unlink(tmp);
	return err;
}

int nl_make_parents(const char *path, int mode)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return ENAMETOOLONG;
	/* Each folder from the root down, the file's name left out. */
	for (char *p = strchr(buf + 1, '/'); p; p = strchr(p + 1, '/')) {
		struct stat sb;
		*p = 0;
		if (mkdir(buf, (mode_t)mode) == 0)
			chmod(buf, (mode_t)mode); /* whatever the umask */
		else if (errno != EEXIST)
			return errno;
		if (stat(buf, &sb) < 0)
			return errno;
		if (!S_ISDIR(sb.st_mode))
			return ENOTDIR;
		*p = '/';
	}
	return 0;
}

int nl_append_here(const char *path, const char *text, int mode, uid_t owner)
{
	size_t len = strlen(text);
	struct stat sb;
	int err = 0;
	int fd = open(path,
		      O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			      O_CLOEXEC,
		      (mode_t)mode);
	if (fd < 0)
		return errno == ELOOP ? EEXIST : errno;
	/* The owner's regular file with no other name: a hard link to
	 * another file (root's, one a user linked where that was let) would
	 * have the line written there too (as nl_open_owned_log). */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != owner ||
	    sb.st_nlink != 1) {
		close(fd);
		return EEXIST; /* someone else's, not a file, or linked */
	}
	if (sb.st_size == 0)
		fchmod(fd,
		       (mode_t)mode); /* new: the mode, whatever the umask */
	/* One writer at a time, so that lines never mix. */
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	err = write_all(fd, text, len);
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

/*
 * In the writer's child: nothing of the caller's but out (the answer's
 * pipe) stays open, so that no descriptor of root's (slurmstepd's, the
 * agent's) is held by a process its user owns; 0 to 2 are /dev/null.
 * The descriptor out now has, or below 3 when out could not be moved or
 * /dev/null not opened: then root's are still open (the caller must not
 * go on).
 */
static int keep_only(int out)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0) /* 0 to 2 would stay root's */
		return -1;
	if (out < 3) {
		int moved = fcntl(out, F_DUPFD_CLOEXEC, 3);
		if (moved >= 0)
			out = moved;
	}
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		if (fd != out && fd != null)
			dup2(null, fd);
	if (out >= 3) {
		close_range(3, (unsigned)out - 1, 0);
		close_range((unsigned)out + 1, ~0U, 0);
	}
	return out;
}

/*
 * Take the user's identity for good (docs/slurm.md, "Security"): groups,
 * gid and uid; then no capability at all, not even one a caller's
 * securebits (SECBIT_KEEP_CAPS, NO_SETUID_FIXUP) would have kept across
 * the uid change, nor root's uid back, and not dumpable, so that the user
 * can neither trace it nor reach its descriptors. 0, or -1.
 */
static int become(const struct nl_write_as *o)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {{0}},
				      now[_LINUX_CAPABILITY_U32S_3];

	if (setgroups((size_t)(o->ngroups > 0 && o->groups ? o->ngroups : 0),
		      o->groups) < 0 ||
	    setgid(o->gid) < 0 || setuid(o->uid) < 0)
		return -1;
	if (syscall(SYS_capset, &h, none) < 0 ||
	    syscall(SYS_capget, &h, now) < 0)
		return -1;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (now[i].effective || now[i].permitted || now[i].inheritable)
			return -1;
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || setuid(0) == 0 ||
	    getuid() != o->uid || geteuid() != o->uid || getgid() != o->gid ||
	    getegid() != o->gid)
		return -1;
	return 0;
}

/*
 * The folders of a report root writes where a job of root's chose (its
 * working folder, its --numalot-report): as for the command line run by
 * root (docs/slurm.md, "Security"), the folder must be root's all along
 * its path, reached through root's links only, or a shared sticky one
 * such as /tmp itself (where the file is made anew and renamed); the
 * missing ones are made by root inside checked ones. Never a folder a
 * user made or could swap, nor one reached through a user's link: made
 * and followed by name (nl_make_parents), a user's link numalot-JOB in a
 * shared working folder had root write the report where it pointed. 0 or
 * an errno (EPERM: refused; EINVAL: not absolute, or holds "..").
 */
static int root_parents(const char *path, int mode)
{
	char dir[PATH_MAX], why[700];
	const char *slash = strrchr(path, '/');
	int rc;

	if (path[0] != '/' || !slash)
		return EINVAL;
	if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >=
	    (int)sizeof(dir))
		return ENAMETOOLONG;
	if (!dir[0])
		strcpy(dir, "/");
	rc = nl_owned_or_shared_dir(dir, 0, why, sizeof(why));
	if (rc == -ENOENT)
		rc = nl_owned_dir(dir, mode, 0, why, sizeof(why));
	return rc < 0 ? -rc : 0;
}

int nl_write_report_as(const char *path, const char *text,
		       const struct nl_write_as *o)
{
	int pfd[2], err = 0, st;
	pid_t pid;
	/* Valid UTF-8 whatever a job put in it (a program's name, the
	 * cluster srun passed): bytes that are not become '?', which keeps a
	 * JSON text JSON (docs/slurm.md, "Site collection"). */
	char *clean = strdup(text);

	if (!clean)
		return ENOMEM;
	nl_utf8_scrub(clean);
	text = clean;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		free(clean);
		return errno;
	}
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(pfd[0]);
		close(pfd[1]);
		free(clean);
		return err;
	}
	if (pid == 0) {
		close(pfd[0]);
		signal(SIGXFSZ, SIG_IGN); /* a file size limit: an error */
		nl_own_nice_undo(); /* the user's work: not at the agent's */
		int out = keep_only(pfd[1]);
		if (out < 3) /* root's descriptors could not all be closed */
			_exit(1);
		if (o->uid != 0 && become(o) < 0)
			err = EPERM;
		if (!err && o->dir_mode)
			err = o->uid == 0 ? root_parents(path, o->dir_mode)
					  : nl_make_parents(path, o->dir_mode);
		if (!err && o->append)
			err = nl_append_here(path, text, o->mode, o->uid);
		else if (!err)
			err = nl_write_report_here(path, text, o->mode, o->uid,
						   o->keep_data, o->job,
						   o->step);
		if (write(out, &err, sizeof(err)) < 0)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	/* The writer answers through the pipe, in time, or it is killed (a
	 * hung file system must not hold the caller). */
	struct pollfd pw = {pfd[0], POLLIN, 0};
	int ready;
	while ((ready = poll(&pw, 1, o->timeout_ms)) < 0 && errno == EINTR)
		;
	if (ready <= 0) {
		kill(pid, SIGKILL);
		err = ETIMEDOUT;
	} else if (read(pfd[0], &err, sizeof(err)) != sizeof(err)) {
		err = EIO;
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	free(clean);
	return err;
}
