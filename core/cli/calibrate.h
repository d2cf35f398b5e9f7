/*
 * numalot calibrate (docs/real-node.md, "Calibrating the model"): the
 * measurements of cmd_calibrate.c, printed and written as a machine file
 * by calibrate_out.c.
 */
#ifndef NUMALOT_CLI_CALIBRATE_H
#define NUMALOT_CLI_CALIBRATE_H

#include <stddef.h>

#include "sample.h"

struct nl_topology;

/* Every figure by (source node, memory node), numalot's node numbers; a
 * source without CPUs has none (its row stays < 0). */
struct nl_calib {
	const struct nl_topology *t;
	double seconds; /* the budget asked for */
	double took_s;	/* wall time in all */
	size_t buffer;	/* bytes of each buffer */
	double lat_ns[NL_MAX_NODES][NL_MAX_NODES];
	double bw1[NL_MAX_NODES][NL_MAX_NODES];	  /* bytes/s, one thread */
	double bwall[NL_MAX_NODES][NL_MAX_NODES]; /* bytes/s, every core */
	double on_node_min; /* least share of pages found where asked */
	int cores[NL_MAX_NODES];
	unsigned slit[NL_MAX_NODES][NL_MAX_NODES]; /* the firmware's */
	int slit_from_os;
	int smt; /* 1 measured, 0 no SMT here, -1 failed */
	double smt_yield, smt_alone_ops_per_s;
	char smt_why[160];
};

/* The text report on stdout. */
void nl_calib_print(const struct nl_calib *c);
/* The machine file (docs/scenarios.md, "Machine files"); 0 or -1 (the
 * error printed). */
int nl_calib_write(const struct nl_calib *c, const char *path);

#endif
