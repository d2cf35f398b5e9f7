/*
 * numalot: seeded random scenarios, what numalot bench --random runs
 * (docs/scenarios.md, "Random scenarios"). Each is JSON text built with
 * json-c from (seed, index, perturb) alone, always valid: the same text
 * saved to a file loads as the same scenario.
 */
#ifndef NUMALOT_SIM_RANDOM_H
#define NUMALOT_SIM_RANDOM_H

#include <stddef.h>
#include <stdint.h>

struct nl_scenario;

/* --perturb=F: every model constant scaled by a factor in [1-F, 1+F]. */
#define NL_RANDOM_MAX_PERTURB 0.9

/*
 * Scenario index (>= 0) of seed as pretty JSON text (*json_out, malloc'd,
 * the caller frees it). perturb in [0, NL_RANDOM_MAX_PERTURB]: 0 leaves
 * the model's defaults; the machine and processes do not depend on it
 * (but for work, scaled with the drawn peak_ops_per_s). Returns 0, or a
 * negative errno with err saying why.
 */
int nl_random_scenario(uint64_t seed, int index, double perturb,
		       char **json_out, char *err, size_t errlen);

/* The same, parsed by nl_scenario_parse(); json_out may be NULL. */
int nl_random_load(uint64_t seed, int index, double perturb,
		   struct nl_scenario **out, char **json_out, char *err,
		   size_t errlen);

#endif
