/*
 * numalot report --html / --svg: the reports as the pictures see them.
 *
 * report_view.c reads JSON reports (docs/report-format.md) into the
 * structures below, checking every field (a report is user input: a
 * missing or ill-typed field becomes "unknown", never a crash), and
 * rebuilds each thread's placement over time from events[].
 * report_svg.c draws them, report_html.c makes the page.
 */
#ifndef NUMALOT_CLI_REPORT_VIEW_H
#define NUMALOT_CLI_REPORT_VIEW_H

#include <stdio.h>

struct json_object;

#define RV_MAX_NODES 64

/* Event kinds; a release hands the thread back to the OS (its node is
 * then unknown to the report), a stay is a draw that left it in place. */
enum rv_kind {
	RV_MIGRATE,
	RV_SWAP,
	RV_ROLLBACK,
	RV_SKIP,
	RV_STAY,
	RV_RELEASE,
	RV_PAGES, /* a process's pages moved between nodes (pid, no tid) */
	RV_OTHER
};

struct rv_event {
	double t_s;
	enum rv_kind kind;
	const char *kind_name; /* as the report spells it */
	int tid, other_tid;    /* other: -1 none */
	int from_cpu, to_cpu;  /* -1 unknown */
	int from_node, to_node;
	double tickets, total_tickets; /* < 0: absent */
	const char *reason;
	int row, other_row; /* thread rows, -1: not in the report */
	int pid, rows;	    /* RV_PAGES: the process, its rows from row */
	double bytes;	    /* RV_PAGES: how much moved (NAN unknown) */
};

/* A stretch of a thread's life on one node (-1: unknown node). */
struct rv_segment {
	double t0_s, t1_s;
	int node;
};

struct rv_thread {
	int tid, pid;
	int proc;	   /* index in the report's procs, -1 none */
	double t0_s, t1_s; /* drawn from, to */
	double time_on_node_s[RV_MAX_NODES];
	double time_total_s;
	int migrations, periods;
	double ops_per_s, oi, latency_ns; /* NAN: not measured */
	int first_node, last_node;	  /* -1 unknown */
	struct rv_segment *seg;
	int nseg;
	/* threads[].cpus, where its samples found it (NULL: an older
	 * report); drawn from when it holds any (report_samples.c) */
	struct json_object *cpus;
	int sampled;
};

struct rv_process {
	int pid;
	const char *name;
	int threads_seen;
	double start_s, end_s; /* end NAN: running */
	int color;	       /* index over the whole set */
	int have_pages;
	double pages_first[RV_MAX_NODES], pages_last[RV_MAX_NODES];
	double pages_first_s, pages_last_s;
	/* the report's pages.locality_before / _after (NAN: none) */
	double locality_before, locality_after;
};

struct rv_report {
	const char *file;
	struct json_object *r; /* the report object (owned by the set) */
	const char *error;     /* a report that holds only an error */
	int nnodes;
	double t_lo_s, t_hi_s;
	/* time 0 of the axis: a Slurm step's first task's start (t_lo_s),
	 * else the report's own clock's 0 */
	double origin_s;
	double period_s;
	double peak_ops_per_s, bandwidth_bytes_per_s; /* NAN: not known */
	const char *ceilings_source;
	struct rv_process *procs;
	int nprocs;
	struct rv_thread *threads; /* by pid, then tid */
	int nthreads;
	struct rv_event *events;
	int nevents;
	int events_unplaced; /* on threads the report does not list */
	int counts[RV_OTHER + 1];
};

struct rv_set {
	struct rv_report *reports;
	int n;
	struct json_object **roots;
	int nroots;
	char **problems; /* files that were not reports, and why */
	int nproblems;
	int nprocs_total;
};

/* A report is at most the agent's largest reply (docs/protocol.md). */
#define RV_MAX_BYTES (16 * 1024 * 1024)

/* One report file as JSON, read by nl_read_file (a regular file of at
 * most RV_MAX_BYTES); NULL with err saying why. Every report is read so. */
struct json_object *rv_read(const char *path, char *err, size_t errlen);

/* Read the files (a file may hold {"reports": [...]}); 0, or -1 when out
 * of memory. A file that is not a report goes to set->problems. */
int rv_load(struct rv_set *set, char **files, int nfiles);
void rv_free(struct rv_set *set);

/* A field of a report by dotted path ("policy.name"), NULL if absent. */
struct json_object *rv_at(struct json_object *o, const char *path);
/* Its string (NULL when absent or not a string). */
const char *rv_str(struct json_object *o, const char *path);
/* A JSON number's value (NAN for anything else). */
double rv_number(struct json_object *v);
/* Its number (NAN when absent, null or not a number). */
double rv_num(struct json_object *o, const char *path);
/* 1 true, 0 false, -1 absent. */
int rv_bool(struct json_object *o, const char *path);

/* Colours: of NUMA node k (grey for -1), of process colour index k. */
const char *rv_node_color(int k, char *buf, size_t len);
const char *rv_proc_color(int k, char *buf, size_t len);

/* The pictures, each one <svg> element (report_svg.c). */
void rv_svg_timeline(FILE *f, const struct rv_report *r, int titles);
void rv_svg_roofline(FILE *f, const struct rv_set *set);
void rv_svg_locality(FILE *f, const struct rv_set *set);
/* What the roofline could not draw, one sentence each, into f (HTML). */
void rv_roofline_notes(FILE *f, const struct rv_set *set);
/* A process's page locality at the first (last=0) or last reading: the
 * report's pages.locality_before / _after, or where it has none the same
 * measure from its pages and its threads' nodes (the sum over nodes of
 * min(share of its pages, share of its threads)); NAN if not known. */
double rv_page_locality(const struct rv_report *r, int proc, int last);

/* Add a stretch on node from t_s on to t's segments (report_view.c). */
int rv_add_segment(struct rv_thread *t, double t_s, int node);
/* t's segments from its sampled CPUs, when it has them: 1 drawn so, 0
 * not (no samples), -1 out of memory (report_samples.c). */
int rv_sampled_segments(const struct rv_report *r, struct rv_thread *t);

/* Events above which marks carry no hover text (keeps pages quick). */
#define RV_TITLES_MAX 4000

#endif
