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

/*
 * Read a whole file that must be a regular file of at most max bytes:
 * opened without blocking (a FIFO cannot hang the caller) and read to its
 * end, never past max (a device cannot flood it). *text gets a malloc'd,
 * NUL-terminated copy, *len its length. 0, or -errno with err saying what
 * is wrong ("not a regular file (a FIFO)"); the caller names the file.
 */
int nl_read_file(const char *path, size_t max, char **text, size_t *len,
		 char *err, size_t errlen);

/* Bytes of the valid UTF-8 character at s (of at most left bytes), or 0
 * (a stray, overlong, surrogate or cut sequence). */
size_t nl_utf8_char(const char *s, size_t left);

/* Each byte of s that is not part of valid UTF-8 becomes '?', so that
 * JSON text made of any bytes is valid JSON. Returns how many. */
size_t nl_utf8_scrub(char *s);

/* CLOCK_MONOTONIC in seconds. */
double nl_mono_s(void);
/* The calling thread's CPU time in seconds (numalot's own cost). */
double nl_thread_cpu_s(void);

/* The nice numalot asks for by default: its periods on time when the
 * CPUs are oversubscribed (docs/real-node.md, "Priority"). */
#define NL_OWN_NICE (-10)

/*
 * Set the calling thread's nice (Linux: per thread; call it before any
 * thread is started). raise_only: never to a lower priority than it has.
 * *now gets the nice in effect. 0, or -errno (EACCES: no CAP_SYS_NICE
 * nor RLIMIT_NICE to raise it), *now then as it was.
 */
int nl_own_nice(int want, int raise_only, int *now);

/* Back to the nice the process had before nl_own_nice when it raised it
 * (none called, or set lower: as it is): in a child forked to work for a
 * user (a report written as the user), or when numalot gives up its
 * raised priority. */
void nl_own_nice_undo(void);

/* in, with control characters and backslashes escaped (\xNN), into out:
 * what a log line holds that a peer or a job sent never forges a line
 * (numalotd's log, the plugin's lines in Slurm's). */
void nl_log_escape(char *out, size_t len, const char *in);

#endif
