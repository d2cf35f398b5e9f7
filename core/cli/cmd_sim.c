/* numalot sim: run a scenario on the simulated NUMA node. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench.h"
#include "cli.h"
#include "engine.h"
#include "machine.h"
#include "model.h"
#include "run.h"
#include "scenario.h"

#define CMD "sim"

struct sim_args {
	const char *scenario;
	const char *report;
	const char *machine; /* --machine=FILE */
	enum nl_run_kind run;
	uint64_t seed;
	struct nl_run_opts o; /* o.trace: --timeline's samples */
};

/* 0 parsed, 1 --help given (usage printed), -1 bad (error printed). */
static int parse_args(int argc, char **argv, struct sim_args *a)
{
	static const struct option lo[] = {
		{"policy", required_argument, NULL, 'p'},
		NL_ARGS_MODEL,
		{"counters", required_argument, NULL, 'c'},
		{"seed", required_argument, NULL, 's'},
		{"report", required_argument, NULL, 'r'},
		{"timeline", required_argument, NULL, 't'},
		NL_ARGS_HELP,
		{0}};
	int c;

	a->run = NL_RUN_IMAR2;
	a->seed = 1;
	nl_run_opts_default(&a->o);
	nl_args_start();
	while ((c = nl_args_next(CMD, argc, argv, "h", lo)) != -1) {
		switch (c) {
		case 'p':
			if (nl_run_from_name(optarg, &a->run) < 0) {
				nl_cli_error(
					CMD,
					"unknown policy \"%s\" (valid: %s)",
					optarg, nl_run_names());
				return -1;
			}
			break;
		case 'c':
			if (nl_cli_set_counters(CMD, optarg, &a->o) < 0)
				return -1;
			break;
		case 's':
			if (nl_cli_seed(CMD, "--seed", optarg, &a->seed) < 0)
				return -1;
			break;
		case 'r':
			a->report = optarg;
			break;
		case 't': {
			char *end;
			errno = 0;
			a->o.trace_s = strtod(optarg, &end);
			if (!*optarg || *end || errno || !(a->o.trace_s > 0) ||
			    a->o.trace_s > 3600) {
				nl_cli_error(CMD,
					     "--timeline wants seconds above 0 "
					     "(at most 3600), not \"%s\"",
					     optarg);
				return -1;
			}
			break;
		}
		case 'h':
			nl_cli_usage(CMD, stdout);
			return 1;
		default:
			if (nl_cli_model_option(CMD, c, optarg, &a->o,
						&a->machine) <= 0)
				return -1;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (!a->scenario) {
			a->scenario = argv[i];
			continue;
		}
		nl_cli_error(CMD,
			     "one scenario at a time (got \"%s\" and \"%s\")",
			     a->scenario, argv[i]);
		return -1;
	}
	if (!a->scenario) {
		nl_cli_error(CMD, "usage: numalot sim SCENARIO.json "
				  "[--policy=P] [--os=MODE] [--seed=N] "
				  "[--report=FILE] [--param KEY=VALUE ...]");
		return -1;
	}
	if (a->o.trace_s > 0 &&
	    (a->run == NL_RUN_BEST_STATIC || a->run == NL_RUN_IDEAL_LOCALITY)) {
		nl_cli_error(CMD,
			     "--timeline is for a policy and the linux "
			     "baselines (%s runs many placements)",
			     nl_run_name(a->run));
		return -1;
	}
	if (a->o.os_set &&
	    (a->run == NL_RUN_LINUX || a->run == NL_RUN_LINUX_NONUMA)) {
		nl_cli_error(CMD,
			     "--os does not apply to the %s baseline "
			     "(it is an operating system model itself)",
			     nl_run_name(a->run));
		return -1;
	}
	return 0;
}

/* The OS model a run has underneath. */
static const char *os_name(const struct nl_scenario *sc,
			   const struct sim_args *a)
{
	if (a->run == NL_RUN_LINUX || a->run == NL_RUN_LINUX_NONUMA)
		return nl_run_name(a->run);
	return a->o.os_set ? nl_os_mode_name(a->o.os_mode)
			   : nl_scenario_os_name(sc);
}

static void print_header(const struct nl_scenario *sc, const struct sim_args *a)
{
	const struct nl_topology *topo = nl_scenario_topology(sc);

	printf("numalot sim: %s, policy %s, seed %" PRIu64 ", os %s\n",
	       a->scenario, nl_run_name(a->run), a->seed, os_name(sc, a));
	printf("machine: %d NUMA node%s, %d CPU%s (%s)\n", topo->nnodes,
	       nl_s(topo->nnodes), topo->ncpus, nl_s(topo->ncpus),
	       topo->source);
	if (nl_scenario_machine_file(sc))
		printf("machine file: %s\n", nl_scenario_machine_file(sc));
	printf("%-24s %7s %8s %13s\n", "process", "pid", "threads",
	       "completion_s");
}

/* Process lines and the stop line. */
static void print_processes(const struct nl_scenario *sc,
			    const struct nl_run_result *r)
{
	for (int i = 0; i < r->nprocs; i++) {
		struct nl_scenario_proc p;

		if (nl_scenario_proc(sc, i, &p) < 0)
			continue;
		if (r->end_s[i] < 0)
			printf("%-24s %7d %8d %13s\n", p.name, p.pid,
			       p.nthreads, "unfinished");
		else
			printf("%-24s %7d %8d %13.3f\n", p.name, p.pid,
			       p.nthreads, r->end_s[i]);
	}
	if (r->unfinished)
		printf("stopped at %.3f s (duration_s) with %d process%s "
		       "unfinished\n",
		       r->stop_s, r->unfinished, r->unfinished > 1 ? "es" : "");
}

static void print_os_line(const struct nl_run_result *r)
{
	printf("os thread moves %d  pages migrated %.1f MiB\n",
	       r->os_migrations, r->pages_migrated_bytes / (1 << 20));
}

/* The model's roofline ceilings, for the report's pictures. */
static struct json_object *with_ceilings(struct json_object *r,
					 const struct nl_scenario *sc)
{
	struct json_object *m, *c = json_object_new_object();
	double peak, bandwidth;

	nl_scenario_ceilings(sc, &peak, &bandwidth);
	json_object_object_add(c, "peak_ops_per_s",
			       json_object_new_double(peak));
	json_object_object_add(c, "bandwidth_bytes_per_s",
			       json_object_new_double(bandwidth));
	json_object_object_add(
		c, "source",
		json_object_new_string("the model's machine parameters "
				       "(peak_ops_per_s per CPU, "
				       "node_bandwidth_bytes_per_s per node)"));
	if (r && json_object_object_get_ex(r, "machine", &m)) {
		json_object_object_add(m, "ceilings", c);
		if (nl_scenario_machine_file(sc))
			json_object_object_add(
				m, "machine_file",
				json_object_new_string(
					nl_scenario_machine_file(sc)));
	} else
		json_object_put(c);
	return r;
}

/* From the timeline: when each process was first 90% local. */
static void print_timeline(const struct nl_scenario *sc,
			   struct json_object *list)
{
	struct nl_scenario_proc sp;

	for (int i = 0; nl_scenario_proc(sc, i, &sp) == 0; i++) {
		double first = -1, last = -1, t90 = -1;
		for (size_t k = 0; k < json_object_array_length(list); k++) {
			struct json_object *s =
				json_object_array_get_idx(list, k);
			struct json_object *ps, *t, *v;
			json_object_object_get_ex(s, "processes", &ps);
			json_object_object_get_ex(s, "t", &t);
			for (size_t j = 0; j < json_object_array_length(ps);
			     j++) {
				struct json_object *o, *pid;
				o = json_object_array_get_idx(ps, j);
				json_object_object_get_ex(o, "pid", &pid);
				if (json_object_get_int(pid) != sp.pid)
					continue;
				json_object_object_get_ex(o, "locality", &v);
				last = json_object_get_double(v);
				if (first < 0)
					first = last;
				if (t90 < 0 && last >= 0.9)
					t90 = json_object_get_double(t);
			}
		}
		if (first < 0)
			continue;
		printf("%s: locality %.0f%% first, %.0f%% last", sp.name,
		       100 * first, 100 * last);
		if (t90 >= 0)
			printf(", 90%% local at %.2f s\n", t90);
		else
			printf(", never 90%% local\n");
	}
}

static int write_engine_report(const struct nl_scenario *sc,
			       struct nl_engine *e, const char *path,
			       const int *jobs, size_t njobs,
			       struct json_object *timeline)
{
	struct json_object *r;
	int rc;

	if (njobs == 1) {
		r = with_ceilings(nl_engine_report(e, jobs[0]), sc);
	} else {
		struct json_object *list = json_object_new_array();
		r = json_object_new_object();
		for (size_t k = 0; k < njobs; k++)
			json_object_array_add(
				list,
				with_ceilings(nl_engine_report(e, jobs[k]),
					      sc));
		json_object_object_add(r, "reports", list);
	}
	if (timeline) /* the machine's, beside the policy's report */
		json_object_object_add(r, "timeline",
				       json_object_get(timeline));
	rc = nl_cli_write_json(CMD, path, r);
	json_object_put(r);
	return rc;
}

static int sim_engine(const struct nl_scenario *sc, const struct sim_args *a,
		      enum nl_policy_kind pk)
{
	struct nl_machine *m = NULL;
	struct nl_engine *e = NULL;
	struct nl_engine_summary tot = {0}, s;
	struct nl_run_result r = {0};
	const struct nl_process_info *p;
	int *jobs = NULL, rc, status = NL_EXIT_FAIL;
	size_t n, njobs = 0;
	char err[1024] = "";

	rc = nl_run_engine(sc, pk, &a->o, a->seed, &m, &e, err, sizeof(err));
	if (rc == 0)
		rc = nl_run_result_fill(m, e, &r);
	if (rc == 0)
		rc = m->ops->processes(m, &p, &n);
	if (rc == 0 && !(jobs = calloc(n + 1, sizeof(int))))
		rc = -ENOMEM;
	if (rc < 0) {
		nl_cli_error(CMD, "%s", *err ? err : strerror(-rc));
		status = rc == -EINVAL ? NL_EXIT_USAGE : NL_EXIT_FAIL;
		goto out;
	}
	/* One domain a job (nl_run_engine). */
	njobs = nl_process_jobs(p, n, jobs);
	print_header(sc, a);
	print_processes(sc, &r);
	for (size_t k = 0; k < njobs; k++)
		if (nl_engine_summary(e, jobs[k], &s) == 0) {
			tot.periods += s.periods;
			tot.migrations += s.migrations;
			tot.swaps += s.swaps;
			tot.rollbacks += s.rollbacks;
			tot.skips += s.skips;
		}
	printf("makespan_s %.3f  periods %d  migrations %d  swaps %d  "
	       "rollbacks %d  skips %d\n",
	       r.makespan_s, tot.periods, tot.migrations, tot.swaps,
	       tot.rollbacks, tot.skips);
	print_os_line(&r);
	if (a->o.trace)
		print_timeline(sc, a->o.trace);
	status = NL_EXIT_OK;
	if (a->report &&
	    write_engine_report(sc, e, a->report, jobs, njobs, a->o.trace) < 0)
		status = NL_EXIT_FAIL;
out:
	nl_run_result_free(&r);
	nl_engine_free(e);
	nl_machine_destroy(m);
	free(jobs);
	return status;
}

/* A baseline's report: what a bench run records, the OS model under it,
 * the processes' names and the placement. */
static int write_baseline_report(const struct nl_scenario *sc,
				 const struct sim_args *a,
				 const struct nl_run_result *r)
{
	struct json_object *o =
		nl_bench_run_json(nl_scenario_name(sc), a->run, a->seed, r);
	struct json_object *names = json_object_new_array();
	struct json_object *place = json_object_new_array();
	struct nl_scenario_proc p;
	int rc;

	json_object_object_add(o, "os", json_object_new_string(os_name(sc, a)));
	for (int i = 0; nl_scenario_proc(sc, i, &p) == 0; i++)
		json_object_array_add(names, json_object_new_string(p.name));
	json_object_object_add(o, "processes", names);
	for (int x = 0; x < r->nthreads; x++)
		json_object_array_add(place,
				      json_object_new_int(r->final_cpu[x]));
	json_object_object_add(o, "final_cpu", place);
	if (a->o.trace)
		json_object_object_add(o, "timeline",
				       json_object_get(a->o.trace));
	rc = nl_cli_write_json(CMD, a->report, o);
	json_object_put(o);
	return rc;
}

static int sim_baseline(const struct nl_scenario *sc, const struct sim_args *a)
{
	struct nl_runs *rs = NULL;
	const struct nl_run_result *r;
	char err[1024] = "";
	int rc, status = NL_EXIT_OK;

	rc = nl_runs_create(sc, a->seed, &a->o, &rs);
	if (rc == 0)
		rc = nl_runs_get(rs, a->run, &r, err, sizeof(err));
	if (rc < 0) {
		nl_cli_error(CMD, "%s", *err ? err : strerror(-rc));
		nl_runs_free(rs);
		return rc == -EINVAL ? NL_EXIT_USAGE : NL_EXIT_FAIL;
	}
	print_header(sc, a);
	print_processes(sc, r);
	printf("makespan_s %.3f  mean_completion_s %.3f\n", r->makespan_s,
	       r->mean_completion_s);
	print_os_line(r);
	if (a->o.trace)
		print_timeline(sc, a->o.trace);
	if (a->report && write_baseline_report(sc, a, r) < 0)
		status = NL_EXIT_FAIL;
	nl_runs_free(rs);
	return status;
}

#ifndef NUMALOT_DATADIR
#define NUMALOT_DATADIR "/usr/local/share/numalot"
#endif
#define INSTALLED_SCENARIOS NUMALOT_DATADIR "/scenarios"

/* A scenario not found as given is looked for by its file name among the
 * installed ones (docs/scenarios.md); the path found, or NULL with err
 * saying where numalot looked. */
static const char *find_scenario(const char *name, char *buf, size_t len,
				 char *err, size_t errlen)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (access(name, F_OK) == 0 || errno != ENOENT || !*base)
		return name;
	snprintf(buf, len, "%s/%s", INSTALLED_SCENARIOS, base);
	if (access(buf, F_OK) == 0)
		return buf;
	snprintf(buf, len, "%s/set/%s", INSTALLED_SCENARIOS, base);
	if (access(buf, F_OK) == 0)
		return buf;
	snprintf(err, errlen,
		 "no scenario %s: not there, nor as %s in " INSTALLED_SCENARIOS
		 "/ or " INSTALLED_SCENARIOS "/set/ (the installed ones)",
		 name, base);
	return NULL;
}

