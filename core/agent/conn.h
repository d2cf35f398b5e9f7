/*
 * numalotd's connections: each is read and written without blocking, with
 * a deadline, so that a slow or silent peer holds nobody else up.
 */
#ifndef NUMALOT_CONN_H
#define NUMALOT_CONN_H

#include <stddef.h>

#include "server.h"

#define CONN_MAX 256	    /* open connections at once */
#define CONN_MAX_PER_UID 16 /* of one (non-root) user */
#define CONN_DEADLINE_S 2.0 /* from accept to the last byte of the reply */
/* Of a frame over the limit, what is read and thrown away after the
 * reply, so that the close does not reset the peer before it reads it. */
#define CONN_DRAIN_MAX (1 << 20)

struct conn {
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

struct conn_set {
	struct conn *c[CONN_MAX];
	int n;
	int epoll_fd;
};

/*
 * Accept one connection on lfd into the set (epoll-registered with the
 * conn as data.ptr), and serve its request at once if it is there.
 * Returns 0, -EAGAIN (nothing to accept), -EMFILE / -ENFILE (out of
 * descriptors: stop accepting for a while), or -errno.
 */
int conn_accept(struct conn_set *cs, int lfd, struct nl_server *s);

/* The conn is readable or writable: advance it; it may be closed. */
void conn_event(struct conn_set *cs, struct conn *c, struct nl_server *s);

/* Close connections past their deadline. */
void conn_expire(struct conn_set *cs, double now_s);

void conn_close_all(struct conn_set *cs);

#endif
