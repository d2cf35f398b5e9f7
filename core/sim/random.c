/*
 * numalot: seeded random scenarios (random.h, docs/scenarios.md "Random
 * scenarios"): the machine (topology, distances, perturbed model
 * constants) here, the processes in random_procs.c.
 */
#include "random.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "model.h"
#include "random_priv.h"
#include "scenario.h"
#include "util.h"

int nl_rgen_int(struct nl_rgen *g, int lo, int hi)
{
	return lo + (int)nl_rng_below(&g->r, (uint64_t)(hi - lo + 1));
}

double nl_rgen_real(struct nl_rgen *g, double lo, double hi)
{
	return lo + (hi - lo) * nl_rng_uniform(&g->r);
}

int nl_rgen_chance(struct nl_rgen *g, double p)
{
	return nl_rng_uniform(&g->r) < p;
}

struct json_object *nl_rgen_num(double v, int digits)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.*g", digits, v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

void nl_rgen_say(struct nl_rgen *g, const char *fmt, ...)
{
	va_list ap;

	if (g->dlen >= sizeof(g->desc))
		return;
	va_start(ap, fmt);
	g->dlen += (size_t)vsnprintf(g->desc + g->dlen,
				     sizeof(g->desc) - g->dlen, fmt, ap);
	va_end(ap);
}

int nl_rgen_nth(unsigned long long m, int k)
{
	for (int i = 0; i < 64; i++)
		if ((m >> i & 1) && k-- == 0)
			return i;
	return -1;
}

int nl_rgen_node(struct nl_rgen *g, unsigned long long m)
{
	return nl_rgen_nth(m, nl_rgen_int(g, 0, __builtin_popcountll(m) - 1));
}

unsigned long long nl_rgen_nodes(struct nl_rgen *g, unsigned long long m, int k)
{
	unsigned long long out = 0;

	while (k-- > 0 && m & ~out)
		out |= 1ULL << nl_rgen_node(g, m & ~out);
	return out;
}

char *nl_rgen_node_list(unsigned long long m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < 64 && n < len; i++) {
		int j = i;
		if (!(m >> i & 1))
			continue;
		while (j + 1 < 64 && m >> (j + 1) & 1)
			j++;
		if (j > i)
			n += (size_t)snprintf(buf + n, len - n, "%s%d-%d",
					      n ? "," : "", i, j);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d",
					      n ? "," : "", i);
		i = j;
	}
	return buf;
}

/*
 * The topology: flat ("numa:N"), packages of nodes ("pack:P numa:K"), or
 * packages each with a second, CPU-less node ("pack:P [numa] [numa]":
 * both nodes are local to the package's CPUs, and numalot's topology
 * gives every CPU to the first, so the second is memory-only, as a CXL
 * or HBM node is). SMT siblings are usually numbered apart, as the BIOS
 * of x86 servers numbers them (core c's PUs are c, c + cores, ...).
 */
