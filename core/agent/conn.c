/* numalotd's connections: non-blocking, one request and one reply each. */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static void drop(struct nl_conn_set *cs, struct nl_conn *c)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i] == c) {
			cs->c[i] = cs->c[--cs->n];
			break;
		}
	epoll_ctl(cs->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->body);
	free(c->out);
	free(c);
}

static int per_uid(const struct nl_conn_set *cs, uid_t uid)
{
	int n = 0;
	for (int i = 0; i < cs->n; i++)
		n += cs->c[i]->peer.uid == uid;
	return n;
}

static void read_some(struct nl_conn_set *cs, struct nl_conn *c,
		      struct nl_server *s);

int nl_conn_accept(struct nl_conn_set *cs, int lfd, struct nl_server *s)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct epoll_event ev = {.events = EPOLLIN};
	struct nl_conn *c;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    cs->n == NL_CONN_MAX ||
	    (cred.uid != 0 && per_uid(cs, cred.uid) >= NL_CONN_MAX_PER_UID)) {
		/* Too many at once: this one is turned away, not queued. */
		if (cs->n == NL_CONN_MAX || cred.uid != 0)
			nl_log(NL_LOG_WARNING,
			       "turned away a connection of uid %u: too many "
			       "open",
			       (unsigned)cred.uid);
		close(fd);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->fd = fd;
	c->peer = (struct nl_peer){cred.pid, cred.uid, cred.gid};
	c->deadline_s = nl_mono_s() + NL_CONN_DEADLINE_S;
	ev.data.ptr = c;
	if (epoll_ctl(cs->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		free(c);
		return -errno;
	}
	cs->c[cs->n++] = c;
	/* Its request is most often there already: served now, not after
	 * the engine's next slice (docs/protocol.md, "Cost"). */
	read_some(cs, c, s);
	return 0;
}

/* The reply to a frame over the limit is sent: read and throw away what
 * the peer still sends of it (c->drain bytes at most, a bounded number
 * of reads an event), then close. Closed unread, the peer's sending
 * would fail (EPIPE, ECONNRESET) before it read its reply. */
static void discard_some(struct nl_conn_set *cs, struct nl_conn *c)
{
	char buf[16384];

	for (int reads = 0; c->drain; reads++) {
		size_t want = c->drain < sizeof(buf) ? c->drain : sizeof(buf);
		ssize_t r;
		if (reads == 16)
			return; /* more at the next event */
		r = recv(c->fd, buf, want, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0)
			break; /* the peer is done, or gone */
		c->drain -= (size_t)r;
	}
	drop(cs, c);
}

static void write_some(struct nl_conn_set *cs, struct nl_conn *c)
{
	while (c->sent < c->outlen) {
		ssize_t w = send(c->fd, c->out + c->sent, c->outlen - c->sent,
				 MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w <= 0)
			break;
		c->sent += (size_t)w;
	}
	if (c->sent == c->outlen && c->drain) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		shutdown(c->fd, SHUT_WR); /* the reply is all there is */
		epoll_ctl(cs->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
		discard_some(cs, c);
		return;
	}
	drop(cs, c); /* all sent, or the peer is gone */
}

/* Queue a reply frame, send what the socket takes now, and switch the
 * conn to writing for the rest. */
static void reply(struct nl_conn_set *cs, struct nl_conn *c, const char *body)
{
	size_t n = strlen(body);
	struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};

	c->out = malloc(n + 4);
	if (!c->out) {
		drop(cs, c);
		return;
	}
	c->out[0] = (char)(n >> 24);
	c->out[1] = (char)(n >> 16);
	c->out[2] = (char)(n >> 8);
	c->out[3] = (char)n;
	memcpy(c->out + 4, body, n);
	c->outlen = n + 4;
	epoll_ctl(cs->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
	write_some(cs, c); /* the rest, if any, when it is writable */
}

static void read_some(struct nl_conn_set *cs, struct nl_conn *c,
		      struct nl_server *s)
{
	for (;;) {
		char *dst;
		size_t want;
		if (c->got < 4) {
			dst = (char *)c->hdr + c->got;
			want = 4 - c->got;
		} else {
			dst = c->body + (c->got - 4);
			want = c->need - (c->got - 4);
		}
		ssize_t r = want ? recv(c->fd, dst, want, 0) : 0;
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r < 0 || (r == 0 && want)) {
			drop(cs, c); /* the peer went away */
			return;
		}
		c->got += (size_t)r;
		if (c->got == 4 && !c->body) {
			c->need = (size_t)c->hdr[0] << 24 |
				  (size_t)c->hdr[1] << 16 |
				  (size_t)c->hdr[2] << 8 | c->hdr[3];
			if (c->need > NL_PROTO_MAX_BYTES) {
				nl_log(NL_LOG_WARNING,
				       "pid %d uid %u: a %zu-byte request is "
				       "over the limit",
				       (int)c->peer.pid, (unsigned)c->peer.uid,
				       c->need);
				c->drain = c->need < NL_CONN_DRAIN_MAX
						   ? c->need
						   : NL_CONN_DRAIN_MAX;
				reply(cs, c,
				      "{\"ok\":false,\"error\":\"bad-request\","
				      "\"message\":\"request over the size "
				      "limit\"}");
				return;
			}
			c->body = malloc(c->need + 1);
			if (!c->body) {
				drop(cs, c);
				return;
			}
		}
		if (c->got >= 4 && c->got - 4 == c->need && c->body) {
			c->body[c->need] = 0;
			char *out =
				nl_server_handle(s, &c->peer, c->body, c->need);
			if (!out) {
				drop(cs, c);
				return;
			}
			reply(cs, c, out);
			free(out);
			return;
		}
	}
}

void nl_conn_event(struct nl_conn_set *cs, struct nl_conn *c,
		   struct nl_server *s)
{
	if (c->out && c->sent < c->outlen)
		write_some(cs, c);
	else if (c->out)
		discard_some(cs, c);
	else
		read_some(cs, c, s);
}

void nl_conn_expire(struct nl_conn_set *cs, double now_s)
{
	for (int i = cs->n - 1; i >= 0; i--) {
		struct nl_conn *c = cs->c[i];
		if (now_s < c->deadline_s)
			continue;
		nl_log(NL_LOG_WARNING, "pid %d uid %u: %s in %.0f s: dropped",
		       (int)c->peer.pid, (unsigned)c->peer.uid,
		       !c->out		     ? "sent no request"
		       : c->sent < c->outlen ? "did not read its reply"
					     : "held on past its reply",
		       NL_CONN_DEADLINE_S);
		drop(cs, c);
	}
}

void nl_conn_close_all(struct nl_conn_set *cs)
{
	while (cs->n)
		drop(cs, cs->c[cs->n - 1]);
}
