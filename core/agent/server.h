/* numalotd's state and request handling (no sockets here: testable). */
#ifndef NUMALOT_SERVER_H
#define NUMALOT_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent.h"
#include "engine.h"
#include "protocol.h"

struct json_object;

/*
 * One job step on this node. The steps of one job (of one user) that ask
 * for the same policy share one migration domain of the engine; each step
 * keeps its own tasks and gets its own report.
 */
struct nl_step {
	uint32_t job, step;
	uid_t uid;
	enum nl_policy_kind kind;
	int domain;
	int ntasks;
	int key;     /* the machine's job id of its processes (and children) */
	int by_root; /* registered by root (slurmstepd): site copies allowed */
	double done_since_s; /* when all its tasks had ended, < 0 running */
	char report[1024];   /* the user's report path ("" unknown) */
	gid_t gid;	     /* the job's group, for writing it */
	int has_gid;	     /* ...when the registration gave it */
	char limits[512]; /* what the site's limits changed, for the report */
	char node[64];	  /* Slurm's name of the node ("" the host's) */
};

struct nl_server {
	const struct nl_agent_config *cfg;
	struct nl_engine *engine;
	struct nl_machine *machine;
	struct nl_step *steps;
	size_t nsteps;
	int next_domain;
	int next_key;
	char node[64];
	double stale_checked_s;		 /* drop_stale's last look */
	struct nl_nice_guard nice_guard; /* its raised priority (agent.h) */
};

/* Who is on the other end of the socket (SO_PEERCRED). */
struct nl_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

/* Handle one request body from peer; returns the reply body (malloc'd). */
char *nl_server_handle(struct nl_server *s, const struct nl_peer *peer,
		       const char *body, size_t len);

/*
 * The step job.step of user uid (any user's with any_uid). by_root: 1 a
 * step slurmstepd (root) registered, 0 one a user registered over the
 * socket, -1 either (root's first): a Slurm job id counts only from root.
 */
struct nl_step *nl_server_find(struct nl_server *s, uint32_t job, uint32_t step,
			       int any_uid, uid_t uid, int by_root);
/* The step's report with its Slurm identity added. */
struct json_object *nl_server_step_report(struct nl_server *s,
					  struct nl_step *st);
/* Write the site copy of a report into cfg->report_dir (if set). */
void nl_server_site_copy(struct nl_server *s, const struct nl_step *st,
			 struct json_object *report);
/* Hand a step's report to its user, at the path the plugin gave, written
 * as the user (an agent that stops before the step ends). */
void nl_server_user_copy(struct nl_server *s, const struct nl_step *st,
			 struct json_object *report);
/* 1 when every task of the step has ended. */
int nl_server_step_done(struct nl_server *s, const struct nl_step *st);
/* Forget a step (its threads get their affinity back; its job's domain
 * goes with its last step). */
void nl_server_drop(struct nl_server *s, struct nl_step *st);

#endif
