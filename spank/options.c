/* numalot SPANK plugin: the user's options and --numalot=help
 * (options.h). */
#include "options.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_path.h"
#include "version.h"
#include "slog.h" /* last: it poisons slurm_error */

struct nl_user_opts nl_user = {.choice = -1, .bindings = -1};

/* The site's policy the values are checked against. */
static const struct nl_site *site;

static int opt_policy(int val, const char *optarg, int remote);
static int opt_report(int val, const char *optarg, int remote);
static int opt_period(int val, const char *optarg, int remote);
static int opt_bindings(int val, const char *optarg, int remote);

/* Registered from slurm_spank_init in every context (srun, sbatch,
 * salloc, slurmstepd), not through the spank_options symbol. val is the
 * option's index (repeated()); usage starts with [numalot], as pyxis's. */
static struct spank_option numalot_options[] = {
	{"numalot", "POLICY",
	 NULL, /* policy_usage(), from the policies' list */
	 1, 0, opt_policy},
	{"numalot-report", "PATTERN",
	 "[numalot] Where numalot writes its JSON report of each step and "
	 "node, with "
	 "srun's tokens (%j job, %s step, %N node, %u user, %x job name...; "
	 "default " NL_REPORT_PATTERN " in the working directory).",
	 1, 1, opt_report},
	{"numalot-bindings", "keep|free",
	 "[numalot] keep: numalot never moves a task's thread outside the "
	 "task's own "
	 "CPU binding (--cpu-bind, numactl); free: anywhere in the step's "
	 "allocation (the site sets the default).",
	 1, 2, opt_bindings},
	{"numalot-period", "SECONDS",
	 "[numalot] numalot's sampling period (the site sets the bounds).", 1,
	 3, opt_period},
	SPANK_OPTIONS_TABLE_END};

static char *policy_usage(void)
{
	static char usage[400];
	snprintf(usage, sizeof(usage),
		 "[numalot] Migrate the job's threads between NUMA nodes with "
		 "POLICY: %s or off. --numalot=help lists what this cluster "
		 "allows.",
		 nl_policy_job_names());
	return usage;
}

static int cmp_kind_name(const void *a, const void *b)
{
	return strcmp(nl_policy_name(*(const enum nl_policy_kind *)a),
		      nl_policy_name(*(const enum nl_policy_kind *)b));
}

static void print_help(void)
{
	enum nl_policy_kind k[NL_POLICY_COUNT];
	char list[64 + 16 * NL_POLICY_COUNT];
	size_t n = 0;

	nl_site_allowed_list(site, list, sizeof(list));
	printf("numalot %s: thread migration between NUMA nodes\n",
	       NUMALOT_VERSION);
	for (int i = 0; i < NL_POLICY_COUNT; i++)
		if (nl_policy_where((enum nl_policy_kind)i) & NL_POLICY_JOBS)
			k[n++] = (enum nl_policy_kind)i;
	qsort(k, n, sizeof(k[0]), cmp_kind_name);
	for (size_t i = 0; i < n; i++)
		printf("  --numalot=%-8s %s\n", nl_policy_name(k[i]),
		       nl_policy_about(k[i]));
	printf("  --numalot=off      leave the job alone\n"
	       "This cluster: allowed %s; default %s%s%s; period %g s "
	       "(%g to %g)\n",
	       list, nl_choice_name(site->default_choice),
	       site->force >= 0 ? "; forced " : "",
	       site->force >= 0 ? nl_choice_name(site->force) : "",
	       site->period_s, site->min_period_s, site->max_period_s);
}

/* The first value of each option in srun: a second, different one is
 * refused (slurm_spank_init registers the options; val indexes them). */
static char first_value[4][PATH_MAX];
static int repeated(int val, const char *optarg, int remote)
{
	char msg[PATH_MAX + 200], env[96];
	if (remote || val < 0 || val >= 4)
		return 0;
	/* A value from the environment (sbatch's #SBATCH line, passed on)
	 * comes first, and the command line may override it once. */
	snprintf(env, sizeof(env), "SLURM_SPANK__SLURM_SPANK_OPTION_numalot_%s",
		 numalot_options[val].name);
	for (char *c = env; *c; c++)
		if (*c == '-')
			*c = '_';
	const char *inherited = getenv(env);
	if (inherited && !strcmp(first_value[val], inherited)) {
		snprintf(first_value[val], sizeof(first_value[val]), "%s",
			 optarg ? optarg : "");
		return 0;
	}
	if (nl_site_check_repeat(first_value[val], sizeof(first_value[val]),
				 numalot_options[val].name, optarg, msg,
				 sizeof(msg)) == 0)
		return 0;
	nl_slurm_error("%s", msg);
	return 1;
}

static int opt_policy(int val, const char *optarg, int remote)
{
	char msg[256];
	enum nl_choice c;
	if (repeated(val, optarg, remote))
		return -1;
	if (optarg && !strcmp(optarg, "help")) {
		if (!remote) {
			print_help();
			exit(0);
		}
		return 0;
	}
	if (nl_site_check_choice(site, optarg, &c, msg, sizeof(msg)) < 0) {
		if (remote) {
			/* Never fail a task on the node: leave it alone. */
			nl_slurm_error("%s; numalot is off for this step", msg);
			nl_user.choice = NL_CHOICE_OFF;
			return 0;
		}
		nl_slurm_error("%s", msg);
		return -1;
	}
	nl_user.choice = (int)c;
	return 0;
}

