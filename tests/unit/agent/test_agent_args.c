/*
 * Unit tests of numalotd's command line (numalotd(8)): getopt_long, so
 * "--socket PATH" as well as "--socket=PATH"; --help and --version; a bad
 * option or value named, with exit status 2.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_args.h"
#include "util.h"

static char out_text[4096], err_text[4096];

/* Parse the words of line into c; out and err captured. */
static int parse(struct nl_agent_config *c, const char *line)
{
	static char buf[1024];
	char *argv[32];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *save, *t = strtok_r(buf, " ", &save); t && argc < 31;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	FILE *out = fmemopen(out_text, sizeof(out_text), "w");
	FILE *err = fmemopen(err_text, sizeof(err_text), "w");
	nl_agent_config_default(c);
	int rc = nl_agent_args(c, argc, argv, out, err);
	fclose(out);
	fclose(err);
	return rc;
}

static void good_options(void **state)
{
	(void)state;
	struct nl_agent_config c;
	assert_int_equal(parse(&c, "numalotd --socket /tmp/a.sock --idle-exit "
				   "0 --period=0.5 --allow lbma,monitor "
				   "--force monitor --syslog --ready-fd 5 "
				   "--log-level debug --report-dir /var/r"),
			 0);
	assert_string_equal(c.socket_path, "/tmp/a.sock");
	assert_true(c.idle_exit_s == 0 && c.default_period_s == 0.5);
	assert_true(c.allow != 0 && c.force >= 0);
	assert_true(c.use_syslog && c.ready_fd == 5 && c.log_level == 3);
	assert_string_equal(c.report_dir, "/var/r");
	assert_int_equal(parse(&c, "numalotd --socket=/tmp/b.sock"), 0);
	assert_string_equal(c.socket_path, "/tmp/b.sock");
	/* The agent's own nice: raised to NL_OWN_NICE unless told. */
	assert_int_equal(parse(&c, "numalotd"), 0);
	assert_true(c.nice == NL_OWN_NICE && !c.nice_given);
	assert_int_equal(parse(&c, "numalotd --nice=5"), 0);
	assert_true(c.nice == 5 && c.nice_given);
	/* --force= with nothing: none forced. */
	assert_int_equal(parse(&c, "numalotd --force="), 0);
	assert_int_equal(c.force, -1);
}

static void help_and_version(void **state)
{
	(void)state;
	struct nl_agent_config c;
	assert_int_equal(parse(&c, "numalotd --help"), 1);
	assert_non_null(strstr(out_text, "usage: numalotd"));
	assert_non_null(strstr(out_text, "--socket=PATH"));
	assert_int_equal(parse(&c, "numalotd -h"), 1);
	assert_int_equal(parse(&c, "numalotd --version"), 1);
	assert_non_null(strstr(out_text, "numalotd "));
}

static void bad_input_is_named(void **state)
{
	(void)state;
	struct nl_agent_config c;
	static const char *const cases[][2] = {
		{"numalotd --sockett=/x", "\"--sockett\""},
		{"numalotd --socket", "--socket wants a value"},
		{"numalotd --syslog=yes", "--syslog takes no value"},
		{"numalotd --idle-exit=soon", "\"soon\""},
		{"numalotd --period=0", "--period wants seconds"},
		{"numalotd --counters=pmu", "\"pmu\""},
		{"numalotd --allow=lbma,static", "\"static\""},
		{"numalotd --force=fast", "\"fast\""},
		{"numalotd --log-level=loud", "\"loud\""},
		{"numalotd --ready-fd=1", "\"1\""},
		{"numalotd --nice=-21", "--nice wants a whole number"},
		{"numalotd --nice=high", "\"high\""},
		{"numalotd extra", "takes no operand (got \"extra\")"},
		{"numalotd -x", "\"-x\""},
		/* Site policy that would fail open is refused. */
		{"numalotd --allow=", "--allow wants at least one"},
		{"numalotd --allow=,", "--allow wants at least one"},
		{"numalotd --min-period=5 --max-period=2",
		 "--min-period (5 s) is above --max-period (2 s)"},
		{"numalotd --report-dir=site/reports",
		 "--report-dir wants an absolute path, not \"site/reports\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(&c, cases[i][0]), 2);
		if (!strstr(err_text, cases[i][1]))
			fail_msg("%s: \"%s\" not in: %s", cases[i][0],
				 cases[i][1], err_text);
	}
}

/* The raised priority is given up once the agent used more than a
 * quarter of a CPU over a window, and only then; never when not raised. */
static void nice_guard_gives_up(void **state)
{
	(void)state;
	struct nl_nice_guard g = {.raised = 1};
	double w = NL_NICE_GUARD_WINDOW_S;

	assert_int_equal(nl_nice_guard_check(&g, 100, 5), 0); /* starts */
	/* 20% of a CPU over a window: kept. */
	assert_int_equal(nl_nice_guard_check(&g, 100 + w / 2, 5 + w), 0);
	assert_int_equal(nl_nice_guard_check(&g, 100 + w, 5 + 0.2 * w), 0);
	assert_true(g.raised);
	/* 30% over the next: given up, once. */
	assert_int_equal(nl_nice_guard_check(&g, 100 + 2 * w, 5 + 0.5 * w), 1);
	assert_false(g.raised);
	assert_int_equal(nl_nice_guard_check(&g, 100 + 3 * w, 5 + 3 * w), 0);
	/* Not raised (no privilege, or a site's --nice not higher): never. */
	struct nl_nice_guard n = {0};
	assert_int_equal(nl_nice_guard_check(&n, 1, 0), 0);
	assert_int_equal(nl_nice_guard_check(&n, 1 + w, w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_options),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(bad_input_is_named),
		cmocka_unit_test(nice_guard_gives_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
