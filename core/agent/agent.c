/*
 * numalotd's event loop: one UNIX socket, a timer for the engine's periods,
 * signals through a signalfd. One request per connection, each bounded in
 * time, so a slow or hostile peer cannot hold the others up for long.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "real.h"
#include "server.h"
#include "util.h"

#define REQUEST_TIMEOUT_MS 2000

static int log_level = NL_LOG_INFO, log_syslog;

void nl_log_setup(int level, int use_syslog)
{
	log_level = level;
	log_syslog = use_syslog;
	if (use_syslog)
		openlog("numalotd", LOG_PID, LOG_DAEMON);
}

void nl_log(int level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info",
					    "debug"};
	static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
	va_list ap;
	if (level > log_level)
		return;
	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(prio[level], fmt, ap);
	} else {
		char ts[32];
		time_t t = time(NULL);
		struct tm tm;
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S",
			 localtime_r(&t, &tm));
		fprintf(stderr, "%s numalotd[%d] %s: ", ts, (int)getpid(),
			names[level]);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

void nl_agent_config_default(struct nl_agent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->socket_path = "/run/numalot/numalotd.sock";
	c->backend = NL_BACKEND_AUTO;
	c->idle_exit_s = 60;
	c->default_period_s = 1.0;
	c->min_period_s = 0.1;
	c->max_period_s = 60;
	c->stale_s = 300;
	c->log_level = NL_LOG_INFO;
}

void nl_server_site_copy(struct nl_server *s, const struct nl_step *st,
			 struct json_object *report)
{
	char path[4096];
	const char *text;
	int fd;

	if (!s->cfg->report_dir)
		return;
	snprintf(path, sizeof(path), "%s/numalot-%u.%u.%s.json",
		 s->cfg->report_dir, st->job, st->step, s->node);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0640);
	if (fd < 0) {
		nl_log(NL_LOG_WARNING, "site report %s: %s", path,
		       strerror(errno));
		return;
	}
	text = json_object_to_json_string_ext(report, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_SPACED);
	if (write(fd, text, strlen(text)) < 0 || write(fd, "\n", 1) < 0)
		nl_log(NL_LOG_WARNING, "site report %s: %s", path,
		       strerror(errno));
	close(fd);
}

/* Bind the socket; an agent already answering there means: exit. */
static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[sizeof(sa.sun_path)], *slash;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		nl_log(NL_LOG_ERROR, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdir(dir, 0755); /* may exist */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		nl_log(NL_LOG_ERROR, "another agent already serves %s", path);
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path); /* a stale socket of an agent that died */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
		int rc = -errno;
		nl_log(NL_LOG_ERROR, "cannot listen on %s: %s", path,
		       strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

static void serve_one(struct nl_server *s, int lfd)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char *body = NULL, *reply;
	size_t len;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		close(fd);
		return;
	}
	struct nl_peer peer = {cred.pid, cred.uid, cred.gid};
	int rc = nl_proto_recv(fd, &body, &len, REQUEST_TIMEOUT_MS);
	if (rc < 0) {
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "{\"ok\":false,\"error\":\"bad-request\",\"message\":"
			 "\"%s\"}",
			 rc == -EMSGSIZE ? "request over the size limit"
					 : "no complete request");
		nl_proto_send(fd, msg, strlen(msg), REQUEST_TIMEOUT_MS);
		nl_log(NL_LOG_WARNING, "pid %d uid %u: %s", (int)peer.pid,
		       (unsigned)peer.uid, strerror(-rc));
		close(fd);
		return;
	}
	reply = nl_server_handle(s, &peer, body, len);
	if (reply)
		nl_proto_send(fd, reply, strlen(reply), REQUEST_TIMEOUT_MS);
	free(reply);
	free(body);
	close(fd);
}

/* Steps whose tasks all ended long ago and were never unregistered. */
static void drop_stale(struct nl_server *s, double now)
{
	for (size_t i = 0; i < s->nsteps;) {
		struct nl_step *st = &s->steps[i];
		if (nl_engine_domain_done(s->engine, st->domain) != 1) {
			st->done_since_s = -1;
			i++;
			continue;
		}
		if (st->done_since_s < 0)
			st->done_since_s = now;
		if (now - st->done_since_s < s->cfg->stale_s) {
			i++;
			continue;
		}
		nl_log(NL_LOG_WARNING,
		       "job %u step %u ended %.0f s ago and was never "
		       "unregistered: dropped",
		       st->job, st->step, now - st->done_since_s);
		struct json_object *r = nl_server_step_report(s, st);
		if (r)
			nl_server_site_copy(s, st, r);
		json_object_put(r);
		nl_server_drop(s, st);
	}
}

