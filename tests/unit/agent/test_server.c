/*
 * Unit tests: numalotd's requests (core/agent/server.c) from fake peers on
 * the simulated node: who may register what (peer uid, the process's
 * owner), the limits per user, who may see and end a step, the site's
 * policy, and malformed requests (docs/protocol.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsontext.h"
#include "machine.h"
#include "model.h"
#include "scenario.h"
#include "server.h"

#define ALICE 1000
#define BOB 2000
#define STEPD_PID 77 /* the root peer: slurmstepd */
/* Processes of the scenario (one thread each), by owner: index ranges. */
#define NALICE 75
#define NBOB 5
#define NROOT 5
#define NPROCS (NALICE + NBOB + NROOT)

static const struct nl_peer root_peer = {.pid = STEPD_PID, .uid = 0};
static const struct nl_peer alice = {.pid = 501, .uid = ALICE, .gid = 100};
static const struct nl_peer bob = {.pid = 502, .uid = BOB, .gid = 100};

struct fixture {
	struct nl_scenario *sc;
	struct nl_agent_config cfg;
	struct nl_server s;
	struct json_object *reply; /* the last one */
};

/* Pid of alice's, bob's or root's process k. */
static int alice_pid(int k)
{
	return nl_sim_pid(k);
}

static int bob_pid(int k)
{
	return nl_sim_pid(NALICE + k);
}

static int root_pid(int k)
{
	return nl_sim_pid(NALICE + NBOB + k);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct nl_model_opts mo = {.unmanaged = 1};
	size_t len = 40 * NPROCS + 256, n;
	char *text = malloc(len), err[512] = "";

	assert_non_null(f);
	assert_non_null(text);
	n = (size_t)snprintf(text, len,
			     "{\"machine\": {\"topology\": \"numa:2 core:4 "
			     "pu:1\", \"noise\": 0}, \"processes\": [");
	for (int i = 0; i < NPROCS; i++)
		n += (size_t)snprintf(
			text + n, len - n,
			"%s{\"kind\": \"compute\", \"threads\": 1}",
			i ? ", " : "");
	snprintf(text + n, len - n, "]}");
	if (nl_scenario_parse(text, "server.json", NULL, &f->sc, err,
			      sizeof(err)) < 0)
		fail_msg("scenario: %s", err);
	free(text);
	if (nl_sim_create_opts(f->sc, 1, &mo, &f->s.machine, err, sizeof(err)) <
	    0)
		fail_msg("sim: %s", err);
	for (int k = 0; k < NALICE; k++)
		assert_int_equal(
			nl_sim_set_owner(f->s.machine, alice_pid(k), ALICE, 1),
			0);
	for (int k = 0; k < NBOB; k++)
		assert_int_equal(
			nl_sim_set_owner(f->s.machine, bob_pid(k), BOB, 1), 0);
	for (int k = 0; k < NROOT; k++)
		assert_int_equal(nl_sim_set_owner(f->s.machine, root_pid(k), 0,
						  STEPD_PID),
				 0);
	nl_agent_config_default(&f->cfg);
	f->s.cfg = &f->cfg;
	f->s.next_key = 1;
	snprintf(f->s.node, sizeof(f->s.node), "node0");
	assert_int_equal(nl_engine_create(f->s.machine, &f->s.engine), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	while (f->s.nsteps)
		nl_server_drop(&f->s, &f->s.steps[0]);
	free(f->s.steps);
	nl_engine_free(f->s.engine);
	nl_machine_destroy(f->s.machine);
	nl_scenario_free(f->sc);
	json_object_put(f->reply);
	free(f);
	return 0;
}

/* A reply is strict JSON in valid UTF-8, whatever was asked (issue 23,
 * 7; docs/protocol.md, "Framing"). */
static struct json_object *parse_reply(const char *reply)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, reply, (int)strlen(reply));
	if (!o || json_tokener_get_error(tok) != json_tokener_success)
		fail_msg("the reply is not valid JSON: %s", reply);
	json_tokener_free(tok);
	return o;
}

/*
 * Send a request (JSON with ' for ") as peer; returns "" when the reply is
 * ok, else its error code. The reply stays in f->reply.
 */
