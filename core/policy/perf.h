/* numalot: the 3DyRM performance model and per-node records
 * (docs/algorithms.md). */
#ifndef NUMALOT_PERF_H
#define NUMALOT_PERF_H

#include "sample.h"

/* Set with the policy's parameters (params.c). */
struct nl_perf_params {
	double alpha;		  /* latency exponent (1) */
	double beta;		  /* ops/s exponent (1) */
	double gamma;		  /* operational intensity exponent (1) */
	double line_bytes;	  /* bytes per last-level miss (64) */
	double record_keep_s;	  /* records keep full weight this long (1 s) */
	double record_decay_s3;	  /* then weight exp(-age^3 / this) (30) */
	double record_min_weight; /* below this a record counts as none (0.05)
				   */
};

/* Which 3DyRM terms entered a thread's perf figure. */
enum nl_perf_terms {
	NL_T_OPS = 1u << 0,	  /* ops/s from instructions (+ FP ops) */
	NL_T_OI = 1u << 1,	  /* operational intensity */
	NL_T_LATENCY = 1u << 2,	  /* mean sampled latency */
	NL_T_CPU_SHARE = 1u << 3, /* no ops counted: CPU share stands in */
};

struct nl_perf {
	unsigned terms;
	double ops_per_s;
	double oi; /* ops per byte */
	double latency_ns;
	double cpu_share; /* task-clock / wall */
	double perf;
	int preferred_node;	    /* -1 when unknown */
	double share[NL_MAX_NODES]; /* of its accesses by node (0: unknown) */
};

/*
 * 3DyRM: perf = ops_per_s^beta * OI^gamma / latency^alpha. A term whose
 * counters are missing is left out (and its flag stays clear); without any
 * op count the CPU share stands in for ops/s. Returns 0, or -ENODATA when
 * the sample carries nothing usable (no wall time, or nothing measured).
 */
int nl_perf_compute(const struct nl_sample *s, const struct nl_perf_params *p,
		    int nnodes, struct nl_perf *out);

/*
 * Per-node performance record: the last perf seen on each node, for the
 * last NL_RECORD_SLOTS nodes a thread ran on (a note for another node
 * takes the oldest's slot: past a few seconds an entry weighs nothing,
 * nl_record_weight). A record is small: one per thread, read every
 * period (docs/algorithms.md).
 */
#define NL_RECORD_SLOTS 8
struct nl_record {
	double perf[NL_RECORD_SLOTS];
	double t_s[NL_RECORD_SLOTS];
	unsigned char node[NL_RECORD_SLOTS]; /* node + 1 (0: free, as zeroed) */
};

void nl_record_clear(struct nl_record *r);
void nl_record_note(struct nl_record *r, int node, double perf, double t_s);
/* Weight of a record entry aged age_s seconds (1, then exp(-age^3/d)). */
double nl_record_weight(const struct nl_perf_params *p, double age_s);
/*
 * The record's value on node at time now_s (perf times weight). Returns 1
 * and sets *value, or 0 when there is no record (none, or too old).
 */
int nl_record_get(const struct nl_record *r, const struct nl_perf_params *p,
		  int node, double now_s, double *value);

/*
 * Relative performance: each thread's perf over the mean perf of the
 * threads with the same group (process) id. Threads with has[i] == 0 are
 * left out of the means and get rel[i] = 1.
 */
void nl_perf_relative(const double *perf, const int *group,
		      const unsigned char *has, int n, double *rel);

#endif
