/* numalot sim: run a scenario on the simulated NUMA node. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "engine.h"
#include "scenario.h"

#define CMD "sim"

struct sim_args {
	const char *scenario;
	const char *report;
	enum nl_policy_kind policy;
	uint64_t seed;
	struct nl_policy_params params;
};

static int parse_seed(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-')
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct sim_args *a)
{
	const char *v;
	int missing;

	a->policy = NL_POLICY_IMAR2;
	a->seed = 1;
	nl_policy_params_default(&a->params);
	for (int i = 1; i < argc; i++) {
		if ((v = nl_cli_option("policy", argc, argv, &i, &missing))) {
			if (nl_policy_from_name(v, &a->policy) < 0) {
				nl_cli_error(CMD,
					     "unknown policy \"%s\" (valid: %s)",
					     v, nl_policy_names());
				return -1;
			}
		} else if ((v = nl_cli_option("seed", argc, argv, &i,
					      &missing))) {
			if (parse_seed(v, &a->seed) < 0) {
				nl_cli_error(CMD,
					     "--seed wants a whole number >= 0, "
					     "not \"%s\"",
					     v);
				return -1;
			}
		} else if ((v = nl_cli_option("report", argc, argv, &i,
					      &missing))) {
			a->report = v;
		} else if ((v = nl_cli_option("param", argc, argv, &i,
					      &missing))) {
			if (nl_cli_param(CMD, &a->params, v) < 0)
				return -1;
		} else if (missing) {
			nl_cli_error(CMD, "%s wants a value", argv[i]);
			return -1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			nl_cli_error(CMD,
				     "unknown option \"%s\" (valid: --policy, "
				     "--seed, --report, --param)",
				     argv[i]);
			return -1;
		} else if (!a->scenario) {
			a->scenario = argv[i];
		} else {
			nl_cli_error(CMD, "one scenario at a time (got \"%s\" "
					  "and \"%s\")",
				     a->scenario, argv[i]);
			return -1;
		}
	}
	if (!a->scenario) {
		nl_cli_error(CMD, "usage: numalot sim SCENARIO.json "
				  "[--policy=P] [--seed=N] [--report=FILE] "
				  "[--param KEY=VALUE ...]");
		return -1;
	}
	return 0;
}

/* One domain per job of the scenario, each under the chosen policy. */
static int add_jobs(struct nl_engine *e, struct nl_machine *m,
		    const struct sim_args *a, int *jobs, int *njobs)
{
	const struct nl_process_info *p;
	size_t n;
	int rc = m->ops->processes(m, &p, &n);

	*njobs = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int known = 0;
		char name[32];
		for (int k = 0; k < *njobs; k++)
			known |= jobs[k] == p[i].job;
		if (!known) {
			snprintf(name, sizeof(name), "job %d", p[i].job);
			rc = nl_engine_add_domain(e, p[i].job, name, a->policy,
						  &a->params,
						  a->seed + (uint64_t)p[i].job);
			jobs[(*njobs)++] = p[i].job;
		}
		if (rc == 0)
			rc = nl_engine_add_process(e, p[i].pid, p[i].job);
	}
	return rc;
}

static void print_table(struct nl_engine *e, struct nl_machine *m,
			const struct sim_args *a, const int *jobs, int njobs)
{
	const struct nl_process_info *p;
	size_t n;
	double makespan = 0;
	int unfinished = 0;
	struct nl_engine_summary tot = {0}, s;

	printf("numalot sim: %s, policy %s, seed %" PRIu64 "\n", a->scenario,
	       nl_policy_name(a->policy), a->seed);
	printf("machine: %d NUMA nodes, %d CPUs (%s)\n", m->topo->nnodes,
	       m->topo->ncpus, m->topo->source);
	printf("%-24s %7s %8s %13s\n", "process", "pid", "threads",
	       "completion_s");
	if (m->ops->processes(m, &p, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			if (p[i].end_s < 0) {
				printf("%-24s %7d %8d %13s\n", p[i].name,
				       p[i].pid, p[i].threads_seen,
				       "unfinished");
				unfinished++;
				continue;
			}
			printf("%-24s %7d %8d %13.3f\n", p[i].name, p[i].pid,
			       p[i].threads_seen, p[i].end_s);
			if (p[i].end_s > makespan)
				makespan = p[i].end_s;
		}
	for (int k = 0; k < njobs; k++)
		if (nl_engine_summary(e, jobs[k], &s) == 0) {
			tot.periods += s.periods;
			tot.migrations += s.migrations;
			tot.swaps += s.swaps;
			tot.rollbacks += s.rollbacks;
			tot.skips += s.skips;
		}
	if (unfinished)
		printf("stopped at %.3f s (duration_s) with %d process%s "
		       "unfinished\n",
		       m->ops->now(m), unfinished, unfinished > 1 ? "es" : "");
	printf("makespan_s %.3f  periods %d  migrations %d  swaps %d  "
	       "rollbacks %d  skips %d\n",
	       unfinished ? m->ops->now(m) : makespan, tot.periods, tot.migrations, tot.swaps, tot.rollbacks,
	       tot.skips);
}

static int write_report(struct nl_engine *e, const char *path,
			const int *jobs, int njobs)
{
	struct json_object *r;
	int rc;

	if (njobs == 1) {
		r = nl_engine_report(e, jobs[0]);
	} else {
		struct json_object *list = json_object_new_array();
		r = json_object_new_object();
		for (int k = 0; k < njobs; k++)
			json_object_array_add(list, nl_engine_report(e, jobs[k]));
		json_object_object_add(r, "reports", list);
	}
	rc = nl_cli_write_json(CMD, path, r);
	json_object_put(r);
	return rc;
}

int nl_cmd_sim(int argc, char **argv)
{
	struct sim_args a = {0};
	struct nl_scenario *sc = NULL;
	struct nl_machine *m = NULL;
	struct nl_engine *e = NULL;
	char err[1024];
	int *jobs = NULL, njobs = 0, rc, status = NL_EXIT_FAIL;
	size_t nproc;
	const struct nl_process_info *p;

	if (parse_args(argc, argv, &a) < 0)
		return NL_EXIT_USAGE;
	rc = nl_scenario_load(a.scenario, &sc, err, sizeof(err));
	if (rc == 0)
		rc = nl_sim_create(sc, a.seed, &m, err, sizeof(err));
	if (rc < 0) {
		nl_cli_error(CMD, "%s", err);
		nl_scenario_free(sc);
		return rc == -ENOMEM ? NL_EXIT_FAIL : NL_EXIT_USAGE;
	}
	rc = m->ops->processes(m, &p, &nproc);
	jobs = calloc(nproc + 1, sizeof(int));
	if (rc == 0 && jobs)
		rc = nl_engine_create(m, &e);
	if (rc == 0 && e)
		rc = add_jobs(e, m, &a, jobs, &njobs);
	if (rc == 0 && e)
		rc = nl_engine_run(e);
	if (rc < 0 || !jobs) {
		nl_cli_error(CMD, "simulation failed: %s",
			     strerror(rc < 0 ? -rc : ENOMEM));
		goto out;
	}
	print_table(e, m, &a, jobs, njobs);
	status = NL_EXIT_OK;
	if (a.report && write_report(e, a.report, jobs, njobs) < 0)
		status = NL_EXIT_FAIL;
out:
	nl_engine_free(e);
	nl_machine_destroy(m);
	nl_scenario_free(sc);
	free(jobs);
	return status;
}
