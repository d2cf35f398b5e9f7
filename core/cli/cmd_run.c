/* numalot run / attach: manage real processes until they end. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "engine.h"
#include "real.h"
#include "run_summary.h"
#include "util.h"
#include "writable.h"

struct run_args {
	const char *cmd; /* "run" or "attach" */
	enum nl_policy_kind policy;
	struct nl_policy_params params;
	enum nl_backend backend;
	const char *report;
	const char *topology;
	int children;
	unsigned long long seed;
	char **rest; /* the command, or the PIDs */
	int nrest;
	int nice, nice_given; /* --nice, or NL_OWN_NICE, raise only */
	rlim_t nofile_soft;   /* RLIMIT_NOFILE before numalot raised it */
	sigset_t sigmask;     /* the signal mask numalot started with */
};

static volatile sig_atomic_t stop_flag;
/* run: the command (-1 while it starts); attach: 0. */
static volatile pid_t child_pid;

/* run: a signal sent to numalot goes on to the command (a terminal's
 * Ctrl-C already reaches both). attach: it means stop. */
static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	(void)ctx;
	if (child_pid > 0) {
		if (si->si_code == SI_USER || si->si_code == SI_QUEUE)
			kill(child_pid, sig);
	} else if (child_pid == 0) {
		stop_flag = 1;
	}
	errno = saved;
}

static void handle_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}

/* 0 parsed, 1 --help given (usage printed), -1 bad (error printed). */
static int parse(int argc, char **argv, struct run_args *a)
{
	static const struct option lo[] = {
		{"policy", required_argument, NULL, 'p'},
		{"period", required_argument, NULL, 'T'},
		{"counters", required_argument, NULL, 'c'},
		{"report", required_argument, NULL, 'r'},
		{"topology", required_argument, NULL, 't'},
		{"param", required_argument, NULL, 'P'},
		{"seed", required_argument, NULL, 's'},
		{"children", no_argument, NULL, 'C'},
		{"keep-bindings", no_argument, NULL, 'k'},
		{"nice", required_argument, NULL, 'n'},
		NL_ARGS_HELP,
		{0}};
	char num[64];
	uint64_t seed;
	int c, i;

	a->policy = NL_POLICY_IMAR2;
	a->backend = NL_BACKEND_AUTO;
	a->seed = 1;
	a->nice = NL_OWN_NICE;
	nl_policy_params_default(&a->params);
	nl_args_start();
	/* '+': the options end at the command (or the first PID). */
	while ((c = nl_args_next(a->cmd, argc, argv, "+h", lo)) != -1) {
		switch (c) {
		case 'p':
			if (nl_policy_from_name(optarg, &a->policy) < 0) {
				nl_cli_error(
					a->cmd,
					"unknown policy \"%s\" (valid: %s)",
					optarg, nl_policy_names());
				return -1;
			}
			break;
		case 'T':
			snprintf(num, sizeof(num), "period=%s", optarg);
			if (nl_cli_param(a->cmd, &a->params, num) < 0)
				return -1;
			break;
		case 'c':
			if (nl_backend_from_name(optarg, &a->backend) < 0) {
				nl_cli_error(a->cmd,
					     "unknown counter backend \"%s\" "
					     "(valid: auto, papi, perf, "
					     "software)",
					     optarg);
				return -1;
			}
			break;
		case 'r':
			a->report = optarg;
			break;
		case 't':
			a->topology = optarg;
			break;
		case 'P':
			if (nl_cli_param(a->cmd, &a->params, optarg) < 0)
				return -1;
			break;
		case 's':
			if (nl_cli_seed(a->cmd, "--seed", optarg, &seed) < 0)
				return -1;
			a->seed = seed;
			break;
		case 'C':
			a->children = 1;
			break;
		case 'k':
			/* Never move a thread outside its own binding. */
			a->params.keep_bindings = 1;
			break;
		case 'n': {
			long v;
			if (nl_cli_whole(a->cmd, "--nice", optarg, -20, 19,
					 &v) < 0)
				return -1;
			a->nice = (int)v;
			a->nice_given = 1;
			break;
		}
		case 'h':
			nl_cli_usage(a->cmd, stdout);
			return 1;
		default:
			return -1;
		}
	}
	i = optind;
	a->rest = argv + i;
	a->nrest = argc - i;
	if (a->nrest == 0) {
		nl_cli_error(a->cmd, "%s",
			     !strcmp(a->cmd, "run")
				     ? "no command to run (usage: numalot run "
				       "[OPTIONS] -- CMD [ARGS])"
				     : "no PID to attach to (usage: numalot "
				       "attach [OPTIONS] PID...)");
		return -1;
	}
	return 0;
}

/* Start the command; report an exec failure through a CLOEXEC pipe. An
 * exec failure sets *code as a shell would: 127 not found, 126 not run. */
