/* Unit tests: the agent's protocol decoder, framing and the plugstack
 * parser: every bad input is refused with a message naming the bad part. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol.h"
#include "site.h"
#include "util.h"

static int decode(const char *text, struct nl_request *q, char *err)
{
	return nl_proto_decode(text, strlen(text), q, err, 256);
}

static void good_requests(void **state)
{
	(void)state;
	struct nl_request q;
	char err[256];
	assert_int_equal(decode("{\"v\":1,\"op\":\"hello\"}", &q, err), 0);
	assert_int_equal(q.op, NL_OP_HELLO);
	/* Strict JSON is all of JSON: its numbers, escapes and spaces. */
	assert_int_equal(
		decode("\t{ \"v\" : 1 ,\r\n\"op\":\"hel\\u006co\", "
		       "\"x\": [0, -0, 1.5e-3, 2E+2, -7.25, \"a\\\"'b\"]}\n",
		       &q, err),
		0);
	assert_int_equal(q.op, NL_OP_HELLO);
	assert_int_equal(
		decode("{\"v\":1,\"op\":\"register\",\"job\":7,\"step\":"
		       "4294967291,\"uid\":1000,\"pid\":4242,\"policy\":"
		       "\"lbma\",\"cpus\":\"0-3\",\"period\":0.5,\"params\":"
		       "{\"max_migrations\":\"3\"}}",
		       &q, err),
		0);
	assert_int_equal(q.op, NL_OP_REGISTER);
	assert_int_equal(q.job, 7);
	assert_true(q.step == 4294967291u);
	assert_int_equal(q.pid, 4242);
	assert_string_equal(q.policy, "lbma");
	assert_true(q.period_s == 0.5);
	assert_int_equal(q.nparams, 1);
	assert_string_equal(q.param_key[0], "max_migrations");
	/* Round trip. */
	char *text = nl_proto_encode(&q);
	struct nl_request q2;
	assert_int_equal(decode(text, &q2, err), 0);
	assert_int_equal(q2.pid, 4242);
	assert_string_equal(q2.cpus, "0-3");
	free(text);
}

static void bad_requests(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *says;
	} cases[] = {
		{"", "not one JSON value"},
		{"[1,2]", "must be a JSON object"},
		{"{\"v\":1,\"op\":\"hello\"} trailing", "not one JSON value"},
		/* Strict JSON only (issue 23, 7): json-c 0.16's strict mode
		 * takes single-quoted names, NaN, Infinity and raw control
		 * characters; the rest are named more clearly than it does. */
		{"{'v':1,'op':'hello'}", "a single quote"},
		{"{\"v\":1,'op':\"hello\"}", "(byte 7: a single quote"},
		{"{\"v\":1,\"op\":'hello'}", "a single quote"},
		{"{\"v\":1,\"op\":\"hello\"/* c */}", "(byte 19: a comment)"},
		{"// c\n{\"v\":1,\"op\":\"hello\"}", "(byte 0: a comment)"},
		{"{\"v\":1,\"op\":\"hello\",}", "(byte 19: a trailing comma)"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":[1, ]}", "a trailing comma"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":NaN}", "NaN or Infinity"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":-Infinity}",
		 "NaN or Infinity"},
		{"{\"v\":1,\"op\":\"hel\tlo\"}", "a control character"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":01}", "a malformed number"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":1.}", "a malformed number"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":-.5}", "a malformed number"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":1.e5}", "a malformed number"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":[-01]}",
		 "a malformed number"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":1e}", "a malformed number"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":-}", "a malformed number"},
		{"{\"v\":1,\"op\":\"hello\",\"x\":TRUE}", "boolean expected"},
		{"{\"v\":1,\"op\":\"\xff\"}",
		 "(byte 13: invalid utf-8 string)"},
		{"{\"v\":1,\"op\":\"hello\"", "it ends too soon"},
		{"{\"op\":\"hello\"}", "\"v\" is missing"},
		{"{\"v\":1}", "\"op\" is missing"},
		{"{\"v\":1,\"op\":\"explode\"}", "unknown op \"explode\""},
		{"{\"v\":1,\"op\":\"report\",\"job\":1}",
		 "\"step\" is missing"},
		{"{\"v\":1,\"op\":\"report\",\"job\":-1,\"step\":0}",
		 "\"job\" is out of range"},
		{"{\"v\":1,\"op\":\"report\",\"job\":\"7\",\"step\":0}",
		 "\"job\" must be a whole number"},
		{"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		 "\"pid\":0,\"policy\":\"lbma\",\"cpus\":\"0\"}",
		 "\"pid\" is out of range"},
		{"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		 "\"pid\":5,\"policy\":7,\"cpus\":\"0\"}",
		 "\"policy\" must be a string"},
		{"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		 "\"pid\":5,\"policy\":\"lbma\",\"cpus\":\"0\",\"period\":-1}",
		 "\"period\" must be above 0"},
		{"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,"
		 "\"pid\":5,\"policy\":\"lbma\",\"cpus\":\"0\",\"params\":"
		 "{\"x\":1}}",
		 "\"params.x\" must be a string"},
	};
	struct nl_request q;
	char err[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		assert_int_equal(decode(cases[i].text, &q, err), -EINVAL);
		if (!strstr(err, cases[i].says))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err,
				 cases[i].says);
	}
	assert_int_equal(decode("{\"v\":2,\"op\":\"hello\"}", &q, err),
			 -EPROTO);
	assert_non_null(strstr(err, "version 2"));
	/* Length is respected: no reading past it. */
	assert_int_equal(nl_proto_decode("{\"v\":1,\"op\":\"hello\"}", 5, &q,
					 err, sizeof(err)),
			 -EINVAL);
}

