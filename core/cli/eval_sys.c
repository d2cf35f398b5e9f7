/* numalot eval: the systems compared (eval.h): which can run here,
 * automatic NUMA balancing set for each and put back as found, numad
 * started and stopped (docs/evaluation.md, "On your own nodes"). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "eval.h"

#define BALANCING "/proc/sys/kernel/numa_balancing"
/* numad's log: the name is built into it. */
#define NUMAD_LOG "/var/log/numad.log"

const char *const nl_eval_class_names[EVAL_NCLASSES] = {"direct", "ind",
							"interleave"};
const char *const nl_eval_system_names[SYS_COUNT] = {
	"linux", "linux-nobalance", "numad", "monitor", "imar2",
	"lbma",	 "best-static"};

/* As found, for the restore (-1: nothing to restore). */
static volatile sig_atomic_t found = -1;
static volatile sig_atomic_t changed;

static int read_balancing(void)
{
	FILE *f = fopen(BALANCING, "r");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* write(2) only: also called after a signal stopped the runs. */
static int write_balancing(int v)
{
	char c[2] = {(char)('0' + v), '\n'};
	int fd = open(BALANCING, O_WRONLY | O_CLOEXEC), rc = -1;
	if (fd >= 0) {
		rc = write(fd, c, 2) == 2 ? 0 : -1;
		close(fd);
	}
	return rc;
}

/* In PATH? */
static int have(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

/* A numad already running (its pid file, a live process named numad):
 * its pid, else 0. eval must not start a second one nor stop the site's. */
static int numad_already(void)
{
	FILE *f = fopen("/var/run/numad.pid", "r");
	char path[64], comm[32] = "";
	int pid = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = pid > 0 ? fopen(path, "r") : NULL;
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
	}
	return !strncmp(comm, "numad", 5) ? pid : 0;
}

void nl_eval_systems(struct eval_conf *c, int uid)
{
	int v = read_balancing();

	c->balancing_found = v;
	c->balancing_settable = v >= 0 && uid == 0 && !c->one_node &&
				access(BALANCING, W_OK) == 0;
	for (int s = 0; s < SYS_COUNT; s++) {
		c->sys_on[s] = 1;
		c->skip[s][0] = 0;
	}
	if (c->one_node) {
		/* Nothing to place: only what watching costs. */
		for (int s = 0; s < SYS_COUNT; s++)
			if (s != SYS_LINUX && s != SYS_MONITOR) {
				c->sys_on[s] = 0;
				snprintf(c->skip[s], sizeof(c->skip[s]),
					 "one NUMA node: nothing to place, "
					 "overhead only");
			}
		return;
	}
	if (!c->balancing_settable) {
		c->sys_on[SYS_LINUX_NOBAL] = 0;
		snprintf(c->skip[SYS_LINUX_NOBAL],
			 sizeof(c->skip[SYS_LINUX_NOBAL]), "%s",
			 v < 0	    ? "no " BALANCING " (a kernel without "
				      "automatic NUMA balancing)"
			 : uid != 0 ? "not root: automatic NUMA balancing "
				      "cannot be switched off"
				    : "cannot write " BALANCING);
	}
	if (c->srun) {
		c->sys_on[SYS_NUMAD] = 0;
		snprintf(c->skip[SYS_NUMAD], sizeof(c->skip[SYS_NUMAD]),
			 "--srun: numad is the node's daemon; start it there "
			 "and compare by hand");
	} else if (!have("numad")) {
		c->sys_on[SYS_NUMAD] = 0;
		snprintf(c->skip[SYS_NUMAD], sizeof(c->skip[SYS_NUMAD]),
			 "numad is not installed (Debian: apt-get install "
			 "numad)");
	} else if (numad_already()) {
		c->sys_on[SYS_NUMAD] = 0;
		snprintf(c->skip[SYS_NUMAD], sizeof(c->skip[SYS_NUMAD]),
			 "numad already runs here (pid %d): it would act in "
			 "every run; stop it for a fair comparison",
			 numad_already());
	} else if (uid != 0) {
		c->sys_on[SYS_NUMAD] = 0;
		snprintf(c->skip[SYS_NUMAD], sizeof(c->skip[SYS_NUMAD]),
			 "not root: numad moves other users' processes");
	}
}

int nl_eval_balancing_for(const struct eval_conf *c, enum eval_system s)
{
	/* Off for linux-nobalance, and for numad, whose moves the kernel's
	 * would fight; on for every other system, Linux as shipped. */
	int want = s == SYS_LINUX_NOBAL || s == SYS_NUMAD ? 0 : 1;
	if (!c->balancing_settable)
		return read_balancing();
	if (found < 0)
		found = c->balancing_found;
	if (read_balancing() != want) {
		changed = 1;
		if (write_balancing(want) < 0)
			return read_balancing();
	}
	return want;
}

void nl_eval_balancing_restore(void)
{
	if (found >= 0 && changed && write_balancing(found) == 0)
		changed = 0;
}

static int numad_running;
static long numad_log_from; /* its log's size when it started */

/* Run numad with args split at blanks, as its own program (no shell: a
 * plan's numad_args are words, never a command line); its exit status
 * as system() gives it, or -1. */
static int run_numad(const char *args, int quiet)
{
	char buf[1024], *argv[34] = {"numad"};
	int n = 1, st;
	snprintf(buf, sizeof(buf), "%s", args ? args : "");
	for (char *save = NULL, *w = strtok_r(buf, " \t\n", &save); w && n < 33;
	     w = strtok_r(NULL, " \t\n", &save))
		argv[n++] = w;
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (quiet) {
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0) {
				dup2(null, 1);
				dup2(null, 2);
			}
		}
		execvp("numad", argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

int nl_eval_numad_start(const struct eval_conf *c, char *err, size_t len)
{
	struct stat st;
	numad_log_from = stat(NUMAD_LOG, &st) == 0 ? (long)st.st_size : 0;
	/* numad daemonises itself and is stopped by `numad -i 0`. */
	int rc = run_numad(c->numad_args, 0);
	if (rc != 0) {
		snprintf(err, len, "\"numad %s\" failed (status %d)",
			 c->numad_args,
			 rc > 0 && WIFEXITED(rc) ? WEXITSTATUS(rc) : rc);
		return -1;
	}
	numad_running = 1;
	return 0;
}

void nl_eval_numad_stop(void)
{
	if (!numad_running)
		return;
	if (run_numad("-i 0", 1) != 0)
		nl_cli_error(EVAL_CMD, "warning: \"numad -i 0\" failed: numad "
				       "may still run");
	numad_running = 0;
}

int nl_eval_numad_log_moved(const char *path, long from, const pid_t *pid,
			    int n)
{
	FILE *f = fopen(path, "r");
	char line[1024], word[8];
	int seen[EVAL_MAX_PROCS] = {0}, moved = 0, p;
	struct stat st;
	if (!f)
		return -1;
	if (fstat(fileno(f), &st) == 0 && st.st_size >= from)
		fseek(f, from, SEEK_SET);
	/* One line a move, at its default log level (5, notice):
	 * "...: PID 1234 moved to node(s) 2 in 0.12 seconds". */
	while (fgets(line, sizeof(line), f)) {
		const char *s = strstr(line, "PID ");
		if (!s || sscanf(s, "PID %d %7s", &p, word) != 2 ||
		    strcmp(word, "moved"))
			continue;
		for (int i = 0; i < n && i < EVAL_MAX_PROCS; i++)
			if (pid[i] == p && !seen[i]) {
				seen[i] = 1;
				moved++;
			}
	}
	fclose(f);
	return moved;
}

int nl_eval_numad_moved(const pid_t *pid, int n)
{
	return nl_eval_numad_log_moved(NUMAD_LOG, numad_log_from, pid, n);
}
