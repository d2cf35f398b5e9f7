/*
 * numalot calibrate: the report and the machine file (docs/scenarios.md,
 * "Machine files"; the mapping onto the model's constants:
 * docs/real-node.md, "Calibrating the model").
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "calibrate.h"
#include "cli.h"
#include "topology.h"
#include "version.h"

#define CMD "calibrate"

/* The model's constants from the measurements. */
struct derived {
	double local_ns;  /* mean of the diagonal */
	double node_bw;	  /* mean all-core local bandwidth */
	double link_bw;	  /* mean all-core remote bandwidth (have_remote) */
	int have_remote;  /* some source has a remote node to read */
	double smt_share; /* yield / 2 within [0.5, 1] (smt == 1) */
	int clamped;	  /* a remote latency below the local one */
	unsigned dist[NL_MAX_NODES][NL_MAX_NODES];
	/* The SLIT against the measurement over remote pairs (have_remote):
	 * remote penalties (ratio - 1), mean, and their ratio's range. */
	double slit_pen, meas_pen, over_lo, over_hi;
	int over_n; /* pairs whose measured penalty is over 1% */
};

static int has_cpus(const struct nl_calib *c, int n)
{
	return c->t->node_ncpus[n] > 0;
}

/* What the node (or the link) delivered at the most: all cores, or one
 * thread when that did better (other work on the node's cores). */
static double most(const struct nl_calib *c, int i, int j)
{
	return c->bwall[i][j] > c->bw1[i][j] ? c->bwall[i][j] : c->bw1[i][j];
}

static void derive(const struct nl_calib *c, struct derived *d)
{
	const struct nl_topology *t = c->t;
	int nl = 0, nr = 0;

	memset(d, 0, sizeof(*d));
	d->over_lo = INFINITY;
	for (int i = 0; i < t->nnodes; i++) {
		if (!has_cpus(c, i))
			continue;
		d->local_ns += c->lat_ns[i][i];
		d->node_bw += most(c, i, i);
		nl++;
		for (int j = 0; j < t->nnodes; j++) {
			double ratio = c->lat_ns[i][j] / c->lat_ns[i][i];
			double sp = (double)c->slit[i][j] / c->slit[i][i] - 1;
			if (j == i)
				continue;
			d->link_bw += most(c, i, j);
			d->slit_pen += sp;
			d->meas_pen += ratio - 1;
			nr++;
			if (ratio - 1 > 0.01) {
				double o = sp / (ratio - 1);
				d->over_n++;
				d->over_lo = o < d->over_lo ? o : d->over_lo;
				d->over_hi = o > d->over_hi ? o : d->over_hi;
			}
		}
	}
	d->local_ns /= nl;
	d->node_bw /= nl;
	d->have_remote = nr > 0;
	if (nr) {
		d->link_bw /= nr;
		d->slit_pen /= nr;
		d->meas_pen /= nr;
	}
	if (c->smt == 1) {
		d->smt_share = c->smt_yield / 2;
		d->smt_share = d->smt_share < 0.5 ? 0.5
			       : d->smt_share > 1 ? 1
						  : d->smt_share;
	}
	/* Distances: the measured latency in SLIT units, 10 x latency over
	 * the row's local one (the model: latency = local x d / 10 with
	 * remote_factor 1). A node without CPUs keeps the firmware's row. */
	for (int i = 0; i < t->nnodes; i++)
		for (int j = 0; j < t->nnodes; j++) {
			double v =
				has_cpus(c, i)
					? 10 * c->lat_ns[i][j] / c->lat_ns[i][i]
					: 10.0 * c->slit[i][j] / c->slit[i][i];
			long r = lround(v);
			if (r < 10) {
				d->clamped = 1;
				r = 10;
			}
			d->dist[i][j] = (unsigned)(r > 1000 ? 1000 : r);
		}
}

static void print_matrix(const struct nl_calib *c, const char *title,
			 const double (*m)[NL_MAX_NODES], double scale,
			 int decimals)
{
	const struct nl_topology *t = c->t;

	printf("\n%s\n%10s", title, "");
	for (int j = 0; j < t->nnodes; j++)
		printf("  node %-3d", t->node_os[j]);
	printf("\n");
	for (int i = 0; i < t->nnodes; i++) {
		if (!has_cpus(c, i))
			continue;
		printf("  node %-3d", t->node_os[i]);
		for (int j = 0; j < t->nnodes; j++) {
			printf("  %8.*f", decimals, m[i][j] / scale);
		}
		printf("\n");
	}
}

