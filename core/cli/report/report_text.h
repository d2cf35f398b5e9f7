/*
 * numalot report: a report's events and advice as text for a person
 * (numalot(1), docs/advice.md).
 */
#ifndef NUMALOT_CLI_REPORT_TEXT_H
#define NUMALOT_CLI_REPORT_TEXT_H

#include <stdio.h>

struct json_object;

/* Its events: all, one a line (all), or counted by kind and reason, the
 * most frequent first. Nothing when it has none. */
void nl_report_events_text(struct json_object *report, FILE *f, int all);

/* Its advice (advice.h): the problem, the evidence, what numalot did and
 * what to set next time without numalot. Nothing when there is none. */
void nl_report_advice_text(struct json_object *report, FILE *f);

#endif
