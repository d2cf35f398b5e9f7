/* numalot: the command line. A thin main over the engine library. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "version.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: numalot COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  sim SCENARIO.json [--policy=P] [--os=MODE] [--seed=N]\n"
		"                    [--report=FILE] [--param KEY=VALUE ...]\n"
		"      run a scenario on the simulated NUMA node under a "
		"policy\n"
		"      or a baseline (linux, linux-nonuma, best-static,\n"
		"      ideal-locality); MODE: linux (default), linux-nonuma, "
		"none\n"
		"  bench [--policies=LIST] [--seeds=N] [--jobs=N] "
		"[--json=FILE]\n"
		"        [--svg=FILE] [--html=FILE] [--param KEY=VALUE] "
		"[--os=MODE]\n"
		"        [SCENARIO|FOLDER ...]\n"
		"      every scenario (default etc/scenarios/set/) under "
		"every\n"
		"      policy and baseline, compared with linux\n"
		"  run [OPTIONS] -- CMD [ARGS]\n"
		"      start CMD and manage its threads until it exits\n"
		"  attach [OPTIONS] PID...\n"
		"      manage running processes until they exit or "
		"SIGINT/SIGTERM\n"
		"      OPTIONS: --policy=P --period=SECONDS "
		"--counters=auto|papi|\n"
		"      perf|software --report=FILE --param KEY=VALUE --seed=N\n"
		"      --topology=SPEC --children\n"
		"  info [--topology=SPEC] [--json]\n"
		"      topology, counters (and why not), NUMA balancing, "
		"policies\n"
		"  status [--socket=PATH] [--json]\n"
		"      the job steps the node's agent numalotd manages\n"
		"  request [--socket=PATH] JSON\n"
		"      send one protocol request to numalotd "
		"(docs/protocol.md)\n"
		"  report [--html=FILE] [--svg=PREFIX] FILE...\n"
		"      summarise numalot JSON reports; draw them as one page "
		"or SVGs\n"
		"  version           print the version\n"
		"\n"
		"policies: %s\n"
		"See numalot(1) and docs/.\n",
		nl_policy_names());
}

int main(int argc, char **argv)
{
	/* Reports: 10 significant digits, not json-c's 17. */
	json_c_set_serialization_double_format("%.10g", JSON_C_OPTION_GLOBAL);
	if (argc < 2) {
		usage(stderr);
		return NL_EXIT_USAGE;
	}
	if (strcmp(argv[1], "sim") == 0)
		return nl_cmd_sim(argc - 1, argv + 1);
	if (strcmp(argv[1], "bench") == 0)
		return nl_cmd_bench(argc - 1, argv + 1);
	if (strcmp(argv[1], "run") == 0)
		return nl_cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "attach") == 0)
		return nl_cmd_attach(argc - 1, argv + 1);
	if (strcmp(argv[1], "info") == 0)
		return nl_cmd_info(argc - 1, argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return nl_cmd_status(argc - 1, argv + 1);
	if (strcmp(argv[1], "request") == 0)
		return nl_cmd_request(argc - 1, argv + 1);
	if (strcmp(argv[1], "report") == 0)
		return nl_cmd_report(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0 ||
	    strcmp(argv[1], "--version") == 0) {
		printf("numalot %s\n", NUMALOT_VERSION);
		return NL_EXIT_OK;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return NL_EXIT_OK;
	}
	fprintf(stderr,
		"numalot: unknown command \"%s\" (valid: sim, bench, run, "
		"attach, info, "
		"status, request, report, version, help)\n",
		argv[1]);
	return NL_EXIT_USAGE;
}
