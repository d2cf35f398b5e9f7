/*
 * numalot eval: the site kit. Co-scheduled commands (the bundled kernels
 * by default) in the paper's classes under Linux, numad, numalot and the
 * best static placement, in a seeded random order, repeated; the table,
 * JSON as it goes (resumable), HTML (docs/evaluation.md, "On your own
 * nodes"). The runs: eval_run.c; the systems: eval_sys.c.
 */
#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "eval.h"
#include "util.h"

struct eval_args {
	const char *kernels, *size, *workload, *classes, *systems, *resume;
	int threads, iterations, seed_given;
	char **rest; /* after "--": commands split at each further "--" */
	int nrest;
};

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_alarm(int sig)
{
	(void)sig; /* only to end a wait (eval_run.c) */
}

static void handle_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the wait for the children must end to stop them. */
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
}

/* A comma-separated list of names into on[] (n names). */
static int name_list(const char *opt, const char *list,
		     const char *const *names, int n, int *on)
{
	char buf[512], *save = NULL, valid[256] = "";
	for (int i = 0; i < n; i++) {
		on[i] = 0;
		snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid),
			 "%s%s", i ? ", " : "", names[i]);
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int k = -1;
		for (int i = 0; i < n; i++)
			if (!strcmp(t, names[i]))
				k = i;
		if (k < 0) {
			nl_cli_error(EVAL_CMD, "%s: unknown \"%s\" (valid: %s)",
				     opt, t, valid);
			return -1;
		}
		on[k] = 1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct eval_args *a,
		 struct eval_conf *c)
{
	static const struct option lo[] = {
		{"reps", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 's'},
		{"classes", required_argument, NULL, 'c'},
		{"systems", required_argument, NULL, 'S'},
		{"kernels", required_argument, NULL, 'k'},
		{"size", required_argument, NULL, 'z'},
		{"threads", required_argument, NULL, 't'},
		{"iterations", required_argument, NULL, 'i'},
		{"workload", required_argument, NULL, 'w'},
		{"numactl", no_argument, NULL, 'n'},
		{"srun", no_argument, NULL, 'u'},
		{"srun-args", required_argument, NULL, 'U'},
		{"numad-args", required_argument, NULL, 'd'},
		{"json", required_argument, NULL, 'j'},
		{"html", required_argument, NULL, 'H'},
		{"logs", required_argument, NULL, 'l'},
		{"no-warmup", no_argument, NULL, 'W'},
		{"resume", required_argument, NULL, 'R'},
		NL_ARGS_HELP,
		{0}};
	uint64_t seed;
	long v;
	int ch;

	c->reps = 5;
	c->warmup = 1;
	c->json = "numalot-eval.json";
	c->numad_args = "-i 1:2 -u 100";
	a->kernels = "cg,mg,ft,ep";
	a->size = "medium";
	nl_args_start();
	while ((ch = nl_args_next(EVAL_CMD, argc, argv, "+h", lo)) != -1) {
		switch (ch) {
		case 'r':
			if (nl_cli_whole(EVAL_CMD, "--reps", optarg, 1, 1000,
					 &v) < 0)
				return -1;
			c->reps = (int)v;
			break;
		case 's':
			if (nl_cli_seed(EVAL_CMD, "--seed", optarg, &seed) < 0)
				return -1;
			c->seed = seed;
			a->seed_given = 1;
			break;
		case 'c':
			a->classes = optarg;
			break;
		case 'S':
			a->systems = optarg;
			break;
		case 'k':
			a->kernels = optarg;
			break;
		case 'z':
			a->size = optarg;
			break;
		case 't':
			if (nl_cli_whole(EVAL_CMD, "--threads", optarg, 1, 1024,
					 &v) < 0)
				return -1;
			a->threads = (int)v;
			break;
		case 'i':
			if (nl_cli_whole(EVAL_CMD, "--iterations", optarg, 1,
					 1000000, &v) < 0)
				return -1;
			a->iterations = (int)v;
			break;
		case 'w':
			a->workload = optarg;
			break;
		case 'n':
			c->use_numactl = 1;
			break;
		case 'u':
			c->srun = 1;
			break;
		case 'U':
			c->srun_args = optarg;
			break;
		case 'd':
			c->numad_args = optarg;
			break;
		case 'j':
			c->json = optarg;
			break;
		case 'H':
			c->html = optarg;
			break;
		case 'l':
			c->logs = optarg;
			break;
		case 'W':
			c->warmup = 0;
			break;
		case 'R':
			a->resume = optarg;
			break;
		case 'h':
			nl_cli_usage(EVAL_CMD, stdout);
			return 1;
		default:
			return -1;
		}
	}
	a->rest = argv + optind;
	a->nrest = argc - optind;
	if (a->nrest > 0 && strcmp(a->rest[0], "--") &&
	    strcmp(argv[optind - 1], "--")) {
		nl_cli_error(EVAL_CMD,
			     "commands come after \"--\" (got \"%s\")",
			     a->rest[0]);
		return -1;
	}
	return 0;
}

