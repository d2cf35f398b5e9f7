/* numalot: tests of scenario files (core/sim/scenario.c). Run from the
 * repository root: data files are found relative to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "machine.h"
#include "model.h"
#include "jsontext.h"
#include "scenario.h"

#define XML_TOPOLOGY "tests/data/2n4c-slit.xml"

static const char *const shipped[] = {
	"etc/scenarios/two-node-remote.json",
	"etc/scenarios/four-node-mix.json",
	"etc/scenarios/master-init.json",
	"etc/scenarios/eight-node-jobs.json",
	"etc/scenarios/smt-oversubscribed.json",
};

static struct nl_scenario *parse_ok(const char *text, const char *base_dir)
{
	struct nl_scenario *sc = NULL;
	char err[512] = "";

	if (nl_scenario_parse(json(text), "t.json", base_dir, &sc, err,
			      sizeof(err)) < 0)
		fail_msg("unexpected error: %s", err);
	assert_non_null(sc);
	return sc;
}

/* Every shipped scenario loads and runs a little. */
static void test_shipped_scenarios(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		struct nl_scenario *sc = NULL;
		struct nl_machine *m = NULL;
		char err[512] = "";
		const char *base = strrchr(shipped[i], '/') + 1;

		if (nl_scenario_load(shipped[i], &sc, err, sizeof(err)) < 0)
			fail_msg("%s", err);
		assert_int_equal(
			strncmp(nl_scenario_name(sc), base, strlen(base) - 5),
			0);
		assert_int_equal(nl_sim_create(sc, 1, &m, err, sizeof(err)), 0);
		assert_int_equal(m->ops->wait(m, 1.0), 1);
		nl_machine_destroy(m);
		nl_scenario_free(sc);
	}
}

/* A scenario using every field: each value lands where it should. */
static void test_every_field(void **state)
{
	struct nl_scenario *sc = parse_ok(
		"{'name': 'all', 'description': 'd', 'duration_s': 90,"
		" 'machine': {'topology': 'numa:2 core:4 pu:2',"
		"  'distances': [[10, 32], [32, 10]], 'contention_k': 0.5,"
		"  'rho_cap': 0.9, 'tick_s': 0.005, 'fixed_point_rounds': 3},"
		" 'processes': ["
		"  {'name': 'a', 'kind': 'stream', 'threads': 3, 'job': 7,"
		"   'placement': 'node:1', 'start_s': 2.5, 'start_node': 0,"
		"   'cpus': '0-7', 'work': 1e9, 'peak_fraction': 0.9,"
		"   'bytes_per_op': 2, 'mlp': 3, 'shared_fraction': 0.5,"
		"   'fp_fraction': 0, 'mem_bytes': 1e6},"
		"  {'kind': 'latency', 'threads': 1, 'placement': "
		"'interleave'},"
		"  {'kind': 'mixed', 'threads': 2, 'placement': 'master'},"
		"  {'kind': 'compute', 'threads': 2, 'placement': "
		"'first-touch'}"
		"]}",
		NULL);
	const struct nl_proc_spec *p = &sc->procs[0];

	(void)state;
	assert_string_equal(nl_scenario_name(sc), "all");
	assert_true(nl_scenario_duration(sc) == 90);
	assert_int_equal(nl_scenario_topology(sc)->nnodes, 2);
	assert_int_equal(nl_topology_distance(sc->topo, 0, 1), 32);
	assert_true(sc->params.contention_k == 0.5);
	assert_true(sc->params.rho_cap == 0.9);
	assert_true(sc->params.tick_s == 0.005);
	assert_true(sc->params.fixed_point_rounds == 3);
	assert_true(sc->params.peak_ops_per_s == 4e9); /* default */
	assert_int_equal(sc->nprocs, 4);
	assert_string_equal(p->name, "a");
	assert_string_equal(p->kind.name, "stream");
	assert_int_equal(p->nthreads, 3);
	assert_int_equal(p->job, 7);
	assert_int_equal(p->placement, NL_PLACE_NODE);
	assert_int_equal(p->placement_node, 1);
	assert_true(p->start_s == 2.5);
	assert_int_equal(p->start_node, 0);
	assert_string_equal(p->cpus, "0-7");
	assert_true(p->kind.work_ops == 1e9);
	assert_true(p->kind.peak_fraction == 0.9);
	assert_true(p->kind.bytes_per_op == 2);
	assert_true(p->kind.mlp == 3);
	assert_true(p->kind.shared_fraction == 0.5);
	assert_true(p->kind.fp_fraction == 0);
	assert_true(p->kind.mem_bytes == 1e6);
	/* Defaults: the kind's values, fork balancing, first-touch. */
	assert_string_equal(sc->procs[1].name, "latency-1");
	assert_true(sc->procs[1].kind.mlp == nl_kind_find("latency")->mlp);
	assert_int_equal(sc->procs[1].start_node, -1);
	assert_null(sc->procs[1].cpus);
	assert_int_equal(sc->procs[1].placement, NL_PLACE_INTERLEAVE);
	assert_int_equal(sc->procs[2].placement, NL_PLACE_MASTER);
	assert_int_equal(sc->procs[3].placement, NL_PLACE_FIRST_TOUCH);
	nl_scenario_free(sc);
}

