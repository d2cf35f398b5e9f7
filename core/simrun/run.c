/*
 * numalot: a scenario under a policy or a baseline (run.h), and the set of
 * runs of one scenario and seed that the baselines build on.
 */
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "machine.h"
#include "sim.h"
#include "scenario.h"
#include "search.h"
#include "util.h"

/*
 * Evaluations per climb, a bound so that a search always ends quickly
 * (an evaluation takes some 10 us for 64 threads on 8 nodes). The climbs
 * of the scenario set settle in under 2000. docs/machine-model.md.
 */
#define SEARCH_EVALS 20000
/* The machine's clock advances by this much per wait of a baseline. */
#define WAIT_S 1.0

/* Every policy of the registry, the baselines, the paper runs. */
static const char *const run_names[NL_RUN_COUNT] = {
#define NL_POLICY(id, name, where, about, hooks)                               \
	[NL_POLICY_##id] = name,                                               \
	[NL_RUN_PAPER + NL_POLICY_##id] =                                      \
		(where)&NL_POLICY_PAPER ? name "-paper" : NULL,
#include "policy_list.h"
#undef NL_POLICY
	[NL_RUN_LINUX] = "linux",
	[NL_RUN_LINUX_NONUMA] = "linux-nonuma",
	[NL_RUN_BEST_STATIC] = "best-static",
	[NL_RUN_IDEAL_LOCALITY] = "ideal-locality",
};

static int is_run(enum nl_run_kind k)
{
	return (unsigned)k < NL_RUN_COUNT && run_names[k];
}

const char *nl_run_name(enum nl_run_kind k)
{
	return is_run(k) ? run_names[k] : "?";
}

int nl_run_from_name(const char *name, enum nl_run_kind *k)
{
	for (int i = 0; name && i < NL_RUN_COUNT; i++)
		if (run_names[i] && strcmp(name, run_names[i]) == 0) {
			*k = (enum nl_run_kind)i;
			return 0;
		}
	return -EINVAL;
}

const char *nl_run_names(void)
{
	static char buf[3 * 16 * NL_RUN_COUNT + 8];
	char part[3][16 * NL_RUN_COUNT];

	if (buf[0])
		return buf;
	nl_names_join(run_names, NL_POLICY_COUNT, 1, part[0], sizeof(part[0]));
	nl_names_join(run_names + NL_POLICY_COUNT,
		      NL_RUN_PAPER - NL_POLICY_COUNT, 0, part[1],
		      sizeof(part[1]));
	nl_names_join(run_names + NL_RUN_PAPER, NL_POLICY_COUNT, 1, part[2],
		      sizeof(part[2]));
	snprintf(buf, sizeof(buf), "%s, %s%s%s", part[0], part[1],
		 part[2][0] ? ", " : "", part[2]);
	return buf;
}

int nl_run_engine_policy(enum nl_run_kind k, enum nl_policy_kind *p)
{
	if (!is_run(k) || (k >= NL_RUN_LINUX && k < NL_RUN_PAPER))
		return 0;
	*p = (enum nl_policy_kind)(k < NL_RUN_PAPER ? k : k - NL_RUN_PAPER);
	return 1;
}

int nl_run_profile(enum nl_run_kind k, enum nl_profile *pr)
{
	if (!is_run(k) || k < NL_RUN_PAPER)
		return 0;
	*pr = NL_PROFILE_PAPER;
	return 1;
}

void nl_run_opts_default(struct nl_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	nl_policy_params_default(&o->params);
	o->search_evals = SEARCH_EVALS;
}

void nl_run_result_free(struct nl_run_result *r)
{
	if (!r)
		return;
	free(r->start_s);
	free(r->end_s);
	free(r->final_cpu);
	memset(r, 0, sizeof(*r));
}

static void machine_opts(const struct nl_run_opts *o, struct nl_model_opts *mo)
{
	memset(mo, 0, sizeof(*mo));
	mo->os_set = o->os_set;
	mo->os_mode = o->os_mode;
	mo->counters = o->counters;
}

int nl_run_engine(const struct nl_scenario *sc, enum nl_policy_kind k,
		  const struct nl_run_opts *o, uint64_t seed,
		  struct nl_machine **m, struct nl_engine **e, char *err,
		  size_t errlen)
{
	const struct nl_process_info *p;
	struct nl_model_opts mo;
	int *jobs = NULL, rc;
	size_t n, njobs = 0;

	*e = NULL;
	machine_opts(o, &mo);
	mo.trace_s = o->trace_s;
	mo.trace = o->trace;
	rc = nl_sim_create_opts(sc, seed, &mo, m, err, errlen);
	if (rc < 0)
		return rc;
	rc = (*m)->ops->processes(*m, &p, &n);
	if (rc == 0)
		rc = nl_engine_create(*m, e);
	jobs = calloc(n + 1, sizeof(int));
	if (!jobs)
		rc = -ENOMEM;
	else if (rc == 0)
		njobs = nl_process_jobs(p, n, jobs);
	/* One domain per job of the scenario, each under the policy. */
	for (size_t j = 0; rc == 0 && j < njobs; j++) {
		char name[32];

		snprintf(name, sizeof(name), "job %d", jobs[j]);
		rc = nl_engine_add_domain(*e, jobs[j], name, k, &o->params,
					  seed + (uint64_t)jobs[j]);
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = nl_engine_add_process(*e, p[i].pid, p[i].job);
	free(jobs);
	if (rc == 0)
		rc = nl_engine_run(*e);
	if (rc < 0 && err && errlen)
		snprintf(err, errlen, "simulation failed: %s", strerror(-rc));
	return rc;
}

/* Thread moves numalot made (a swap moves two threads), or -ENOMEM. */
static int engine_moves(struct nl_engine *e, const struct nl_process_info *p,
			size_t n)
{
	int moves = 0, *jobs = calloc(n + 1, sizeof(int));
	size_t njobs;

	if (!jobs)
		return -ENOMEM;
	njobs = nl_process_jobs(p, n, jobs);
	for (size_t j = 0; j < njobs; j++) {
		struct nl_engine_summary s;

		if (nl_engine_summary(e, jobs[j], &s) == 0)
			moves += s.migrations + 2 * s.swaps + s.rollbacks;
	}
	free(jobs);
	return moves;
}

int nl_run_result_fill(struct nl_machine *m, struct nl_engine *e,
		       struct nl_run_result *r)
{
	const struct nl_process_info *p;
	struct nl_sim_stats st;
	double now = m->ops->now(m), sum = 0;
	size_t n;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = nl_sim_stats(m, &st, NULL);
	if (rc == 0)
		rc = m->ops->processes(m, &p, &n);
	if (rc < 0)
		return rc;
	r->nprocs = (int)n;
	r->nthreads = st.nthreads;
	r->start_s = calloc(n + 1, sizeof(double));
	r->end_s = calloc(n + 1, sizeof(double));
	r->final_cpu = calloc((size_t)st.nthreads + 1, sizeof(int));
	if (!r->start_s || !r->end_s || !r->final_cpu) {
		nl_run_result_free(r);
		return -ENOMEM;
	}
	r->stop_s = now;
	for (size_t i = 0; i < n; i++) {
		double end = p[i].end_s >= 0 ? p[i].end_s : now;

		r->start_s[i] = p[i].start_s;
		r->end_s[i] = p[i].end_s;
		if (p[i].end_s < 0)
			r->unfinished++;
		if (end > r->makespan_s)
			r->makespan_s = end;
		sum += end - r->start_s[i];
	}
	r->mean_completion_s = n ? sum / (double)n : 0;
	nl_sim_stats(m, &st, r->final_cpu);
	r->migrations = e ? engine_moves(e, p, n) : 0;
	if (r->migrations < 0) {
		rc = r->migrations;
		nl_run_result_free(r);
		return rc;
	}
	r->os_migrations = st.os_moves;
	r->pages_migrated_bytes = st.pages_migrated_bytes;
	r->pages_moved_bytes = st.pages_moved_bytes;
	return 0;
}

/* A run without the engine: the OS alone, maybe on a fixed placement. */
static int run_plain(const struct nl_scenario *sc, uint64_t seed,
		     const struct nl_model_opts *mo, struct nl_run_result *r,
		     char *err, size_t errlen)
{
	struct nl_machine *m;
	int rc = nl_sim_create_opts(sc, seed, mo, &m, err, errlen);

	if (rc < 0)
		return rc;
	while ((rc = m->ops->wait(m, WAIT_S)) > 0)
		;
	if (rc == 0)
		rc = nl_run_result_fill(m, NULL, r);
	nl_machine_destroy(m);
	return rc;
}

struct nl_runs {
	const struct nl_scenario *sc;
	uint64_t seed;
	struct nl_run_opts o;
	int done[NL_RUN_COUNT];
	struct nl_run_result res[NL_RUN_COUNT];
};

int nl_runs_create(const struct nl_scenario *sc, uint64_t seed,
		   const struct nl_run_opts *o, struct nl_runs **out)
{
	struct nl_runs *rs = calloc(1, sizeof(*rs));

	*out = NULL;
	if (!rs)
		return -ENOMEM;
	rs->sc = sc;
	rs->seed = seed;
	if (o)
		rs->o = *o;
	else
		nl_run_opts_default(&rs->o);
	if (rs->o.search_evals < 1)
		rs->o.search_evals = SEARCH_EVALS;
	*out = rs;
	return 0;
}

void nl_runs_free(struct nl_runs *rs)
{
	if (!rs)
		return;
	for (int k = 0; k < NL_RUN_COUNT; k++)
		nl_run_result_free(&rs->res[k]);
	free(rs);
}

/* a is better than b: shorter makespan, then shorter mean completion. */
static int better(const struct nl_run_result *a, const struct nl_run_result *b)
{
	if (a->makespan_s != b->makespan_s)
		return a->makespan_s < b->makespan_s;
	return a->mean_completion_s < b->mean_completion_s;
}

/* Move src into dst (dst freed first). */
static void take(struct nl_run_result *dst, struct nl_run_result *src)
{
	nl_run_result_free(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

/*
 * Climb from each start and run each distinct result pinned from its
 * start (data as the scenario says, or on the threads' nodes when ideal);
 * keep the best run in *best, which may already hold a candidate.
 */
static int climb_and_run(struct nl_runs *rs, int ideal, int *const *starts,
			 int nstarts, struct nl_run_result *best, char *err,
			 size_t errlen)
{
	int n = 0, rc = 0;
	int **seen = calloc((size_t)nstarts + 1, sizeof(int *));
	size_t bytes;
	struct nl_model_opts mo;

	if (!seen)
		return -ENOMEM;
	for (int i = 0; i < nl_scenario_nprocs(rs->sc); i++) {
		struct nl_scenario_proc p;
		nl_scenario_proc(rs->sc, i, &p);
		n += p.nthreads;
	}
	bytes = sizeof(int) * (size_t)n;
	machine_opts(&rs->o, &mo);
	mo.ideal_locality = ideal;
	for (int s = 0; s < nstarts && rc == 0; s++) {
		struct nl_run_result r;
		double cost;
		int dup = 0;

		seen[s] = malloc(bytes + sizeof(int));
		if (!seen[s]) {
			rc = -ENOMEM;
			break;
		}
		memcpy(seen[s], starts[s], bytes);
		rc = nl_search_climb(rs->sc, ideal, rs->o.search_evals, seen[s],
				     &cost, NULL);
		for (int j = 0; rc == 0 && j < s && !dup; j++)
			dup = memcmp(seen[j], seen[s], bytes) == 0;
		if (rc < 0 || dup)
			continue;
		mo.start_cpu = seen[s];
		rc = run_plain(rs->sc, rs->seed, &mo, &r, err, errlen);
		if (rc == 0 && (!best->end_s || better(&r, best)))
			take(best, &r);
		nl_run_result_free(&r);
	}
	for (int s = 0; s < nstarts; s++)
		free(seen[s]);
	free(seen);
	return rc;
}

int nl_run_result_copy(struct nl_run_result *dst,
		       const struct nl_run_result *src)
{
	size_t np = (size_t)src->nprocs + 1, nt = (size_t)src->nthreads + 1;

	*dst = *src;
	dst->start_s = malloc(np * sizeof(double));
	dst->end_s = malloc(np * sizeof(double));
	dst->final_cpu = malloc(nt * sizeof(int));
	if (!dst->start_s || !dst->end_s || !dst->final_cpu) {
		nl_run_result_free(dst);
		return -ENOMEM;
	}
	memcpy(dst->start_s, src->start_s, np * sizeof(double));
	memcpy(dst->end_s, src->end_s, np * sizeof(double));
	memcpy(dst->final_cpu, src->final_cpu, nt * sizeof(int));
	return 0;
}

/*
 * best-static: climbs from static's placement (fork balancing, pinned),
 * the final placements of imar2, lbma and linux, and two packed ones
 * (processes in order and in reverse);
 * the static run itself is a candidate too (it is a fixed placement), so
 * best-static is never worse than static.
 */
static int run_best_static(struct nl_runs *rs, struct nl_run_result *out,
			   char *err, size_t errlen)
{
	static const enum nl_run_kind from[] = {NL_RUN_STATIC, NL_RUN_IMAR2,
						NL_RUN_LBMA, NL_RUN_LINUX};
	const struct nl_run_result *r;
	int *starts[6], *packed[2] = {NULL, NULL}, rc = 0, ns = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]) && rc == 0; i++) {
		rc = nl_runs_get(rs, from[i], &r, err, errlen);
		if (rc == 0)
			starts[ns++] = r->final_cpu;
	}
	if (rc < 0)
		return rc;
	rc = nl_runs_get(rs, NL_RUN_STATIC, &r, err, errlen);
	if (rc == 0)
		rc = nl_run_result_copy(out, r);
	if (rc < 0)
		return rc;
	out->migrations = 0;
	for (int i = 0; i < 2 && rc == 0; i++) {
		packed[i] = calloc((size_t)r->nthreads + 1, sizeof(int));
		rc = packed[i] ? nl_search_packed(rs->sc, i, packed[i])
			       : -ENOMEM;
		starts[ns++] = packed[i];
	}
	if (rc == 0)
		rc = climb_and_run(rs, 0, starts, ns, out, err, errlen);
	free(packed[0]);
	free(packed[1]);
	return rc;
}

/*
 * ideal-locality: climbs, with data on every thread's node, from
 * best-static's placement and a packed one; best-static itself is a
 * candidate too (an ideal memory placement may leave data where it is),
 * so ideal-locality is never worse than best-static.
 */
static int run_ideal(struct nl_runs *rs, struct nl_run_result *out, char *err,
		     size_t errlen)
{
	const struct nl_run_result *bs;
	int *starts[2], rc;

	memset(out, 0, sizeof(*out));
	rc = nl_runs_get(rs, NL_RUN_BEST_STATIC, &bs, err, errlen);
	if (rc == 0)
		rc = nl_run_result_copy(out, bs);
	if (rc < 0)
		return rc;
	starts[0] = bs->final_cpu;
	starts[1] = calloc((size_t)bs->nthreads + 1, sizeof(int));
	if (!starts[1])
		return -ENOMEM;
	rc = nl_search_packed(rs->sc, 0, starts[1]);
	if (rc == 0)
		rc = climb_and_run(rs, 1, starts, 2, out, err, errlen);
	free(starts[1]);
	return rc;
}

int nl_runs_get(struct nl_runs *rs, enum nl_run_kind k,
		const struct nl_run_result **out, char *err, size_t errlen)
{
	struct nl_run_result r;
	struct nl_model_opts mo;
	enum nl_policy_kind pk;
	int rc;

	if (err && errlen)
		*err = 0;
	if (!is_run(k))
		return -EINVAL;
	if (rs->done[k]) {
		*out = &rs->res[k];
		return 0;
	}
	memset(&r, 0, sizeof(r));
	if (nl_run_engine_policy(k, &pk)) {
		struct nl_machine *m = NULL;
		struct nl_engine *e = NULL;

		struct nl_run_opts o = rs->o;
		enum nl_profile pr;
		if (nl_run_profile(k, &pr))
			nl_policy_params_profile(&o.params, pr);
		rc = nl_run_engine(rs->sc, pk, &o, rs->seed, &m, &e, err,
				   errlen);
		if (rc == 0)
			rc = nl_run_result_fill(m, e, &r);
		nl_engine_free(e);
		nl_machine_destroy(m);
	} else if (k == NL_RUN_LINUX || k == NL_RUN_LINUX_NONUMA) {
		memset(&mo, 0, sizeof(mo));
		mo.os_set = 1;
		mo.os_mode =
			k == NL_RUN_LINUX ? NL_OS_LINUX : NL_OS_LINUX_NONUMA;
		/* linux is the run's own Linux model when one is asked for. */
		if (k == NL_RUN_LINUX && rs->o.os_set &&
		    rs->o.os_mode == NL_OS_LINUX_IDEAL)
			mo.os_mode = NL_OS_LINUX_IDEAL;
		mo.trace_s = rs->o.trace_s;
		mo.trace = rs->o.trace;
		rc = run_plain(rs->sc, rs->seed, &mo, &r, err, errlen);
	} else if (k == NL_RUN_BEST_STATIC) {
		rc = run_best_static(rs, &r, err, errlen);
	} else {
		rc = run_ideal(rs, &r, err, errlen);
	}
	if (rc < 0) {
		nl_run_result_free(&r);
		if (err && errlen && !*err)
			snprintf(err, errlen, "%s: %s", nl_run_name(k),
				 strerror(-rc));
		return rc;
	}
	rs->res[k] = r;
	rs->done[k] = 1;
	*out = &rs->res[k];
	return 0;
}
