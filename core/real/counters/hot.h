/* numalot: a process's hot pages from sampled data addresses, a fixed
 * table whose counts halve as it fills and with time (docs/real-node.md,
 * "Hot pages"). Plain data: tested without a PMU. */
#ifndef NUMALOT_HOT_H
#define NUMALOT_HOT_H

#include <stddef.h>
#include <stdint.h>

/* Slots per process (a power of two; 16 bytes each: 32 KiB), allocated
 * only for a process whose threads sample addresses. */
#define NL_HOT_SLOTS 2048
/* Counts halve after this many samples, hot or not. */
#define NL_HOT_DECAY_SAMPLES (4 * NL_HOT_SLOTS)

struct nl_hot_entry {
	uint64_t page; /* page address; 0: a free slot */
	uint32_t count;
	int32_t node; /* OS node number when last sampled or moved */
};

struct nl_hot {
	struct nl_hot_entry e[NL_HOT_SLOTS];
	size_t used;
	uint64_t samples;     /* added since creation */
	uint64_t since_decay; /* added since the counts last halved */
};

struct nl_hot *nl_hot_new(void);
void nl_hot_free(struct nl_hot *h);

/* One sample of a load from addr (any byte of its page), on node node_os. */
void nl_hot_add(struct nl_hot *h, uint64_t addr, uint64_t page_size,
		int node_os);

/* Halve every count; pages whose count reaches 0 are forgotten. */
void nl_hot_decay(struct nl_hot *h);

/*
 * Up to max pages last seen on node node_os, hottest first (ties: lower
 * address first). Returns how many were written to pages.
 */
size_t nl_hot_pick(const struct nl_hot *h, int node_os, uint64_t *pages,
		   size_t max);

/* The page at addr is now on node node_os (moved); nothing if not held. */
void nl_hot_moved(struct nl_hot *h, uint64_t page, int node_os);

#endif
