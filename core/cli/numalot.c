/* numalot: the command line. A thin main over the engine library. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "version.h"

void nl_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "numalot %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *nl_cli_option(const char *name, int argc, char **argv, int *i,
			  int *missing)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	*missing = 0;
	if (strncmp(a, "--", 2) || strncmp(a + 2, name, n))
		return NULL;
	if (a[2 + n] == '=')
		return a + 3 + n;
	if (a[2 + n])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

int nl_cli_param(const char *cmd, struct nl_policy_params *p, const char *kv)
{
	char key[128], err[1024];
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
		nl_cli_error(cmd, "--param wants KEY=VALUE, not \"%s\"", kv);
		return -1;
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = 0;
	if (nl_policy_param_set(p, key, eq + 1, err, sizeof(err)) < 0) {
		nl_cli_error(cmd, "%s", err);
		return -1;
	}
	return 0;
}

int nl_cli_write_json(const char *cmd, const char *path, struct json_object *o)
{
	FILE *f = fopen(path, "w");
	const char *text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			   JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
		nl_cli_error(cmd, "cannot write %s: %m", path);
		if (f)
			fclose(f);
		return -1;
	}
	if (fclose(f)) {
		nl_cli_error(cmd, "cannot write %s: %m", path);
		return -1;
	}
	return 0;
}

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
