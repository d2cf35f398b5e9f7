/*
 * numalot: machine files, what numalot calibrate writes and sim and bench
 * take with --machine=FILE (docs/scenarios.md, "Machine files"). The
 * machine object is a scenario's; the rest is what was measured, kept
 * for the reader. Unknown fields are errors, as in scenarios.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "machine_file.h"
#include "scenario.h"
#include "util.h"

#define MAX_FILE_BYTES (1 << 20)
#define FORMAT 1

static const char *const keys[] = {"numalot_machine", "description", "machine",
				   "measured", "not_measured"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int check_root(const char *path, struct json_object *root, char *err,
		      size_t errlen)
{
	struct json_object *v;
	char valid[256];

	if (!json_object_is_type(root, json_type_object))
		return nl_errf(err, errlen, -EINVAL,
			       "%s: expected a JSON object (a machine file "
			       "of numalot calibrate)",
			       path);
	nl_names_join(keys, NKEYS, 0, valid, sizeof(valid));
	json_object_object_foreach(root, key, val)
	{
		size_t i = 0;
		(void)val;
		while (i < NKEYS && strcmp(key, keys[i]))
			i++;
		if (i == NKEYS)
			return nl_errf(err, errlen, -EINVAL,
				       "%s: %s: unknown field (valid: %s)",
				       path, key, valid);
	}
	if (!json_object_object_get_ex(root, "numalot_machine", &v))
		return nl_errf(err, errlen, -EINVAL,
			       "%s: numalot_machine: missing (not a machine "
			       "file of numalot calibrate?)",
			       path);
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) != FORMAT)
		return nl_errf(err, errlen, -EINVAL,
			       "%s: numalot_machine: format %s unknown (this "
			       "numalot reads format %d)",
			       path, json_object_to_json_string(v), FORMAT);
	if (json_object_object_get_ex(root, "description", &v) &&
	    !json_object_is_type(v, json_type_string))
		return nl_errf(err, errlen, -EINVAL,
			       "%s: description: expected a string", path);
	for (int k = 3; k < 5; k++)
		if (json_object_object_get_ex(root, keys[k], &v) &&
		    !json_object_is_type(v, json_type_object))
			return nl_errf(err, errlen, -EINVAL,
				       "%s: %s: expected an object", path,
				       keys[k]);
	if (!json_object_object_get_ex(root, "machine", &v))
		return nl_errf(err, errlen, -EINVAL, "%s: machine: missing",
			       path);
	if (!json_object_is_type(v, json_type_object))
		return nl_errf(err, errlen, -EINVAL,
			       "%s: machine: expected an object", path);
	return 0;
}

static struct json_object *parse(const char *path, const char *text, char *err,
				 size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root;
	enum json_tokener_error jerr;
	int line = 1, col = 1;

	if (!tok) {
		nl_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
	jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success) {
		size_t end = json_tokener_get_parse_end(tok);
		for (size_t i = 0; i < end && text[i]; i++, col++)
			if (text[i] == '\n')
				line++, col = 0;
		nl_errf(err, errlen, -EINVAL,
			"%s: malformed JSON at line %d, column %d: %s", path,
			line, col,
			jerr == json_tokener_success
				? "no value"
				: json_tokener_error_desc(jerr));
		json_object_put(root);
		root = NULL;
	}
	json_tokener_free(tok);
	return root;
}

int nl_machine_file_load(const char *path, struct nl_machine_file **out,
			 char *err, size_t errlen)
{
	struct nl_machine_file *mf;
	struct json_object *root, *m;
	char *text, why[128], *slash;
	size_t n;
	int rc;

	*out = NULL;
	rc = nl_read_file(path, MAX_FILE_BYTES, &text, &n, why, sizeof(why));
	if (rc < 0)
		return nl_errf(err, errlen, rc, "machine file %s: %s", path,
			       why);
	root = strlen(text) == n ? parse(path, text, err, errlen) : NULL;
	if (strlen(text) != n)
		nl_errf(err, errlen, -EINVAL, "%s: not a text file (NUL byte)",
			path);
	free(text);
	if (!root)
		return -EINVAL;
	rc = check_root(path, root, err, errlen);
	mf = rc == 0 ? calloc(1, sizeof(*mf)) : NULL;
	if (rc == 0 && mf) {
		json_object_object_get_ex(root, "machine", &m);
		mf->machine = json_object_get(m);
		mf->path = strdup(path);
		mf->dir = strdup(path);
		if (!mf->path || !mf->dir)
			rc = -ENOMEM;
	} else if (rc == 0) {
		rc = -ENOMEM;
	}
	json_object_put(root);
	if (rc == 0) {
		slash = strrchr(mf->dir, '/');
		if (slash)
			*slash = 0;
		else
			strcpy(mf->dir, ".");
		if (slash == mf->dir)
			strcpy(mf->dir, "/");
		/* The machine object as a scenario's, with a process of one
		 * thread: its errors name this file and the field. */
		rc = nl_machine_file_check(mf, err, errlen);
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			nl_errf(err, errlen, rc, "%s: out of memory", path);
		nl_machine_file_free(mf);
		return rc;
	}
	*out = mf;
	return 0;
}

void nl_machine_file_free(struct nl_machine_file *mf)
{
	if (!mf)
		return;
	json_object_put(mf->machine);
	free(mf->path);
	free(mf->dir);
	free(mf);
}
