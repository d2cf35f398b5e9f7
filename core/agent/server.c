/*
 * numalotd's requests (docs/protocol.md): every peer is checked
 * (SO_PEERCRED) before anything is done for it.
 */
#include "server.h"

#include <errno.h>
#include <grp.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rootdir.h"
#include "rwrite.h"
#include "util.h"
#include "real.h"
#include "version.h"

/* Limits per user, so that no peer makes the root agent grow without
 * bound. Root (slurmstepd) has a larger one. */
#define USER_MAX_STEPS 8
#define USER_MAX_TASKS 64
#define ROOT_MAX_STEPS 4096
#define ROOT_MAX_TASKS 4096

struct nl_step *nl_server_find(struct nl_server *s, uint32_t job, uint32_t step,
			       int any_uid, uid_t uid, int by_root)
{
	struct nl_step *other = NULL;
	for (size_t i = 0; i < s->nsteps; i++) {
		struct nl_step *st = &s->steps[i];
		if (st->job != job || st->step != step ||
		    (!any_uid && st->uid != uid))
			continue;
		if (by_root < 0 ? st->by_root : st->by_root == by_root)
			return st;
		if (by_root < 0 && !other)
			other = st;
	}
	return other;
}

static struct json_object *error(const char *code, const char *msg)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(code));
	json_object_object_add(o, "message", json_object_new_string(msg));
	return o;
}

static struct json_object *ok(void)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static int may_see(const struct nl_peer *peer, const struct nl_step *st)
{
	return peer->uid == 0 || peer->uid == st->uid;
}

/* The processes of a step: its tasks and the children they started. */
static size_t step_pids(struct nl_server *s, const struct nl_step *st,
			int **out)
{
	const struct nl_process_info *p;
	size_t n = 0, k = 0;

	*out = NULL;
	if (s->machine->ops->processes(s->machine, &p, &n) < 0 ||
	    !(*out = malloc(sizeof(int) * (n + 1))))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i].job == st->key)
			(*out)[k++] = p[i].pid;
	return k;
}

struct json_object *nl_server_step_report(struct nl_server *s,
					  struct nl_step *st)
{
	int *pids;
	size_t n = step_pids(s, st, &pids);
	struct json_object *r =
		nl_engine_report_pids(s->engine, st->domain, pids, n);
	free(pids);
	struct json_object *slurm = json_object_new_object();

	if (!r)
		return NULL;
	json_object_object_add(slurm, "job", json_object_new_int64(st->job));
	json_object_object_add(slurm, "step", json_object_new_int64(st->step));
	json_object_object_add(slurm, "uid", json_object_new_int64(st->uid));
	json_object_object_add(
		slurm, "node",
		json_object_new_string(st->node[0] ? st->node : s->node));
	json_object_object_add(slurm, "tasks", json_object_new_int(st->ntasks));
	json_object_object_add(r, "slurm", slurm);
	if (st->limits[0])
		json_object_object_add(r, "limits",
				       json_object_new_string(st->limits));
	/* Threads past the descriptor budget were measured from /proc. */
	size_t counted = 0, uncounted = 0;
	n = step_pids(s, st, &pids);
	for (size_t i = 0; i < n; i++) {
		size_t c, u;
		if (nl_real_budget_of(s->machine, pids[i], &c, &u) == 0) {
			counted += c;
			uncounted += u;
		}
	}
	free(pids);
	if (uncounted) {
		char msg[200];
		struct json_object *c;
		snprintf(msg, sizeof(msg),
			 "%zu of %zu threads were measured from /proc (CPU "
			 "time only): past this node's counter descriptor "
			 "budget",
			 uncounted, counted + uncounted);
		if (json_object_object_get_ex(r, "counters", &c) &&
		    json_object_is_type(c, json_type_object))
			json_object_object_add(
				c, "budget_limited_threads",
				json_object_new_int64((int64_t)uncounted));
		json_object_object_add(r, "budget",
				       json_object_new_string(msg));
	}
	return r;
}