static void draw_topology(struct nl_rgen *g)
{
	int shape = nl_rgen_int(g, 0, 99), s = nl_rgen_int(g, 0, 99);
	int npack = 1, per = 1, apart, total, n;
	char pu[48];

	g->smt = s < 45 ? 1 : s < 85 ? 2 : 4;
	if (shape < 50) {
		g->nnodes = nl_rgen_int(g, 2, 8);
		n = snprintf(g->spec, sizeof(g->spec), "numa:%d", g->nnodes);
	} else if (shape < 85) {
		npack = nl_rgen_chance(g, 0.6) ? 2 : 4;
		per = nl_rgen_int(g, 1, npack == 2 ? 4 : 2);
		g->nnodes = npack * per;
		g->per_group = per > 1 ? per : 0;
		n = snprintf(g->spec, sizeof(g->spec), "pack:%d numa:%d", npack,
			     per);
	} else {
		npack = nl_rgen_int(g, 1, 4);
		g->nnodes = 2 * npack;
		g->per_group = 2;
		g->memonly = 1;
		n = snprintf(g->spec, sizeof(g->spec), "pack:%d [numa] [numa]",
			     npack);
	}
	/* Cores per CPU node; with SMT-4 at most 8, so that a machine has
	 * at most 256 hardware threads and a bench stays short. */
	g->cores = nl_rgen_int(g, 2, g->smt == 4 ? 8 : 16);
	total = (g->memonly ? npack : g->nnodes) * g->cores;
	apart = g->smt > 1 && nl_rgen_chance(g, 0.8);
	if (apart)
		snprintf(pu, sizeof(pu), "pu:%d(indexes=%d*%d:1*%d)", g->smt,
			 g->smt, total, g->smt);
	else
		snprintf(pu, sizeof(pu), "pu:%d", g->smt);
	snprintf(g->spec + n, sizeof(g->spec) - (size_t)n, " core:%d %s",
		 g->cores, pu);
	if (g->memonly)
		nl_rgen_say(g,
			    "%d package%s, each a node of %d cores and a "
			    "memory-only node",
			    npack, npack > 1 ? "s" : "", g->cores);
	else if (g->per_group)
		nl_rgen_say(g, "%d packages x %d NUMA nodes x %d cores", npack,
			    per, g->cores);
	else
		nl_rgen_say(g, "%d NUMA nodes x %d cores", g->nnodes, g->cores);
	if (g->smt > 1)
		nl_rgen_say(g, ", SMT-%d (siblings numbered %s)", g->smt,
			    apart ? "apart" : "next to each other");
	snprintf(g->tag, sizeof(g->tag), "n%dc%d%s%s", g->nnodes, g->cores,
		 g->smt == 1   ? ""
		 : g->smt == 2 ? "t2"
			       : "t4",
		 g->memonly ? "m" : "");
}

static unsigned clamp_dist(int d)
{
	return (unsigned)(d < 11 ? 11 : d > 40 ? 40 : d);
}

/*
 * SLIT distances: 10 on the diagonal, 11 to 40 elsewhere, symmetric.
 * Two levels when the machine has groups (packages, or a flat machine cut
 * into two sockets); else every pair drawn on its own, or all alike.
 */
static void draw_distances(struct nl_rgen *g)
{
	int n = g->nnodes, per = g->per_group;
	int jitter = nl_rgen_chance(g, 0.3);

	if (!per && n >= 4 && n % 2 == 0 && nl_rgen_chance(g, 0.5))
		per = n / 2;
	int near = nl_rgen_int(g, 11, 20);
	int far = nl_rgen_int(g, near + 2 > 16 ? near + 2 : 16, 40);
	int alike = !per && nl_rgen_chance(g, 0.4);

	if (alike)
		far = nl_rgen_int(g, 11, 32);
	for (int i = 0; i < n; i++) {
		g->dist[i * n + i] = 10;
		for (int j = i + 1; j < n; j++) {
			int d;
			if (per)
				d = i / per == j / per ? near : far;
			else
				d = alike ? far : nl_rgen_int(g, 11, 40);
			if (jitter && (per || alike))
				d += nl_rgen_int(g, 0, d == near ? 2 : 4);
			g->dist[i * n + j] = g->dist[j * n + i] = clamp_dist(d);
		}
	}
	if (per)
		nl_rgen_say(g, "; distances 10/%d/%d%s (%s)", near, far,
			    jitter ? " +-" : "",
			    g->memonly ? "package/other" : "group/other");
	else if (alike)
		nl_rgen_say(g, "; distances 10/%d%s", far, jitter ? " +-" : "");
	else
		nl_rgen_say(g, "; distances drawn per pair, 11 to 40");
}

/* The matrix, a row a line when printed ("[10, 21]"). */
static struct json_object *distances_json(const struct nl_rgen *g)
{
	struct json_object *rows = json_object_new_array();

