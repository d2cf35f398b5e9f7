/* numalot: small helpers shared by the library's modules. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

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
