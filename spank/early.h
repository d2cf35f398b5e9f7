/*
 * numalot SPANK plugin: the report a user asked for (--numalot-report),
 * checked in each task before it runs the program (docs/slurm.md, "What
 * happens where"). slurmstepd (root) knows the path only once a task is
 * forked (the task's working folder, Slurm's node name): task_post_fork
 * notes it; the task, released after every task_post_fork and running as
 * the job's user, checks it in task_init. The note lives in memory shared
 * across the fork, made before the tasks are. No Slurm calls here.
 */
#ifndef NUMALOT_EARLY_H
#define NUMALOT_EARLY_H

#include <stddef.h>

/* Before the tasks are forked (slurmstepd): 0, or -1 (no check then). */
int nl_early_setup(void);

/* slurmstepd, task_post_fork: where the step's report will be written. */
void nl_early_note(const char *path);

/*
 * The task, as its user, before it runs the program: 0 when the noted
 * report can be written there (or nothing was noted); otherwise -1 with
 * msg ("numalot: cannot write report PATH: why; ...") and the refusal
 * noted for slurmstepd (nl_early_refused). asked is the user's pattern.
 */
int nl_early_check(const char *asked, char *msg, size_t len);

/* slurmstepd: 1 when a task refused the report (it did not start), so
 * that the step's end does not try and fail again. */
int nl_early_refused(void);

#endif
