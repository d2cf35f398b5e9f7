/* numalot: counter samples. */
#include "sample.h"

void nl_sample_add(struct nl_sample *a, const struct nl_sample *b)
{
	a->measured = a->wall_s > 0 ? (a->measured & b->measured) : b->measured;
	a->wall_s += b->wall_s;
	a->instructions += b->instructions;
	a->fp_ops += b->fp_ops;
	a->llc_misses += b->llc_misses;
	a->task_clock_s += b->task_clock_s;
	a->ctx_switches += b->ctx_switches;
	a->cpu_migrations += b->cpu_migrations;
	a->page_faults += b->page_faults;
	if (b->cpu >= 0)
		a->cpu = b->cpu;
	/* A field whose flag is clear holds 0 (sample.h): nothing to add
	 * by node without latency or node access (the software backend). */
	if (!(b->measured & (NL_M_LATENCY | NL_M_NODE_ACCESS)))
		return;
	for (int i = 0; i < NL_MAX_NODES; i++) {
		a->lat_count[i] += b->lat_count[i];
		a->lat_sum_ns[i] += b->lat_sum_ns[i];
		a->access[i] += b->access[i];
	}
}
