/*
 * numalot calibrate: measure this node's latency, bandwidth and SMT yield
 * and write them as a machine file the model takes (docs/real-node.md,
 * "Calibrating the model"). The measurements are in core/real/calib.c.
 */
#include <errno.h>
#include <math.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "calibrate.h"
#include "cli.h"
#include "topology.h"
#include "util.h"

#define CMD "calibrate"
#define MIB ((size_t)1 << 20)
#define DEFAULT_SECONDS 60
#define QUICK_SECONDS 4
/* The buffer: at least 64 MiB (and 4 x the largest cache), so that the
 * chase misses the caches; at most 1 GiB and a quarter of the free memory
 * of the node with least (other work keeps running). --quick: 16 MiB. */
#define MIN_BUFFER (64 * MIB)
#define MAX_BUFFER (1024 * MIB)
#define QUICK_BUFFER (16 * MIB)

struct cal_args {
	double seconds;
	size_t buffer; /* 0: chosen */
	const char *output;
};

static int parse_args(int argc, char **argv, struct cal_args *a)
{
	static const struct option lo[] = {
		{"seconds", required_argument, NULL, 's'},
		{"quick", no_argument, NULL, 'q'},
		{"buffer", required_argument, NULL, 'b'},
		{"output", required_argument, NULL, 'o'},
		NL_ARGS_HELP,
		{0}};
	char *end;
	double v;
	int c;

	a->seconds = DEFAULT_SECONDS;
	a->output = "numalot-machine.json";
	nl_args_start();
	while ((c = nl_args_next(CMD, argc, argv, "ho:", lo)) != -1) {
		switch (c) {
		case 's':
			v = strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 1 && v <= 3600)) {
				nl_cli_error(CMD,
					     "--seconds wants 1 to 3600, not "
					     "\"%s\"",
					     optarg);
				return -1;
			}
			a->seconds = v;
			break;
		case 'q':
			a->seconds = QUICK_SECONDS;
			if (!a->buffer)
				a->buffer = QUICK_BUFFER;
			break;
		case 'b':
			v = strtod(optarg, &end);
			if (!*optarg || *end || !(v >= 1 && v <= 65536)) {
				nl_cli_error(CMD,
					     "--buffer wants MiB from 1 to "
					     "65536, not \"%s\"",
					     optarg);
				return -1;
			}
			a->buffer = (size_t)v * MIB;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'h':
			nl_cli_usage(CMD, stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		nl_cli_error(CMD, "takes no operand (got \"%s\")",
			     argv[optind]);
		return -1;
	}
	return 0;
}

/* The largest cache of the machine, in bytes. */
static size_t largest_cache(const struct nl_topology *t)
{
	size_t best = 0;
	int depth = hwloc_topology_get_depth(t->hw);

	for (int d = 0; d < depth; d++) {
		hwloc_obj_t o = hwloc_get_obj_by_depth(t->hw, d, 0);
		if (o && hwloc_obj_type_is_cache(o->type) &&
		    o->attr->cache.size > best)
			best = o->attr->cache.size;
	}
	return best;
}

/* The default buffer, or -1 when even 1 MiB cannot be spared. */
static size_t choose_buffer(const struct nl_topology *t, size_t asked)
{
	size_t b = asked ? asked : 4 * largest_cache(t);
	long long least = -1;

	if (!asked && b < MIN_BUFFER)
		b = MIN_BUFFER;
	if (!asked && b > MAX_BUFFER)
		b = MAX_BUFFER;
	for (int n = 0; n < t->nnodes && numa_available() >= 0; n++) {
		long long free_b = 0;
		if (numa_node_size64(t->node_os[n], &free_b) >= 0 &&
		    (least < 0 || free_b < least))
			least = free_b;
	}
	if (least > 0 && b > (size_t)least / 4)
		b = (size_t)least / 4 / MIB * MIB;
	return b < MIB ? 0 : b;
}

static void read_slit(struct nl_calib *c)
{
	const struct nl_topology *t = c->t;

	c->slit_from_os = numa_available() >= 0 || t->distances_from_os;
	for (int i = 0; i < t->nnodes; i++)
		for (int j = 0; j < t->nnodes; j++) {
			int d = numa_available() >= 0
					? numa_distance(t->node_os[i],
							t->node_os[j])
					: 0;
			c->slit[i][j] = d > 0 ? (unsigned)d
					      : nl_topology_distance(t, i, j);
		}
}

struct plan {
	struct nl_calib *c;
	int done, total;
	double end; /* the budget's end (monotonic s) */
};

/* The time the next measurement may take: what is left, shared among the
 * measurements left (set-up, not measured, eats into it). */
static double next_slot(const struct plan *p)
{
	double left = p->end - nl_mono_s();
	double s = 0.9 * left / (p->total - p->done);

	return s < 0.02 ? 0.02 : s;
}

