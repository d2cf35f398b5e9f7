/* numalot: small helpers shared by the library's modules. */
#ifndef NUMALOT_UTIL_H
#define NUMALOT_UTIL_H

#include <stddef.h>

/*
 * Format a message into err (errlen bytes; nothing when err is NULL or
 * errlen 0) and return rc: `return nl_errf(err, len, -EINVAL, "...")`.
 */
int nl_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The names of a table ("a, b, c") into buf, in the table's order or
 * sorted (alphabetically); NULL entries are left out. Returns buf. For
 * the "(valid: ...)" of messages, so that a list never drifts from its
 * table.
 */
const char *nl_names_join(const char *const *names, size_t n, int sorted,
			  char *buf, size_t len);

/* CLOCK_MONOTONIC in seconds. */
double nl_mono_s(void);
/* The calling thread's CPU time in seconds (numalot's own cost). */
double nl_thread_cpu_s(void);

#endif
