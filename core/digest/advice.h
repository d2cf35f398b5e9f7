/*
 * numalot: advice from a report (docs/advice.md). What was wrong with a
 * job's placement, what numalot did about it, and what the user could set
 * next time without numalot: a pure function of the report's JSON, so
 * that `numalot report`, its HTML page and the site's log line say the
 * same. No libm: the plugin links it (for the site log) without.
 */
#ifndef NUMALOT_ADVICE_H
#define NUMALOT_ADVICE_H

struct json_object;

/*
 * The advice of one report (docs/report-format.md), a new array, empty
 * when nothing was found wrong, of objects: "rule" (one_cpu, oversubscribed,
 * smt_shared, data_on_one_node, memory_bound_away, children_not_followed),
 * "problem", "evidence", "numalot_did" and "next_time" (plain sentences).
 * A rule whose evidence the report lacks says nothing. NULL only when out
 * of memory.
 */
struct json_object *nl_advice(struct json_object *report);

#endif