/* Note what a site limit changed (for the log and the report). */
static void note_limit(char *notes, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note_limit(char *notes, size_t len, const char *fmt, ...)
{
	size_t n = strlen(notes);
	va_list ap;
	if (n + 3 >= len)
		return;
	if (n)
		n += (size_t)snprintf(notes + n, len - n, "; ");
	va_start(ap, fmt);
	vsnprintf(notes + n, len - n, fmt, ap);
	va_end(ap);
}

/*
 * The step's parameters: every one a peer sends, params.period included,
 * is held to the site's limits; what was changed is noted (docs/protocol.md).
 */
static int step_params(struct nl_server *s, const struct nl_request *q,
		       struct nl_policy_params *p, char *notes, size_t nlen,
		       char *err, size_t errlen)
{
	double lo = s->cfg->min_period_s, hi = s->cfg->max_period_s;
	nl_policy_params_default(p);
	p->period_s = q->period_s > 0 ? q->period_s : s->cfg->default_period_s;
	for (int i = 0; i < q->nparams; i++)
		if (nl_policy_param_set(p, q->param_key[i], q->param_value[i],
					err, errlen) < 0)
			return -EINVAL;
	if (p->period_s < lo || p->period_s > hi) {
		double was = p->period_s;
		p->period_s = was < lo ? lo : hi;
		note_limit(notes, nlen,
			   "period %g s held to this node's bounds [%g, %g] "
			   "s: %g s",
			   was, lo, hi, p->period_s);
	}
	return 0;
}

static struct json_object *refuse(const struct nl_peer *peer, const char *code,
				  const char *msg)
{
	nl_log(NL_LOG_WARNING, "refused a request from pid %d uid %u: %s",
	       (int)peer->pid, (unsigned)peer->uid, msg);
	return error(code, msg);
}

static size_t steps_of(const struct nl_server *s, uid_t uid, int by_root)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		n += s->steps[i].uid == uid && s->steps[i].by_root == by_root;
	return n;
}

/* The domain of a sibling step: same job, user, policy and registrar (a
 * user's own steps never share a Slurm job's domain). */
static int job_domain(const struct nl_server *s, const struct nl_request *q,
		      enum nl_policy_kind k, int by_root)
{
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].job == q->job && s->steps[i].uid == q->uid &&
		    s->steps[i].kind == k && s->steps[i].by_root == by_root)
			return s->steps[i].domain;
	return -1;
}

static struct json_object *new_step(struct nl_server *s,
				    const struct nl_request *q,
				    enum nl_policy_kind k,
				    const struct nl_policy_params *p, int key,
				    int by_root, struct nl_step **out)
{
	/* Look for the job's domain before realloc moves the steps. */
	int domain = job_domain(s, q, k, by_root), joined = domain >= 0;
	struct nl_step *n = realloc(s->steps, sizeof(*n) * (s->nsteps + 1));
	char name[64];

	if (!n)
		return error("internal", "out of memory");
	s->steps = n;
	n = &s->steps[s->nsteps];
	memset(n, 0, sizeof(*n));
	n->job = q->job;
	n->step = q->step;
	n->uid = q->uid;
	n->kind = k;
	n->key = key;
	n->by_root = by_root;
	n->done_since_s = -1;
	if (by_root && q->report[0]) {
		snprintf(n->report, sizeof(n->report), "%s", q->report);
		n->gid = q->has_gid ? q->gid : 0;
		n->has_gid = q->has_gid;
	}
	snprintf(n->node, sizeof(n->node), "%s", by_root ? q->node : "");
	if (domain < 0) {
		/* The job's first step with this policy: its parameters and
		 * period are the domain's. */
		domain = s->next_domain++;
		snprintf(name, sizeof(name), "job %u", q->job);
		if (nl_engine_add_domain(s->engine, domain, name, k, p,
					 ((uint64_t)q->job << 32) | q->step) <
		    0)
			return error("internal", "cannot add the job");
	}
	n->domain = domain;
	s->nsteps++;
	if (joined)
		nl_log(NL_LOG_INFO,
		       "job %u step %u (uid %u): joins the job's %s domain",
		       q->job, q->step, q->uid, q->policy);
	else
		nl_log(NL_LOG_INFO, "job %u step %u (uid %u): %s, period %g s",
		       q->job, q->step, q->uid, q->policy, p->period_s);
	*out = n;
	return NULL;
}

/* The site's force= and allow=, on every registration (docs/slurm.md). */
static int site_policy(struct nl_server *s, enum nl_policy_kind *k, char *notes,
		       size_t nlen, char *err, size_t errlen)
{
	if (s->cfg->force >= 0 && (int)*k != s->cfg->force) {
		note_limit(notes, nlen, "policy %s: this node forces %s",
			   nl_policy_name(*k),
			   nl_policy_name((enum nl_policy_kind)s->cfg->force));
		*k = (enum nl_policy_kind)s->cfg->force;
		return 0;
	}
	if (s->cfg->allow && !(s->cfg->allow & (1u << *k))) {
		snprintf(err, errlen, "policy %s is not allowed on this node",
			 nl_policy_name(*k));
		return -EPERM;
	}
	return 0;
}

