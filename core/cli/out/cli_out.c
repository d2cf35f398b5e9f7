/* numalot command line: messages and files written whole (cli_out.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <json-c/json.h>

#include "cli_out.h"

void nl_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "numalot%s%s: ", *cmd ? " " : "", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int nl_cli_write_file(const char *cmd, const char *path,
		      int (*fill)(FILE *f, const void *arg), const void *arg)
{
	FILE *f = fopen(path, "w");
	int rc, bad;

	if (!f) {
		nl_cli_error(cmd, "cannot write %s: %m", path);
		return -1;
	}
	rc = fill(f, arg);
	bad = ferror(f);
	bad |= fclose(f);
	if (rc < 0)
		errno = -rc;
	if (rc < 0 || bad) {
		nl_cli_error(cmd, "cannot write %s: %m", path);
		return -1;
	}
	return 0;
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
