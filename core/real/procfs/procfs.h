/* numalot: what the real node's threads look like in /proc. */
#ifndef NUMALOT_PROCFS_H
#define NUMALOT_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

#include "sample.h"

/*
 * The directory every /proc and /sys path of the real node is read under:
 * "" (the live system) unless a test set a saved tree (docs/real-node.md,
 * "Saved trees"). Never from the environment: the root agent reads the
 * live system only. 0, or -ENAMETOOLONG past NL_FS_ROOT_MAX.
 */
#define NL_FS_ROOT_MAX 128
int nl_fs_set_root(const char *dir);
const char *nl_fs_root(void);
/* The root, then fmt ("/proc/%d/stat"), into buf: as snprintf. */
int nl_fs_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A path buffer's size: the root and a /proc or /sys path of up to 96. */
#define NL_FS_PATH (NL_FS_ROOT_MAX + 96)

/* The fields of /proc/PID/task/TID/stat numalot uses. */
struct nl_task_stat {
	char comm[64];
	char state;
	int ppid;			/* field 4 */
	unsigned long long utime_ticks; /* field 14 */
	unsigned long long stime_ticks; /* field 15 */
	unsigned long long starttime;	/* field 22, ticks after boot */
	int processor;			/* field 39: CPU it last ran on */
	unsigned long long faults;	/* fields 10 + 12: page faults */
	unsigned long long rss_pages;	/* field 24: resident pages */
};

/*
 * Parse the text of a stat file. The command name may hold spaces and
 * parentheses: it ends at the last ')'. Returns 0 or -EINVAL.
 */
int nl_proc_parse_stat(const char *text, struct nl_task_stat *out);

/* Read /proc/PID/task/TID/stat. -ESRCH when the thread is gone. */
int nl_proc_read_stat(pid_t pid, pid_t tid, struct nl_task_stat *out);

/* Read /proc/PID/stat: the whole process (its faults are every thread's,
 * ended ones included). -ESRCH when it is gone. */
int nl_proc_read_process_stat(pid_t pid, struct nl_task_stat *out);

/*
 * A thread's stat file kept open: one read a period instead of open, read
 * and close. The descriptor stays bound to that thread: once it has ended
 * (even if its tid is reused) the read says -ESRCH.
 */
int nl_proc_open_stat(pid_t pid, pid_t tid);
int nl_proc_pread_stat(int fd, struct nl_task_stat *out);

/*
 * How many threads process pid has, as the kernel counts them (the link
 * count of /proc/PID/task: one system call, no listing). -ESRCH or a
 * negative errno.
 */
long nl_proc_count_tasks(int pid);

/*
 * The thread ids of pid, sorted, in a malloc'd array. -ESRCH when the
 * process is gone.
 */
int nl_proc_list_tasks(pid_t pid, pid_t **tids, size_t *n);

/*
 * Add the pages of every mapping in the text of /proc/PID/numa_maps to
 * pages[node] ("N0=12 N1=3" tokens). Returns 0 or -EINVAL.
 */
int nl_proc_parse_numa_maps(const char *text, double *pages, int nnodes);
/* The share of the anonymous pages in that text whose mapping's policy is
 * "bind:" (set by the process: numactl --membind, mbind), 0 when none. */
double nl_proc_numa_maps_bound(const char *text);
/* The same for every policy but "default" (bind, interleave, prefer,
 * local...: the process's own; docs/real-node.md, "Other placers"). */
double nl_proc_numa_maps_own(const char *text);

/* Read and parse /proc/PID/numa_maps: how many mappings it has, or
 * -ESRCH / -EACCES as the kernel says; *bound and *own (may be NULL) get
 * nl_proc_numa_maps_bound and nl_proc_numa_maps_own of it. */
int nl_proc_read_numa_maps(pid_t pid, double *pages, int nnodes, double *bound,
			   double *own);

/* Read a small /proc file into a malloc'd NUL-terminated buffer. */
int nl_proc_slurp(const char *path, char **text, size_t *len);

/*
 * The uids of pid (real, effective, saved, filesystem: the Uid: line of
 * /proc/PID/status). 0, -ESRCH, -EINVAL (no such line) or -errno.
 */
int nl_proc_uids(pid_t pid, uid_t uids[4]);

/* Real uid of pid (from /proc/PID/status), or a negative errno. */
int nl_proc_uid(pid_t pid, uid_t *uid);

/*
 * 0 when every uid of pid (real, effective, saved, filesystem) is uid;
 * -EPERM when one is not; -ESRCH / -errno when it cannot be read.
 */
int nl_proc_owned_by(pid_t pid, uid_t uid);

#endif