static const char *ask(struct fixture *f, const struct nl_peer *peer,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static const char *ask(struct fixture *f, const struct nl_peer *peer,
		       const char *fmt, ...)
{
	char text[2048], *body, *reply;
	struct json_object *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	body = json(text);
	reply = nl_server_handle(&f->s, peer, body, strlen(body));
	assert_non_null(reply);
	json_object_put(f->reply);
	f->reply = parse_reply(reply);
	free(reply);
	assert_non_null(f->reply);
	assert_true(json_object_object_get_ex(f->reply, "ok", &v));
	if (json_object_get_boolean(v))
		return "";
	assert_true(json_object_object_get_ex(f->reply, "error", &v));
	return json_object_get_string(v);
}

/* A registration of pid for uid in job.step under policy. */
static const char *reg(struct fixture *f, const struct nl_peer *peer,
		       unsigned job, unsigned step, unsigned uid, int pid,
		       const char *policy)
{
	return ask(f, peer,
		   "{'v': 1, 'op': 'register', 'job': %u, 'step': %u, 'uid': "
		   "%u, 'pid': %d, 'policy': '%s', 'cpus': '0-7'}",
		   job, step, uid, pid, policy);
}

/* The reply's message contains s. */
static void says(const struct fixture *f, const char *s)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(f->reply, "message", &v) ||
		    json_object_object_get_ex(f->reply, "limits", &v));
	if (!strstr(json_object_get_string(v), s))
		fail_msg("\"%s\" does not say \"%s\"",
			 json_object_get_string(v), s);
}

