/*
 * numalot: the simulated NUMA node's physics (docs/machine-model.md).
 *
 * For the files of core/sim/ and the model's tests: the scenario parser
 * fills the specs below, the model runs them tick by tick, simmachine.c
 * wraps the model in the engine's machine interface (adding counter noise),
 * search.c climbs its steady states. The rest of numalot takes sim.h.
 * Nothing here knows which policy runs.
 */
#ifndef NUMALOT_SIM_MODEL_H
#define NUMALOT_SIM_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <hwloc.h>

#include "rng.h"
#include "sample.h"
#include "sim.h"
#include "topology.h"

struct nl_machine;

/* Cache-line size: LLC misses are traffic / NL_LINE_BYTES. */
#define NL_LINE_BYTES 64.0
/* Page size used to turn data footprints into node_pages(). */
#define NL_PAGE_BYTES 4096.0
/*
 * The simulated node's ids: process i of a scenario has pid
 * NL_SIM_PID_STEP * (i + 1), its thread k the tid pid + k.
 */
#define NL_SIM_PID_STEP 1000
#define NL_MAX_PROC_THREADS (NL_SIM_PID_STEP - 1)
#define NL_MAX_PHASES 4
/* Simulated times closer than this are the same instant (tick rounding). */
#define NL_TIME_EPS 1e-9

/*
 * Machine parameters. All doubles so that one table (nl_model_param_descs)
 * gives name, default, range and units for the parser and the docs.
 */
struct nl_model_params {
	double peak_ops_per_s;		   /* per core, one thread alone */
	double smt_share;		   /* each sibling's share, 2 busy */
	double node_bandwidth_bytes_per_s; /* memory bandwidth per node */
	double local_latency_ns;	   /* unloaded local access */
	double remote_factor;		   /* latency growth per SLIT step */
	double link_bandwidth_bytes_per_s; /* per direction, per node pair */
	double contention_k;		   /* queueing factor 1+k*rho/(1-rho) */
	double rho_cap;			   /* utilisation cap in that factor */
	double page_migration_bytes_per_s; /* per destination node */
	double numa_scan_delay_s;	   /* NUMA balancing: first scan */
	double numa_scan_period_s;	   /* NUMA balancing: between scans */
	double numa_scan_bytes;		   /* address space scanned a period */
	double numa_scan_period_max_s;	   /* kernel-like: longest period */
	double numa_fault_cost_s;	   /* kernel-like: CPU per hint fault */
	double page_copy_bytes_per_s;	   /* kernel-like: copy by a thread */
	double numa_imbalance_share;	   /* kernel-like: imb_numa_nr */
	double page_move_bytes_per_s;	   /* numalot's page moves: copy rate */
	double tick_s;			   /* simulation step */
	double noise;			   /* relative sd of emitted counters */
	double fixed_point_rounds;	   /* damped rounds per tick (max) */
	double damping;			   /* weight of the new estimate */
	double latency_sample_period;	   /* LLC misses per latency sample */
};

enum { NL_PARAM_LO_OPEN = 1u << 0, NL_PARAM_INTEGER = 1u << 1 };

struct nl_param_desc {
	const char *name; /* as in the scenario's "machine" object */
	size_t offset;	  /* of a double in struct nl_model_params */
	double def;
	double lo, hi; /* valid range; lo excluded with NL_PARAM_LO_OPEN */
	unsigned flags;
	const char *units;
};

/* Throughput of a core with k busy hardware threads, in cores: 1 at k = 1,
 * 2 smt_share at k = 2, 1 + 2 (2 smt_share - 1) (1 - 1/k) beyond. */
double nl_model_smt_yield(const struct nl_model_params *p, int k);

extern const struct nl_param_desc nl_model_param_descs[];
extern const size_t nl_model_nparams;

void nl_model_default_params(struct nl_model_params *p);

/*
 * Workload kinds (model_params.c). A kind is a parameter set, modelled in the
 * spirit of the NAS Parallel Benchmarks, not measured. Phases repeat every
 * cycle_ops ops of a thread; each scales the base values, and the scales
 * average to 1 over a cycle (weighted by ops) for peak_fraction and
 * bytes_per_op, so that a per-process override sets the mean.
 */
