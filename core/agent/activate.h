/* numalot: the agent's socket passed by systemd (socket activation). */
#ifndef NUMALOT_ACTIVATE_H
#define NUMALOT_ACTIVATE_H

#include <stddef.h>

/*
 * The listening socket systemd passed (etc/numalotd.socket, the
 * LISTEN_PID / LISTEN_FDS protocol of sd_listen_fds(3): descriptors from
 * 3 on, for this process only). numalotd takes exactly one, a listening
 * UNIX stream socket; it is made non-blocking and close-on-exec, and the
 * LISTEN_* variables are removed so that no child takes it for its own.
 *
 * Returns the descriptor (3), -ENOENT when nothing was passed (LISTEN_PID
 * absent or another process's: bind the socket as usual), or another
 * negative errno with the reason in err. name gets the socket's path
 * ("" for an unnamed or abstract one).
 */
int nl_activation_fd(char *name, size_t namelen, char *err, size_t errlen);

#endif
