/*
 * numalot: tests of the random scenarios (core/sim/random.c): every one
 * parses, the same (seed, index) gives the same text, and a few hundred
 * cover what docs/scenarios.md ("Random scenarios") says is drawn;
 * --perturb keeps the model constants in range and changes nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model.h"
#include "random.h"
#include "scenario.h"

#define PER_SEED 200

/* What a set of scenarios covered. */
struct seen {
	unsigned nodes; /* bit n: a machine of n nodes */
	int smt2, smt4, apart, adjacent, packages, memonly;
	int over, under, full;
	int cpunodebind, membind, interleave_list, preferred, node, cpus,
		start_node, jobs, staggered, overrides;
	int general, paper[4];
	int max_threads;
};

static struct nl_scenario *load(uint64_t seed, int i, double f, char **text)
{
	struct nl_scenario *sc = NULL;
	char err[1024] = "";

	if (nl_random_load(seed, i, f, &sc, text, err, sizeof(err)) < 0)
		fail_msg("seed %llu index %d: %s", (unsigned long long)seed, i,
			 err);
	assert_non_null(sc);
	return sc;
}

/* SMT width of the topology, and whether a core's PUs have consecutive
 * OS numbers. */
static int smt_of(const struct nl_topology *t, int *adjacent)
{
	int width = t->ncpus / t->ncores;

	*adjacent = 0;
	for (int c = 0; c + 1 < t->ncpus; c++)
		if (t->cpu_core[c] == t->cpu_core[c + 1] &&
		    abs(t->cpu_os[c] - t->cpu_os[c + 1]) == 1)
			*adjacent = 1;
	return width;
}

static int overridden(const struct nl_proc_spec *p)
{
	const struct nl_kind *k = nl_kind_find(p->kind.name);

	return p->kind.peak_fraction != k->peak_fraction ||
	       p->kind.bytes_per_op != k->bytes_per_op ||
	       p->kind.mlp != k->mlp ||
	       p->kind.shared_fraction != k->shared_fraction;
}

static void note(struct seen *s, const struct nl_scenario *sc)
{
	static const char *const paper[] = {"direct", "ind", "interleave",
					    "spread"};
	const struct nl_topology *t = nl_scenario_topology(sc);
	int adjacent, smt = smt_of(t, &adjacent), threads = 0, jobs = 0;

	assert_in_range(t->nnodes, 2, 8);
	s->nodes |= 1u << t->nnodes;
	s->smt2 += smt == 2;
	s->smt4 += smt == 4;
	if (smt > 1) {
		s->apart += !adjacent;
		s->adjacent += adjacent;
	}
	s->packages += strncmp(sc->topology_spec, "pack:", 5) == 0;
	for (int n = 0; n < t->nnodes; n++)
		if (t->node_ncpus[n] == 0) {
			s->memonly++;
			break;
		}
	for (int n = 0; n < t->nnodes; n++)
		for (int m = 0; m < t->nnodes; m++) {
			unsigned d = nl_topology_distance(t, n, m);
			assert_int_equal(d, nl_topology_distance(t, m, n));
			if (n == m)
				assert_int_equal(d, 10);
			else
				assert_in_range(d, 11, 40);
		}
	for (int i = 0; i < sc->nprocs; i++) {
		const struct nl_proc_spec *p = &sc->procs[i];
		threads += p->nthreads;
		s->cpunodebind += p->cpu_nodes != 0;
		s->membind += p->placement == NL_PLACE_BIND;
		s->interleave_list +=
			p->placement == NL_PLACE_INTERLEAVE && p->mem_nodes;
		s->node += p->placement == NL_PLACE_NODE;
		s->cpus += p->cpus != NULL;
		s->start_node += p->start_node >= 0;
		jobs |= p->job > 0;
		s->staggered += p->start_s > 0;
		s->overrides += overridden(p);
		/* Work below the kind's: runs stay short. */
		assert_true(p->kind.work_ops <=
			    nl_kind_find(p->kind.name)->work_ops);
	}
	assert_in_range(sc->nprocs, 1, 5);
	s->jobs += jobs;
	s->over += threads > t->ncpus;
	s->under += threads < t->ncpus;
	s->full += threads == t->ncpus;
	if (threads > s->max_threads)
		s->max_threads = threads;
	s->general += strcmp(nl_scenario_class(sc), "general") == 0;
	for (int c = 0; c < 4; c++)
		s->paper[c] += strcmp(nl_scenario_class(sc), paper[c]) == 0;
}