static void print_slit(const struct nl_calib *c, const struct derived *d)
{
	const struct nl_topology *t = c->t;

	printf("\nmeasured latency in SLIT units (10 x latency / the row's "
	       "local) / the firmware's SLIT%s:\n%10s",
	       c->slit_from_os ? "" : " (none given: numalot's 10/21)", "");
	for (int j = 0; j < t->nnodes; j++)
		printf("  node %-6d", t->node_os[j]);
	printf("\n");
	for (int i = 0; i < t->nnodes; i++) {
		if (!has_cpus(c, i))
			continue;
		printf("  node %-3d", t->node_os[i]);
		for (int j = 0; j < t->nnodes; j++)
			printf("  %5.1f / %-3u",
			       10 * c->lat_ns[i][j] / c->lat_ns[i][i],
			       c->slit[i][j]);
		printf("\n");
	}
	if (!d->have_remote) {
		printf("SLIT against measurement: one NUMA node, nothing "
		       "remote "
		       "to measure: no remote latency, no link bandwidth, and "
		       "no remote distance to compare (the machine file keeps "
		       "the model's link_bandwidth_bytes_per_s)\n");
		return;
	}
	printf("SLIT against measurement: remote penalty (remote / local - "
	       "1) %+.0f%% by the SLIT, %+.0f%% measured (means over the "
	       "remote pairs)",
	       100 * d->slit_pen, 100 * d->meas_pen);
	if (d->over_n == 0)
		printf(": no pair is measurably slower remote than local "
		       "(under "
		       "1%%): an emulated machine (QEMU TCG) or one whose "
		       "nodes are one memory\n");
	else
		printf(": the SLIT's penalty over the measured one %.2gx to "
		       "%.2gx by pair (%d pair%s measurably slower remote; "
		       "above 1: the SLIT overstates it)\n",
		       d->over_lo, d->over_hi, d->over_n, nl_s(d->over_n));
}

void nl_calib_print(const struct nl_calib *c)
{
	const struct nl_topology *t = c->t;
	struct derived d;
	char title[160];
	int same = 1;

	derive(c, &d);
	printf("numalot calibrate: %d NUMA node%s, %d core%s, %d CPU%s; %.1f "
	       "s, buffers of %zu MiB\n",
	       t->nnodes, nl_s(t->nnodes), t->ncores, nl_s(t->ncores), t->ncpus,
	       nl_s(t->ncpus), c->took_s, c->buffer >> 20);
	print_matrix(c,
		     "load latency (ns), a dependent chase from the CPUs of "
		     "node (row) to memory on node (column):",
		     c->lat_ns, 1, 1);
	print_matrix(c, "read bandwidth (GB/s), one thread:", c->bw1, 1e9, 2);
	for (int n = 1; n < t->nnodes; n++)
		same &= c->cores[n] == c->cores[0] || !has_cpus(c, n);
	if (same)
		snprintf(title, sizeof(title),
			 "read bandwidth (GB/s), all %d core%s of the source "
			 "node:",
			 c->cores[0], nl_s(c->cores[0]));
	else
		snprintf(title, sizeof(title),
			 "read bandwidth (GB/s), all the cores of the source "
			 "node:");
	print_matrix(c, title, c->bwall, 1e9, 2);
	print_slit(c, &d);
	if (c->smt == 1)
		printf("SMT: two hardware threads of one core yield %.2f "
		       "cores (smt_share %.2f)\n",
		       c->smt_yield, d.smt_share);
	else
		printf("SMT: not measured: %s (the machine file keeps the "
		       "model's smt_share)\n",
		       c->smt_why);
	if (c->on_node_min < 0.9)
		printf("pages: only %.0f%% of one buffer's sampled pages were "
		       "on the node asked for (memory short there?): its "
		       "figures mix nodes\n",
		       100 * c->on_node_min);
	if (d.clamped)
		printf("distances: a remote latency measured below the local "
		       "one was written as 10 (a distance is at least the "
		       "local one)\n");
}

