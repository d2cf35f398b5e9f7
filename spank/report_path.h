/*
 * numalot SPANK plugin: report file names from srun(1)'s file name
 * patterns, %A %a %J %j %N %n %s %t %u %x %% and %4j's zero-padding
 * (docs/slurm.md, "Where reports go", says what each gives).
 */
#ifndef NUMALOT_REPORT_PATH_H
#define NUMALOT_REPORT_PATH_H

#include <stddef.h>
#include <stdint.h>

/* The default pattern: a folder per job, a file per step and node. */
#define NL_REPORT_PATTERN "numalot-%j/%s.%N.json"

/* What the tokens stand for on one node of one step. */
struct nl_path_ids {
	uint32_t job, step;		/* %j, %s (%J: both) */
	uint32_t array_job, array_task; /* %A, %a: as Slurm gives them */
	uint32_t node_index;		/* %n: the node's index in the step */
	uint32_t first_task;		/* %t: the node's first task (rank) */
	const char *node;		/* %N: Slurm's name of the node */
	const char *user;		/* %u */
	const char *job_name;		/* %x */
};

/* Check a pattern's tokens: 0, or -1 with msg naming the bad part. */
int nl_path_check(const char *pattern, char *msg, size_t len);

/*
 * Expand pattern into out, under cwd when it is relative (cwd "" or NULL:
 * as it is). A '/' in a name (%N %u %x) becomes '_'. 0; -1 too long for
 * out; -2 a bad token (nl_path_check says which).
 */
int nl_path_expand(const char *pattern, const char *cwd,
		   const struct nl_path_ids *ids, char *out, size_t len);

/* 1 when the pattern names a file per node (%N, %n or %t), else 0. */
int nl_path_per_node(const char *pattern);

/*
 * The pattern with ".%N" before the extension of its file name
 * ("r.json" -> "r.%N.json", "out" -> "out.%N"), for a step on several
 * nodes whose pattern names one file. 0, or -1 if out is too small.
 */
int nl_path_add_node(const char *pattern, char *out, size_t len);

/* Step ids as srun writes them: a number, "batch", "extern"... */
const char *nl_path_step_name(uint32_t step, char *buf, size_t len);

#endif
