/*
 * numalot SPANK plugin: what a site keeps of each step on each node
 * (docs/slurm.md, "Site collection"): a copy of the report in report_dir
 * and one JSON line in site_log. No Slurm calls here: testable.
 */
#ifndef NUMALOT_COLLECT_H
#define NUMALOT_COLLECT_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "site.h"

struct json_object;

/* The step on this node, as the site log names it. */
struct nl_collect_ids {
	uint32_t job, step;
	uid_t uid;
	const char *node;    /* Slurm's name of the node */
	const char *user;    /* the job's user name ("" unknown) */
	const char *cluster; /* Slurm's cluster name ("" unknown) */
};

/*
 * The site log's line for a report: "time" (UTC, ISO 8601), "cluster",
 * "user", then the report's digest (digest.h); one line ending in '\n'
 * (malloc'd), or NULL.
 */
char *nl_site_line(struct json_object *report, const struct nl_collect_ids *id,
		   time_t now);

/* The site copy's path: report_dir/numalot-JOB.STEP.NODE.json. 0 or -1. */
int nl_site_copy_path(const char *dir, const struct nl_collect_ids *id,
		      char *out, size_t len);

/*
 * Write the site copy (text) into s->report_dir (folders created 0750,
 * the file 0640, as root) and append the report's line to s->site_log
 * (0640), each where the site set one. A failure is told to complain,
 * one message naming the file; returns how many failed.
 */
int nl_collect(const struct nl_site *s, const char *text,
	       struct json_object *report, const struct nl_collect_ids *id,
	       void (*complain)(const char *msg));

#endif