/* 0 when every uid of pid is uid, -EPERM when not, -ESRCH or -errno. */
static int owned_by(struct nl_server *s, int pid, uid_t uid)
{
	struct nl_proc_owner who;
	int rc = s->machine->ops->owner(s->machine, pid, &who);

	if (rc < 0)
		return rc;
	return who.one_uid && who.uid == uid ? 0 : -EPERM;
}

/*
 * A Slurm task runs as its user between its change of user and its exec,
 * and its user may register it first: the step slurmstepd then registers
 * it in, root's, is the one that reports, so root takes it over from a
 * registration of the same user's own (not from another user's, nor
 * from root's). 0, or -1 when pid is held otherwise or not at all.
 */
static int take_from_user(struct nl_server *s, int pid, uid_t uid)
{
	const struct nl_process_info *p;
	size_t n;

	if (s->machine->ops->processes(s->machine, &p, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i].pid != pid || p[i].end_s >= 0)
			continue;
		for (size_t k = 0; k < s->nsteps; k++) {
			struct nl_step *st = &s->steps[k];
			if (st->key != p[i].job || st->by_root ||
			    st->uid != uid)
				continue;
			nl_engine_remove_process(s->engine, pid);
			nl_log(NL_LOG_INFO,
			       "job %u step %u (uid %u): task pid %d taken "
			       "over from its user's own registration",
			       st->job, st->step, (unsigned)uid, pid);
			if (--st->ntasks == 0)
				nl_server_drop(s, st);
			return 0;
		}
		return -1;
	}
	return -1;
}

static struct json_object *do_register(struct nl_server *s,
				       const struct nl_peer *peer,
				       const struct nl_request *q)
{
	char err[512], notes[512] = "";
	enum nl_policy_kind k;
	struct nl_policy_params params;
	struct nl_proc_owner who;
	struct json_object *fail;
	int root = peer->uid == 0, rc;
	/* Steps are keyed by user and by who registered them: nobody can
	 * take another's job id, and a user's own registration never stands
	 * for a Slurm step (only slurmstepd's, as root, does). */
	struct nl_step *st =
		nl_server_find(s, q->job, q->step, 0, q->uid, root);

	/* A user registers only their own processes, as themselves: asked
	 * first, so that the answer says nothing of others' processes. */
	if (!root && q->uid != peer->uid)
		return refuse(peer, "permission",
			      "a user may only register their own processes");
	if (!root && (rc = owned_by(s, q->pid, peer->uid)) != 0)
		return rc == -ESRCH
			       ? refuse(peer, "no-process", "no such process")
			       : refuse(peer, "permission",
					"a user may only register their "
					"own processes");
	if (nl_policy_from_name(q->policy, &k) < 0 ||
	    !(nl_policy_where(k) & NL_POLICY_JOBS)) {
		snprintf(err, sizeof(err),
			 "unknown policy \"%.16s\" (valid: %s)", q->policy,
			 nl_policy_job_names());
		return refuse(peer, "bad-request", err);
	}
	if (site_policy(s, &k, notes, sizeof(notes), err, sizeof(err)) < 0)
		return refuse(peer, "permission", err);
	if (!st && steps_of(s, q->uid, root) >=
			   (root ? ROOT_MAX_STEPS : USER_MAX_STEPS))
		return refuse(peer, "limit", "too many steps for this user");
	if (st && st->ntasks >= (root ? ROOT_MAX_TASKS : USER_MAX_TASKS))
		return refuse(peer, "limit", "too many tasks in this step");
	if (!st && step_params(s, q, &params, notes, sizeof(notes), err,
			       sizeof(err)) < 0)
		return refuse(peer, "bad-request", err);
	if (s->machine->ops->owner(s->machine, q->pid, &who) < 0)
		return refuse(peer, "no-process", "no such process");
	/* A Slurm task is registered by its slurmstepd before it execs: it
	 * is taken over once it runs the user's program, bound and as the
	 * user (checked then). Anything else is checked now. */
	/* Checked: root's registration now takes the task from its user's
	 * own, which may drop the user's step (and move root's in the
	 * array). */
	if (root && take_from_user(s, q->pid, q->uid) == 0)
		st = nl_server_find(s, q->job, q->step, 0, q->uid, root);
	/* A step's processes carry its key as their job id in the machine,
	 * and so do the children they start (which the machine follows). */
	int key = st ? st->key : s->next_key;
	struct nl_proc_opts o = {.job = key,
				 .wait_exec = root && who.ppid == peer->pid,
				 .check_uid = 1,
				 .uid = q->uid};
	rc = s->machine->ops->add_process(s->machine, q->pid, &o, err,
					  sizeof(err));
	if (rc < 0)
		return refuse(peer,
			      rc == -EPERM    ? "permission"
			      : rc == -ESRCH  ? "no-process"
			      : rc == -EEXIST ? "bad-request"
					      : "internal",
			      err);
	if (!st && (fail = new_step(s, q, k, &params, key, root, &st))) {
		s->machine->ops->forget(s->machine, q->pid);
		return fail;
	}
	if (key == s->next_key)
		s->next_key++;
	if (nl_engine_add_process(s->engine, q->pid, st->domain) < 0) {
		s->machine->ops->forget(s->machine, q->pid);
		if (st->ntasks == 0)
			nl_server_drop(s, st);
		return error("internal", "cannot add the process");
	}
	st->ntasks++;
	if (notes[0] && !strstr(st->limits, notes))
		note_limit(st->limits, sizeof(st->limits), "%s", notes);
	nl_log(NL_LOG_INFO, "job %u step %u: task pid %d%s", q->job, q->step,
	       (int)q->pid, o.wait_exec ? " (taken over at its exec)" : "");
	struct json_object *o2 = ok();
	if (notes[0]) {
		nl_log(NL_LOG_INFO, "job %u step %u (uid %u): %s", q->job,
		       q->step, (unsigned)q->uid, notes);
		json_object_object_add(o2, "limits",
				       json_object_new_string(notes));
	}
	return o2;
}