int nl_cmd_sim(int argc, char **argv)
{
	struct sim_args a = {0};
	struct nl_scenario *sc = NULL;
	struct nl_machine_file *mf = NULL;
	enum nl_policy_kind pk;
	char err[1024];
	int rc, status;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc > 0 ? NL_EXIT_OK : NL_EXIT_USAGE;
	char found[4096];
	a.scenario = find_scenario(a.scenario, found, sizeof(found), err,
				   sizeof(err));
	if (!a.scenario) {
		nl_cli_error(CMD, "%s", err);
		return NL_EXIT_USAGE;
	}
	if (a.machine &&
	    nl_machine_file_load(a.machine, &mf, err, sizeof(err)) < 0) {
		nl_cli_error(CMD, "--machine: %s", err);
		return NL_EXIT_USAGE;
	}
	rc = nl_scenario_load_on(a.scenario, mf, &sc, err, sizeof(err));
	nl_machine_file_free(mf);
	if (rc < 0) {
		/* A scenario that does not fit the file's machine. */
		nl_cli_error(CMD, "%s%s%s%s", err,
			     a.machine ? " (on the machine of " : "",
			     a.machine ? a.machine : "", a.machine ? ")" : "");
		return rc == -ENOMEM ? NL_EXIT_FAIL : NL_EXIT_USAGE;
	}
	if (a.o.trace_s > 0 && !(a.o.trace = json_object_new_array())) {
		nl_scenario_free(sc);
		return NL_EXIT_FAIL;
	}
	if (nl_run_engine_policy(a.run, &pk))
		status = sim_engine(sc, &a, pk);
	else
		status = sim_baseline(sc, &a);
	json_object_put(a.o.trace);
	nl_scenario_free(sc);
	return status;
}