static void framing(void **state)
{
	(void)state;
	int sv[2];
	char *body;
	size_t len;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(nl_proto_send(sv[0], "{\"a\":1}", 7, 1000), 0);
	assert_int_equal(nl_proto_recv(sv[1], &body, &len, 1000), 0);
	assert_int_equal(len, 7);
	assert_string_equal(body, "{\"a\":1}");
	free(body);
	/* A frame announcing more than the limit is refused unread. */
	unsigned char big[4] = {0, 0x10, 0, 1};
	assert_int_equal(write(sv[0], big, 4), 4);
	assert_int_equal(nl_proto_recv(sv[1], &body, &len, 1000), -EMSGSIZE);
	/* A peer that says nothing times out. */
	assert_int_equal(nl_proto_recv(sv[1], &body, &len, 50), -ETIMEDOUT);
	close(sv[0]);
	assert_int_equal(nl_proto_recv(sv[1], &body, &len, 1000), -ECONNRESET);
	close(sv[1]);
	char *reply;
	assert_true(nl_proto_call("/nonexistent/sock", "{}", &reply, 100, 0) <
		    0);
}

/* What a reply is scrubbed with: each byte of an invalid UTF-8 sequence
 * becomes '?', valid characters of 1 to 4 bytes stay. */
static void utf8(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain", "plain"},
		{"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},
		{"\xe2\x82\xac \xf0\x9f\x98\x80",
		 "\xe2\x82\xac \xf0\x9f\x98\x80"},
		{"\xff\xfe", "??"},
		{"cut \xc3", "cut ?"},
		{"\xc0\x80 overlong", "?? overlong"},
		{"\xed\xa0\x80 surrogate", "??? surrogate"},
		{"\xf4\x90\x80\x80 past", "???? past"},
		{"\xe2\x82x", "??x"},
	};
	char buf[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		nl_utf8_scrub(buf);
		if (strcmp(buf, cases[i].out))
			fail_msg("case %zu: \"%s\", not \"%s\"", i, buf,
				 cases[i].out);
	}
	/* Never past the length given. */
	assert_int_equal(nl_utf8_char("\xc3\xa9", 1), 0);
	assert_int_equal(nl_utf8_char("\xc3\xa9", 2), 2);
}

static int complaints;
static char last[1024];
static void complain(const char *msg)
{
	complaints++;
	snprintf(last, sizeof(last), "%s", msg);
}

