/* numalot SPANK plugin: the site's copy and log line of a step. */
#include "collect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "digest.h"
#include "protocol.h"
#include "rootdir.h"
#include "rwrite.h"
#include "util.h"

/* The site's files: folders 0750, files 0640, written by root. */
#define SITE_DIR_MODE 0750
#define SITE_FILE_MODE 0640

char *nl_site_line(struct json_object *report, const struct nl_collect_ids *id,
		   time_t now)
{
	struct json_object *line = json_object_new_object();
	struct json_object *d = nl_digest(report);
	char ts[32];
	struct tm tm;
	char *out = NULL;

	if (!line || !d) {
		json_object_put(line);
		json_object_put(d);
		return NULL;
	}
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	json_object_object_add(line, "time", json_object_new_string(ts));
	json_object_object_add(line, "cluster",
			       id->cluster && *id->cluster
				       ? json_object_new_string(id->cluster)
				       : NULL);
	json_object_object_add(line, "job", json_object_new_int64(id->job));
	json_object_object_add(line, "step", json_object_new_int64(id->step));
	json_object_object_add(
		line, "node", json_object_new_string(id->node ? id->node : ""));
	json_object_object_add(line, "user",
			       id->user && *id->user
				       ? json_object_new_string(id->user)
				       : NULL);
	json_object_object_add(line, "uid", json_object_new_int64(id->uid));
	/* The digest's figures after who and where (its own ids are the
	 * report's: the line's come from Slurm). */
	json_object_object_foreach(d, key, val)
	{
		if (strcmp(key, "job") && strcmp(key, "step") &&
		    strcmp(key, "node") && strcmp(key, "uid"))
			json_object_object_add(
				line, key, val ? json_object_get(val) : NULL);
	}
	const char *text = json_object_to_json_string_ext(
		line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text && (out = malloc(strlen(text) + 2))) {
		sprintf(out, "%s\n", text);
		/* json-c passes bytes past 0x7f as they are: a job's (the
		 * cluster srun passed) must not make the line invalid. */
		nl_utf8_scrub(out);
	}
	json_object_put(line);
	json_object_put(d);
	return out;
}

int nl_site_copy_path(const char *dir, const struct nl_collect_ids *id,
		      char *out, size_t len)
{
	if (!nl_node_name_ok(id->node))
		return -1;
	int n = snprintf(out, len, "%s/numalot-%u.%u.%s.json", dir, id->job,
			 id->step, id->node);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int write_root(const char *path, const char *text, int append,
		      const struct nl_collect_ids *id)
{
	struct nl_write_as o = {.mode = SITE_FILE_MODE,
				.timeout_ms = 10000,
				.keep_data = 1,
				.append = append,
				.job = id->job,
				.step = id->step};
	return nl_write_report_as(path, text, &o);
}

/* The folder of a site file, checked along its whole path and made
 * when missing: 0, or -1 with why set. */
static int site_dir(const char *dir, char *why, size_t len)
{
	return nl_owned_dir(dir, SITE_DIR_MODE, 0, why, len) < 0 ? -1 : 0;
}

int nl_collect(const struct nl_site *s, const char *text,
	       struct json_object *report, const struct nl_collect_ids *id,
	       void (*complain)(const char *msg))
{
	char path[1024], msg[1400], why[700];
	int bad = 0, rc;

	if (s->report_dir[0]) {
		if (site_dir(s->report_dir, why, sizeof(why)) < 0) {
			snprintf(msg, sizeof(msg),
				 "numalot: cannot write the site copy in %s: "
				 "%s",
				 s->report_dir, why);
			rc = -1;
		} else if (nl_site_copy_path(s->report_dir, id, path,
					     sizeof(path)) < 0) {
			snprintf(msg, sizeof(msg),
				 "numalot: no site copy: the node's name "
				 "\"%.64s\" cannot stand in a file name",
				 id->node ? id->node : "");
			rc = -1;
		} else if ((rc = write_root(path, text, 0, id)) &&
			   rc != EALREADY)
			snprintf(msg, sizeof(msg),
				 "numalot: cannot write the site copy %s: %s",
				 path,
				 rc == EEXIST ? "not root's own regular file"
					      : strerror(rc));
		if (rc && rc != EALREADY) {
			bad++;
			if (complain)
				complain(msg);
		}
	}
	if (s->site_log[0]) {
		char dir[sizeof(s->site_log)];
		snprintf(dir, sizeof(dir), "%s", s->site_log);
		*strrchr(dir, '/') = 0; /* site_log= is absolute */
		char *line = nl_site_line(report, id, time(NULL));
		if (site_dir(dir[0] ? dir : "/", why, sizeof(why)) < 0) {
			snprintf(msg, sizeof(msg),
				 "numalot: cannot append to the site log %s: "
				 "%s",
				 s->site_log, why);
			rc = -1;
		} else if ((rc = line ? write_root(s->site_log, line, 1, id)
				      : ENOMEM))
			snprintf(msg, sizeof(msg),
				 "numalot: cannot append to the site log %s: "
				 "%s",
				 s->site_log,
				 rc == EEXIST ? "not root's own regular file"
					      : strerror(rc));
		free(line);
		if (rc) {
			bad++;
			if (complain)
				complain(msg);
		}
	}
	return bad;
}
