/*
 * numalot command line: what every command's output shares (its messages,
 * exit statuses, files written whole), below the commands (cli.h) and the
 * renderers (report/, bench/), which take nothing else of the commands.
 */
#ifndef NUMALOT_CLI_OUT_H
#define NUMALOT_CLI_OUT_H

#include <stdint.h>
#include <stdio.h>

/* Exit statuses: 0 done, 1 failed while running, 2 bad input. */
enum { NL_EXIT_OK = 0, NL_EXIT_FAIL = 1, NL_EXIT_USAGE = 2 };

/* "s" after a count other than 1: "1 thread", "2 threads". */
static inline const char *nl_s(long n)
{
	return n == 1 ? "" : "s";
}

/* Print "numalot CMD: message" to stderr. */
void nl_cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Option opt's value v as a whole number from lo to hi (nl_opt_whole), or
 * a seed (0 to 2^64 - 1): 0, or -1 after "numalot CMD: OPT wants a whole
 * number from LO to HI, not "V"". */
int nl_cli_whole(const char *cmd, const char *opt, const char *v, long lo,
		 long hi, long *out);
int nl_cli_seed(const char *cmd, const char *opt, const char *v, uint64_t *out);

/* Write path whole: fill(f, arg) writes it (0, or a negative errno). A
 * failure to open, fill, write or close it is told as "numalot CMD: cannot
 * write PATH: why". 0, or -1. */
int nl_cli_write_file(const char *cmd, const char *path,
		      int (*fill)(FILE *f, const void *arg), const void *arg);

/* Write a json-c object to path (pretty, with a final newline). */
struct json_object;
int nl_cli_write_json(const char *cmd, const char *path, struct json_object *o);

#endif
