/*
 * numalot: command-line options through getopt_long, with numalot's own
 * messages: an unknown option or a missing value named, with the valid
 * ones (numalot and numalotd share it).
 */
#ifndef NUMALOT_CMDLINE_H
#define NUMALOT_CMDLINE_H

#include <getopt.h>
#include <stdint.h>
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

/* An option's value as a whole number from lo to hi (decimal, nothing
 * else): 0 and *out, or -EINVAL. */
int nl_opt_whole(const char *s, long lo, long hi, long *out);
/* The same from 0 to 2^64 - 1 (decimal digits only, as a seed). */
int nl_opt_u64(const char *s, uint64_t *out);

#endif
