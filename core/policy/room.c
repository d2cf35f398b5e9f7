/*
 * numalot: room for a thread its limit crowds (docs/algorithms.md, "Making
 * room"). A thread that shares its CPU while every CPU it may use is busy
 * gets a CPU of its limit whose one thread may use a free CPU elsewhere:
 * that thread goes there first, as the kernel's balancer does for tasks
 * whose affinity blocks it (its group_imbalance), but with a thread
 * numalot pinned, which the kernel cannot move.
 */
#include "policy_priv.h"

#include <stdlib.h>

/* Busy threads on the core of cpu. */
static int core_busy(const struct step *st, int cpu)
{
	const struct nl_topology *topo = st->v->topo;
	int n = 0;
	for (int c = 0; c < topo->ncpus; c++)
		if (topo->cpu_core[c] == topo->cpu_core[cpu])
			for (int u = st->head[c]; u >= 0; u = st->next[u])
				n++;
	return n;
}

/* Distance of node `to` from the node thread u's data is on (its own
 * node when that is unknown). */
static unsigned from_data(const struct step *st, int u, int to)
{
	const struct nl_view_thread *t = &st->v->threads[u];
	const struct nl_topology *topo = st->v->topo;
	int home = t->preferred_node >= 0 ? t->preferred_node
					  : topo->cpu_node[st->cpu[u]];
	return nl_topology_distance(topo, home, to);
}

/*
 * A free CPU for u, the sole thread on d: on an idle core, nearest u's
 * data, its own node first on a tie; -1 when only a busy core's sibling
 * or a node farther from its data than d is left (it would lose by the
 * move what the crowded thread gains).
 */
static int free_cpu_for(const struct step *st, int u, int d)
{
	const struct nl_topology *topo = st->v->topo;
	const struct nl_view_thread *t = &st->v->threads[u];
	unsigned here = from_data(st, u, topo->cpu_node[d]), best_dist = 0;
	int best = -1;
	for (int c = 0; c < topo->ncpus; c++) {
		unsigned dist;
		if (st->head[c] >= 0 || !nl_step_allows(t, c) ||
		    core_busy(st, c) > 0)
			continue;
		dist = from_data(st, u, topo->cpu_node[c]);
		if (dist > here && !nl_step_compute_bound(st, u))
			continue;
		if (best < 0 || dist < best_dist ||
		    (dist == best_dist &&
		     topo->cpu_node[c] == topo->cpu_node[d] &&
		     topo->cpu_node[best] != topo->cpu_node[d])) {
			best = c;
			best_dist = dist;
		}
	}
	return best;
}

static int plan_move(struct step *st, int i, int to, const char *reason)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	int rc = nl_plan_add(st->plan, &(struct nl_action){
					       .kind = NL_ACT_MIGRATE,
					       .tid = t->tid,
					       .other_tid = -1,
					       .from_cpu = st->cpu[i],
					       .to_cpu = to,
					       .relief = 1,
					       .reason = reason,
				       });
	st->moved[i] = 1;
	nl_step_occ_move(st, i, to);
	return rc;
}

/* Room for thread i, crowded with no free CPU of its own: 1 when made. */
static int room_for(struct step *st, int i, int *rc)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	const struct nl_topology *topo = st->v->topo;
	int s = st->cpu[i];

	for (int pass = 0; pass < 2; pass++)
		for (int d = 0; d < topo->ncpus; d++) {
			int u = st->head[d], f;
			/* Its own node first, then any CPU of its limit. */
			if (d == s || !nl_step_allows(t, d) ||
			    (pass == 0 &&
			     topo->cpu_node[d] != topo->cpu_node[s]))
				continue;
			if (u < 0 || st->next[u] >= 0 || u == i ||
			    !nl_step_in_domain(st, u) || st->moved[u] ||
			    st->v->threads[u].held ||
			    st->v->threads[u].pid == t->pid ||
			    core_busy(st, d) > 1)
				continue;
			f = free_cpu_for(st, u, d);
			if (f < 0)
				continue;
			*rc = plan_move(st, u, f,
					"made room for a thread its limit "
					"crowded: to a free CPU near its data");
			if (*rc == 0)
				*rc = plan_move(
					st, i, d,
					"shared its CPU, its limit full: "
					"to the CPU made free");
			return 1;
		}
	return 0;
}

int nl_make_room(struct step *st)
{
	int rc = 0;
	for (int i = 0; i < st->v->nthreads && rc == 0; i++) {
		if (!nl_step_in_domain(st, i) || st->cpu[i] < 0 ||
		    st->moved[i] || !nl_step_crowded(st, i) ||
		    nl_step_free_cpu(st, i))
			continue;
		room_for(st, i, &rc);
	}
	return rc;
}
