/*
 * numalot command line: where it may write its files (--report, --json,
 * --html, --save, eval's logs): as root never where a user chooses
 * (docs/slurm.md, "Security"; cli_out.h).
 */
#include "cli_out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rootdir.h"
#include "util.h"

/*
 * path made absolute (a relative one is the working folder's, as the
 * kernel found it) with "." and ".." taken out by name: what root checks
 * is what it then opens, the very same string.
 */
static int absolute(const char *path, char *out, size_t len)
{
	char buf[2 * PATH_MAX + 2], cwd[PATH_MAX];
	size_t n = 0;

	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	if (snprintf(buf, sizeof(buf), "%s/%s", path[0] == '/' ? "" : cwd,
		     path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *save, *c = strtok_r(buf, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			while (n > 0 && out[--n] != '/')
				;
			continue;
		}
		if (n + 1 + strlen(c) >= len)
			return -ENAMETOOLONG;
		n += (size_t)snprintf(out + n, len - n, "/%s", c);
	}
	if (n == 0 && len > 1)
		out[n++] = '/';
	out[n] = 0;
	return 0;
}

/* The check of nl_cli_may_write, abs the path it holds for (root's). */
static int may_write(const char *path, int *shared, char *abs, size_t abslen,
		     char *why, size_t len)
{
	char dir[PATH_MAX], was[600];
	int rc;

	*shared = 0;
	if (snprintf(abs, abslen, "%s", path) >= (int)abslen)
		return nl_errf(why, len, -ENAMETOOLONG, "cannot write %s: %s",
			       path, strerror(ENAMETOOLONG));
	if (geteuid() != 0)
		return 0; /* the user's own rights: where they may write */
	if ((rc = absolute(path, abs, abslen)) < 0)
		return nl_errf(why, len, rc, "cannot write %s: %s", path,
			       strerror(-rc));
	const char *slash = strrchr(abs, '/');
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - abs), abs);
	rc = nl_owned_or_shared_dir(dir[0] ? dir : "/", 0, was, sizeof(was));
	if (rc == -EPERM)
		return nl_errf(why, len, rc,
			       "will not write %s as root: %s (a user could "
			       "choose where it goes: write it in a folder "
			       "only root can change, or as that user)",
			       path, was);
	if (rc < 0) /* a folder missing, a file on the way: refused too */
		return nl_errf(why, len, rc, "cannot write %s: %s", path, was);
	*shared = rc == 1;
	return 0;
}

int nl_cli_may_write(const char *path, int *shared, char *why, size_t len)
{
	char abs[PATH_MAX];
	return may_write(path, shared, abs, sizeof(abs), why, len);
}

int nl_cli_may_write_abs(const char *path, int *shared, char *abs,
			 size_t abslen, char *why, size_t len)
{
	return may_write(path, shared, abs, abslen, why, len);
}

int nl_cli_root_dir(const char *dir, char *out, size_t outlen, char *why,
		    size_t len)
{
	char was[600];
	int rc;

	if (snprintf(out, outlen, "%s", dir) >= (int)outlen)
		return nl_errf(why, len, -ENAMETOOLONG, "%s",
			       strerror(ENAMETOOLONG));
	if (geteuid() != 0)
		return 0;
	if ((rc = absolute(dir, out, outlen)) < 0)
		return nl_errf(why, len, rc, "%s", strerror(-rc));
	rc = nl_owned_dir(out, 0755, 0, was, sizeof(was));
	if (rc == -EPERM)
		return nl_errf(why, len, rc,
			       "will not write %s as root: %s (a user could "
			       "choose where its files go: make it in a "
			       "folder only root can change)",
			       dir, was);
	if (rc < 0)
		return nl_errf(why, len, rc, "cannot make that folder: %s",
			       strerror(-rc));
	return 0;
}

FILE *nl_cli_out_open(const char *cmd, const char *path, struct nl_cli_out *o)
{
	char why[PATH_MAX + 800];
	int shared, fd = -1;

	memset(o, 0, sizeof(*o));
	/* o->path: as asked, or (root) the very path checked. */
	if (may_write(path, &shared, o->path, sizeof(o->path), why,
		      sizeof(why)) < 0) {
		nl_cli_error(cmd, "%s", why);
		return NULL;
	}
	if (!shared) {
		/* Where only root (or this user) may change anything: by
		 * name, as asked (a device such as /dev/stdout too). */
		if (!(o->f = fopen(o->path, "w")))
			nl_cli_error(cmd, "cannot write %s: %m", path);
		return o->f;
	}
	/* Root in a shared sticky folder (/tmp): whatever has the name may
	 * be anyone's link or FIFO. A new file of root's own beside it
	 * (O_EXCL, no link followed), renamed over the name at the end,
	 * which replaces a link or FIFO rather than follow or wait on it. */
	uint64_t z = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^
		     (uint64_t)(uintptr_t)o;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		z = z * 6364136223846793005ULL + 1442695040888963407ULL;
		if (snprintf(o->tmp, sizeof(o->tmp), "%s.numalot-%08x", o->path,
			     (unsigned)(z >> 32)) >= (int)sizeof(o->tmp)) {
			errno = ENAMETOOLONG;
			break;
		}
		fd = open(o->tmp,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		nl_cli_error(cmd, "cannot write %s: %m", path);
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		o->tmp[0] = 0;
		return NULL;
	}
	return o->f;
}

int nl_cli_out_close(const char *cmd, struct nl_cli_out *o)
{
	int bad = ferror(o->f);

	if (fclose(o->f))
		bad = 1;
	o->f = NULL;
	if (!bad && o->tmp[0] && rename(o->tmp, o->path) < 0)
		bad = 1;
	if (bad) {
		nl_cli_error(cmd, "cannot write %s: %m", o->path);
		if (o->tmp[0])
			unlink(o->tmp);
	}
	o->tmp[0] = 0;
	return bad ? -1 : 0;
}
