/*
 * numalot bench: every scenario under every policy and baseline for several
 * seeds, in jobs whose results never depend on --jobs (docs/evaluation.md),
 * then a table, a JSON file and a chart.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "scenario.h"

#define CMD "bench"
/* The scenario set, relative to the current folder (docs/scenarios.md). */
#define DEFAULT_SET "etc/scenarios/set"
#ifndef NUMALOT_DATADIR
#define NUMALOT_DATADIR "/usr/local/share/numalot"
#endif
/* Where make install puts the set. */
#define INSTALLED_SET NUMALOT_DATADIR "/scenarios/set"
#define DEFAULT_POLICIES                                                       \
	"imar2,lbma,imar2-paper,lbma-paper,static,linux-nonuma,best-static,"   \
	"ideal-locality"
#define MAX_SEEDS 1000
#define MAX_JOBS 64

struct bench_args {
	const char *policies;
	const char *json;
	const char *svg;
	const char *html;
	const char *counters; /* comma-separated backends */
	double fail_worse;    /* --fail-worse=PCT, < 0 none */
	int nseeds;
	int jobs;
	struct nl_run_opts o;
	char **files; /* scenario files, directories expanded */
	int nfiles;
	struct nl_bench_random rnd; /* --random and its options */
	const char *machine;	    /* --machine=FILE */
};

static int add_file(struct bench_args *a, const char *path)
{
	char **n = realloc(a->files, sizeof(*n) * ((size_t)a->nfiles + 1));

	if (!n)
		return -1;
	a->files = n;
	a->files[a->nfiles] = strdup(path);
	return a->files[a->nfiles++] ? 0 : -1;
}

/* A folder stands for the *.json files in it, in name order. */
static int add_path(struct bench_args *a, const char *path)
{
	struct stat st;
	char pattern[PATH_MAX];
	glob_t g;
	int rc = 0;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return add_file(a, path);
	/* numalot-1/ lists numalot-1/0.vm.json, not numalot-1//0... */
	int dl = (int)strlen(path);
	while (dl > 0 && path[dl - 1] == '/')
		dl--;
	snprintf(pattern, sizeof(pattern), "%.*s/*.json", dl, path);
	if (glob(pattern, 0, NULL, &g) != 0) {
		nl_cli_error(CMD, "no scenario (*.json) in %s", path);
		return -1;
	}
	for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
		rc = add_file(a, g.gl_pathv[i]);
	globfree(&g);
	return rc;
}

/* 0 parsed, 1 --help given (usage printed), -1 bad (error printed). */
static int parse_args(int argc, char **argv, struct bench_args *a)
{
	static const struct option lo[] = {
		{"policies", required_argument, NULL, 'p'},
		{"seeds", required_argument, NULL, 's'},
		{"jobs", required_argument, NULL, 'j'},
		{"json", required_argument, NULL, 'J'},
		{"svg", required_argument, NULL, 'S'},
		{"html", required_argument, NULL, 'H'},
		NL_ARGS_MODEL,
		{"counters", required_argument, NULL, 'c'},
		{"fail-worse", required_argument, NULL, 'W'},
		{"random", required_argument, NULL, NL_BENCH_OPT_RANDOM},
		{"seed", required_argument, NULL, NL_BENCH_OPT_SEED},
		{"save", required_argument, NULL, NL_BENCH_OPT_SAVE},
		{"perturb", required_argument, NULL, NL_BENCH_OPT_PERTURB},
		NL_ARGS_HELP,
		{0}};
	long v;
	int c;

	a->policies = DEFAULT_POLICIES;
	a->counters = "pebs";
	a->fail_worse = -1;
	a->nseeds = 5;
	a->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (a->jobs < 1)
		a->jobs = 1;
	if (a->jobs > MAX_JOBS)
		a->jobs = MAX_JOBS;
	nl_run_opts_default(&a->o);
	nl_args_start();
	while ((c = nl_args_next(CMD, argc, argv, "h", lo)) != -1) {
		switch (c) {
		case 'p':
			a->policies = optarg;
			break;
		case 's':
			if (nl_cli_whole(CMD, "--seeds", optarg, 1, MAX_SEEDS,
					 &v) < 0)
				return -1;
			a->nseeds = (int)v;
			break;
		case 'j':
			if (nl_cli_whole(CMD, "--jobs", optarg, 1, MAX_JOBS,
					 &v) < 0)
				return -1;
			a->jobs = (int)v;
			break;
		case 'J':
			a->json = optarg;
			break;
		case 'S':
			a->svg = optarg;
			break;
		case 'H':
			a->html = optarg;
			break;
		case 'c':
			a->counters = optarg;
			break;
		case 'W': {
			char *end;
			errno = 0;
			a->fail_worse = strtod(optarg, &end);
			if (!*optarg || *end || errno ||
			    !(a->fail_worse >= 0) || a->fail_worse > 100) {
				nl_cli_error(CMD,
					     "--fail-worse wants a percentage "
					     "from 0 to 100, not \"%s\"",
					     optarg);
				return -1;
			}
			break;
		}
		case NL_BENCH_OPT_RANDOM:
		case NL_BENCH_OPT_SEED:
		case NL_BENCH_OPT_SAVE:
		case NL_BENCH_OPT_PERTURB:
			if (nl_bench_random_option(&a->rnd, c, optarg) < 0)
				return -1;
			break;
		case 'h':
			nl_cli_usage(CMD, stdout);
			return 1;
		default:
			if (nl_cli_model_option(CMD, c, optarg, &a->o,
						&a->machine) <= 0)
				return -1;
		}
	}
	if (nl_bench_random_check(&a->rnd) < 0)
		return -1;
	if (a->machine && a->rnd.n) {
		nl_cli_error(CMD, "--machine applies to scenario files, not "
				  "to --random (a random scenario draws its "
				  "own machine)");
		return -1;
	}
	for (int i = optind; i < argc; i++)
		if (add_path(a, argv[i]) < 0)
			return -1;
	/* With --random and no files, only the random scenarios. */
	if (a->nfiles == 0 && a->rnd.n == 0) {
		/* The source tree's set, else the installed one. */
		struct stat st;
		if (stat(DEFAULT_SET, &st) == 0 && S_ISDIR(st.st_mode))
			return add_path(a, DEFAULT_SET);
		if (stat(INSTALLED_SET, &st) == 0 && S_ISDIR(st.st_mode))
			return add_path(a, INSTALLED_SET);
		nl_cli_error(CMD,
			     "no scenario given, and neither %s/ here nor %s/ "
			     "(usage: numalot bench [OPTIONS] "
			     "[SCENARIO.json|FOLDER ...])",
			     DEFAULT_SET, INSTALLED_SET);
		return -1;
	}
	return 0;
}

