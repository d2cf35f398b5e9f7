/*
 * Benchmark: one policy step (view -> plan) for many threads on a large
 * machine. Usage: bench_step [TOPOLOGY] [THREADS] [STEPS]
 * Default: 24 NUMA nodes x 8 cores (192 CPUs, a 4-level SLIT like an SGI
 * UV), 1024 threads, 200 steps per policy. Prints microseconds per step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "policy.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "numa:24 core:8 pu:1";
	int nthreads = argc > 2 ? atoi(argv[2]) : 1024;
	int steps = argc > 3 ? atoi(argv[3]) : 200;
	struct nl_topology *topo;
	char err[256];

	if (nl_topology_load(spec, &topo, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_step: %s\n", err);
		return 2;
	}
	if (!topo->distances_from_os) {
		/* Node pairs: same blade 50, same rack 65, else 79. */
		int n = topo->nnodes;
		unsigned *d = malloc(sizeof(unsigned) * (size_t)(n * n));
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				d[i * n + j] = i == j		? 10
					       : i / 2 == j / 2 ? 50
					       : i / 8 == j / 8 ? 65
								: 79;
		nl_topology_set_distances(topo, d);
		free(d);
	}
	struct nl_policy_params p;
	struct nl_rng g;
	nl_policy_params_default(&p);
	nl_rng_seed(&g, 1);
	struct nl_view_thread *t = calloc((size_t)nthreads, sizeof(*t));
	struct nl_record *rec = calloc((size_t)nthreads, sizeof(*rec));
	hwloc_bitmap_t all = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(all, 0, topo->ncpus - 1);
	for (int i = 0; i < nthreads; i++) {
		t[i] = (struct nl_view_thread){
			.tid = 1000 + i,
			.pid = 1000 + (i / 16) * 16,
			.cpu = i % topo->ncpus,
			.pinned = 1,
			.has_perf = 1,
			.perf = 1 + nl_rng_uniform(&g),
			.has_prev = 1,
			.prev_perf = 1 + nl_rng_uniform(&g),
			.rel_perf = 0.5 + nl_rng_uniform(&g),
			.preferred_node =
				(int)nl_rng_below(&g, (uint64_t)topo->nnodes),
			.record = &rec[i],
			.allowed = all,
		};
		for (int k = 0; k < 4; k++)
			nl_record_note(
				&rec[i],
				(int)nl_rng_below(&g, (uint64_t)topo->nnodes),
				nl_rng_uniform(&g) * 2, 9.5);
	}
	struct nl_view v = {.topo = topo,
			    .threads = t,
			    .nthreads = nthreads,
			    .now_s = 10.0};
	printf("bench_step: %s, %d NUMA nodes, %d CPUs, %d threads, %d steps\n",
	       spec, topo->nnodes, topo->ncpus, nthreads, steps);
	enum nl_policy_kind kinds[] = {NL_POLICY_IMAR2, NL_POLICY_LBMA};
	for (int k = 0; k < 2; k++) {
		struct nl_plan plan;
		size_t moves = 0;
		nl_plan_init(&plan);
		double t0 = now_s();
		for (int s = 0; s < steps; s++) {
			struct nl_policy_state st;
			nl_policy_state_init(&st);
			st.steps = 1;
			nl_plan_clear(&plan);
			nl_policy_step(kinds[k], &p, &v, &st, &g, &plan);
			moves += plan.n;
			nl_policy_state_free(&st);
		}
		double dt = now_s() - t0;
		printf("%-6s %9.1f us/step  (%zu actions in %d steps)\n",
		       nl_policy_name(kinds[k]), dt / steps * 1e6, moves,
		       steps);
		nl_plan_free(&plan);
	}
	free(t);
	free(rec);
	hwloc_bitmap_free(all);
	nl_topology_free(topo);
	return 0;
}
