/*
 * numalot SPANK plugin: srun --numalot=imar2|lbma|monitor|off. Thin: every
 * decision is the agent's (docs/slurm.md). Nothing here may hurt a job: a
 * failure is logged and the step runs on as if numalot were off, but for a
 * report the user named and could not write (early.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/spank.h>

#include "agentctl.h"
#include "early.h"
#include "nodename.h"
#include "options.h"
#include "protocol.h"
#include "report_path.h"
#include "site.h"
#include "siteconf.h"
#include "slog.h" /* last: it poisons slurm_error */

SPANK_PLUGIN(numalot, 1);

#ifndef NUMALOT_AGENT_PATH
#define NUMALOT_AGENT_PATH "/usr/local/sbin/numalotd"
#endif

/* Slurm's steps that are not srun's (slurm.h). */
#define STEP_INTERACTIVE 0xfffffffau
#define STEP_BATCH 0xfffffffbu
#define STEP_EXTERN 0xfffffffcu

static struct nl_site site;
static int site_ready;

/* This step on this node. */
static struct {
	enum nl_choice choice;
	int active;	/* the step is managed */
	int attempted;	/* tasks we tried to register */
	int registered; /* tasks the agent took */
	int failed;	/* the agent failed us: why, in reason */
	int unanswered; /* ...by not answering within wait= */
	char reason[320];
	char cwd[PATH_MAX];
	double deadline_ms; /* the end of the step's wait= budget */
	int user_copy;	    /* the user gets a report (user_reports=) */
	char pattern[1024]; /* where it goes (%N added on several nodes) */
	int added_node;	    /* ...because the user's named one file */
	uint32_t ntasks;    /* tasks of the step on this node */
	uint32_t exited;    /* ...that have ended */
	int finished;	    /* the report is written */
	char program[64];   /* what the step runs */
} step;

static void complain(const char *msg)
{
	nl_slurm_error("%s", msg);
}

/* The site's errors in a step, gathered for one line of slurmd's log. */
static char site_errors[1500];
static void gather(const char *msg)
{
	size_t n = strlen(site_errors);
	if (n + 3 < sizeof(site_errors))
		snprintf(site_errors + n, sizeof(site_errors) - n, "%s%s",
			 n ? "; " : "",
			 strncmp(msg, "numalot: ", 9) ? msg : msg + 9);
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	nl_site_default(&site, NUMALOT_AGENT_PATH);
	/* The administrator's errors, by name: each in slurmd's log when
	 * slurmd loads the plugin, and in one line of it (info, which srun
	 * does not show) per step; a user's srun says one line
	 * (slurm_spank_init_post_opt). */
	nl_site_load(&site, NUMALOT_CONF, ac, av,
		     ctx == S_CTX_SLURMD   ? complain
		     : ctx == S_CTX_REMOTE ? gather
					   : NULL);
	if (site_errors[0])
		nl_slurm_info("numalot: site configuration: %s", site_errors);
	site_ready = 1;
	nl_options_register(sp, &site);
	return 0; /* never fail here: a remote failure drains the node */
}

static void give_up(const char *why);

/* Milliseconds on the monotonic clock. */
static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void node_name_now(spank_t sp, char *buf, size_t len);

/*
 * Slurm's name of this node (the one %N stands for). It goes into the
 * paths root writes, so it never comes from the job's environment
 * (SLURMD_NODENAME there is the user's): the name of slurmstepd's own
 * socket, else the host's short name (docs/slurm.md, "Security").
 */
static void node_name(spank_t sp, char *buf, size_t len)
{
	/* The first answer holds for the whole step: the report the agent
	 * hands over and the plugin's are one file. */
	static char known[64];
	if (!known[0])
		node_name_now(sp, known, sizeof(known));
	snprintf(buf, len, "%s", known);
}

static void node_name_now(spank_t sp, char *buf, size_t len)
{
	uint32_t job = 0, stepid = 0;
	if (spank_get_item(sp, S_JOB_ID, &job) == ESPANK_SUCCESS &&
	    spank_get_item(sp, S_JOB_STEPID, &stepid) == ESPANK_SUCCESS &&
	    nl_stepd_node_name(job, stepid, buf, len) == 0)
		return;
	if (nl_host_node_name(buf, len) == 0)
		return;
	nl_slurm_error("numalot: neither slurmstepd's socket nor the host name "
		       "gives a usable node name; no site copy for this step");
}

