/* numalot: machine topology (CPUs, NUMA nodes, distances) from hwloc. */
#ifndef NUMALOT_TOPOLOGY_H
#define NUMALOT_TOPOLOGY_H

#include <hwloc.h>
#include <stddef.h>

/* numalot handles machines of up to this many NUMA nodes. */
#define NL_MAX_NODES 64

/*
 * CPUs are numbered densely inside numalot: 0 .. ncpus-1 in hwloc's logical
 * order of the allowed PUs. cpu_os[] gives the number the operating system
 * uses (what taskset and /proc show); reports print that one. NUMA nodes are
 * numbered 0 .. nnodes-1 in hwloc's logical order; node_os[] likewise.
 */
struct nl_topology {
	hwloc_topology_t hw; /* owned */
	int ncpus;
	int nnodes;
	int ncores;
	int *cpu_os;	       /* [ncpus] OS index of each CPU */
	int *cpu_node;	       /* [ncpus] NUMA node of each CPU (-1: none) */
	int *cpu_core;	       /* [ncpus] core index; SMT siblings share it */
	int *node_os;	       /* [nnodes] OS index of each node */
	int *node_ncpus;       /* [nnodes] CPUs on each node (0: memory-only) */
	unsigned *distance;    /* [nnodes * nnodes] SLIT-style, 10 = local */
	int distances_from_os; /* 1: read from the machine; 0: 10/21 default */
	char *source;	       /* description of where it came from */
};

/*
 * Load a topology. spec is one of:
 *   NULL, "" or "live"     this machine;
 *   "xml:PATH" or a path ending in ".xml"  an hwloc XML file;
 *   "synthetic:DESC" or an hwloc synthetic description ("numa:2 core:4 pu:1").
 * Returns 0, or a negative errno value; on failure err (if not NULL, of
 * errlen bytes) says why.
 */
int nl_topology_load(const char *spec, struct nl_topology **out, char *err,
		     size_t errlen);

/*
 * Replace the distance matrix (nnodes * nnodes values, row-major). Returns 0
 * or -EINVAL when a value is below 10 or the diagonal is not the minimum.
 */
int nl_topology_set_distances(struct nl_topology *t, const unsigned *values);

void nl_topology_free(struct nl_topology *t);

static inline unsigned nl_topology_distance(const struct nl_topology *t,
					    int from, int to)
{
	return t->distance[from * t->nnodes + to];
}

/* Dense CPU index of an OS CPU number, or -1. */
int nl_topology_cpu_from_os(const struct nl_topology *t, int os_index);

/*
 * Parse a CPU list in OS numbers ("0-3,8") into a bitmap of dense CPU
 * indices. Returns 0 or -EINVAL (bad syntax, or a CPU this topology lacks).
 */
int nl_topology_parse_cpulist(const struct nl_topology *t, const char *list,
			      hwloc_bitmap_t out);

#endif
