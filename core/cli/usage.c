/* numalot command line: each command's usage (numalot(1)). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "os_mode.h"
#include "policy.h"
#include "run.h"

static const struct {
	const char *cmd, *text;
} usages[] = {
	{"sim",
	 "usage: numalot sim SCENARIO.json [OPTIONS]\n"
	 "Run a scenario on the simulated NUMA node under a policy or "
	 "a baseline.\n"
	 "  --policy=P          a policy or baseline (default imar2)\n"
	 "  --os=MODE           the modelled OS (default linux)\n"
	 "  --counters=NAME     what the modelled counters show: pebs "
	 "(default), perf,\n"
	 "                      software (no PMU)\n"
	 "  --seed=N            the random generator's seed (default 1)\n"
	 "  --report=FILE       write the JSON report\n"
	 "  --param KEY=VALUE   a policy parameter (repeatable; numalot help "
	 "params)\n"
	 "  --machine=FILE      the machine of a machine file (numalot "
	 "calibrate) instead\n"
	 "                      of the scenario's\n"
	 "  --timeline=S        linux and linux-nonuma: every S seconds, "
	 "each process's\n"
	 "                      page locality, pages and threads by node "
	 "(in the report)\n"
	 "  -h, --help          this text\n"},
	{"bench",
	 "usage: numalot bench [OPTIONS] [SCENARIO.json|FOLDER ...]\n"
	 "Every scenario (default etc/scenarios/set/) under every policy "
	 "and baseline,\ncompared with linux and the best fixed placement.\n"
	 "  --policies=LIST     comma-separated policies and baselines\n"
	 "  --seeds=N           seeds per scenario (default 5)\n"
	 "  --jobs=N            processes in parallel (default: the CPUs)\n"
	 "  --json=FILE --svg=FILE --html=FILE   the results as files\n"
	 "  --param KEY=VALUE   a policy parameter (repeatable; numalot help "
	 "params)\n"
	 "  --os=MODE           the modelled OS (default linux)\n"
	 "  --machine=FILE      every scenario file on the machine of a "
	 "machine file\n"
	 "                      (numalot calibrate)\n"
	 "  --counters=LIST     counter backends, each its own table: "
	 "pebs (default),\n"
	 "                      perf, software\n"
	 "  --fail-worse=PCT    exit 1 when a policy's run is more than PCT % "
	 "slower\n"
	 "                      than linux (each such run told on stderr)\n"
	 "  --random=N          also N seeded random scenarios (alone when "
	 "no file is\n"
	 "                      given; docs/scenarios.md)\n"
	 "  --seed=S            their seed (default: drawn, and printed)\n"
	 "  --save=DIR          write each as DIR/NAME.json\n"
	 "  --perturb=F         scale their model constants by U[1-F, 1+F], "
	 "F <= 0.9\n"
	 "                      (--seed, --save, --perturb: with --random "
	 "only)\n"
	 "  -h, --help          this text\n"},
	{"run", "usage: numalot run [OPTIONS] [--] CMD [ARGS]\n"
		"Start CMD and manage its threads until it exits (its exit "
		"status is numalot's).\n"},
	{"attach", "usage: numalot attach [OPTIONS] PID...\n"
		   "Manage running processes until they exit or "
		   "SIGINT/SIGTERM.\n"},
	{"info", "usage: numalot info [--topology=SPEC] [--json]\n"
		 "This node's topology, counters (and why not), NUMA "
		 "balancing, policies.\n"
		 "  --topology=SPEC     an hwloc XML file or synthetic "
		 "description\n"
		 "  --json              as JSON\n"
		 "  -h, --help          this text\n"},
	{"status", "usage: numalot status [--socket=PATH] [--json]\n"
		   "The job steps the node's agent numalotd manages.\n"
		   "  --socket=PATH       the agent's socket (default "
		   "/run/numalot/numalotd.sock)\n"
		   "  --json              the agent's reply as it is\n"
		   "  -h, --help          this text\n"},
	{"request", "usage: numalot request [--socket=PATH] JSON\n"
		    "Send one protocol request to numalotd and print its "
		    "reply.\n"
		    "  --socket=PATH       the agent's socket (default "
		    "/run/numalot/numalotd.sock)\n"
		    "  -h, --help          this text\n"},
	{"report",
	 "usage: numalot report [OPTIONS] REPORT.json|FOLDER...\n"
	 "Summarise numalot's JSON reports (a folder: its *.json files). "
	 "Slurm reports\nare also tabled per job: a row per node and step, "
	 "then the job's totals.\n"
	 "Each report's events are counted by reason, and its advice says "
	 "what was\nwrong with the placement and what to set next time.\n"
	 "  --events            list every event, one a line, with its "
	 "reason\n"
	 "  --json              the per-job table and totals as JSON, on "
	 "stdout\n"
	 "  --html=FILE         the reports drawn as one page\n"
	 "  --svg=PREFIX        ...as SVG files PREFIX-*.svg\n"
	 "  -h, --help          this text\n"},
	{"calibrate",
	 "usage: numalot calibrate [OPTIONS]\n"
	 "Measure this node: load latency and read bandwidth (one thread, "
	 "all cores)\nfor every pair of NUMA nodes, the yield of an SMT "
	 "sibling; print them beside\nthe firmware's SLIT and write a "
	 "machine file for sim and bench --machine=.\n"
	 "  --seconds=S         about how long (default 60, 1 to 3600)\n"
	 "  --quick             about 4 s, buffers of 16 MiB (a test, not a "
	 "measurement)\n"
	 "  --buffer=MIB        each buffer (default: 4 x the largest cache, "
	 "64 MiB to\n"
	 "                      1 GiB, at most a quarter of a node's free "
	 "memory)\n"
	 "  -o, --output=FILE   the machine file (default "
	 "numalot-machine.json)\n"
	 "  -h, --help          this text\n"
	 "Progress goes to stderr; memory used: one buffer and a sixteenth "
	 "at a time.\n"},
	{"eval",
	 "usage: numalot eval [OPTIONS] [-- CMD [ARGS] [-- CMD [ARGS]]...]\n"
	 "Measure numalot on this node: up to 4 commands at once (default: "
	 "the bundled\nkernels cg, mg, ft, ep) in the paper's classes, under "
	 "Linux, numad, numalot\nand the best static placement, in a seeded "
	 "random order; the table per class\nand system, numalot's own "
	 "cost, JSON as it goes. On one NUMA node: overhead only.\n"
	 "  --reps=N            repetitions of each case (default 5)\n"
	 "  --seed=S            the order's seed (default: drawn, and "
	 "printed)\n"
	 "  --classes=LIST      direct, ind, interleave (default all)\n"
	 "  --systems=LIST      linux, linux-nobalance, numad, monitor, "
	 "imar2, lbma,\n"
	 "                      best-static (default all; linux always)\n"
	 "  --kernels=LIST      the bundled kernels (default cg,mg,ft,ep)\n"
	 "  --size=SIZE --threads=N --iterations=K   their size (default "
	 "medium), threads\n"
	 "                      (default: a node's CPUs), iterations\n"
	 "  --workload=PATH     numalot-workload (default: beside numalot, "
	 "else PATH)\n"
	 "  --numactl           place with numactl rather than libnuma\n"
	 "  --srun              each process a Slurm step with --numalot= "
	 "(in sbatch)\n"
	 "  --srun-args=ARGS    more srun options, space-separated\n"
	 "  --numad-args=ARGS   numad's options (default \"-i 1:2 -u 100\")\n"
	 "  --json=FILE         the results, rewritten after each run "
	 "(default\n"
	 "                      numalot-eval.json)\n"
	 "  --html=FILE         the table as one page\n"
	 "  --logs=DIR          each process's output (default: discarded)\n"
	 "  --no-warmup         no warm-up run\n"
	 "  --resume=FILE       go on with an interrupted evaluation\n"
	 "  -h, --help          this text\n"
	 "Progress on stderr; SIGINT stops the runs, restores NUMA balancing "
	 "and keeps\nthe JSON for --resume. See docs/evaluation.md, \"On "
	 "your own nodes\".\n"},
	{"version", "usage: numalot version\nPrint numalot's version.\n"},
};

static const char run_options[] =
	"  --policy=P          the policy (default imar2)\n"
	"  --period=SECONDS    the sampling period\n"
	"  --counters=auto|papi|perf|software   the counter backend\n"
	"  --report=FILE       write the JSON report at the end\n"
	"  --param KEY=VALUE   a policy parameter (repeatable; numalot help "
	"params)\n"
	"  --seed=N            the lottery's seed (default 1)\n"
	"  --topology=SPEC     decide on this topology (hwloc XML or "
	"synthetic)\n"
	"  --children          manage the processes they start too\n"
	"  --keep-bindings     never move a thread outside its own "
	"binding\n"
	"  --nice=N            numalot's own nice (default: raised to "
	"-10 where allowed)\n"
	"  -h, --help          this text\n";

static void all_usage(FILE *f)
{
	fprintf(f, "usage: numalot COMMAND [OPTIONS]\n"
		   "       numalot COMMAND --help\n\n"
		   "commands:\n"
		   "  sim       run a scenario on the simulated NUMA node\n"
		   "  bench     every scenario under every policy and "
		   "baseline\n"
		   "  run       start a command and manage its threads\n"
		   "  attach    manage running processes\n"
		   "  info      topology, counters, NUMA balancing, "
		   "policies\n"
		   "  status    the job steps the node's agent manages\n"
		   "  request   one protocol request to the agent\n"
		   "  report    summarise reports; a job's table; draw "
		   "them\n"
		   "  calibrate measure this node; a machine file for sim "
		   "and bench\n"
		   "  eval      numalot against Linux and its peers on this "
		   "node\n"
		   "  version   print the version\n\n"
		   "options: -h, --help (this text), --version\n"
		   "numalot help params: every policy parameter\n"
		   "See numalot(1).\n");
}

void nl_cli_usage(const char *cmd, FILE *f)
{
	if (!strcmp(cmd, "params")) {
		fputs("policy parameters (--param KEY=VALUE):\n", f);
		nl_policy_params_markdown(f);
		return;
	}
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		if (strcmp(cmd, usages[i].cmd))
			continue;
		fputs(usages[i].text, f);
		if (!strcmp(cmd, "run") || !strcmp(cmd, "attach"))
			fputs(run_options, f);
		if (!strcmp(cmd, "sim"))
			fprintf(f,
				"policies and baselines: %s\nOS models: %s\n",
				nl_run_names(), nl_os_mode_names());
		else if (!strcmp(cmd, "run") || !strcmp(cmd, "attach"))
			fprintf(f, "policies: %s\n", nl_policy_names());
		else if (!strcmp(cmd, "bench"))
			fprintf(f, "OS models: %s\n", nl_os_mode_names());
		return;
	}
	all_usage(f);
}