struct nl_phase {
	double ops_share;   /* share of one cycle's ops */
	double peak_scale;  /* multiplies peak_fraction (result capped at 1) */
	double bytes_scale; /* multiplies bytes_per_op */
	double mlp_scale;   /* multiplies mlp */
};

struct nl_kind {
	const char *name;
	const char *like;	/* NAS codes it stands for */
	double peak_fraction;	/* of the core's peak, when not waiting */
	double bytes_per_op;	/* LLC-miss traffic per op */
	double mlp;		/* cache lines in flight while waiting */
	double shared_fraction; /* share of traffic to process-shared data */
	double fp_fraction;	/* width-weighted FP ops per op */
	double work_ops;	/* per thread */
	double mem_bytes;	/* data footprint per thread */
	double cycle_ops;	/* phase cycle length (0: one phase) */
	int nphases;
	struct nl_phase phase[NL_MAX_PHASES];
};

/* The named kinds: compute, stream, latency, mixed. NULL if unknown. */
const struct nl_kind *nl_kind_find(const char *name);
size_t nl_kind_count(void);
const struct nl_kind *nl_kind_at(size_t i);
/* "compute, stream, latency, mixed" (for error messages). */
const char *nl_kind_names(void);

/* Initial data placement of a process (docs/machine-model.md). */
enum nl_placement {
	NL_PLACE_FIRST_TOUCH, /* private on the thread's start node, shared
				 on thread 0's node */
	NL_PLACE_MASTER,      /* everything on thread 0's node */
	NL_PLACE_INTERLEAVE,  /* even over the nodes of the allowed CPUs */
	NL_PLACE_NODE,	      /* everything on one node */
	NL_PLACE_BIND,	      /* everything bound to one node (membind) */
};

/* One process of a scenario, kind overrides already applied. */
struct nl_proc_spec {
	char name[64];
	int job;
	int nthreads;
	double start_s;
	enum nl_placement placement;
	int placement_node; /* NL_PLACE_NODE, NL_PLACE_BIND */
	int start_node;	    /* -1: fork balancing over all allowed CPUs */
	/* numactl --cpunodebind: the OS keeps the threads on these nodes'
	 * CPUs (bit per node, 0: no binding); numalot may leave them within
	 * cpus (the allocation) unless it keeps bindings. */
	unsigned long long cpu_nodes;
	/* numactl --interleave=NODES (bit per node, 0: the allowed ones) */
	unsigned long long mem_nodes;
	/* numactl --preferred: a memory policy of its own, so no hinting
	 * faults and no NUMA balancing, as for bind and interleave */
	int mem_policy;
	/* "limit": "binding": outside any job, its own CPU binding
	 * (cpunodebind) is its limit, as on the real node; else cpus */
	int limit_binding;
	char *cpus; /* allowed CPUs, OS numbers; NULL: all */
	struct nl_kind kind;
};

/* What nl_scenario_parse builds (opaque in scenario.h). */
struct nl_scenario {
	char *name;
	char *topology_spec;	  /* relative XML paths already resolved */
	char *klass;		  /* "class" field: a set's class, or NULL */
	char *machine_file;	  /* --machine=FILE it was loaded on, or NULL */
	struct nl_topology *topo; /* loaded, distances applied */
	struct nl_model_params params;
	enum nl_os_mode os_mode; /* "os" field, default NL_OS_LINUX */
	double duration_s;	 /* 0: no cap */
	int nprocs;
	struct nl_proc_spec *procs;
};

enum nl_thread_state { NL_T_PENDING, NL_T_RUNNING, NL_T_DONE };

struct nl_model_thread {
	int tid, pid;
	int proc; /* index in nl_model.procs */
	enum nl_thread_state state;
	int cpu; /* dense CPU, -1 while pending */
	int pinned;
	hwloc_bitmap_t allowed;	 /* from the process's cpus, never narrowed */
	hwloc_bitmap_t affinity; /* where the OS may run it (cpunodebind) */
	double work_ops, work_left;
	double start_s, end_s; /* end_s < 0 while not done */
	double *priv_frac;     /* [nnodes] where its private data lives */
	double *data_frac;     /* [nnodes] traffic share by node */
	/* Physics of the last tick. */
	double share;		 /* CPU time share (time sharing) */
	double t_compute_s;	 /* per op, while on the CPU */
	double t_memory_s;	 /* per op, while on the CPU */
	double l_eff_ns;	 /* effective latency, contention included */
	double stretch;		 /* of latencies, from the bandwidth cap */
	double demand_ops_per_s; /* before the bandwidth cap */
	double rate_ops_per_s;	 /* served */
	double traffic_bytes_per_s;
	double bytes_per_op, fp_fraction; /* of its current phase */
	double mem_coef; /* s per op per ns of latency: B/64/MLP */
	/* Exact counters since the last nl_model_take_sample(). */
	struct nl_sample acc;
	struct nl_rng noise_rng; /* per thread: noise independent of order */
	double migrate_want;	 /* scratch of the page migration */
	double stall_s;	    /* time it still waits on pages numalot moved */
	double os_overhead; /* share of the next tick the OS takes from it
			       (hinting faults, page copies): kernel-like */
};

