/* numalot SPANK plugin: starting, calling and reporting with the agent. */
#include "agentctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "collect.h"
#include "rootdir.h"
#include "rwrite.h"
#include "siteconf.h"
#include "version.h"
#include "util.h"
#include "slog.h" /* last: it poisons slurm_error */

/* Milliseconds left before deadline_ms (monotonic), at least 0. */
static int left_ms(double deadline_ms)
{
	double l = deadline_ms - nl_mono_s() * 1e3;
	return l > 0 ? (int)l : 0;
}

static int hello(const char *sock, double deadline_ms)
{
	char *reply = NULL;
	int rc = left_ms(deadline_ms) == 0
			 ? -ETIMEDOUT
			 : nl_proto_call(sock, "{\"v\":1,\"op\":\"hello\"}",
					 &reply, left_ms(deadline_ms),
					 NL_CALL_ROOT_AGENT);
	if (rc == 0 && !strstr(reply, "\"ok\":true"))
		rc = -EPROTO;
	free(reply);
	return rc;
}

/*
 * Double fork and setsid: the agent outlives the step that started it. It
 * says on ready_fd (3) "ok" once it serves, or why it cannot; the pipe's
 * read end is returned (-1 if the fork failed).
 */
static int spawn_agent(const struct nl_site *s)
{
	/* The log is opened here, as root's own file in a folder only root
	 * may change (docs/slurm.md, "Security"): a user's link, FIFO or
	 * file in a shared folder makes the agent log to syslog instead. */
	char why[600];
	int log = s->log[0] ? nl_open_owned_log(s->log, 0640, why, sizeof(why))
			    : -1;
	if (s->log[0] && log < 0) {
		nl_slurm_error("numalot: the agent's log %s: %s; it logs to "
			       "syslog instead",
			       s->log, why);
		log = -1;
	}
	char idle[32], period[32], minp[32], maxp[32], allow[64], force[32],
		nice[24];
	char sock[160], cnt[48], topo[300], rdir[540];
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		if (log >= 0)
			close(log);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		if (log >= 0)
			close(log);
		return -1;
	}
	if (pid > 0) {
		int st;
		close(pfd[1]);
		if (log >= 0)
			close(log);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return pfd[0];
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	/* Nothing of slurmstepd's place: not the job's working folder (kept
	 * busy, or a user's), nor its umask (docs/slurm.md, "Security"). */
	umask(022);
	if (chdir("/") < 0)
		_exit(127);
	/* No inherited descriptors (srun must not wait for the agent) but
	 * the ready pipe, which becomes 3, and the log, which becomes 2. */
	if (dup2(pfd[1], 100) < 0 || (log >= 0 && dup2(log, 101) < 0))
		_exit(127);
	close_range(0, 99, 0);
	close_range(102, ~0U, 0);
	if (log >= 0)
		log = 101;
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(log >= 0 ? log : null, 2);
		dup2(null, 0);
		dup2(null, 1);
	}
	if (log >= 0)
		close(log);
	if (null > 2)
		close(null);
	dup2(100, 3);
	close(100);
	snprintf(sock, sizeof(sock), "--socket=%s", s->socket);
	snprintf(idle, sizeof(idle), "--idle-exit=%g", s->idle_exit_s);
	snprintf(period, sizeof(period), "--period=%g", s->period_s);
	snprintf(minp, sizeof(minp), "--min-period=%g", s->min_period_s);
	snprintf(maxp, sizeof(maxp), "--max-period=%g", s->max_period_s);
	snprintf(cnt, sizeof(cnt), "--counters=%s", s->counters);
	snprintf(topo, sizeof(topo), "--topology=%s", s->topology);
	snprintf(rdir, sizeof(rdir), "--report-dir=%s", s->report_dir);
	/* The site's policy holds in the agent too, for every request. */
	size_t n2 = (size_t)snprintf(allow, sizeof(allow), "--allow=");
	for (int c = NL_CHOICE_OFF + 1; c < NL_CHOICE_COUNT; c++)
		if ((s->allow & (1u << c)) &&
		    strcmp(nl_choice_name((enum nl_choice)c), "?"))
			n2 += (size_t)snprintf(
				allow + n2, sizeof(allow) - n2, "%s%s",
				allow[n2 - 1] == '=' ? "" : ",",
				nl_choice_name((enum nl_choice)c));
	snprintf(force, sizeof(force), "--force=%s",
		 s->force > 0 ? nl_choice_name((enum nl_choice)s->force) : "");
	snprintf(nice, sizeof(nice), "--nice=%d", (int)s->agent_nice);
	/* --config= (no file): the plugin's settings, its file's and
	 * plugstack.conf's merged, are the agent's, all on this line. */
	char *argv[17] = {
		(char *)s->agent, sock,	      idle, period, minp, maxp, cnt,
		"--ready-fd=3",	  "--config="};
	int n = 9;
	if (s->topology[0])
		argv[n++] = topo;
	if (s->report_dir[0])
		argv[n++] = rdir;
	if (allow[n2 - 1] != '=')
		argv[n++] = allow;
	if (s->force > 0)
		argv[n++] = force;
	if (s->agent_nice_set)
		argv[n++] = nice;
	if (log < 0)
		argv[n++] = "--syslog";
	argv[n] = NULL;
	/* Nor its environment: a daemon of its own, whatever the step's
	 * process held (LD_PRELOAD, LISTEN_FDS, HWLOC_*...). */
	char *envp[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
			"/usr/bin:/sbin:/bin",
			NULL};
	execve(s->agent, argv, envp);
	dprintf(3, "cannot run %s: %s", s->agent, strerror(errno));
	_exit(127);
}

