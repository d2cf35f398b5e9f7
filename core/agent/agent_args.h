/* numalotd's command line (numalotd(8)). */
#ifndef NUMALOT_AGENT_ARGS_H
#define NUMALOT_AGENT_ARGS_H

#include <stdio.h>

#include "agent.h"

/*
 * Parse numalotd's options into c (defaults set by the caller). Returns
 * 0 to run; 1 when done (--help or --version printed on out); 2 for bad
 * input, told on err naming the bad part. Values point into argv.
 */
int nl_agent_args(struct nl_agent_config *c, int argc, char **argv, FILE *out,
		  FILE *err);

/* numalotd's usage. */
void nl_agent_usage(FILE *f);

#endif