static void progress(struct plan *p, const char *what, int i, int j,
		     const char *value)
{
	p->done++;
	fprintf(stderr, "numalot calibrate: [%d/%d] %s node %d -> %d: %s\n",
		p->done, p->total, what, p->c->t->node_os[i],
		p->c->t->node_os[j], value);
}

/* One kind of measurement over every (source with CPUs, memory) pair. */
static int measure_pairs(struct plan *p, int kind)
{
	static const char *const what[] = {"latency", "bandwidth 1 thread",
					   "bandwidth all cores"};
	struct nl_calib *c = p->c;
	const struct nl_topology *t = c->t;
	char err[256], val[64];

	for (int i = 0; i < t->nnodes; i++) {
		if (!t->node_ncpus[i])
			continue;
		for (int j = 0; j < t->nnodes; j++) {
			struct nl_calib_result r;
			int rc;

			if (kind == 0)
				rc = nl_calib_latency(t, i, j, c->buffer,
						      next_slot(p), &r, err,
						      sizeof(err));
			else
				rc = nl_calib_bandwidth(
					t, i, j, kind == 1 ? 1 : c->cores[i],
					c->buffer, next_slot(p), &r, err,
					sizeof(err));
			if (rc < 0) {
				nl_cli_error(CMD, "%s from node %d to %d: %s",
					     what[kind], t->node_os[i],
					     t->node_os[j], err);
				return -1;
			}
			if (r.on_node >= 0 && r.on_node < c->on_node_min)
				c->on_node_min = r.on_node;
			if (kind == 0) {
				c->lat_ns[i][j] = r.value;
				snprintf(val, sizeof(val), "%.1f ns", r.value);
			} else {
				(kind == 1 ? c->bw1 : c->bwall)[i][j] = r.value;
				snprintf(val, sizeof(val), "%.2f GB/s",
					 r.value / 1e9);
			}
			progress(p, what[kind], i, j, val);
		}
	}
	return 0;
}

int nl_cmd_calibrate(int argc, char **argv)
{
	struct cal_args a = {0};
	struct nl_calib *c;
	struct nl_topology *t;
	struct plan p = {0};
	char err[512];
	int rc, srcs = 0, smt_possible = 0, status = NL_EXIT_FAIL;
	double t0 = nl_mono_s();

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc > 0 ? NL_EXIT_OK : NL_EXIT_USAGE;
	if (nl_topology_load("live", &t, err, sizeof(err)) < 0) {
		nl_cli_error(CMD, "%s", err);
		return NL_EXIT_FAIL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		nl_topology_free(t);
		return NL_EXIT_FAIL;
	}
	c->t = t;
	c->seconds = a.seconds;
	c->on_node_min = 1;
	c->buffer = choose_buffer(t, a.buffer);
	if (t->nnodes > NL_MAX_NODES || !c->buffer) {
		nl_cli_error(CMD, "%s",
			     t->nnodes > NL_MAX_NODES
				     ? "more NUMA nodes than numalot handles"
				     : "cannot spare 1 MiB of memory (a "
				       "quarter of the free memory of the "
				       "node with least)");
		goto out;
	}
	read_slit(c);
	for (int n = 0; n < t->nnodes; n++) {
		c->cores[n] = nl_calib_node_cores(t, n);
		srcs += t->node_ncpus[n] > 0;
	}
	smt_possible = t->ncpus > t->ncores;
	p.c = c;
	p.total = 3 * srcs * t->nnodes + smt_possible;
	p.end = t0 + a.seconds;
	fprintf(stderr,
		"numalot calibrate: %d measurements in about %.0f s, buffers "
		"of %zu MiB (memory at most %zu MiB)\n",
		p.total, a.seconds, c->buffer / MIB,
		(c->buffer + c->buffer / 16) / MIB + 1);
	for (int kind = 0; kind < 3; kind++)
		if (measure_pairs(&p, kind) < 0)
			goto out;
	if (smt_possible) {
		/* Each of the two runs (alone, paired) takes half a slot. */
		rc = nl_calib_smt(t, next_slot(&p) / 2, &c->smt_yield,
				  &c->smt_alone_ops_per_s, c->smt_why,
				  sizeof(c->smt_why));
		c->smt = rc == 0 ? 1 : -1;
		p.done++;
		fprintf(stderr,
			"numalot calibrate: [%d/%d] SMT yield: ", p.done,
			p.total);
		if (rc == 0)
			fprintf(stderr, "%.2f cores\n", c->smt_yield);
		else
			fprintf(stderr, "%s\n", c->smt_why);
	} else {
		snprintf(c->smt_why, sizeof(c->smt_why),
			 "no core has two hardware threads (no SMT)");
	}
	c->took_s = nl_mono_s() - t0;
	nl_calib_print(c);
	status = nl_calib_write(c, a.output) < 0 ? NL_EXIT_FAIL : NL_EXIT_OK;
out:
	free(c);
	nl_topology_free(t);
	return status;
}