/* The machine manages pid (its processes list it). */
static int managed(struct fixture *f, int pid)
{
	const struct nl_process_info *p;
	size_t n;

	assert_int_equal(f->s.machine->ops->processes(f->s.machine, &p, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (p[i].pid == pid)
			return 1;
	return 0;
}

/* Steps the last status reply listed. */
static size_t status_steps(struct fixture *f, const struct nl_peer *peer)
{
	struct json_object *a;

	assert_string_equal(ask(f, peer, "{'v': 1, 'op': 'status'}"), "");
	assert_true(json_object_object_get_ex(f->reply, "steps", &a));
	return json_object_array_length(a);
}

static void malformed_requests(void **state)
{
	struct fixture *f = *state;
	struct json_object *v;

	assert_string_equal(ask(f, &alice, "{'v': 1, 'op': 'hello'}"), "");
	assert_true(json_object_object_get_ex(f->reply, "v", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_string_equal(ask(f, &alice, "{'v': 1, 'op'"), "bad-request");
	assert_string_equal(ask(f, &alice, "[1, 2]"), "bad-request");
	assert_string_equal(ask(f, &alice, "{'v': 2, 'op': 'hello'}"),
			    "version");
	assert_string_equal(ask(f, &alice, "{'v': 1, 'op': 'take-over'}"),
			    "bad-request");
	assert_string_equal(ask(f, &alice,
				"{'v': 1, 'op': 'register', 'job': 1, "
				"'step': 0, 'uid': 1000, 'policy': 'lbma'}"),
			    "bad-request");
	says(f, "pid");
	/* Policies a peer may not ask for. */
	assert_string_equal(reg(f, &alice, 1, 0, ALICE, alice_pid(0), "static"),
			    "bad-request");
	assert_string_equal(reg(f, &alice, 1, 0, ALICE, alice_pid(0), "foo"),
			    "bad-request");
	says(f, "valid: imar2, lbma, monitor");
	assert_string_equal(
		ask(f, &alice,
		    "{'v': 1, 'op': 'register', 'job': 1, 'step': 0, 'uid': "
		    "1000, 'pid': %d, 'policy': 'lbma', 'cpus': '0-7', "
		    "'params': {'no_such_param': '1'}}",
		    alice_pid(0)),
		"bad-request");
	says(f, "no_such_param");
	/* Invalid UTF-8 is refused, not echoed; a message cut inside a
	 * character (%.40s of a long name) is still valid UTF-8. */
	assert_string_equal(ask(f, &alice, "{'v': 1, 'op': '\xff\xfe'}"),
			    "bad-request");
	says(f, "utf-8");
	assert_string_equal(
		ask(f, &alice,
		    "{'v': 1, 'op': 'register', 'job': 1, 'step': 0, 'uid': "
		    "1000, 'pid': %d, 'policy': 'lbma', 'cpus': '0-7', "
		    "'params': {'a%s': '1'}}",
		    alice_pid(0),
		    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"),
		"bad-request");
	says(f, "too long");
	/* Nothing of that reached the machine or the engine. */
	assert_false(managed(f, alice_pid(0)));
	assert_int_equal(f->s.nsteps, 0);
	assert_int_equal(nl_engine_ndomains(f->s.engine), 0);
}

/* A user registers only their own processes, as themselves. */
static void user_registers_own(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(reg(f, &alice, 1, 0, BOB, bob_pid(0), "lbma"),
			    "permission");
	assert_string_equal(reg(f, &alice, 1, 0, BOB, alice_pid(0), "lbma"),
			    "permission");
	assert_string_equal(reg(f, &alice, 1, 0, ALICE, bob_pid(0), "lbma"),
			    "permission");
	assert_string_equal(reg(f, &alice, 1, 0, ALICE, root_pid(0), "lbma"),
			    "permission");
	/* No such process (none at that pid, or not a process's pid). */
	assert_string_equal(
		reg(f, &alice, 1, 0, ALICE, nl_sim_pid(NPROCS), "lbma"),
		"no-process");
	assert_string_equal(
		reg(f, &alice, 1, 0, ALICE, alice_pid(0) + 1, "lbma"),
		"no-process");
	assert_false(managed(f, bob_pid(0)));
	assert_int_equal(f->s.nsteps, 0);

	assert_string_equal(reg(f, &alice, 1, 0, ALICE, alice_pid(0), "lbma"),
			    "");
	assert_true(managed(f, alice_pid(0)));
	assert_int_equal(f->s.nsteps, 1);
	assert_int_equal(f->s.steps[0].uid, ALICE);
	assert_int_equal(f->s.steps[0].by_root, 0);
	/* Once only. */
	assert_string_equal(reg(f, &alice, 1, 0, ALICE, alice_pid(0), "lbma"),
			    "bad-request");
	says(f, "already managed");
	assert_int_equal(f->s.steps[0].ntasks, 1);
	/* A report path, a node and a gid in a user's own registration are
	 * not kept: only root's hand reports over (docs/slurm.md,
	 * "Security"). */
	assert_string_equal(ask(f, &alice,
				"{'v': 1, 'op': 'register', 'job': 2, 'step': "
				"0, 'uid': 1000, 'pid': %d, 'policy': 'lbma', "
				"'cpus': '0-7', 'report': '/etc/numalot.json', "
				"'node': 'evil', 'gid': 0}",
				alice_pid(1)),
			    "");
	assert_int_equal(f->s.nsteps, 2);
	assert_string_equal(f->s.steps[1].report, "");
	assert_string_equal(f->s.steps[1].node, "");
	assert_int_equal(f->s.steps[1].by_root, 0);
}

/* Root (slurmstepd) registers any user's task, as that user's. */
static void root_registers_any(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(reg(f, &root_peer, 7, 0, BOB, bob_pid(0), "imar2"),
			    "");
	assert_true(managed(f, bob_pid(0)));
	assert_int_equal(f->s.steps[0].by_root, 1);
	assert_int_equal(f->s.steps[0].uid, BOB);
	/* A task forked by slurmstepd, registered before its exec. */
	assert_int_equal(
		nl_sim_set_owner(f->s.machine, root_pid(0), BOB, STEPD_PID), 0);
	assert_string_equal(reg(f, &root_peer, 7, 0, BOB, root_pid(0), "imar2"),
			    "");
	assert_int_equal(f->s.steps[0].ntasks, 2);
	/* Not a process of the user it is registered for. */
	assert_string_equal(
		reg(f, &root_peer, 8, 0, ALICE, root_pid(1), "imar2"),
		"permission");
	assert_string_equal(
		reg(f, &root_peer, 8, 0, ALICE, bob_pid(1), "imar2"),
		"permission");
	assert_false(managed(f, bob_pid(1)));
	assert_string_equal(reg(f, &root_peer, 8, 0, ALICE,
				nl_sim_pid(NPROCS + 3), "imar2"),
			    "no-process");
	assert_int_equal(f->s.nsteps, 1);
	/* A user's own registration never stands for a Slurm job's step:
	 * bob's job 7 step 0 is another step than root's. */
	assert_string_equal(reg(f, &bob, 7, 0, BOB, bob_pid(1), "imar2"), "");
	assert_int_equal(f->s.nsteps, 2);
	assert_int_not_equal(f->s.steps[0].domain, f->s.steps[1].domain);
}

/* A task its user registered first (between its change of user and its
 * exec): slurmstepd's registration takes it over, so the step root
 * reports holds it; never from another user's registration nor from
 * root's own. */
static void root_takes_over_users_registration(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(reg(f, &bob, 7, 0, BOB, bob_pid(0), "lbma"), "");
	assert_string_equal(reg(f, &bob, 7, 0, BOB, bob_pid(1), "lbma"), "");
	assert_int_equal(f->s.nsteps, 1);
	/* A registration of root's that is refused takes nothing. */
	assert_string_equal(reg(f, &root_peer, 7, 0, BOB, bob_pid(0), "nope"),
			    "bad-request");
	assert_int_equal(f->s.nsteps, 1);
	assert_int_equal(f->s.steps[0].ntasks, 2);
	assert_string_equal(reg(f, &root_peer, 7, 0, BOB, bob_pid(0), "imar2"),
			    "");
	assert_true(managed(f, bob_pid(0)));
	assert_int_equal(f->s.nsteps, 2);
	assert_int_equal(f->s.steps[0].by_root, 0);
	assert_int_equal(f->s.steps[0].ntasks, 1);
	assert_int_equal(f->s.steps[1].by_root, 1);
	assert_int_equal(f->s.steps[1].ntasks, 1);
	/* The user's step is gone with its last task. */
	assert_string_equal(reg(f, &root_peer, 7, 0, BOB, bob_pid(1), "imar2"),
			    "");
	assert_int_equal(f->s.nsteps, 1);
	assert_int_equal(f->s.steps[0].by_root, 1);
	assert_int_equal(f->s.steps[0].ntasks, 2);
	/* Root's own, once only. */
	assert_string_equal(reg(f, &root_peer, 7, 0, BOB, bob_pid(1), "imar2"),
			    "bad-request");
	says(f, "already managed");
	/* Alice's registration is not taken for a step of bob's. */
	assert_string_equal(reg(f, &alice, 9, 0, ALICE, alice_pid(0), "lbma"),
			    "");
	assert_string_not_equal(
		reg(f, &root_peer, 9, 0, BOB, alice_pid(0), "imar2"), "");
	assert_int_equal(f->s.nsteps, 2);
	assert_int_equal(f->s.steps[1].uid, ALICE);
	assert_int_equal(f->s.steps[1].ntasks, 1);
}

/* Each user has at most 8 steps and 64 tasks a step. */
static void user_limits(void **state)
{
	struct fixture *f = *state;
	int k = 0;

	for (unsigned job = 1; job <= 8; job++)
		assert_string_equal(
			reg(f, &alice, job, 0, ALICE, alice_pid(k++), "lbma"),
			"");
	assert_string_equal(reg(f, &alice, 9, 0, ALICE, alice_pid(k), "lbma"),
			    "limit");
	says(f, "too many steps");
	assert_false(managed(f, alice_pid(k)));
	/* Another user is not held by alice's steps. */
	assert_string_equal(reg(f, &bob, 9, 0, BOB, bob_pid(0), "lbma"), "");
	/* Tasks: job 1 has one; 63 more. */
	for (int t = 1; t < 64; t++)
		assert_string_equal(
			reg(f, &alice, 1, 0, ALICE, alice_pid(k++), "lbma"),
			"");
	assert_int_equal(f->s.steps[0].ntasks, 64);
	assert_string_equal(reg(f, &alice, 1, 0, ALICE, alice_pid(k), "lbma"),
			    "limit");
	says(f, "too many tasks");
	assert_false(managed(f, alice_pid(k)));
	/* Root is not held by a user's limit, for the same user. */
	assert_string_equal(
		reg(f, &root_peer, 1, 0, ALICE, alice_pid(k), "lbma"), "");
}

/* Who sees, reads and ends which step. */
static void who_sees_what(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(reg(f, &alice, 1, 0, ALICE, alice_pid(0), "lbma"),
			    "");
	assert_string_equal(reg(f, &root_peer, 2, 0, BOB, bob_pid(0), "lbma"),
			    "");
	assert_int_equal(status_steps(f, &alice), 1);
	assert_int_equal(status_steps(f, &bob), 1);
	assert_int_equal(status_steps(f, &root_peer), 2);
	/* Bob neither reads nor ends alice's step. */
	assert_string_equal(ask(f, &bob,
				"{'v': 1, 'op': 'report', 'job': 1, 'step': "
				"0}"),
			    "no-step");
	assert_string_equal(ask(f, &bob,
				"{'v': 1, 'op': 'unregister', 'job': 1, "
				"'step': 0}"),
			    "no-step");
	/* Bob reads the Slurm step root registered for him, but only root
	 * ends it. */
	assert_string_equal(ask(f, &bob,
				"{'v': 1, 'op': 'report', 'job': 2, 'step': "
				"0}"),
			    "");
	assert_string_equal(ask(f, &bob,
				"{'v': 1, 'op': 'unregister', 'job': 2, "
				"'step': 0}"),
			    "no-step");
	assert_true(managed(f, bob_pid(0)));
	/* Alice ends hers: a report, and the machine lets go of the task. */
	assert_string_equal(ask(f, &alice,
				"{'v': 1, 'op': 'unregister', 'job': 1, "
				"'step': 0}"),
			    "");
	struct json_object *r, *sl, *v;
	assert_true(json_object_object_get_ex(f->reply, "report", &r));
	assert_true(json_object_object_get_ex(r, "slurm", &sl));
	assert_true(json_object_object_get_ex(sl, "uid", &v));
	assert_int_equal(json_object_get_int(v), ALICE);
	assert_false(managed(f, alice_pid(0)));
	assert_int_equal(f->s.nsteps, 1);
	assert_string_equal(ask(f, &root_peer,
				"{'v': 1, 'op': 'unregister', 'job': 2, "
				"'step': 0, 'uid': %d}",
				BOB),
			    "");
	assert_false(managed(f, bob_pid(0)));
	assert_int_equal(f->s.nsteps, 0);
	assert_int_equal(nl_engine_ndomains(f->s.engine), 0);
}

/* The site's allow=, force= and period bounds hold for every peer. */
static void site_policy(void **state)
{
	struct fixture *f = *state;

	f->cfg.allow = 1u << NL_POLICY_IMAR2 | 1u << NL_POLICY_MONITOR;
	assert_string_equal(
		reg(f, &root_peer, 1, 0, ALICE, alice_pid(0), "lbma"),
		"permission");
	says(f, "not allowed");
	assert_string_equal(reg(f, &alice, 1, 0, ALICE, alice_pid(0), "imar2"),
			    "");
	f->cfg.allow = 0;
	f->cfg.force = NL_POLICY_MONITOR;
	assert_string_equal(reg(f, &alice, 2, 0, ALICE, alice_pid(1), "lbma"),
			    "");
	says(f, "forces monitor");
	assert_int_equal(f->s.steps[1].kind, NL_POLICY_MONITOR);
	f->cfg.force = -1;
	assert_string_equal(ask(f, &alice,
				"{'v': 1, 'op': 'register', 'job': 3, 'step': "
				"0, 'uid': 1000, 'pid': %d, 'policy': 'lbma', "
				"'cpus': '0-7', "
				"'period': 1000}",
				alice_pid(2)),
			    "");
	says(f, "held to this node's bounds");
}

/*
 * The report of a step an agent that stops hands to its user: as the
 * user, with the job's group, never with root's group made up: a uid no
 * name is known for (NSS down) and a registration without a group: no
 * report rather than one written with group 0.
 */
static void user_copy_never_with_roots_group(void **state)
{
	(void)state;
	char d[] = "/tmp/numalot-usercopy.XXXXXX";
	struct nl_step st = {.job = 5, .step = 0, .uid = 4242424, .by_root = 1};
	struct stat sb;

	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(d));
	assert_int_equal(chmod(d, 0777), 0);
	snprintf(st.report, sizeof(st.report), "%s/r.json", d);
	struct json_object *r = json_tokener_parse("{\"threads\": []}");
	nl_server_user_copy(NULL, &st, r);
	assert_int_equal(stat(st.report, &sb) == 0 ? (int)sb.st_gid : -1, -1);
	/* With its group known (the job's, from the registration), it is
	 * written, the user's. */
	st.gid = 4242;
	st.has_gid = 1;
	nl_server_user_copy(NULL, &st, r);
	assert_int_equal(stat(st.report, &sb), 0);
	assert_int_equal(sb.st_uid, 4242424);
	assert_int_equal(sb.st_gid, 4242);
	json_object_put(r);
	char cmd[80];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(malformed_requests, setup,
						teardown),
		cmocka_unit_test_setup_teardown(user_registers_own, setup,
						teardown),
		cmocka_unit_test_setup_teardown(root_registers_any, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			root_takes_over_users_registration, setup, teardown),
		cmocka_unit_test_setup_teardown(user_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(who_sees_what, setup, teardown),
		cmocka_unit_test_setup_teardown(site_policy, setup, teardown),
		cmocka_unit_test(user_copy_never_with_roots_group),
	};

	nl_log_setup(NL_LOG_ERROR, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
