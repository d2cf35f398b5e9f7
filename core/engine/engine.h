/* numalot: the engine's loop: threads, sample, model, policy, place, journal.
 */
#ifndef NUMALOT_ENGINE_H
#define NUMALOT_ENGINE_H

#include <stdint.h>

#include "machine.h"
#include "policy.h"

struct nl_engine;
struct json_object;

int nl_engine_create(struct nl_machine *m, struct nl_engine **out);
void nl_engine_free(struct nl_engine *e);

/*
 * A migration domain (a job): its own policy, parameters, generator seed
 * and journal. Returns 0, -EEXIST, -EINVAL or -ENOMEM.
 */
int nl_engine_add_domain(struct nl_engine *e, int domain, const char *name,
			 enum nl_policy_kind k,
			 const struct nl_policy_params *p, uint64_t seed);
/* Put process pid under domain (its threads are taken over next period). */
int nl_engine_add_process(struct nl_engine *e, int pid, int domain);

/*
 * Step every domain that is due at the machine's current time: refresh
 * threads, sample, model, decide, place, journal. Returns the machine time
 * at which the next domain is due, or a negative errno. A domain of more
 * than about 1,024 threads, on a machine that can read ahead, is read a
 * slice a call: such a call steps nothing and returns the current time
 * (call again, after serving what waits; docs/protocol.md, "Cost").
 */
double nl_engine_step_due(struct nl_engine *e);

/*
 * Step, with the ones due now, the domains due within seconds from now
 * (default: only those due now). Each step costs a pass over every live
 * thread besides its own, so an agent serving many steps steps them in
 * batches: their periods end up in step (docs/protocol.md, "Cost").
 */
void nl_engine_set_due_slack(struct nl_engine *e, double seconds);

/* The machine time at which the next domain is due (INFINITY: none). */
double nl_engine_next_due(const struct nl_engine *e);

/*
 * Run until the machine's managed processes are all done: step, wait,
 * step. Returns 0 or a negative errno.
 */
int nl_engine_run(struct nl_engine *e);

/*
 * Give the domain's threads their affinity back and forget the domain, its
 * processes (machine's forget) and its journal. Returns 0 or -ENOENT.
 */
int nl_engine_remove_domain(struct nl_engine *e, int domain);

/*
 * Stop managing process pid: its threads get their affinity back and are
 * forgotten (with the machine's forget). The domain stays. 0 or -ENOENT.
 */
int nl_engine_remove_process(struct nl_engine *e, int pid);

/*
 * The report of a domain limited to some of its processes (a job step of a
 * job's domain): their processes, threads and events, and counts from
 * those. The policy, counters, machine and periods are the domain's.
 */
struct json_object *nl_engine_report_pids(struct nl_engine *e, int domain,
					  const int *pids, size_t npids);

/* 1 when every process of the domain has ended, 0 if not, -ENOENT. */
int nl_engine_domain_done(struct nl_engine *e, int domain);

/* Number of domains. */
size_t nl_engine_ndomains(const struct nl_engine *e);

/* Give every live managed thread of the domain (-1: all) its affinity back. */
void nl_engine_release(struct nl_engine *e, int domain);

/*
 * The report of one domain as json-c (docs/report-format.md); the caller
 * owns it. NULL for an unknown domain.
 */
struct json_object *nl_engine_report(struct nl_engine *e, int domain);

/* CPU time the engine spent taking new threads in (numalot's own cost,
 * once a thread: docs/real-node.md, "Cost"). */
double nl_engine_takeover_cpu_s(const struct nl_engine *e);

/* How late the periods started past their due time, in seconds:
 * the most and the mean (0 with none). */
void nl_engine_lateness(const struct nl_engine *e, double *max_s,
			double *mean_s);

/* The machine part of a report: topology, nodes, CPUs, distances. */
struct json_object *nl_report_machine(const struct nl_topology *topo);

/* Totals of a domain, for short tables. */
struct nl_engine_summary {
	int periods;
	int migrations;
	int swaps;
	int rollbacks;
	int skips;
	int pins;
	int releases; /* threads handed back to the OS */
	int stays;    /* candidates the draw left where they were */
};
int nl_engine_summary(struct nl_engine *e, int domain,
		      struct nl_engine_summary *out);

#endif