/* What the agent we started says on its ready pipe, before the deadline:
 * 0 it serves; else -1 and why. */
static int wait_ready(int fd, double deadline_ms, char *why, size_t len)
{
	char buf[300];
	size_t got = 0;
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		int ms = left_ms(deadline_ms);
		int rc = ms ? poll(&p, 1, ms) : 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0) {
			snprintf(why, len, "it did not say it serves in time");
			return -1;
		}
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && (got += (size_t)n) < sizeof(buf) - 1)
			continue;
		buf[got] = 0;
		if (!strncmp(buf, "ok", 2))
			return 0;
		snprintf(why, len, "%s",
			 got ? buf : "it exited before serving");
		return -1;
	}
}

/*
 * Whether the socket at path is a service's, one without the PATH.serving
 * lock every agent the plugin starts makes: the plugin then only connects
 * (docs/slurm.md, "The agent as a service").
 */
static int service_socket(const char *path)
{
	char serving[200];
	struct stat sb;
	if (lstat(path, &sb) < 0 || !S_ISSOCK(sb.st_mode))
		return 0;
	snprintf(serving, sizeof(serving), "%s.serving", path);
	return lstat(serving, &sb) < 0 && errno == ENOENT;
}

/*
 * Whether root may run agent: a program of root's that nobody else may
 * write, in folders only root may change, reached through root's links
 * only (docs/slurm.md, "Security"): anything else a user could replace,
 * and root would run the user's program. 0, or -1 with why.
 */
static int agent_ok(const char *agent, char *why, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct stat sb;

	snprintf(path, sizeof(path), "%s", agent);
	for (int links = 0; links < 8; links++) {
		if (lstat(path, &sb) < 0)
			return nl_errf(why, len, -errno, "%s", strerror(errno));
		if (!S_ISLNK(sb.st_mode) && !S_ISREG(sb.st_mode))
			return nl_errf(why, len, -EINVAL, "not a regular file");
		if (nl_owned_parent(path, 0, 0, why, len) < 0)
			return -1;
		if (!S_ISLNK(sb.st_mode))
			break;
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (sb.st_uid != 0 || n <= 0)
			return nl_errf(why, len, -EPERM,
				       "%s is a symbolic link of uid %u", path,
				       (unsigned)sb.st_uid);
		target[n] = 0;
		/* A relative target is its link's folder's. */
		char *slash = strrchr(path, '/');
		char next[PATH_MAX];
		if (snprintf(next, sizeof(next), "%.*s%s",
			     target[0] == '/' ? 0 : (int)(slash - path + 1),
			     path, target) >= (int)sizeof(next))
			return nl_errf(why, len, -ENAMETOOLONG, "%s",
				       strerror(ENAMETOOLONG));
		snprintf(path, sizeof(path), "%s", next);
	}
	if (S_ISLNK(sb.st_mode))
		return nl_errf(why, len, -ELOOP, "too many links");
	if (sb.st_uid != 0 || (sb.st_mode & 022))
		return nl_errf(why, len, -EPERM,
			       "%s is uid %u's, mode %04o: only a program of "
			       "root's that nobody else may write is run as "
			       "the agent",
			       path, (unsigned)sb.st_uid,
			       (unsigned)(sb.st_mode & 07777));
	if (access(path, X_OK) < 0)
		return nl_errf(why, len, -errno, "%s", strerror(errno));
	return 0;
}

