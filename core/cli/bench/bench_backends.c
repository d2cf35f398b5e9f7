/*
 * numalot bench: the counter backends it runs (--counters), the output
 * file of each, and the runs --fail-worse catches (docs/evaluation.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli_out.h"
#include "scenario.h"

#define CMD "bench"

/* The backends of list, in order, into c (room for max); how many, or -1
 * after printing why. */
int nl_bench_parse_counters(const char *list, enum nl_sim_counters *c, int max)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int n = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		enum nl_sim_counters k;
		int dup = 0;
		if (nl_sim_counters_from_name(tok, &k) < 0) {
			nl_cli_error(CMD,
				     "--counters: unknown counter backend "
				     "\"%s\" (valid: %s)",
				     tok, nl_sim_counters_names());
			free(copy);
			return -1;
		}
		for (int i = 0; i < n; i++)
			dup |= c[i] == k;
		if (!dup && n < max)
			c[n++] = k;
	}
	free(copy);
	if (n == 0)
		nl_cli_error(CMD, "--counters is empty (valid: %s)",
			     nl_sim_counters_names());
	return n ? n : -1;
}

/* --fail-worse: every run of a policy more than pct % slower than linux
 * (makespan), told on stderr; how many. */
int nl_bench_worse_runs(const struct nl_bench *b, double pct)
{
	int n = 0;

	for (int i = 0; i < b->nscen; i++)
		for (int s = 0; s < b->nseeds; s++)
			for (int p = 0; p < b->npol; p++) {
				enum nl_policy_kind k;
				double x = nl_bench_improvement(
					b, i, s, p, NL_BENCH_MAKESPAN);
				if (!nl_run_engine_policy(b->pol[p], &k) ||
				    !(x < -pct / 100))
					continue;
				fprintf(stderr,
					"numalot %s: %s, %s, seed %d, counters "
					"%s: %.1f%% slower than linux (more "
					"than --fail-worse=%g)\n",
					CMD, nl_scenario_name(b->sc[i]),
					nl_run_name(b->pol[p]), s + 1,
					b->counters, -100 * x, pct);
				n++;
			}
	return n;
}

/* path for backend c when several are run: r.json -> r.perf.json. */
char *nl_bench_output_path(const char *path, enum nl_sim_counters c, int many)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	char *out = NULL;

	if (!many)
		return strdup(path);
	if (!dot || (slash && dot < slash))
		dot = path + strlen(path);
	if (asprintf(&out, "%.*s.%s%s", (int)(dot - path), path,
		     nl_sim_counters_name(c), dot) < 0)
		return NULL;
	return out;
}
