/*
 * Unit tests of the site's file, /etc/numalot/numalot.conf (siteconf.h):
 * the plugin reads it before its plugstack arguments, which win
 * (nl_site_load); numalotd reads it before its command line, which wins;
 * both name the file and line of a bad word; a file others may write or
 * one with a bad allow= fails closed (docs/slurm.md, "Site policy").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_args.h"
#include "policy.h"
#include "site.h"
#include "siteconf.h"

static char dir[] = "/tmp/numalot-siteconf.XXXXXX";
static char told[4096];

static void complain(const char *msg)
{
	size_t n = strlen(told);
	snprintf(told + n, sizeof(told) - n, "%s\n", msg);
}

/* Write text as the file name in the test's folder; its path. */
static const char *conf(const char *name, const char *text, int mode)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, (mode_t)mode);
	return path;
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void reads_words_lines_and_comments(void **state)
{
	(void)state;
	struct nl_siteconf c;
	char why[300];
	const char *p = conf("a.conf",
			     "# a comment: allow=none\n"
			     "allow=imar2,monitor   report_dir=/var/r # too\n"
			     "\n\tperiod=2\n",
			     0644);
	assert_int_equal(nl_siteconf_read(p, &c, why, sizeof(why)), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.word[0], "allow=imar2,monitor");
	assert_int_equal(c.line[0], 2);
	assert_string_equal(c.word[1], "report_dir=/var/r");
	assert_string_equal(c.word[2], "period=2");
	assert_int_equal(c.line[2], 4);
	/* No file: no settings, no error. */
	assert_int_equal(nl_siteconf_read("/nonexistent/numalot.conf", &c, why,
					  sizeof(why)),
			 0);
	assert_int_equal(c.n, 0);
	/* One others may write is refused, saying why. */
	p = conf("open.conf", "allow=lbma\n", 0666);
	assert_true(nl_siteconf_read(p, &c, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "writable by root alone"));
	assert_non_null(strstr(why, "mode 666"));
}

static void plugin_file_then_plugstack(void **state)
{
	(void)state;
	struct nl_site s;
	const char *p = conf("site.conf",
			     "allow=imar2,monitor\nreport_dir=/var/r "
			     "period=2 max_period=5\n",
			     0644);
	char *av[] = {"period=3"};
	told[0] = 0;
	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_int_equal(nl_site_load(&s, p, 1, av, complain), 0);
	assert_string_equal(told, "");
	assert_string_equal(s.conf, p);
	assert_true(s.allow & (1u << NL_CHOICE_OF(NL_POLICY_IMAR2)));
	assert_false(s.allow & (1u << NL_CHOICE_OF(NL_POLICY_LBMA)));
	assert_string_equal(s.report_dir, "/var/r");
	assert_true(s.period_s == 3 && s.max_period_s == 5);
	/* config= names another file; config=none, no file. */
	char *other[] = {"config=none", "default=monitor"};
	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_int_equal(nl_site_load(&s, p, 2, other, complain), 0);
	assert_true(s.allow & (1u << NL_CHOICE_OF(NL_POLICY_LBMA)));
	assert_int_equal(s.default_choice, NL_CHOICE_MONITOR);
	assert_string_equal(s.report_dir, "");
	/* What the line sets that a service's agent would not see. */
	char *line[] = {"min_period=0.5", "period=2",	   "wait=2",
			"socket=/x",	  "allow=imar2",   "allow=lbma",
			"idle_exit=0",	  "report_dir=/r", "config=none"};
	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_int_equal(nl_site_load(&s, p, 9, line, complain), 0);
	assert_string_equal(s.line_agent_keys,
			    "min_period=, period=, allow=, report_dir=");
}

static void plugin_bad_file_is_named_and_fails_closed(void **state)
{
	(void)state;
	struct nl_site s;
	char msg[300];
	enum nl_choice c;
	const char *p = conf("bad.conf", "default=off\n\nallow=imar3\n", 0644);
	told[0] = 0;
	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_true(nl_site_load(&s, p, 0, NULL, complain) > 0);
	assert_non_null(strstr(told, "bad.conf line 3"));
	assert_non_null(strstr(told, "allow=imar3"));
	assert_int_equal(nl_site_check_choice(&s, "lbma", &c, msg, 300), -1);
	assert_int_equal(nl_site_check_choice(&s, "off", &c, msg, 300), 0);
	/* A file others may write: what it allows is not known. */
	p = conf("open.conf", "allow=lbma\n", 0664);
	told[0] = 0;
	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_true(nl_site_load(&s, p, 0, NULL, complain) > 0);
	assert_non_null(strstr(told, "writable by root alone"));
	assert_int_equal(nl_site_check_choice(&s, "lbma", &c, msg, 300), -1);
	/* A file in a folder a user may change: the user could take it
	 * away (and with it every limit), or put another of root's there.
	 * Read or missing, it fails closed. */
	if (geteuid() == 0) {
		char sub[160], path[200];
		snprintf(sub, sizeof(sub), "%s/theirs", dir);
		assert_int_equal(mkdir(sub, 0755), 0);
		assert_int_equal(chown(sub, 65534, 65534), 0);
		snprintf(path, sizeof(path), "%s/numalot.conf", sub);
		told[0] = 0;
		nl_site_default(&s, "/usr/sbin/numalotd");
		assert_true(nl_site_load(&s, path, 0, NULL, complain) > 0);
		assert_non_null(strstr(told, "belongs to uid 65534"));
		assert_int_equal(nl_site_check_choice(&s, "lbma", &c, msg, 300),
				 -1);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs("allow=lbma\n", f);
		fclose(f);
		told[0] = 0;
		nl_site_default(&s, "/usr/sbin/numalotd");
		assert_true(nl_site_load(&s, path, 0, NULL, complain) > 0);
		assert_true(s.closed);
	}
	/* A relative config= is refused too. */
	char *rel[] = {"config=numalot.conf"};
	nl_site_default(&s, "/usr/sbin/numalotd");
	assert_true(nl_site_load(&s, p, 1, rel, complain) > 0);
	assert_true(s.closed);
}

