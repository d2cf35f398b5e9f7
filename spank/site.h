/* numalot SPANK plugin: site policy from plugstack.conf arguments. */
#ifndef NUMALOT_SITE_H
#define NUMALOT_SITE_H

#include <stddef.h>

#include "policy_names.h"

/* What a user can ask for with --numalot: off, or 1 + the kind of a policy
 * jobs may choose (NL_POLICY_JOBS in policy_list.h). */
enum nl_choice {
	NL_CHOICE_OFF,
	/* what --numalot-report alone asks for */
	NL_CHOICE_MONITOR = 1 + NL_POLICY_MONITOR,
	NL_CHOICE_COUNT = 1 + NL_POLICY_COUNT
};

#define NL_CHOICE_OF(kind) ((enum nl_choice)(1 + (kind)))

/* Its name ("?" for a number that is no choice). */
const char *nl_choice_name(enum nl_choice c);
/* 0 and *c, or -1 for a name not in "imar2, lbma, monitor, off". */
int nl_choice_from_name(const char *name, enum nl_choice *c);

/* user_reports=: when a step's user gets its report (docs/slurm.md). */
enum nl_user_reports {
	NL_USER_REPORTS_REQUEST, /* when the user asked for numalot */
	NL_USER_REPORTS_ALWAYS,	 /* every managed step */
	NL_USER_REPORTS_NEVER	 /* only the site's copies */
};

struct nl_site {
	enum nl_choice default_choice; /* default= (off) */
	unsigned allow;		       /* allow= bit per choice (all) */
	int force;		       /* force= choice, or -1 */
	char report_dir[512];	       /* report_dir= site copies, "" none */
	char agent[512];	       /* agent= path of numalotd */
	char socket[108];	       /* socket= the agent's socket */
	char counters[16];	       /* counters= auto|papi|perf|software */
	char topology[256];	       /* topology= for the agent ("" live) */
	char log[512];		       /* log= agent's log file, "" syslog */
	double period_s;	       /* period= default (1) */
	double min_period_s;	       /* min_period= (0.1) */
	double max_period_s;	       /* max_period= (60) */
	double idle_exit_s;	       /* idle_exit= agent idle exit (60) */
	double agent_nice;  /* agent_nice= the agent's own nice, -20 to 19 */
	int agent_nice_set; /* given (else the agent raises itself to -10) */
	double wait_s;	    /* wait= the most a step waits on the agent (1) */
	int keep_bindings;  /* bindings=keep: never leave a task's binding
			       (default free: anywhere in its allocation) */
	enum nl_user_reports user_reports; /* user_reports= (request) */
	char site_log[512]; /* site_log= a JSON line per step, "" none */
	char conf[512];	    /* the site's file read ("" none) */
	/* Keys the agent enforces that the plugstack line set ("allow=,
	 * report_dir="): a service's agent does not see them. */
	char line_agent_keys[200];
	int bad_args; /* arguments nl_site_parse refused */
	int closed;   /* a bad allow= or force=: every policy but off refused */
};

void nl_site_default(struct nl_site *s, const char *agent_path);

/*
 * Apply the plugstack.conf arguments ("key=value"). A bad argument is
 * reported through complain (one message naming it) and skipped: the
 * rest still apply, but a bad allow= or force= fails closed (closed: only
 * off). Returns how many were bad (also in bad_args).
 */
int nl_site_parse(struct nl_site *s, int ac, char **av,
		  void (*complain)(const char *msg));

/*
 * The site's settings: the file conf (NUMALOT_CONF, or config=PATH on the
 * plugstack line; "" or config=none: no file), then the plugstack line's
 * arguments, which win (docs/slurm.md, "Site policy"). Bad words are told
 * as by nl_site_parse, naming the file and line; a file that cannot be
 * used (unreadable, not root's, writable by others) fails closed. Returns
 * how many were bad (also in bad_args).
 */
int nl_site_load(struct nl_site *s, const char *conf, int ac, char **av,
		 void (*complain)(const char *msg));

/* The one line a user sees when the site's arguments are bad (buf ""
 * when they are not). */
void nl_site_misconfigured(const struct nl_site *s, char *buf, size_t len);

/* "imar2, lbma, monitor, off" limited to what allow permits. */
void nl_site_allowed_list(const struct nl_site *s, char *buf, size_t len);

/*
 * Check a user's --numalot value against the site: 0, or -1 with msg set
 * (an unknown value lists the valid ones; a disallowed one the allowed).
 */
int nl_site_check_choice(const struct nl_site *s, const char *value,
			 enum nl_choice *out, char *msg, size_t len);

/*
 * An option given again in srun (its callback runs once per occurrence):
 * the first value is kept in first (len bytes); the same value again is 0,
 * another is -1 with msg naming both (as pyxis refuses a repeated option).
 */
int nl_site_check_repeat(char *first, size_t len, const char *option,
			 const char *value, char *msg, size_t msglen);

/*
 * The step's policy from what the user asked: user_choice (-1: no
 * --numalot) and report_asked (a --numalot-report). force= first, then the
 * user's choice, then default=; but a --numalot-report alone, where that
 * would leave numalot off, asks for monitor (*implied set) where the site
 * allows it. 0 and *out; or -1 with msg, *out off: a report asked alone
 * that cannot be had (monitor not allowed, or force=off). With
 * user_reports=never a report asked for asks for nothing (it is ignored).
 */
int nl_site_step_choice(const struct nl_site *s, int user_choice,
			int report_asked, enum nl_choice *out, int *implied,
			char *msg, size_t len);

/* Check --numalot-period: 0 and *out, or -1 with msg. */
int nl_site_check_period(const struct nl_site *s, const char *value,
			 double *out, char *msg, size_t len);

#endif
