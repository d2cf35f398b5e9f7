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

/* How the step went on this node, for its report (nl_agentctl_finish). */
struct nl_step_end {
	int attempted;	/* tasks we tried to register */
	int registered; /* tasks the agent took */
	int failed;	/* the agent failed us: why, in reason */
	int unanswered; /* ...by not answering within wait= (not asked again) */
	const char *reason;
	const char *user_path; /* the user's report ("" none: user_reports=) */
	const char *node;      /* Slurm's name of this node */
	const char *user;      /* the job's user name */
	const char *cluster;   /* Slurm's cluster name ("" unknown) */
	const char *program;   /* the step's program, for a task that ended
				  before the agent took it over */
};

/*
 * At step end: unregister the step, fetch its report and write it as the
 * job's user at user_path, and the site's copy and log line as root
 * (collect.h); if the agent was lost, a report that says so. A report with
 * data already written (by an agent that was stopped) is never replaced by
 * one without. Failures go to slurm_error, which in a task's exit hook
 * reaches srun's stderr. 0, or -1 when the user's report was not written.
 */
int nl_agentctl_finish(spank_t sp, const struct nl_site *s,
		       const struct nl_step_end *e);

#endif
