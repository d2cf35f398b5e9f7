/*
 * numalot: the model's parameter sets (docs/machine-model.md): the
 * machine's parameters with their defaults and ranges, and the named
 * workload kinds.
 */
#include "model.h"

#include <string.h>

#include "util.h"

#define P(field) offsetof(struct nl_model_params, field)
#define LO_OPEN NL_PARAM_LO_OPEN
#define INTEGER NL_PARAM_INTEGER

const struct nl_param_desc nl_model_param_descs[] = {
	{"peak_ops_per_s", P(peak_ops_per_s), 4e9, 0, 1e13, LO_OPEN,
	 "ops/s per core"},
	{"smt_share", P(smt_share), 0.6, 0.5, 1, 0,
	 "of a core, each of 2 busy SMT siblings (k: Y(k)/k)"},
	{"node_bandwidth_bytes_per_s", P(node_bandwidth_bytes_per_s), 60e9, 0,
	 1e13, LO_OPEN, "B/s per node"},
	{"local_latency_ns", P(local_latency_ns), 90, 0, 1e5, LO_OPEN, "ns"},
	{"remote_factor", P(remote_factor), 0.5, 0, 10, 0,
	 "latency growth per 10 of SLIT distance"},
	{"link_bandwidth_bytes_per_s", P(link_bandwidth_bytes_per_s), 40e9, 0,
	 1e13, LO_OPEN, "B/s per direction per node pair"},
	{"contention_k", P(contention_k), 0.25, 0, 100, 0,
	 "queueing factor 1 + k rho / (1 - rho)"},
	{"rho_cap", P(rho_cap), 0.95, 0, 0.999, 0, "utilisation"},
	{"page_migration_bytes_per_s", P(page_migration_bytes_per_s), 1e9, 0,
	 1e13, LO_OPEN, "B/s into each node"},
	{"numa_scan_delay_s", P(numa_scan_delay_s), 1, 0, 1e6, 0,
	 "s from a process's start to its first NUMA scan"},
	{"numa_scan_period_s", P(numa_scan_period_s), 1, 0.001, 1e6, 0,
	 "s between NUMA scans and placement decisions"},
	{"numa_scan_bytes", P(numa_scan_bytes), 256.0 * 1024 * 1024, 0, 1e15,
	 LO_OPEN, "B of a process's memory scanned per scan period"},
	{"numa_scan_period_max_s", P(numa_scan_period_max_s), 60, 0.001, 1e6, 0,
	 "s, longest scan period (kernel-like linux)"},
	{"numa_fault_cost_s", P(numa_fault_cost_s), 2e-6, 0, 1, 0,
	 "s of CPU per NUMA hinting fault (kernel-like linux)"},
	{"page_copy_bytes_per_s", P(page_copy_bytes_per_s), 2e9, 0, 1e13,
	 LO_OPEN, "B/s a migrating thread copies (kernel-like linux)"},
	{"numa_imbalance_share", P(numa_imbalance_share), 0.25, 0, 1, 0,
	 "of a node's CPUs: NUMA imbalance allowed (kernel-like linux)"},
	{"page_move_bytes_per_s", P(page_move_bytes_per_s), 2e9, 0, 1e13,
	 LO_OPEN, "B/s numalot's page moves copy at"},
	{"tick_s", P(tick_s), 0.01, 1e-4, 1, 0, "s"},
	{"noise", P(noise), 0.03, 0, 0.5, 0,
	 "relative sd of counted events over one CPU second"},
	{"fixed_point_rounds", P(fixed_point_rounds), 8, 1, 100, INTEGER,
	 "rounds per tick, at most"},
	{"damping", P(damping), 0.5, 0, 1, LO_OPEN,
	 "weight of the new contention estimate"},
	{"latency_sample_period", P(latency_sample_period), 10007, 1, 1e9, 0,
	 "LLC misses per load-latency sample (pebs; PEBS's period)"},
};

const size_t nl_model_nparams =
	sizeof(nl_model_param_descs) / sizeof(nl_model_param_descs[0]);

