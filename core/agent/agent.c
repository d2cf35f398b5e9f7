/*
 * numalotd's event loop: one UNIX socket, a timer for the engine's periods,
 * signals through a signalfd. One request per connection, each bounded in
 * time, so a slow or hostile peer cannot hold the others up for long.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "real.h"
#include "activate.h"
#include "conn.h"
#include "leave.h"
#include "rootdir.h"
#include "log.h"
#include "server.h"
#include "util.h"

void nl_agent_config_default(struct nl_agent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->conf_path = NUMALOT_CONF;
	c->socket_path = "/run/numalot/numalotd.sock";
	c->backend = NL_BACKEND_AUTO;
	c->idle_exit_s = 60;
	c->default_period_s = 1.0;
	c->min_period_s = 0.1;
	c->max_period_s = 60;
	c->stale_s = 300;
	c->log_level = NL_LOG_INFO;
	c->force = -1;
	c->ready_fd = -1;
	c->nice = NL_OWN_NICE;
}

/* What the site allows here and where it came from, once at the start:
 * an administrator sees what the file and the command line made. */
static void log_site(const struct nl_agent_config *c)
{
	char allow[64] = "";
	size_t n = 0;
	for (int k = 0; k < NL_POLICY_COUNT; k++)
		if ((nl_policy_where(k) & NL_POLICY_JOBS) &&
		    (!c->allow || (c->allow & (1u << k))))
			n += (size_t)snprintf(allow + n, sizeof(allow) - n,
					      "%s%s", n ? "," : "",
					      nl_policy_name(k));
	nl_log(NL_LOG_INFO,
	       "site: allow %s, force %s, report_dir %s (settings: %s%s%s)",
	       n ? allow : "nothing",
	       c->force >= 0 ? nl_policy_name(c->force) : "none",
	       c->report_dir ? c->report_dir : "none",
	       c->conf_path && c->conf_path[0] ? c->conf_path : "no file",
	       c->conf_settings ? "" : " (none there)",
	       ", then the command line");
}

/* The socket's folder, made when missing, must be ours (or root's) along
 * its whole path and writable by nobody else: otherwise a user could
 * replace the socket, or choose where root makes its lock (rootdir.h). */
static int safe_dir(const char *dir)
{
	char why[600];
	int rc = nl_owned_dir(dir, 0755, geteuid(), why, sizeof(why));
	if (rc < 0)
		nl_log(NL_LOG_ERROR,
		       "the socket's folder must be uid %u's or root's all "
		       "along its path, each folder one only its owner may "
		       "write: %s",
		       (unsigned)geteuid(), why);
	return rc;
}

/* The socket, and the lock that decides who serves it. */
struct listener {
	const char *path;
	int fd, lock_fd;
	dev_t dev; /* the socket this agent bound: the only one it removes */
	ino_t ino;
	int bound;
};

/* Tell whoever started us (--ready-fd) that we serve, or why not. */
static void ready_say(const struct nl_agent_config *c, const char *msg)
{
	static int said;
	if (c->ready_fd < 0 || said)
		return;
	said = 1;
	if (write(c->ready_fd, msg, strlen(msg)) < 0)
		nl_log(NL_LOG_DEBUG, "ready-fd: %s", strerror(errno));
	close(c->ready_fd);
}

/*
 * Bind the socket. One lock (PATH.serving, held for the agent's life)
 * decides who serves: a second agent started at the same time exits.
 * Whatever is at the path must be a socket (a stale one of an agent that
 * died): anything else is refused, never deleted.
 */
