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
	int report_env;	   /* srun: report is the environment's alone */
};
extern struct nl_user_opts nl_user;

/* Register the options (slurm_spank_init, in every context); their
 * values are checked against site, which must outlive them. */
void nl_options_register(spank_t sp, const struct nl_site *site);

/*
 * A --numalot-report of root's job is root's to give: srun takes it from
 * the environment too (SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot_-
 * report), which a user's may reach through sudo -E or su without -, and
 * root writes that report as root. srun puts the value given on its own
 * command line in the job's environment (NUMALOT_REPORT_GIVEN; one from
 * the environment is taken away, and root's srun is refused when an
 * export list carries one); on the node, a job of root's keeps its
 * --numalot-report only when that says the same and the name ends in
 * .json, and goes on as if none had been given otherwise, saying so
 * (docs/slurm.md, "Security"). Call in slurm_spank_init_post_opt, before
 * the report is used; -1: srun, sbatch or salloc must stop.
 */
int nl_options_root_report(spank_t sp);

#endif
