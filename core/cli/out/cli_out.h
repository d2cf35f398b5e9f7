/*
 * numalot command line: what every command's output shares (its messages,
 * exit statuses, files written whole), below the commands (cli.h) and the
 * renderers (report/, bench/), which take nothing else of the commands.
 */
#ifndef NUMALOT_CLI_OUT_H
#define NUMALOT_CLI_OUT_H

#include <limits.h>
#include <stddef.h>
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

/*
 * Every file the command line writes goes through nl_cli_write_file
 * (core/cli/out/outfile.c). Run by root, numalot writes only where no
 * user can choose where the file goes (docs/slurm.md, "Security"): path's
 * folder must be root's all along its path, none writable by others but
 * sticky ones above (nl_owned_dir), or else a shared sticky folder such
 * as /tmp itself, where the file is made anew and renamed over the name
 * (never written through a link or into a FIFO a user put there).
 * Anything else is refused, naming the folder a user controls. Any other
 * user writes where they may, as before.
 */
struct nl_cli_out {
	FILE *f;
	char path[PATH_MAX];
	char tmp[PATH_MAX]; /* the new file renamed over path, or "" */
};

/* Whether this process may write path by the rule above: 0 (*shared: in a
 * shared sticky folder), or a negative errno with why. */
int nl_cli_may_write(const char *path, int *shared, char *why, size_t len);
/* The same, abs the path the check holds for (as root: absolute, "." and
 * ".." taken out), to be used instead of path (a file renamed over it). */
int nl_cli_may_write_abs(const char *path, int *shared, char *abs,
			 size_t abslen, char *why, size_t len);

/* A folder whose files are then written by name (eval's --logs, bench's
 * --save): as root, checked by the rule above (a shared sticky folder is
 * not one) and made (0755) when missing, out the absolute path checked,
 * to be used instead of dir; 0, or a negative errno and why (-EPERM: a
 * user could choose where it goes). Any other user: 0, out is dir. */
int nl_cli_root_dir(const char *dir, char *out, size_t outlen, char *why,
		    size_t len);

/* Open path to write: a FILE, or NULL with the error said (cmd's). */
FILE *nl_cli_out_open(const char *cmd, const char *path, struct nl_cli_out *o);

/* Close it, every write checked; the new file renamed over path. 0, or
 * -1 with the error said. */
int nl_cli_out_close(const char *cmd, struct nl_cli_out *o);

/* Write path whole: fill(f, arg) writes it (0, or a negative errno). A
 * failure to open, fill, write or close it is told as "numalot CMD: cannot
 * write PATH: why". 0, or -1. */
int nl_cli_write_file(const char *cmd, const char *path,
		      int (*fill)(FILE *f, const void *arg), const void *arg);

/* Write a json-c object to path (pretty, with a final newline). */
struct json_object;
int nl_cli_write_json(const char *cmd, const char *path, struct json_object *o);

#endif
