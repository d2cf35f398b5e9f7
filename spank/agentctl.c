/* numalot SPANK plugin: starting, calling and reporting with the agent. */
#include "agentctl.h"

#include <errno.h>
#include <fcntl.h>
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

#include "version.h"
#include "util.h"

#define CALL_TIMEOUT_MS 2000
#define START_TIMEOUT_S 5.0

static int hello(const char *sock)
{
	char *reply = NULL;
	int rc = nl_proto_call(sock, "{\"v\":1,\"op\":\"hello\"}", &reply,
			       CALL_TIMEOUT_MS, NL_CALL_ROOT_AGENT);
	if (rc == 0 && !strstr(reply, "\"ok\":true"))
		rc = -EPROTO;
	free(reply);
	return rc;
}

/* Double fork and setsid: the agent outlives the step that started it. */
static int spawn_agent(const struct nl_site *s)
{
	char idle[32], period[32], minp[32], maxp[32];
	char sock[160], cnt[48], topo[300], rdir[540];
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid > 0) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return 0;
	}
	setsid();
	if (fork() != 0)
		_exit(0);
	/* No inherited descriptors: srun must not wait for the agent. */
	close_range(0, ~0U, 0);
	int null = open("/dev/null", O_RDWR);
	int log = s->log[0] ? open(s->log,
				   O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW,
				   0640)
			    : -1;
	if (null >= 0) {
		/* Order matters: log may sit on 1, which null is about to take.
		 */
		dup2(log >= 0 ? log : null, 2);
		dup2(null, 0);
		dup2(null, 1);
	}
	snprintf(sock, sizeof(sock), "--socket=%s", s->socket);
	snprintf(idle, sizeof(idle), "--idle-exit=%g", s->idle_exit_s);
	snprintf(period, sizeof(period), "--period=%g", s->period_s);
	snprintf(minp, sizeof(minp), "--min-period=%g", s->min_period_s);
	snprintf(maxp, sizeof(maxp), "--max-period=%g", s->max_period_s);
	snprintf(cnt, sizeof(cnt), "--counters=%s", s->counters);
	snprintf(topo, sizeof(topo), "--topology=%s", s->topology);
	snprintf(rdir, sizeof(rdir), "--report-dir=%s", s->report_dir);
	char *argv[12] = {
		(char *)s->agent, sock, idle, period, minp, maxp, cnt};
	int n = 7;
	if (s->topology[0])
		argv[n++] = topo;
	if (s->report_dir[0])
		argv[n++] = rdir;
	if (!s->log[0])
		argv[n++] = "--syslog";
	argv[n] = NULL;
	execv(s->agent, argv);
	_exit(127);
}

int nl_agentctl_ensure(const struct nl_site *s, char *why, size_t len)
{
	char lockpath[200];
	int fd, rc;
	double end;

	if (hello(s->socket) == 0)
		return 0;
	if (access(s->agent, X_OK) < 0) {
		snprintf(why, len,
			 "no agent answers at %s and %s cannot be "
			 "run: %s",
			 s->socket, s->agent, strerror(errno));
		return -1;
	}
	/* One starter at a time; the others wait and find it running. */
	snprintf(lockpath, sizeof(lockpath), "%s.lock", s->socket);
	fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		char dir[160], *slash;
		snprintf(dir, sizeof(dir), "%s", s->socket);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			mkdir(dir, 0755);
		}
		fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			  0600);
	}
	if (fd < 0) {
		snprintf(why, len, "cannot open the agent lock %s: %s",
			 lockpath, strerror(errno));
		return -1;
	}
	end = nl_mono_s() + START_TIMEOUT_S;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (nl_mono_s() > end) {
			close(fd);
			snprintf(why, len,
				 "timed out waiting for the agent "
				 "lock %s",
				 lockpath);
			return -1;
		}
		usleep(20000);
	}
	rc = hello(s->socket);
	if (rc != 0) {
		spawn_agent(s);
		while ((rc = hello(s->socket)) != 0 && nl_mono_s() < end)
			usleep(20000);
	}
	close(fd); /* releases the lock */
	if (rc != 0)
		snprintf(why, len, "started %s but it does not answer at %s",
			 s->agent, s->socket);
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
			 char *why, size_t len)
{
	char *req = nl_proto_encode(q), *reply = NULL;
	int rc;
	if (!req) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	rc = nl_proto_call(s->socket, req, &reply, CALL_TIMEOUT_MS,
			   NL_CALL_ROOT_AGENT);
	/* The agent may have exited idle just after our hello: once more. */
	if ((rc == -ECONNREFUSED || rc == -ENOENT || rc == -ECONNRESET ||
	     rc == -EPIPE) &&
	    nl_agentctl_ensure(s, why, len) == 0)
		rc = nl_proto_call(s->socket, req, &reply, CALL_TIMEOUT_MS,
				   NL_CALL_ROOT_AGENT);
	free(req);
	if (rc < 0) {
		snprintf(why, len, "the agent did not take task %d: %s",
			 (int)q->pid, strerror(-rc));
		return -1;
	}
	rc = reply_ok(reply, why, len);
	free(reply);
	return rc;
}

/* Write text to path as uid/gid in a child: O_NOFOLLOW, never over a file
 * of someone else, never blocking the step for long (a FIFO, a hung file
 * system). Returns 0 or an errno. */
