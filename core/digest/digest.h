/*
 * numalot: a report's digest, the few figures a site collects of each
 * step on each node and `numalot report` tabulates per job
 * (docs/report-format.md, "Digest and site log").
 */
#ifndef NUMALOT_DIGEST_H
#define NUMALOT_DIGEST_H

struct json_object;

/* o's member key, or NULL when o is not an object or has none. */
struct json_object *nl_digest_get(struct json_object *o, const char *key);

/*
 * The digest of one report (a new object; a field the report lacks is
 * null or absent, never made up): job, step, node, uid (Slurm reports),
 * policy, error, warning, processes, threads, periods, migrations, swaps,
 * rollbacks, page_moves, pages_moved_bytes, duration_s,
 * cpu_s_per_numa_node, cpu_share_per_numa_node, locality_first,
 * locality_last, pages.
 */
struct json_object *nl_digest(struct json_object *report);

/*
 * Totals over an array of digests (of one job): reports, nodes and steps
 * (how many distinct), the sums of the counts and of CPU time per NUMA
 * node, its shares, and the locality weighted by pages.
 */
struct json_object *nl_digest_totals(struct json_object *digests);

#endif
