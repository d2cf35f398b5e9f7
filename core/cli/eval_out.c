/* numalot eval: the table, the JSON written as the runs go (and read back
 * by --resume), from the runs of the plan (eval.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "eval.h"
#include "eval_stats.h"
#include "util.h"

size_t nl_eval_times(const struct eval_plan *p, int cls, int sys, double *t)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nruns; i++) {
		const struct eval_run *r = &p->runs[i];
		if (r->cls == cls && r->sys == sys && r->done && r->ok)
			t[n++] = r->makespan;
	}
	return n;
}

int nl_eval_cell(const struct eval_plan *p, int cls, int sys,
		 struct eval_cell *o)
{
	double *t = malloc((p->nruns + 1) * sizeof(*t)), ref;
	struct nl_stats_vs vs;
	size_t nl;

	memset(o, 0, sizeof(*o));
	o->cpu_mean = o->cpu_max = -1;
	if (!t)
		return -1;
	nl = nl_eval_times(p, cls, SYS_LINUX, t);
	ref = nl ? nl_stats_median(t, nl) : NAN;
	o->n = nl_eval_times(p, cls, sys, t);
	if (o->n == 0) {
		free(t);
		return -1;
	}
	o->median = nl_stats_median(t, o->n);
	nl_stats_median_ci(t, o->n, 0.95, &o->lo, &o->hi, &o->level);
	if (sys != SYS_LINUX && nl && nl_stats_versus(t, o->n, ref, &vs) == 0) {
		o->vs_ok = 1;
		o->better = vs.better;
		o->mean = vs.mean;
		o->best = vs.best;
		o->median_imp = vs.median;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nruns; i++) {
		const struct eval_run *r = &p->runs[i];
		if (r->cls != cls || r->sys != sys || !r->ok ||
		    r->numalot_cpu < 0)
			continue;
		o->cpu_mean =
			(o->cpu_mean < 0 ? 0 : o->cpu_mean) + r->numalot_cpu;
		o->cpu_max = r->numalot_cpu > o->cpu_max ? r->numalot_cpu
							 : o->cpu_max;
		o->cpu_share +=
			r->makespan > 0 ? r->numalot_cpu / r->makespan : 0;
		k++;
	}
	if (k) {
		o->cpu_mean /= (double)k;
		o->cpu_share /= (double)k;
	}
	free(t);
	return 0;
}

static void add_d(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k,
			       isfinite(v) ? json_object_new_double(v) : NULL);
}

static struct json_object *cell_json(const struct eval_cell *e)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "runs", json_object_new_int((int)e->n));
	add_d(o, "median_s", e->median);
	add_d(o, "ci_low_s", e->lo);
	add_d(o, "ci_high_s", e->hi);
	add_d(o, "ci_level", e->level);
	if (e->vs_ok) {
		add_d(o, "better_share", e->better);
		add_d(o, "mean_improvement", e->mean);
		add_d(o, "best_improvement", e->best);
		add_d(o, "median_improvement", e->median_imp);
	}
	if (e->cpu_mean >= 0) {
		add_d(o, "numalot_cpu_mean_s", e->cpu_mean);
		add_d(o, "numalot_cpu_max_s", e->cpu_max);
		add_d(o, "numalot_cpu_share", e->cpu_share);
	}
	return o;
}

static struct json_object *strs(char *const *v, int n)
{
	struct json_object *a = json_object_new_array();
	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static struct json_object *run_json(const struct eval_plan *p,
				    const struct eval_run *r)
{
	struct json_object *o = json_object_new_object(), *a, *b;
	json_object_object_add(
		o, "class",
		json_object_new_string(nl_eval_class_names[r->cls]));
	json_object_object_add(
		o, "system",
		json_object_new_string(nl_eval_system_names[r->sys]));
	json_object_object_add(o, "rep", json_object_new_int(r->rep));
	json_object_object_add(o, "done", json_object_new_boolean(r->done));
	if (!r->done)
		return o;
	json_object_object_add(o, "ok", json_object_new_boolean(r->ok));
	add_d(o, "makespan_s", r->makespan);
	a = json_object_new_array();
	b = json_object_new_array();
	for (int i = 0; i < p->c.ncmds; i++) {
		json_object_array_add(a, json_object_new_double(r->proc_s[i]));
		json_object_array_add(b, json_object_new_int(r->status[i]));
	}
	json_object_object_add(o, "process_s", a);
	json_object_object_add(o, "status", b);
	if (r->numalot_cpu >= 0)
		add_d(o, "numalot_cpu_s", r->numalot_cpu);
	json_object_object_add(o, "numa_balancing",
			       json_object_new_int(r->balancing));
	if (r->sys == SYS_NUMAD && r->numad_moved >= 0)
		json_object_object_add(o, "numad_moved",
				       json_object_new_int(r->numad_moved));
	if (r->err[0])
		json_object_object_add(o, "error",
				       json_object_new_string(r->err));
	return o;
}

struct json_object *nl_eval_json(const struct eval_plan *p)
{
	const struct eval_conf *c = &p->c;
	struct json_object *o = json_object_new_object(), *a, *s, *bal;
	int complete = 1;
	char seed[32];

	json_object_object_add(o, "numalot_eval", json_object_new_int(1));
	json_object_object_add(o, "mode",
			       json_object_new_string(c->one_node
							      ? "overhead-only"
							      : "placement"));
	if (c->one_node)
		json_object_object_add(
			o, "note",
			json_object_new_string(
				"one NUMA node: nothing to place, so only "
				"numalot's overhead is measured (monitor "
				"against linux); no speed-up can be shown "
				"here"));
	snprintf(seed, sizeof(seed), "%llu", c->seed);
	json_object_object_add(o, "seed", json_object_new_string(seed));
	json_object_object_add(o, "reps", json_object_new_int(c->reps));
	json_object_object_add(o, "warmup", json_object_new_boolean(c->warmup));
	json_object_object_add(o, "nodes", json_object_new_int(c->nodes));
	json_object_object_add(o, "placement",
			       json_object_new_string(c->use_numactl || c->srun
							      ? "numactl"
							      : "libnuma"));
	json_object_object_add(o, "srun", json_object_new_boolean(c->srun));
	if (c->srun_args)
		json_object_object_add(o, "srun_args",
				       json_object_new_string(c->srun_args));
	json_object_object_add(o, "numad_args",
			       json_object_new_string(c->numad_args));
	bal = json_object_new_object();
	json_object_object_add(
		bal, "found",
		c->balancing_found < 0
			? NULL
			: json_object_new_int(c->balancing_found));
	json_object_object_add(bal, "settable",
			       json_object_new_boolean(c->balancing_settable));
	json_object_object_add(o, "numa_balancing", bal);
	a = json_object_new_array();
	for (int i = 0; i < c->nclasses; i++)
		json_object_array_add(
			a, json_object_new_string(
				   nl_eval_class_names[c->classes[i]]));
	json_object_object_add(o, "classes", a);
	a = json_object_new_array();
	for (int i = 0; i < c->ncmds; i++) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "name",
				       json_object_new_string(c->cmds[i].name));
		json_object_object_add(x, "argv",
				       strs(c->cmds[i].argv, c->cmds[i].argc));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "commands", a);
	a = json_object_new_array();
	for (int i = 0; i < SYS_COUNT; i++) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(
			x, "name",
			json_object_new_string(nl_eval_system_names[i]));
		json_object_object_add(x, "runs",
				       json_object_new_boolean(c->sys_on[i]));
		if (!c->sys_on[i])
			json_object_object_add(
				x, "skipped",
				json_object_new_string(c->skip[i]));
		json_object_array_add(a, x);
	}
	json_object_object_add(o, "systems", a);
	a = json_object_new_array();
	for (size_t i = 0; i < p->nruns; i++) {
		json_object_array_add(a, run_json(p, &p->runs[i]));
		complete &= p->runs[i].done;
	}
	json_object_object_add(o, "runs", a);
	json_object_object_add(o, "complete",
			       json_object_new_boolean(complete));
	s = json_object_new_object();
	for (int k = 0; k < c->nclasses; k++) {
		struct json_object *x = json_object_new_object();
		for (int y = 0; y < SYS_COUNT; y++) {
			struct eval_cell e;
			if (c->sys_on[y] &&
			    nl_eval_cell(p, c->classes[k], y, &e) == 0)
				json_object_object_add(x,
						       nl_eval_system_names[y],
						       cell_json(&e));
		}
		json_object_object_add(s, nl_eval_class_names[c->classes[k]],
				       x);
	}
	json_object_object_add(o, "summary", s);
	/* numalot's own cost: monitor's slow-down against linux. */
	s = json_object_new_object();
	for (int k = 0; k < c->nclasses; k++) {
		struct eval_cell l, m;
		if (nl_eval_cell(p, c->classes[k], SYS_LINUX, &l) ||
		    nl_eval_cell(p, c->classes[k], SYS_MONITOR, &m))
			continue;
		struct json_object *x = json_object_new_object();
		add_d(x, "monitor_slowdown", (m.median - l.median) / l.median);
		add_d(x, "linux_median_s", l.median);
		add_d(x, "monitor_median_s", m.median);
		add_d(x, "numalot_cpu_mean_s", m.cpu_mean);
		add_d(x, "numalot_cpu_share", m.cpu_share);
		json_object_object_add(s, nl_eval_class_names[c->classes[k]],
				       x);
	}
	json_object_object_add(o, "overhead", s);
	return o;
}

