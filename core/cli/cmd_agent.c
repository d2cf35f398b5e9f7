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
	const char *sock = DEFAULT_SOCKET, *v;
	int json = 0, missing;
	struct json_object *r, *steps;

	for (int i = 1; i < argc; i++) {
		if ((v = nl_cli_option("socket", argc, argv, &i, &missing)))
			sock = v;
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else {
			nl_cli_error("status",
				     "unknown option \"%s\" (valid: "
				     "--socket=PATH, --json)",
				     argv[i]);
			return NL_EXIT_USAGE;
		}
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
	const char *sock = DEFAULT_SOCKET, *v, *req = NULL;
	int missing, ok;
	struct json_object *r, *okv;

	for (int i = 1; i < argc; i++) {
		if ((v = nl_cli_option("socket", argc, argv, &i, &missing)))
			sock = v;
		else if (!req && argv[i][0] != '-')
			req = argv[i];
		else {
			nl_cli_error("request", "usage: numalot request "
						"[--socket=PATH] JSON");
			return NL_EXIT_USAGE;
		}
	}
	if (!req) {
		nl_cli_error("request", "usage: numalot request "
					"[--socket=PATH] JSON");
		return NL_EXIT_USAGE;
	}
	if (call("request", sock, req, &r) < 0)
		return NL_EXIT_FAIL;
	printf("%s\n",
	       json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
	ok = json_object_object_get_ex(r, "ok", &okv) &&
	     json_object_get_boolean(okv);
	json_object_put(r);
	return ok ? NL_EXIT_OK : NL_EXIT_FAIL;
}