struct bad {
	const char *text;
	const char *error; /* the whole message, or its start with ... */
};

#define M2 "'machine': {'topology': 'numa:2 core:4 pu:1'}"
#define P1 "'processes': [{'kind': 'latency', 'threads': 2}]"

static const struct bad bad_inputs[] = {
	{"{" M2 ", " P1,
	 "t.json: malformed JSON at line 1, column 97: unexpected end of data"},
	{"", "t.json: malformed JSON at line 1, column 1..."},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1'},\n 'processes': "
	 "[{'kind': 'latency', 'threads': 2,}]}",
	 "t.json: malformed JSON at line 2..."},
	{"{" M2 ", " P1 "} x", "t.json: malformed JSON..."},
	{"[]", "t.json: expected a JSON object, got array"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2}, "
	 "{'kind': 'foo', 'threads': 1}]}",
	 "t.json: processes[1].kind: unknown kind \"foo\" (valid: compute, "
	 "stream, latency, mixed)"},
	{"{" M2 ", 'processes': [{'threads': 1}]}",
	 "t.json: processes[0].kind: missing (valid: compute, stream, "
	 "latency, mixed)"},
	{"{" M2 ", 'processes': [{'kind': 7, 'threads': 1}]}",
	 "t.json: processes[0].kind: expected a string, got int"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 0}]}",
	 "t.json: processes[0].threads: must be from 1 to 999, got 0"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': -4}]}",
	 "t.json: processes[0].threads: must be from 1 to 999, got -4"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': '4'}]}",
	 "t.json: processes[0].threads: expected an integer, got string"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2.5}]}",
	 "t.json: processes[0].threads: expected an integer, got 2.5"},
	{"{" M2 ", 'processes': [{'kind': 'latency'}]}",
	 "t.json: processes[0].threads: missing"},
	{"{'machine': {}, " P1 "}", "t.json: machine.topology: missing..."},
	{"{" P1 "}", "t.json: machine: missing"},
	{"{'machine': [], " P1 "}",
	 "t.json: machine: expected an object, got array"},
	{"{'machine': {'topology': 'numa:2 core:4 banana:3'}, " P1 "}",
	 "t.json: machine.topology: invalid synthetic description..."},
	{"{'machine': {'topology': 'no-such-file.xml'}, " P1 "}",
	 "t.json: machine.topology: cannot read XML file..."},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', "
	 "'local_latency_ns': -5}, " P1 "}",
	 "t.json: machine.local_latency_ns: must be > 0 and <= 100000, got "
	 "-5"},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', 'rho_cap': 1}, " P1
	 "}",
	 "t.json: machine.rho_cap: must be from 0 to 0.999, got 1"},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', 'noise': true}, " P1
	 "}",
	 "t.json: machine.noise: expected a number, got boolean"},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', "
	 "'fixed_point_rounds': 2.5}, " P1 "}",
	 "t.json: machine.fixed_point_rounds: expected an integer, got 2.5"},
	{"{'machine': {'toplogy': 'numa:2 core:4 pu:1'}, " P1 "}",
	 "t.json: machine.toplogy: unknown field (valid: topology, "
	 "distances, and the model parameters in docs/machine-model.md)"},
	{"{" M2 ", " P1 ", 'duraton_s': 5}",
	 "t.json: duraton_s: unknown field (valid: name, description, "
	 "class, machine, os, duration_s, processes)"},
	{"{" M2 ", " P1 ", 'os': 'windows'}",
	 "t.json: os: unknown operating system model \"windows\" (valid: "
	 "linux, linux-ideal, linux-nonuma, none)"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'trheads': 2}]}",
	 "t.json: processes[0].trheads: unknown field (valid: name, kind, "
	 "threads, ..."},
	{"{" M2 ", " P1 ", 'duration_s': 0}",
	 "t.json: duration_s: must be > 0 and <= 1000000000, got 0"},
	{"{" M2 ", 'processes': []}",
	 "t.json: processes: expected 1 to 1000 processes, got 0"},
	{"{" M2 ", 'processes': {}}",
	 "t.json: processes: expected an array, got object"},
	{"{" M2 "}", "t.json: processes: missing"},
	{"{" M2 ", 'processes': [3]}",
	 "t.json: processes[0]: expected an object, got int"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'placement': 'node:7'}]}",
	 "t.json: processes[0].placement: node 7 out of range (the machine "
	 "has 2 NUMA nodes)"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'placement': 'node:x'}]}",
	 "t.json: processes[0].placement: bad node in \"node:x\"..."},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'placement': 'spread'}]}",
	 "t.json: processes[0].placement: unknown placement \"spread\" "
	 "(valid: first-touch, master, interleave, node:N, bind:N)"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'start_node': 2}]}",
	 "t.json: processes[0].start_node: must be from 0 to 1, got 2"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'cpus': '0-3', 'start_node': 1}]}",
	 "t.json: processes[0].start_node: node 1 has none of the "
	 "process's CPUs"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'cpus': '0-99'}]}",
	 "t.json: processes[0].cpus: \"0-99\" is not a list of this "
	 "machine's CPUs (OS numbers 0-7)"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'cpus': 'all'}]}",
	 "t.json: processes[0].cpus: \"all\" is not a list..."},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'peak_fraction': 1.5}]}",
	 "t.json: processes[0].peak_fraction: must be > 0 and <= 1, got "
	 "1.5"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'mlp': 0.5}]}",
	 "t.json: processes[0].mlp: must be from 1 to 1000, got 0.5"},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'work': -1}]}",
	 "t.json: processes[0].work: must be > 0..."},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'job': -1}]}",
	 "t.json: processes[0].job: must be from 0..."},
	{"{" M2 ", 'processes': [{'kind': 'latency', 'threads': 2, "
	 "'name': ''}]}",
	 "t.json: processes[0].name: must be 1 to 63 characters"},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', 'distances': "
	 "[[10, 20]]}, " P1 "}",
	 "t.json: machine.distances: expected 2 rows (the topology has 2 "
	 "NUMA nodes), got 1"},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', 'distances': "
	 "[[10, 20], [20]]}, " P1 "}",
	 "t.json: machine.distances[1]: expected an array of 2 numbers"},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', 'distances': "
	 "[[10, 5], [20, 10]]}, " P1 "}",
	 "t.json: machine.distances[0][1]: must be from 10 to 1000, got 5"},
	{"{'machine': {'topology': 'numa:2 core:4 pu:1', 'distances': "
	 "[[30, 20], [20, 10]]}, " P1 "}",
	 "t.json: machine.distances: each row's diagonal value must be its "
	 "smallest"},
};

