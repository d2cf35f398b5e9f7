/* numalot: advice.c's rules and what they share (advice.h). */
#ifndef NUMALOT_ADVICE_PRIV_H
#define NUMALOT_ADVICE_PRIV_H

#include "advice.h"
#include "digest.h"

#include <stddef.h>

#include <json-c/json.h>

#define get nl_digest_get

/* docs/advice.md, "Thresholds". */
#define BUSY_SHARE 0.10	     /* of the time seen on a CPU: a busy thread */
#define OVERSUB_SHARE 0.75   /* busy threads' mean share of a CPU below */
#define DATA_ONE_SHARE 0.75  /* of a process's pages on one node */
#define DATA_AWAY_SHARE 0.25 /* of its busy threads elsewhere */
#define BOUND_LOCALITY 0.50  /* bound pages on the threads' nodes, below */
#define MIN_PAGES 256	     /* a process smaller has no data to speak of */
#define MAX_NODES 64

struct th {
	int tid, pid;
	double t0_s, t1_s, cpu_s, share;
	int busy;
	int cpu0, node0; /* first sampled CPU and its node (-1 unknown) */
	int held;	 /* stayed there until numalot moved it, or ended */
	int migrations;
	double node_s[MAX_NODES];
};

struct ctx {
	struct json_object *r, *out;
	struct th *th;
	int n, nbusy, nodes, cpus, cpu_time; /* cpu_time: task-clock known */
	double period_s; /* policy.params.period, 0 when not known */
};

static inline int is_num(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) ||
	       json_object_is_type(v, json_type_double);
}

static inline double num(struct json_object *v, double dflt)
{
	return is_num(v) ? json_object_get_double(v) : dflt;
}

static inline int inum(struct json_object *v, int dflt)
{
	return json_object_is_type(v, json_type_int) ? json_object_get_int(v)
						     : dflt;
}

static inline size_t len(struct json_object *a)
{
	return json_object_is_type(a, json_type_array)
		       ? json_object_array_length(a)
		       : 0;
}

static inline struct json_object *idx(struct json_object *a, size_t i)
{
	/* json-c asserts on a non-array: a report is user input. */
	return i < len(a) ? json_object_array_get_idx(a, i) : NULL;
}

static inline const char *plural(long n)
{
	return n == 1 ? "" : "s";
}

static inline const char *name_of(struct json_object *p)
{
	const char *s = json_object_get_string(get(p, "name"));
	return s ? s : "?";
}

/* Add an advice to c->out (advice.h). */
void nl_advice_add(struct ctx *c, const char *rule, const char *problem,
		   const char *evidence, const char *did, const char *next);

/* The rules of one process (advice_procs.c). */
void nl_advice_data_on_one_node(struct ctx *c, struct json_object *p);
void nl_advice_memory_bound_away(struct ctx *c, struct json_object *p);
void nl_advice_children_not_followed(struct ctx *c, struct json_object *p);

#endif