static pid_t spawn(const struct run_args *a, int *code)
{
	int fds[2], err = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct rlimit rl;
		close(fds[0]);
		/* As numalot found it: the command gets no raised limits and
		 * numalot's signal handling. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = a->nofile_soft;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		sigprocmask(SIG_SETMASK, &a->sigmask, NULL);
		execvp(a->rest[0], a->rest);
		err = errno;
		if (write(fds[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &err, sizeof(err)) == sizeof(err)) {
		waitpid(pid, NULL, 0);
		*code = err == ENOENT || err == ENOTDIR ? 127 : 126;
		if (*code == 127 && !strchr(a->rest[0], '/'))
			nl_cli_error(a->cmd,
				     "command not found: \"%s\" is not in PATH",
				     a->rest[0]);
		else if (*code == 127)
			nl_cli_error(a->cmd, "command not found: \"%s\": %s",
				     a->rest[0], strerror(err));
		else
			nl_cli_error(a->cmd,
				     "cannot run \"%s\" (not executable?): %s",
				     a->rest[0], strerror(err));
		pid = -2;
	}
	close(fds[0]);
	return pid;
}

static int attach_pids(const struct run_args *a, struct nl_machine *m)
{
	char err[256];
	for (int i = 0; i < a->nrest; i++) {
		char *end;
		long pid = strtol(a->rest[i], &end, 10);
		if (!*a->rest[i] || *end || pid <= 0) {
			nl_cli_error(a->cmd, "\"%s\" is not a process id",
				     a->rest[i]);
			return -1;
		}
		struct nl_proc_opts o = {0};
		int rc = m->ops->add_process(m, (int)pid, &o, err, sizeof(err));
		if (rc < 0 && rc != -EEXIST) {
			nl_cli_error(a->cmd, "%s", err);
			return -1;
		}
	}
	return 0;
}

static double cpu_now_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* What numalot itself cost and how it ran, for the record. */
struct own {
	double startup_cpu, run_cpu; /* process CPU time at those points */
	int nice, asked, nice_rc;    /* nl_own_nice's */
};

static void add_double(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

/* numalot's own cost (not in sim reports: they must be identical run to
 * run), or NULL. */
static struct json_object *overhead(struct nl_engine *e, struct nl_machine *m,
				    const struct own *w)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return NULL;
	struct json_object *o = json_object_new_object();
	size_t taken, released;
	double takeover =
		nl_real_takeover_s(m, &taken) + nl_engine_takeover_cpu_s(e);
	double release = nl_real_release_s(m, &released);
	double late_max, late_mean;
	nl_engine_lateness(e, &late_max, &late_mean);
	add_double(o, "cpu_s",
		   (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
			   (double)ru.ru_stime.tv_sec +
			   ru.ru_stime.tv_usec * 1e-6);
	add_double(o, "startup_cpu_s", w->startup_cpu);
	add_double(o, "periods_cpu_s", w->run_cpu - w->startup_cpu);
	add_double(o, "takeover_cpu_s", takeover);
	json_object_object_add(o, "threads_taken_over",
			       json_object_new_int64((int64_t)taken));
	add_double(o, "release_cpu_s", release);
	json_object_object_add(o, "threads_released",
			       json_object_new_int64((int64_t)released));
	struct json_object *pr = json_object_new_object();
	json_object_object_add(pr, "nice", json_object_new_int(w->nice));
	json_object_object_add(pr, "asked", json_object_new_int(w->asked));
	if (w->nice_rc < 0)
		json_object_object_add(
			pr, "error",
			json_object_new_string(strerror(-w->nice_rc)));
	json_object_object_add(o, "priority", pr);
	add_double(o, "period_late_max_s", late_max);
	add_double(o, "period_late_mean_s", late_mean);
	json_object_object_add(
		o, "stat_reads",
		json_object_new_int64((int64_t)nl_real_stat_reads(m)));
	json_object_object_add(
		o, "wake_reads",
		json_object_new_int64((int64_t)nl_real_wakes(m)));
	return o;
}

/* Manage until the processes end, then the report (written if asked:
 * *unwritten when it could not be) and the closing line. */
static int manage(const struct run_args *a, struct nl_machine *m,
		  int *unwritten)
{
	struct nl_engine *e;
	/* What starting cost (libraries, topology, counter probe), apart
	 * from what each period costs. */
	struct own w = {.startup_cpu = cpu_now_s(), .asked = a->nice};
	/* Its periods on time when the command's threads oversubscribe the
	 * CPUs (docs/real-node.md, "Priority"); the command, started
	 * already, keeps its own priority. */
	w.nice_rc = nl_own_nice(a->nice, !a->nice_given, &w.nice);
	if (w.nice_rc < 0 && a->nice_given)
		nl_cli_error(a->cmd,
			     "warning: --nice=%d: %s (numalot runs at nice "
			     "%d)",
			     a->nice, strerror(-w.nice_rc), w.nice);
	int rc = nl_engine_create(m, &e);

	if (rc == 0)
		rc = nl_engine_add_domain(e, 0, a->cmd, a->policy, &a->params,
					  a->seed);
	const struct nl_process_info *p;
	size_t n;
	if (rc == 0)
		rc = m->ops->processes(m, &p, &n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = nl_engine_add_process(e, p[i].pid, 0);
	if (rc == 0)
		rc = nl_engine_run(e);
	/* ...and what building the report costs, once, at the end. */
	w.run_cpu = cpu_now_s();
	if (rc < 0) {
		if (e)
			nl_engine_release(e, -1);
		nl_cli_error(a->cmd, "stopped managing: %s", strerror(-rc));
	}
	/* The report, for the file and the closing line alike. */
	struct json_object *r = e ? nl_engine_report(e, 0) : NULL;
	if (a->report && e) {
		struct json_object *o = r ? overhead(e, m, &w) : NULL;
		if (o)
			json_object_object_add(r, "numalot_overhead", o);
		if (!r || nl_cli_write_json(a->cmd, a->report, r) < 0) {
			rc = rc ? rc : -EIO;
			*unwritten = 1;
		}
	}
	if (r) {
		char line[512];
		nl_run_summary(r, line, sizeof(line));
		nl_cli_error(a->cmd, "%s", line);
	}
	json_object_put(r);
	nl_engine_free(e);
	return rc;
}

static int run_or_attach(int argc, char **argv, const char *cmd)
{
	struct run_args a = {.cmd = cmd};
	struct nl_topology *topo = NULL;
	struct nl_machine *m = NULL;
	struct nl_real_options o = {0};
	struct rlimit rl;
	char err[512];
	int status = NL_EXIT_USAGE, wstatus = 0, unwritten = 0;

	int rc = parse(argc, argv, &a);
	if (rc)
		return rc > 0 ? NL_EXIT_OK : NL_EXIT_USAGE;
	/* A report that cannot be written is said now, not after the run:
	 * as whoever writes it at the end, this process as it is. */
	if (a.report && nl_writable(a.report, 0, err, sizeof(err)) < 0) {
		nl_cli_error(cmd, "cannot write report %s: %s", a.report, err);
		return NL_EXIT_USAGE;
	}
	int shared;
	char why[PATH_MAX + 800];
	if (a.report &&
	    nl_cli_may_write(a.report, &shared, why, sizeof(why)) < 0) {
		nl_cli_error(cmd, "%s", why);
		return NL_EXIT_USAGE;
	}
	/* Every period builds and frees the same arrays: keep the memory
	 * rather than give it back and fault it in again. */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 16 << 20);
	a.nofile_soft = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur
							   : RLIM_INFINITY;
	if (nl_topology_load(a.topology, &topo, err, sizeof(err)) < 0) {
		nl_cli_error(cmd, "%s", err);
		return NL_EXIT_USAGE;
	}
	o.backend = a.backend;
	o.follow_children = a.children;
	o.stop = &stop_flag;
	if (nl_real_create(topo, &o, &m, err, sizeof(err)) < 0) {
		nl_cli_error(cmd, "%s", err);
		goto out;
	}
	if (!strcmp(cmd, "run")) {
		sigset_t all;
		/* No signal between fork and knowing whom to forward it to. */
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, &a.sigmask);
		child_pid = -1;
		handle_signals();
		int code = NL_EXIT_FAIL;
		pid_t pid = spawn(&a, &code);
		if (pid > 0)
			child_pid = pid;
		sigprocmask(SIG_SETMASK, &a.sigmask, NULL);
		if (pid < 0) {
			status = code;
			goto out;
		}
		struct nl_proc_opts po = {0};
		if (m->ops->add_process(m, pid, &po, err, sizeof(err)) < 0)
			nl_cli_error(cmd, "not managing: %s", err);
		manage(&a, m, &unwritten);
		int w;
		while ((w = (int)waitpid(pid, &wstatus, 0)) < 0 &&
		       errno == EINTR)
			;
		status = w < 0		      ? NL_EXIT_FAIL
			 : WIFEXITED(wstatus) ? WEXITSTATUS(wstatus)
					      : 128 + WTERMSIG(wstatus);
		/* A report asked for and lost is a failure, even when the
		 * command did well. */
		if (unwritten && status == 0) {
			nl_cli_error(cmd, "exit status 1: the command exited "
					  "0, but its report was not written");
			status = NL_EXIT_FAIL;
		}
	} else {
		const struct nl_process_info *p;
		size_t n;
		handle_signals();
		if (attach_pids(&a, m) < 0)
			goto out;
		if (m->ops->processes(m, &p, &n) == 0 && n > 0)
			nl_attach_announce(nl_policy_name(a.policy), p, n,
					   a.children);
		status = manage(&a, m, &unwritten) < 0 ? NL_EXIT_FAIL
						       : NL_EXIT_OK;
	}
out:
	nl_machine_destroy(m);
	nl_topology_free(topo);
	return status;
}

int nl_cmd_run(int argc, char **argv)
{
	return run_or_attach(argc, argv, "run");
}

int nl_cmd_attach(int argc, char **argv)
{
	return run_or_attach(argc, argv, "attach");
}
