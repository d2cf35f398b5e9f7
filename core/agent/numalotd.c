/* numalotd: the per-node agent. A thin main over nl_agent_run. */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent.h"
#include "policy.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: numalotd [--socket=PATH] [--topology=SPEC] "
		   "[--report-dir=DIR]\n"
		   "                [--counters=auto|papi|perf|software] "
		   "[--idle-exit=SECONDS]\n"
		   "                [--period=S] [--min-period=S] "
		   "[--max-period=S]\n"
		   "                [--log-level=error|warning|info|debug] "
		   "[--syslog]\n"
		   "                [--allow=POLICY,...] [--force=POLICY] "
		   "[--ready-fd=N]\n"
		   "Serves every job step of this node; see numalotd(8).\n");
}

static int seconds(const char *opt, const char *v, double lo, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(*out) || *out < lo ||
	    *out > 86400) {
		fprintf(stderr,
			"numalotd: %s wants seconds from %g to 86400, "
			"not \"%s\"\n",
			opt, lo, v);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct nl_agent_config c;
	static const char *const levels[] = {"error", "warning", "info",
					     "debug"};

	/* Every period builds and frees the same arrays: keep the memory. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	nl_agent_config_default(&c);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = strchr(a, '=');
		size_t n = v ? (size_t)(v - a) : strlen(a);
		int rc = 0;
		v = v ? v + 1 : NULL;
#define IS(name) (n == strlen(name) && !strncmp(a, name, n))
		if (IS("--help") || IS("-h")) {
			usage(stdout);
			return 0;
		} else if (IS("--version")) {
			printf("numalotd %s\n", NUMALOT_VERSION);
			return 0;
		} else if (IS("--syslog")) {
			c.use_syslog = 1;
		} else if (!v) {
			rc = -1;
		} else if (IS("--socket")) {
			c.socket_path = v;
		} else if (IS("--topology")) {
			c.topology = v;
		} else if (IS("--report-dir")) {
			c.report_dir = v;
		} else if (IS("--counters")) {
			if (nl_backend_from_name(v, &c.backend) < 0) {
				fprintf(stderr,
					"numalotd: unknown counter "
					"backend \"%s\" (valid: auto, "
					"papi, perf, software)\n",
					v);
				return 2;
			}
		} else if (IS("--idle-exit")) {
			rc = seconds(a, v, 0, &c.idle_exit_s);
		} else if (IS("--period")) {
			rc = seconds(a, v, 0.001, &c.default_period_s);
		} else if (IS("--min-period")) {
			rc = seconds(a, v, 0.001, &c.min_period_s);
		} else if (IS("--max-period")) {
			rc = seconds(a, v, 0.001, &c.max_period_s);
		} else if (IS("--allow")) {
			char buf[128], *save, *tok;
			snprintf(buf, sizeof(buf), "%s", v);
			c.allow = 0;
			for (tok = strtok_r(buf, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				enum nl_policy_kind k;
				if (nl_policy_from_name(tok, &k) < 0 ||
				    k == NL_POLICY_STATIC) {
					fprintf(stderr,
						"numalotd: --allow: unknown "
						"policy \"%s\" (valid: imar2, "
						"lbma, monitor)\n",
						tok);
					return 2;
				}
				c.allow |= 1u << k;
			}
		} else if (IS("--force")) {
			enum nl_policy_kind k;
			if (!*v) {
				c.force = -1;
			} else if (nl_policy_from_name(v, &k) < 0 ||
				   k == NL_POLICY_STATIC) {
				fprintf(stderr,
					"numalotd: --force: unknown policy "
					"\"%s\" (valid: imar2, lbma, "
					"monitor)\n",
					v);
				return 2;
			} else {
				c.force = (int)k;
			}
		} else if (IS("--ready-fd")) {
			char *end;
			long fd = strtol(v, &end, 10);
			if (!*v || *end || fd < 3 || fd > 1024) {
				fprintf(stderr, "numalotd: --ready-fd wants a "
						"descriptor from 3 to 1024\n");
				return 2;
			}
			c.ready_fd = (int)fd;
		} else if (IS("--log-level")) {
			c.log_level = -1;
			for (int k = 0; k < 4; k++)
				if (!strcmp(v, levels[k]))
					c.log_level = k;
			if (c.log_level < 0) {
				fprintf(stderr, "numalotd: --log-level is "
						"error, warning, info or "
						"debug\n");
				return 2;
			}
		} else {
			rc = -1;
		}
#undef IS
		if (rc < 0) {
			if (!strchr(a, '=') || a[0] != '-')
				fprintf(stderr,
					"numalotd: unknown or "
					"incomplete option \"%s\"\n",
					a);
			usage(stderr);
			return 2;
		}
	}
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
	nl_log_setup(c.log_level, c.use_syslog);
	return nl_agent_run(&c);
}
