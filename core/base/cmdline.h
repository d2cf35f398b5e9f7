/*
 * numalot: command-line options through getopt_long, with numalot's own
 * messages: an unknown option or a missing value named, with the valid
 * ones (numalot and numalotd share it).
 */
#ifndef NUMALOT_CMDLINE_H
#define NUMALOT_CMDLINE_H

#include <getopt.h>
#include <stdio.h>

/* Start parsing an argv afresh (argv[0] is the program or command). */
void nl_getopt_start(void);

/*
 * The next option, as getopt_long returns it (optarg its value), -1 at
 * the end (optind: the first operand). An unknown option, or one missing
 * its value, is told on err as "PROG: ..." and gives '?'. shortopts: as
 * getopt's, without a leading ':' ("+" first: stop at the first operand).
 */
int nl_getopt(const char *prog, FILE *err, int argc, char **argv,
	      const char *shortopts, const struct option *longopts);

#endif