static int has_pol(const struct nl_bench *b, enum nl_run_kind k)
{
	for (int i = 0; i < b->npol; i++)
		if (b->pol[i] == k)
			return i;
	return -1;
}

/* The listed policies, then linux and best-static if not listed. */
static int parse_policies(const char *list, struct nl_bench *b)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int rc = 0;

	b->pol = calloc(NL_RUN_COUNT, sizeof(*b->pol));
	if (!copy || !b->pol) {
		free(copy);
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok && rc == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		enum nl_run_kind k;
		if (nl_run_from_name(tok, &k) < 0) {
			nl_cli_error(CMD, "unknown policy \"%s\" (valid: %s)",
				     tok, nl_run_names());
			rc = -1;
		} else if (has_pol(b, k) < 0) {
			b->pol[b->npol++] = k;
		}
	}
	free(copy);
	if (rc == 0 && b->npol == 0) {
		nl_cli_error(CMD, "--policies is empty (valid: %s)",
			     nl_run_names());
		rc = -1;
	}
	if (rc == 0 && has_pol(b, NL_RUN_LINUX) < 0)
		b->pol[b->npol++] = NL_RUN_LINUX;
	if (rc == 0 && has_pol(b, NL_RUN_BEST_STATIC) < 0)
		b->pol[b->npol++] = NL_RUN_BEST_STATIC;
	b->ilinux = has_pol(b, NL_RUN_LINUX);
	b->ibest = has_pol(b, NL_RUN_BEST_STATIC);
	return rc;
}

static int load_scenarios(struct bench_args *a, struct nl_bench *b)
{
	char err[1024];
	size_t n = (size_t)a->nfiles + (size_t)a->rnd.n;
	struct nl_machine_file *mf = NULL;

	b->sc = calloc(n, sizeof(*b->sc));
	b->files = calloc(n, sizeof(*b->files));
	if (!b->sc || !b->files)
		return -ENOMEM;
	if (a->machine &&
	    nl_machine_file_load(a->machine, &mf, err, sizeof(err)) < 0) {
		nl_cli_error(CMD, "--machine: %s", err);
		return -EINVAL;
	}
	for (int i = 0; i < a->nfiles; i++) {
		int rc = nl_scenario_load_on(a->files[i], mf, &b->sc[i], err,
					     sizeof(err));
		if (rc < 0) {
			nl_cli_error(CMD, "%s%s%s%s", err,
				     mf ? " (on the machine of " : "",
				     mf ? a->machine : "", mf ? ")" : "");
			nl_machine_file_free(mf);
			return rc;
		}
		b->files[i] = a->files[i];
		b->nscen++;
	}
	nl_machine_file_free(mf);
	return nl_bench_random_load(&a->rnd, b);
}

