/* numalot: topology from hwloc (live machine, XML file, synthetic). */
#include "topology.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Limits checked before hwloc builds anything: an XML file's size, a
 * synthetic description's processing units (the node limit is
 * NL_MAX_NODES), an OS CPU number in a list. */
#define XML_MAX_BYTES (16 * 1024 * 1024)
#define SYNTHETIC_MAX_PUS 16384
#define CPU_MAX_OS 65535

/* The XML file read by nl_read_file, then handed to hwloc as a buffer:
 * hwloc never opens the path itself (a FIFO swapped in cannot hang it). */
static int set_xml(hwloc_topology_t hw, const char *path, char *err,
		   size_t errlen)
{
	char *text, why[128];
	size_t len;
	int rc = nl_read_file(path, XML_MAX_BYTES, &text, &len, why,
			      sizeof(why));

	if (rc < 0)
		return nl_errf(err, errlen, rc,
			       "topology: cannot read XML file \"%s\": %s",
			       path, why);
	/* The size counts the final NUL, as hwloc's own exports do. */
	rc = hwloc_topology_set_xmlbuffer(hw, text, (int)len + 1);
	free(text);
	if (rc < 0)
		return nl_errf(err, errlen, -EINVAL,
			       "topology: cannot read XML file \"%s\"", path);
	return 0;
}

/* "numa:2 core:4 pu:1": the counts multiply; check them first. */
static int check_synthetic(const char *desc, char *err, size_t errlen)
{
	double pus = 1, nodes = 1;
	int depth = 0;
	for (const char *p = desc; *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *tok = p, *colon = NULL;
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == ':' && !colon)
				colon = p;
			p++;
		}
		if (!colon)
			continue;
		char *end;
		double n = strtod(colon + 1, &end);
		if (end == colon + 1 || n < 1)
			continue; /* hwloc says what is wrong */
		pus *= n;
		if (!strncasecmp(tok, "numa", 4) ||
		    !strncasecmp(tok, "node", 4))
			depth = 1;
		if (!depth)
			nodes *= n;
		else if (depth == 1) {
			nodes *= n;
			depth = 2;
		}
		if (pus > SYNTHETIC_MAX_PUS)
			return nl_errf(err, errlen, -EINVAL,
				       "topology: \"%s\" has more than %d "
				       "processing units",
				       desc, SYNTHETIC_MAX_PUS);
	}
	if (depth && nodes > NL_MAX_NODES)
		return nl_errf(err, errlen, -EINVAL,
			       "topology: \"%s\" has %.0f NUMA nodes (at most "
			       "%d)",
			       desc, nodes, NL_MAX_NODES);
	return 0;
}

/* Point hwloc at the source spec names. */
static int set_source(hwloc_topology_t hw, const char *spec, char **source,
		      char *err, size_t errlen)
{
	const char *arg;
	int rc;
	size_t n;

	if (!spec || !*spec || strcmp(spec, "live") == 0) {
		*source = strdup("live");
		return *source ? 0 : -ENOMEM;
	}
	if (strncmp(spec, "xml:", 4) == 0 || ends_with(spec, ".xml")) {
		arg = strncmp(spec, "xml:", 4) == 0 ? spec + 4 : spec;
		rc = set_xml(hw, arg, err, errlen);
		if (rc < 0)
			return rc;
		n = strlen(arg) + 5;
	} else {
		arg = strncmp(spec, "synthetic:", 10) == 0 ? spec + 10 : spec;
		rc = check_synthetic(arg, err, errlen);
		if (rc < 0)
			return rc;
		if (hwloc_topology_set_synthetic(hw, arg) < 0)
			return nl_errf(
				err, errlen, -EINVAL,
				"topology: invalid synthetic description "
				"\"%s\" (example: \"pack:2 numa:1 core:4 "
				"pu:1\")",
				arg);
		n = strlen(arg) + 11;
	}
	*source = malloc(n);
	if (!*source)
		return -ENOMEM;
	snprintf(*source, n, "%s%s",
		 arg == spec + 10  ? "synthetic:"
		 : arg == spec + 4 ? "xml:"
				   : "",
		 arg);
	return 0;
}