static void plugstack(void **state)
{
	(void)state;
	struct nl_site s;
	char *good[] = {"default=monitor",    "allow=imar2,monitor",
			"force=imar2",	      "report_dir=/var/log/numalot",
			"period=0.5",	      "min_period=0.2",
			"max_period=5",	      "counters=perf",
			"idle_exit=0",	      "topology=numa:2,core:4,pu:1",
			"socket=/run/x.sock", "agent=/opt/numalotd"};
	nl_site_default(&s, "/usr/sbin/numalotd");
	complaints = 0;
	assert_int_equal(nl_site_parse(&s, 12, good, complain), 0);
	assert_int_equal(complaints, 0);
	assert_int_equal(s.default_choice, NL_CHOICE_MONITOR);
	assert_int_equal(s.force, NL_CHOICE_OF(NL_POLICY_IMAR2));
	assert_true(s.allow & (1u << NL_CHOICE_OFF)); /* always */
	assert_false(s.allow & (1u << NL_CHOICE_OF(NL_POLICY_LBMA)));
	assert_string_equal(s.topology, "numa:2 core:4 pu:1");
	assert_true(s.period_s == 0.5 && s.max_period_s == 5);
	/* A task's binding: a start by default, the limit with keep. */
	assert_int_equal(s.keep_bindings, 0);
	char *keep[] = {"bindings=keep", "bindings=maybe"};
	complaints = 0;
	assert_int_equal(nl_site_parse(&s, 2, keep, complain), 1);
	assert_int_equal(complaints, 1);
	assert_int_equal(s.keep_bindings, 1);
	/* The agent's own nice: raised to -10 by the agent unless set. */
	assert_false(s.agent_nice_set);
	char *nice[] = {"agent_nice=5", "agent_nice=1.5", "agent_nice=-30"};
	complaints = 0;
	assert_int_equal(nl_site_parse(&s, 3, nice, complain), 2);
	assert_true(s.agent_nice_set && s.agent_nice == 5);
	assert_non_null(strstr(last, "a whole number from -20 to 19"));

	/* Bad ones are named, skipped, and the rest still apply. */
	char *bad[] = {"colour=blue", "period=fast",
		       "allow=warp",  "report_dir=relative/dir",
		       "noequals",    "default=lbma"};
	nl_site_default(&s, "/usr/sbin/numalotd");
	complaints = 0;
	assert_int_equal(nl_site_parse(&s, 6, bad, complain), 5);
	/* ...but a bad allow= fails closed, and says so. */
	assert_int_equal(complaints, 6);
	assert_true(s.closed);
	assert_int_equal(s.default_choice, NL_CHOICE_OFF);
	assert_int_equal(s.allow, 1u << NL_CHOICE_OFF);
	assert_true(s.period_s == 1.0);
	assert_non_null(strstr(last, "every --numalot but off is refused"));

	/* Users' values. */
	char msg[256];
	enum nl_choice c;
	double p;
	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_parse(&s, 12, good, complain);
	assert_int_equal(nl_site_check_choice(&s, "imar2", &c, msg, 256), 0);
	assert_int_equal(nl_site_check_choice(&s, "bogus", &c, msg, 256), -1);
	assert_non_null(strstr(msg, "imar2, monitor, off"));
	assert_int_equal(nl_site_check_choice(&s, "lbma", &c, msg, 256), -1);
	assert_non_null(strstr(msg, "not allowed"));
	/* srun --numalot=lbma --numalot=imar2: refused, both named. */
	char first[32] = "";
	assert_int_equal(nl_site_check_repeat(first, sizeof(first), "numalot",
					      "lbma", msg, 256),
			 0);
	assert_int_equal(nl_site_check_repeat(first, sizeof(first), "numalot",
					      "lbma", msg, 256),
			 0);
	assert_int_equal(nl_site_check_repeat(first, sizeof(first), "numalot",
					      "imar2", msg, 256),
			 -1);
	assert_string_equal(msg, "numalot: --numalot given twice, as \"lbma\" "
				 "and \"imar2\": give it once");
	assert_string_equal(first, "lbma");
	assert_int_equal(nl_site_check_period(&s, "1", &p, msg, 256), 0);
	assert_int_equal(nl_site_check_period(&s, "0.1", &p, msg, 256), -1);
	assert_non_null(strstr(msg, "0.2 to 5"));
}

/* A typo in allow= or force= fails closed: only off, said in one line
 * for users; other bad values keep their defaults and leave it open. */
