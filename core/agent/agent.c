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
#include "conn.h"
#include "server.h"
#include "util.h"

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
	struct stat sb;
	int fd;

	/* Only for steps root (slurmstepd) registered: a user cannot make
	 * the agent write over a real job's site copy. */
	if (!s->cfg->report_dir || !st->by_root)
		return;
	snprintf(path, sizeof(path), "%s/numalot-%u.%u.%s.json",
		 s->cfg->report_dir, st->job, st->step, s->node);
	fd = open(path,
		  O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		  0640);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid()) {
		nl_log(NL_LOG_WARNING, "site report %s: %s", path,
		       fd < 0 ? strerror(errno) : "not our own regular file");
		if (fd >= 0)
			close(fd);
		return;
	}
	text = json_object_to_json_string_ext(
		report, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
	if (ftruncate(fd, 0) < 0 || write(fd, text, strlen(text)) < 0 ||
	    write(fd, "\n", 1) < 0)
		nl_log(NL_LOG_WARNING, "site report %s: %s", path,
		       strerror(errno));
	close(fd);
}

/* The socket's folder must be root's (ours) and writable by nobody else:
 * otherwise a user could replace the socket or point root at a file. */
static int safe_dir(const char *dir)
{
	struct stat sb;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &sb) < 0)
		return -errno;
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 022)) {
		nl_log(NL_LOG_ERROR,
		       "%s must be a folder of uid %u that only it may write",
		       dir, (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

/* Bind the socket; an agent already answering there means: exit. */
static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[sizeof(sa.sun_path)], *slash;
	int fd, rc;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		nl_log(NL_LOG_ERROR, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		rc = safe_dir(dir);
		if (rc < 0)
			return rc;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
	    errno == EAGAIN) {
		/* Answering, or too busy to: either way it is alive. */
		nl_log(NL_LOG_ERROR, "another agent already serves %s", path);
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path); /* a stale socket of an agent that died */
	/* Anyone may connect (0666); each request is checked by its peer. */
	old = umask(0111);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(fd, 128) < 0) {
		rc = -errno;
		nl_log(NL_LOG_ERROR, "cannot listen on %s: %s", path,
		       strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

/* Steps whose tasks all ended long ago and were never unregistered. */
static void drop_stale(struct nl_server *s, double now)
{
	for (size_t i = 0; i < s->nsteps;) {
		struct nl_step *st = &s->steps[i];
		if (!nl_server_step_done(s, st)) {
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
	its.it_value.tv_nsec =
		(long)((seconds - (double)(time_t)seconds) * 1e9);
	timerfd_settime(tfd, 0, &its, NULL);
}

/* Markers for epoll's data.ptr: everything else is a struct conn. */
static char listen_mark, timer_mark, signal_mark;

static int watch(int ep, int fd, void *mark)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = mark};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * The engine steps only when a period is due (never because a request
 * came in: a peer cannot make the agent work harder). Connections are
 * served as their bytes arrive, each within its deadline.
 */
static int loop(struct nl_server *s, int lfd, int tfd, int sfd)
{
	struct conn_set cs = {.epoll_fd = epoll_create1(EPOLL_CLOEXEC)};
	double idle_since = nl_mono_s(), next_due = INFINITY, resume_at = 0;
	int listening = 1, status = 0;

	if (cs.epoll_fd < 0)
		return 1;
	watch(cs.epoll_fd, lfd, &listen_mark);
	watch(cs.epoll_fd, tfd, &timer_mark);
	watch(cs.epoll_fd, sfd, &signal_mark);
	arm(tfd, 0.5);
	for (;;) {
		struct epoll_event got[16];
		int n = epoll_wait(cs.epoll_fd, got, 16, -1);
		if (n < 0 && errno == EINTR)
			continue;
		for (int i = 0; i < n; i++) {
			void *p = got[i].data.ptr;
			if (p == &signal_mark) {
				struct signalfd_siginfo si;
				if (read(sfd, &si, sizeof(si)) > 0) {
					nl_log(NL_LOG_INFO,
					       "signal %u: stopping",
					       si.ssi_signo);
					goto out;
				}
			} else if (p == &listen_mark) {
				int rc = conn_accept(&cs, lfd);
				if (rc == -EMFILE || rc == -ENFILE) {
					/* Out of descriptors: stop accepting
					 * for a moment, or epoll spins. */
					nl_log(NL_LOG_WARNING, "accept: %s",
					       strerror(-rc));
					epoll_ctl(cs.epoll_fd, EPOLL_CTL_DEL,
						  lfd, NULL);
					listening = 0;
					resume_at = nl_mono_s() + 0.2;
				}
			} else if (p == &timer_mark) {
				uint64_t x;
				if (read(tfd, &x, sizeof(x)) < 0)
					continue;
			} else {
				conn_event(&cs, p, s);
			}
		}
		double now = nl_mono_s();
		conn_expire(&cs, now);
		if (!listening && now >= resume_at &&
		    watch(cs.epoll_fd, lfd, &listen_mark) == 0)
			listening = 1;
		if (s->nsteps) {
			/* A step registered just now may be due before the
			 * others: wake for whichever comes first. */
			double soonest = nl_engine_next_due(s->engine) -
					 s->machine->ops->now(s->machine);
			if (!isfinite(next_due))
				next_due = now; /* a first step: take it over */
			else if (now + soonest < next_due)
				next_due = now + soonest;
			if (now >= next_due) {
				double due = nl_engine_step_due(s->engine);
				if (due < 0)
					nl_log(NL_LOG_ERROR, "engine step: %s",
					       strerror((int)-due));
				next_due =
					due < 0 || !isfinite(due)
						? now + 1.0
						: now + (due -
							 s->machine->ops->now(
								 s->machine));
				drop_stale(s, now);
			}
			idle_since = now;
		} else {
			next_due = INFINITY;
			if (cs.n > 0)
				idle_since = now; /* someone is talking to us */
			if (s->cfg->idle_exit_s > 0 &&
			    now - idle_since >= s->cfg->idle_exit_s) {
				nl_log(NL_LOG_INFO, "idle for %.0f s: exiting",
				       now - idle_since);
				goto out;
			}
		}
		double wait = isfinite(next_due) ? next_due - now : 0.5;
		arm(tfd, wait < 0.5 ? wait : 0.5);
	}
out:
	/* Leave the socket at once, so that a new agent can take it while
	 * this one winds down. */
	unlink(s->cfg->socket_path);
	conn_close_all(&cs);
	close(cs.epoll_fd);
	return status;
}

int nl_agent_run(const struct nl_agent_config *c)
{
	struct nl_server s = {.cfg = c};
	struct nl_topology *topo = NULL;
	/* A site's counters= that does not work here must not cost jobs
	 * numalot: fall back, and say so. */
	struct nl_real_options o = {
		.backend = c->backend, .fallback = 1, .follow_children = 1};
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
	if (err[0])
		nl_log(NL_LOG_WARNING, "%s", err);
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
				json_object_new_string(
					"the agent stopped before "
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