static void arm(int tfd, double seconds)
{
	struct itimerspec its = {0};
	if (seconds < 0.001)
		seconds = 0.001;
	its.it_value.tv_sec = (time_t)seconds;
	its.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	timerfd_settime(tfd, 0, &its, NULL);
}

static int loop(struct nl_server *s, int lfd, int tfd, int sfd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN};
	double idle_since = nl_mono_s();

	if (ep < 0)
		return 1;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	arm(tfd, 1.0);
	for (;;) {
		struct epoll_event got[4];
		int n = epoll_wait(ep, got, 4, -1);
		if (n < 0 && errno == EINTR)
			continue;
		for (int i = 0; i < n; i++) {
			int fd = got[i].data.fd;
			if (fd == sfd) {
				struct signalfd_siginfo si;
				if (read(sfd, &si, sizeof(si)) > 0) {
					nl_log(NL_LOG_INFO, "signal %u: stopping",
					       si.ssi_signo);
					close(ep);
					return 0;
				}
			} else if (fd == lfd) {
				serve_one(s, lfd);
			} else {
				uint64_t x;
				if (read(tfd, &x, sizeof(x)) < 0)
					continue;
			}
		}
		/* Whatever woke us, step what is due and re-arm. */
		double now = nl_mono_s(), wait = 1.0;
		if (s->nsteps) {
			double due = nl_engine_step_due(s->engine);
			if (due < 0)
				nl_log(NL_LOG_ERROR, "engine step: %s",
				       strerror((int)-due));
			else if (isfinite(due))
				wait = due - s->machine->ops->now(s->machine);
			drop_stale(s, now);
			idle_since = now;
		} else if (s->cfg->idle_exit_s > 0 &&
			   now - idle_since >= s->cfg->idle_exit_s) {
			nl_log(NL_LOG_INFO, "idle for %.0f s: exiting",
			       now - idle_since);
			close(ep);
			return 0;
		}
		if (wait > 1.0)
			wait = 1.0;
		arm(tfd, wait);
	}
}

int nl_agent_run(const struct nl_agent_config *c)
{
	struct nl_server s = {.cfg = c};
	struct nl_topology *topo = NULL;
	struct nl_real_options o = {.backend = c->backend};
	char err[512];
	sigset_t mask;
	int lfd = -1, tfd = -1, sfd = -1, status = 1;

	gethostname(s.node, sizeof(s.node) - 1);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (nl_topology_load(c->topology, &topo, err, sizeof(err)) < 0 ||
	    nl_real_create(topo, &o, &s.machine, err, sizeof(err)) < 0) {
		nl_log(NL_LOG_ERROR, "%s", err);
		goto out;
	}
	if (nl_engine_create(s.machine, &s.engine) < 0)
		goto out;
	lfd = listen_on(c->socket_path);
	if (lfd < 0) {
		status = lfd == -EADDRINUSE ? 0 : 1;
		goto out;
	}
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (tfd < 0 || sfd < 0)
		goto out;
	nl_log(NL_LOG_INFO,
	       "serving %s (topology %s, %d NUMA nodes, %d CPUs; counters %s)",
	       c->socket_path, topo->source, topo->nnodes, topo->ncpus,
	       s.machine->backend);
	status = loop(&s, lfd, tfd, sfd);
	/* Stopping: every thread gets its affinity back; site copies. */
	while (s.nsteps) {
		struct json_object *r = nl_server_step_report(&s, &s.steps[0]);
		if (r) {
			json_object_object_add(
				r, "error",
				json_object_new_string("the agent stopped before "
						       "the step ended"));
			nl_server_site_copy(&s, &s.steps[0], r);
		}
		json_object_put(r);
		nl_server_drop(&s, &s.steps[0]);
	}
	unlink(c->socket_path);
out:
	if (lfd >= 0)
		close(lfd);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	free(s.steps);
	nl_engine_free(s.engine);
	nl_machine_destroy(s.machine);
	nl_topology_free(topo);
	return status;
}