/* What srun's file name tokens stand for on this node (report_path.h). */
struct step_names {
	struct nl_path_ids ids;
	char node[64], user[64], job_name[256], cluster[64];
};

static void step_names(spank_t sp, struct step_names *n)
{
	struct passwd *pw;
	uid_t uid = 0;
	memset(n, 0, sizeof(*n));
	spank_get_item(sp, S_JOB_ID, &n->ids.job);
	spank_get_item(sp, S_JOB_STEPID, &n->ids.step);
	n->ids.array_job = n->ids.job;
	n->ids.array_task = 0xfffffffeu; /* srun's %a outside an array */
	spank_get_item(sp, S_JOB_ARRAY_ID, &n->ids.array_job);
	spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &n->ids.array_task);
	if (!n->ids.array_job)
		n->ids.array_job = n->ids.job;
	spank_get_item(sp, S_JOB_NODEID, &n->ids.node_index);
	if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, 0u,
			   &n->ids.first_task) != ESPANK_SUCCESS)
		n->ids.first_task = n->ids.node_index;
	node_name(sp, n->node, sizeof(n->node));
	if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS &&
	    (pw = getpwuid(uid)))
		snprintf(n->user, sizeof(n->user), "%s", pw->pw_name);
	if (spank_getenv(sp, "SLURM_JOB_NAME", n->job_name,
			 sizeof(n->job_name)) != ESPANK_SUCCESS)
		n->job_name[0] = 0;
	if (spank_getenv(sp, "SLURM_CLUSTER_NAME", n->cluster,
			 sizeof(n->cluster)) != ESPANK_SUCCESS)
		n->cluster[0] = 0;
	n->ids.node = n->node;
	n->ids.user = n->user;
	n->ids.job_name = n->job_name;
}

/* Whether the user gets a report, and where (docs/slurm.md). */
static void plan_report(spank_t sp)
{
	uint32_t nnodes = 1;
	int argc = 0;
	char **argv = NULL;
	const char *pattern =
		nl_user.report[0] ? nl_user.report : NL_REPORT_PATTERN;

	step.user_copy = site.user_reports == NL_USER_REPORTS_ALWAYS ||
			 (site.user_reports == NL_USER_REPORTS_REQUEST &&
			  (nl_user.choice >= 0 || nl_user.report[0]));
	snprintf(step.pattern, sizeof(step.pattern), "%s", pattern);
	/* A step on several nodes never writes two nodes to one file. */
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) == ESPANK_SUCCESS &&
	    nnodes > 1 && !nl_path_per_node(pattern) &&
	    nl_path_add_node(pattern, step.pattern, sizeof(step.pattern)) == 0)
		step.added_node = 1;
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &step.ntasks) !=
	    ESPANK_SUCCESS)
		step.ntasks = 0;
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS &&
	    argc > 0 && argv && argv[0]) {
		const char *slash = strrchr(argv[0], '/');
		/* As the kernel names a process: 15 characters. */
		snprintf(step.program, 16, "%s", slash ? slash + 1 : argv[0]);
	}
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	uint32_t stepid = 0;
	char refusal[400];
	int implied = 0;
	(void)ac;
	(void)av;
	if (nl_options_root_report(sp) < 0 &&
	    (spank_context() == S_CTX_LOCAL ||
	     spank_context() == S_CTX_ALLOCATOR))
		exit(1);
	/* A --numalot-report alone asks for monitor (docs/slurm.md). */
	int refused =
		nl_site_step_choice(&site, nl_user.choice, nl_user.report[0],
				    &step.choice, &implied, refusal,
				    sizeof(refusal)) < 0;
	if (!spank_remote(sp)) {
		spank_context_t ctx = spank_context();
		char msg[300];
		if (site.force >= 0 && nl_user.choice >= 0 &&
		    nl_user.choice != site.force)
			nl_slurm_info("numalot: this cluster forces "
				      "--numalot=%s",
				      nl_choice_name(site.force));
		nl_site_misconfigured(&site, msg, sizeof(msg));
		if (msg[0])
			nl_slurm_error("%s", msg);
		/* srun, sbatch, salloc: before the job. An optional plugin's
		 * error does not stop them (Slurm goes on): exit, as an
		 * option's error does. */
		if (refused && (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR)) {
			nl_slurm_error("%s", refusal);
			exit(1);
		}
		if (implied)
			nl_slurm_info("numalot: --numalot-report without "
				      "--numalot: numalot watches the step "
				      "(--numalot=monitor)");
		return 0;
	}
	if (spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
		return 0;
	/* The extern step runs no user code; the batch step is the job
	 * script and salloc's interactive step the user's shell (the sruns
	 * they start are steps of their own). */
	step.active = step.choice != NL_CHOICE_OFF && stepid != STEP_EXTERN &&
		      stepid != STEP_BATCH && stepid != STEP_INTERACTIVE;
	if (!step.active || getuid() != 0)
		return 0;
	plan_report(sp);
	/* The report the user asked for is checked by each task, before
	 * the program (early.h). */
	if (step.user_copy && nl_user.report[0] && nl_early_setup() < 0)
		nl_slurm_error("numalot: --numalot-report=%s cannot be checked "
			       "before the tasks start: %m",
			       nl_user.report);
	/* Before the tasks are forked, so that a task can tell its user
	 * (task_init) when the agent is not there. The step waits on the
	 * agent at most wait= in all (docs/slurm.md). */
	char why[320];
	step.deadline_ms = mono_ms() + site.wait_s * 1e3;
	if (nl_agentctl_ensure(&site, step.deadline_ms, why, sizeof(why)) < 0) {
		give_up(why);
		step.unanswered = strstr(why, "does not answer") != NULL;
	}
	return 0;
}