static int listen_on(const char *path, struct listener *l)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[sizeof(sa.sun_path)], lockpath[sizeof(sa.sun_path) + 16];
	char *slash;
	struct stat sb;
	int fd, rc;
	mode_t old;

	l->path = path;
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
	snprintf(lockpath, sizeof(lockpath), "%s.serving", path);
	l->lock_fd =
		open(lockpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (l->lock_fd < 0) {
		rc = -errno;
		nl_log(NL_LOG_ERROR, "cannot open the lock %s: %s", lockpath,
		       strerror(errno));
		return rc;
	}
	if (flock(l->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		nl_log(NL_LOG_ERROR, "another agent already serves %s", path);
		return -EADDRINUSE;
	}
	if (lstat(path, &sb) == 0 && !S_ISSOCK(sb.st_mode)) {
		nl_log(NL_LOG_ERROR,
		       "%s is there and is not a socket: not replacing it",
		       path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
	    errno == EAGAIN) {
		/* Answering (an agent without the lock), or too busy to:
		 * either way it is alive. */
		nl_log(NL_LOG_ERROR, "another agent already serves %s", path);
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path); /* a stale socket of an agent that died */
	/* Anyone may connect (0666); each request is checked by its peer. */
	old = umask(0111);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc == 0 && lstat(path, &sb) == 0) {
		l->dev = sb.st_dev;
		l->ino = sb.st_ino;
		l->bound = 1;
	}
	if (rc < 0 || listen(fd, 128) < 0) {
		rc = -errno;
		nl_log(NL_LOG_ERROR, "cannot listen on %s: %s", path,
		       strerror(errno));
		close(fd);
		return rc;
	}
	l->fd = fd;
	return fd;
}

/* Leave the socket: remove it only if it is still the one we bound, then
 * let the next agent have the lock. */
static void leave(struct listener *l)
{
	struct stat sb;
	if (l->bound && lstat(l->path, &sb) == 0 && sb.st_dev == l->dev &&
	    sb.st_ino == l->ino)
		unlink(l->path);
	l->bound = 0;
	if (l->lock_fd >= 0)
		close(l->lock_fd);
	l->lock_fd = -1;
}

static int cmp_key(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Steps whose tasks all ended long ago and were never unregistered.
 * Looked at once a second, from one list of the running processes. */
static void drop_stale(struct nl_server *s, double now)
{
	const struct nl_process_info *p;
	size_t n, nk = 0;
	int *running;

	if (now - s->stale_checked_s < 1.0)
		return;
	s->stale_checked_s = now;
	if (s->machine->ops->processes(s->machine, &p, &n) < 0 ||
	    !(running = malloc(sizeof(int) * (n + 1))))
		return;
	for (size_t i = 0; i < n; i++)
		if (p[i].end_s < 0)
			running[nk++] = p[i].job;
	qsort(running, nk, sizeof(int), cmp_key);
	for (size_t i = 0; i < s->nsteps;) {
		struct nl_step *st = &s->steps[i];
		if (bsearch(&st->key, running, nk, sizeof(int), cmp_key)) {
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
	free(running);
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

/* Markers for epoll's data.ptr: everything else is a struct nl_conn. */
static char listen_mark, timer_mark, signal_mark;

static int watch(int ep, int fd, void *mark)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = mark};
	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* What the event loop keeps between wake-ups. */
struct loop {
	struct nl_server *s;
	struct listener *l;
	struct nl_conn_set cs;
	int tfd, sfd;
	int listening;	  /* the socket is watched (not paused) */
	double resume_at; /* when to watch it again */
	double idle_since;
	double next_due; /* the engine's next step, INFINITY: none */
};

/* Out of descriptors: stop accepting for a moment, or epoll spins. */
static void accept_one(struct loop *lp)
{
	int rc = nl_conn_accept(&lp->cs, lp->l->fd, lp->s);

	if (rc != -EMFILE && rc != -ENFILE)
		return;
	nl_log(NL_LOG_WARNING, "accept: %s", strerror(-rc));
	epoll_ctl(lp->cs.epoll_fd, EPOLL_CTL_DEL, lp->l->fd, NULL);
	lp->listening = 0;
	lp->resume_at = nl_mono_s() + 0.2;
}

/* One ready descriptor. 1: a signal says stop. */
static int on_event(struct loop *lp, void *p)
{
	if (p == &signal_mark) {
		struct signalfd_siginfo si;
		if (read(lp->sfd, &si, sizeof(si)) > 0) {
			nl_log(NL_LOG_INFO, "signal %u: stopping",
			       si.ssi_signo);
			return 1;
		}
	} else if (p == &listen_mark) {
		accept_one(lp);
	} else if (p == &timer_mark) {
		uint64_t x;
		if (read(lp->tfd, &x, sizeof(x)) < 0)
			return 0;
	} else {
		nl_conn_event(&lp->cs, p, lp->s);
	}
	return 0;
}

/*
 * Step the engine when a period is due. The engine's clock is the
 * machine's; lp->next_due is on the agent's (nl_mono_s).
 */
static void step_if_due(struct loop *lp, double now)
{
	struct nl_server *s = lp->s;
	/* A step registered just now may be due before the others: wake for
	 * whichever comes first. */
	double soonest = nl_engine_next_due(s->engine) -
			 s->machine->ops->now(s->machine);

	if (!isfinite(lp->next_due))
		lp->next_due = now; /* a first step: take it over */
	else if (now + soonest < lp->next_due)
		lp->next_due = now + soonest;
	if (now < lp->next_due)
		return;
	double due = nl_engine_step_due(s->engine);
	if (due < 0)
		nl_log(NL_LOG_ERROR, "engine step: %s", strerror((int)-due));
	lp->next_due = due < 0 || !isfinite(due)
			       ? now + 1.0
			       : now + (due - s->machine->ops->now(s->machine));
	drop_stale(s, now);
}

int nl_nice_guard_check(struct nl_nice_guard *g, double now_s, double cpu_s)
{
	if (!g->raised)
		return 0;
	if (g->t0_s <= 0 || now_s < g->t0_s) {
		g->t0_s = now_s;
		g->cpu0_s = cpu_s;
		return 0;
	}
	if (now_s - g->t0_s < NL_NICE_GUARD_WINDOW_S)
		return 0;
	double share = (cpu_s - g->cpu0_s) / (now_s - g->t0_s);
	g->t0_s = now_s;
	g->cpu0_s = cpu_s;
	if (share <= NL_NICE_GUARD_MAX_SHARE)
		return 0;
	g->raised = 0;
	return 1;
}

/* The raised priority given up when the agent works too hard for it. */
static void guard_priority(struct nl_server *s, double now)
{
	if (!s->nice_guard.raised ||
	    !nl_nice_guard_check(&s->nice_guard, now, nl_thread_cpu_s()))
		return;
	nl_own_nice_undo();
	nl_log(NL_LOG_WARNING,
	       "used over %.0f%% of a CPU in %.0f s: back to the priority it "
	       "was started with (nice %d)",
	       100 * NL_NICE_GUARD_MAX_SHARE, NL_NICE_GUARD_WINDOW_S,
	       getpriority(PRIO_PROCESS, 0));
}

/* With no step: 1 once idle for idle_exit_s (nobody talking to us). */
static int idle_out(struct loop *lp, double now)
{
	double idle_exit = lp->s->cfg->idle_exit_s;

	lp->next_due = INFINITY;
	if (lp->cs.n > 0)
		lp->idle_since = now; /* someone is talking to us */
	if (idle_exit <= 0 || now - lp->idle_since < idle_exit)
		return 0;
	nl_log(NL_LOG_INFO, "idle for %.0f s: exiting", now - lp->idle_since);
	return 1;
}

/*
 * The engine steps only when a period is due (never because a request
 * came in: a peer cannot make the agent work harder). Connections are
 * served as their bytes arrive, each within its deadline. The timer wakes
 * the loop at least every 0.5 s.
 */
static int loop(struct nl_server *s, struct listener *l, int tfd, int sfd)
{
	struct loop lp = {.s = s,
			  .l = l,
			  .cs = {.epoll_fd = epoll_create1(EPOLL_CLOEXEC)},
			  .tfd = tfd,
			  .sfd = sfd,
			  .listening = 1,
			  .idle_since = nl_mono_s(),
			  .next_due = INFINITY};
	if (lp.cs.epoll_fd < 0)
		return 1;
	watch(lp.cs.epoll_fd, l->fd, &listen_mark);
	watch(lp.cs.epoll_fd, tfd, &timer_mark);
	watch(lp.cs.epoll_fd, sfd, &signal_mark);
	arm(tfd, 0.5);
	for (;;) {
		struct epoll_event got[16];
		int n = epoll_wait(lp.cs.epoll_fd, got, 16, -1), stop = 0;
		if (n < 0 && errno == EINTR)
			continue;
		for (int i = 0; i < n && !stop; i++)
			stop = on_event(&lp, got[i].data.ptr);
		if (stop)
			break;
		double now = nl_mono_s();
		guard_priority(s, now);
		nl_conn_expire(&lp.cs, now);
		if (!lp.listening && now >= lp.resume_at &&
		    watch(lp.cs.epoll_fd, l->fd, &listen_mark) == 0)
			lp.listening = 1;
		if (s->nsteps) {
			step_if_due(&lp, now);
			lp.idle_since = now;
		} else if (idle_out(&lp, now)) {
			break;
		}
		double wait = isfinite(lp.next_due) ? lp.next_due - now : 0.5;
		arm(tfd, wait < 0.5 ? wait : 0.5);
	}
	/* Leave the socket at once (only ours), so that a new agent can take
	 * it while this one winds down. */
	leave(l);
	nl_conn_close_all(&lp.cs);
	close(lp.cs.epoll_fd);
	return 0;
}

/*
 * Started from a step under proctrack/cgroup or task/cgroup, the agent
 * would live and die with that job, on its CPUs: it leaves the job's
 * cgroups first, takes back every CPU its new cgroup allows (the step's
 * binding came with the fork), and says where it went (leave.c).
 */
#define CPU_MAX 8192
static void leave_job(void)
{
	char said[1024];
	int rc = nl_leave_job_cgroups(said, sizeof(said));

	if (rc == 0)
		return;
	if (rc > 0) {
		size_t bytes = CPU_ALLOC_SIZE(CPU_MAX);
		cpu_set_t *all = CPU_ALLOC(CPU_MAX);
		if (all) {
			memset(all, 0xff, bytes);
			if (sched_setaffinity(0, bytes, all) < 0)
				nl_log(NL_LOG_WARNING,
				       "cannot widen the agent's CPUs: %s",
				       strerror(errno));
			CPU_FREE(all);
		}
	}
	nl_log(rc > 0 ? NL_LOG_INFO : NL_LOG_WARNING,
	       rc > 0 ? "left the job's cgroups it was started in: %s"
		      : "cannot leave the job's cgroups (the agent will end "
			"with that job): %s",
	       said);
}

/* Periods on time when jobs oversubscribe the node's CPUs: at most a
 * fraction of a percent of a core, served before the jobs' threads
 * (docs/real-node.md, "Priority"). */
static void own_priority(const struct nl_agent_config *c,
			 struct nl_nice_guard *g)
{
	int was = getpriority(PRIO_PROCESS, 0);
	int nice = 0, rc = nl_own_nice(c->nice, !c->nice_given, &nice);
	g->raised = rc == 0 && nice < was;
	if (rc < 0)
		nl_log(NL_LOG_WARNING,
		       "cannot set its own priority to nice %d (%s): it runs "
		       "at nice %d, and its periods may come late when jobs "
		       "oversubscribe the CPUs",
		       c->nice, strerror(-rc), nice);
	else
		nl_log(NL_LOG_INFO, "runs at nice %d", nice);
}

int nl_agent_run(const struct nl_agent_config *c)
{
	struct nl_server s = {.cfg = c};
	struct nl_topology *topo = NULL;
	struct listener l = {.fd = -1, .lock_fd = -1};
	/* A site's counters= that does not work here must not cost jobs
	 * numalot: fall back, and say so. Descriptors: a reserve for the
	 * socket and its connections, a budget per user for counters. */
	struct nl_real_options o = {.backend = c->backend,
				    .fallback = 1,
				    .follow_children = 1,
				    .fd_reserve = NL_CONN_MAX + 256};
	char err[512] = "";
	sigset_t mask;
	int lfd = -1, tfd = -1, sfd = -1, status = 1;

	gethostname(s.node, sizeof(s.node) - 1);
	own_priority(c, &s.nice_guard);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	leave_job(); /* before the topology: a job's cpuset hides CPUs */
	if (nl_numad_pid() > 0)
		nl_log(NL_LOG_WARNING,
		       "numad runs (pid %d): numalot lets go of any process "
		       "whose threads it moves (docs/real-node.md, \"Other "
		       "placers\")",
		       nl_numad_pid());
	if (nl_topology_load(c->topology, &topo, err, sizeof(err)) < 0 ||
	    nl_real_create(topo, &o, &s.machine, err, sizeof(err)) < 0) {
		nl_log(NL_LOG_ERROR, "%s", err);
		ready_say(c, err);
		goto out;
	}
	if (err[0])
		nl_log(NL_LOG_WARNING, "%s", err);
	{
		/* One user's threads get counters for at most a quarter of
		 * what the node's descriptors allow (docs/protocol.md). */
		size_t node, per;
		nl_real_budget(s.machine, &node, &per);
		nl_real_set_budget(s.machine, node, node / 4 ? node / 4 : 1);
	}
	if (nl_engine_create(s.machine, &s.engine) < 0)
		goto out;
	/* Steps due within a tenth of the shortest period are stepped
	 * together: many steps cost one pass over the threads a batch, not
	 * one each (docs/protocol.md, "Cost"). */
	nl_engine_set_due_slack(s.engine, c->min_period_s * 0.1 < 0.05
						  ? c->min_period_s * 0.1
						  : 0.05);
	/* The socket systemd passed (numalotd.socket), else our own. */
	char passed[sizeof(((struct sockaddr_un *)0)->sun_path)];
	lfd = nl_activation_fd(passed, sizeof(passed), err, sizeof(err));
	if (lfd >= 0 && lfd == c->ready_fd) {
		snprintf(err, sizeof(err),
			 "--ready-fd=%d is the socket systemd passed", lfd);
		lfd = -EBADF;
	}
	if (lfd >= 0) {
		l.fd = lfd;
		l.path = passed[0] ? passed : c->socket_path;
		if (passed[0] && strcmp(passed, c->socket_path))
			nl_log(NL_LOG_WARNING,
			       "systemd passed the socket %s, not %s: the "
			       "plugin's socket= must name %s",
			       passed, c->socket_path, passed);
	} else if (lfd != -ENOENT) {
		nl_log(NL_LOG_ERROR, "%s", err);
		ready_say(c, err);
		goto out;
	} else {
		lfd = listen_on(c->socket_path, &l);
	}
	if (lfd < 0) {
		status = lfd == -EADDRINUSE ? 0 : 1;
		snprintf(err, sizeof(err), "%s: %s", c->socket_path,
			 lfd == -EADDRINUSE ? "another agent already serves it"
			 : lfd == -EEXIST   ? "is there and is not a socket"
					    : strerror(-lfd));
		ready_say(c, err);
		goto out;
	}
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (tfd < 0 || sfd < 0)
		goto out;
	nl_log(NL_LOG_INFO,
	       "serving %s%s (topology %s, %d NUMA nodes, %d CPUs; counters "
	       "%s)",
	       l.path, l.bound ? "" : ", passed by systemd", topo->source,
	       topo->nnodes, topo->ncpus, s.machine->backend);
	log_site(c);
	ready_say(c, "ok");
	status = loop(&s, &l, tfd, sfd);
	/* Stopping: every thread gets its affinity back; each step's report
	 * goes to its user and to the site before the agent leaves. */
	while (s.nsteps) {
		struct json_object *r = nl_server_step_report(&s, &s.steps[0]);
		if (r) {
			json_object_object_add(
				r, "error",
				json_object_new_string(
					"the agent stopped before "
					"the step ended"));
			nl_server_user_copy(&s, &s.steps[0], r);
			nl_server_site_copy(&s, &s.steps[0], r);
		}
		json_object_put(r);
		nl_server_drop(&s, &s.steps[0]);
	}
out:
	leave(&l);
	ready_say(c, err[0] ? err : "the agent stopped");
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