int nl_agentctl_ensure(const struct nl_site *s, double deadline_ms, char *why,
		       size_t len)
{
	char lockpath[200], said[320], dir_why[600];
	struct stat sb;
	int fd, rc;

	static int told; /* once a step (this slurmstepd) */
	/* The socket's folder, made when missing, must be root's along its
	 * whole path: in a folder a user may change, the user would choose
	 * where root makes the lock, and what root takes for the agent
	 * (docs/slurm.md, "Security"). */
	if (nl_owned_parent(s->socket, 0755, 0, dir_why, sizeof(dir_why)) < 0) {
		snprintf(why, len,
			 "the agent's socket %s is in a folder root does not "
			 "alone control (%s): numalot does not use it",
			 s->socket, dir_why);
		return -1;
	}
	rc = hello(s->socket, deadline_ms);
	if (rc == 0 && !told++ && s->line_agent_keys[0] &&
	    service_socket(s->socket))
		nl_slurm_info(
			"numalot: plugstack.conf sets %s, which the service's "
			"agent at %s does not read (it reads %s and its own "
			"command line): keep them there (docs/slurm.md, "
			"\"Site policy\")",
			s->line_agent_keys, s->socket,
			s->conf[0] ? s->conf : NUMALOT_CONF);
	if (rc == 0)
		return 0;
	if (rc == -ETIMEDOUT) {
		/* Something holds the socket but does not answer: a stopped
		 * or hung agent. Starting another would not help. */
		snprintf(why, len,
			 "the agent at %s does not answer within %g s "
			 "(stopped or hung?)",
			 s->socket, s->wait_s);
		return -1;
	}
	if (service_socket(s->socket)) {
		snprintf(why, len,
			 "the agent's socket %s is a service's (systemd's "
			 "numalotd.socket?) and refuses connections (%s); "
			 "the plugin starts no agent beside it",
			 s->socket, strerror(-rc));
		return -1;
	}
	if (agent_ok(s->agent, dir_why, sizeof(dir_why)) < 0) {
		snprintf(why, len,
			 "no agent answers at %s and %s cannot be run: %s",
			 s->socket, s->agent, dir_why);
		return -1;
	}
	/* One starter at a time; the others wait and find it running. */
	snprintf(lockpath, sizeof(lockpath), "%s.lock", s->socket);
	fd = open(lockpath,
		  O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
		close(fd);
		fd = -1;
		errno = EEXIST;
	}
	if (fd < 0) {
		snprintf(why, len, "cannot open the agent lock %s: %s",
			 lockpath, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (left_ms(deadline_ms) == 0) {
			close(fd);
			snprintf(why, len,
				 "timed out (wait=%g s) waiting for the agent "
				 "lock %s",
				 s->wait_s, lockpath);
			return -1;
		}
		usleep(10000);
	}
	rc = hello(s->socket, deadline_ms);
	if (rc != 0) {
		int rfd = spawn_agent(s);
		if (rfd < 0) {
			snprintf(said, sizeof(said), "fork: %s",
				 strerror(errno));
		} else {
			rc = wait_ready(rfd, deadline_ms, said, sizeof(said));
			close(rfd);
		}
		if (rc == 0)
			rc = hello(s->socket, deadline_ms);
		else
			rc = -1;
	}
	close(fd); /* releases the lock */
	if (rc != 0)
		snprintf(why, len, "started %s but it does not serve %s: %s",
			 s->agent, s->socket,
			 rc == -1 ? said : "it does not answer");
	return rc == 0 ? 0 : -1;
}

static int reply_ok(const char *reply, char *why, size_t len)
{
	struct json_object *o = json_tokener_parse(reply), *v;
	int ok = o && json_object_object_get_ex(o, "ok", &v) &&
		 json_object_get_boolean(v);
	if (!ok)
		snprintf(why, len, "the agent refused: %s",
			 o && json_object_object_get_ex(o, "message", &v)
				 ? json_object_get_string(v)
				 : reply);
	json_object_put(o);
	return ok ? 0 : -1;
}

int nl_agentctl_register(const struct nl_site *s, const struct nl_request *q,
			 double deadline_ms, char *why, size_t len)
{
	char *req = nl_proto_encode(q), *reply = NULL;
	int rc;
	if (!req) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	rc = left_ms(deadline_ms)
		     ? nl_proto_call(s->socket, req, &reply,
				     left_ms(deadline_ms), NL_CALL_ROOT_AGENT)
		     : -ETIMEDOUT;
	/* The agent may have exited idle just after our hello: once more. */
	if ((rc == -ECONNREFUSED || rc == -ENOENT || rc == -ECONNRESET ||
	     rc == -EPIPE) &&
	    nl_agentctl_ensure(s, deadline_ms, why, len) == 0)
		rc = nl_proto_call(s->socket, req, &reply, left_ms(deadline_ms),
				   NL_CALL_ROOT_AGENT);
	free(req);
	if (rc < 0) {
		snprintf(why, len, "the agent did not take task %d%s%s",
			 (int)q->pid, rc == -ETIMEDOUT ? " within wait=" : ": ",
			 rc == -ETIMEDOUT ? "" : strerror(-rc));
		if (rc == -ETIMEDOUT)
			snprintf(why + strlen(why), len - strlen(why),
				 "%g s (stopped or hung?)", s->wait_s);
		return rc == -ETIMEDOUT ? -2 : -1;
	}
	rc = reply_ok(reply, why, len);
	free(reply);
	return rc;
}

/* Write a report, safely, as uid (docs/slurm.md). 0 or an errno. */
static struct json_object *lost_report(const char *reason)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "numalot",
			       json_object_new_string(NUMALOT_VERSION));
	json_object_object_add(r, "error", json_object_new_string(reason));
	return r;
}

