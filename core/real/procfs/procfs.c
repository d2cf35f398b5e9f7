/* numalot: /proc readers and parsers (parsers are pure, for tests). */
#include "procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fs_root[NL_FS_ROOT_MAX + 1];

int nl_fs_set_root(const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	if (n > NL_FS_ROOT_MAX)
		return -ENAMETOOLONG;
	while (n > 1 && dir[n - 1] == '/')
		n--;
	memcpy(fs_root, dir ? dir : "", n);
	fs_root[n == 1 && dir[0] == '/' ? 0 : n] = 0; /* "/" is the live one */
	return 0;
}

const char *nl_fs_root(void)
{
	return fs_root;
}

int nl_fs_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "%s", fs_root), m;

	if (n < 0 || (size_t)n >= len)
		return n;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return m < 0 ? m : n + m;
}

/* A decimal field of a /proc file: digits by hand (read every period for
 * many threads, docs/real-node.md "Cost"), anything else as strtoull
 * reads it. 0 and *v, *end past it; or -EINVAL. */
static int field_ull(const char *p, unsigned long long *v, const char **end)
{
	unsigned long long x = 0;
	const char *q = p;

	while (*q >= '0' && *q <= '9') {
		unsigned d = (unsigned)(*q - '0');
		if (x > (~0ull - d) / 10)
			break; /* too big: as strtoull says */
		x = x * 10 + d;
		q++;
	}
	if (q > p && (*q == ' ' || *q == '\n' || *q == 0)) {
		*v = x;
		*end = q;
		return 0;
	}
	char *e;
	errno = 0;
	x = strtoull(p, &e, 10);
	if (e == p || errno)
		return -EINVAL;
	*v = x;
	*end = e;
	return 0;
}

int nl_proc_parse_stat(const char *text, struct nl_task_stat *out)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	const char *p;
	size_t n;
	int field = 3;

	memset(out, 0, sizeof(*out));
	out->processor = -1;
	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(out->comm))
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, n);
	out->comm[n] = 0;
	p = close + 2;
	/* Fields from 3 (state) on are separated by single spaces. */
	while (*p && field <= 39) {
		if (field == 3) {
			out->state = *p;
		} else if (field == 4 || field == 10 || field == 12 ||
			   field == 14 || field == 15 || field == 22 ||
			   field == 24 || field == 39) {
			unsigned long long v;
			const char *end;
			if (field_ull(p, &v, &end) < 0)
				return -EINVAL;
			if (field == 4)
				out->ppid = (int)v;
			else if (field == 10 || field == 12)
				out->faults += v;
			else if (field == 24)
				out->rss_pages = v;
			else if (field == 14)
				out->utime_ticks = v;
			else if (field == 15)
				out->stime_ticks = v;
			else if (field == 22)
				out->starttime = v;
			else
				out->processor = (int)v;
			p = end;
		}
		while (*p && *p != ' ')
			p++;
		if (!*p)
			break;
		p++;
		field++;
	}
	return out->starttime && out->state ? 0 : -EINVAL;
}