/* Every policy of unit u (scenario u / nseeds, seed u % nseeds). */
static int run_unit(struct nl_bench *b, const struct nl_run_opts *o, int u,
		    char *err, size_t errlen)
{
	int scen = u / b->nseeds, seed = u % b->nseeds;
	struct nl_runs *rs;
	int rc = nl_runs_create(b->sc[scen], nl_bench_seed(seed), o, &rs);

	for (int p = 0; p < b->npol && rc == 0; p++) {
		const struct nl_run_result *r;
		rc = nl_runs_get(rs, b->pol[p], &r, err, errlen);
		if (rc == 0)
			rc = nl_run_result_copy(nl_bench_at(b, scen, seed, p),
						r);
	}
	nl_runs_free(rs);
	return rc;
}

/* One line per run: "R u p makespan mean pages unf mig osmig start end..."
 * with exact (hexadecimal) doubles. */
static void write_unit(FILE *f, const struct nl_bench *b, int u)
{
	int scen = u / b->nseeds, seed = u % b->nseeds;

	for (int p = 0; p < b->npol; p++) {
		const struct nl_run_result *r = nl_bench_at(b, scen, seed, p);
		fprintf(f, "R %d %d %a %a %a %d %d %d %a", u, p, r->makespan_s,
			r->mean_completion_s, r->pages_migrated_bytes,
			r->unfinished, r->migrations, r->os_migrations,
			r->pages_moved_bytes);
		for (int i = 0; i < nl_scenario_nprocs(b->sc[scen]); i++)
			fprintf(f, " %a %a", r->start_s[i], r->end_s[i]);
		fputc('\n', f);
	}
}

/* The next number of a result line into *v; -1 at its end. */
static int next_number(char **save, double *v)
{
	char *tok = strtok_r(NULL, " \n", save);

	if (!tok)
		return -1;
	*v = strtod(tok, NULL);
	return 0;
}

static int read_line(struct nl_bench *b, char *line)
{
	char *save = NULL, *tok = strtok_r(line, " \n", &save);
	struct nl_run_result r = {0};
	int scen, seed, np;
	double v[9];

	if (!tok || strcmp(tok, "R"))
		return -1;
	for (int i = 0; i < 9; i++)
		if (next_number(&save, &v[i]) < 0)
			return -1;
	if (v[0] < 0 || v[0] >= b->nscen * b->nseeds || v[1] < 0 ||
	    v[1] >= b->npol)
		return -1;
	scen = (int)v[0] / b->nseeds;
	seed = (int)v[0] % b->nseeds;
	np = nl_scenario_nprocs(b->sc[scen]);
	r.nprocs = np;
	r.makespan_s = v[2];
	r.mean_completion_s = v[3];
	r.pages_migrated_bytes = v[4];
	r.unfinished = (int)v[5];
	r.migrations = (int)v[6];
	r.os_migrations = (int)v[7];
	r.pages_moved_bytes = v[8];
	r.start_s = calloc((size_t)np + 1, sizeof(double));
	r.end_s = calloc((size_t)np + 1, sizeof(double));
	for (int i = 0; r.start_s && r.end_s && i < np; i++)
		if (next_number(&save, &r.start_s[i]) < 0 ||
		    next_number(&save, &r.end_s[i]) < 0)
			np = -1;
	if (!r.start_s || !r.end_s || np < 0) {
		free(r.start_s);
		free(r.end_s);
		return -1;
	}
	*nl_bench_at(b, scen, seed, (int)v[1]) = r;
	return 0;
}

