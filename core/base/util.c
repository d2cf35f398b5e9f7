/* numalot: small helpers shared by the library's modules. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int nl_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* What a path that is not a regular file is, for a message. */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "a folder"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "of an unknown type";
}

static int too_big(char *err, size_t errlen, size_t max)
{
	return max % (1 << 20) == 0 ? nl_errf(err, errlen, -EFBIG,
					      "larger than %zu MiB", max >> 20)
				    : nl_errf(err, errlen, -EFBIG,
					      "larger than %zu bytes", max);
}

/* Read fd to its end into *buf (cap bytes, grown up to max + 1). */
static int read_to_end(int fd, size_t max, char **buf, size_t cap, size_t *got,
		       char *err, size_t errlen)
{
	for (;;) {
		if (*got == cap) {
			char *more;
			if (cap > max)
				return too_big(err, errlen, max);
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			if (!(more = realloc(*buf, cap + 1)))
				return -ENOMEM;
			*buf = more;
		}
		ssize_t n = read(fd, *buf + *got, cap - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nl_errf(err, errlen, -errno, "cannot read: %s",
				       strerror(errno));
		if (n == 0)
			return 0;
		*got += (size_t)n;
	}
}

int nl_read_file(const char *path, size_t max, char **text, size_t *len,
		 char *err, size_t errlen)
{
	struct stat sb;
	size_t got = 0, cap;
	char *buf = NULL;
	int rc = 0,
	    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	*text = NULL;
	if (fd < 0)
		return nl_errf(err, errlen, -errno, "cannot open: %s",
			       strerror(errno));
	if (fstat(fd, &sb) < 0)
		rc = nl_errf(err, errlen, -errno, "cannot read: %s",
			     strerror(errno));
	else if (!S_ISREG(sb.st_mode))
		rc = nl_errf(err, errlen, -EINVAL, "not a regular file (%s)",
			     file_kind(sb.st_mode));
	else if ((unsigned long long)sb.st_size > max)
		rc = too_big(err, errlen, max);
	/* From its size (0 for a /proc file), to its end. */
	cap = rc == 0 && sb.st_size >= 4096 ? (size_t)sb.st_size + 1 : 4096;
	if (cap > max + 1)
		cap = max + 1;
	if (rc == 0 && !(buf = malloc(cap + 1)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = read_to_end(fd, max, &buf, cap, &got, err, errlen);
	close(fd);
	if (rc == -ENOMEM)
		nl_errf(err, errlen, rc, "out of memory");
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[got] = 0;
	*text = buf;
	if (len)
		*len = got;
	return 0;
}

size_t nl_utf8_char(const char *s, size_t left)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (left == 0)
		return 0;
	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		n = 2;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		n = 3;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* RFC 3629: no overlong form, surrogate or code point past 10FFFF. */
	if (u[0] == 0xe0)
		lo = 0xa0;
	else if (u[0] == 0xed)
		hi = 0x9f;
	else if (u[0] == 0xf0)
		lo = 0x90;
	else if (u[0] == 0xf4)
		hi = 0x8f;
	if (left < n || u[1] < lo || u[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((u[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

size_t nl_utf8_scrub(char *s)
{
	size_t bad = 0, left = strlen(s);

	while (left) {
		size_t n = nl_utf8_char(s, left);
		if (n == 0) {
			*s = '?';
			n = 1;
			bad++;
		}
		s += n;
		left -= n;
	}
	return bad;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *nl_names_join(const char *const *names, size_t n, int sorted,
			  char *buf, size_t len)
{
	const char **v = malloc(sizeof(*v) * (n + 1));
	size_t k = 0, used = 0;

	if (len)
		buf[0] = 0;
	if (!v)
		return buf;
	for (size_t i = 0; i < n; i++)
		if (names[i])
			v[k++] = names[i];
	if (sorted)
		qsort(v, k, sizeof(*v), cmp_name);
	for (size_t i = 0; i < k && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i ? ", " : "", v[i]);
	free(v);
	return buf;
}

double nl_thread_cpu_s(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The nice before nl_own_nice first changed it (nl_own_nice_undo). */
static int nice_start, nice_changed;

int nl_own_nice(int want, int raise_only, int *now)
{
	errno = 0;
	int cur = getpriority(PRIO_PROCESS, 0);
	if (cur == -1 && errno)
		return -errno;
	*now = cur;
	if (!nice_changed)
		nice_start = cur;
	if (cur == want || (raise_only && cur < want))
		return 0;
	if (setpriority(PRIO_PROCESS, 0, want) < 0)
		return -errno;
	nice_changed = 1;
	*now = want;
	return 0;
}

void nl_own_nice_undo(void)
{
	/* Only a raised priority: a lower one was asked for. */
	if (nice_changed && getpriority(PRIO_PROCESS, 0) < nice_start &&
	    setpriority(PRIO_PROCESS, 0, nice_start) == 0)
		nice_changed = 0;
}

double nl_mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void nl_log_escape(char *out, size_t len, const char *in)
{
	size_t n = 0;
	for (; *in && n + 5 < len; in++) {
		unsigned char c = (unsigned char)*in;
		if (c < 0x20 || c == 0x7f || c == '\\')
			n += (size_t)snprintf(out + n, len - n,
					      c == '\\' ? "\\\\" : "\\x%02x",
					      c);
		else
			out[n++] = (char)c;
	}
	out[n < len ? n : len - 1] = 0;
}