static void default_distances(struct nl_topology *t)
{
	for (int i = 0; i < t->nnodes; i++)
		for (int j = 0; j < t->nnodes; j++)
			t->distance[i * t->nnodes + j] = i == j ? 10 : 21;
	t->distances_from_os = 0;
}

/* Take the first NUMA latency matrix hwloc has that covers every node. */
static void read_distances(struct nl_topology *t)
{
	struct hwloc_distances_s *d[8];
	unsigned nr = 8;
	int nn = t->nnodes;

	default_distances(t);
	if (hwloc_distances_get_by_type(t->hw, HWLOC_OBJ_NUMANODE, &nr, d,
					HWLOC_DISTANCES_KIND_MEANS_LATENCY,
					0) < 0)
		return;
	if (nr > 8)
		nr = 8;
	for (unsigned k = 0; k < nr; k++) {
		unsigned n = d[k]->nbobjs;
		int complete = (int)n == nn;
		for (unsigned i = 0; complete && i < n; i++) {
			double diag = (double)d[k]->values[i * n + i];
			if (diag <= 0)
				complete = 0;
		}
		if (!complete)
			continue;
		for (unsigned i = 0; i < n; i++) {
			int li = (int)d[k]->objs[i]->logical_index;
			double diag = (double)d[k]->values[i * n + i];
			for (unsigned j = 0; j < n; j++) {
				int lj = (int)d[k]->objs[j]->logical_index;
				double v = (double)d[k]->values[i * n + j];
				/* Scale so that local is 10, as SLIT has it. */
				t->distance[li * nn + lj] =
					(unsigned)(v * 10.0 / diag + 0.5);
			}
		}
		t->distances_from_os = 1;
		break;
	}
	for (unsigned k = 0; k < nr; k++)
		hwloc_distances_release(t->hw, d[k]);
}

static int fill_maps(struct nl_topology *t, char *err, size_t errlen)
{
	hwloc_topology_t hw = t->hw;
	int npu = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
	int nnuma = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE);

	if (npu <= 0)
		return nl_errf(err, errlen, -EINVAL, "topology: no CPU found");
	if (nnuma <= 0)
		nnuma = 1;
	if (nnuma > NL_MAX_NODES)
		return nl_errf(
			err, errlen, -E2BIG,
			"topology: %d NUMA nodes, numalot handles at most "
			"%d",
			nnuma, NL_MAX_NODES);
	t->ncpus = npu;
	t->nnodes = nnuma;
	t->cpu_os = calloc((size_t)npu, sizeof(int));
	t->cpu_node = calloc((size_t)npu, sizeof(int));
	t->cpu_core = calloc((size_t)npu, sizeof(int));
	t->node_os = calloc((size_t)nnuma, sizeof(int));
	t->node_ncpus = calloc((size_t)nnuma, sizeof(int));
	t->distance = calloc((size_t)nnuma * nnuma, sizeof(unsigned));
	if (!t->cpu_os || !t->cpu_node || !t->cpu_core || !t->node_os ||
	    !t->node_ncpus || !t->distance)
		return -ENOMEM;

	for (int n = 0; n < nnuma; n++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE,
						      (unsigned)n);
		t->node_os[n] = o ? (int)o->os_index : n;
	}
	int ncores = 0;
	for (int i = 0; i < npu; i++) {
		hwloc_obj_t pu =
			hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)i);
		hwloc_obj_t core =
			hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
		t->cpu_os[i] = (int)pu->os_index;
		t->cpu_core[i] = core ? (int)core->logical_index : -1;
		t->cpu_node[i] = -1;
		/* A CPU local to several nodes (DRAM + HBM) takes the first;
		 * one local to none (its node not allowed: a cpuset's view)
		 * the first node whose CPUs share its nearest ancestor. */
		for (hwloc_obj_t a = pu; a && t->cpu_node[i] < 0; a = a->parent)
			for (int n = 0; n < nnuma; n++) {
				hwloc_obj_t o = hwloc_get_obj_by_type(
					hw, HWLOC_OBJ_NUMANODE, (unsigned)n);
				if (!o ||
				    (a == pu ? hwloc_bitmap_isset(o->cpuset,
								  pu->os_index)
					     : hwloc_bitmap_intersects(
						       o->cpuset, a->cpuset))) {
					t->cpu_node[i] = n;
					break;
				}
			}
		if (t->cpu_node[i] < 0)
			t->cpu_node[i] = 0;
		t->node_ncpus[t->cpu_node[i]]++;
	}
	/* CPUs without a core object count as cores of their own. */
	for (int i = 0; i < npu; i++)
		if (t->cpu_core[i] + 1 > ncores)
			ncores = t->cpu_core[i] + 1;
	for (int i = 0; i < npu; i++)
		if (t->cpu_core[i] < 0)
			t->cpu_core[i] = ncores++;
	t->ncores = ncores;
	read_distances(t);
	return 0;
}