int nl_eval_save(const struct eval_plan *p, const char *path)
{
	char abs[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 800];
	struct json_object *o;
	int rc, shared;

	/* The plan's file is replaced whole (--resume reads it): a new one
	 * beside it, renamed over the very path root checked. */
	if (nl_cli_may_write_abs(path, &shared, abs, sizeof(abs), why,
				 sizeof(why)) < 0) {
		nl_cli_error(EVAL_CMD, "%s", why);
		return -1;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.part", abs) >= (int)sizeof(tmp)) {
		nl_cli_error(EVAL_CMD, "cannot write %s: %s", path,
			     strerror(ENAMETOOLONG));
		return -1;
	}
	o = nl_eval_json(p);
	rc = nl_cli_write_json(EVAL_CMD, tmp, o);
	json_object_put(o);
	if (rc == 0 && rename(tmp, abs) < 0) {
		nl_cli_error(EVAL_CMD, "cannot write %s: %m", path);
		unlink(tmp);
		rc = -1;
	}
	return rc;
}

static int index_of(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (s && !strcmp(names[i], s))
			return i;
	return -1;
}

static const char *get_s(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) &&
			       json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

int nl_eval_load(const char *path, struct eval_plan *p, char *err, size_t len)
{
	struct json_object *o, *a, *v;
	struct eval_conf *c = &p->c;
	const char *s;
	int rc = -1;
	struct stat sb;

	/* Its commands run as whoever resumes it (root, mostly): only a
	 * plan of their own that nobody else may change (docs/evaluation.md,
	 * "On your own nodes"). Checked on the file it reads. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return nl_errf(err, len, -1, "%s: %s", path, strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return nl_errf(err, len, -1, "%s: not a regular file", path);
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 022)) {
		close(fd);
		return nl_errf(err, len, -1,
			       "%s: uid %u's, mode %04o: a plan's commands run "
			       "as you (uid %u), so it must be your own file "
			       "that nobody else may write",
			       path, (unsigned)sb.st_uid,
			       (unsigned)(sb.st_mode & 07777),
			       (unsigned)geteuid());
	}
	o = json_object_from_fd(fd);
	close(fd);
	if (!o)
		return nl_errf(err, len, -1, "%s: not a JSON file (%s)", path,
			       json_util_get_last_err());
	if (!(v = get(o, "numalot_eval")) || json_object_get_int(v) != 1) {
		nl_errf(err, len, -1, "%s: not written by numalot eval", path);
		goto out;
	}
	s = get_s(o, "seed");
	c->seed = s ? strtoull(s, NULL, 10) : 0;
	c->reps = json_object_get_int(get(o, "reps"));
	c->warmup = 0; /* warm already: runs were done */
	c->srun = json_object_get_boolean(get(o, "srun"));
	c->use_numactl = !strcmp(
		get_s(o, "placement") ? get_s(o, "placement") : "", "numactl");
	if ((s = get_s(o, "srun_args")))
		c->srun_args = c->owned[0] = strdup(s);
	if ((s = get_s(o, "numad_args")))
		c->numad_args = c->owned[1] = strdup(s);
	if (json_object_get_int(get(o, "nodes")) != c->nodes) {
		nl_errf(err, len, -1,
			"%s: written on a node with %d NUMA nodes, this one "
			"has %d",
			path, json_object_get_int(get(o, "nodes")), c->nodes);
		goto out;
	}
	a = get(o, "classes");
	c->nclasses = 0;
	for (size_t i = 0; a && i < json_object_array_length(a) &&
			   c->nclasses < EVAL_NCLASSES;
	     i++) {
		int k = index_of(nl_eval_class_names, EVAL_NCLASSES,
				 json_object_get_string(
					 json_object_array_get_idx(a, i)));
		if (k < 0) {
			nl_errf(err, len, -1, "%s: classes[%zu] unknown", path,
				i);
			goto out;
		}
		c->classes[c->nclasses++] = (enum eval_class)k;
	}
	a = get(o, "commands");
	c->ncmds = 0;
	for (size_t i = 0;
	     a && i < json_object_array_length(a) && c->ncmds < EVAL_MAX_PROCS;
	     i++) {
		struct json_object *x = json_object_array_get_idx(a, i),
				   *av = get(x, "argv");
		struct eval_cmd *e = &c->cmds[c->ncmds];
		size_t n = av ? json_object_array_length(av) : 0;
		if (!n) {
			nl_errf(err, len, -1, "%s: commands[%zu] has no argv",
				path, i);
			goto out;
		}
		e->argv = calloc(n + 1, sizeof(char *));
		for (size_t j = 0; j < n; j++)
			e->argv[j] = strdup(json_object_get_string(
				json_object_array_get_idx(av, j)));
		e->argc = (int)n;
		snprintf(e->name, sizeof(e->name), "%s",
			 get_s(x, "name") ? get_s(x, "name") : e->argv[0]);
		c->ncmds++;
	}
	a = get(o, "runs");
	p->nruns = a ? json_object_array_length(a) : 0;
	p->runs = calloc(p->nruns + 1, sizeof(*p->runs));
	for (size_t i = 0; i < p->nruns; i++) {
		struct json_object *x = json_object_array_get_idx(a, i), *t;
		struct eval_run *r = &p->runs[i];
		r->cls = index_of(nl_eval_class_names, EVAL_NCLASSES,
				  get_s(x, "class"));
		r->sys = index_of(nl_eval_system_names, SYS_COUNT,
				  get_s(x, "system"));
		if (r->cls < 0 || r->sys < 0) {
			nl_errf(err, len, -1,
				"%s: runs[%zu]: unknown class or system", path,
				i);
			goto out;
		}
		r->rep = json_object_get_int(get(x, "rep"));
		r->done = json_object_get_boolean(get(x, "done"));
		r->numalot_cpu = -1;
		r->numad_moved = -1;
		if (!r->done)
			continue;
		r->ok = json_object_get_boolean(get(x, "ok"));
		r->makespan = json_object_get_double(get(x, "makespan_s"));
		if ((v = get(x, "numalot_cpu_s")))
			r->numalot_cpu = json_object_get_double(v);
		r->balancing = json_object_get_int(get(x, "numa_balancing"));
		if ((v = get(x, "numad_moved")))
			r->numad_moved = json_object_get_int(v);
		t = get(x, "process_s");
		v = get(x, "status");
		for (int k = 0; k < c->ncmds; k++) {
			r->proc_s[k] = json_object_get_double(
				json_object_array_get_idx(t, (size_t)k));
			r->status[k] = json_object_get_int(
				json_object_array_get_idx(v, (size_t)k));
		}
		if ((s = get_s(x, "error")))
			snprintf(r->err, sizeof(r->err), "%s", s);
	}
	rc = 0;
out:
	json_object_put(o);
	return rc;
}