struct nl_model_proc {
	struct nl_proc_spec spec; /* cpus is NULL: parsed into allowed */
	hwloc_bitmap_t allowed;
	hwloc_bitmap_t affinity; /* allowed, narrowed by cpu_nodes */
	int started, done;
	double start_s, end_s;
	int threads_seen;
	int live;	      /* threads running now */
	int first_thread;     /* index in nl_model.threads */
	double *shared_frac;  /* [nnodes] */
	int numa_balanced;    /* NUMA balancing sees its pages (not bound or
				 interleaved: no hinting faults there) */
	double numa_next_s;   /* its next NUMA placement decision */
	double numa_period_s; /* its scan period (kernel-like: adapts) */
	double scan_pos;      /* share of its scan pass done, [0, 1) */
};

struct nl_model {
	struct nl_topology *topo; /* owned */
	struct nl_model_params p;
	enum nl_os_mode os_mode;
	int ideal_locality;
	int *start_cpu;	   /* [nthreads] or NULL */
	double duration_s; /* 0: no cap */
	uint64_t ticks;
	int nprocs, nthreads;
	struct nl_model_proc *procs;
	struct nl_model_thread *threads; /* by process, then k: tid order */
	/* Scratch and state sized once at creation (no per-tick malloc). */
	double *latency_ns;  /* [n*n] unloaded latency(i, j) */
	double *mem_factor;  /* [n] contention factor of node memory */
	double *link_factor; /* [n*n] of link i->j (1 on the diagonal) */
	double *fbracket;   /* [2(n+n*n)] bounds on each factor's fixed point */
	double *mem_demand; /* [n] bytes/s */
	double *link_demand; /* [n*n] */
	double *mem_served;  /* [n] bytes/s served in the last tick */
	double *link_served; /* [n*n] */
	int *cpu_load;	     /* [ncpus] running threads per CPU */
	int *core_busy;	     /* [ncores] CPUs with a thread per core */
	double *frac_store;  /* backs the threads' and procs' fractions */
	hwloc_bitmap_t cand; /* scratch: start candidates */
	int *node_order;     /* [n*n] nodes by distance from each node */
	double *node_budget; /* [n] scratch: page migration bytes */
	int *cpu_lone;	     /* [3 x ncpus + n] scratch of active balancing */
	/* What the simulated OS did. */
	int os_moves;		     /* thread moves (a swap counts 2) */
	double pages_migrated_bytes; /* by NUMA balancing */
	double pages_moved_bytes;    /* by numalot (nl_model_move_pages) */
};

/* Every counter the model emits. */
#define NL_MODEL_MEASURED                                                      \
	(NL_M_INSTRUCTIONS | NL_M_FP_OPS | NL_M_LLC_MISSES | NL_M_LATENCY |    \
	 NL_M_TASK_CLOCK | NL_M_CPU | NL_M_NODE_ACCESS)

/*
 * Build a model of the scenario's processes on topo (ownership of topo
 * passes to the model, also on failure). Processes starting at time 0 start
 * at once. Noise generators are seeded from seed. Returns 0, -EINVAL (a cpu
 * list or node the topology lacks) or -ENOMEM.
 */
int nl_model_create(struct nl_topology *topo, const struct nl_scenario *sc,
		    uint64_t seed, struct nl_model **out);
/* The same with options (o may be NULL). */
int nl_model_create_opts(struct nl_topology *topo, const struct nl_scenario *sc,
			 uint64_t seed, const struct nl_model_opts *o,
			 struct nl_model **out);