/* The topology as a synthetic description that loads back into the same
 * CPUs and nodes, else NULL. */
static char *synthetic_of(const struct nl_topology *t)
{
	char buf[2048], err[256];
	struct nl_topology *back = NULL;
	int same;

	if (hwloc_topology_export_synthetic(t->hw, buf, sizeof(buf), 0) < 0 ||
	    nl_topology_load(buf, &back, err, sizeof(err)) < 0)
		return NULL;
	same = back->nnodes == t->nnodes && back->ncpus == t->ncpus &&
	       back->ncores == t->ncores;
	for (int i = 0; same && i < t->ncpus; i++)
		same = back->cpu_os[i] == t->cpu_os[i] &&
		       back->cpu_node[i] == t->cpu_node[i] &&
		       back->cpu_core[i] == t->cpu_core[i];
	for (int n = 0; same && n < t->nnodes; n++)
		same = back->node_os[n] == t->node_os[n];
	nl_topology_free(back);
	return same ? strdup(buf) : NULL;
}

/* "topology": the synthetic description, else an XML file beside path
 * (PATH without .json, then -topology.xml), named relative to it. */
static struct json_object *topology_json(const struct nl_calib *c,
					 const char *path)
{
	char *syn = synthetic_of(c->t), xml[4096];
	const char *base;
	size_t n = strlen(path);
	struct json_object *o;

	if (syn) {
		o = json_object_new_string(syn);
		free(syn);
		return o;
	}
	if (n > 5 && !strcmp(path + n - 5, ".json"))
		n -= 5;
	snprintf(xml, sizeof(xml), "%.*s-topology.xml", (int)n, path);
	if (hwloc_topology_export_xml(c->t->hw, xml, 0) < 0) {
		nl_cli_error(CMD, "cannot write %s: %m", xml);
		return NULL;
	}
	base = strrchr(xml, '/');
	return json_object_new_string(base ? base + 1 : xml);
}

static struct json_object *matrix_json(const struct nl_calib *c,
				       const double (*m)[NL_MAX_NODES])
{
	struct json_object *rows = json_object_new_array();

	for (int i = 0; i < c->t->nnodes; i++) {
		struct json_object *r = json_object_new_array();
		for (int j = 0; j < c->t->nnodes; j++)
			json_object_array_add(
				r, has_cpus(c, i)
					   ? json_object_new_double(m[i][j])
					   : NULL);
		json_object_array_add(rows, r);
	}
	return rows;
}

static struct json_object *umatrix_json(const struct nl_calib *c,
					const unsigned (*m)[NL_MAX_NODES])
{
	struct json_object *rows = json_object_new_array();

	for (int i = 0; i < c->t->nnodes; i++) {
		struct json_object *r = json_object_new_array();
		for (int j = 0; j < c->t->nnodes; j++)
			json_object_array_add(
				r, json_object_new_int((int)m[i][j]));
		json_object_array_add(rows, r);
	}
	return rows;
}

#define ADD(o, k, v) json_object_object_add((o), (k), (v))
#define STR(s) json_object_new_string(s)
#define NUM(x) json_object_new_double(x)

static struct json_object *measured_json(const struct nl_calib *c,
					 const struct derived *d)
{
	struct json_object *m = json_object_new_object();
	struct json_object *nodes = json_object_new_array();
	struct json_object *cores = json_object_new_array();
	struct json_object *smt = json_object_new_object();
	char host[256] = "", date[64] = "";
	time_t now = time(NULL);

	gethostname(host, sizeof(host) - 1);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	ADD(m, "host", STR(host));
	ADD(m, "date", STR(date));
	ADD(m, "numalot", STR(NUMALOT_VERSION));
	ADD(m, "seconds", NUM(c->took_s));
	ADD(m, "buffer_bytes", json_object_new_int64((int64_t)c->buffer));
	for (int n = 0; n < c->t->nnodes; n++) {
		json_object_array_add(nodes,
				      json_object_new_int(c->t->node_os[n]));
		json_object_array_add(cores, json_object_new_int(c->cores[n]));
	}
	ADD(m, "nodes", nodes);
	ADD(m, "cores", cores);
	ADD(m, "latency_ns", matrix_json(c, c->lat_ns));
	ADD(m, "bandwidth_one_thread_bytes_per_s", matrix_json(c, c->bw1));
	ADD(m, "bandwidth_all_cores_bytes_per_s", matrix_json(c, c->bwall));
	ADD(m, "firmware_slit", umatrix_json(c, c->slit));
	ADD(m, "slit_from_firmware", json_object_new_boolean(c->slit_from_os));
	if (d->have_remote) {
		ADD(m, "slit_remote_penalty", NUM(d->slit_pen));
		ADD(m, "measured_remote_penalty", NUM(d->meas_pen));
	} else {
		ADD(m, "remote",
		    STR("one NUMA node: nothing remote to "
			"measure"));
	}
	ADD(m, "pages_on_node_min", NUM(c->on_node_min));
	if (c->smt == 1) {
		ADD(smt, "yield_cores", NUM(c->smt_yield));
		ADD(smt, "alone_ops_per_s", NUM(c->smt_alone_ops_per_s));
	} else {
		ADD(smt, "not_measured", STR(c->smt_why));
	}
	ADD(m, "smt", smt);
	return m;
}

