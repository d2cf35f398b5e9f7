/* numalot status / request: talk to the node's agent numalotd. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "protocol.h"

#define DEFAULT_SOCKET "/run/numalot/numalotd.sock"

static int call(const char *cmd, const char *sock, const char *req,
		struct json_object **reply)
{
	char *text;
	int rc = nl_proto_call(sock, req, &text, 5000, 0);
	if (rc < 0) {
		if (rc == -ENOENT || rc == -ECONNREFUSED)
			nl_cli_error(cmd,
				     "no agent at %s: %s; start one with "
				     "`numalotd` (as root), or as the "
				     "service the packages install but do "
				     "not enable: `systemctl enable --now "
				     "numalotd.socket`",
				     sock, strerror(-rc));
		else
			nl_cli_error(cmd, "no agent answers at %s: %s", sock,
				     strerror(-rc));
		return -1;
	}
	*reply = json_tokener_parse(text);
	if (!*reply)
		nl_cli_error(cmd, "the agent's reply is not JSON: %.200s",
			     text);
	free(text);
	return *reply ? 0 : -1;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v)
						   : "";
}

/* numalot status [--socket=PATH] [--json] */
int nl_cmd_status(int argc, char **argv)
{
	static const struct option lo[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		NL_ARGS_HELP,
		{0}};
	const char *sock = DEFAULT_SOCKET;
	int json = 0, c;
	struct json_object *r, *steps;

	nl_args_start();
	while ((c = nl_args_next("status", argc, argv, "h", lo)) != -1) {
		if (c == 's')
			sock = optarg;
		else if (c == 'j')
			json = 1;
		else if (c == 'h') {
			nl_cli_usage("status", stdout);
			return NL_EXIT_OK;
		} else
			return NL_EXIT_USAGE;
	}
	if (optind < argc) {
		nl_cli_error("status", "takes no operand (got \"%s\")",
			     argv[optind]);
		return NL_EXIT_USAGE;
	}
	if (call("status", sock, "{\"v\":1,\"op\":\"status\"}", &r) < 0)
		return NL_EXIT_FAIL;
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(
				       r, JSON_C_TO_STRING_PRETTY |
						  JSON_C_TO_STRING_SPACED));
	} else if (json_object_object_get_ex(r, "steps", &steps)) {
		printf("%-10s %-10s %-8s %6s %8s\n", "job", "step", "uid",
		       "tasks", "periods");
		for (size_t i = 0; i < json_object_array_length(steps); i++) {
			struct json_object *s =
				json_object_array_get_idx(steps, i);
			printf("%-10s %-10s %-8s %6s %8s\n", jstr(s, "job"),
			       jstr(s, "step"), jstr(s, "uid"),
			       jstr(s, "tasks"), jstr(s, "periods"));
		}
	} else {
		nl_cli_error("status", "%s", jstr(r, "message"));
	}
	json_object_put(r);
	return NL_EXIT_OK;
}

/* numalot request [--socket=PATH] JSON: one raw request, the raw reply. */
int nl_cmd_request(int argc, char **argv)
{
	static const struct option lo[] = {
		{"socket", required_argument, NULL, 's'}, NL_ARGS_HELP, {0}};
	const char *sock = DEFAULT_SOCKET, *req = NULL;
	int ok, c;
	struct json_object *r, *okv;

	nl_args_start();
	while ((c = nl_args_next("request", argc, argv, "h", lo)) != -1) {
		if (c == 's')
			sock = optarg;
		else if (c == 'h') {
			nl_cli_usage("request", stdout);
			return NL_EXIT_OK;
		} else
			return NL_EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		nl_cli_error("request",
			     "%s (usage: numalot request [--socket=PATH] JSON)",
			     optind < argc ? "one request at a time"
					   : "no request given");
		return NL_EXIT_USAGE;
	}
	req = argv[optind];
	if (call("request", sock, req, &r) < 0)
		return NL_EXIT_FAIL;
	printf("%s\n",
	       json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
	ok = json_object_object_get_ex(r, "ok", &okv) &&
	     json_object_get_boolean(okv);
	json_object_put(r);
	return ok ? NL_EXIT_OK : NL_EXIT_FAIL;
}
