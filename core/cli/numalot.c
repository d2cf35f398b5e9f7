/* numalot: the command line. A thin main over the engine library. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "version.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"sim", nl_cmd_sim},
	{"bench", nl_cmd_bench},
	{"run", nl_cmd_run},
	{"attach", nl_cmd_attach},
	{"info", nl_cmd_info},
	{"status", nl_cmd_status},
	{"request", nl_cmd_request},
	{"report", nl_cmd_report},
	{"calibrate", nl_cmd_calibrate},
	{"eval", nl_cmd_eval},
	{"version", nl_cmd_version},
};

int nl_cmd_version(int argc, char **argv)
{
	static const struct option lo[] = {NL_ARGS_HELP, {0}};
	int c;
	nl_args_start();
	while ((c = nl_args_next("version", argc, argv, "h", lo)) != -1) {
		if (c != 'h')
			return NL_EXIT_USAGE;
		nl_cli_usage("version", stdout);
		return NL_EXIT_OK;
	}
	if (optind < argc) {
		nl_cli_error("version", "takes no operand (got \"%s\")",
			     argv[optind]);
		return NL_EXIT_USAGE;
	}
	printf("numalot %s\n", NUMALOT_VERSION);
	return NL_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		NL_ARGS_HELP, {"version", no_argument, NULL, 'V'}, {0}};
	int c;

	/* Reports: 10 significant digits, not json-c's 17. */
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
	nl_args_start();
	/* numalot's own options, up to the command ('+'). */
	while ((c = nl_args_next("", argc, argv, "+h", lo)) != -1) {
		if (c == 'h') {
			nl_cli_usage("numalot", stdout);
			return NL_EXIT_OK;
		}
		if (c == 'V') {
			printf("numalot %s\n", NUMALOT_VERSION);
			return NL_EXIT_OK;
		}
		nl_cli_usage("numalot", stderr);
		return NL_EXIT_USAGE;
	}
	if (optind >= argc) {
		nl_cli_usage("numalot", stderr);
		return NL_EXIT_USAGE;
	}
	const char *cmd = argv[optind];
	if (!strcmp(cmd, "help")) {
		nl_cli_usage(optind + 1 < argc ? argv[optind + 1] : "numalot",
			     stdout);
		return NL_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - optind, argv + optind);
	fprintf(stderr,
		"numalot: unknown command \"%s\" (valid: sim, bench, run, "
		"attach, info, status, request, report, calibrate, eval, "
		"version, "
		"help)\n",
		cmd);
	return NL_EXIT_USAGE;
}
