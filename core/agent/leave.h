/* numalot: the agent leaves a Slurm job's cgroups (leave.c). */
#ifndef NUMALOT_AGENT_LEAVE_H
#define NUMALOT_AGENT_LEAVE_H

#include <stddef.h>
#include <sys/types.h>

/* 1 when a cgroup path is a Slurm job's or lies below one ("/job_7"). */
int nl_cgroup_is_job(const char *path);

/*
 * Move this process out of every Slurm job cgroup it is in: on cgroup v1
 * to the hierarchy's root, on v2 to "numalotd" below the root (else the
 * root). said lists what moved where ("freezer /slurm/uid_0/job_1/step_0
 * -> /") or why not. The number of hierarchies left (0: none was a
 * job's), or -1 when one could not be left.
 */
int nl_leave_job_cgroups(char *said, size_t len);

/* The same with the files named (tests): proc_cgroup in the format of
 * /proc/PID/cgroup, mountinfo in that of /proc/PID/mountinfo. */
int nl_leave_job_cgroups_at(const char *proc_cgroup, const char *mountinfo,
			    pid_t pid, char *said, size_t len);

#endif
