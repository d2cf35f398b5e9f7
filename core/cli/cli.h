/* numalot command line: shared helpers of the subcommands. */
#ifndef NUMALOT_CLI_H
#define NUMALOT_CLI_H

#include "policy.h"

/* Exit statuses: 0 done, 1 failed while running, 2 bad input. */
enum { NL_EXIT_OK = 0, NL_EXIT_FAIL = 1, NL_EXIT_USAGE = 2 };

int nl_cmd_sim(int argc, char **argv);
int nl_cmd_bench(int argc, char **argv);
int nl_cmd_run(int argc, char **argv);
int nl_cmd_attach(int argc, char **argv);
int nl_cmd_info(int argc, char **argv);
int nl_cmd_status(int argc, char **argv);
int nl_cmd_request(int argc, char **argv);
int nl_cmd_report(int argc, char **argv);

/* Print "numalot CMD: message" to stderr. */
void nl_cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * If arg is "--NAME=VALUE" return VALUE; if it is "--NAME" take the next
 * argument (advancing *i). NULL when arg is not that option; sets *missing
 * when the value is absent.
 */
const char *nl_cli_option(const char *name, int argc, char **argv, int *i,
			  int *missing);

/* Apply "KEY=VALUE" to params; prints the error and returns -1 if bad. */
int nl_cli_param(const char *cmd, struct nl_policy_params *p, const char *kv);

/*
 * The options sim and bench share: --param KEY=VALUE and --os=MODE, into o.
 * 1 when argv[*i] was one of them, 0 when not, -1 (error printed) if bad.
 */
struct nl_run_opts;
int nl_cli_run_option(const char *cmd, int argc, char **argv, int *i,
		      struct nl_run_opts *o, int *missing);

/* Write a json-c object to path (pretty, with a final newline). */
struct json_object;
int nl_cli_write_json(const char *cmd, const char *path, struct json_object *o);

#endif
