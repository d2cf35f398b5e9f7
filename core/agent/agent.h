/* numalot: numalotd, the per-node agent serving every job on the node. */
#ifndef NUMALOT_AGENT_H
#define NUMALOT_AGENT_H

#include "counters.h"
#include "log.h"

/* An allow bit no policy has: every request refused (allow=off). */
#define NL_AGENT_ALLOW_NONE (1u << 31)

struct nl_agent_config {
	/* The site's file (siteconf.h; "" none), read by nl_agent_args, and
	 * how many settings it held. */
	const char *conf_path;
	int conf_settings;
	const char *socket_path;
	const char *topology;	/* NULL: this machine */
	const char *report_dir; /* site copy of every report, or NULL */
	enum nl_backend backend;
	double idle_exit_s; /* exit after this long with no step; 0 never */
	double default_period_s;
	double min_period_s, max_period_s;
	double stale_s; /* forget ended steps never unregistered */
	int log_level;	/* 0 error, 1 warning, 2 info, 3 debug */
	int use_syslog;
	/* Site policy, enforced on every request whoever sends it: the
	 * policies allowed (bit per enum nl_policy_kind; 0: all) and the one
	 * forced (-1: none). */
	unsigned allow;
	int force;
	/* A descriptor given by whoever started the agent: it gets "ok" once
	 * the agent serves, or the reason it cannot; -1 none. */
	int ready_fd;
	/* The agent's own nice (--nice), or NL_OWN_NICE raised only. */
	int nice, nice_given;
};

void nl_agent_config_default(struct nl_agent_config *c);

/*
 * The agent's raised priority, given up for good when the agent used more
 * than NL_NICE_GUARD_MAX_SHARE of a CPU over a window of
 * NL_NICE_GUARD_WINDOW_S (a bug, or more work than a node should give
 * it): it never takes the jobs' CPUs at a raised priority
 * (docs/real-node.md, "Priority").
 */
#define NL_NICE_GUARD_WINDOW_S 10.0
#define NL_NICE_GUARD_MAX_SHARE 0.25
struct nl_nice_guard {
	int raised;	     /* above the priority it was started with */
	double t0_s, cpu0_s; /* the window's start: its clock, its CPU time */
};

/* As the loop turns (now_s monotonic, cpu_s the agent's CPU time): 1 when
 * the raised priority is to be given up now (raised is 0 from then on). */
int nl_nice_guard_check(struct nl_nice_guard *g, double now_s, double cpu_s);

/* Run the agent until idle exit or SIGTERM/SIGINT. Returns an exit status. */
int nl_agent_run(const struct nl_agent_config *c);

#endif