	for (int i = 0; rows && i < g->nnodes; i++) {
		struct json_object *row = json_object_new_array();
		char text[8 * NL_RGEN_MAX_NODES + 4];
		size_t n = 0;

		for (int j = 0; row && j < g->nnodes; j++) {
			unsigned d = g->dist[i * g->nnodes + j];
			json_object_array_add(row, json_object_new_int((int)d));
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "%s%u", j ? ", " : "[", d);
		}
		snprintf(text + n, sizeof(text) - n, "]");
		char *copy = strdup(text);
		if (row && copy)
			json_object_set_serializer(
				row, json_object_userdata_to_json_string, copy,
				json_object_free_userdata);
		else
			free(copy);
		json_object_array_add(rows, row);
	}
	return rows;
}

/*
 * The model constants --perturb scales (docs/machine-model.md): the
 * machine's physics and the kernel's NUMA balancing. Not the simulation's
 * numerics (tick_s, fixed_point_rounds, damping, latency_sample_period)
 * nor the counters' noise. numa_scan_period_max_s stays above
 * numa_scan_period_s: 60 x 0.1 is above 1 x 1.9.
 */
static const char *const perturbed[] = {
	"peak_ops_per_s",
	"smt_share",
	"node_bandwidth_bytes_per_s",
	"local_latency_ns",
	"remote_factor",
	"link_bandwidth_bytes_per_s",
	"contention_k",
	"rho_cap",
	"page_migration_bytes_per_s",
	"numa_scan_delay_s",
	"numa_scan_period_s",
	"numa_scan_bytes",
	"numa_scan_period_max_s",
	"numa_fault_cost_s",
	"page_copy_bytes_per_s",
	"numa_imbalance_share",
	"page_move_bytes_per_s",
};

static const struct nl_param_desc *param_desc(const char *name)
{
	for (size_t i = 0; i < nl_model_nparams; i++)
		if (strcmp(nl_model_param_descs[i].name, name) == 0)
			return &nl_model_param_descs[i];
	return NULL;
}

/* Each constant x U[1-F, 1+F], 4 digits, kept in its valid range. The
 * draws come from a stream of their own: F changes nothing else. */
static void perturb_params(struct nl_rgen *g, struct json_object *mo, double f,
			   uint64_t key)
{
	struct nl_rng r;
	char buf[40];

	nl_rng_seed(&r, key ^ 0x7065727475726221ULL);
	g->peak_scale = 1;
	if (f <= 0)
		return;
	for (size_t i = 0; i < sizeof(perturbed) / sizeof(perturbed[0]); i++) {
		const struct nl_param_desc *d = param_desc(perturbed[i]);
		double x = 1 - f + 2 * f * nl_rng_uniform(&r), v;

		if (!d)
			continue;
		snprintf(buf, sizeof(buf), "%.4g", d->def * x);
		v = strtod(buf, NULL);
		if (v > d->hi || v < d->lo || v <= 0) {
			v = v > d->hi ? d->hi : d->lo > 0 ? d->lo : d->def;
			snprintf(buf, sizeof(buf), "%.4g", v);
			v = strtod(buf, NULL);
		}
		json_object_object_add(mo, d->name,
				       json_object_new_double_s(v, buf));
		if (strcmp(d->name, "peak_ops_per_s") == 0)
			g->peak_scale = v / d->def;
	}
	nl_rgen_say(g, "; model constants scaled by U[%.2g, %.2g]", 1 - f,
		    1 + f);
}

/* The topology as hwloc loads it must be what was drawn. */
static int load_topology(struct nl_rgen *g, char *err, size_t errlen)
{
	int rc = nl_topology_load(g->spec, &g->topo, err, errlen);

	if (rc < 0)
		return rc;
	if (g->topo->nnodes != g->nnodes)
		return nl_errf(err, errlen, -EINVAL,
			       "random scenario: \"%s\" has %d NUMA nodes, "
			       "not %d",
			       g->spec, g->topo->nnodes, g->nnodes);
	if (g->topo->ncpus !=
	    g->nnodes / (g->memonly ? 2 : 1) * g->cores * g->smt)
		return nl_errf(err, errlen, -EINVAL,
			       "random scenario: \"%s\" has %d CPUs", g->spec,
			       g->topo->ncpus);
	return 0;
}

