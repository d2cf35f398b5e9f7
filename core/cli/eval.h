/* numalot eval: the site kit (docs/evaluation.md, "On your own nodes").
 * cmd_eval.c plans and drives the runs; eval_run.c runs one case;
 * eval_sys.c holds the systems (balancing, numad, numalot); eval_out.c
 * the table and the JSON; eval_html.c the page; eval_stats.c the
 * statistics. */
#ifndef NUMALOT_EVAL_H
#define NUMALOT_EVAL_H

#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

#define EVAL_CMD "eval"
#define EVAL_MAX_PROCS 4

/* The paper's classes (docs/scenarios.md, "The paper's classes"). */
enum eval_class { EVAL_DIRECT, EVAL_IND, EVAL_INTERLEAVE, EVAL_NCLASSES };

enum eval_system {
	SYS_LINUX,	 /* automatic NUMA balancing on (the reference) */
	SYS_LINUX_NOBAL, /* ...off */
	SYS_NUMAD,
	SYS_MONITOR,
	SYS_IMAR2,
	SYS_LBMA,
	SYS_BEST_STATIC, /* process i bound to node i, threads and memory */
	SYS_COUNT
};

extern const char *const nl_eval_class_names[EVAL_NCLASSES];
extern const char *const nl_eval_system_names[SYS_COUNT];

struct eval_cmd {
	char **argv; /* NULL-terminated, owned */
	int argc;
	char name[32]; /* for the table: "cg", or the program's name */
};

struct eval_conf {
	int reps, warmup;
	unsigned long long seed;
	int nclasses;
	enum eval_class classes[EVAL_NCLASSES];
	int ncmds;
	struct eval_cmd cmds[EVAL_MAX_PROCS];
	int nodes, one_node;
	int use_numactl;	/* placement by numactl, not libnuma */
	int srun;		/* each process a Slurm step */
	const char *srun_args;	/* more srun options, one word each */
	const char *numad_args; /* numad's options */
	char *owned[2];		/* ...the two above when read by --resume */
	const char *json, *html, *logs;
	char numalot[4096]; /* this binary, for numalot attach */
	/* Systems: run, or why not. */
	int sys_on[SYS_COUNT];
	char skip[SYS_COUNT][200];
	/* /proc/sys/kernel/numa_balancing as found (-1: none), and whether
	 * eval may set it (root, the file there, more than one node). */
	int balancing_found, balancing_settable;
};

struct eval_run {
	int cls, sys, rep;
	int done, ok;
	double makespan; /* s, from the first start to the last end */
	double proc_s[EVAL_MAX_PROCS]; /* each process's wall time */
	int status[EVAL_MAX_PROCS];    /* exit status, 128 + signal */
	double numalot_cpu;	       /* s, numalot attach's CPU time; -1 */
	int balancing;		       /* as the run had it, -1 unknown */
	int numad_moved; /* numad runs: processes its log says it moved; -1 */
	char err[200];
};

struct eval_plan {
	struct eval_conf c;
	struct eval_run *runs;
	size_t nruns;
};

/* Where process i of a case starts: its CPUs' node, its memory's node
 * (-1 interleaved over all nodes). */
struct eval_place {
	int cpu_node, mem_node;
};
struct eval_place nl_eval_place(enum eval_class cls, enum eval_system sys,
				int i, int nodes);

/* Run one case (r's class and system) to its end, or until *stop (the
 * children then stopped): fills r. 0, or -1 (r->err says why). */
int nl_eval_run_case(const struct eval_conf *c, struct eval_run *r,
		     volatile sig_atomic_t *stop);

/* The systems: which run here, and why the others do not (c->sys_on,
 * c->skip); the balancing state found. */
void nl_eval_systems(struct eval_conf *c, int uid);
/* Set numa_balancing for system s where eval may: the value set, or the
 * one in effect (-1 unknown). */
int nl_eval_balancing_for(const struct eval_conf *c, enum eval_system s);
/* Back as found (also from a signal's aftermath and atexit). */
void nl_eval_balancing_restore(void);
/* numad started for a run, and stopped: 0, or -1 with err. */
int nl_eval_numad_start(const struct eval_conf *c, char *err, size_t len);
void nl_eval_numad_stop(void);
/* How many of the n processes numad moved since it was started: its log's
 * lines from then on; -1 unreadable. */
int nl_eval_numad_moved(const pid_t *pid, int n);
/* ...in the log at path from byte from on (a shorter file: from 0). */
int nl_eval_numad_log_moved(const char *path, long from, const pid_t *pid,
			    int n);

/* The JSON of the plan as it stands (the runs done, the summary). */
struct json_object;
struct json_object *nl_eval_json(const struct eval_plan *p);
/* Written whole or not at all (a temporary file renamed). */
int nl_eval_save(const struct eval_plan *p, const char *path);
/* --resume=FILE: the plan and the runs done; 0, or -1 with err. */
int nl_eval_load(const char *path, struct eval_plan *p, char *err, size_t len);
/* The table and numalot's cost, on f. */
void nl_eval_print(const struct eval_plan *p, FILE *f);
int nl_eval_write_html(const struct eval_plan *p, const char *path);

/* The times (makespans) of class cls under system sys, done and ok:
 * how many, into t (nruns long). */
size_t nl_eval_times(const struct eval_plan *p, int cls, int sys, double *t);

/* A cell of the table: class cls under system sys. */
struct eval_cell {
	size_t n;	       /* runs done and ok */
	double median, lo, hi; /* s, and the median's interval */
	double level;	       /* the interval's coverage */
	int vs_ok;	       /* linux has runs: the figures below */
	double better, mean, best, median_imp;
	double cpu_mean, cpu_max; /* numalot's CPU s a run (-1: none) */
	double cpu_share;	  /* ...over the runs' wall time, mean */
};
int nl_eval_cell(const struct eval_plan *p, int cls, int sys,
		 struct eval_cell *out);

void nl_eval_free(struct eval_plan *p);

#endif
