/* numalot command line: shared helpers of the subcommands. */
#ifndef NUMALOT_CLI_H
#define NUMALOT_CLI_H

#include <stdio.h>

#include "cli_out.h"
#include "cmdline.h"
#include "policy.h"

int nl_cmd_sim(int argc, char **argv);
int nl_cmd_bench(int argc, char **argv);
int nl_cmd_run(int argc, char **argv);
int nl_cmd_attach(int argc, char **argv);
int nl_cmd_info(int argc, char **argv);
int nl_cmd_status(int argc, char **argv);
int nl_cmd_request(int argc, char **argv);
int nl_cmd_report(int argc, char **argv);
int nl_cmd_version(int argc, char **argv);
int nl_cmd_calibrate(int argc, char **argv);
int nl_cmd_eval(int argc, char **argv);

/* Apply "KEY=VALUE" to params; prints the error and returns -1 if bad. */
int nl_cli_param(const char *cmd, struct nl_policy_params *p, const char *kv);

/* --os=MODE of sim and bench into o: 0, or -1 (error printed). */
struct nl_run_opts;
int nl_cli_set_os(const char *cmd, const char *mode, struct nl_run_opts *o);
/* The options of a run on the model that sim and bench share (--os,
 * --param, --machine), for their getopt tables. */
/* clang-format off */
#define NL_ARGS_MODEL                                                          \
	{"os", required_argument, NULL, 'o'},                                  \
	{"param", required_argument, NULL, 'P'},                               \
	{"machine", required_argument, NULL, 'm'}
/* clang-format on */
/* Option c of NL_ARGS_MODEL into o and *machine: 1; -1 when bad (told);
 * 0 when c is none of them. */
int nl_cli_model_option(const char *cmd, int c, const char *arg,
			struct nl_run_opts *o, const char **machine);
/* --counters=NAME of sim (one backend of observe.h) into o. */
int nl_cli_set_counters(const char *cmd, const char *name,
			struct nl_run_opts *o);

/* Start parsing a command's options (argv[0] is the command's name). */
void nl_args_start(void);

/* The next option through getopt_long (core/base/cmdline.h): a bad one is
 * told as "numalot CMD: ..." and gives '?'. */
int nl_args_next(const char *cmd, int argc, char **argv, const char *shortopts,
		 const struct option *longopts);

/* The usage of command cmd ("numalot" itself: the list of commands). */
void nl_cli_usage(const char *cmd, FILE *f);

/* --help: the command's usage on stdout. */
#define NL_ARGS_HELP                                                           \
	{                                                                      \
		"help", no_argument, NULL, 'h'                                 \
	}

#endif