static void log_error(const char *msg)
{
	nl_slurm_error("%s", msg);
}

/* Who the step is: what a report needs to be written safely. */
struct step_id {
	uint32_t job, step;
	uid_t uid;
	gid_t gid, *groups;
	int ngroups;
};

/* The job's identity from Slurm. 0, or -1: nothing can be written. */
static int step_identity(spank_t sp, struct step_id *id)
{
	memset(id, 0, sizeof(*id));
	if (spank_get_item(sp, S_JOB_ID, &id->job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &id->step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &id->uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &id->gid) != ESPANK_SUCCESS)
		return -1;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &id->groups,
			   &id->ngroups) != ESPANK_SUCCESS) {
		id->groups = NULL;
		id->ngroups = 0;
	}
	return 0;
}

/* Unregister the step: the agent's report, or NULL (rc says why). */
static struct json_object *agent_report(const struct nl_site *s,
					const struct step_id *id, int *rc)
{
	struct nl_request q = {.op = NL_OP_UNREGISTER,
			       .has_step = 1,
			       .job = id->job,
			       .step = id->step,
			       .uid = id->uid,
			       .has_uid = 1};
	char *req = nl_proto_encode(&q), *reply = NULL;
	struct json_object *o = NULL, *v, *r = NULL;

	*rc = req ? nl_proto_call(s->socket, req, &reply,
				  (int)(s->wait_s * 1e3), NL_CALL_ROOT_AGENT)
		  : -ENOMEM;
	free(req);
	if (*rc == 0 && (o = json_tokener_parse(reply)) &&
	    json_object_object_get_ex(o, "report", &v) &&
	    json_object_is_type(v, json_type_object))
		r = json_object_get(v);
	json_object_put(o);
	free(reply);
	return r;
}

/*
 * The step's report: the agent's, or one that says why there is none.
 * Whenever a registration was tried, the agent may have the step (a reply
 * that timed out): it is unregistered either way, unless the agent did not
 * answer within wait= already (the step does not wait on it twice).
 */
