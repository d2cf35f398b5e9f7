/*
 * numalot: scenario files for the simulated NUMA node (docs/scenarios.md).
 * Every problem is reported as "FILE: FIELD: problem"; unknown fields are
 * errors (they are typos).
 */
#include "scenario.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "machine_file.h"
#include "model.h"
#include "util.h"

#define MAX_PROCS 1000
/* Limits checked before any work, so that a file cannot make numalot run
 * for hours or take gigabytes: threads in all and per CPU (the model's
 * cost grows with the square of threads per CPU), and when a process
 * starts. */
#define MAX_THREADS 16384
#define MAX_THREADS_PER_CPU 16
#define MAX_START_S 86400.0
#define MAX_FILE_BYTES (1 << 20)

struct ctx {
	const char *file;
	char *err;
	size_t errlen;
	/* --machine=FILE: its machine object instead of the scenario's. */
	const struct nl_machine_file *mf;
};

static int perr(struct ctx *c, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(struct ctx *c, const char *field, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (!c->err || !c->errlen)
		return -EINVAL;
	snprintf(c->err, c->errlen, "%s: %s%s", c->file, field ? field : "",
		 field ? ": " : "");
	n = strlen(c->err);
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *type_name(struct json_object *v)
{
	return json_type_to_name(json_object_get_type(v));
}

/* Every key of obj must be in valid[] (NULL-terminated), or in params. */
static int check_keys(struct ctx *c, struct json_object *obj, const char *path,
		      const char *const *valid, int params)
{
	char field[128], list[1024];
	size_t n = 0;

	json_object_object_foreach(obj, key, val)
	{
		int ok = 0;
		(void)val;
		for (size_t i = 0; valid[i] && !ok; i++)
			ok = strcmp(key, valid[i]) == 0;
		for (size_t i = 0; params && i < nl_model_nparams && !ok; i++)
			ok = strcmp(key, nl_model_param_descs[i].name) == 0;
		if (ok)
			continue;
		list[0] = 0;
		for (size_t i = 0; valid[i] && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n,
					      "%s%s", i ? ", " : "", valid[i]);
		snprintf(field, sizeof(field), "%s%s%s", path, *path ? "." : "",
			 key);
		return perr(c, field, "unknown field (valid: %s%s)", list,
			    params ? ", and the model parameters in "
				     "docs/machine-model.md"
				   : "");
	}
	return 0;
}

/* A number in [lo, hi] (lo excluded with NL_PARAM_LO_OPEN). */
static int get_number(struct ctx *c, struct json_object *v, const char *field,
		      double lo, double hi, unsigned flags, double *out)
{
	enum json_type t = json_object_get_type(v);
	int integer = flags & NL_PARAM_INTEGER;
	double x;

	if (t != json_type_int && t != json_type_double)
		return perr(c, field, "expected %s, got %s",
			    integer ? "an integer" : "a number", type_name(v));
	x = json_object_get_double(v);
	if (!isfinite(x))
		return perr(c, field, "not a finite number");
	if (integer && x != floor(x))
		return perr(c, field, "expected an integer, got %.10g", x);
	if (x < lo || x > hi || ((flags & NL_PARAM_LO_OPEN) && x <= lo)) {
		if (flags & NL_PARAM_LO_OPEN)
			return perr(c, field,
				    "must be > %.10g and <= %.10g, got %.10g",
				    lo, hi, x);
		return perr(c, field, "must be from %.10g to %.10g, got %.10g",
			    lo, hi, x);
	}
	*out = x;
	return 0;
}

static int get_int(struct ctx *c, struct json_object *v, const char *field,
		   int lo, int hi, int *out)
{
	double x;
	int rc = get_number(c, v, field, lo, hi, NL_PARAM_INTEGER, &x);

	if (rc == 0)
		*out = (int)x;
	return rc;
}

static int get_string(struct ctx *c, struct json_object *v, const char *field,
		      const char **out)
{
	if (!json_object_is_type(v, json_type_string))
		return perr(c, field, "expected a string, got %s",
			    type_name(v));
	*out = json_object_get_string(v);
	return 0;
}

static int is_xml(const char *spec)
{
	size_t n = strlen(spec);
	return strncmp(spec, "xml:", 4) == 0 ||
	       (n >= 4 && strcmp(spec + n - 4, ".xml") == 0);
}

/* An XML path relative to the scenario file's folder. */
static char *resolve_topology(const char *spec, const char *base_dir)
{
	const char *path = strncmp(spec, "xml:", 4) == 0 ? spec + 4 : spec;
	char *out;
	size_t n;

	if (!is_xml(spec) || path[0] == '/' || !base_dir || !*base_dir)
		return strdup(spec);
	n = strlen(base_dir) + strlen(path) + 6;
	out = malloc(n);
	if (out)
		snprintf(out, n, "xml:%s/%s", base_dir, path);
	return out;
}

static int parse_distances(struct ctx *c, struct json_object *v,
			   struct nl_topology *topo)
{
	int n = topo->nnodes;
	unsigned vals[NL_MAX_NODES * NL_MAX_NODES];
	char field[64];

	if (!json_object_is_type(v, json_type_array))
		return perr(c, "machine.distances", "expected an array, got %s",
			    type_name(v));
	if ((int)json_object_array_length(v) != n)
		return perr(c, "machine.distances",
			    "expected %d rows (the topology has %d NUMA "
			    "nodes), got %zu",
			    n, n, json_object_array_length(v));
	for (int i = 0; i < n; i++) {
		struct json_object *row = json_object_array_get_idx(v, i);

		snprintf(field, sizeof(field), "machine.distances[%d]", i);
		if (!json_object_is_type(row, json_type_array) ||
		    (int)json_object_array_length(row) != n)
			return perr(c, field, "expected an array of %d numbers",
				    n);
		for (int j = 0; j < n; j++) {
			int d = 0;
			snprintf(field, sizeof(field),
				 "machine.distances[%d][%d]", i, j);
			if (get_int(c, json_object_array_get_idx(row, j), field,
				    10, 1000, &d) < 0)
				return -EINVAL;
			vals[i * n + j] = (unsigned)d;
		}
	}
	if (nl_topology_set_distances(topo, vals) < 0)
		return perr(c, "machine.distances",
			    "each row's diagonal value must be its smallest");
	return 0;
}

static const char *const machine_keys[] = {"topology", "distances", NULL};

static int parse_machine(struct ctx *c, struct json_object *mo,
			 const char *base_dir, struct nl_scenario *sc)
{
	struct json_object *v;
	const char *spec;
	char terr[512], field[96];
	int rc;

	if (!json_object_is_type(mo, json_type_object))
		return perr(c, "machine", "expected an object, got %s",
			    type_name(mo));
	if (check_keys(c, mo, "machine", machine_keys, 1) < 0)
		return -EINVAL;
	if (!json_object_object_get_ex(mo, "topology", &v))
		return perr(c, "machine.topology",
			    "missing (a synthetic description such as "
			    "\"numa:2 core:8 pu:1\", or an hwloc XML file)");
	if (get_string(c, v, "machine.topology", &spec) < 0)
		return -EINVAL;
	sc->topology_spec = resolve_topology(spec, base_dir);
	if (!sc->topology_spec)
		return -ENOMEM;
	terr[0] = 0;
	rc = nl_topology_load(sc->topology_spec, &sc->topo, terr, sizeof(terr));
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		return perr(c, "machine.topology", "%s",
			    strncmp(terr, "topology: ", 10) == 0 ? terr + 10
								 : terr);
	if (json_object_object_get_ex(mo, "distances", &v) &&
	    parse_distances(c, v, sc->topo) < 0)
		return -EINVAL;
	for (size_t i = 0; i < nl_model_nparams; i++) {
		const struct nl_param_desc *d = &nl_model_param_descs[i];

		if (!json_object_object_get_ex(mo, d->name, &v))
			continue;
		snprintf(field, sizeof(field), "machine.%s", d->name);
		if (get_number(c, v, field, d->lo, d->hi, d->flags,
			       (double *)((char *)&sc->params + d->offset)) < 0)
			return -EINVAL;
	}
	return 0;
}

/* Kind parameters a process may override, with their valid ranges. */
static const struct {
	const char *name;
	size_t offset;
	double lo, hi;
	unsigned flags;
} kind_fields[] = {
	{"work", offsetof(struct nl_kind, work_ops), 0, 1e18, NL_PARAM_LO_OPEN},
	{"peak_fraction", offsetof(struct nl_kind, peak_fraction), 0, 1,
	 NL_PARAM_LO_OPEN},
	{"bytes_per_op", offsetof(struct nl_kind, bytes_per_op), 0, 1e6, 0},
	{"mlp", offsetof(struct nl_kind, mlp), 1, 1000, 0},
	{"shared_fraction", offsetof(struct nl_kind, shared_fraction), 0, 1, 0},
	{"fp_fraction", offsetof(struct nl_kind, fp_fraction), 0, 64, 0},
	{"mem_bytes", offsetof(struct nl_kind, mem_bytes), 0, 1e15, 0},
};

#define NKIND_FIELDS (sizeof(kind_fields) / sizeof(kind_fields[0]))

/* clang-format off */
static const char *const proc_keys[] = {
	"name", "kind", "threads", "placement", "start_s", "job", "start_node",
	"cpus", "work", "peak_fraction", "bytes_per_op", "mlp",
	"shared_fraction", "fp_fraction", "mem_bytes", "cpunodebind",
	"membind", "interleave", "preferred", "limit", NULL,
};
/* clang-format on */

static int parse_placement(struct ctx *c, const char *field, const char *s,
			   int nnodes, struct nl_proc_spec *ps)
{
	char *end;
	long node;

	if (strcmp(s, "first-touch") == 0)
		ps->placement = NL_PLACE_FIRST_TOUCH;
	else if (strcmp(s, "master") == 0)
		ps->placement = NL_PLACE_MASTER;
	else if (strcmp(s, "interleave") == 0)
		ps->placement = NL_PLACE_INTERLEAVE;
	else if (strncmp(s, "node:", 5) == 0 || strncmp(s, "bind:", 5) == 0) {
		errno = 0;
		node = strtol(s + 5, &end, 10);
		if (!s[5] || *end || errno || node < 0)
			return perr(c, field,
				    "bad node in \"%s\" (example: "
				    "\"%.5s0\")",
				    s, s);
		if (node >= nnodes)
			return perr(c, field,
				    "node %ld out of range (the machine has "
				    "%d NUMA nodes)",
				    node, nnodes);
		ps->placement = s[0] == 'b' ? NL_PLACE_BIND : NL_PLACE_NODE;
		ps->placement_node = (int)node;
	} else {
		return perr(c, field,
			    "unknown placement \"%s\" (valid: first-touch, "
			    "master, interleave, node:N, bind:N)",
			    s);
	}
	return 0;
}

/* A node list ("1", "0,2", "0-3", or a number) into a bit mask. */
static int node_list(struct ctx *c, struct json_object *v, const char *field,
		     int nnodes, unsigned long long *mask)
{
	hwloc_bitmap_t b;
	char buf[32];
	const char *s;
	int i, rc = 0;

	if (json_object_is_type(v, json_type_int)) {
		snprintf(buf, sizeof(buf), "%d", json_object_get_int(v));
		s = buf;
	} else if (get_string(c, v, field, &s) < 0) {
		return -EINVAL;
	}
	b = hwloc_bitmap_alloc();
	if (!b)
		return -ENOMEM;
	*mask = 0;
	if (strspn(s, "0123456789,-") != strlen(s) || !*s ||
	    hwloc_bitmap_list_sscanf(b, s) < 0 || hwloc_bitmap_iszero(b) ||
	    hwloc_bitmap_last(b) < 0 || hwloc_bitmap_last(b) >= nnodes)
		rc = perr(c, field,
			  "\"%s\" is not a list of this machine's NUMA nodes "
			  "(0-%d)",
			  s, nnodes - 1);
	hwloc_bitmap_foreach_begin(i, b)
	{
		if (i < nnodes)
			*mask |= 1ULL << i;
	}
	hwloc_bitmap_foreach_end();
	hwloc_bitmap_free(b);
	return rc;
}

/* numactl-style fields: --cpunodebind, and one of --membind, --interleave,
 * --preferred (docs/scenarios.md). */
static int parse_numactl(struct ctx *c, struct json_object *po,
			 const char *prefix, int nnodes,
			 struct nl_proc_spec *ps)
{
	static const char *const mem[] = {"membind", "interleave", "preferred"};
	struct json_object *v;
	char field[96];
	unsigned long long m;
	int nmem = 0;

	snprintf(field, sizeof(field), "%s.cpunodebind", prefix);
	if (json_object_object_get_ex(po, "cpunodebind", &v) &&
	    node_list(c, v, field, nnodes, &ps->cpu_nodes) < 0)
		return -EINVAL;
	for (int k = 0; k < 3; k++) {
		if (!json_object_object_get_ex(po, mem[k], &v))
			continue;
		snprintf(field, sizeof(field), "%s.%s", prefix, mem[k]);
		if (++nmem > 1 ||
		    json_object_object_get_ex(po, "placement", NULL))
			return perr(c, field,
				    "only one of placement, membind, "
				    "interleave, preferred");
		if (node_list(c, v, field, nnodes, &m) < 0)
			return -EINVAL;
		if (k == 1) {
			ps->placement = NL_PLACE_INTERLEAVE;
			ps->mem_nodes = m;
			continue;
		}
		if (m & (m - 1))
			return perr(c, field, "one node only");
		ps->placement = k == 0 ? NL_PLACE_BIND : NL_PLACE_NODE;
		ps->placement_node = __builtin_ctzll(m);
		ps->mem_policy = k == 2;
	}
	return 0;
}

/* A CPU list must name CPUs of this machine; start_node must hold some. */
static int check_cpus(struct ctx *c, const char *prefix,
		      const struct nl_topology *topo, struct nl_proc_spec *ps)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc(), os = hwloc_bitmap_alloc();
	char field[96], have[256];
	int rc = 0, cpu, any = 0;

	if (!set || !os) {
		hwloc_bitmap_free(set);
		hwloc_bitmap_free(os);
		return -ENOMEM;
	}
	if (ps->cpus && nl_topology_parse_cpulist(topo, ps->cpus, set) < 0) {
		for (int i = 0; i < topo->ncpus; i++)
			hwloc_bitmap_set(os, (unsigned)topo->cpu_os[i]);
		hwloc_bitmap_list_snprintf(have, sizeof(have), os);
		snprintf(field, sizeof(field), "%s.cpus", prefix);
		rc = perr(c, field,
			  "\"%s\" is not a list of this machine's CPUs "
			  "(OS numbers %s)",
			  ps->cpus, have);
	} else if (!ps->cpus) {
		hwloc_bitmap_set_range(set, 0, topo->ncpus - 1);
	}
	if (rc == 0 && (ps->start_node >= 0 || ps->cpu_nodes)) {
		hwloc_bitmap_foreach_begin(cpu, set)
		{
			int node = topo->cpu_node[cpu];
			if ((ps->start_node < 0 || node == ps->start_node) &&
			    (!ps->cpu_nodes || ps->cpu_nodes >> node & 1))
				any = 1;
		}
		hwloc_bitmap_foreach_end();
		snprintf(field, sizeof(field), "%s.%s", prefix,
			 ps->start_node >= 0 ? "start_node" : "cpunodebind");
		if (!any && ps->start_node >= 0)
			rc = perr(c, field,
				  "node %d has none of the process's CPUs",
				  ps->start_node);
		else if (!any)
			rc = perr(c, field,
				  "none of the process's CPUs is on those "
				  "nodes");
	}
	hwloc_bitmap_free(set);
	hwloc_bitmap_free(os);
	return rc;
}

static int parse_process(struct ctx *c, struct json_object *po, int idx,
			 const struct nl_topology *topo,
			 struct nl_proc_spec *ps)
{
	struct json_object *v;
	const struct nl_kind *kind;
	const char *s;
	char prefix[32], field[96];

	snprintf(prefix, sizeof(prefix), "processes[%d]", idx);
#define FIELD(name)                                                            \
	(snprintf(field, sizeof(field), "%s.%s", prefix, name), field)
	if (!json_object_is_type(po, json_type_object))
		return perr(c, prefix, "expected an object, got %s",
			    type_name(po));
	if (check_keys(c, po, prefix, proc_keys, 0) < 0)
		return -EINVAL;
	if (!json_object_object_get_ex(po, "kind", &v))
		return perr(c, FIELD("kind"), "missing (valid: %s)",
			    nl_kind_names());
	if (get_string(c, v, FIELD("kind"), &s) < 0)
		return -EINVAL;
	kind = nl_kind_find(s);
	if (!kind)
		return perr(c, field, "unknown kind \"%s\" (valid: %s)", s,
			    nl_kind_names());
	ps->kind = *kind;
	ps->start_node = -1;
	ps->placement = NL_PLACE_FIRST_TOUCH;
	snprintf(ps->name, sizeof(ps->name), "%s-%d", kind->name, idx);
	if (json_object_object_get_ex(po, "name", &v)) {
		if (get_string(c, v, FIELD("name"), &s) < 0)
			return -EINVAL;
		if (!*s || strlen(s) >= sizeof(ps->name))
			return perr(c, field, "must be 1 to %zu characters",
				    sizeof(ps->name) - 1);
		snprintf(ps->name, sizeof(ps->name), "%s", s);
	}
	if (!json_object_object_get_ex(po, "threads", &v))
		return perr(c, FIELD("threads"), "missing");
	if (get_int(c, v, FIELD("threads"), 1, NL_MAX_PROC_THREADS,
		    &ps->nthreads) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(po, "placement", &v) &&
	    (get_string(c, v, FIELD("placement"), &s) < 0 ||
	     parse_placement(c, field, s, topo->nnodes, ps) < 0))
		return -EINVAL;
	if (json_object_object_get_ex(po, "start_s", &v) &&
	    get_number(c, v, FIELD("start_s"), 0, MAX_START_S, 0,
		       &ps->start_s) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(po, "job", &v) &&
	    get_int(c, v, FIELD("job"), 0, 1 << 30, &ps->job) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(po, "start_node", &v) &&
	    get_int(c, v, FIELD("start_node"), 0, topo->nnodes - 1,
		    &ps->start_node) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(po, "cpus", &v)) {
		if (get_string(c, v, FIELD("cpus"), &s) < 0)
			return -EINVAL;
		ps->cpus = strdup(s);
		if (!ps->cpus)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(po, "limit", &v)) {
		if (get_string(c, v, FIELD("limit"), &s) < 0)
			return -EINVAL;
		if (strcmp(s, "binding") && strcmp(s, "cpus"))
			return perr(c, field,
				    "\"%s\" is not a limit (valid: cpus, "
				    "binding)",
				    s);
		ps->limit_binding = !strcmp(s, "binding");
	}
	for (size_t i = 0; i < NKIND_FIELDS; i++) {
		if (!json_object_object_get_ex(po, kind_fields[i].name, &v))
			continue;
		if (get_number(c, v, FIELD(kind_fields[i].name),
			       kind_fields[i].lo, kind_fields[i].hi,
			       kind_fields[i].flags,
			       (double *)((char *)&ps->kind +
					  kind_fields[i].offset)) < 0)
			return -EINVAL;
	}
#undef FIELD
	if (parse_numactl(c, po, prefix, topo->nnodes, ps) < 0)
		return -EINVAL;
	return check_cpus(c, prefix, topo, ps);
}

static const char *const top_keys[] = {
	"name", "description", "class",	    "machine",
	"os",	"duration_s",  "processes", NULL,
};

static int parse_root(struct ctx *c, struct json_object *root,
		      const char *base_dir, struct nl_scenario *sc)
{
	struct json_object *v, *procs;
	const char *s;
	int rc;
	size_t np;

	if (!json_object_is_type(root, json_type_object))
		return perr(c, NULL, "expected a JSON object, got %s",
			    type_name(root));
	if (check_keys(c, root, "", top_keys, 0) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(root, "name", &v)) {
		if (get_string(c, v, "name", &s) < 0)
			return -EINVAL;
		free(sc->name);
		sc->name = strdup(s);
		if (!sc->name)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(root, "description", &v) &&
	    get_string(c, v, "description", &s) < 0)
		return -EINVAL;
	if (c->mf) {
		/* Its errors name the machine file. */
		struct ctx mc = {c->mf->path, c->err, c->errlen, NULL};
		rc = parse_machine(&mc, c->mf->machine, c->mf->dir, sc);
		if (rc == 0 && !(sc->machine_file = strdup(c->mf->path)))
			rc = -ENOMEM;
	} else if (!json_object_object_get_ex(root, "machine", &v)) {
		return perr(c, "machine", "missing");
	} else {
		rc = parse_machine(c, v, base_dir, sc);
	}
	if (rc < 0)
		return rc;
	if (json_object_object_get_ex(root, "class", &v)) {
		if (get_string(c, v, "class", &s) < 0)
			return -EINVAL;
		sc->klass = strdup(s);
		if (!sc->klass)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(root, "os", &v) &&
	    (get_string(c, v, "os", &s) < 0 ||
	     (nl_os_mode_from_name(s, &sc->os_mode) < 0 &&
	      perr(c, "os", "unknown operating system model \"%s\" (valid: %s)",
		   s, nl_os_mode_names()) < 0)))
		return -EINVAL;
	if (json_object_object_get_ex(root, "duration_s", &v) &&
	    get_number(c, v, "duration_s", 0, 1e9, NL_PARAM_LO_OPEN,
		       &sc->duration_s) < 0)
		return -EINVAL;
	if (!json_object_object_get_ex(root, "processes", &procs))
		return perr(c, "processes", "missing");
	if (!json_object_is_type(procs, json_type_array))
		return perr(c, "processes", "expected an array, got %s",
			    type_name(procs));
	np = json_object_array_length(procs);
	if (np < 1 || np > MAX_PROCS)
		return perr(c, "processes",
			    "expected 1 to %d processes, got %zu", MAX_PROCS,
			    np);
	sc->procs = calloc(np, sizeof(*sc->procs));
	if (!sc->procs)
		return -ENOMEM;
	sc->nprocs = (int)np;
	long threads = 0;
	for (size_t i = 0; i < np; i++) {
		rc = parse_process(c, json_object_array_get_idx(procs, i),
				   (int)i, sc->topo, &sc->procs[i]);
		if (rc < 0)
			return rc;
		threads += sc->procs[i].nthreads;
		if (threads > MAX_THREADS ||
		    threads > (long)MAX_THREADS_PER_CPU * sc->topo->ncpus)
			return perr(
				c, "processes",
				"%ld threads (so far) are too many: at most "
				"%d per CPU (%d on this machine) and %d",
				threads, MAX_THREADS_PER_CPU,
				MAX_THREADS_PER_CPU * sc->topo->ncpus,
				MAX_THREADS);
	}
	return 0;
}

/* Line and column (from 1) of byte offset off in text. */
static void where(const char *text, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && text[i]; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* The file's base name without ".json": the default scenario name. */
static char *default_name(const char *name)
{
	const char *b = strrchr(name, '/');
	char *s = strdup(b ? b + 1 : name);
	size_t n = s ? strlen(s) : 0;

	if (n > 5 && strcmp(s + n - 5, ".json") == 0)
		s[n - 5] = 0;
	return s;
}

static int parse_text(const char *text, const char *name, const char *base_dir,
		      const struct nl_machine_file *mf,
		      struct nl_scenario **out, char *err, size_t errlen)
{
	struct ctx c = {name ? name : "scenario", err, errlen, mf};
	struct json_tokener *tok;
	struct json_object *root;
	struct nl_scenario *sc;
	enum json_tokener_error jerr;
	int rc, line, col;

	*out = NULL;
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
	jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success) {
		where(text, json_tokener_get_parse_end(tok), &line, &col);
		json_tokener_free(tok);
		json_object_put(root);
		return perr(&c, NULL,
			    "malformed JSON at line %d, column %d: %s", line,
			    col,
			    jerr == json_tokener_success
				    ? "no value"
				    : json_tokener_error_desc(jerr));
	}
	json_tokener_free(tok);
	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		json_object_put(root);
		return -ENOMEM;
	}
	nl_model_default_params(&sc->params);
	sc->os_mode = NL_OS_LINUX;
	sc->name = default_name(c.file);
	rc = sc->name ? parse_root(&c, root, base_dir, sc) : -ENOMEM;
	json_object_put(root);
	if (rc < 0) {
		if (rc == -ENOMEM)
			perr(&c, NULL, "out of memory");
		nl_scenario_free(sc);
		return rc;
	}
	*out = sc;
	return 0;
}