/* The model's constants that no measurement here gives, and why. */
static struct json_object *not_measured_json(const struct nl_calib *c,
					     const struct derived *d)
{
	struct json_object *o = json_object_new_object();

	ADD(o, "peak_ops_per_s",
	    STR("the model's op is a unit of its workload kinds, not an "
		"instruction: the default is kept"));
	ADD(o, "contention_k, rho_cap",
	    STR("would need latency under load (a chase beside readers): "
		"not measured"));
	ADD(o,
	    "page_migration_bytes_per_s, page_copy_bytes_per_s, "
	    "page_move_bytes_per_s",
	    STR("the kernel's page copies: not measured"));
	ADD(o, "numa_scan_*, numa_fault_cost_s, numa_imbalance_share",
	    STR("the kernel's NUMA balancing settings, not the machine's"));
	if (!d->have_remote)
		ADD(o, "link_bandwidth_bytes_per_s, distances",
		    STR("one NUMA node: nothing remote to measure"));
	if (c->smt != 1)
		ADD(o, "smt_share", STR(c->smt_why));
	return o;
}

int nl_calib_write(const struct nl_calib *c, const char *path)
{
	struct json_object *root = json_object_new_object();
	struct json_object *mach = json_object_new_object();
	struct json_object *topo;
	struct derived d;
	char desc[512];
	int rc;

	derive(c, &d);
	topo = topology_json(c, path);
	if (!topo) {
		json_object_put(root);
		json_object_put(mach);
		return -1;
	}
	ADD(root, "numalot_machine", json_object_new_int(1));
	snprintf(desc, sizeof(desc),
		 "measured by numalot calibrate %s (%.0f s); "
		 "docs/real-node.md, \"Calibrating the model\"",
		 NUMALOT_VERSION, c->took_s);
	ADD(root, "description", STR(desc));
	ADD(mach, "topology", topo);
	ADD(mach, "distances", umatrix_json(c, d.dist));
	ADD(mach, "remote_factor", json_object_new_int(1));
	ADD(mach, "local_latency_ns", NUM(d.local_ns));
	ADD(mach, "node_bandwidth_bytes_per_s", NUM(d.node_bw));
	if (d.have_remote)
		ADD(mach, "link_bandwidth_bytes_per_s", NUM(d.link_bw));
	if (c->smt == 1)
		ADD(mach, "smt_share", NUM(d.smt_share));
	ADD(root, "machine", mach);
	ADD(root, "measured", measured_json(c, &d));
	ADD(root, "not_measured", not_measured_json(c, &d));
	rc = nl_cli_write_json(CMD, path, root);
	json_object_put(root);
	if (rc < 0)
		return rc;
	printf("\nmachine file: %s (numalot sim SCENARIO --machine=%s):\n"
	       "  local_latency_ns %.1f, node_bandwidth_bytes_per_s %.3g",
	       path, path, d.local_ns, d.node_bw);
	if (d.have_remote)
		printf(", link_bandwidth_bytes_per_s %.3g", d.link_bw);
	if (c->smt == 1)
		printf(", smt_share %.2f", d.smt_share);
	printf(",\n  distances from the measured latency (remote_factor 1)\n");
	return rc;
}