void nl_server_drop(struct nl_server *s, struct nl_step *st)
{
	int shared = 0, *pids;
	for (size_t i = 0; i < s->nsteps; i++)
		shared |=
			&s->steps[i] != st && s->steps[i].domain == st->domain;
	if (shared) {
		size_t n = step_pids(s, st, &pids);
		for (size_t i = 0; i < n; i++)
			nl_engine_remove_process(s->engine, pids[i]);
		free(pids);
	} else {
		nl_engine_remove_domain(s->engine, st->domain);
	}
	*st = s->steps[--s->nsteps];
}

int nl_server_step_done(struct nl_server *s, const struct nl_step *st)
{
	const struct nl_process_info *p;
	size_t n;

	if (s->machine->ops->processes(s->machine, &p, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i].job == st->key && p[i].end_s < 0)
			return 0;
	return 1;
}

static struct json_object *do_report(struct nl_server *s,
				     const struct nl_peer *peer,
				     const struct nl_request *q, int final)
{
	/* Root names the user (or takes the first match) and means a step
	 * root registered; a user is looked up as themselves, and may end
	 * only a step of their own making (reading a Slurm step is fine). */
	int any = peer->uid == 0 && !q->has_uid;
	uid_t uid = peer->uid == 0 ? q->uid : peer->uid;
	int by_root = peer->uid == 0 ? (final ? 1 : -1) : final ? 0 : -1;
	struct nl_step *st =
		nl_server_find(s, q->job, q->step, any, uid, by_root);
	struct json_object *o, *r;

	if (!st)
		return refuse(peer, "no-step",
			      "this agent manages no such step of yours");
	r = nl_server_step_report(s, st);
	if (!r)
		return error("internal", "no report");
	if (final) {
		nl_log(NL_LOG_INFO, "job %u step %u ended", st->job, st->step);
		nl_server_drop(s, st);
	}
	o = ok();
	json_object_object_add(o, "report", r);
	return o;
}

static struct json_object *do_status(struct nl_server *s,
				     const struct nl_peer *peer)
{
	struct json_object *o = ok(), *a = json_object_new_array();
	for (size_t i = 0; i < s->nsteps; i++) {
		struct nl_step *st = &s->steps[i];
		struct nl_engine_summary sum;
		if (!may_see(peer, st))
			continue;
		struct json_object *j = json_object_new_object();
		nl_engine_summary(s->engine, st->domain, &sum);
		json_object_object_add(j, "job",
				       json_object_new_int64(st->job));
		json_object_object_add(j, "step",
				       json_object_new_int64(st->step));
		json_object_object_add(j, "uid",
				       json_object_new_int64(st->uid));
		json_object_object_add(j, "tasks",
				       json_object_new_int(st->ntasks));
		json_object_object_add(j, "periods",
				       json_object_new_int(sum.periods));
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "steps", a);
	return o;
}

