/* numalot command line: messages and files written whole (cli_out.h). */
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

int nl_cli_write_json(const char *cmd, const char *path, struct json_object *o)
{
	FILE *f = fopen(path, "w");
	const char *text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
		nl_cli_error(cmd, "cannot write %s: %m", path);
		if (f)
			fclose(f);
		return -1;
	}
	if (fclose(f)) {
		nl_cli_error(cmd, "cannot write %s: %m", path);
		return -1;
	}
	return 0;
}
