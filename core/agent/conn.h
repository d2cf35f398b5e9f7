/*
 * numalotd's connections: each is read and written without blocking, with
 * a deadline, so that a slow or silent peer holds nobody else up.
 */
#ifndef NUMALOT_CONN_H
#define NUMALOT_CONN_H

#include <stddef.h>

#include "server.h"

#define NL_CONN_MAX 256	       /* open connections at once */
#define NL_CONN_MAX_PER_UID 16 /* of one (non-root) user */
#define NL_CONN_DEADLINE_S 2.0 /* from accept to the last byte of the reply */
/* Of a frame over the limit, what is read and thrown away after the
 * reply, so that the close does not reset the peer before it reads it. */
#define NL_CONN_DRAIN_MAX (1 << 20)

struct nl_conn {
	int fd;
	struct nl_peer peer;
	double deadline_s;
	unsigned char hdr[4];
	size_t got;  /* bytes of header + body read */
	size_t need; /* body length, once the header is in */
	char *body;
	char *out; /* the reply frame */
	size_t outlen, sent;
	size_t drain; /* bytes still to throw away once the reply is sent */
};

struct nl_conn_set {
	struct nl_conn *c[NL_CONN_MAX];
	int n;
	int epoll_fd;
};

/*
 * Accept one connection on lfd into the set (epoll-registered with the
 * conn as data.ptr), and serve its request at once if it is there.
 * Returns 0, -EAGAIN (nothing to accept), -EMFILE / -ENFILE (out of
 * descriptors: stop accepting for a while), or -errno.
 */
int nl_conn_accept(struct nl_conn_set *cs, int lfd, struct nl_server *s);

/* The conn is readable or writable: advance it; it may be closed. */
void nl_conn_event(struct nl_conn_set *cs, struct nl_conn *c,
		   struct nl_server *s);

/* Close connections past their deadline. */
void nl_conn_expire(struct nl_conn_set *cs, double now_s);

void nl_conn_close_all(struct nl_conn_set *cs);

#endif