static struct json_object *step_report(const struct nl_site *s,
				       const struct step_id *id,
				       const struct nl_step_end *e)
{
	const char *reason = e->reason && *e->reason ? e->reason : NULL;
	struct json_object *r;
	char why[400];
	int rc;

	if (e->attempted <= 0 || e->unanswered)
		return lost_report(reason	      ? reason
				   : e->attempted > 0 ? "no answer"
						      : "not started");
	r = agent_report(s, id, &rc);
	if (r)
		return r;
	if (e->registered == 0)
		return lost_report(reason ? reason : "not started");
	if (rc == -ETIMEDOUT)
		snprintf(why, sizeof(why),
			 "the agent did not hand over the step's report within "
			 "wait= (%g s); it may still be busy: its threads ran "
			 "on where they were",
			 s->wait_s);
	else
		snprintf(why, sizeof(why),
			 "the agent was lost during the step (%s); its threads "
			 "ran on where they were",
			 rc ? strerror(-rc) : "no report in its reply");
	nl_slurm_error("numalot: job %u step %u: %s", id->job, id->step, why);
	return lost_report(why);
}

/*
 * What Slurm says of the step (its node by Slurm's name), a warning when
 * some task was not taken, and the name of a task that ended before the
 * agent took it over (it had not run its program yet).
 */
static void add_slurm(struct json_object *r, const struct step_id *id,
		      const struct nl_step_end *e)
{
	struct json_object *sl, *pr, *v;

	if (!json_object_object_get_ex(r, "slurm", &sl) ||
	    !json_object_is_type(sl, json_type_object)) {
		sl = json_object_new_object();
		json_object_object_add(sl, "job",
				       json_object_new_int64(id->job));
		json_object_object_add(sl, "step",
				       json_object_new_int64(id->step));
		json_object_object_add(sl, "uid",
				       json_object_new_int64(id->uid));
		json_object_object_add(r, "slurm", sl);
	}
	json_object_object_add(sl, "node", json_object_new_string(e->node));
	if (e->failed && e->registered > 0)
		json_object_object_add(r, "warning",
				       json_object_new_string(e->reason));
	if (!e->program || !*e->program ||
	    !json_object_object_get_ex(r, "processes", &pr) ||
	    !json_object_is_type(pr, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(pr); i++) {
		struct json_object *p = json_object_array_get_idx(pr, i);
		if (json_object_object_get_ex(p, "name", &v) && !v &&
		    json_object_object_get_ex(p, "taken_over", &v))
			json_object_object_add(
				p, "name", json_object_new_string(e->program));
	}
}

/* The user's report, as the user (docs/slurm.md): its folder (a folder
 * per job by default) made as the user too. -1 if it was not written. */
static int write_user_copy(const struct step_id *id, const char *path,
			   const char *body)
{
	struct nl_write_as o = {.uid = id->uid,
				.gid = id->gid,
				.groups = id->groups,
				.ngroups = id->ngroups,
				.mode = 0644,
				.dir_mode = 0755,
				.timeout_ms = 10000,
				.keep_data = 1,
				.job = id->job,
				.step = id->step};
	int rc = nl_write_report_as(path, body, &o);

	if (rc == EALREADY)
		nl_slurm_info("numalot: kept the report the agent wrote to %s",
			      path);
	else if (rc)
		nl_slurm_error(
			"numalot: cannot write the report %s: %s (an older "
			"file there is left as it was)",
			path,
			rc == EEXIST ? "a file there is not yours"
				     : strerror(rc));
	return rc && rc != EALREADY ? -1 : 0;
}

int nl_agentctl_finish(spank_t sp, const struct nl_site *s,
		       const struct nl_step_end *e)
{
	struct step_id id;
	struct json_object *r;
	int rc = 0;

	/* Without the job's identity nothing can be written safely. */
	if (step_identity(sp, &id) < 0) {
		nl_slurm_error("numalot: cannot read the job's identity; no "
			       "report");
		return -1;
	}
	r = step_report(s, &id, e);
	add_slurm(r, &id, e);
	const char *text = json_object_to_json_string_ext(
		r, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);
	char *body = malloc(strlen(text) + 2);
	if (body) {
		sprintf(body, "%s\n", text);
		if (e->user_path && e->user_path[0])
			rc = write_user_copy(&id, e->user_path, body);
		/* The site's copy and log line (collect.h). */
		struct nl_collect_ids cid = {.job = id.job,
					     .step = id.step,
					     .uid = id.uid,
					     .node = e->node,
					     .user = e->user,
					     .cluster = e->cluster};
		nl_collect(s, body, r, &cid, log_error);
		free(body);
	} else {
		rc = -1;
	}
	json_object_put(r);
	return rc;
}
