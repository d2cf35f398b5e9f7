/* numalot: the agent's socket passed by systemd (socket activation). */
#ifndef NUMALOT_ACTIVATE_H
#define NUMALOT_ACTIVATE_H

#include <stddef.h>

/*
 * The one listening UNIX stream socket systemd passed (sd_listen_fds(3)),
 * made non-blocking and close-on-exec, LISTEN_* unset for the children.
 * Returns it (3), -ENOENT when none was passed to this process (bind as
 * usual), or a negative errno with err. name gets its path ("" if none).
 */
int nl_activation_fd(char *name, size_t namelen, char *err, size_t errlen);

#endif
