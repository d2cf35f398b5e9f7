/* numalot command line: the helpers the subcommands share (cli.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "run.h"

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

int nl_cli_set_os(const char *cmd, const char *mode, struct nl_run_opts *o)
{
	if (nl_os_mode_from_name(mode, &o->os_mode) < 0) {
		nl_cli_error(
			cmd,
			"unknown operating system model \"%s\" (valid: %s)",
			mode, nl_os_mode_names());
		return -1;
	}
	o->os_set = 1;
	return 0;
}

int nl_cli_model_option(const char *cmd, int c, const char *arg,
			struct nl_run_opts *o, const char **machine)
{
	switch (c) {
	case 'o':
		return nl_cli_set_os(cmd, arg, o) < 0 ? -1 : 1;
	case 'P':
		return nl_cli_param(cmd, &o->params, arg) < 0 ? -1 : 1;
	case 'm':
		*machine = arg;
		return 1;
	}
	return 0;
}

int nl_cli_set_counters(const char *cmd, const char *name,
			struct nl_run_opts *o)
{
	if (nl_sim_counters_from_name(name, &o->counters) < 0) {
		nl_cli_error(cmd, "unknown counter backend \"%s\" (valid: %s)",
			     name, nl_sim_counters_names());
		return -1;
	}
	return 0;
}

void nl_args_start(void)
{
	nl_getopt_start();
}

int nl_args_next(const char *cmd, int argc, char **argv, const char *shortopts,
		 const struct option *longopts)
{
	char prog[64];
	snprintf(prog, sizeof(prog), "numalot%s%s", *cmd ? " " : "", cmd);
	return nl_getopt(prog, stderr, argc, argv, shortopts, longopts);
}
