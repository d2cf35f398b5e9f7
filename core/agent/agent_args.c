/* numalotd's command line (agent_args.h). */
#include "agent_args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "policy.h"
#include "siteconf.h"
#include "version.h"

void nl_agent_usage(FILE *f)
{
	fprintf(f,
		"usage: numalotd [OPTIONS]\n"
		"Serves every job step of this node; see numalotd(8).\n"
		"  --config=PATH            the site's settings "
		"(default " NUMALOT_CONF "; \"\": none);\n"
		"                           options given here win\n"
		"  --socket=PATH            the socket (default "
		"/run/numalot/numalotd.sock)\n"
		"  --topology=SPEC          decide on this topology (hwloc XML "
		"or synthetic)\n"
		"  --report-dir=DIR         a site copy of every report\n"
		"  --counters=auto|papi|perf|software   the counter backend\n"
		"  --idle-exit=SECONDS      exit after this long with no step "
		"(0: never)\n"
		"  --period=S --min-period=S --max-period=S   the periods\n"
		"  --allow=POLICY,...       the policies requests may ask for\n"
		"  --force=POLICY           the policy of every request\n"
		"  --log-level=error|warning|info|debug\n"
		"  --syslog                 log to syslog, not stderr\n"
		"  --nice=N                 the agent's own nice (default: "
		"raised to -10)\n"
		"  --ready-fd=N             say \"ok\" (or why not) on "
		"descriptor N once serving\n"
		"  -h, --help               this text\n"
		"  --version                the version\n");
}

static int seconds(FILE *err, const char *opt, const char *v, double lo,
		   double *out)
{
	char *end;
	errno = 0;
	*out = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(*out) || *out < lo ||
	    *out > 86400) {
		fprintf(err,
			"numalotd: --%s wants seconds from %g to 86400, "
			"not \"%s\"\n",
			opt, lo, v);
		return -1;
	}
	return 0;
}

/* A policy numalotd enforces: one jobs may choose (policy_list.h) (0), or
 * off (1: no policy, as the plugin's allow= and force= take it). */
static int agent_policy(FILE *err, const char *opt, const char *v,
			enum nl_policy_kind *k)
{
	if (!strcmp(v, "off"))
		return 1;
	if (nl_policy_from_name(v, k) < 0 ||
	    !(nl_policy_where(*k) & NL_POLICY_JOBS)) {
		fprintf(err,
			"numalotd: --%s: unknown policy \"%s\" (valid: %s, "
			"off)\n",
			opt, v, nl_policy_job_names());
		return -1;
	}
	return 0;
}

static int set_allow(FILE *err, const char *v, unsigned *allow)
{
	char buf[128], *save, *tok;
	enum nl_policy_kind k;
	if (strlen(v) >= sizeof(buf)) {
		fprintf(err, "numalotd: --allow: the list is too long\n");
		return -1;
	}
	strcpy(buf, v);
	*allow = 0;
	/* ',' as numalotd takes it; '+' and ':' as the plugin's allow=. */
	for (tok = strtok_r(buf, ",+:", &save); tok;
	     tok = strtok_r(NULL, ",+:", &save)) {
		int rc = agent_policy(err, "allow", tok, &k);
		if (rc < 0)
			return -1;
		*allow |= rc ? NL_AGENT_ALLOW_NONE : 1u << k;
	}
	/* 0 would allow every policy: an empty list fails closed. */
	if (!*allow) {
		fprintf(err,
			"numalotd: --allow wants at least one of %s, off\n",
			nl_policy_job_names());
		return -1;
	}
	return 0;
}

