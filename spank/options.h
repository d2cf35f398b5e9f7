/*
 * numalot SPANK plugin: the user's options (--numalot, --numalot-report,
 * --numalot-bindings, --numalot-period), checked against the site's
 * policy as they come (a bad or repeated value fails srun, sbatch or
 * salloc; on the node it is logged and left out), and --numalot=help.
 */
#ifndef NUMALOT_OPTIONS_H
#define NUMALOT_OPTIONS_H

#include <slurm/spank.h>

#include "site.h"

/* What the user asked for, as the option callbacks found it. */
struct nl_user_opts {
	int choice;	   /* --numalot (an nl_choice), or -1 */
	char report[1024]; /* --numalot-report, "" none */
	double period;	   /* --numalot-period, 0 none */
	int bindings;	   /* --numalot-bindings: 1 keep, 0 free, -1 none */
};
extern struct nl_user_opts nl_user;

/* Register the options (slurm_spank_init, in every context); their
 * values are checked against site, which must outlive them. */
void nl_options_register(spank_t sp, const struct nl_site *site);

#endif
