/* numalot eval: one case (eval.h): its processes started together, each
 * placed as its class says (libnuma in the child before exec, or numactl),
 * under one system, and timed to their ends (docs/evaluation.md, "On your
 * own nodes"). */
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "eval.h"
#include "util.h"

struct eval_place nl_eval_place(enum eval_class cls, enum eval_system sys,
				int i, int nodes)
{
	struct eval_place p = {i % nodes, i % nodes};
	if (sys == SYS_BEST_STATIC) /* each process on its own node */
		return p;
	if (cls == EVAL_IND) /* every access remote */
		p.cpu_node = (i + 1) % nodes;
	else if (cls == EVAL_INTERLEAVE)
		p.mem_node = -1;
	return p;
}

static const char *policy_of(enum eval_system s)
{
	return s == SYS_MONITOR ? "monitor"
	       : s == SYS_IMAR2 ? "imar2"
	       : s == SYS_LBMA	? "lbma"
				: NULL;
}

/* The argv a process execs: srun's step and numactl's binding before the
 * command where asked; the command alone where libnuma places it. */
static char **build_argv(const struct eval_conf *c, const struct eval_cmd *cmd,
			 struct eval_place pl, enum eval_system sys, char *bufs,
			 size_t buflen)
{
	size_t extra = 16 + (c->srun_args ? strlen(c->srun_args) : 0);
	char **v = calloc((size_t)cmd->argc + extra, sizeof(*v));
	char *b = bufs, *end = bufs + buflen;
	int n = 0;
	if (!v)
		return NULL;
#define ADD(...)                                                               \
	do {                                                                   \
		v[n++] = b;                                                    \
		b += snprintf(b, (size_t)(end - b), __VA_ARGS__) + 1;          \
	} while (0)
	if (c->srun) {
		const char *p = policy_of(sys);
		ADD("srun");
		ADD("--nodes=1");
		ADD("--ntasks=1");
		ADD("--overlap");
		ADD("--cpu-bind=none");
		ADD("--numalot=%s", p ? p : "off");
		for (const char *s = c->srun_args; s && *s;) {
			size_t k = strcspn(s, " ");
			if (k)
				ADD("%.*s", (int)k, s);
			s += k + (s[k] == ' ');
		}
	}
	if (c->use_numactl || c->srun) {
		ADD("numactl");
		ADD("--cpunodebind=%d", pl.cpu_node);
		if (pl.mem_node < 0)
			ADD("--interleave=all");
		else
			ADD("--membind=%d", pl.mem_node);
	}
#undef ADD
	for (int i = 0; i < cmd->argc; i++)
		v[n++] = cmd->argv[i];
	v[n] = NULL;
	return v;
}

/* In the child: the binding, kept across exec (sched_setaffinity and
 * set_mempolicy both are). 0, or errno. */
static int place_here(struct eval_place pl)
{
	struct bitmask *m;
	int rc = 0;
	if (numa_run_on_node(pl.cpu_node) < 0)
		return errno ? errno : EINVAL;
	if (pl.mem_node < 0) {
		numa_set_interleave_mask(numa_all_nodes_ptr);
		return 0;
	}
	m = numa_allocate_nodemask();
	numa_bitmask_setbit(m, (unsigned)pl.mem_node);
	errno = 0;
	numa_set_membind(m);
	rc = errno;
	numa_bitmask_free(m);
	return rc;
}

/* Where a process's output goes: --logs=DIR/CLASS-SYSTEM-rREP-WHO.log,
 * else nowhere (the table is the output). */
static void log_path(const struct eval_conf *c, const struct eval_run *r,
		     const char *who, char *path, size_t len)
{
	if (c->logs)
		snprintf(path, len, "%s/%s-%s-r%d-%s.log", c->logs,
			 nl_eval_class_names[r->cls],
			 nl_eval_system_names[r->sys], r->rep, who);
	else
		snprintf(path, len, "/dev/null");
}

/* Fork argv with its output to path, placed (libnuma) unless placed is
 * NULL. With go (a pipe) it waits, placed, until go's write end is closed (all
 * of a case start together, once numalot holds them) and *errfd gets the
 * pipe its exec error comes back through (read it after the go);
 * without, that is read here. The pid, or -1 (err). */