static void check_error(const char *got, const char *want)
{
	size_t n = strlen(want);

	if (n > 3 && strcmp(want + n - 3, "...") == 0) {
		if (strncmp(got, want, n - 3) != 0)
			fail_msg("error \"%s\", expected \"%s\"", got, want);
	} else if (strcmp(got, want) != 0) {
		fail_msg("error \"%s\", expected \"%s\"", got, want);
	}
}

static void test_bad_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]);
	     i++) {
		struct nl_scenario *sc = (struct nl_scenario *)1;
		char err[512] = "";
		int rc = nl_scenario_parse(json(bad_inputs[i].text), "t.json",
					   NULL, &sc, err, sizeof(err));

		if (rc != -EINVAL)
			fail_msg("input %zu: rc %d, expected -EINVAL (%s)", i,
				 rc, err);
		assert_null(sc);
		check_error(err, bad_inputs[i].error);
	}
}

/* Loading names the file as given; a missing file is -ENOENT. */
static void test_load_errors(void **state)
{
	struct nl_scenario *sc;
	char err[512] = "";

	(void)state;
	assert_int_equal(
		nl_scenario_load("tests/data/none.json", &sc, err, sizeof(err)),
		-ENOENT);
	assert_null(sc);
	check_error(err, "tests/data/none.json: cannot open: No such file "
			 "or directory");
	/* An XML file is not a scenario: the error names that file. */
	assert_int_equal(nl_scenario_load(XML_TOPOLOGY, &sc, err, sizeof(err)),
			 -EINVAL);
	check_error(err,
		    XML_TOPOLOGY ": malformed JSON at line 1, column 1...");
}

/* Only a regular file of at most 1 MiB is read (issue 23, 6): a FIFO
 * is refused at once (an alarm ends a test that would hang), a device is
 * not read, nor a file one byte too long. */
static void test_load_not_regular(void **state)
{
	struct nl_scenario *sc;
	char dir[] = "/tmp/numalot-scenario-XXXXXX", path[64], err[512] = "";
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo.json", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(10);
	assert_int_equal(nl_scenario_load(path, &sc, err, sizeof(err)),
			 -EINVAL);
	alarm(0);
	assert_non_null(strstr(err, "fifo.json: not a regular file (a FIFO)"));
	unlink(path);
	assert_int_equal(nl_scenario_load("/dev/zero", &sc, err, sizeof(err)),
			 -EINVAL);
	check_error(err, "/dev/zero: not a regular file (a character device)");
	snprintf(path, sizeof(path), "%s/big.json", dir);
	assert_non_null(f = fopen(path, "w"));
	for (int i = 0; i <= 1 << 20; i++)
		fputc(' ', f);
	fclose(f);
	assert_int_equal(nl_scenario_load(path, &sc, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "big.json: larger than 1 MiB"));
	unlink(path);
	rmdir(dir);
}

