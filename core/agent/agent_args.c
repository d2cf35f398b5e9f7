/* numalotd's command line (agent_args.h). */
#include "agent_args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "policy.h"
#include "version.h"

void nl_agent_usage(FILE *f)
{
	fprintf(f,
		"usage: numalotd [OPTIONS]\n"
		"Serves every job step of this node; see numalotd(8).\n"
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

/* A policy numalotd enforces: imar2, lbma or monitor. */
static int agent_policy(FILE *err, const char *opt, const char *v,
			enum nl_policy_kind *k)
{
	if (nl_policy_from_name(v, k) < 0 || *k == NL_POLICY_STATIC) {
		fprintf(err,
			"numalotd: --%s: unknown policy \"%s\" (valid: imar2, "
			"lbma, monitor)\n",
			opt, v);
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
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (agent_policy(err, "allow", tok, &k) < 0)
			return -1;
		*allow |= 1u << k;
	}
	/* 0 would allow every policy: an empty list fails closed. */
	if (!*allow) {
		fprintf(err, "numalotd: --allow wants at least one of imar2, "
			     "lbma, monitor\n");
		return -1;
	}
	return 0;
}

int nl_agent_args(struct nl_agent_config *c, int argc, char **argv, FILE *out,
		  FILE *err)
{
	static const struct option lo[] = {
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
	static const char *const levels[] = {"error", "warning", "info",
					     "debug"};
	enum nl_policy_kind k;
	char *end;
	long fd;
	int o, rc = 0;

	nl_getopt_start();
	while (rc == 0 &&
	       (o = nl_getopt("numalotd", err, argc, argv, "h", lo)) != -1) {
		const char *name = "";
		for (const struct option *p = lo; p->name; p++)
			if (p->val == o)
				name = p->name;
		switch (o) {
		case 's':
			c->socket_path = optarg;
			break;
		case 't':
			c->topology = optarg;
			break;
		case 'r':
			c->report_dir = optarg;
			if (optarg[0] != '/') {
				fprintf(err,
					"numalotd: --report-dir wants an "
					"absolute path, not \"%s\"\n",
					optarg);
				rc = -1;
			}
			break;
		case 'c':
			if (nl_backend_from_name(optarg, &c->backend) < 0) {
				fprintf(err,
					"numalotd: unknown counter backend "
					"\"%s\" (valid: auto, papi, perf, "
					"software)\n",
					optarg);
				rc = -1;
			}
			break;
		case 'i':
			rc = seconds(err, name, optarg, 0, &c->idle_exit_s);
			break;
		case 'p':
			rc = seconds(err, name, optarg, 0.001,
				     &c->default_period_s);
			break;
		case 'm':
			rc = seconds(err, name, optarg, 0.001,
				     &c->min_period_s);
			break;
		case 'M':
			rc = seconds(err, name, optarg, 0.001,
				     &c->max_period_s);
			break;
		case 'a':
			rc = set_allow(err, optarg, &c->allow);
			break;
		case 'f':
			/* --force= (empty): none. */
			c->force = -1;
			if (*optarg &&
			    (rc = agent_policy(err, "force", optarg, &k)) == 0)
				c->force = (int)k;
			break;
		case 'l':
			c->log_level = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, levels[i]))
					c->log_level = i;
			if (c->log_level < 0) {
				fprintf(err,
					"numalotd: --log-level is error, "
					"warning, info or debug, not "
					"\"%s\"\n",
					optarg);
				rc = -1;
			}
			break;
		case 'S':
			c->use_syslog = 1;
			break;
		case 'R':
			fd = strtol(optarg, &end, 10);
			if (!*optarg || *end || fd < 3 || fd > 1024) {
				fprintf(err,
					"numalotd: --ready-fd wants a "
					"descriptor from 3 to 1024, not "
					"\"%s\"\n",
					optarg);
				rc = -1;
			}
			c->ready_fd = (int)fd;
			break;
		case 'n':
			fd = strtol(optarg, &end, 10);
			if (!*optarg || *end || fd < -20 || fd > 19) {
				fprintf(err,
					"numalotd: --nice wants a whole number "
					"from -20 to 19, not \"%s\"\n",
					optarg);
				rc = -1;
			}
			c->nice = (int)fd;
			c->nice_given = 1;
			break;
		case 'h':
			nl_agent_usage(out);
			return 1;
		case 'V':
			fprintf(out, "numalotd %s\n", NUMALOT_VERSION);
			return 1;
		default:
			rc = -1;
		}
	}
	if (rc == 0 && c->min_period_s > c->max_period_s) {
		fprintf(err,
			"numalotd: --min-period (%g s) is above --max-period "
			"(%g s)\n",
			c->min_period_s, c->max_period_s);
		rc = -1;
	}
	if (rc == 0 && optind < argc) {
		fprintf(err, "numalotd: takes no operand (got \"%s\")\n",
			argv[optind]);
		rc = -1;
	}
	if (rc < 0) {
		fprintf(err, "Try numalotd --help.\n");
		return 2;
	}
	return 0;
}
