/* Test helper: build policy views by hand. */
#ifndef NUMALOT_TEST_VIEWUTIL_H
#define NUMALOT_TEST_VIEWUTIL_H

#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "topology.h"

#define VU_MAX 256

struct vu {
	struct nl_topology *topo;
	struct nl_view_thread t[VU_MAX];
	hwloc_bitmap_t allowed[VU_MAX];
	struct nl_record rec[VU_MAX];
	struct nl_view v;
	int n;
};

static inline void vu_init(struct vu *u, const char *topo)
{
	memset(u, 0, sizeof(*u));
	if (nl_topology_load(topo, &u->topo, NULL, 0) != 0)
		abort();
}

/* Add a pinned, measured thread of domain 0 allowed everywhere. */
static inline struct nl_view_thread *vu_add(struct vu *u, int tid, int pid,
					    int cpu, double perf)
{
	int i = u->n++;
	u->allowed[i] = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(u->allowed[i], 0, (int)u->topo->ncpus - 1);
	nl_record_clear(&u->rec[i]);
	u->t[i] = (struct nl_view_thread){
		.tid = tid,
		.pid = pid,
		.domain = 0,
		.cpu = cpu,
		.pinned = 1,
		.has_perf = 1,
		.perf = perf,
		.rel_perf = 1.0,
		.preferred_node = -1,
		.left_node = -1,
		.record = &u->rec[i],
		.allowed = u->allowed[i],
	};
	return &u->t[i];
}

static inline struct nl_view *vu_view(struct vu *u, double now_s)
{
	u->v = (struct nl_view){.topo = u->topo,
				.threads = u->t,
				.nthreads = u->n,
				.domain = 0,
				.now_s = now_s};
	return &u->v;
}

static inline void vu_free(struct vu *u)
{
	for (int i = 0; i < u->n; i++)
		hwloc_bitmap_free(u->allowed[i]);
	nl_topology_free(u->topo);
}

#endif
