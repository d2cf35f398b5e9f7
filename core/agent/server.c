/*
 * numalotd's requests (docs/protocol.md): every peer is checked
 * (SO_PEERCRED) before anything is done for it.
 */
#include "server.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "real.h"
#include "version.h"

struct nl_step *nl_server_find(struct nl_server *s, uint32_t job,
			       uint32_t step)
{
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].job == job && s->steps[i].step == step)
			return &s->steps[i];
	return NULL;
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

struct json_object *nl_server_step_report(struct nl_server *s,
					  struct nl_step *st)
{
	struct json_object *r = nl_engine_report(s->engine, st->domain);
	struct json_object *slurm = json_object_new_object();

	if (!r)
		return NULL;
	json_object_object_add(slurm, "job", json_object_new_int64(st->job));
	json_object_object_add(slurm, "step", json_object_new_int64(st->step));
	json_object_object_add(slurm, "uid", json_object_new_int64(st->uid));
	json_object_object_add(slurm, "node", json_object_new_string(s->node));
	json_object_object_add(slurm, "tasks", json_object_new_int(st->ntasks));
	json_object_object_add(r, "slurm", slurm);
	return r;
}

static int step_params(struct nl_server *s, const struct nl_request *q,
		       struct nl_policy_params *p, char *err, size_t errlen)
{
	double period = q->period_s > 0 ? q->period_s
					: s->cfg->default_period_s;
	nl_policy_params_default(p);
	if (period < s->cfg->min_period_s || period > s->cfg->max_period_s) {
		snprintf(err, errlen,
			 "period %g s is outside this node's bounds [%g, %g]",
			 period, s->cfg->min_period_s, s->cfg->max_period_s);
		return -EINVAL;
	}
	p->period_s = period;
	for (int i = 0; i < q->nparams; i++)
		if (nl_policy_param_set(p, q->param_key[i], q->param_value[i],
					err, errlen) < 0)
			return -EINVAL;
	return 0;
}

static struct json_object *do_register(struct nl_server *s,
				       const struct nl_peer *peer,
				       const struct nl_request *q)
{
	char err[512];
	enum nl_policy_kind k;
	uid_t owner;
	struct nl_step *st = nl_server_find(s, q->job, q->step);

	/* A user registers only their own processes, as themselves. */
	if (peer->uid != 0 && q->uid != peer->uid)
		return error("permission", "a user may only register their "
					   "own job's tasks");
	if (nl_proc_uid(q->pid, &owner) < 0)
		return error("no-process", "no such process");
	if (owner != q->uid) {
		snprintf(err, sizeof(err),
			 "process %d belongs to uid %u, not to the job's "
			 "user %u",
			 (int)q->pid, (unsigned)owner, (unsigned)q->uid);
		return error("permission", err);
	}
	if (nl_policy_from_name(q->policy, &k) < 0 || k == NL_POLICY_STATIC) {
		snprintf(err, sizeof(err),
			 "unknown policy \"%s\" (valid: imar2, lbma, monitor)",
			 q->policy);
		return error("bad-request", err);
	}
	if (st && st->uid != q->uid)
		return error("permission", "that step belongs to another user");
	if (!st) {
		struct nl_policy_params p;
		struct nl_step *n;
		char name[64];
		if (step_params(s, q, &p, err, sizeof(err)) < 0)
			return error("bad-request", err);
		n = realloc(s->steps, sizeof(*n) * (s->nsteps + 1));
		if (!n)
			return error("internal", "out of memory");
		s->steps = n;
		st = &s->steps[s->nsteps];
		memset(st, 0, sizeof(*st));
		st->job = q->job;
		st->step = q->step;
		st->uid = q->uid;
		st->domain = s->next_domain++;
		snprintf(name, sizeof(name), "job %u step %u", q->job, q->step);
		if (nl_engine_add_domain(s->engine, st->domain, name, k, &p,
					 ((uint64_t)q->job << 32) | q->step) <
		    0)
			return error("internal", "cannot add the step");
		s->nsteps++;
		nl_log(NL_LOG_INFO, "job %u step %u (uid %u): %s, period %g s",
		       q->job, q->step, q->uid, q->policy, p.period_s);
	}
	int rc = nl_real_add_process(s->machine, q->pid, (int)q->job, err,
				     sizeof(err));
	if (rc == 0)
		rc = nl_engine_add_process(s->engine, q->pid, st->domain);
	if (rc < 0 && rc != -EEXIST) {
		if (rc != -ESRCH && rc != -EPERM)
			snprintf(err, sizeof(err), "cannot manage process %d: %s",
				 (int)q->pid, strerror(-rc));
		return error("no-process", err);
	}
	st->ntasks++;
	nl_log(NL_LOG_INFO, "job %u step %u: task pid %d (cpus %s)", q->job,
	       q->step, (int)q->pid, q->cpus);
	return ok();
}

void nl_server_drop(struct nl_server *s, struct nl_step *st)
{
	nl_engine_remove_domain(s->engine, st->domain);
	*st = s->steps[--s->nsteps];
}

static struct json_object *do_report(struct nl_server *s,
				     const struct nl_peer *peer,
				     const struct nl_request *q, int final)
{
	struct nl_step *st = nl_server_find(s, q->job, q->step);
	struct json_object *o, *r;

	if (!st)
		return error("no-step", "this agent does not manage that step");
	if (!may_see(peer, st))
		return error("permission", "that step belongs to another user");
	r = nl_server_step_report(s, st);
	if (!r)
		return error("internal", "no report");
	if (final) {
		nl_server_site_copy(s, st, r);
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
		json_object_object_add(j, "job", json_object_new_int64(st->job));
		json_object_object_add(j, "step",
				       json_object_new_int64(st->step));
		json_object_object_add(j, "uid", json_object_new_int64(st->uid));
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
			json_object_object_add(reply, "v",
					       json_object_new_int(NL_PROTO_VERSION));
			json_object_object_add(
				reply, "agent",
				json_object_new_string("numalotd " NUMALOT_VERSION));
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
		nl_log(NL_LOG_WARNING, "refused a request from pid %d uid %u: %s",
		       (int)peer->pid, (unsigned)peer->uid, err);
	out = strdup(json_object_to_json_string_ext(reply,
						    JSON_C_TO_STRING_PLAIN));
	json_object_put(reply);
	return out;
}
