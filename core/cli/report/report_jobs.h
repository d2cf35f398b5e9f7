/*
 * numalot report: the Slurm reports of a job, one per node and step,
 * brought together: a row per node and step and the job's totals
 * (docs/report-format.md, "A job's reports").
 */
#ifndef NUMALOT_CLI_REPORT_JOBS_H
#define NUMALOT_CLI_REPORT_JOBS_H

#include <stdio.h>

struct json_object;

/*
 * {"jobs": [{"job": J, "nodes": [DIGEST...], "totals": TOTALS}, ...]}
 * from the reports that are a Slurm step's (the others are left out), in
 * job order, each job's rows by step then node (digest.h).
 */
struct json_object *nl_jobs_merge(struct json_object *const *reports, int n);

/* The merged jobs as a table for a person. */
void nl_jobs_print(struct json_object *merged, FILE *f);

#endif
