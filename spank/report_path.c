/* numalot SPANK plugin: report file names from srun(1)'s patterns. */
#include "report_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALID_TOKENS "%A %a %J %j %N %n %s %t %u %x %%"
#define MAX_WIDTH 32

/* Slurm's step ids for the steps that are not srun's (slurm.h). */
#define STEP_INTERACTIVE 0xfffffffau
#define STEP_BATCH 0xfffffffbu
#define STEP_EXTERN 0xfffffffcu
#define STEP_PENDING 0xfffffffdu

const char *nl_path_step_name(uint32_t step, char *buf, size_t len)
{
	switch (step) {
	case STEP_INTERACTIVE:
		return "interactive";
	case STEP_BATCH:
		return "batch";
	case STEP_EXTERN:
		return "extern";
	case STEP_PENDING:
		return "TBD";
	default:
		snprintf(buf, len, "%u", step);
		return buf;
	}
}

/*
 * The token at p (just after a '%'): its letter in *tok and its width in
 * *width; returns the characters it takes, or 0 if it is bad (msg says
 * why).
 */
static size_t token(const char *p, char *tok, int *width, char *msg, size_t len)
{
	size_t n = 0;
	*width = 0;
	while (p[n] >= '0' && p[n] <= '9') {
		*width = *width * 10 + (p[n] - '0');
		if (*width > MAX_WIDTH) {
			snprintf(msg, len,
				 "the width in \"%%%.*s...\" is over %d",
				 (int)n, p, MAX_WIDTH);
			return 0;
		}
		n++;
	}
	*tok = p[n];
	if (!*tok) {
		snprintf(msg, len,
			 "a %% with no letter after it at the end (valid: "
			 "%s)",
			 VALID_TOKENS);
		return 0;
	}
	if (!strchr("AaJjNnstux%", *tok)) {
		snprintf(msg, len, "unknown token \"%%%.*s\" (valid: %s)",
			 (int)(n + 1), p, VALID_TOKENS);
		return 0;
	}
	return n + 1;
}

int nl_path_check(const char *pattern, char *msg, size_t len)
{
	char tok;
	int width;
	if (!pattern || !*pattern) {
		snprintf(msg, len, "an empty pattern");
		return -1;
	}
	if (strchr(pattern, '\\'))
		return 0; /* taken as it is */
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		size_t n = token(p + 1, &tok, &width, msg, len);
		if (!n)
			return -1;
		p += n;
	}
	return 0;
}

int nl_path_per_node(const char *pattern)
{
	char tok, msg[8];
	int width;
	if (strchr(pattern, '\\'))
		return 0;
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		size_t n = token(p + 1, &tok, &width, msg, sizeof(msg));
		if (!n)
			return 0;
		if (tok == 'N' || tok == 'n' || tok == 't')
			return 1;
		p += n;
	}
	return 0;
}

/* Append a name, '/' made '_' so that it stays one path component. */
static void put_name(char *out, size_t len, size_t *n, const char *s)
{
	for (; s && *s && *n < len; s++)
		out[(*n)++] = *s == '/' ? '_' : *s;
}

static void put_number(char *out, size_t len, size_t *n, int width,
		       unsigned long v)
{
	if (*n < len)
		*n += (size_t)snprintf(out + *n, len - *n, "%0*lu", width, v);
}

int nl_path_expand(const char *pattern, const char *cwd,
		   const struct nl_path_ids *ids, char *out, size_t len)
{
	char msg[160], stepbuf[16], tok;
	size_t n = 0;
	int width, literal;

	if (len == 0)
		return -1;
	if (nl_path_check(pattern, msg, sizeof(msg)) < 0)
		return -2;
	literal = strchr(pattern, '\\') != NULL;
	if (pattern[0] != '/' && cwd && cwd[0])
		n = (size_t)snprintf(out, len, "%s/", cwd);
	for (const char *p = pattern; *p && n < len; p++) {
		if (literal) {
			if (*p != '\\')
				out[n++] = *p;
			continue;
		}
		if (*p != '%') {
			out[n++] = *p;
			continue;
		}
		p += token(p + 1, &tok, &width, msg, sizeof(msg));
		switch (tok) {
		case '%':
			out[n++] = '%';
			break;
		case 'A':
			put_number(out, len, &n, width, ids->array_job);
			break;
		case 'a':
			put_number(out, len, &n, width, ids->array_task);
			break;
		case 'j':
			put_number(out, len, &n, width, ids->job);
			break;
		case 'J':
			put_number(out, len, &n, width, ids->job);
			if (n < len)
				out[n++] = '.';
			put_name(out, len, &n,
				 nl_path_step_name(ids->step, stepbuf,
						   sizeof(stepbuf)));
			break;
		case 's':
			if (ids->step >= STEP_INTERACTIVE)
				put_name(out, len, &n,
					 nl_path_step_name(ids->step, stepbuf,
							   sizeof(stepbuf)));
			else
				put_number(out, len, &n, width, ids->step);
			break;
		case 'n':
			put_number(out, len, &n, width, ids->node_index);
			break;
		case 't':
			put_number(out, len, &n, width, ids->first_task);
			break;
		case 'N':
			put_name(out, len, &n, ids->node);
			break;
		case 'u':
			put_name(out, len, &n, ids->user);
			break;
		case 'x':
			put_name(out, len, &n, ids->job_name);
			break;
		}
	}
	if (n >= len)
		return -1;
	out[n] = 0;
	return 0;
}

int nl_path_add_node(const char *pattern, char *out, size_t len)
{
	const char *slash = strrchr(pattern, '/');
	const char *base = slash ? slash + 1 : pattern;
	const char *dot = strrchr(base, '.');
	/* "r.json": before the extension; ".hidden" or "out": at the end. */
	size_t at =
		dot && dot != base ? (size_t)(dot - pattern) : strlen(pattern);
	int n = snprintf(out, len, "%.*s.%%N%s", (int)at, pattern,
			 pattern + at);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
