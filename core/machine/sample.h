/* numalot: one thread's counter readings over an interval. */
#ifndef NUMALOT_SAMPLE_H
#define NUMALOT_SAMPLE_H

#include "topology.h" /* NL_MAX_NODES */

/* Which fields of struct nl_sample were really measured. */
enum nl_measured {
	NL_M_INSTRUCTIONS = 1u << 0, /* instructions retired */
	NL_M_FP_OPS = 1u << 1,	     /* floating-point ops, width-weighted */
	NL_M_LLC_MISSES = 1u << 2,   /* last-level misses served by memory */
	NL_M_LATENCY = 1u << 3,	     /* sampled load latency, by node */
	NL_M_TASK_CLOCK = 1u << 4,   /* CPU time */
	NL_M_CPU = 1u << 5,	     /* CPU it last ran on */
	NL_M_NODE_ACCESS = 1u << 6,  /* accesses (or pages) by node */
	NL_M_SW_EVENTS = 1u << 7,    /* context switches, migrations, faults */
};

/*
 * Counter deltas of one thread over an interval: what the real samplers and
 * the machine model both fill. A field whose flag is clear holds 0 and means
 * "unknown", never "zero".
 */
struct nl_sample {
	unsigned measured;
	double wall_s; /* length of the interval */
	double instructions;
	double fp_ops;
	double llc_misses; /* count of cache lines */
	double task_clock_s;
	int cpu; /* dense CPU index it last ran on, -1 unknown */
	double ctx_switches;
	double cpu_migrations;
	double page_faults;
	/* Latency samples grouped by the node holding the address. */
	double lat_count[NL_MAX_NODES];
	double lat_sum_ns[NL_MAX_NODES];
	/* Accesses (or resident pages) by node, for the preferred node. */
	double access[NL_MAX_NODES];
};

/*
 * Samples added up: struct nl_sample's fields, with its by-node arrays as
 * long as the machine has nodes, in the caller's storage (a thread's sum
 * is kept for every thread: small on a small node).
 */
struct nl_sample_sum {
	unsigned measured;
	double wall_s, instructions, fp_ops, llc_misses, task_clock_s;
	int cpu;
	double ctx_switches, cpu_migrations, page_faults;
	double *lat_count, *lat_sum_ns, *access; /* nnodes each */
};

/* Add b to a (flags are and-ed once a holds something; cpu is b's; the
 * first nnodes by node). */
void nl_sample_sum_add(struct nl_sample_sum *a, const struct nl_sample *b,
		       int nnodes);
/* The sum as a sample: its first nnodes by node (the others untouched). */
void nl_sample_sum_get(const struct nl_sample_sum *a, int nnodes,
		       struct nl_sample *out);
/* Empty again (cpu -1); the first nnodes by node. */
void nl_sample_sum_clear(struct nl_sample_sum *a, int nnodes);

#endif