static void plugstack_typo_fails_closed(void **state)
{
	(void)state;
	struct nl_site s;
	char msg[300];
	enum nl_choice c;
	char *typo[] = {"allow=monitor,imar3", "force=monitr"};
	char *force_typo[] = {"default=monitor", "force=monitr"};
	char *other[] = {"period=fast"};

	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_int_equal(nl_site_parse(&s, 2, typo, NULL), 2);
	assert_true(s.closed);
	assert_int_equal(nl_site_check_choice(&s, "lbma", &c, msg, 300), -1);
	assert_non_null(strstr(msg, "misconfigured on this cluster"));
	assert_non_null(strstr(msg, "only --numalot=off"));
	assert_int_equal(nl_site_check_choice(&s, "monitor", &c, msg, 300), -1);
	assert_int_equal(nl_site_check_choice(&s, "off", &c, msg, 300), 0);
	nl_site_misconfigured(&s, msg, sizeof(msg));
	assert_non_null(strstr(msg, "only --numalot=off"));

	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_int_equal(nl_site_parse(&s, 2, force_typo, NULL), 1);
	assert_true(s.closed);
	assert_int_equal(s.default_choice, NL_CHOICE_OFF);
	assert_int_equal(s.force, -1);

	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_misconfigured(&s, msg, sizeof(msg));
	assert_string_equal(msg, "");
	assert_int_equal(nl_site_parse(&s, 1, other, NULL), 1);
	assert_false(s.closed);
	assert_int_equal(nl_site_check_choice(&s, "lbma", &c, msg, 300), 0);
	nl_site_misconfigured(&s, msg, sizeof(msg));
	assert_non_null(strstr(msg, "misconfigured on this cluster"));
	assert_null(strstr(msg, "only --numalot=off"));
}

/* The step's policy (issue 26, item 3): force=, then the user's, then
 * default=; a --numalot-report alone, where numalot would be off, asks
 * for monitor where the site allows it, and is refused where it cannot be
 * had. */