char *nl_server_handle(struct nl_server *s, const struct nl_peer *peer,
		       const char *body, size_t len)
{
	struct nl_request q;
	struct json_object *reply;
	char err[512];
	char *out;
	int rc = nl_proto_decode(body, len, &q, err, sizeof(err));

	if (rc == -EPROTO) {
		reply = error("version", err);
	} else if (rc < 0) {
		reply = error("bad-request", err);
	} else {
		switch (q.op) {
		case NL_OP_HELLO:
			reply = ok();
			json_object_object_add(
				reply, "v",
				json_object_new_int(NL_PROTO_VERSION));
			json_object_object_add(
				reply, "agent",
				json_object_new_string(
					"numalotd " NUMALOT_VERSION));
			json_object_object_add(reply, "pid",
					       json_object_new_int(getpid()));
			break;
		case NL_OP_REGISTER:
			reply = do_register(s, peer, &q);
			break;
		case NL_OP_UNREGISTER:
			reply = do_report(s, peer, &q, 1);
			break;
		case NL_OP_REPORT:
			reply = do_report(s, peer, &q, 0);
			break;
		default:
			reply = do_status(s, peer);
			break;
		}
	}
	if (rc < 0)
		nl_log(NL_LOG_WARNING,
		       "refused a request from pid %d uid %u: %s",
		       (int)peer->pid, (unsigned)peer->uid, err);
	out = strdup(
		json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN));
	json_object_put(reply);
	/* Valid JSON whatever a message cut or a process name holds (comm
	 * is any bytes): json-c copies bytes past 0x7f as they are. */
	if (out)
		nl_utf8_scrub(out);
	return out;
}

static const char *report_text(struct json_object *r)
{
	return json_object_to_json_string_ext(
		r, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);
}

void nl_server_site_copy(struct nl_server *s, const struct nl_step *st,
			 struct json_object *report)
{
	char path[4096];
	struct nl_write_as o = {.mode = 0640,
				.timeout_ms = 5000,
				.keep_data = 1,
				.job = st->job,
				.step = st->step};
	int rc;

	/* Only for steps root (slurmstepd) registered: a user cannot make
	 * the agent write over a real job's site copy. */
	if (!s->cfg->report_dir || !st->by_root)
		return;
	const char *node = st->node[0] ? st->node : s->node;
	char why[700];
	if (!nl_node_name_ok(node)) {
		nl_log(NL_LOG_WARNING,
		       "no site report of job %u step %u: no usable node name",
		       st->job, st->step);
		return;
	}
	if (nl_owned_dir(s->cfg->report_dir, 0750, geteuid(), why,
			 sizeof(why)) < 0) {
		nl_log(NL_LOG_WARNING, "no site report of job %u step %u: %s",
		       st->job, st->step, why);
		return;
	}
	snprintf(path, sizeof(path), "%s/numalot-%u.%u.%s.json",
		 s->cfg->report_dir, st->job, st->step, node);
	rc = nl_write_report_as(path, report_text(report), &o);
	if (rc && rc != EALREADY)
		nl_log(NL_LOG_WARNING,
		       "site report %s: %s (an older file there is left as "
		       "it was)",
		       path,
		       rc == EEXIST ? "not our own regular file"
				    : strerror(rc));
}

void nl_server_user_copy(struct nl_server *s, const struct nl_step *st,
			 struct json_object *report)
{
	struct passwd *pw = getpwuid(st->uid);
	struct nl_write_as o = {.uid = st->uid,
				.gid = st->has_gid ? st->gid
				       : pw	   ? pw->pw_gid
						   : 0,
				.mode = 0644,
				.dir_mode = 0755,
				.timeout_ms = 5000,
				.job = st->job,
				.step = st->step};
	gid_t groups[64];
	int ng = 64, rc;

	(void)s;
	if (!st->by_root || !st->report[0])
		return;
	/* The job's group, else its user's: never root's made up when
	 * neither is known (no name for the uid, NSS down): no report. */
	if (!st->has_gid && !pw) {
		nl_log(NL_LOG_WARNING,
		       "report %s of job %u step %u: no group known for uid "
		       "%u: not written",
		       st->report, st->job, st->step, (unsigned)st->uid);
		return;
	}
	if (pw && getgrouplist(pw->pw_name, o.gid, groups, &ng) >= 0) {
		o.groups = groups;
		o.ngroups = ng;
	}
	rc = nl_write_report_as(st->report, report_text(report), &o);
	if (rc)
		nl_log(NL_LOG_WARNING, "report %s of job %u step %u: %s",
		       st->report, st->job, st->step, strerror(rc));
	else
		nl_log(NL_LOG_INFO, "job %u step %u: report handed to %s",
		       st->job, st->step, st->report);
}