void nl_model_default_params(struct nl_model_params *p)
{
	for (size_t i = 0; i < nl_model_nparams; i++)
		*(double *)((char *)p + nl_model_param_descs[i].offset) =
			nl_model_param_descs[i].def;
}

/*
 * Workload kinds. Modelled, not measured: each set is chosen so that the
 * kind behaves like the NAS codes it stands for, to first order, on the
 * default machine (4e9 ops/s per core, 90 ns local latency, 60 GB/s per
 * node), and so that one process alone runs for some 25 to 40 simulated
 * seconds.
 */

#define MIB (1024.0 * 1024.0)

static const struct nl_kind kinds[] = {
	{
		/*
		 * Embarrassingly parallel: almost no memory traffic, so
		 * placement does not matter. 3.2e9 ops/s alone: ~31 s.
		 */
		.name = "compute",
		.like = "EP",
		.peak_fraction = 0.8,
		.bytes_per_op = 0.002,
		.mlp = 4.0,
		.shared_fraction = 0.0,
		.fp_fraction = 0.5,
		.work_ops = 1e11,
		.mem_bytes = 16 * MIB,
		.nphases = 1,
		.phase = {{1.0, 1.0, 1.0, 1.0}},
	},
	{
		/*
		 * Streaming stencil sweeps: prefetch-friendly (high MLP) but
		 * 3 bytes per op, so a node's bandwidth binds at about 16
		 * threads. ~1.2e9 ops/s alone, local: ~26 s.
		 */
		.name = "stream",
		.like = "MG",
		.peak_fraction = 0.5,
		.bytes_per_op = 3.0,
		.mlp = 12.0,
		.shared_fraction = 0.1,
		.fp_fraction = 0.25,
		.work_ops = 3e10,
		.mem_bytes = 512 * MIB,
		.nphases = 1,
		.phase = {{1.0, 1.0, 1.0, 1.0}},
	},
	{
		/*
		 * Irregular, dependent accesses (sparse matrix-vector, bucket
		 * sort): little MLP, so latency dominates and remote data
		 * costs ~1.3x on SLIT 20. ~0.7e9 ops/s alone, local: ~29 s.
		 */
		.name = "latency",
		.like = "CG, IS",
		.peak_fraction = 0.5,
		.bytes_per_op = 1.0,
		.mlp = 1.5,
		.shared_fraction = 0.2,
		.fp_fraction = 0.1,
		.work_ops = 2e10,
		.mem_bytes = 256 * MIB,
		.nphases = 1,
		.phase = {{1.0, 1.0, 1.0, 1.0}},
	},
	{
		/*
		 * Solvers alternating a compute phase (60% of the ops) and a
		 * data-exchange phase (transposes, sweeps over the shared
		 * grid). Cycle of 4e9 ops (~2 s). ~1.8e9 ops/s alone: ~28 s.
		 */
		.name = "mixed",
		.like = "FT, SP, BT, LU",
		.peak_fraction = 0.6,
		.bytes_per_op = 0.6,
		.mlp = 4.0,
		.shared_fraction = 0.3,
		.fp_fraction = 0.4,
		.work_ops = 5e10,
		.mem_bytes = 256 * MIB,
		.cycle_ops = 4e9,
		.nphases = 2,
		.phase = {{0.6, 1.2, 0.1, 0.75}, {0.4, 0.7, 2.35, 1.375}},
	},
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

const struct nl_kind *nl_kind_find(const char *name)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

size_t nl_kind_count(void)
{
	return NKINDS;
}

const struct nl_kind *nl_kind_at(size_t i)
{
	return i < NKINDS ? &kinds[i] : NULL;
}

const char *nl_kind_names(void)
{
	static char buf[128];
	const char *names[NKINDS];

	if (!buf[0]) {
		for (size_t i = 0; i < NKINDS; i++)
			names[i] = kinds[i].name;
		nl_names_join(names, NKINDS, 0, buf, sizeof(buf));
	}
	return buf;
}
