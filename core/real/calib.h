/*
 * numalot calibrate's measurements on the live node (docs/real-node.md,
 * "Calibrating the model"): load latency by a dependent pointer chase, read
 * bandwidth, and the yield of an SMT sibling. Each runs on threads bound
 * with hwloc over a buffer placed with libnuma, for a given time.
 */
#ifndef NUMALOT_CALIB_H
#define NUMALOT_CALIB_H

#include <stddef.h>

struct nl_topology;

/* What one measurement found. */
struct nl_calib_result {
	double value;	     /* ns per load, bytes/s, or ops/s */
	double seconds;	     /* measured for (set-up excluded) */
	double on_node;	     /* share of the sampled pages found on the node
				asked for (1: all; < 0: not known) */
	unsigned long count; /* loads, bytes or ops done */
};

/*
 * Latency of one load from the CPUs of node src to memory on node dst
 * (numalot's dense node numbers): a random cyclic chase through bytes of
 * memory, one cache line a step, for about seconds. 0, or a negative errno
 * with err saying why (a node without CPUs, memory that cannot be had).
 */
int nl_calib_latency(const struct nl_topology *t, int src, int dst,
		     size_t bytes, double seconds, struct nl_calib_result *out,
		     char *err, size_t errlen);

/*
 * Read bandwidth from node src's CPUs to memory on node dst: nthreads
 * threads (1, or the node's cores: each bound to its own core) read their
 * share of bytes, again and again, for about seconds.
 */
int nl_calib_bandwidth(const struct nl_topology *t, int src, int dst,
		       int nthreads, size_t bytes, double seconds,
		       struct nl_calib_result *out, char *err, size_t errlen);

/* Cores of node n (a core is counted on the node of its first CPU). */
int nl_calib_node_cores(const struct nl_topology *t, int n);

/*
 * The yield of an SMT sibling: a compute loop alone on one hardware thread
 * of a core, then on two of the same core at once, seconds each. *yield is
 * the pair's throughput over the one's (1 to 2); *alone_ops_per_s the
 * loop's rate alone. -ENOTSUP (err says so) when no core has two hardware
 * threads.
 */
int nl_calib_smt(const struct nl_topology *t, double seconds, double *yield,
		 double *alone_ops_per_s, char *err, size_t errlen);

#endif
