/*
 * numalot run / attach: what they tell on stderr besides errors
 * (numalot(1)): attach's one line when it starts, and the one line both
 * end with.
 */
#ifndef NUMALOT_RUN_SUMMARY_H
#define NUMALOT_RUN_SUMMARY_H

#include <stddef.h>

struct json_object;
struct nl_process_info;

/*
 * The end's line from a run's report (docs/report-format.md), without the
 * "numalot CMD: " in front: periods, thread moves, page moves and, when
 * nothing moved, why ("12 periods, 0 thread moves, 0 page moves (1 NUMA
 * node: nothing to migrate between)").
 */
void nl_run_summary(struct json_object *report, char *buf, size_t len);

/* attach's line at its start: the processes and their threads now, the
 * policy, and how to stop it. */
void nl_attach_announce(const char *policy, const struct nl_process_info *p,
			size_t n, int children);

#endif