static uint64_t scenario_key(uint64_t seed, int index)
{
	return seed ^ (0xd1b54a32d192ed03ULL * ((uint64_t)index + 1));
}

static int build(struct nl_rgen *g, double perturb, struct json_object *root,
		 char *err, size_t errlen)
{
	struct json_object *mo = json_object_new_object();
	char name[128];
	int rc;

	if (!mo)
		return -ENOMEM;
	/* Placeholders keep the keys in a reader's order. */
	json_object_object_add(root, "name", NULL);
	json_object_object_add(root, "description", NULL);
	json_object_object_add(root, "class", NULL);
	json_object_object_add(root, "machine", mo);
	nl_rgen_say(g, "Random scenario %d of --seed=%" PRIu64 ": ", g->index,
		    g->seed);
	draw_topology(g);
	rc = load_topology(g, err, errlen);
	if (rc < 0)
		return rc;
	draw_distances(g);
	json_object_object_add(mo, "topology", json_object_new_string(g->spec));
	json_object_object_add(mo, "distances", distances_json(g));
	perturb_params(g, mo, perturb, scenario_key(g->seed, g->index));
	rc = nl_rgen_processes(g, root);
	if (rc < 0)
		return nl_errf(err, errlen, rc,
			       "random scenario: out of memory");
	snprintf(name, sizeof(name), "rand-%" PRIu64 "-%04d-%s", g->seed,
		 g->index, g->tag);
	json_object_object_add(root, "name", json_object_new_string(name));
	json_object_object_add(root, "description",
			       json_object_new_string(g->desc));
	json_object_object_add(root, "class", json_object_new_string(g->klass));
	return 0;
}

int nl_random_scenario(uint64_t seed, int index, double perturb,
		       char **json_out, char *err, size_t errlen)
{
	struct nl_rgen *g;
	struct json_object *root;
	int rc;

	*json_out = NULL;
	if (index < 0 || !(perturb >= 0 && perturb <= NL_RANDOM_MAX_PERTURB))
		return nl_errf(err, errlen, -EINVAL,
			       "random scenario: index %d, perturb %g (valid: "
			       "index >= 0, perturb 0 to %g)",
			       index, perturb, NL_RANDOM_MAX_PERTURB);
	g = calloc(1, sizeof(*g));
	root = json_object_new_object();
	if (!g || !root) {
		free(g);
		json_object_put(root);
		return nl_errf(err, errlen, -ENOMEM,
			       "random scenario: out of memory");
	}
	g->seed = seed;
	g->index = index;
	g->klass = "general";
	nl_rng_seed(&g->r, scenario_key(seed, index));
	rc = build(g, perturb, root, err, errlen);
	if (rc == 0) {
		const char *text = json_object_to_json_string_ext(
			root, JSON_C_TO_STRING_PRETTY |
				      JSON_C_TO_STRING_PRETTY_TAB |
				      JSON_C_TO_STRING_SPACED |
				      JSON_C_TO_STRING_NOSLASHESCAPE);
		*json_out = text ? strdup(text) : NULL;
		if (!*json_out)
			rc = nl_errf(err, errlen, -ENOMEM,
				     "random scenario: out of memory");
	}
	nl_topology_free(g->topo);
	free(g);
	json_object_put(root);
	return rc;
}

int nl_random_load(uint64_t seed, int index, double perturb,
		   struct nl_scenario **out, char **json_out, char *err,
		   size_t errlen)
{
	char *text, what[96];
	int rc;

	*out = NULL;
	if (json_out)
		*json_out = NULL;
	rc = nl_random_scenario(seed, index, perturb, &text, err, errlen);
	if (rc < 0)
		return rc;
	snprintf(what, sizeof(what), "random:%" PRIu64 ":%d", seed, index);
	rc = nl_scenario_parse(text, what, NULL, out, err, errlen);
	if (rc == 0 && json_out)
		*json_out = text;
	else
		free(text);
	return rc;
}
