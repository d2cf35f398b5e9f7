/* numalot: numalotd's log (stderr with a timestamp, or syslog). */
#ifndef NUMALOT_LOG_H
#define NUMALOT_LOG_H

#include <stddef.h>

enum { NL_LOG_ERROR, NL_LOG_WARNING, NL_LOG_INFO, NL_LOG_DEBUG };

void nl_log_setup(int level, int use_syslog);
void nl_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
