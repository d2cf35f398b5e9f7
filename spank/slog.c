/* numalot SPANK plugin: its lines in Slurm's logs, escaped (slog.h). */
#define NL_SLOG_IMPL
#include <stdarg.h>
#include <stdio.h>

#include <slurm/spank.h>

#include "slog.h"
#include "util.h"

/* Room for a path and what is said of it; escaping may take 4 bytes a
 * byte (the end is cut, never a line added). */
#define RAW_MAX 6144
#define OUT_MAX 8192

static void escaped(char *out, const char *fmt, va_list ap)
{
	char raw[RAW_MAX];
	vsnprintf(raw, sizeof(raw), fmt, ap);
	nl_log_escape(out, OUT_MAX, raw);
}

void nl_slurm_error(const char *fmt, ...)
{
	char out[OUT_MAX];
	va_list ap;
	va_start(ap, fmt);
	escaped(out, fmt, ap);
	va_end(ap);
	slurm_error("%s", out);
}

void nl_slurm_info(const char *fmt, ...)
{
	char out[OUT_MAX];
	va_list ap;
	va_start(ap, fmt);
	escaped(out, fmt, ap);
	va_end(ap);
	slurm_info("%s", out);
}
