/*
 * numalot: whether a report could be written at a path, asked before the
 * program it is about runs (numalot run --report, srun --numalot-report),
 * so that a path that cannot take it fails at once rather than after the
 * run. Nothing is created or changed.
 */
#ifndef NUMALOT_WRITABLE_H
#define NUMALOT_WRITABLE_H

#include <stddef.h>

/* The folders missing on the way will be made (rwrite.h's dir_mode): the
 * nearest one that exists must take them; with NL_WRITABLE_OWN_FILE, run
 * as root, it must also be root's all along its path or a shared sticky
 * one, as rwrite.h wants of a report root writes. */
#define NL_WRITABLE_MAKE_DIRS 1
/* The file is written as rwrite.h does: a temporary file beside it, then
 * a rename; one already there must be the writer's own regular file, not
 * a link. Without it: opened and truncated in place (numalot run). */
#define NL_WRITABLE_OWN_FILE 2

/*
 * Whether this process, with its effective ids, could write a report at
 * path (a relative path from the working folder): 0, or a negative errno
 * with why set to the reason, for "cannot write report PATH: WHY"
 * ("Permission denied", "its folder /a/b does not exist", "/a is not a
 * folder", "a file there is not yours").
 */
int nl_writable(const char *path, int flags, char *why, size_t len);

#endif
