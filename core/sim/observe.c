/*
 * numalot: the model's exact counters as a named backend would show them
 * (observe.h, docs/machine-model.md "Counter backends").
 */
#include "observe.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const names[NL_SIM_COUNTERS_COUNT] = {"pebs", "perf",
							 "software"};
static const char *const backends[NL_SIM_COUNTERS_COUNT] = {
	"model-pebs", "model-perf", "model-software"};

const char *nl_sim_counters_name(enum nl_sim_counters c)
{
	return (unsigned)c < NL_SIM_COUNTERS_COUNT ? names[c] : NULL;
}

int nl_sim_counters_from_name(const char *name, enum nl_sim_counters *c)
{
	for (int i = 0; name && i < NL_SIM_COUNTERS_COUNT; i++)
		if (strcmp(name, names[i]) == 0) {
			*c = (enum nl_sim_counters)i;
			return 0;
		}
	return -EINVAL;
}

const char *nl_sim_counters_names(void)
{
	return "pebs, perf, software";
}

const char *nl_sim_counters_backend(enum nl_sim_counters c)
{
	return (unsigned)c < NL_SIM_COUNTERS_COUNT ? backends[c] : NULL;
}

unsigned nl_sim_counters_measured(enum nl_sim_counters c)
{
	unsigned sw = NL_M_TASK_CLOCK | NL_M_CPU;
	unsigned counted = NL_M_INSTRUCTIONS | NL_M_FP_OPS | NL_M_LLC_MISSES;

	switch (c) {
	case NL_SIM_PEBS:
		return sw | counted | NL_M_LATENCY;
	case NL_SIM_PERF:
		return sw | counted;
	default:
		return sw;
	}
}

/* A standard normal draw (Box-Muller). */
static double gauss(struct nl_rng *r)
{
	double u = nl_rng_uniform(r), v = nl_rng_uniform(r);
	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

/* A Poisson draw of mean mu: exact below 30, else the normal's. */
static double poisson(struct nl_rng *r, double mu)
{
	if (!(mu > 0))
		return 0;
	if (mu < 30) {
		double l = exp(-mu), p = 1;
		int k = -1;
		do {
			k++;
			p *= nl_rng_uniform(r);
		} while (p > l);
		return k;
	}
	double k = floor(mu + sqrt(mu) * gauss(r) + 0.5);
	return k > 0 ? k : 0;
}

/* Relative spread of one load's latency about its node's mean. */
#define LATENCY_CV 0.5
/* A thread that ran less than this much CPU time counts as having run
 * this long for the noise (it is bounded, not infinite). */
#define MIN_CPU_S 0.01
#define MAX_SD 0.5

static double counted(struct nl_rng *r, double v, double sd)
{
	double x = v * (1 + sd * gauss(r));
	return v > 0 && x > 0 ? x : 0;
}

void nl_observe(enum nl_sim_counters c, const struct nl_observe_params *p,
		struct nl_rng *r, int nnodes, struct nl_sample *s)
{
	unsigned m = nl_sim_counters_measured(c);
	double cpu = s->task_clock_s > MIN_CPU_S ? s->task_clock_s : MIN_CPU_S;
	double sd = p->noise * sqrt(1.0 / cpu);

	if (sd > MAX_SD)
		sd = MAX_SD;
	s->measured = m;
	if (m & NL_M_INSTRUCTIONS) {
		s->instructions = counted(r, s->instructions, sd);
		s->fp_ops = counted(r, s->fp_ops, sd);
		s->llc_misses = counted(r, s->llc_misses, sd);
	} else {
		s->instructions = s->fp_ops = s->llc_misses = 0;
	}
	for (int j = 0; j < nnodes && j < NL_MAX_NODES; j++) {
		double mean = s->lat_count[j] > 0
				      ? s->lat_sum_ns[j] / s->lat_count[j]
				      : 0;
		double n = 0;
		if ((m & NL_M_LATENCY) && mean > 0 && p->sample_period > 0)
			n = poisson(r, s->access[j] / p->sample_period);
		s->lat_count[j] = n;
		s->lat_sum_ns[j] =
			n > 0 ? n * mean *
					fmax(0.1, 1 + LATENCY_CV / sqrt(n) *
								  gauss(r))
			      : 0;
		s->access[j] = 0; /* no backend sees this */
	}
	s->ctx_switches = s->cpu_migrations = s->page_faults = 0;
}