static void pct(FILE *f, double v)
{
	fprintf(f, " %+7.1f%%", 100 * v);
}

/* What numad did in its runs, from its log: a numad that moved nothing
 * was linux-nobalance under another name. */
static void numad_line(const struct eval_plan *p, FILE *f)
{
	int runs = 0, procs = 0, moved = 0;
	for (size_t i = 0; i < p->nruns; i++) {
		const struct eval_run *r = &p->runs[i];
		if (r->sys != SYS_NUMAD || !r->done || r->numad_moved < 0)
			continue;
		runs++;
		procs += p->c.ncmds;
		moved += r->numad_moved;
	}
	if (!runs)
		return;
	fprintf(f,
		"\nnumad moved %d of the %d processes of its %d run%s "
		"(its log)%s\n",
		moved, procs, runs, nl_s(runs),
		moved ? ""
		      : ": it moves only processes of more than 300 MB "
			"using more than\nhalf a CPU, and none in the "
			"node's first 300 s");
}

void nl_eval_print(const struct eval_plan *p, FILE *f)
{
	const struct eval_conf *c = &p->c;
	if (c->one_node)
		fprintf(f, "One NUMA node: nothing to place, so only numalot's "
			   "overhead is measured\n(monitor against linux); "
			   "no speed-up can be shown here.\n");
	for (int k = 0; k < c->nclasses; k++) {
		int cls = c->classes[k];
		fprintf(f,
			"\nclass %s: makespan of the %d processes, median [CI] "
			"(s); against linux's median\n",
			nl_eval_class_names[cls], c->ncmds);
		fprintf(f, "%-16s %4s %9s %21s %7s %8s %8s %8s\n", "system",
			"runs", "median", "interval", "cover", "better", "mean",
			"best");
		for (int y = 0; y < SYS_COUNT; y++) {
			struct eval_cell e;
			if (!c->sys_on[y])
				continue;
			fprintf(f, "%-16s", nl_eval_system_names[y]);
			if (nl_eval_cell(p, cls, y, &e) < 0) {
				fprintf(f, " %4d   (no run done and ok)\n", 0);
				continue;
			}
			fprintf(f, " %4zu %9.3f [%9.3f, %9.3f] %6.1f%%", e.n,
				e.median, e.lo, e.hi, 100 * e.level);
			if (e.vs_ok) {
				fprintf(f, " %7.0f%%", 100 * e.better);
				pct(f, e.mean);
				pct(f, e.best);
			}
			fputc('\n', f);
		}
	}
	numad_line(p, f);
	fprintf(f, "\nnumalot's own cost (numalot attach's CPU time a run, "
		   "and monitor's\nslow-down of the workload against "
		   "linux, medians):\n");
	for (int k = 0; k < c->nclasses; k++) {
		int cls = c->classes[k];
		struct eval_cell l, m;
		for (int y = SYS_MONITOR; y <= SYS_LBMA; y++)
			if (c->sys_on[y] && nl_eval_cell(p, cls, y, &m) == 0 &&
			    m.cpu_mean >= 0)
				fprintf(f,
					"  %-10s %-8s CPU %.3f s a run (max "
					"%.3f), %.2f%% of one CPU\n",
					nl_eval_class_names[cls],
					nl_eval_system_names[y], m.cpu_mean,
					m.cpu_max, 100 * m.cpu_share);
		if (nl_eval_cell(p, cls, SYS_LINUX, &l) == 0 &&
		    nl_eval_cell(p, cls, SYS_MONITOR, &m) == 0)
			fprintf(f,
				"  %-10s monitor  slow-down %+.1f%% (linux "
				"%.3f [%.3f, %.3f] s, monitor %.3f [%.3f, "
				"%.3f] s)\n",
				nl_eval_class_names[cls],
				100 * (m.median - l.median) / l.median,
				l.median, l.lo, l.hi, m.median, m.lo, m.hi);
	}
	for (int y = 0; y < SYS_COUNT; y++)
		if (!c->sys_on[y])
			fprintf(f, "skipped: %s: %s\n", nl_eval_system_names[y],
				c->skip[y]);
}

void nl_eval_free(struct eval_plan *p)
{
	for (int i = 0; i < p->c.ncmds; i++) {
		for (int j = 0; j < p->c.cmds[i].argc; j++)
			free(p->c.cmds[i].argv[j]);
		free(p->c.cmds[i].argv);
	}
	free(p->runs);
	p->runs = NULL;
	free(p->c.owned[0]);
	free(p->c.owned[1]);
	p->c.owned[0] = p->c.owned[1] = NULL;
}