int nl_proc_slurp(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;

	*text = NULL;
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(cap);
	for (;;) {
		ssize_t r;
		if (!buf) {
			close(fd);
			return -ENOMEM;
		}
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno == ESRCH ? ESRCH : errno;
			free(buf);
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*text = buf;
	if (len)
		*len = n;
	return 0;
}

/* Read one stat file into the stack, no allocation (a stat line is well
 * under 1 KiB). */
static int read_stat_at(const char *path, struct nl_task_stat *out)
{
	char text[1024];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((n = read(fd, text, sizeof(text) - 1)) < 0 && errno == EINTR)
		;
	if (n < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	close(fd);
	text[n] = 0;
	return n == 0 ? -ESRCH : nl_proc_parse_stat(text, out);
}

int nl_proc_read_stat(pid_t pid, pid_t tid, struct nl_task_stat *out)
{
	/* Read every period for every thread. */
	char path[NL_FS_PATH];

	nl_fs_path(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		   (int)tid);
	return read_stat_at(path, out);
}

int nl_proc_read_process_stat(pid_t pid, struct nl_task_stat *out)
{
	char path[NL_FS_PATH];

	nl_fs_path(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return read_stat_at(path, out);
}

int nl_proc_open_stat(pid_t pid, pid_t tid)
{
	char path[NL_FS_PATH];
	nl_fs_path(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		   (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

int nl_proc_pread_stat(int fd, struct nl_task_stat *out)
{
	char text[1024];
	ssize_t n;
	while ((n = pread(fd, text, sizeof(text) - 1, 0)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return n == 0 || errno == ESRCH ? -ESRCH : -errno;
	text[n] = 0;
	return nl_proc_parse_stat(text, out);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

long nl_proc_count_tasks(int pid)
{
	char path[NL_FS_PATH];
	struct stat st;

	nl_fs_path(path, sizeof(path), "/proc/%d/task", pid);
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	/* "." and "..", then one link per thread (proc_task_getattr). */
	return st.st_nlink >= 2 ? (long)st.st_nlink - 2 : -EINVAL;
}

int nl_proc_list_tasks(pid_t pid, pid_t **tids, size_t *n)
{
	char path[NL_FS_PATH];
	DIR *d;
	struct dirent *de;
	size_t cap = 16;

	*n = 0;
	*tids = NULL;
	nl_fs_path(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	*tids = malloc(cap * sizeof(pid_t));
	while (*tids && (de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (!isdigit((unsigned char)de->d_name[0]) || *end || v <= 0)
			continue;
		if (*n == cap) {
			pid_t *nt = realloc(*tids, cap * 2 * sizeof(pid_t));
			if (!nt) {
				free(*tids);
				*tids = NULL;
				break;
			}
			*tids = nt;
			cap *= 2;
		}
		(*tids)[(*n)++] = (pid_t)v;
	}
	closedir(d);
	if (!*tids)
		return -ENOMEM;
	/* The kernel lists them in the order they were made, which is tid
	 * order until tids wrap: sort only then. */
	for (size_t i = 1; i < *n; i++)
		if ((*tids)[i - 1] > (*tids)[i]) {
			qsort(*tids, *n, sizeof(pid_t), cmp_pid);
			break;
		}
	return 0;
}

int nl_proc_parse_numa_maps(const char *text, double *pages, int nnodes)
{
	const char *p = text, *eol = text, *line_anon = NULL;

	while ((p = strstr(p, " N"))) {
		char *end;
		/* Counted: anonymous memory (heap, stacks, anonymous maps),
		 * the process's own data; not its binary, libraries and
		 * mapped files, which a young process (or the numactl that
		 * execs it) has mostly touched on its launcher's node. */
		if (p >= eol) {
			const char *start = p;
			while (start > text && start[-1] != '\n')
				start--;
			eol = strchr(p, '\n');
			if (!eol)
				eol = p + strlen(p);
			line_anon = memmem(start, (size_t)(eol - start),
					   " anon=", 6);
		}
		p += 2;
		if (!isdigit((unsigned char)*p))
			continue;
		long node = strtol(p, &end, 10);
		if (*end != '=')
			continue;
		const char *v = end + 1, *e;
		unsigned long long whole;
		double count;
		/* Page counts are whole numbers: read them by hand. */
		if (isdigit((unsigned char)*v) &&
		    field_ull(v, &whole, &e) == 0 && *e != '.' && *e != 'e' &&
		    *e != 'E') {
			count = (double)whole;
			end = (char *)(uintptr_t)e;
		} else {
			count = strtod(v, &end);
			if (end == v || count < 0)
				return -EINVAL;
		}
		if (node >= 0 && node < nnodes && line_anon)
			pages[node] += count;
		p = end;
	}
	return 0;
}

/* The share of the anonymous pages whose mapping's policy (the line's
 * second field) starts with what (or, what NULL, is not "default"). */
static double policy_share(const char *text, const char *what)
{
	double all = 0, some = 0;

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *anon = memmem(line, len, " anon=", 6);
		const char *sp = memchr(line, ' ', len);
		const char *want = what ? what : "default";
		size_t wl = strlen(want);
		if (anon && sp) {
			double n = strtod(anon + 6, NULL);
			int is = (size_t)(sp - line) + 1 + wl <= len &&
				 strncmp(sp + 1, want, wl) == 0;
			all += n;
			if (what ? is : !is)
				some += n;
		}
		line = eol ? eol + 1 : NULL;
	}
	return all > 0 ? some / all : 0;
}

double nl_proc_numa_maps_bound(const char *text)
{
	return policy_share(text, "bind:");
}

double nl_proc_numa_maps_own(const char *text)
{
	return policy_share(text, NULL);
}

int nl_proc_read_numa_maps(pid_t pid, double *pages, int nnodes, double *bound,
			   double *own)
{
	char path[NL_FS_PATH], *text;
	int rc;

	nl_fs_path(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	rc = nl_proc_slurp(path, &text, NULL);
	if (rc < 0)
		return rc;
	rc = nl_proc_parse_numa_maps(text, pages, nnodes);
	if (rc == 0 && bound)
		*bound = nl_proc_numa_maps_bound(text);
	if (rc == 0 && own)
		*own = nl_proc_numa_maps_own(text);
	if (rc == 0) /* its mappings: a line each */
		for (const char *q = text; (q = strchr(q, '\n')); q++)
			rc++;
	free(text);
	return rc;
}

int nl_proc_uids(pid_t pid, uid_t uids[4])
{
	char path[NL_FS_PATH], *text, *p;
	unsigned u[4];
	int rc;

	nl_fs_path(path, sizeof(path), "/proc/%d/status", (int)pid);
	rc = nl_proc_slurp(path, &text, NULL);
	if (rc < 0)
		return rc;
	p = strstr(text, "\nUid:");
	if (!p || sscanf(p + 5, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4)
		rc = -EINVAL;
	for (int i = 0; rc == 0 && i < 4; i++)
		uids[i] = (uid_t)u[i];
	free(text);
	return rc;
}

int nl_proc_uid(pid_t pid, uid_t *uid)
{
	uid_t u[4];
	int rc = nl_proc_uids(pid, u);

	if (rc == 0)
		*uid = u[0];
	return rc;
}

int nl_proc_owned_by(pid_t pid, uid_t uid)
{
	uid_t u[4];
	int rc = nl_proc_uids(pid, u);

	if (rc < 0)
		return rc;
	return u[0] == uid && u[1] == uid && u[2] == uid && u[3] == uid
		       ? 0
		       : -EPERM;
}