static const struct option long_options[] = {
	{"config", required_argument, NULL, 'C'},
	{"socket", required_argument, NULL, 's'},
	{"topology", required_argument, NULL, 't'},
	{"report-dir", required_argument, NULL, 'r'},
	{"counters", required_argument, NULL, 'c'},
	{"idle-exit", required_argument, NULL, 'i'},
	{"period", required_argument, NULL, 'p'},
	{"min-period", required_argument, NULL, 'm'},
	{"max-period", required_argument, NULL, 'M'},
	{"allow", required_argument, NULL, 'a'},
	{"force", required_argument, NULL, 'f'},
	{"log-level", required_argument, NULL, 'l'},
	{"syslog", no_argument, NULL, 'S'},
	{"ready-fd", required_argument, NULL, 'R'},
	{"nice", required_argument, NULL, 'n'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{0}};

/* Set option o (its long name, its value v): 0, or -1 told on err. */
static int set_option(struct nl_agent_config *c, int o, const char *name,
		      char *v, FILE *err)
{
	static const char *const levels[] = {"error", "warning", "info",
					     "debug"};
	enum nl_policy_kind k;
	long fd;
	int rc = 0;

	switch (o) {
	case 'C':
		c->conf_path = v;
		break;
	case 's':
		c->socket_path = v;
		break;
	case 't':
		c->topology = v;
		break;
	case 'r':
		c->report_dir = v;
		if (v[0] != '/') {
			fprintf(err,
				"numalotd: --report-dir wants an absolute "
				"path, not \"%s\"\n",
				v);
			rc = -1;
		}
		break;
	case 'c':
		if (nl_backend_from_name(v, &c->backend) < 0) {
			fprintf(err,
				"numalotd: unknown counter backend \"%s\" "
				"(valid: auto, papi, perf, software)\n",
				v);
			rc = -1;
		}
		break;
	case 'i':
		rc = seconds(err, name, v, 0, &c->idle_exit_s);
		break;
	case 'p':
		rc = seconds(err, name, v, 0.001, &c->default_period_s);
		break;
	case 'm':
		rc = seconds(err, name, v, 0.001, &c->min_period_s);
		break;
	case 'M':
		rc = seconds(err, name, v, 0.001, &c->max_period_s);
		break;
	case 'a':
		rc = set_allow(err, v, &c->allow);
		break;
	case 'f':
		/* --force= (empty): none; off: every request refused. */
		c->force = -1;
		if (*v && (rc = agent_policy(err, "force", v, &k)) == 0)
			c->force = (int)k;
		if (rc == 1) {
			c->allow = NL_AGENT_ALLOW_NONE;
			rc = 0;
		}
		break;
	case 'l':
		c->log_level = -1;
		for (int i = 0; i < 4; i++)
			if (!strcmp(v, levels[i]))
				c->log_level = i;
		if (c->log_level < 0) {
			fprintf(err,
				"numalotd: --log-level is error, warning, "
				"info or debug, not \"%s\"\n",
				v);
			rc = -1;
		}
		break;
	case 'S':
		c->use_syslog = 1;
		break;
	case 'R':
		if (nl_opt_whole(v, 3, 1024, &fd) < 0) {
			fprintf(err,
				"numalotd: --ready-fd wants a descriptor from "
				"3 to 1024, not \"%s\"\n",
				v);
			rc = -1;
		}
		c->ready_fd = (int)fd;
		break;
	case 'n':
		if (nl_opt_whole(v, -20, 19, &fd) < 0) {
			fprintf(err,
				"numalotd: --nice wants a whole number from "
				"-20 to 19, not \"%s\"\n",
				v);
			rc = -1;
		}
		c->nice = (int)fd;
		c->nice_given = 1;
		break;
	default:
		rc = -1;
	}
	return rc;
}

/*
 * The site's file (siteconf.h): each key numalotd takes sets its option
 * unless the command line gave it (given: a flag per option letter). The
 * plugin's own keys are skipped; an unknown one is an error.
 */
static int apply_conf(struct nl_agent_config *c, const unsigned char *given,
		      FILE *err)
{
	static struct nl_siteconf conf; /* the values point into it */
	char why[700];
	int rc = 0;

	if (!c->conf_path || !c->conf_path[0])
		return 0;
	if (nl_siteconf_read(c->conf_path, &conf, why, sizeof(why)) < 0) {
		fprintf(err, "numalotd: %s\n", why);
		return -1;
	}
	for (int i = 0; i < conf.n && rc == 0; i++) {
		char *w = conf.word[i], *eq = strchr(w, '=');
		const char *opt = NULL;
		const struct option *p = long_options;
		if (eq) {
			*eq = 0;
			opt = nl_siteconf_agent_option(w);
			*eq = '=';
		}
		if (!opt) {
			fprintf(err,
				"numalotd: %s line %d: unknown setting \"%s\" "
				"(valid: %s)\n",
				c->conf_path, conf.line[i], w,
				nl_siteconf_keys());
			return -1;
		}
		c->conf_settings++;
		if (!*opt)
			continue; /* the plugin's alone */
		while (strcmp(p->name, opt))
			p++;
		if (given[p->val])
			continue;
		/* The plugstack line's topology= has ',' for its spaces. */
		if (p->val == 't')
			for (char *q = eq + 1; *q; q++)
				if (*q == ',')
					*q = ' ';
		rc = set_option(c, p->val, p->name, eq + 1, err);
		if (rc < 0)
			fprintf(err, "numalotd: (that is %s line %d: %s)\n",
				c->conf_path, conf.line[i], w);
	}
	return rc;
}

int nl_agent_args(struct nl_agent_config *c, int argc, char **argv, FILE *out,
		  FILE *err)
{
	unsigned char given[128] = {0};
	int o, rc = 0;

	nl_getopt_start();
	while (rc == 0 && (o = nl_getopt("numalotd", err, argc, argv, "h",
					 long_options)) != -1) {
		const char *name = "";
		for (const struct option *p = long_options; p->name; p++)
			if (p->val == o)
				name = p->name;
		if (o == 'h') {
			nl_agent_usage(out);
			return 1;
		}
		if (o == 'V') {
			fprintf(out, "numalotd %s\n", NUMALOT_VERSION);
			return 1;
		}
		rc = set_option(c, o, name, optarg, err);
		if (o > 0 && o < 128)
			given[o] = 1;
	}
	if (rc == 0 && optind < argc) {
		fprintf(err, "numalotd: takes no operand (got \"%s\")\n",
			argv[optind]);
		rc = -1;
	}
	if (rc == 0)
		rc = apply_conf(c, given, err);
	if (rc == 0 && c->min_period_s > c->max_period_s) {
		fprintf(err,
			"numalotd: --min-period (%g s) is above --max-period "
			"(%g s)\n",
			c->min_period_s, c->max_period_s);
		rc = -1;
	}
	if (rc < 0) {
		fprintf(err, "Try numalotd --help.\n");
		return 2;
	}
	return 0;
}
