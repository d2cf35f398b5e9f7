/* numalot command line: messages and files written whole (cli_out.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli_out.h"
#include "cmdline.h"

void nl_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "numalot%s%s: ", *cmd ? " " : "", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int nl_cli_whole(const char *cmd, const char *opt, const char *v, long lo,
		 long hi, long *out)
{
	if (nl_opt_whole(v, lo, hi, out) == 0)
		return 0;
	nl_cli_error(cmd, "%s wants a whole number from %ld to %ld, not \"%s\"",
		     opt, lo, hi, v);
	return -1;
}

int nl_cli_seed(const char *cmd, const char *opt, const char *v, uint64_t *out)
{
	if (nl_opt_u64(v, out) == 0)
		return 0;
	nl_cli_error(cmd,
		     "%s wants a whole number from 0 to %" PRIu64
		     ", not \"%s\"",
		     opt, UINT64_MAX, v);
	return -1;
}

int nl_cli_write_file(const char *cmd, const char *path,
		      int (*fill)(FILE *f, const void *arg), const void *arg)
{
	struct nl_cli_out out;
	FILE *f = nl_cli_out_open(cmd, path, &out);
	int rc;

	if (!f)
		return -1;
	rc = fill(f, arg);
	if (rc < 0) {
		/* What fill said went wrong, not a write of ours. */
		fclose(f);
		if (out.tmp[0])
			unlink(out.tmp);
		errno = -rc;
		nl_cli_error(cmd, "cannot write %s: %m", path);
		return -1;
	}
	return nl_cli_out_close(cmd, &out);
}

static int fill_json(FILE *f, const void *o)
{
	fputs(json_object_to_json_string_ext(
		      (struct json_object *)o,
		      JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			      JSON_C_TO_STRING_NOSLASHESCAPE),
	      f);
	fputc('\n', f);
	return 0;
}

int nl_cli_write_json(const char *cmd, const char *path, struct json_object *o)
{
	return nl_cli_write_file(cmd, path, fill_json, o);
}
