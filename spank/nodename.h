/*
 * numalot SPANK plugin: Slurm's name of this node as slurmstepd knows it.
 * The job's environment (SLURMD_NODENAME) is the user's to set, and the
 * name goes into the paths root writes (docs/slurm.md, "Security").
 */
#ifndef NUMALOT_NODENAME_H
#define NUMALOT_NODENAME_H

#include <stddef.h>
#include <stdint.h>

/*
 * The name slurmstepd gave its own socket for job.step (SPOOL/NODE_JOB.STEP,
 * a socket this process holds open), asked of each socket this process
 * holds (getsockname), never read from /proc/net/unix, which any local
 * user can add lines to. 0, or -1 (out "") when there is none or the name
 * is not a safe node name (nl_node_name_ok).
 */
int nl_stepd_node_name(uint32_t job, uint32_t step, char *out, size_t len);

/* The host's short name when it is a safe node name: 0, or -1 (out ""). */
int nl_host_node_name(char *out, size_t len);

#endif
