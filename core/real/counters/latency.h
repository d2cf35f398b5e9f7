/* numalot: memory-latency sampling per thread, PEBS or IBS, samples past
 * the last-level cache grouped by the node of their address
 * (docs/real-node.md, "Memory-latency sampling"). Plain data but the
 * event itself: tested without a PMU. */
#ifndef NUMALOT_LATENCY_H
#define NUMALOT_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hot.h"
#include "sample.h"

/* Where the kernel lists its PMUs. */
#define NL_LAT_SYSFS "/sys/bus/event_source/devices"

enum nl_lat_kind {
	NL_LAT_PEBS, /* Intel: cpu/mem-loads,ldlat=N/, weight in core cycles */
	NL_LAT_IBS,  /* AMD: ibs_op, weight = data-cache miss latency, cycles */
	/* Any event given as is (no precise_ip, no data_src rule): software
	 * events carry addresses but no data source, e.g. in tests. */
	NL_LAT_RAW,
};

/* PEBS: only loads slower than this many core cycles are sampled; around
 * the latency of a last-level-cache hit, so that most samples went past it. */
#define NL_LAT_LDLAT_CYCLES 64
/* One sample every this many qualifying loads (a prime, so that the
 * sampling does not lock onto a loop's period). */
#define NL_LAT_PEBS_PERIOD 10007
/* IBS counts ops (a multiple of 16): with l3missonly only ops that missed
 * the L3 interrupt, without it every tagged op does. */
#define NL_LAT_IBS_PERIOD_L3MISS 65536
#define NL_LAT_IBS_PERIOD 262144
/* Ring-buffer data pages per thread (a power of two), and the smaller size
 * tried when the locked-memory budget (perf_event_mlock_kb) is spent. */
#define NL_LAT_DATA_PAGES 8
#define NL_LAT_DATA_PAGES_MIN 2

/* A sampling event, as perf_event_open wants it. */
struct nl_lat_pmu {
	enum nl_lat_kind kind;
	char name[32]; /* sysfs PMU: "cpu", "cpu_core", "ibs_op" */
	uint32_t type;
	uint64_t config, config1, config2;
	uint64_t period;
	int ldlat; /* PEBS threshold in cycles (0 for others) */
	int aux;   /* PEBS: mem-loads-aux must lead the group (SPR, ADL) */
	uint64_t aux_config;
	int exclude_kernel;  /* IBS can only when the kernel has swfilt */
	int ibs_ops;	     /* IBS period counts ops (else cycles) */
	int ibs_l3_miss;     /* IBS tags only ops that missed the L3 */
	double ns_per_cycle; /* weight to ns; 1 for NL_LAT_RAW */
	uint64_t sample_type;
};

/*
 * Find the latency-sampling PMU under devices_dir (NL_LAT_SYSFS, or a test
 * tree): cpu_core or cpu with events/mem-loads (Intel), else ibs_op (AMD).
 * Encodes the event from events/ and format/ files with the defaults
 * above. 0, -ENOENT (neither is exposed), -EINVAL (unreadable encoding),
 * -EOPNOTSUPP (IBS on a kernel before 6.1: no data source, address or
 * latency in its samples). out->name says which PMU even on failure.
 */
int nl_lat_pmu_find(const char *devices_dir, struct nl_lat_pmu *out);

/*
 * Set value into the config word(s) named by a sysfs format text such as
 * "config:0-7", "config1:0-15" or "config:0-7,32-35" (bits filled low to
 * high across the ranges). cfg is config, config1, config2.
 * 0, or -EINVAL (bad text, or value wider than the field).
 */
int nl_lat_format_apply(const char *format, uint64_t value, uint64_t cfg[3]);

/*
 * Encode terms ("event=0xcd,umask=0x1,ldlat=3"; a bare term means 1) with
 * the format/ files of pmu_dir into cfg; a later term overrides an earlier
 * one. 0, -ENOENT (a term without format file), -EINVAL.
 */
int nl_lat_encode(const char *pmu_dir, const char *terms, uint64_t cfg[3]);

/*
 * Nominal CPU clock in GHz, to turn cycles into ns: the cpufreq
 * base_frequency file (kHz), else the first "cpu MHz" line of cpuinfo.
 * 0, or -ENOENT when neither says.
 */
int nl_lat_read_ghz(const char *base_freq_path, const char *cpuinfo_path,
		    double *ghz);

struct perf_event_attr;
/* The attributes of the sampling event (precise_ip at its highest: the
 * opener lowers it until the kernel accepts). */
void nl_lat_attr(const struct nl_lat_pmu *p, struct perf_event_attr *a);