static int write_as(const char *path, const char *text, uid_t uid, gid_t gid,
		    const gid_t *groups, int ngroups)
{
	int pfd[2], err = 0, st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return errno;
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (setgroups((size_t)(ngroups > 0 ? ngroups : 0), groups) <
			    0 ||
		    setgid(gid) < 0 || setuid(uid) < 0 ||
		    (uid != 0 && setuid(0) == 0))
			err = EPERM;
		int fd = err ? -1
			     : open(path,
				    O_WRONLY | O_CREAT | O_NOFOLLOW |
					    O_NONBLOCK | O_CLOEXEC,
				    0644);
		struct stat sb;
		if (!err && fd < 0)
			err = errno;
		else if (!err && (fstat(fd, &sb) < 0 || sb.st_uid != uid ||
				  !S_ISREG(sb.st_mode)))
			err = EEXIST; /* someone else's, or not a file */
		if (!err &&
		    (ftruncate(fd, 0) < 0 || write(fd, text, strlen(text)) < 0))
			err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	/* The writer answers through the pipe; ten seconds at most, then it
	 * is killed (a hung file system must not hold the step). */
	struct pollfd pw = {pfd[0], POLLIN, 0};
	int ready;
	while ((ready = poll(&pw, 1, 10000)) < 0 && errno == EINTR)
		;
	if (ready <= 0) {
		kill(pid, SIGKILL);
		err = ETIMEDOUT;
	} else if (read(pfd[0], &err, sizeof(err)) != sizeof(err)) {
		err = EIO;
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return err;
}

static struct json_object *lost_report(const char *reason)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "numalot",
			       json_object_new_string(NUMALOT_VERSION));
	json_object_object_add(r, "error", json_object_new_string(reason));
	return r;
}

void nl_agentctl_finish(spank_t sp, const struct nl_site *s, int attempted,
			int registered, int failed, const char *reason,
			const char *pattern, const char *cwd)
{
	struct nl_request q = {.op = NL_OP_UNREGISTER, .has_step = 1};
	char *req, *reply = NULL, why[400], node[64] = "", path[4096], user[64];
	struct json_object *r = NULL, *o = NULL, *v;
	uid_t uid = 0;
	gid_t gid = 0, *groups = NULL;
	int ngroups = 0, rc;

	/* Without the job's identity nothing can be written safely. */
	if (spank_get_item(sp, S_JOB_ID, &q.job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &q.step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
		slurm_error("numalot: cannot read the job's identity; no "
			    "report");
		return;
	}
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &groups, &ngroups) !=
	    ESPANK_SUCCESS) {
		groups = NULL;
		ngroups = 0;
	}
	q.uid = uid;
	q.has_uid = 1;
	gethostname(node, sizeof(node) - 1);
	struct passwd *pw = getpwuid(uid);
	snprintf(user, sizeof(user), "%s", pw ? pw->pw_name : "");

	/* Whenever a registration was tried, the agent may have the step
	 * (a reply that timed out): unregister it either way. */
	if (attempted > 0) {
		req = nl_proto_encode(&q);
		rc = req ? nl_proto_call(s->socket, req, &reply,
					 CALL_TIMEOUT_MS, NL_CALL_ROOT_AGENT)
			 : -ENOMEM;
		free(req);
		if (rc == 0 && (o = json_tokener_parse(reply)) &&
		    json_object_object_get_ex(o, "report", &v) &&
		    json_object_is_type(v, json_type_object))
			r = json_object_get(v);
		if (!r && registered == 0) {
			r = lost_report(reason && *reason ? reason
							  : "not started");
		} else if (!r) {
			snprintf(why, sizeof(why),
				 "the agent was lost during the step (%s); its "
				 "threads ran on where they were",
				 rc ? strerror(-rc) : "no report in its reply");
			slurm_error("numalot: job %u step %u: %s", q.job,
				    q.step, why);
			r = lost_report(why);
		}
	} else {
		r = lost_report(reason && *reason ? reason : "not started");
	}
	json_object_put(o);
	free(reply);
	if (!json_object_object_get_ex(r, "slurm", &v)) {
		struct json_object *sl = json_object_new_object();
		json_object_object_add(sl, "job", json_object_new_int64(q.job));
		json_object_object_add(sl, "step",
				       json_object_new_int64(q.step));
		json_object_object_add(sl, "uid", json_object_new_int64(uid));
		json_object_object_add(sl, "node",
				       json_object_new_string(node));
		json_object_object_add(r, "slurm", sl);
	}
	if (failed && registered > 0)
		json_object_object_add(r, "warning",
				       json_object_new_string(reason));
	const char *text = json_object_to_json_string_ext(
		r, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);
	char *body = malloc(strlen(text) + 2);
	if (body) {
		sprintf(body, "%s\n", text);
		if (nl_report_path(
			    pattern[0] ? pattern : "numalot-%j.%s.%N.json", cwd,
			    q.job, q.step, node, user, path, sizeof(path)) < 0)
			slurm_error("numalot: report path too long");
		else if ((rc = write_as(path, body, uid, gid, groups, ngroups)))
			slurm_error("numalot: cannot write the report %s: %s",
				    path, strerror(rc));
		if (s->report_dir[0] &&
		    nl_report_path("numalot-%j.%s.%N.json", s->report_dir,
				   q.job, q.step, node, user, path,
				   sizeof(path)) == 0 &&
		    (rc = write_as(path, body, 0, 0, NULL, 0)))
			slurm_error(
				"numalot: cannot write the site copy %s: %s",
				path, strerror(rc));
		free(body);
	}
	json_object_put(r);
}