static void test_parse_cover_repeat(void **state)
{
	struct seen s = {0};
	char *first = NULL;

	(void)state;
	for (uint64_t seed = 1; seed <= 2; seed++)
		for (int i = 0; i < PER_SEED; i++) {
			char *a, *b, err[256];
			struct nl_scenario *sc = load(seed * 977, i, 0, &a);

			assert_int_equal(nl_random_scenario(seed * 977, i, 0,
							    &b, err,
							    sizeof(err)),
					 0);
			assert_string_equal(a, b);
			assert_non_null(strstr(a, "\"name\": \"rand-"));
			note(&s, sc);
			if (!first)
				first = a;
			else if (i == 0)
				/* Another seed, another scenario. */
				assert_string_not_equal(first, a);
			if (a != first)
				free(a);
			free(b);
			nl_scenario_free(sc);
		}
	free(first);
	for (int n = 2; n <= 8; n++)
		if (!(s.nodes >> n & 1))
			fail_msg("no machine of %d nodes", n);
	assert_true(s.smt2 > 0 && s.smt4 > 0);
	assert_true(s.apart > s.adjacent && s.adjacent > 0);
	assert_true(s.packages > 0 && s.memonly > 0);
	assert_true(s.over > 0 && s.under > 0 && s.full > 0);
	/* Mostly not oversubscribed. */
	assert_true(s.over < s.under);
	assert_true(s.cpunodebind > 0 && s.membind > 0 &&
		    s.interleave_list > 0 && s.node > 0 && s.cpus > 0 &&
		    s.start_node > 0 && s.jobs > 0 && s.staggered > 0 &&
		    s.overrides > 0);
	assert_true(s.general > 2 * PER_SEED / 2);
	for (int c = 0; c < 4; c++)
		assert_true(s.paper[c] > 0);
	assert_true(s.max_threads <= 2 * 512);
}

static double param(const struct nl_scenario *sc, const struct nl_param_desc *d)
{
	return *(const double *)((const char *)&sc->params + d->offset);
}

static int is_numerics(const char *name)
{
	static const char *const fixed[] = {"tick_s", "noise",
					    "fixed_point_rounds", "damping",
					    "latency_sample_period"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strcmp(name, fixed[i]) == 0)
			return 1;
	return 0;
}

/* Perturbed constants: in their ranges, within the factor, most of them
 * changed; the machine and processes but the work the same as without. */
static void test_perturb(void **state)
{
	static const double fs[] = {0.2, 0.9};
	int changed = 0, total = 0;

	(void)state;
	for (size_t k = 0; k < 2; k++)
		for (int i = 0; i < 40; i++) {
			struct nl_scenario *a = load(5, i, 0, NULL);
			struct nl_scenario *b = load(5, i, fs[k], NULL);

			assert_string_equal(a->topology_spec, b->topology_spec);
			assert_int_equal(a->nprocs, b->nprocs);
			for (int p = 0; p < a->nprocs; p++) {
				assert_int_equal(a->procs[p].nthreads,
						 b->procs[p].nthreads);
				assert_int_equal(a->procs[p].placement,
						 b->procs[p].placement);
			}
			for (size_t j = 0; j < nl_model_nparams; j++) {
				const struct nl_param_desc *d =
					&nl_model_param_descs[j];
				double v = param(b, d);
				assert_true(v >= d->lo && v <= d->hi);
				assert_true(param(a, d) == d->def);
				if (is_numerics(d->name)) {
					assert_true(v == d->def);
					continue;
				}
				assert_true(v >= d->def * (1 - fs[k]) * 0.999);
				assert_true(v <= d->def * (1 + fs[k]) * 1.001);
				changed += v != d->def;
				total++;
			}
			assert_true(b->params.smt_share >= 0.5 &&
				    b->params.smt_share <= 1);
			nl_scenario_free(a);
			nl_scenario_free(b);
		}
	assert_true(changed > total * 9 / 10);
}

static void test_bad_arguments(void **state)
{
	char *text = (char *)1, err[256];

	(void)state;
	assert_int_equal(
		nl_random_scenario(1, 0, -0.1, &text, err, sizeof(err)),
		-EINVAL);
	assert_null(text);
	assert_non_null(strstr(err, "perturb"));
	assert_int_equal(
		nl_random_scenario(1, 0, 0.95, &text, err, sizeof(err)),
		-EINVAL);
	assert_int_equal(nl_random_scenario(1, 0, NAN, &text, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(nl_random_scenario(1, -1, 0, &text, err, sizeof(err)),
			 -EINVAL);
	/* The largest seed is a seed like any other. */
	assert_int_equal(nl_random_scenario(UINT64_MAX, 9999, 0.9, &text, err,
					    sizeof(err)),
			 0);
	assert_non_null(strstr(text, "rand-18446744073709551615-9999-"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_cover_repeat),
		cmocka_unit_test(test_perturb),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
