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
 * improves, or until max_evals evaluations. The cost of a placement is the
 * sum over processes of the time the slowest thread would take to do its
 * work at the steady-state rates of every process running at once
 * (data placed as the scenario says for threads starting there, or on
 * each thread's node when ideal). A move takes a thread to a free CPU
 * (else a less loaded one) of another node, or to an idle core of its own;
 * a swap exchanges it with a thread of another kind (another process, or
 * thread 0 whose node holds the shared data). Deterministic. *cost gets
 * the final cost; *evals (may be NULL) the evaluations made.
 * Returns 0, -EINVAL or -ENOMEM.
 */
int nl_search_climb(const struct nl_scenario *sc, int ideal, int max_evals,
		    int *cpu, double *cost, int *evals);

#endif
