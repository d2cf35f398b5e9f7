/*
 * numalot: writing a report file safely (docs/slurm.md): as its owner, in
 * a child that cannot hold the caller up, never through a symbolic link or
 * over someone else's file, and atomically: a temporary file in the same
 * folder, every write and the fsync checked, then a rename. On failure the
 * old file stays as it was.
 */
#ifndef NUMALOT_RWRITE_H
#define NUMALOT_RWRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nl_write_as {
	uid_t uid; /* write as this user (0: as root) */
	gid_t gid;
	const gid_t *groups; /* supplementary groups (NULL: none) */
	int ngroups;
	int mode;	/* of a new file, e.g. 0644 */
	int timeout_ms; /* the child is killed past this */
	/* Keep a file already there that holds a report with data
	 * ("threads") of this job step when text has none. */
	int keep_data;
	uint32_t job, step;
	/* Create the missing folders of path with this mode (0: none).
	 * As root (uid 0): the folder must be root's all along its path or
	 * a shared sticky one such as /tmp, else EPERM (docs/slurm.md,
	 * "Security"). */
	int dir_mode;
	/* Append text to the file (a site log: one line, one write, under
	 * an exclusive lock) instead of replacing it. */
	int append;
};

/*
 * Write text to path, in a child that takes uid's identity for good (no
 * capability, not dumpable, none of the caller's descriptors); bytes of
 * text that are not UTF-8 are written as '?'. Returns 0,
 * EALREADY (a report with data was kept), or an errno: EEXIST (a file that is
 * not the user's regular file; for root, one that is not a numalot report),
 * ETIMEDOUT, ENOSPC... The errno of a failure is
 * that of the step that failed; the old file is left as it was.
 */
int nl_write_report_as(const char *path, const char *text,
		       const struct nl_write_as *o);

/* Whether the file open at fd is a numalot report (a JSON object naming
 * numalot's version): the only file of root's a report of root's may
 * replace (docs/slurm.md, "Security"). */
int nl_file_is_report(int fd);

/* Create the folders leading to path that are missing, with mode (as
 * whoever runs it). 0 or an errno (ENOTDIR: one is not a folder). */
int nl_make_parents(const char *path, int mode);

/* Append text to path, a regular file of owner's with no other name (no
 * hard link; created with mode), in one write under an exclusive lock. 0
 * or an errno (EEXIST: not such a file). */
int nl_append_here(const char *path, const char *text, int mode, uid_t owner);

/* The same in this process, as whoever runs it (no child, no timeout). */
int nl_write_report_here(const char *path, const char *text, int mode,
			 uid_t owner, int keep_data, uint32_t job,
			 uint32_t step);

#endif