int nl_scenario_parse(const char *text, const char *name, const char *base_dir,
		      struct nl_scenario **out, char *err, size_t errlen)
{
	return parse_text(text, name, base_dir, NULL, out, err, errlen);
}

int nl_machine_file_check(const struct nl_machine_file *mf, char *err,
			  size_t errlen)
{
	struct nl_scenario *sc = NULL;
	int rc = parse_text("{\"processes\": [{\"kind\": \"compute\", "
			    "\"threads\": 1}]}",
			    mf->path, NULL, mf, &sc, err, errlen);

	nl_scenario_free(sc);
	return rc;
}

int nl_scenario_load(const char *path, struct nl_scenario **out, char *err,
		     size_t errlen)
{
	return nl_scenario_load_on(path, NULL, out, err, errlen);
}

int nl_scenario_load_on(const char *path, const struct nl_machine_file *mf,
			struct nl_scenario **out, char *err, size_t errlen)
{
	struct ctx c = {path, err, errlen, NULL};
	char *text, *dir, *slash, why[128];
	size_t n;
	int rc;

	*out = NULL;
	/* A regular file of at most 1 MiB: a FIFO cannot hang numalot. */
	rc = nl_read_file(path, MAX_FILE_BYTES, &text, &n, why, sizeof(why));
	if (rc < 0) {
		perr(&c, NULL, "%s", why);
		return rc;
	}
	if (strlen(text) != n) {
		free(text);
		return perr(&c, NULL, "not a text file (NUL byte)");
	}
	dir = strdup(path);
	if (!dir) {
		free(text);
		return -ENOMEM;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	rc = parse_text(text, path, slash ? (*dir ? dir : "/") : NULL, mf, out,
			err, errlen);
	free(dir);
	free(text);
	return rc;
}

void nl_scenario_free(struct nl_scenario *sc)
{
	if (!sc)
		return;
	for (int i = 0; i < sc->nprocs; i++)
		free(sc->procs[i].cpus);
	free(sc->procs);
	nl_topology_free(sc->topo);
	free(sc->topology_spec);
	free(sc->name);
	free(sc->klass);
	free(sc->machine_file);
	free(sc);
}

const char *nl_scenario_machine_file(const struct nl_scenario *sc)
{
	return sc->machine_file;
}

const char *nl_scenario_class(const struct nl_scenario *sc)
{
	return sc->klass ? sc->klass : "general";
}

const char *nl_scenario_name(const struct nl_scenario *sc)
{
	return sc->name;
}

const struct nl_topology *nl_scenario_topology(const struct nl_scenario *sc)
{
	return sc->topo;
}

double nl_scenario_duration(const struct nl_scenario *sc)
{
	return sc->duration_s;
}

const char *nl_scenario_os_name(const struct nl_scenario *sc)
{
	return nl_os_mode_name(sc->os_mode);
}

void nl_scenario_ceilings(const struct nl_scenario *sc, double *peak_ops_per_s,
			  double *bandwidth_bytes_per_s)
{
	*peak_ops_per_s = sc->params.peak_ops_per_s;
	*bandwidth_bytes_per_s = sc->params.node_bandwidth_bytes_per_s;
}

int nl_scenario_nprocs(const struct nl_scenario *sc)
{
	return sc->nprocs;
}

int nl_scenario_proc(const struct nl_scenario *sc, int i,
		     struct nl_scenario_proc *out)
{
	if (i < 0 || i >= sc->nprocs)
		return -EINVAL;
	out->name = sc->procs[i].name;
	out->job = sc->procs[i].job;
	out->nthreads = sc->procs[i].nthreads;
	out->pid = nl_sim_pid(i);
	return 0;
}
