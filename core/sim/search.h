/*
 * numalot: the search behind the best-static and ideal-locality baselines
 * (docs/machine-model.md, "Baselines"): swap hill-climbing of a fixed
 * placement on the model's steady-state throughput.
 *
 * A placement is one dense CPU per thread of the scenario, threads in tid
 * order (process by process). Nothing here runs time forward.
 */
#ifndef NUMALOT_SIM_SEARCH_H
#define NUMALOT_SIM_SEARCH_H

struct nl_scenario;

/*
 * A packed placement: process by process (last first when reverse), each
 * on as few nodes as it fits (the node with the most free CPUs first, idle
 * cores before SMT siblings), within each process's allowed CPUs.
 * Returns 0 or -ENOMEM.
 */
int nl_search_packed(const struct nl_scenario *sc, int reverse, int *cpu);

/*
 * Climb from cpu (changed in place) to a placement no single move or swap
 * improves, or until max_evals evaluations (the cost and the moves:
 * docs/machine-model.md, "Baselines"; ideal: data on each thread's node).
 * Deterministic. *cost gets the final cost; *evals (may be NULL) the
 * evaluations made. Returns 0, -EINVAL or -ENOMEM.
 */
int nl_search_climb(const struct nl_scenario *sc, int ideal, int max_evals,
		    int *cpu, double *cost, int *evals);

#endif