static void check_xml_topology(const struct nl_scenario *sc)
{
	const struct nl_topology *t = nl_scenario_topology(sc);

	assert_int_equal(t->nnodes, 2);
	assert_int_equal(t->ncpus, 8);
	assert_int_equal(t->node_ncpus[1], 4);
	assert_int_equal(t->distances_from_os, 1);
	assert_int_equal(nl_topology_distance(t, 0, 1), 20);
	assert_int_equal(nl_topology_distance(t, 1, 1), 10);
}

/* Copy the test topology into dir/sub/ and write dir/s.json naming it
 * relative to the scenario's folder. */
static void write_xml_scenario(const char *dir, char *path, size_t len)
{
	char sub[512], xml[600];
	FILE *in = fopen(XML_TOPOLOGY, "r"), *out, *f;
	char buf[4096];
	size_t n;

	assert_non_null(in);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(xml, sizeof(xml), "%s/topo.xml", sub);
	out = fopen(xml, "w");
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
	snprintf(path, len, "%s/s.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(json("{'machine': {'topology': 'sub/topo.xml'},\n"
		   " 'processes': [{'kind': 'latency', 'threads': 2, "
		   "'cpus': '4-7', 'start_node': 1}]}\n"),
	      f);
	fclose(f);
}

/* An XML topology path relative to the scenario file, with its SLIT. */
static void test_xml_topology(void **state)
{
	char dir[] = "/tmp/nl-test-scenario-XXXXXX", path[600], err[512];
	char file[600];
	struct nl_scenario *sc;
	struct nl_machine *m;

	(void)state;
	/* Relative to base_dir, from the repository root. */
	sc = parse_ok("{'machine': {'topology': '2n4c-slit.xml'}, " P1 "}",
		      "tests/data");
	check_xml_topology(sc);
	assert_true(strstr(sc->topology_spec, "tests/data/2n4c-slit.xml"));
	nl_scenario_free(sc);
	/* Explicit distances replace the file's. */
	sc = parse_ok("{'machine': {'topology': 'xml:2n4c-slit.xml', "
		      "'distances': [[10, 30], [30, 10]]}, " P1 "}",
		      "tests/data");
	assert_int_equal(nl_topology_distance(sc->topo, 1, 0), 30);
	nl_scenario_free(sc);

	/* Relative to the file, wherever we run from. */
	assert_non_null(mkdtemp(dir));
	write_xml_scenario(dir, path, sizeof(path));
	if (nl_scenario_load(path, &sc, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	check_xml_topology(sc);
	assert_string_equal(nl_scenario_name(sc), "s");
	assert_int_equal(nl_sim_create(sc, 3, &m, err, sizeof(err)), 0);
	nl_scenario_free(sc);
	/* The model uses the file's SLIT 20: remote latency 1.5x. */
	assert_true(nl_sim_model(m)->latency_ns[1] == 135);
	assert_int_equal(
		m->topo->cpu_node[nl_model_thread(nl_sim_model(m), 1000)->cpu],
		1);
	nl_machine_destroy(m);
	snprintf(file, sizeof(file), "%s/sub/topo.xml", dir);
	unlink(file);
	snprintf(file, sizeof(file), "%s/sub", dir);
	rmdir(file);
	unlink(path);
	rmdir(dir);
}

/* The kinds the docs promise. */
static void test_kinds(void **state)
{
	const char *names[] = {"compute", "stream", "latency", "mixed"};

	(void)state;
	assert_int_equal(nl_kind_count(), 4);
	for (size_t i = 0; i < 4; i++) {
		const struct nl_kind *k = nl_kind_find(names[i]);
		double pf = 0, bpo = 0, share = 0;

		assert_non_null(k);
		assert_ptr_equal(nl_kind_at(i), k);
		assert_non_null(strstr(nl_kind_names(), names[i]));
		/* Phase scales average to 1 over a cycle. */
		for (int p = 0; p < k->nphases; p++) {
			share += k->phase[p].ops_share;
			pf += k->phase[p].ops_share * k->phase[p].peak_scale;
			bpo += k->phase[p].ops_share * k->phase[p].bytes_scale;
		}
		assert_true(fabs(share - 1) < 1e-12);
		assert_true(fabs(pf - 1) < 1e-12);
		assert_true(fabs(bpo - 1) < 1e-12);
	}
	assert_null(nl_kind_find("EP"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_scenarios),
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_not_regular),
		cmocka_unit_test(test_xml_topology),
		cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