/* In the task, as the job's user, before it runs the user's program:
 * its stderr is srun's. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	uint32_t taskid = 1;
	char msg[PATH_MAX + 1400];
	int local = 0;
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !step.active)
		return 0;
	/* A report asked for that cannot be written: the program does not
	 * start (an optional plugin's error would not stop it), said once
	 * a node. */
	if (nl_early_check(nl_user.report, msg, sizeof(msg)) < 0) {
		if (spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS ||
		    local == 0)
			fprintf(stderr, "%s\n", msg);
		_exit(2);
	}
	if (!step.failed)
		return 0;
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &taskid) == ESPANK_SUCCESS &&
	    taskid == 0)
		fprintf(stderr,
			"numalot: %s; the step runs on without "
			"numalot\n",
			step.reason);
	return 0;
}

static void cpu_list(pid_t pid, char *buf, size_t len)
{
	cpu_set_t set;
	size_t n = 0;
	buf[0] = 0;
	if (sched_getaffinity(pid, sizeof(set), &set) < 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && n + 12 < len; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		int e = c;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
			e++;
		n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "",
				      c);
		if (e > c)
			n += (size_t)snprintf(buf + n, len - n, "-%d", e);
		c = e;
	}
}

static void give_up(const char *why)
{
	if (!step.failed)
		nl_slurm_error("numalot: %s; the step runs on without numalot",
			       why);
	step.failed = 1;
	snprintf(step.reason, sizeof(step.reason), "%s", why);
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	struct nl_request q = {
		.op = NL_OP_REGISTER, .has_step = 1, .has_uid = 1};
	char why[300], link[64];
	pid_t pid;
	uid_t uid;
	(void)ac;
	(void)av;

	if (!spank_remote(sp) || !step.active)
		return 0;
	/* The task's working folder, where a relative report goes (even
	 * one that says the agent failed). */
	if (!step.cwd[0] &&
	    spank_get_item(sp, S_TASK_PID, &pid) == ESPANK_SUCCESS) {
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
		ssize_t n = readlink(link, step.cwd, sizeof(step.cwd) - 1);
		step.cwd[n > 0 ? n : 0] = 0;
	}
	/* Where the report the user asked for goes, for the task to check
	 * before it runs the program (task_init). */
	if (step.user_copy && nl_user.report[0]) {
		struct step_names n;
		char path[4096];
		step_names(sp, &n);
		if (nl_path_expand(step.pattern, step.cwd, &n.ids, path,
				   sizeof(path)) == 0)
			nl_early_note(path);
	}
	if (step.failed)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &q.job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &q.step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS) {
		give_up("cannot read the job's identity from Slurm");
		return 0;
	}
	q.uid = uid;
	q.pid = pid;
	snprintf(q.policy, sizeof(q.policy), "%s", nl_choice_name(step.choice));
	q.period_s = nl_user.period > 0 ? nl_user.period : site.period_s;
	/* A task's own binding: a start, or the limit (docs/slurm.md). */
	if (nl_user.bindings >= 0 ? nl_user.bindings : site.keep_bindings) {
		snprintf(q.param_key[q.nparams], sizeof(q.param_key[0]),
			 "keep_bindings");
		snprintf(q.param_value[q.nparams], sizeof(q.param_value[0]),
			 "1");
		q.nparams++;
	}
	cpu_list(pid, q.cpus, sizeof(q.cpus));
	if (!step.deadline_ms)
		step.deadline_ms = mono_ms() + site.wait_s * 1e3;
	/* Where the user's report goes, so that an agent that is stopped
	 * can hand it over itself (docs/protocol.md), and the node's name
	 * for its reports. */
	{
		struct step_names n;
		gid_t gid;
		step_names(sp, &n);
		if (!step.user_copy ||
		    nl_path_expand(step.pattern, step.cwd, &n.ids, q.report,
				   sizeof(q.report)) < 0 ||
		    q.report[0] != '/')
			q.report[0] = 0;
		snprintf(q.node, sizeof(q.node), "%s", n.node);
		if (spank_get_item(sp, S_JOB_GID, &gid) == ESPANK_SUCCESS) {
			q.gid = gid;
			q.has_gid = 1;
		}
	}
	if (nl_agentctl_ensure(&site, step.deadline_ms, why, sizeof(why)) < 0) {
		give_up(why);
		step.unanswered = strstr(why, "does not answer") != NULL;
		return 0;
	}
	step.attempted++;
	int rc = nl_agentctl_register(&site, &q, step.deadline_ms, why,
				      sizeof(why));
	if (rc < 0) {
		give_up(why);
		step.unanswered = rc == -2;
		return 0;
	}
	step.registered++;
	return 0;
}

