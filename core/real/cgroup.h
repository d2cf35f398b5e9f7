/* numalot: a process's allocation from its cgroup's cpuset (cgroup.c). */
#ifndef NUMALOT_REAL_CGROUP_H
#define NUMALOT_REAL_CGROUP_H

#include <stddef.h>
#include <sys/types.h>
#include <hwloc.h>

/*
 * The CPUs (OS numbers) of pid's Slurm job's or step's cpuset cgroup, v1
 * or v2: its own cgroup's, or the nearest ancestor's that sets them, no
 * higher than a cgroup named job_N or step_N (docs/slurm.md); where says
 * which ("cgroup v1 cpuset /slurm/uid_0/job_3/step_0"). 0; -ENOENT when
 * there is none (any other cgroup, such as slurmd.service, system.slice
 * or the root, allocates nothing); -EINVAL when /proc/PID/cgroup holds
 * a line the kernel would not print (a hierarchy twice, cpuset twice, a
 * "." or ".." part); -ESRCH when pid is gone.
 */
int nl_cgroup_cpuset(pid_t pid, hwloc_bitmap_t os, char *where,
		     size_t wherelen);

/* The same with /proc and /sys under fsroot ("" on a live system; a
 * test's tree). */
int nl_cgroup_cpuset_at(const char *fsroot, pid_t pid, hwloc_bitmap_t os,
			char *where, size_t wherelen);

#endif
