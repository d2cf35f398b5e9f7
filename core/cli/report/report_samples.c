/*
 * numalot report --html / --svg: a thread's placement from its sampled
 * CPUs (threads[].cpus, docs/report-format.md), where the report has
 * them. numalot's own events miss what the OS did (a thread it never
 * moved may have run on two nodes); the samples do not, so the timeline
 * is coloured from them and the events are marks on top.
 */
#include <math.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "report_view.h"

int rv_sampled_segments(const struct rv_report *r, struct rv_thread *t)
{
	size_t n = t->cpus ? json_object_array_length(t->cpus) : 0;
	int any = 0;

	for (size_t k = 0; k < n; k++) {
		struct json_object *e = json_object_array_get_idx(t->cpus, k);
		if (!json_object_is_type(e, json_type_array) ||
		    json_object_array_length(e) < 3)
			continue;
		double t_s = rv_number(json_object_array_get_idx(e, 0));
		double node = rv_number(json_object_array_get_idx(e, 2));
		int nd = node >= 0 && node < r->nnodes && node == floor(node)
				 ? (int)node
				 : -1;
		if (isnan(t_s))
			continue;
		if (!any) {
			/* The events' guess goes: the samples say. */
			free(t->seg);
			t->seg = NULL;
			t->nseg = 0;
			t->first_node = nd;
			any = 1;
			/* Before its first sample: where that found it. */
			t_s = t->t0_s;
		}
		if (rv_add_segment(t, t_s, nd) < 0)
			return -1;
	}
	t->sampled = any;
	return any;
}
