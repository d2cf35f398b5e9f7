/*
 * numalot: what random.c (the machine, the model constants) and
 * random_procs.c (the processes) share while drawing one scenario.
 */
#ifndef NUMALOT_SIM_RANDOM_PRIV_H
#define NUMALOT_SIM_RANDOM_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "topology.h"

struct json_object;

/* The machines drawn have 2 to 8 NUMA nodes. */
#define NL_RGEN_MAX_NODES 8

struct nl_rgen {
	struct nl_rng r;
	uint64_t seed;
	int index;
	/* The machine: spec as written, topology as hwloc loads it. */
	char spec[96];
	int nnodes, cores, smt;
	int per_group; /* nodes per package or socket (0: one level) */
	int memonly;   /* every package has a CPU-less node */
	struct nl_topology *topo;
	unsigned dist[NL_RGEN_MAX_NODES * NL_RGEN_MAX_NODES];
	double peak_scale; /* drawn peak_ops_per_s / the default */
	/* What was drawn: a tag for the name, words for the description. */
	char tag[64];
	char desc[1536];
	size_t dlen;
	const char *klass;
};

/* Uniform integer in [lo, hi]; uniform double in [lo, hi); p's chance. */
int nl_rgen_int(struct nl_rgen *g, int lo, int hi);
double nl_rgen_real(struct nl_rgen *g, double lo, double hi);
int nl_rgen_chance(struct nl_rgen *g, double p);
/* A JSON number written with that many significant digits; the value is
 * what the text reads back as. */
struct json_object *nl_rgen_num(double v, int digits);
/* Append to the description. */
void nl_rgen_say(struct nl_rgen *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Node masks (bit n: node n): the k-th node of m (from 0), one node of m
 * at random, k distinct nodes of m at random (all of them if m has
 * fewer), and m as a list ("0-2,5"). */
int nl_rgen_nth(unsigned long long m, int k);
int nl_rgen_node(struct nl_rgen *g, unsigned long long m);
unsigned long long nl_rgen_nodes(struct nl_rgen *g, unsigned long long m,
				 int k);
char *nl_rgen_node_list(unsigned long long m, char *buf, size_t len);

/* The "processes" array into root; 0 or -ENOMEM. */
int nl_rgen_processes(struct nl_rgen *g, struct json_object *root);

#endif
