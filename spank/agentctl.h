/* numalot SPANK plugin: starting, calling and reporting with the agent. */
#ifndef NUMALOT_AGENTCTL_H
#define NUMALOT_AGENTCTL_H

#include <stddef.h>
#include <slurm/spank.h>

#include "protocol.h"
#include "site.h"

/*
 * Everything a step waits on the agent comes out of one budget, the
 * site's wait= (docs/slurm.md): deadline_ms is its end, on the monotonic
 * clock in milliseconds.
 */

/* Make sure an agent answers on the site's socket, starting one (under a
 * lock, so that concurrent steps start exactly one). 0 or -1 with why. */
int nl_agentctl_ensure(const struct nl_site *s, double deadline_ms, char *why,
		       size_t len);

/* Register one task. 0, -1 with why, or -2 with why: no answer in time. */
int nl_agentctl_register(const struct nl_site *s, const struct nl_request *q,
			 double deadline_ms, char *why, size_t len);

/*
 * At step end: unregister the step, fetch its report and write it as the
 * job's user (and a site copy as root); if the agent was lost, a report
 * that says so. unanswered: the agent did not answer within wait= before
 * (then it is not asked again). A report with data already written (by an
 * agent that was stopped) is never replaced by one without.
 */
void nl_agentctl_finish(spank_t sp, const struct nl_site *s, int attempted,
			int registered, int failed, const char *reason,
			const char *pattern, const char *cwd, int unanswered);

#endif