static pid_t start(char **argv, const struct eval_place *placed,
		   const char *path, const int *go, int *errfd, char *err,
		   size_t len)
{
	int fds[2], e = 0;
	pid_t pid;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return nl_errf(err, len, -1, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		char b;
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0644);
		close(fds[0]);
		setpgid(0, 0); /* stopped as a group, with its children */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		if (placed && (e = place_here(*placed)) != 0)
			goto fail;
		/* Every holder of the write end but the parent gone: EOF. */
		if (go)
			close(go[1]);
		while (go && read(go[0], &b, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		e = errno;
	fail:
		if (write(fds[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return nl_errf(err, len, -1, "fork: %s", strerror(errno));
	}
	setpgid(pid, pid);
	if (go) {
		*errfd = fds[0];
		return pid;
	}
	if (read(fds[0], &e, sizeof(e)) == sizeof(e)) {
		waitpid(pid, NULL, 0);
		close(fds[0]);
		return nl_errf(err, len, -1, "cannot run \"%s\": %s", argv[0],
			       strerror(e));
	}
	close(fds[0]);
	return pid;
}

/* Until numalot attach says it manages the processes (its first line),
 * it ended, or 10 s: the case's clock starts with numalot in place. */
static void wait_managed(const char *path, pid_t mgr)
{
	char buf[512];
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		int seen = 0;
		while (f && fgets(buf, sizeof(buf), f))
			seen |= strstr(buf, "numalot attach: managing") != NULL;
		if (f)
			fclose(f);
		if (seen || waitpid(mgr, NULL, WNOHANG) != 0)
			return;
		usleep(10000);
	}
}

static void stop_all(const pid_t *pid, int n, pid_t mgr, int sig)
{
	for (int i = 0; i < n; i++)
		if (pid[i] > 0)
			kill(-pid[i], sig);
	if (mgr > 0)
		kill(mgr, sig);
}

/* numalot attach on the processes (policy), its output in a file we can
 * read; 0 or the pid (r->err on failure). */
static pid_t manage(const struct eval_conf *c, struct eval_run *r,
		    const char *policy, const pid_t *pid, int n, char *path,
		    size_t len, int *tmp)
{
	char *argv[8 + EVAL_MAX_PROCS], pids[EVAL_MAX_PROCS][16], pol[32];
	int k = 0;
	pid_t m;
	if (c->logs) {
		log_path(c, r, "numalot", path, len);
	} else {
		snprintf(path, len, "/tmp/numalot-eval-XXXXXX");
		int fd = mkstemp(path);
		if (fd < 0)
			return nl_errf(r->err, sizeof(r->err), 0,
				       "cannot make a temporary file: %s",
				       strerror(errno));
		close(fd);
		*tmp = 1;
	}
	snprintf(pol, sizeof(pol), "--policy=%s", policy);
	argv[k++] = (char *)c->numalot;
	argv[k++] = "attach";
	argv[k++] = pol;
	for (int i = 0; i < n; i++) {
		snprintf(pids[i], sizeof(pids[i]), "%d", (int)pid[i]);
		argv[k++] = pids[i];
	}
	argv[k] = NULL;
	m = start(argv, NULL, path, NULL, NULL, r->err, sizeof(r->err));
	if (m > 0)
		wait_managed(path, m);
	return m > 0 ? m : 0;
}

static double cpu_of(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec * 1e-6;
}

int nl_eval_run_case(const struct eval_conf *c, struct eval_run *r,
		     volatile sig_atomic_t *stop)
{
	pid_t pid[EVAL_MAX_PROCS] = {0}, started[EVAL_MAX_PROCS] = {0}, mgr = 0;
	int errfd[EVAL_MAX_PROCS], go[2];
	double t0, end[EVAL_MAX_PROCS] = {0}, mgr_wait = 0;
	char bufs[EVAL_MAX_PROCS][2048], who[16], path[4096], mpath[4096];
	int left = 0, n = c->ncmds, stopped = 0, tmp = 0;
	const char *policy = policy_of((enum eval_system)r->sys);

	r->ok = 0;
	r->err[0] = 0;
	r->numalot_cpu = -1;
	r->numad_moved = -1;
	r->balancing = nl_eval_balancing_for(c, (enum eval_system)r->sys);
	if (r->sys == SYS_NUMAD &&
	    nl_eval_numad_start(c, r->err, sizeof(r->err)) < 0)
		return -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return nl_errf(r->err, sizeof(r->err), -1, "pipe: %s",
			       strerror(errno));
	for (int i = 0; i < n; i++) {
		struct eval_place pl =
			nl_eval_place((enum eval_class)r->cls,
				      (enum eval_system)r->sys, i, c->nodes);
		char **argv =
			build_argv(c, &c->cmds[i], pl, (enum eval_system)r->sys,
				   bufs[i], sizeof(bufs[i]));
		snprintf(who, sizeof(who), "p%d", i);
		log_path(c, r, who, path, sizeof(path));
		pid[i] = argv ? start(argv,
				      c->use_numactl || c->srun ? NULL : &pl,
				      path, go, &errfd[i], r->err,
				      sizeof(r->err))
			      : -1;
		free(argv);
		if (pid[i] < 0) {
			n = i;
			break;
		}
		started[i] = pid[i];
		left++;
	}
	close(go[0]);
	/* numalot on the processes, as `numalot attach` does (under --srun
	 * the step's plugin runs it instead), before they start. */
	if (policy && !c->srun && n == c->ncmds)
		mgr = manage(c, r, policy, pid, n, mpath, sizeof(mpath), &tmp);
	if (n < c->ncmds || (policy && !c->srun && !mgr))
		stop_all(pid, n, mgr, SIGKILL);
	t0 = nl_mono_s();
	close(go[1]); /* all of them start now */
	for (int i = 0; i < n; i++) {
		int e;
		if (read(errfd[i], &e, sizeof(e)) == sizeof(e) && !r->err[0])
			snprintf(r->err, sizeof(r->err),
				 "cannot place or run \"%s\": %s",
				 c->cmds[i].argv[0], strerror(e));
		close(errfd[i]);
	}
	while (left > 0 || mgr > 0) {
		int st;
		struct rusage ru;
		pid_t w = wait4(-1, &st, 0, &ru);
		if (w < 0 && errno == EINTR) {
			if (*stop && !stopped) {
				stop_all(pid, n, mgr, SIGTERM);
				stopped = 1;
			}
			if (left == 0 && mgr > 0 && mgr_wait &&
			    nl_mono_s() - mgr_wait >= 29)
				kill(mgr, SIGKILL);
			continue;
		}
		if (w < 0 && errno == ECHILD)
			break;
		if (w < 0)
			continue;
		if (w == mgr) {
			r->numalot_cpu = cpu_of(&ru);
			/* numalot gone while its processes ran: not managed. */
			if (left > 0 && !*stop && !r->err[0] &&
			    (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
				snprintf(r->err, sizeof(r->err),
					 "numalot attach ended (status %d) "
					 "while the commands ran%s",
					 WIFEXITED(st) ? WEXITSTATUS(st)
						       : 128 + WTERMSIG(st),
					 c->logs ? ""
						 : " (--logs=DIR keeps its "
						   "output)");
			mgr = 0;
			continue;
		}
		for (int i = 0; i < n; i++)
			if (w == pid[i]) {
				end[i] = nl_mono_s();
				r->status[i] = WIFEXITED(st)
						       ? WEXITSTATUS(st)
						       : 128 + WTERMSIG(st);
				pid[i] = 0;
				left--;
			}
		/* numalot leaves once its processes are gone; one that
		 * does not within 30 s is stopped. */
		if (left == 0 && mgr > 0 && !mgr_wait) {
			mgr_wait = nl_mono_s();
			alarm(30); /* cmd_eval.c's handler: wait4 gives EINTR */
		}
	}
	alarm(0);
	if (tmp)
		unlink(mpath);
	if (r->sys == SYS_NUMAD) {
		/* Whether numad did anything: below 300 MB or half a CPU a
		 * process, or in the node's first 300 s, it does not. */
		r->numad_moved = nl_eval_numad_moved(started, n);
		nl_eval_numad_stop();
	}
	if (*stop)
		return nl_errf(r->err, sizeof(r->err), -1, "interrupted");
	if (n < c->ncmds)
		return -1;
	r->makespan = 0;
	for (int i = 0; i < n; i++) {
		r->proc_s[i] = end[i] - t0;
		if (r->proc_s[i] > r->makespan)
			r->makespan = r->proc_s[i];
		if (r->status[i] != 0 && !r->err[0])
			snprintf(r->err, sizeof(r->err),
				 "%s exited with status %d%s", c->cmds[i].name,
				 r->status[i],
				 c->logs ? ""
					 : " (--logs=DIR keeps its output)");
	}
	if (policy && !c->srun && r->numalot_cpu < 0 && !r->err[0])
		snprintf(r->err, sizeof(r->err),
			 "numalot attach was not reaped");
	r->done = 1;
	r->ok = !r->err[0];
	return r->ok ? 0 : -1;
}