/* The step's report, once, from the first of task_exit (the last task)
 * and exit. */
static void finish(spank_t sp)
{
	struct step_names n;
	char path[4096] = "";

	if (step.finished || (step.registered == 0 && !step.failed))
		return;
	step.finished = 1;
	step_names(sp, &n);
	/* A task refused the report before its program: said then. */
	if (nl_early_refused())
		step.user_copy = 0;
	if (step.user_copy && nl_path_expand(step.pattern, step.cwd, &n.ids,
					     path, sizeof(path)) < 0) {
		nl_slurm_error("numalot: --numalot-report=%s makes a path over "
			       "%zu characters; no report for the user",
			       step.pattern, sizeof(path));
		path[0] = 0;
	}
	struct nl_step_end e = {.attempted = step.attempted,
				.registered = step.registered,
				.failed = step.failed,
				.unanswered = step.unanswered,
				.reason = step.reason,
				.user_path = path,
				.node = n.node,
				.user = n.user,
				.cluster = n.cluster,
				.program = step.program};
	nl_agentctl_finish(sp, &site, &e);
	/* Said once, by the step's first node: every node writes its own. */
	if (step.user_copy && step.added_node && n.ids.node_index == 0) {
		fprintf(stderr,
			"numalot: --numalot-report=%s names one file for the "
			"step's nodes: each node writes its own, %s\n",
			nl_user.report, step.pattern);
		nl_slurm_info(
			"numalot: --numalot-report=%s: each node writes %s",
			nl_user.report, step.pattern);
	}
}

/*
 * As root in slurmstepd when a task ends. When the node's last task has
 * ended, the report is fetched and written here rather than in exit: the
 * step's output still reaches srun, so a report that cannot be written is
 * told to the user (slurm_error shows on srun's stderr).
 */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !step.active || getuid() != 0)
		return 0;
	step.exited++;
	if (step.ntasks > 0 && step.exited >= step.ntasks)
		finish(sp);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (!spank_remote(sp) || !step.active || getuid() != 0)
		return 0;
	finish(sp);
	return 0;
}
