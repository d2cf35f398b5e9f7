/* numalot: 3DyRM performance, records and relative performance
 * (docs/algorithms.md). */
#include "perf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int nl_perf_compute(const struct nl_sample *s, const struct nl_perf_params *p,
		    int nnodes, struct nl_perf *out)
{
	unsigned m = s->measured;
	double lat_n = 0, lat_sum = 0, best = 0;
	double ops;

	memset(out, 0, sizeof(*out));
	out->preferred_node = -1;
	if (!(s->wall_s > 0))
		return -ENODATA;

	if (m & NL_M_TASK_CLOCK)
		out->cpu_share = s->task_clock_s / s->wall_s;

	/* ops: instructions plus width-weighted FP ops (docs/algorithms.md). */
	if (m & NL_M_INSTRUCTIONS) {
		ops = s->instructions + ((m & NL_M_FP_OPS) ? s->fp_ops : 0);
		out->ops_per_s = ops / s->wall_s;
		out->terms |= NL_T_OPS;
		out->perf = pow(out->ops_per_s, p->beta);
		if ((m & NL_M_LLC_MISSES) && s->llc_misses > 0 && ops > 0) {
			out->oi = ops / (s->llc_misses * p->line_bytes);
			out->terms |= NL_T_OI;
			out->perf *= pow(out->oi, p->gamma);
		}
	} else if (m & NL_M_TASK_CLOCK) {
		/* No PMU: the CPU share is all we know of progress. */
		out->terms |= NL_T_CPU_SHARE;
		out->perf = out->cpu_share;
	} else {
		return -ENODATA;
	}

	double total = 0;
	for (int i = 0; i < nnodes && i < NL_MAX_NODES; i++) {
		double a;
		lat_n += s->lat_count[i];
		lat_sum += s->lat_sum_ns[i];
		a = (m & NL_M_LATENCY)	     ? s->lat_count[i]
		    : (m & NL_M_NODE_ACCESS) ? s->access[i]
					     : 0;
		out->share[i] = a;
		total += a;
		if (a > best) {
			best = a;
			out->preferred_node = i;
		}
	}
	for (int i = 0; total > 0 && i < nnodes && i < NL_MAX_NODES; i++)
		out->share[i] /= total;
	if ((m & NL_M_LATENCY) && lat_n > 0 && lat_sum > 0) {
		out->latency_ns = lat_sum / lat_n;
		out->terms |= NL_T_LATENCY;
		out->perf /= pow(out->latency_ns, p->alpha);
	}
	return 0;
}

void nl_record_clear(struct nl_record *r)
{
	memset(r, 0, sizeof(*r));
}

void nl_record_note(struct nl_record *r, int node, double perf, double t_s)
{
	int k = -1;

	if (node < 0 || node >= NL_MAX_NODES)
		return;
	for (int i = 0; i < NL_RECORD_SLOTS && k < 0; i++)
		if (r->node[i] == node + 1)
			k = i;
	for (int i = 0; i < NL_RECORD_SLOTS && k < 0; i++)
		if (r->node[i] == 0)
			k = i;
	if (k < 0) { /* full: the oldest note makes room */
		k = 0;
		for (int i = 1; i < NL_RECORD_SLOTS; i++)
			if (r->t_s[i] < r->t_s[k])
				k = i;
	}
	r->node[k] = (unsigned char)(node + 1);
	r->perf[k] = perf;
	r->t_s[k] = t_s;
}

double nl_record_weight(const struct nl_perf_params *p, double age_s)
{
	if (age_s <= p->record_keep_s)
		return 1.0;
	return exp(-(age_s * age_s * age_s) / p->record_decay_s3);
}

int nl_record_get(const struct nl_record *r, const struct nl_perf_params *p,
		  int node, double now_s, double *value)
{
	double w;
	int k = -1;

	if (!r || node < 0 || node >= NL_MAX_NODES)
		return 0;
	for (int i = 0; i < NL_RECORD_SLOTS && k < 0; i++)
		if (r->node[i] == node + 1)
			k = i;
	if (k < 0)
		return 0;
	w = nl_record_weight(p, now_s - r->t_s[k]);
	if (w < p->record_min_weight)
		return 0;
	*value = r->perf[k] * w;
	return 1;
}

struct group_key {
	int group;
	int index;
};

static int cmp_group(const void *a, const void *b)
{
	const struct group_key *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->index - y->index;
}

void nl_perf_relative(const double *perf, const int *group,
		      const unsigned char *has, int n, double *rel)
{
	struct group_key *k = malloc(sizeof(*k) * (size_t)(n > 0 ? n : 1));
	int i = 0;

	for (int j = 0; j < n; j++)
		rel[j] = 1.0;
	if (!k)
		return;
	int sorted = 1;
	for (int j = 0; j < n; j++) {
		k[j] = (struct group_key){group[j], j};
		sorted &= j == 0 || group[j - 1] <= group[j];
	}
	/* Most often the threads come grouped already (one process, or
	 * processes' threads in tid order): in cmp_group's order as built. */
	if (!sorted)
		qsort(k, (size_t)n, sizeof(*k), cmp_group);
	while (i < n) {
		int end = i, count = 0;
		double sum = 0;
		while (end < n && k[end].group == k[i].group) {
			if (has[k[end].index]) {
				sum += perf[k[end].index];
				count++;
			}
			end++;
		}
		for (int j = i; count && sum > 0 && j < end; j++)
			if (has[k[j].index])
				rel[k[j].index] =
					perf[k[j].index] / (sum / count);
		i = end;
	}
	free(k);
}
