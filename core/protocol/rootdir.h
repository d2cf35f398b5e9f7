/*
 * numalot: a folder root may write in (report_dir, the site log's): every
 * folder on its path root's or the owner's and writable by nobody else
 * (a sticky one such as /tmp may stand above it), links followed only
 * when root made them (docs/slurm.md, "Security").
 */
#ifndef NUMALOT_ROOTDIR_H
#define NUMALOT_ROOTDIR_H

#include <stddef.h>
#include <sys/types.h>

/* Check dir, creating its last folder with mode when missing (mode 0:
 * never). 0, or a negative errno with why naming the folder at fault. */
int nl_owned_dir(const char *dir, int mode, uid_t owner, char *why, size_t len);

/*
 * The same (none made), but the last folder may also be a shared sticky
 * one such as /tmp, whose other entries only their owners may move: 1
 * then (a file there must be made anew, never opened by name: it may be
 * anyone's link or FIFO), 0 when it is owner's alone, or a negative errno.
 */
int nl_owned_or_shared_dir(const char *dir, uid_t owner, char *why, size_t len);

/* The same for the folder of path (absolute): the agent's socket, its
 * log. */
int nl_owned_parent(const char *path, int mode, uid_t owner, char *why,
		    size_t len);

/*
 * Open path for appending (a log), as this process's own file: its folder
 * checked (nl_owned_parent, none made), never through a link, never a
 * FIFO or device, another's file or one with other names (a hard link);
 * a new one gets mode. A descriptor (close-on-exec), or a negative errno
 * with why.
 */
int nl_open_owned_log(const char *path, int mode, char *why, size_t len);

#endif
