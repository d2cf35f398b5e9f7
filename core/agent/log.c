/*
 * numalotd's log: stderr with a timestamp, or syslog; repeated warnings
 * rate-limited, control characters escaped.
 */
#include "log.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static int log_level = NL_LOG_INFO, log_syslog;

void nl_log_setup(int level, int use_syslog)
{
	log_level = level;
	log_syslog = use_syslog;
	if (use_syslog)
		openlog("numalotd", LOG_PID, LOG_DAEMON);
}

/*
 * Repeated warnings are rate-limited by their format (one kind of
 * message): at most LOG_BURST in LOG_WINDOW_S seconds, then a count of
 * what was left out. A peer cannot flood the log.
 */
#define LOG_BURST 10
#define LOG_WINDOW_S 10.0
#define LOG_KINDS 64

static struct {
	const char *fmt;
	double since;
	unsigned n, dropped;
} log_kinds[LOG_KINDS];

/* 1: print it; 0: left out. *dropped: left out before this one. */
static int log_allow(const char *fmt, unsigned *dropped)
{
	double now = nl_mono_s();
	size_t h = ((uintptr_t)fmt >> 3) % LOG_KINDS;
	*dropped = 0;
	if (log_kinds[h].fmt != fmt ||
	    now - log_kinds[h].since >= LOG_WINDOW_S) {
		*dropped = log_kinds[h].fmt == fmt ? log_kinds[h].dropped : 0;
		log_kinds[h].fmt = fmt;
		log_kinds[h].since = now;
		log_kinds[h].n = 0;
		log_kinds[h].dropped = 0;
	}
	if (log_kinds[h].n >= LOG_BURST) {
		log_kinds[h].dropped++;
		return 0;
	}
	log_kinds[h].n++;
	return 1;
}

void nl_log(int level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info",
					    "debug"};
	static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
	char raw[1024], msg[4096];
	unsigned dropped = 0;
	va_list ap;
	if (level > log_level)
		return;
	if (level >= NL_LOG_WARNING && !log_allow(fmt, &dropped))
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* Everything logged can hold what a peer sent: no control
	 * characters, so that no one forges a line (or a terminal). */
	nl_log_escape(msg, sizeof(msg), raw);
	if (log_syslog) {
		if (dropped)
			syslog(prio[level], "(%u like the next left out)",
			       dropped);
		syslog(prio[level], "%s", msg);
	} else {
		char ts[32];
		time_t t = time(NULL);
		struct tm tm;
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S",
			 localtime_r(&t, &tm));
		if (dropped)
			fprintf(stderr,
				"%s numalotd[%d] %s: (%u like the next left "
				"out)\n",
				ts, (int)getpid(), names[level], dropped);
		fprintf(stderr, "%s numalotd[%d] %s: %s\n", ts, (int)getpid(),
			names[level], msg);
	}
}