void nl_model_free(struct nl_model *m);

static inline double nl_model_now(const struct nl_model *m)
{
	return (double)m->ticks * m->p.tick_s;
}

/* 1 while a process is running or has yet to start (and the cap is not
 * reached), 0 when all are done. */
int nl_model_active(const struct nl_model *m);

/*
 * Compute every running thread's rate for the current placement: damped
 * fixed point on contention (warm start from the previous tick), then the
 * bandwidth cap. Does not advance time.
 */
void nl_model_solve(struct nl_model *m);
/*
 * The same, iterating up to max_rounds rounds until the contention factors
 * settle: the steady state of a placement (for the placement search).
 */
void nl_model_solve_steady(struct nl_model *m, int max_rounds);
/* One tick: solve, advance work and counters, OS step, start due ones. */
void nl_model_tick(struct nl_model *m);
/*
 * The simulated OS, once per tick after the work advanced (os.c): the load
 * balancer, automatic NUMA balancing and page migration, by os_mode.
 */
void nl_model_os_step(struct nl_model *m);
/* Where the OS puts a thread given back its affinity: the nearest idle CPU
 * of it, else its first CPU. */
int nl_model_os_home(const struct nl_model *m, const struct nl_model_thread *t);

static inline int nl_sim_pid(int i)
{
	return NL_SIM_PID_STEP * (i + 1);
}

/* The index of process pid in m->procs, -1 when m has no such process. */
static inline int nl_model_proc_index(const struct nl_model *m, int pid)
{
	int i = pid / NL_SIM_PID_STEP - 1;

	return pid >= NL_SIM_PID_STEP && pid % NL_SIM_PID_STEP == 0 &&
			       i < m->nprocs
		       ? i
		       : -1;
}

/* Thread by tid, NULL if unknown (any state). */
struct nl_model_thread *nl_model_thread(struct nl_model *m, int tid);
/* Pin a running thread to a dense CPU: 0, -ESRCH, -EINVAL. */
int nl_model_place(struct nl_model *m, int tid, int cpu);
/* Unpin (the thread stays where it is until the OS moves it). */
int nl_model_release(struct nl_model *m, int tid);
/*
 * The exact counters of a running thread since the previous call, then
 * reset them. 0 or -ESRCH (unknown, pending or done thread).
 */
int nl_model_take_sample(struct nl_model *m, int tid, struct nl_sample *out);
/* Resident pages of a running process by node ([nnodes]; zeros when
 * pending or done). 0 or -ESRCH. */
int nl_model_node_pages(const struct nl_model *m, int pid, double *pages);
/* numalot's page move (model_page_moves.c; docs/machine-model.md, "Page
 * moves"); interleaved_too: also of a process that interleaved its memory
 * itself (never of one bound by membind). */
int nl_model_move_pages(struct nl_model *m, int pid, int from, int to,
			double max_bytes, int interleaved_too, double *moved);

/*
 * Helpers shared by the files of the model (place.c, os.c, search.c).
 */
static inline int nl_model_node_of(const struct nl_model *m, int cpu)
{
	int n = m->topo->cpu_node[cpu];
	return n < 0 ? 0 : n;
}

/* A thread arrives on (d = 1) or leaves (d = -1) cpu. */
void nl_model_occupy(struct nl_model *m, int cpu, int d);
/* Move a running thread to cpu (no pinning change); its data follows
 * only under ideal locality. */
void nl_model_move(struct nl_model *m, struct nl_model_thread *t, int cpu);
/* Recompute a thread's traffic share by node from its data's place. */
void nl_model_refresh_data(struct nl_model *m, struct nl_model_thread *t);
/* Place a process's data from its threads' CPUs (start placement). */
void nl_model_place_data(struct nl_model *m, struct nl_model_proc *pr);
/* Start the processes that are due (place.c). */
void nl_model_start_due(struct nl_model *m);
void nl_model_start_process(struct nl_model *m, struct nl_model_proc *pr);

/* A private copy of a loaded topology (a model owns its own). NULL on
 * failure. */
struct nl_topology *nl_sim_topology_dup(const struct nl_topology *src);

/* The model inside a machine made by nl_sim_create (NULL otherwise): for
 * the files of the model and its tests; others use the machine's ops. */
struct nl_model *nl_sim_model(struct nl_machine *m);
#endif
