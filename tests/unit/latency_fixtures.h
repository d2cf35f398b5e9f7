/* Test helper: perf ring buffers built in memory, as the kernel lays them
 * out, for the latency-sampling tests. */
#ifndef NUMALOT_TEST_LATENCY_FIXTURES_H
#define NUMALOT_TEST_LATENCY_FIXTURES_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "latency.h"

#define ST_TEST                                                                \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |               \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)
#define DS(a, s) PERF_MEM_S(a, s)
#define DS_LOC_RAM                                                             \
	(DS(OP, LOAD) | DS(LVL, HIT) | DS(LVL, LOC_RAM) | DS(LVLNUM, RAM))
#define DS_L3_HIT (DS(OP, LOAD) | DS(LVL, HIT) | DS(LVL, L3) | DS(LVLNUM, L3))

static inline size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Page faults, a software event that carries the faulting address: they
 * stand in for PEBS or IBS samples where there is no PMU. */
static inline struct nl_lat_pmu fault_pmu(void)
{
	struct nl_lat_pmu p = {
		.kind = NL_LAT_RAW,
		.name = "software",
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.period = 1,
		.exclude_kernel = 1,
		.ns_per_cycle = 1,
		.sample_type = ST_TEST,
	};
	return p;
}

struct fake_ring {
	unsigned char *mem;
	size_t len;
	struct perf_event_mmap_page *meta;
	uint64_t pos; /* where the "kernel" writes next */
};

static inline void fake_init(struct fake_ring *f, uint64_t data_size,
			     uint64_t start)
{
	f->len = page_size() +
		 (data_size > page_size() ? data_size : page_size());
	f->mem = aligned_alloc(page_size(), f->len);
	if (!f->mem)
		abort();
	memset(f->mem, 0xee, f->len); /* stale bytes must not matter */
	f->meta = (struct perf_event_mmap_page *)f->mem;
	memset(f->meta, 0, sizeof(*f->meta));
	f->meta->data_offset = page_size();
	f->meta->data_size = data_size;
	f->meta->data_head = f->meta->data_tail = start;
	f->pos = start;
}

static inline void fake_put(struct fake_ring *f, uint32_t type,
			    const uint64_t *body, size_t nbody)
{
	struct perf_event_header h = {.type = type,
				      .size = (uint16_t)(8 * (1 + nbody))};
	uint64_t w[16], size = f->meta->data_size;
	unsigned char *data = f->mem + f->meta->data_offset;
	memcpy(&w[0], &h, sizeof(h));
	memcpy(&w[1], body, 8 * nbody);
	for (size_t i = 0; i < 8 * (1 + nbody); i++)
		data[(f->pos + i) & (size - 1)] = ((unsigned char *)w)[i];
	f->pos += 8 * (1 + nbody);
	f->meta->data_head = f->pos;
}

static inline void fake_sample(struct fake_ring *f, uint32_t tid, uint64_t time,
			       uint64_t addr, uint64_t weight,
			       uint64_t data_src)
{
	uint32_t pt[2] = {4242, tid};
	uint64_t b[5];
	memcpy(&b[0], pt, 8);
	b[1] = time;
	b[2] = addr;
	b[3] = weight;
	b[4] = data_src;
	fake_put(f, PERF_RECORD_SAMPLE, b, 5);
}

#endif
