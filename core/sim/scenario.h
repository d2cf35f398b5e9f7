/* numalot: scenario files for the simulated NUMA node (docs/scenarios.md). */
#ifndef NUMALOT_SCENARIO_H
#define NUMALOT_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

struct nl_scenario;

/*
 * Read and check a scenario file. Returns 0, or a negative errno with err
 * naming the file and the field ("s.json: processes[1].kind: unknown kind
 * \"foo\" (valid: ...)").
 */
int nl_scenario_load(const char *path, struct nl_scenario **out, char *err,
		     size_t errlen);
/*
 * The same from text; name stands for the file in messages, base_dir is
 * where relative topology paths are looked up (NULL: the current folder).
 */
int nl_scenario_parse(const char *text, const char *name, const char *base_dir,
		      struct nl_scenario **out, char *err, size_t errlen);
void nl_scenario_free(struct nl_scenario *sc);

/*
 * A machine file (numalot calibrate's; docs/scenarios.md, "Machine
 * files"): read and checked as a whole, its machine object as a
 * scenario's. 0, or a negative errno with err naming the file and the
 * field.
 */
struct nl_machine_file;
int nl_machine_file_load(const char *path, struct nl_machine_file **out,
			 char *err, size_t errlen);
void nl_machine_file_free(struct nl_machine_file *mf);
/* nl_scenario_load with the scenario's machine replaced by mf's (NULL:
 * its own); the machine's errors name mf's file. */
int nl_scenario_load_on(const char *path, const struct nl_machine_file *mf,
			struct nl_scenario **out, char *err, size_t errlen);
/* The machine file a scenario was loaded on, NULL when none. */
const char *nl_scenario_machine_file(const struct nl_scenario *sc);
/* machine_file.c's check of mf's machine object (scenario.c). */
int nl_machine_file_check(const struct nl_machine_file *mf, char *err,
			  size_t errlen);

struct nl_topology;
/* The scenario's name ("name" field, else the file's base name). */
const char *nl_scenario_name(const struct nl_scenario *sc);
/* The scenario's "class" (docs/scenarios.md), "general" when none. */
const char *nl_scenario_class(const struct nl_scenario *sc);
/* Its topology, distances applied (owned by the scenario). */
const struct nl_topology *nl_scenario_topology(const struct nl_scenario *sc);
/* Its "duration_s" cap on simulated time, 0 when it has none. */
double nl_scenario_duration(const struct nl_scenario *sc);
/* Its "os" (docs/scenarios.md): "linux" when it names none. */
const char *nl_scenario_os_name(const struct nl_scenario *sc);
/* The roofline's ceilings of its machine: peak ops/s per CPU and memory
 * bandwidth per node (bytes/s). */
void nl_scenario_ceilings(const struct nl_scenario *sc, double *peak_ops_per_s,
			  double *bandwidth_bytes_per_s);

/* Its processes, in the file's order. */
int nl_scenario_nprocs(const struct nl_scenario *sc);
struct nl_scenario_proc {
	const char *name; /* owned by the scenario */
	int job;
	int nthreads;
	int pid; /* the pid the simulated node gives it */
};
/* Process i (0 <= i < nprocs). 0, or -EINVAL for a bad i. */
int nl_scenario_proc(const struct nl_scenario *sc, int i,
		     struct nl_scenario_proc *out);

#endif
