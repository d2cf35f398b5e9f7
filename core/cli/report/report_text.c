/*
 * numalot report: a report's events and advice as text (report_text.h).
 * Strings from the report are shown, control characters escaped: a
 * report is user input and this goes to a terminal.
 */
#include "report_text.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "advice.h"
#include "digest.h"

#define get nl_digest_get
/* Distinct kinds and reasons the digest lists, the most frequent first. */
#define REASONS_SHOWN 8

/* s for a terminal: control characters as \xNN. */
static void put(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static int known(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return json_object_is_type(v, json_type_int);
}

/* "CPU 3 (node 1)", "node 1", or "?" for a part not known. */
static void place(FILE *f, struct json_object *e, const char *cpu,
		  const char *node)
{
	if (known(e, cpu))
		fprintf(f, "CPU %d", json_object_get_int(get(e, cpu)));
	if (known(e, node))
		fprintf(f, known(e, cpu) ? " (node %d)" : "node %d",
			json_object_get_int(get(e, node)));
	if (!known(e, cpu) && !known(e, node))
		fputs("?", f);
}

/* Time 0 of a Slurm step's report: its first task's start (the agent's
 * clock started with the agent), as the HTML page's axis; else 0. */
static double origin_s(struct json_object *r)
{
	struct json_object *pr = get(r, "processes");
	double o = 0;
	int any = 0;
	if (!get(r, "slurm") || !json_object_is_type(pr, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(pr); i++) {
		struct json_object *v =
			get(json_object_array_get_idx(pr, i), "start_s");
		if (json_object_is_type(v, json_type_double) ||
		    json_object_is_type(v, json_type_int)) {
			double t = json_object_get_double(v);
			o = any && o < t ? o : t;
			any = 1;
		}
	}
	return o;
}

static void event_line(FILE *f, struct json_object *e, double origin)
{
	const char *kind = str(e, "kind");
	struct json_object *t = get(e, "t_s");

	fprintf(f, "    %9.3f s  %-8s ", json_object_get_double(t) - origin,
		kind ? kind : "?");
	if (kind && !strcmp(kind, "pages")) {
		fprintf(f, "process %d, ", json_object_get_int(get(e, "pid")));
		place(f, e, "", "from_node");
		fputs(" -> ", f);
		place(f, e, "", "to_node");
		if (get(e, "bytes"))
			fprintf(f, ", %.1f MiB",
				json_object_get_double(get(e, "bytes")) /
					(1 << 20));
	} else {
		fprintf(f, "thread %d", json_object_get_int(get(e, "tid")));
		if (known(e, "other_tid"))
			fprintf(f, " with %d",
				json_object_get_int(get(e, "other_tid")));
		fputs(", ", f);
		place(f, e, "from_cpu", "from_node");
		/* A stay, a skip or a release goes nowhere numalot knows. */
		if (known(e, "to_cpu") || known(e, "to_node")) {
			fputs(" -> ", f);
			place(f, e, "to_cpu", "to_node");
		}
	}
	if (str(e, "reason")) {
		fputs(": ", f);
		put(f, str(e, "reason"));
	}
	fputc('\n', f);
}

struct tally {
	const char *kind, *reason;
	int n;
};

static int by_count(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	return y->n - x->n;
}

void nl_report_events_text(struct json_object *r, FILE *f, int all)
{
	struct json_object *ev = get(r, "events");
	size_t n = json_object_is_type(ev, json_type_array)
			   ? json_object_array_length(ev)
			   : 0;
	struct tally *t;
	size_t nt = 0;

	if (!n)
		return;
	if (all) {
		double o = origin_s(r);
		fprintf(f, "  events (%zu; time since %s):\n", n,
			get(r, "slurm") ? "the step's first task started"
					: "numalot started");
		for (size_t i = 0; i < n; i++)
			event_line(f, json_object_array_get_idx(ev, i), o);
		return;
	}
	if (!(t = calloc(n, sizeof(*t))))
		return;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(ev, i);
		const char *k = str(e, "kind"), *why = str(e, "reason");
		size_t j = 0;
		while (j < nt &&
		       !((t[j].kind == k ||
			  (k && t[j].kind && !strcmp(t[j].kind, k))) &&
			 (t[j].reason == why ||
			  (why && t[j].reason && !strcmp(t[j].reason, why)))))
			j++;
		if (j == nt)
			t[nt++] = (struct tally){k, why, 0};
		t[j].n++;
	}
	qsort(t, nt, sizeof(*t), by_count);
	fprintf(f, "  events by kind and reason (numalot report --events "
		   "lists each):\n");
	for (size_t j = 0; j < nt && j < REASONS_SHOWN; j++) {
		fprintf(f, "    %5d %-8s ", t[j].n,
			t[j].kind ? t[j].kind : "?");
		put(f, t[j].reason ? t[j].reason : "(no reason given)");
		fputc('\n', f);
	}
	if (nt > REASONS_SHOWN)
		fprintf(f, "    ... and %zu other kinds and reasons\n",
			nt - REASONS_SHOWN);
	free(t);
}

void nl_report_advice_text(struct json_object *r, FILE *f)
{
	struct json_object *adv = nl_advice(r);
	size_t n = adv ? json_object_array_length(adv) : 0;
	static const struct {
		const char *key, *label;
	} parts[] = {{"evidence", "evidence"},
		     {"numalot_did", "numalot"},
		     {"next_time", "next time, without numalot"}};

	if (n)
		fprintf(f, "  advice:\n");
	for (size_t i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(adv, i);
		fputs("  - ", f);
		put(f, str(a, "problem"));
		fputs(" [", f);
		put(f, str(a, "rule"));
		fputs("]\n", f);
		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
			fprintf(f, "      %s: ", parts[k].label);
			put(f, str(a, parts[k].key));
			fputc('\n', f);
		}
	}
	json_object_put(adv);
}
