/*
 * numalot: what a named counter backend would show of the model's exact
 * counters (docs/machine-model.md, "Counter backends"). No backend sees a
 * thread's exact share of accesses by node: software sees CPU time and the
 * CPU, perf adds counted events, pebs adds sparse load-latency samples.
 */
#ifndef NUMALOT_SIM_OBSERVE_H
#define NUMALOT_SIM_OBSERVE_H

#include "rng.h"
#include "sample.h"

enum nl_sim_counters {
	NL_SIM_PEBS,	 /* counted events and sampled loads (PEBS, IBS) */
	NL_SIM_PERF,	 /* counted events only (perf, PAPI) */
	NL_SIM_SOFTWARE, /* the kernel's software events (no PMU) */
	NL_SIM_COUNTERS_COUNT
};

/* "pebs", "perf", "software"; NULL for a bad value. */
const char *nl_sim_counters_name(enum nl_sim_counters c);
/* 0 and *c, or -EINVAL for an unknown name. */
int nl_sim_counters_from_name(const char *name, enum nl_sim_counters *c);
/* "pebs, perf, software" */
const char *nl_sim_counters_names(void);
/* The machine's backend name in reports: "model-pebs", ... */
const char *nl_sim_counters_backend(enum nl_sim_counters c);
/* enum nl_measured bits the backend fills. */
unsigned nl_sim_counters_measured(enum nl_sim_counters c);

/* What shapes the noise (model parameters, docs/machine-model.md). */
struct nl_observe_params {
	double noise;	      /* counting noise over one CPU second */
	double sample_period; /* LLC misses per load-latency sample */
};

/*
 * Turn the model's exact counters of one interval, in s, into what backend
 * c shows, drawing from r: fields the backend lacks are cleared, counted
 * events get noise that grows as the thread ran less, and latency samples
 * are drawn (Poisson) with a mean latency as noisy as their number makes
 * it.
 */
void nl_observe(enum nl_sim_counters c, const struct nl_observe_params *p,
		struct nl_rng *r, int nnodes, struct nl_sample *s);

#endif