/* Run the units in jobs child processes and read their results back. */
static int run_parallel(struct nl_bench *b, const struct nl_run_opts *o)
{
	int nunits = b->nscen * b->nseeds, rc = 0;
	FILE **out = calloc((size_t)b->jobs, sizeof(*out));
	pid_t *pid = calloc((size_t)b->jobs, sizeof(*pid));
	char *line = NULL;
	size_t cap = 0;

	if (!out || !pid) {
		free(out);
		free(pid);
		return -1;
	}
	fflush(NULL);
	for (int j = 0; j < b->jobs && rc == 0; j++) {
		out[j] = tmpfile();
		pid[j] = out[j] ? fork() : -1;
		if (pid[j] < 0) {
			nl_cli_error(CMD, "cannot start job %d: %m", j);
			rc = -1;
		} else if (pid[j] == 0) {
			char err[1024] = "";
			for (int u = j; u < nunits; u += b->jobs) {
				if (run_unit(b, o, u, err, sizeof(err)) < 0) {
					fprintf(stderr, "numalot %s: %s: %s\n",
						CMD, b->files[u / b->nseeds],
						err);
					_exit(1);
				}
				write_unit(out[j], b, u);
			}
			_exit(fflush(out[j]) ? 1 : 0);
		}
	}
	for (int j = 0; j < b->jobs; j++) {
		int status;
		if (pid[j] <= 0)
			continue;
		if (waitpid(pid[j], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			if (rc == 0)
				nl_cli_error(CMD, "job %d failed", j);
			rc = -1;
		}
	}
	for (int j = 0; j < b->jobs; j++) {
		if (!out[j])
			continue;
		rewind(out[j]);
		while (rc == 0 && getline(&line, &cap, out[j]) > 0)
			if (read_line(b, line) < 0) {
				nl_cli_error(CMD, "job %d: bad result line", j);
				rc = -1;
			}
		fclose(out[j]);
	}
	/* Every run must have come back. */
	for (size_t i = 0; rc == 0 && i < (size_t)nunits * b->npol; i++)
		if (!b->runs[i].start_s) {
			nl_cli_error(CMD, "a job's results are incomplete");
			rc = -1;
		}
	free(line);
	free(out);
	free(pid);
	return rc;
}

static int run_all(struct nl_bench *b, const struct nl_run_opts *o)
{
	int nunits = b->nscen * b->nseeds;
	char err[1024] = "";

	if (b->jobs > nunits)
		b->jobs = nunits;
	if (b->jobs > 1)
		return run_parallel(b, o);
	for (int u = 0; u < nunits; u++)
		if (run_unit(b, o, u, err, sizeof(err)) < 0) {
			nl_cli_error(CMD, "%s: %s", b->files[u / b->nseeds],
				     err);
			return -1;
		}
	return 0;
}

static void bench_free(struct nl_bench *b)
{
	if (b->runs)
		for (size_t i = 0; i < (size_t)b->nscen * b->nseeds * b->npol;
		     i++)
			nl_run_result_free(&b->runs[i]);
	free(b->runs);
	for (int i = 0; b->sc && i < b->nscen; i++)
		nl_scenario_free(b->sc[i]);
	free(b->sc);
	free(b->files);
	free(b->pol);
}

static int write_outputs(const struct bench_args *a, const struct nl_bench *b,
			 enum nl_sim_counters c, int many)
{
	const char *paths[3] = {a->json, a->svg, a->html};
	int status = NL_EXIT_OK;

	for (int i = 0; i < 3; i++) {
		char *p;
		int rc;
		if (!paths[i])
			continue;
		p = nl_bench_output_path(paths[i], c, many);
		rc = !p	      ? -1
		     : i == 0 ? nl_bench_write_json(b, p)
		     : i == 1 ? nl_bench_write_svg(b, p)
			      : nl_bench_write_html(b, p);
		if (rc < 0)
			status = NL_EXIT_FAIL;
		free(p);
	}
	return status;
}

int nl_cmd_bench(int argc, char **argv)
{
	struct bench_args a = {0};
	struct nl_bench b = {0};
	enum nl_sim_counters counters[NL_SIM_COUNTERS_COUNT];
	int ncounters = 0, worse = 0;
	int status = NL_EXIT_USAGE;

	int rc = parse_args(argc, argv, &a);
	if (rc > 0)
		status = NL_EXIT_OK;
	if (rc || parse_policies(a.policies, &b) < 0)
		goto out;
	ncounters = nl_bench_parse_counters(a.counters, counters,
					    NL_SIM_COUNTERS_COUNT);
	if (ncounters < 0 || load_scenarios(&a, &b) < 0)
		goto out;
	b.nseeds = a.nseeds;
	b.runs = calloc((size_t)b.nscen * b.nseeds * b.npol, sizeof(*b.runs));
	status = NL_EXIT_FAIL;
	if (!b.runs)
		goto out;
	status = NL_EXIT_OK;
	for (int c = 0; c < ncounters && status == NL_EXIT_OK; c++) {
		struct timespec t0, t1;
		a.o.counters = counters[c];
		b.counters = nl_sim_counters_name(counters[c]);
		b.jobs = a.jobs;
		for (size_t i = 0; i < (size_t)b.nscen * b.nseeds * b.npol; i++)
			nl_run_result_free(&b.runs[i]);
		if (c > 0)
			fputc('\n', stdout);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (run_all(&b, &a.o) < 0) {
			status = NL_EXIT_FAIL;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		b.wall_s = (double)(t1.tv_sec - t0.tv_sec) +
			   (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		nl_bench_print(&b, stdout);
		fflush(stdout);
		status = write_outputs(&a, &b, counters[c], ncounters > 1);
		if (a.fail_worse >= 0)
			worse += nl_bench_worse_runs(&b, a.fail_worse);
	}
	if (worse && status == NL_EXIT_OK)
		status = NL_EXIT_FAIL;
out:
	bench_free(&b);
	for (int i = 0; i < a.nfiles; i++)
		free(a.files[i]);
	free(a.files);
	nl_bench_random_free(&a.rnd);
	return status;
}
