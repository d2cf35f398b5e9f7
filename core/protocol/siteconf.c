/* numalot: the site's configuration file (siteconf.h). */
#include "siteconf.h"
#include "rootdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Each key and the numalotd option it is ("" the plugin's alone). */
static const char *const keys[][2] = {{"default", ""},
				      {"allow", "allow"},
				      {"force", "force"},
				      {"report_dir", "report-dir"},
				      {"agent", ""},
				      {"socket", "socket"},
				      {"period", "period"},
				      {"min_period", "min-period"},
				      {"max_period", "max-period"},
				      {"counters", "counters"},
				      {"idle_exit", "idle-exit"},
				      {"agent_nice", "nice"},
				      {"topology", "topology"},
				      {"log", ""},
				      {"wait", ""},
				      {"bindings", ""},
				      {"user_reports", ""},
				      {"site_log", ""}};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

const char *nl_siteconf_agent_option(const char *key)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(key, keys[i][0]))
			return keys[i][1];
	return NULL;
}

const char *nl_siteconf_keys(void)
{
	static char list[300];
	size_t n = 0;
	if (!list[0])
		for (size_t i = 0; i < NKEYS; i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n,
					      "%s%s", i ? ", " : "",
					      keys[i][0]);
	return list;
}

/* Split buf (NUL-ended) into words; '#' at a word's start ends a line. */
static int split(struct nl_siteconf *c, const char *path, char *why, size_t len)
{
	int line = 1, comment = 0;
	char *p = c->buf;

	c->n = 0;
	while (*p) {
		if (*p == '\n') {
			*p++ = 0;
			line++;
			comment = 0;
			continue;
		}
		if (*p == ' ' || *p == '\t' || *p == '\r' || comment) {
			*p++ = 0;
			continue;
		}
		if (*p == '#') {
			comment = 1;
			continue;
		}
		if (c->n == NL_SITECONF_WORDS) {
			snprintf(why, len,
				 "%s: more than %d settings (line %d)", path,
				 NL_SITECONF_WORDS, line);
			return -E2BIG;
		}
		c->line[c->n] = line;
		c->word[c->n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' &&
		       *p != '\n')
			p++;
	}
	return 0;
}

int nl_siteconf_read(const char *path, struct nl_siteconf *c, char *why,
		     size_t len)
{
	struct stat sb;
	ssize_t got;
	size_t n = 0;
	int fd, rc;

	c->n = 0;
	/* Its folder, too, only root may change: else a user could take the
	 * file away, and with it every limit it sets, or put another there
	 * (docs/slurm.md, "Site policy"). A folder missing: no file. */
	char dir_why[600];
	rc = nl_owned_parent(path, 0, geteuid(), dir_why, sizeof(dir_why));
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		snprintf(why, len, "%s is not used: %s", path, dir_why);
		return rc;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0) {
		rc = -errno;
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		snprintf(why, len, "%s is not a regular file", path);
		return -EINVAL;
	}
	/* Root acts on what it says: nobody else may have written it. */
	if ((sb.st_uid != 0 && sb.st_uid != geteuid()) ||
	    (sb.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		snprintf(why, len,
			 "%s is not used: it must be root's and writable by "
			 "root alone (it is uid %u's, mode %03o)",
			 path, (unsigned)sb.st_uid,
			 (unsigned)(sb.st_mode & 0777));
		return -EPERM;
	}
	while ((got = read(fd, c->buf + n, sizeof(c->buf) - 1 - n)) > 0)
		n += (size_t)got;
	rc = got < 0 ? -errno : 0;
	close(fd);
	if (rc < 0) {
		snprintf(why, len, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	if (n == sizeof(c->buf) - 1) {
		snprintf(why, len, "%s is longer than %d bytes", path,
			 NL_SITECONF_BYTES - 1);
		return -EFBIG;
	}
	c->buf[n] = 0;
	return split(c, path, why, len);
}
