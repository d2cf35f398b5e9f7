/* numalot run / attach: the line they start (attach) and end with. */
#include "run_summary.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "machine.h"

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static long num(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v ? (long)json_object_get_int64(v) : 0;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : "";
}

/* The reason most often given for a move not made (skips, stays, page
 * moves of no bytes), and how often; NULL without one. */
static const char *top_reason(struct json_object *events, long *count)
{
	enum { MAX_REASONS = 32 };
	const char *reason[MAX_REASONS];
	long n[MAX_REASONS] = {0};
	size_t nr = 0, best = 0;
	size_t len = json_object_is_type(events, json_type_array)
			     ? json_object_array_length(events)
			     : 0;

	for (size_t i = 0; i < len; i++) {
		struct json_object *ev = json_object_array_get_idx(events, i);
		const char *kind = str(ev, "kind"), *why = str(ev, "reason");
		size_t k;
		if (!*why || !(!strcmp(kind, "skip") || !strcmp(kind, "stay") ||
			       (!strcmp(kind, "pages") &&
				json_object_get_double(get(ev, "bytes")) <= 0)))
			continue;
		for (k = 0; k < nr && strcmp(reason[k], why); k++)
			;
		if (k == nr && nr == MAX_REASONS)
			continue;
		if (k == nr)
			reason[nr++] = why;
		if (++n[k] > n[best])
			best = k;
	}
	*count = nr ? n[best] : 0;
	return nr ? reason[best] : NULL;
}

/* Why nothing moved, as short as it can be said. */
static void why_still(struct json_object *r, char *buf, size_t len)
{
	struct json_object *sum = get(r, "summary");
	struct json_object *threads = get(r, "threads");
	const char *policy = str(get(r, "policy"), "name");
	long nodes = num(get(r, "machine"), "nodes"), count;
	const char *reason;

	if (!strcmp(policy, "monitor"))
		snprintf(buf, len, "monitor: numalot only watched");
	else if (nodes <= 1)
		snprintf(buf, len, "%ld NUMA node: nothing to migrate between",
			 nodes < 1 ? 1 : nodes);
	else if (num(sum, "periods") == 0)
		snprintf(buf, len, "it ended before numalot's first period");
	else if (!threads || json_object_array_length(threads) == 0)
		snprintf(buf, len, "no thread was taken over");
	else if ((reason = top_reason(get(r, "events"), &count)))
		snprintf(buf, len, "most often: %s (%ld time%s)", reason, count,
			 nl_s(count));
	else if (!strcmp(policy, "static"))
		snprintf(buf, len, "static: threads pinned where they started");
	else
		snprintf(buf, len,
			 "no thread gave numalot a reason to move it");
}

void nl_run_summary(struct json_object *r, char *buf, size_t len)
{
	struct json_object *sum = get(r, "summary");
	struct json_object *procs = get(r, "processes");
	long periods = num(sum, "periods"), mig = num(sum, "migrations");
	long swaps = num(sum, "swaps"), back = num(sum, "rollbacks");
	long moves = mig + swaps + back, page_moves = 0;
	double bytes = 0;
	size_t n = 0;

	for (size_t i = 0; json_object_is_type(procs, json_type_array) &&
			   i < json_object_array_length(procs);
	     i++) {
		struct json_object *pg =
			get(json_object_array_get_idx(procs, i), "pages");
		page_moves += num(pg, "moves");
		bytes += json_object_get_double(get(pg, "moved_bytes"));
	}
#define ADD(...)                                                               \
	do {                                                                   \
		int w = snprintf(buf + n, len - n, __VA_ARGS__);               \
		n = w < 0 || (size_t)w >= len - n ? len - 1 : n + (size_t)w;   \
	} while (0)
	buf[0] = 0;
	if (len < 2)
		return;
	ADD("%ld period%s, %ld thread move%s", periods, nl_s(periods), moves,
	    nl_s(moves));
	if (moves > mig) {
		/* What kinds, when not only migrations. */
		const char *sep = " (";
		if (mig)
			ADD("%s%ld migration%s", sep, mig, nl_s(mig));
		sep = mig ? ", " : sep;
		if (swaps)
			ADD("%s%ld swap%s", sep, swaps, nl_s(swaps));
		sep = mig || swaps ? ", " : sep;
		if (back)
			ADD("%s%ld rollback%s", sep, back, nl_s(back));
		ADD(")");
	}
	ADD(", %ld page move%s", page_moves, nl_s(page_moves));
	if (page_moves)
		ADD(" (%.1f MiB)", bytes / (1024.0 * 1024.0));
	if (moves == 0 && page_moves == 0) {
		char why[256];
		why_still(r, why, sizeof(why));
		ADD(" (%s)", why);
	}
#undef ADD
}

/* Threads of pid now (its /proc/PID/task entries), or -1. */
static long threads_of(int pid)
{
	char path[64];
	struct dirent *d;
	long n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

static void comm_of(int pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

void nl_attach_announce(const char *policy, const struct nl_process_info *p,
			size_t npids, int children)
{
	char list[256] = "", name[32];
	size_t n = 0;
	long threads = 0;

	for (size_t i = 0; i < npids; i++) {
		long t = threads_of(p[i].pid);
		threads += t > 0 ? t : 0;
		if (i < 8 && n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n,
					      "%s%d", i ? ", " : "", p[i].pid);
	}
	if (npids > 8 && n < sizeof(list))
		snprintf(list + n, sizeof(list) - n, ", ...");
	if (npids == 1) {
		comm_of(p[0].pid, name, sizeof(name));
		nl_cli_error("attach",
			     "managing pid %d (%s%s%ld thread%s)%s with %s; "
			     "stop with Ctrl-C (SIGINT) or SIGTERM",
			     p[0].pid, name, *name ? ", " : "", threads,
			     nl_s(threads), children ? " and its children" : "",
			     policy);
	} else {
		nl_cli_error("attach",
			     "managing %zu processes (pids %s; %ld thread%s)%s "
			     "with %s; stop with Ctrl-C (SIGINT) or SIGTERM",
			     npids, list, threads, nl_s(threads),
			     children ? " and their children" : "", policy);
	}
}