static void step_choice(void **state)
{
	(void)state;
	struct nl_site s;
	char msg[300];
	enum nl_choice c;
	int implied;
	char *no_monitor[] = {"allow=imar2,lbma"};
	char *force_off[] = {"force=off"};
	char *force_lbma[] = {"force=lbma", "allow=lbma"};
	char *lbma_default[] = {"default=lbma"};
	char *never[] = {"user_reports=never"};

	nl_site_default(&s, "/usr/sbin/numalotd");
	/* Nothing asked: the default, off. */
	assert_int_equal(nl_site_step_choice(&s, -1, 0, &c, &implied, msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OFF);
	assert_false(implied);
	/* --numalot-report alone: monitor. */
	assert_int_equal(nl_site_step_choice(&s, -1, 1, &c, &implied, msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_MONITOR);
	assert_true(implied);
	/* ...with --numalot: the user's. */
	assert_int_equal(nl_site_step_choice(&s, NL_CHOICE_OF(NL_POLICY_LBMA),
					     1, &c, &implied, msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OF(NL_POLICY_LBMA));
	assert_false(implied);
	/* --numalot=off --numalot-report: off, as asked. */
	assert_int_equal(nl_site_step_choice(&s, NL_CHOICE_OFF, 1, &c, &implied,
					     msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OFF);

	/* monitor not allowed: refused, saying why and what is. */
	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_parse(&s, 1, no_monitor, NULL);
	assert_int_equal(nl_site_step_choice(&s, -1, 1, &c, &implied, msg, 300),
			 -1);
	assert_int_equal(c, NL_CHOICE_OFF);
	assert_string_equal(
		msg, "numalot: --numalot-report needs numalot on for the step; "
		     "alone it asks for monitor, which this cluster does not "
		     "allow (allowed: imar2, lbma, off): add --numalot=POLICY");
	assert_int_equal(nl_site_step_choice(&s, NL_CHOICE_OF(NL_POLICY_IMAR2),
					     1, &c, &implied, msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OF(NL_POLICY_IMAR2));

	/* force=off: refused; force=lbma: lbma, whatever monitor is. */
	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_parse(&s, 1, force_off, NULL);
	assert_int_equal(nl_site_step_choice(&s, -1, 1, &c, &implied, msg, 300),
			 -1);
	assert_non_null(strstr(msg, "forces --numalot=off"));
	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_parse(&s, 2, force_lbma, NULL);
	assert_int_equal(nl_site_step_choice(&s, -1, 1, &c, &implied, msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OF(NL_POLICY_LBMA));
	assert_false(implied);
	assert_int_equal(nl_site_step_choice(&s, NL_CHOICE_OFF, 0, &c, &implied,
					     msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OF(NL_POLICY_LBMA));

	/* A default that is on stays the default. */
	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_parse(&s, 1, lbma_default, NULL);
	assert_int_equal(nl_site_step_choice(&s, -1, 1, &c, &implied, msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OF(NL_POLICY_LBMA));
	assert_false(implied);

	/* user_reports=never: the report is ignored, so asks for nothing. */
	nl_site_default(&s, "/usr/sbin/numalotd");
	nl_site_parse(&s, 1, never, NULL);
	assert_int_equal(nl_site_step_choice(&s, -1, 1, &c, &implied, msg, 300),
			 0);
	assert_int_equal(c, NL_CHOICE_OFF);
	assert_false(implied);
}

/* Site collection's arguments (docs/slurm.md): user_reports= and
 * site_log=, and a bad value named with what it takes. */
static void plugstack_collection(void **state)
{
	(void)state;
	struct nl_site s;
	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_int_equal(s.user_reports, NL_USER_REPORTS_REQUEST);
	assert_string_equal(s.site_log, "");
	char *good[] = {"user_reports=never", "site_log=/var/log/n/steps.log"};
	complaints = 0;
	assert_int_equal(nl_site_parse(&s, 2, good, complain), 0);
	assert_int_equal(s.user_reports, NL_USER_REPORTS_NEVER);
	assert_string_equal(s.site_log, "/var/log/n/steps.log");
	char *always[] = {"user_reports=always"};
	assert_int_equal(nl_site_parse(&s, 1, always, complain), 0);
	assert_int_equal(s.user_reports, NL_USER_REPORTS_ALWAYS);

	char *bad[] = {"user_reports=sometimes", "site_log=steps.log"};
	assert_int_equal(nl_site_parse(&s, 1, bad, complain), 1);
	assert_non_null(strstr(last, "user_reports=sometimes"));
	assert_non_null(strstr(last, "always, request or never"));
	assert_int_equal(s.user_reports, NL_USER_REPORTS_ALWAYS);
	assert_int_equal(nl_site_parse(&s, 1, bad + 1, complain), 1);
	assert_non_null(strstr(last, "an absolute path"));
	assert_string_equal(s.site_log, "/var/log/n/steps.log");
	char *unknown[] = {"sitelog=/x"};
	assert_int_equal(nl_site_parse(&s, 1, unknown, complain), 1);
	assert_non_null(strstr(last, "user_reports, site_log"));
}

/* A register request may carry Slurm's node name (root's reports and
 * site copies say it); it goes into file names, so only a name. */
static void register_node(void **state)
{
	(void)state;
	struct nl_request q;
	char err[256];
	const char *base = "{\"v\":1,\"op\":\"register\",\"job\":1,"
			   "\"step\":0,\"uid\":0,\"pid\":1,\"policy\":"
			   "\"lbma\",\"cpus\":\"0\",\"node\":";
	char body[512];
	snprintf(body, sizeof(body), "%s\"node-7.a_b\"}", base);
	assert_int_equal(nl_proto_decode(body, strlen(body), &q, err, 256), 0);
	assert_string_equal(q.node, "node-7.a_b");
	char *enc = nl_proto_encode(&q);
	assert_non_null(strstr(enc, "\"node\":\"node-7.a_b\""));
	free(enc);
	const char *bad[] = {"\"../etc\"}", "\"a/b\"}", "\".hidden\"}",
			     "\"a b\"}", "7}"};
	for (size_t i = 0; i < 5; i++) {
		snprintf(body, sizeof(body), "%s%s", base, bad[i]);
		assert_int_equal(
			nl_proto_decode(body, strlen(body), &q, err, 256),
			-EINVAL);
		assert_non_null(strstr(err, "\"node\""));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_requests),
		cmocka_unit_test(bad_requests),
		cmocka_unit_test(framing),
		cmocka_unit_test(utf8),
		cmocka_unit_test(plugstack),
		cmocka_unit_test(plugstack_typo_fails_closed),
		cmocka_unit_test(plugstack_collection),
		cmocka_unit_test(step_choice),
		cmocka_unit_test(register_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
