/* numalot info: what this node offers numalot, and why not where it does not.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"
#include "counters.h"
#include "engine.h"
#include "real.h"
#include "topology.h"
#include "version.h"

#define CMD "info"

static struct json_object *info_json(const struct nl_topology *t,
				     const struct nl_probe *p)
{
	struct json_object *o = json_object_new_object();
	/* The same machine object as in reports, plus the cores. */
	struct json_object *topo = nl_report_machine(t);
	struct json_object *cnt = json_object_new_object();
	struct json_object *pol = json_object_new_array();

	json_object_object_add(o, "numalot",
			       json_object_new_string(NUMALOT_VERSION));
	json_object_object_add(topo, "cores", json_object_new_int(t->ncores));
	json_object_object_add(o, "machine", topo);
	json_object_object_add(cnt, "perf_event_paranoid",
			       json_object_new_int(p->perf_event_paranoid));
	json_object_object_add(cnt, "pmu",
			       json_object_new_boolean(p->pmu_present));
	json_object_object_add(
		cnt, "auto", json_object_new_string(nl_backend_name(p->best)));
	for (int b = NL_BACKEND_PAPI; b < NL_BACKEND_COUNT; b++) {
		const struct nl_probe_backend *pb = &p->backend[b];
		struct json_object *jb = json_object_new_object();
		struct json_object *ev = json_object_new_array();
		json_object_object_add(jb, "available",
				       json_object_new_boolean(pb->available));
		json_object_object_add(jb, "reason",
				       json_object_new_string(pb->reason));
		for (int i = 0; i < pb->nevents; i++) {
			struct json_object *e = json_object_new_object();
			json_object_object_add(
				e, "name",
				json_object_new_string(pb->events[i].name));
			json_object_object_add(
				e, "available",
				json_object_new_boolean(
					pb->events[i].available));
			json_object_object_add(
				e, "reason",
				json_object_new_string(pb->events[i].reason));
			json_object_array_add(ev, e);
		}
		json_object_object_add(jb, "events", ev);
		json_object_object_add(cnt, nl_backend_name(b), jb);
	}
	json_object_object_add(o, "counters", cnt);
	json_object_object_add(
		o, "numa_balancing",
		p->numa_balancing < 0 ? NULL
				      : json_object_new_int(p->numa_balancing));
	int numad = nl_numad_pid();
	json_object_object_add(o, "numad_pid",
			       numad > 0 ? json_object_new_int(numad) : NULL);
	for (int k = 0; k < NL_POLICY_COUNT; k++)
		json_object_array_add(
			pol, json_object_new_string(nl_policy_name(k)));
	json_object_object_add(o, "policies", pol);
	return o;
}

static void print_text(const struct nl_topology *t, const struct nl_probe *p)
{
	printf("numalot %s\n\ntopology: %s\n", NUMALOT_VERSION, t->source);
	printf("  %d NUMA node%s, %d core%s, %d CPU%s\n", t->nnodes,
	       nl_s(t->nnodes), t->ncores, nl_s(t->ncores), t->ncpus,
	       nl_s(t->ncpus));
	for (int n = 0; n < t->nnodes; n++)
		printf("  node %d: %d CPU%s\n", n, t->node_ncpus[n],
		       nl_s(t->node_ncpus[n]));
	printf("  distances (%s):\n",
	       t->distances_from_os ? "from the machine"
				    : "none given: 10 local, 21 remote");
	for (int i = 0; i < t->nnodes && i < 16; i++) {
		printf("   ");
		for (int j = 0; j < t->nnodes && j < 16; j++)
			printf(" %3u", nl_topology_distance(t, i, j));
		printf("\n");
	}
	if (t->nnodes == 1)
		printf("  one NUMA node: there is nothing to migrate between; "
		       "numalot can only observe (or use --topology to try "
		       "the policies on a described machine)\n");
	printf("\ncounters (perf_event_paranoid %d, hardware PMU %s):\n",
	       p->perf_event_paranoid, p->pmu_present ? "present" : "absent");
	for (int b = NL_BACKEND_PAPI; b < NL_BACKEND_COUNT; b++) {
		const struct nl_probe_backend *pb = &p->backend[b];
		printf("  %-9s %-14s %s\n", nl_backend_name(b),
		       pb->available ? "available" : "not available",
		       pb->reason);
		for (int i = 0; i < pb->nevents; i++)
			printf("      %-28s %-4s %s\n", pb->events[i].name,
			       pb->events[i].available ? "yes" : "no",
			       pb->events[i].reason);
	}
	printf("  --counters=auto picks: %s\n", nl_backend_name(p->best));
	printf("\nautomatic NUMA balancing (kernel.numa_balancing): %s\n",
	       p->numa_balancing < 0	? "unknown (no sysctl)"
	       : p->numa_balancing == 0 ? "off"
					: "on");
	int numad = nl_numad_pid();
	if (numad > 0)
		printf("\nnumad runs (pid %d): numalot lets go of any process "
		       "whose threads numad moves\n",
		       numad);
	else
		printf("\nnumad: not running\n");
	printf("\npolicies: %s\n", nl_policy_names());
}

int nl_cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {
		{"topology", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		NL_ARGS_HELP,
		{0}};
	const char *topo_spec = NULL;
	int json = 0, c;
	struct nl_topology *t;
	struct nl_probe p;
	char err[512];

	nl_args_start();
	while ((c = nl_args_next(CMD, argc, argv, "h", lo)) != -1) {
		if (c == 't')
			topo_spec = optarg;
		else if (c == 'j')
			json = 1;
		else if (c == 'h') {
			nl_cli_usage(CMD, stdout);
			return NL_EXIT_OK;
		} else
			return NL_EXIT_USAGE;
	}
	if (optind < argc) {
		nl_cli_error(CMD, "takes no operand (got \"%s\")",
			     argv[optind]);
		return NL_EXIT_USAGE;
	}
	if (nl_topology_load(topo_spec, &t, err, sizeof(err)) < 0) {
		nl_cli_error(CMD, "%s", err);
		return NL_EXIT_USAGE;
	}
	nl_counters_probe(0, &p);
	if (json) {
		struct json_object *o = info_json(t, &p);
		printf("%s\n",
		       json_object_to_json_string_ext(
			       o, JSON_C_TO_STRING_PRETTY |
					  JSON_C_TO_STRING_SPACED |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		print_text(t, &p);
	}
	nl_topology_free(t);
	return NL_EXIT_OK;
}