/*
 * The data_src rule: a load that went past the last-level cache, served by
 * memory (local or remote DRAM, PMEM, CXL). Cache hits anywhere (remote
 * caches included), an L3 miss of unknown source, I/O, uncached accesses
 * and stores are not.
 */
int nl_lat_past_llc(uint64_t data_src);

/* One decoded sample (fields not in sample_type are 0). */
struct nl_lat_rec {
	uint64_t addr;
	uint64_t weight;
	uint64_t data_src;
	uint64_t time;
	uint32_t pid, tid;
};

struct nl_lat_stats {
	uint64_t records;    /* samples read */
	uint64_t kept;	     /* past the LLC, address on a known node */
	uint64_t filtered;   /* not past the LLC, or no latency */
	uint64_t unresolved; /* address on no node (unmapped, gone) */
	uint64_t lost;	     /* samples the kernel dropped: ring full */
	uint64_t throttled;  /* the kernel throttled the event */
	uint64_t malformed;  /* records that could not be parsed */
};

/*
 * A perf ring buffer: the perf_event_mmap_page followed by the data area,
 * from the kernel or built in memory by a test.
 */
struct nl_lat_ring {
	void *meta; /* struct perf_event_mmap_page */
	const unsigned char *data;
	uint64_t size; /* a power of two */
	uint64_t sample_type;
};

/*
 * Set up a reader over len bytes at base (one metadata page, then data).
 * Uses data_offset/data_size when the kernel sets them. 0, or -EINVAL (a
 * size that is not a power of two, or a sample_type the reader cannot
 * parse: only IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD,
 * WEIGHT or WEIGHT_STRUCT, DATA_SRC).
 */
int nl_lat_ring_init(struct nl_lat_ring *r, void *base, size_t len,
		     uint64_t sample_type);

/*
 * Read up to max samples from data_tail to data_head, then move data_tail
 * past what was read. Records other than samples are skipped (LOST and
 * THROTTLE are counted in st). Returns the number of samples in out.
 */
size_t nl_lat_ring_read(struct nl_lat_ring *r, struct nl_lat_rec *out,
			size_t max, struct nl_lat_stats *st);

/*
 * NUMA node (OS number) of each address in process pid, with move_pages in
 * batches; -1 where the address is on no node (unmapped, not present).
 * 0, or a negative errno when the query itself failed (-ESRCH, -EPERM,
 * -ENOSYS on a kernel without NUMA).
 */
int nl_lat_nodes(pid_t pid, const uint64_t *addr, size_t n, int *node);

/*
 * Drain ring r: keep the samples p's rule accepts (NL_LAT_RAW: all), find
 * their nodes in process pid, and add them to out->lat_count/lat_sum_ns by
 * dense node (node_os[i] is the OS number of dense node i). Sets
 * NL_M_LATENCY in out->measured when at least one sample was kept. st (may
 * be NULL) gets the counts added; hot (may be NULL) the kept samples' pages
 * and nodes (hot.h). 0 or a negative errno.
 */
int nl_lat_collect(struct nl_lat_ring *r, const struct nl_lat_pmu *p, pid_t pid,
		   const int *node_os, int nnodes, struct nl_sample *out,
		   struct nl_lat_stats *st, struct nl_hot *hot);

/* One thread's sampling event and its ring. */
struct nl_lat_sampler;

/*
 * Open p on thread tid of process pid and map its ring. On failure, *where
 * (if not NULL) names the step that failed: "perf_event_open",
 * "perf_event_open (mem-loads-aux)" or "mmap". 0 or a negative errno.
 */
int nl_lat_open(const struct nl_lat_pmu *p, pid_t pid, pid_t tid,
		struct nl_lat_sampler **out, const char **where);
/* nl_lat_collect on the sampler's ring since the previous call. */
int nl_lat_read(struct nl_lat_sampler *s, const int *node_os, int nnodes,
		struct nl_sample *out, struct nl_hot *hot);
/* "PEBS", "IBS" or "raw event" (NULL for NULL). */
const char *nl_lat_kind_name(const struct nl_lat_sampler *s);
/* Counts since open. */
const struct nl_lat_stats *nl_lat_stats(const struct nl_lat_sampler *s);
void nl_lat_close(struct nl_lat_sampler *s);

/* Open, map and close p on tid: does it really work here? As nl_lat_open. */
int nl_lat_try(const struct nl_lat_pmu *p, pid_t tid, const char **where);

/*
 * The PMU this node samples latency with, found and tried once on the
 * calling thread (the first call does the work; not thread-safe), or NULL.
 */
const struct nl_lat_pmu *nl_lat_default(void);
/* Use p instead of probing (NULL: none); p is copied. For tests. */
void nl_lat_set_default(const struct nl_lat_pmu *p);

#endif