static void add_cmd(struct eval_conf *c, char **argv, int n)
{
	struct eval_cmd *e = &c->cmds[c->ncmds++];
	const char *base = strrchr(argv[0], '/');
	e->argv = calloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++)
		e->argv[i] = strdup(argv[i]);
	e->argc = n;
	snprintf(e->name, sizeof(e->name), "%s", base ? base + 1 : argv[0]);
}

/* numalot-workload beside this binary (a build), else in PATH. */
static int find_workload(const struct eval_conf *c, const char *asked,
			 char *out, size_t len)
{
	const char *slash = strrchr(c->numalot, '/');
	if (asked) {
		snprintf(out, len, "%s", asked);
		return access(out, X_OK);
	}
	snprintf(out, len, "%.*s/numalot-workload",
		 slash ? (int)(slash - c->numalot) : 1,
		 slash ? c->numalot : ".");
	if (access(out, X_OK) == 0)
		return 0;
	snprintf(out, len, "numalot-workload");
	const char *path = getenv("PATH");
	char buf[4096];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/numalot-workload", (int)n,
			 path);
		if (access(buf, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -1;
}

/* The commands: those after "--" (each further "--" starts the next),
 * else the kernels. */
static int commands(struct eval_args *a, struct eval_conf *c)
{
	int from = a->nrest && !strcmp(a->rest[0], "--") ? 1 : 0;
	if (a->nrest > from) {
		for (int i = from; i <= a->nrest; i++) {
			if (i < a->nrest && strcmp(a->rest[i], "--"))
				continue;
			if (i == from) {
				nl_cli_error(EVAL_CMD, "an empty command "
						       "between \"--\"s");
				return -1;
			}
			if (c->ncmds == EVAL_MAX_PROCS) {
				nl_cli_error(EVAL_CMD,
					     "at most %d commands at once",
					     EVAL_MAX_PROCS);
				return -1;
			}
			add_cmd(c, a->rest + from, i - from);
			from = i + 1;
		}
		return 0;
	}
	char w[4096], list[256], *save = NULL, th[16], it[16];
	if (find_workload(c, a->workload, w, sizeof(w)) < 0) {
		nl_cli_error(EVAL_CMD,
			     "numalot-workload (the bundled kernels) is "
			     "neither beside %s nor in PATH: give "
			     "--workload=PATH or your commands after \"--\"",
			     c->numalot);
		return -1;
	}
	snprintf(th, sizeof(th), "%d", a->threads);
	snprintf(it, sizeof(it), "%d", a->iterations);
	snprintf(list, sizeof(list), "%s", a->kernels);
	for (char *k = strtok_r(list, ",", &save); k;
	     k = strtok_r(NULL, ",", &save)) {
		char *v[] = {w,
			     "--kernel",
			     k,
			     "--threads",
			     th,
			     "--size",
			     (char *)a->size,
			     "--iterations",
			     it,
			     NULL};
		if (strcmp(k, "cg") && strcmp(k, "mg") && strcmp(k, "ep") &&
		    strcmp(k, "ft") && strcmp(k, "is")) {
			nl_cli_error(EVAL_CMD,
				     "--kernels: unknown \"%s\" (valid: cg, "
				     "mg, ep, ft, is)",
				     k);
			return -1;
		}
		if (c->ncmds == EVAL_MAX_PROCS) {
			nl_cli_error(EVAL_CMD, "--kernels: at most %d at once",
				     EVAL_MAX_PROCS);
			return -1;
		}
		add_cmd(c, v, a->iterations ? 9 : 7);
		snprintf(c->cmds[c->ncmds - 1].name, sizeof(c->cmds[0].name),
			 "%s", k);
	}
	return c->ncmds ? 0 : -1;
}

/* The most data a bundled kernel of the case has, MiB (--size; ep has
 * none), or -1: --size=node, or a command of the site's. */
static double kernels_mib(const struct eval_conf *c)
{
	double most = 0;
	for (int i = 0; i < c->ncmds; i++) {
		const struct eval_cmd *e = &c->cmds[i];
		const char *size = NULL;
		int ep = 0, kernel = 0;
		for (int j = 0; j + 1 < e->argc; j++) {
			if (!strcmp(e->argv[j], "--kernel")) {
				kernel = 1;
				ep = !strcmp(e->argv[j + 1], "ep");
			} else if (!strcmp(e->argv[j], "--size")) {
				size = e->argv[j + 1];
			}
		}
		double v = !kernel || !size	     ? -1
			   : ep			     ? 0
			   : !strcmp(size, "small")  ? 4
			   : !strcmp(size, "medium") ? 256
			   : !strcmp(size, "large")  ? 2048
			   : !strcmp(size, "node")   ? -1
						     : atof(size);
		if (v < 0)
			return -1;
		if (v > most)
			most = v;
	}
	return most;
}

static unsigned long long mix(unsigned long long *s)
{
	unsigned long long x = (*s += 0x9e3779b97f4a7c15ULL);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Every class x system x repetition, shuffled by the seed. */
static int plan(struct eval_plan *p)
{
	const struct eval_conf *c = &p->c;
	unsigned long long s = c->seed;
	size_t n = 0;
	p->runs = calloc((size_t)c->nclasses * SYS_COUNT * (size_t)c->reps,
			 sizeof(*p->runs));
	if (!p->runs)
		return -1;
	for (int k = 0; k < c->nclasses; k++)
		for (int y = 0; y < SYS_COUNT; y++)
			for (int r = 0; c->sys_on[y] && r < c->reps; r++)
				p->runs[n++] =
					(struct eval_run){.cls = c->classes[k],
							  .sys = y,
							  .rep = r + 1,
							  .numalot_cpu = -1};
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(mix(&s) % i);
		struct eval_run t = p->runs[i - 1];
		p->runs[i - 1] = p->runs[j];
		p->runs[j] = t;
	}
	p->nruns = n;
	return 0;
}

static int setup(struct eval_args *a, struct eval_plan *p)
{
	struct eval_conf *c = &p->c;
	int on[SYS_COUNT], cl[EVAL_NCLASSES];
	char err[512];
	if (a->resume) {
		if (nl_eval_load(a->resume, p, err, sizeof(err)) < 0) {
			nl_cli_error(EVAL_CMD, "--resume: %s", err);
			return -1;
		}
		nl_eval_systems(c, (int)geteuid());
		for (size_t i = 0; i < p->nruns; i++)
			if (!p->runs[i].done && !c->sys_on[p->runs[i].sys]) {
				nl_cli_error(
					EVAL_CMD,
					"--resume: %s was planned but "
					"cannot run here: %s",
					nl_eval_system_names[p->runs[i].sys],
					c->skip[p->runs[i].sys]);
				return -1;
			}
		for (int y = 0; y < SYS_COUNT; y++) {
			int planned = 0;
			for (size_t i = 0; i < p->nruns; i++)
				planned |= p->runs[i].sys == y;
			if (!planned && c->sys_on[y]) {
				c->sys_on[y] = 0;
				snprintf(c->skip[y], sizeof(c->skip[y]),
					 "not in the resumed plan");
			}
		}
		return 0;
	}
	if (!a->threads)
		a->threads = numa_num_task_cpus() / c->nodes > 0
				     ? numa_num_task_cpus() / c->nodes
				     : 1;
	if (commands(a, c) < 0)
		return -1;
	if (name_list("--classes",
		      a->classes ? a->classes : "direct,ind,interleave",
		      nl_eval_class_names, EVAL_NCLASSES, cl) < 0 ||
	    name_list("--systems",
		      a->systems ? a->systems
				 : "linux,"
				   "linux-nobalance,numad,monitor,imar2,lbma,"
				   "best-static",
		      nl_eval_system_names, SYS_COUNT, on) < 0)
		return -1;
	for (int i = 0; i < EVAL_NCLASSES; i++)
		if (cl[i] && (!c->one_node || c->nclasses == 0))
			c->classes[c->nclasses++] = (enum eval_class)i;
	if (!c->nclasses) {
		nl_cli_error(EVAL_CMD, "--classes: none given");
		return -1;
	}
	if (c->srun && !getenv("SLURM_JOB_ID")) {
		nl_cli_error(EVAL_CMD, "--srun: not inside a Slurm allocation "
				       "(no SLURM_JOB_ID; run it from sbatch "
				       "or salloc, docs/evaluation.md)");
		return -1;
	}
	nl_eval_systems(c, (int)geteuid());
	/* linux is the reference: always run. */
	on[SYS_LINUX] = 1;
	for (int y = 0; y < SYS_COUNT; y++)
		if (!on[y] && c->sys_on[y]) {
			c->sys_on[y] = 0;
			snprintf(c->skip[y], sizeof(c->skip[y]),
				 "not asked for (--systems)");
		}
	if (!a->seed_given) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		c->seed = (unsigned long long)ts.tv_nsec ^
			  ((unsigned long long)ts.tv_sec << 20) ^
			  (unsigned long long)getpid();
		c->seed %= 1000000000ULL;
	}
	return plan(p);
}

