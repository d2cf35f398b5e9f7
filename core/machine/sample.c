/* numalot: counter samples. */
#include "sample.h"

void nl_sample_sum_add(struct nl_sample_sum *a, const struct nl_sample *b,
		       int nnodes)
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
	for (int i = 0; i < nnodes && i < NL_MAX_NODES; i++) {
		a->lat_count[i] += b->lat_count[i];
		a->lat_sum_ns[i] += b->lat_sum_ns[i];
		a->access[i] += b->access[i];
	}
}

void nl_sample_sum_get(const struct nl_sample_sum *a, int nnodes,
		       struct nl_sample *out)
{
	out->measured = a->measured;
	out->wall_s = a->wall_s;
	out->instructions = a->instructions;
	out->fp_ops = a->fp_ops;
	out->llc_misses = a->llc_misses;
	out->task_clock_s = a->task_clock_s;
	out->cpu = a->cpu;
	out->ctx_switches = a->ctx_switches;
	out->cpu_migrations = a->cpu_migrations;
	out->page_faults = a->page_faults;
	for (int i = 0; i < nnodes && i < NL_MAX_NODES; i++) {
		out->lat_count[i] = a->lat_count[i];
		out->lat_sum_ns[i] = a->lat_sum_ns[i];
		out->access[i] = a->access[i];
	}
}

void nl_sample_sum_clear(struct nl_sample_sum *a, int nnodes)
{
	for (int i = 0; i < nnodes && i < NL_MAX_NODES; i++)
		a->lat_count[i] = a->lat_sum_ns[i] = a->access[i] = 0;
	a->measured = 0;
	a->wall_s = a->instructions = a->fp_ops = a->llc_misses = 0;
	a->task_clock_s = a->ctx_switches = a->cpu_migrations = 0;
	a->page_faults = 0;
	a->cpu = -1;
}