#define REPORT_ENV "SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot_report"
#define REPORT_GIVEN "NUMALOT_REPORT_GIVEN"

/* Calls of opt_report in this pass of srun's (one a het job component). */
static int report_calls;

static int opt_report(int val, const char *optarg, int remote)
{
	char msg[200];
	if (repeated(val, optarg, remote))
		return -1;
	if (!remote) {
		/* srun reads the environment first: a value the command line
		 * gives comes in a second call, and wins. */
		const char *env = getenv(REPORT_ENV);
		nl_user.report_env = ++report_calls == 1 && env && optarg &&
				     !strcmp(env, optarg);
	}
	if (!optarg || strlen(optarg) >= sizeof(nl_user.report) - 8) {
		nl_slurm_error("numalot: --numalot-report: the pattern is over "
			       "%zu characters",
			       sizeof(nl_user.report) - 8);
		return remote ? 0 : -1;
	}
	if (nl_path_check(optarg, msg, sizeof(msg)) < 0) {
		nl_slurm_error("numalot: --numalot-report=%s: %s", optarg, msg);
		return remote ? 0 : -1;
	}
	if (!remote && site->user_reports == NL_USER_REPORTS_NEVER)
		nl_slurm_info(
			"numalot: this cluster keeps numalot's reports for "
			"its administrators (user_reports=never): "
			"--numalot-report is ignored");
	strcpy(nl_user.report, optarg);
	return 0;
}

static int opt_bindings(int val, const char *optarg, int remote)
{
	if (repeated(val, optarg, remote))
		return -1;
	if (optarg && (!strcmp(optarg, "keep") || !strcmp(optarg, "free"))) {
		nl_user.bindings = !strcmp(optarg, "keep");
		return 0;
	}
	nl_slurm_error("numalot: --numalot-bindings wants keep or free, not "
		       "\"%s\"",
		       optarg ? optarg : "");
	return remote ? 0 : -1;
}

static int opt_period(int val, const char *optarg, int remote)
{
	char msg[256];
	if (repeated(val, optarg, remote))
		return -1;
	if (nl_site_check_period(site, optarg, &nl_user.period, msg,
				 sizeof(msg)) < 0) {
		nl_slurm_error("%s", msg);
		nl_user.period = 0;
		return remote ? 0 : -1;
	}
	return 0;
}

/* Does an environment variable other than the mark itself carry it (an
 * export list: SLURM_EXPORT_ENV, SRUN_EXPORT_ENV, SBATCH_EXPORT...)? */
static const char *mark_smuggled(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, REPORT_GIVEN "=", sizeof(REPORT_GIVEN)) &&
		    strstr(*e, REPORT_GIVEN))
			return *e;
	return NULL;
}

static int json_name(const char *path)
{
	size_t n = strlen(path);
	return n > 5 && !strcmp(path + n - 5, ".json") && path[n - 6] != '/';
}

int nl_options_root_report(spank_t sp)
{
	char given[sizeof(nl_user.report)];
	const char *smuggled;
	uid_t uid;

	if (!spank_remote(sp)) {
		int from_env = nl_user.report_env;
		report_calls = 0; /* a het job's next component: anew */
		nl_user.report_env = 0;
		if (getuid() == 0 && (smuggled = mark_smuggled())) {
			nl_slurm_error("numalot: the environment carries %s in "
				       "%.*s: refused (a job of root's takes "
				       "its --numalot-report from srun's "
				       "command line only)",
				       REPORT_GIVEN,
				       (int)strcspn(smuggled, "="), smuggled);
			return -1;
		}
		if (nl_user.report[0] && !from_env) {
			if (getuid() == 0 && !json_name(nl_user.report)) {
				nl_slurm_error("numalot: --numalot-report=%s: "
					       "a job of root's writes its "
					       "report only to a name ending "
					       "in .json",
					       nl_user.report);
				return -1;
			}
			setenv(REPORT_GIVEN, nl_user.report, 1);
			return 0;
		}
		unsetenv(REPORT_GIVEN);
		if (nl_user.report[0] && getuid() == 0) {
			nl_slurm_info("numalot: --numalot-report=%s comes from "
				      "the environment (%s): root's srun takes "
				      "it from the command line only, and a "
				      "job of root's goes on as if none had "
				      "been given",
				      nl_user.report, REPORT_ENV);
			nl_user.report[0] = 0;
		}
		return 0;
	}
	if (!nl_user.report[0] ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS || uid != 0)
		return 0;
	if (!json_name(nl_user.report))
		nl_slurm_error("numalot: --numalot-report=%s of a job of "
			       "root's does not end in .json: not taken, the "
			       "step goes on as if none had been given",
			       nl_user.report);
	else if (spank_getenv(sp, REPORT_GIVEN, given, sizeof(given)) !=
			 ESPANK_SUCCESS ||
		 strcmp(given, nl_user.report))
		nl_slurm_error("numalot: --numalot-report=%s of a job of "
			       "root's did not come from srun's command line "
			       "(it came from the environment, or the job's "
			       "environment was not passed on): not taken, "
			       "the step goes on as if none had been given",
			       nl_user.report);
	else
		return 0;
	nl_user.report[0] = 0;
	return 0;
}

void nl_options_register(spank_t sp, const struct nl_site *s)
{
	site = s;
	numalot_options[0].usage = policy_usage();
	for (struct spank_option *o = numalot_options; o->name; o++)
		if (spank_option_register(sp, o) != ESPANK_SUCCESS)
			nl_slurm_error("numalot: cannot register --%s",
				       o->name);
}