int nl_topology_load(const char *spec, struct nl_topology **out, char *err,
		     size_t errlen)
{
	struct nl_topology *t = calloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (hwloc_topology_init(&t->hw) < 0) {
		free(t);
		return -ENOMEM;
	}
	rc = set_source(t->hw, spec, &t->source, err, errlen);
	if (rc == 0 && hwloc_topology_load(t->hw) < 0)
		rc = nl_errf(err, errlen, -EINVAL,
			     "topology: hwloc cannot load \"%s\": %s", spec,
			     strerror(errno));
	if (rc == 0)
		rc = fill_maps(t, err, errlen);
	if (rc < 0) {
		if (rc == -ENOMEM)
			nl_errf(err, errlen, rc, "topology: out of memory");
		nl_topology_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int nl_topology_set_distances(struct nl_topology *t, const unsigned *values)
{
	int n = t->nnodes;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (values[i * n + j] < 10 ||
			    values[i * n + j] < values[i * n + i])
				return -EINVAL;
	memcpy(t->distance, values, sizeof(unsigned) * (size_t)n * n);
	t->distances_from_os = 1;
	return 0;
}

void nl_topology_free(struct nl_topology *t)
{
	if (!t)
		return;
	if (t->hw)
		hwloc_topology_destroy(t->hw);
	free(t->cpu_os);
	free(t->cpu_node);
	free(t->cpu_core);
	free(t->node_os);
	free(t->node_ncpus);
	free(t->distance);
	free(t->source);
	free(t);
}

int nl_topology_cpu_from_os(const struct nl_topology *t, int os_index)
{
	for (int i = 0; i < t->ncpus; i++)
		if (t->cpu_os[i] == os_index)
			return i;
	return -1;
}

int nl_topology_parse_cpulist(const struct nl_topology *t, const char *list,
			      hwloc_bitmap_t out)
{
	/* Strictly "N", "N-M" and commas, each number at most CPU_MAX_OS and
	 * a CPU of the topology: checked before any range is walked. */
	const char *p = list;
	hwloc_bitmap_zero(out);
	if (!list || !*list)
		return -EINVAL;
	while (*p) {
		char *end;
		long lo, hi;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		lo = strtol(p, &end, 10);
		if (errno || lo > CPU_MAX_OS)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			hi = strtol(p, &end, 10);
			if (errno || hi > CPU_MAX_OS || hi < lo)
				return -EINVAL;
			p = end;
		}
		for (long id = lo; id <= hi; id++) {
			int cpu = nl_topology_cpu_from_os(t, (int)id);
			if (cpu < 0)
				return -EINVAL;
			hwloc_bitmap_set(out, (unsigned)cpu);
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}