/* Every key of the file is one the plugin takes (a bad value, not an
 * unknown option), and only the agent's map to an option of numalotd. */
static void keys_are_the_plugins(void **state)
{
	(void)state;
	char keys[400], word[64];
	snprintf(keys, sizeof(keys), "%s", nl_siteconf_keys());
	int n = 0;
	for (char *save, *k = strtok_r(keys, ", ", &save); k;
	     k = strtok_r(NULL, ", ", &save), n++) {
		struct nl_site s;
		char *av[] = {word};
		snprintf(word, sizeof(word), "%s=", k);
		told[0] = 0;
		nl_site_default(&s, "/usr/sbin/numalotd");
		nl_site_parse(&s, 1, av, complain);
		assert_null(strstr(told, "invalid option"));
		assert_non_null(nl_siteconf_agent_option(k));
	}
	assert_int_equal(n, 18);
	assert_string_equal(nl_siteconf_agent_option("report_dir"),
			    "report-dir");
	assert_string_equal(nl_siteconf_agent_option("agent_nice"), "nice");
	assert_string_equal(nl_siteconf_agent_option("wait"), "");
	assert_null(nl_siteconf_agent_option("config"));
}

static char err_text[2048];

static int agent(struct nl_agent_config *c, int argc, char **argv)
{
	char out_text[2048];
	FILE *out = fmemopen(out_text, sizeof(out_text), "w");
	FILE *err = fmemopen(err_text, sizeof(err_text), "w");
	nl_agent_config_default(c);
	int rc = nl_agent_args(c, argc, argv, out, err);
	fclose(out);
	fclose(err);
	return rc;
}

static void agent_file_then_command_line(void **state)
{
	(void)state;
	struct nl_agent_config c;
	char opt[200];
	const char *p = conf("agent.conf",
			     "allow=monitor+lbma force=lbma\n"
			     "report_dir=/var/r default=off wait=2\n"
			     "idle_exit=30 period=2 agent_nice=3\n",
			     0644);
	snprintf(opt, sizeof(opt), "--config=%s", p);
	char *argv[] = {"numalotd", opt, "--idle-exit=0", NULL};
	assert_int_equal(agent(&c, 3, argv), 0);
	assert_int_equal(c.conf_settings, 8);
	assert_true(c.allow ==
		    (1u << NL_POLICY_MONITOR | 1u << NL_POLICY_LBMA));
	assert_int_equal(c.force, NL_POLICY_LBMA);
	assert_string_equal(c.report_dir, "/var/r");
	assert_true(c.default_period_s == 2);
	assert_true(c.nice == 3 && c.nice_given);
	/* The command line wins. */
	assert_true(c.idle_exit_s == 0);
	char *none[] = {"numalotd", "--config=", NULL};
	assert_int_equal(agent(&c, 2, none), 0);
	assert_true(c.allow == 0 && c.force == -1 && !c.report_dir);
	/* allow=off: every request refused. */
	p = conf("off.conf", "allow=off\n", 0644);
	snprintf(opt, sizeof(opt), "--config=%s", p);
	char *off[] = {"numalotd", opt, NULL};
	assert_int_equal(agent(&c, 2, off), 0);
	assert_true(c.allow == NL_AGENT_ALLOW_NONE);
}

static void agent_bad_file_is_named(void **state)
{
	(void)state;
	struct nl_agent_config c;
	char opt[200];
	const char *p = conf("typo.conf", "allow=lbma\nalow=imar2\n", 0644);
	snprintf(opt, sizeof(opt), "--config=%s", p);
	char *argv[] = {"numalotd", opt, NULL};
	assert_int_equal(agent(&c, 2, argv), 2);
	assert_non_null(strstr(err_text, "typo.conf line 2: unknown setting "
					 "\"alow=imar2\""));
	p = conf("value.conf", "period=1\nforce=fast\n", 0644);
	snprintf(opt, sizeof(opt), "--config=%s", p);
	assert_int_equal(agent(&c, 2, argv), 2);
	assert_non_null(strstr(err_text, "unknown policy \"fast\""));
	assert_non_null(strstr(err_text, "value.conf line 2: force=fast"));
	p = conf("open.conf", "allow=lbma\n", 0646);
	snprintf(opt, sizeof(opt), "--config=%s", p);
	assert_int_equal(agent(&c, 2, argv), 2);
	assert_non_null(strstr(err_text, "writable by root alone"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_words_lines_and_comments),
		cmocka_unit_test(plugin_file_then_plugstack),
		cmocka_unit_test(plugin_bad_file_is_named_and_fails_closed),
		cmocka_unit_test(keys_are_the_plugins),
		cmocka_unit_test(agent_file_then_command_line),
		cmocka_unit_test(agent_bad_file_is_named),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