static void restore(void)
{
	nl_eval_balancing_restore();
	nl_eval_numad_stop();
}

int nl_cmd_eval(int argc, char **argv)
{
	struct eval_args a = {0};
	struct eval_plan p = {0};
	struct eval_conf *c = &p.c;
	int rc = parse(argc, argv, &a, c), failed = 0;
	ssize_t n;

	if (rc)
		return rc > 0 ? NL_EXIT_OK : NL_EXIT_USAGE;
	if (a.resume && !strcmp(c->json, "numalot-eval.json"))
		c->json = a.resume; /* go on writing where it was */
	n = readlink("/proc/self/exe", c->numalot, sizeof(c->numalot) - 1);
	if (n <= 0) {
		nl_cli_error(EVAL_CMD, "cannot find my own binary: %m");
		return NL_EXIT_FAIL;
	}
	c->numalot[n] = 0;
	if (numa_available() < 0) {
		nl_cli_error(EVAL_CMD, "no NUMA support in this kernel "
				       "(libnuma: numa_available)");
		return NL_EXIT_FAIL;
	}
	c->nodes = numa_num_configured_nodes();
	c->one_node = c->nodes < 2;
	/* As root, the logs' folder and the page only where no user can
	 * choose where they go (cli_out.h); the JSON is written before the
	 * first run. */
	char why[PATH_MAX + 800];
	static char logs[PATH_MAX];
	int shared;
	if (c->logs && nl_cli_root_dir(c->logs, logs, sizeof(logs), why,
				       sizeof(why)) < 0) {
		nl_cli_error(EVAL_CMD, "--logs=%s: %s", c->logs, why);
		return NL_EXIT_USAGE;
	}
	if (c->logs)
		c->logs = logs;
	if (c->html &&
	    nl_cli_may_write(c->html, &shared, why, sizeof(why)) < 0) {
		nl_cli_error(EVAL_CMD, "%s", why);
		return NL_EXIT_USAGE;
	}
	if (c->logs && mkdir(c->logs, 0755) < 0 && errno != EEXIST) {
		nl_cli_error(EVAL_CMD, "--logs=%s: %m", c->logs);
		return NL_EXIT_USAGE;
	}
	if (setup(&a, &p) < 0) {
		nl_eval_free(&p);
		return NL_EXIT_USAGE;
	}
	handle_signals();
	atexit(restore);
	size_t todo = 0, done = 0;
	for (size_t i = 0; i < p.nruns; i++)
		todo += !p.runs[i].done;
	if (c->one_node)
		nl_cli_error(EVAL_CMD,
			     "one NUMA node: nothing to place, so this "
			     "measures only numalot's overhead (monitor "
			     "against linux), one class");
	nl_cli_error(EVAL_CMD,
		     "%zu run%s (%d class%s, %d command%s at once, %d "
		     "repetition%s), seed %llu%s; JSON: %s",
		     todo, nl_s((long)todo), c->nclasses,
		     c->nclasses == 1 ? "" : "es", c->ncmds, nl_s(c->ncmds),
		     c->reps, nl_s(c->reps), c->seed,
		     a.resume ? " (resumed)" : "", c->json);
	for (int y = 0; y < SYS_COUNT; y++)
		if (!c->sys_on[y])
			nl_cli_error(EVAL_CMD, "skipped: %s: %s",
				     nl_eval_system_names[y], c->skip[y]);
	double mib = kernels_mib(c);
	if (c->sys_on[SYS_NUMAD] && mib >= 0 && mib < 300)
		nl_cli_error(EVAL_CMD,
			     "warning: numad moves only processes of more than "
			     "300 MB using half a CPU: with %.0f MiB of data "
			     "a kernel it will move none (--size=large, or "
			     "node)",
			     mib);
	/* numad's clock: CLOCK_MONOTONIC (docs/evaluation.md). */
	if (c->sys_on[SYS_NUMAD] && nl_mono_s() < 300)
		nl_cli_error(EVAL_CMD,
			     "warning: up %.0f s: numad acts only after 300 s "
			     "of uptime, so its first runs see it idle",
			     nl_mono_s());
	if (nl_eval_save(&p, c->json) < 0) {
		nl_eval_free(&p);
		return NL_EXIT_USAGE;
	}
	if (c->warmup && !stop_flag) {
		/* Caches, binaries and page cache warm; not recorded. */
		struct eval_run w = {.cls = c->classes[0], .sys = SYS_LINUX};
		nl_cli_error(EVAL_CMD, "warm-up: %s under linux (not counted)",
			     nl_eval_class_names[w.cls]);
		if (nl_eval_run_case(c, &w, &stop_flag) < 0 && !stop_flag)
			nl_cli_error(EVAL_CMD, "warm-up: %s", w.err);
	}
	double t0 = nl_mono_s();
	for (size_t i = 0; i < p.nruns && !stop_flag; i++) {
		struct eval_run *r = &p.runs[i];
		if (r->done)
			continue;
		int ok = nl_eval_run_case(c, r, &stop_flag) == 0;
		if (stop_flag) {
			r->done = 0; /* run again on --resume */
			break;
		}
		done++;
		failed += !ok;
		double per = (nl_mono_s() - t0) / (double)done;
		nl_cli_error(EVAL_CMD,
			     "[%zu/%zu] %s %s rep %d: %s%.3f s%s%s (about "
			     "%.0f s left)",
			     done, todo, nl_eval_class_names[r->cls],
			     nl_eval_system_names[r->sys], r->rep,
			     ok ? "" : "FAILED after ", r->makespan,
			     ok ? "" : ": ", ok ? "" : r->err,
			     per * (double)(todo - done));
		if (nl_eval_save(&p, c->json) < 0)
			break;
	}
	restore();
	if (stop_flag) {
		nl_cli_error(EVAL_CMD,
			     "interrupted: %zu of %zu runs done, balancing as "
			     "found; go on with: numalot eval --resume=%s",
			     done, todo, c->json);
		nl_eval_save(&p, c->json);
	}
	nl_eval_print(&p, stdout);
	if (c->html && nl_eval_write_html(&p, c->html) < 0)
		failed++;
	nl_eval_free(&p);
	if (stop_flag)
		return 128 + SIGINT;
	if (failed)
		nl_cli_error(EVAL_CMD, "%d run%s failed (see \"error\" in %s)",
			     failed, nl_s(failed), c->json);
	return failed ? NL_EXIT_FAIL : NL_EXIT_OK;
}
