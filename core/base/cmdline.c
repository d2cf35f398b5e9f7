/* numalot: getopt_long with numalot's messages (cmdline.h). */
#include "cmdline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void nl_getopt_start(void)
{
	optind = 0; /* GNU: start afresh, permutation and '+' included */
	opterr = 0; /* the messages are ours */
}

static void say(const char *prog, FILE *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(const char *prog, FILE *err, const char *fmt, ...)
{
	va_list ap;
	fprintf(err, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fputc('\n', err);
}

/* "--a, --b, ..." of the long options. */
static void valid_list(const struct option *lo, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (; lo->name && n + 4 < len; lo++)
		n += (size_t)snprintf(buf + n, len - n, "%s--%s", n ? ", " : "",
				      lo->name);
}

/* The long option an argument names ("--name[=value]"), or NULL. */
static const struct option *named(const struct option *lo, const char *arg)
{
	size_t n;
	if (strncmp(arg, "--", 2))
		return NULL;
	n = strcspn(arg + 2, "=");
	for (; lo->name; lo++)
		if (strlen(lo->name) == n && !strncmp(lo->name, arg + 2, n))
			return lo;
	return NULL;
}

int nl_getopt(const char *prog, FILE *err, int argc, char **argv,
	      const char *shortopts, const struct option *longopts)
{
	char opts[80], valid[600];
	int plus = shortopts[0] == '+';
	snprintf(opts, sizeof(opts), "%s:%s", plus ? "+" : "",
		 shortopts + plus);
	int c = getopt_long(argc, argv, opts, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	/* What was wrong: the argument just taken, or a short option. */
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	const struct option *o = named(longopts, arg);
	valid_list(longopts, valid, sizeof(valid));
	if (c == ':' && optopt && strncmp(arg, "--", 2))
		say(prog, err, "-%c wants a value", optopt);
	else if (c == ':')
		say(prog, err, "%.*s wants a value", (int)strcspn(arg, "="),
		    arg);
	else if (o && o->has_arg == no_argument && strchr(arg, '='))
		say(prog, err, "--%s takes no value (\"%s\")", o->name, arg);
	else if (optopt && strncmp(arg, "--", 2))
		say(prog, err, "unknown option \"-%c\" (valid: %s)", optopt,
		    valid);
	else
		say(prog, err,
		    "unknown or ambiguous option \"%.*s\" (valid: %s)",
		    (int)strcspn(arg, "="), arg, valid);
	return '?';
}

int nl_opt_whole(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int nl_opt_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}
