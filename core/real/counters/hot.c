/* numalot: a process's hot pages from sampled data addresses (hot.h). */
#include "hot.h"

#include <stdlib.h>
#include <string.h>

#define MASK (NL_HOT_SLOTS - 1)
/* The table is rebuilt with halved counts when this full. */
#define FULL (NL_HOT_SLOTS * 3 / 4)

struct nl_hot *nl_hot_new(void)
{
	return calloc(1, sizeof(struct nl_hot));
}

void nl_hot_free(struct nl_hot *h)
{
	free(h);
}

static size_t slot_of(uint64_t page)
{
	/* Fibonacci hashing of the page number. */
	return (size_t)(((page >> 12) * 0x9E3779B97F4A7C15ULL) >> 52) & MASK;
}

/* The slot holding page, or the free slot where it would go. */
static struct nl_hot_entry *find(struct nl_hot *h, uint64_t page)
{
	size_t i = slot_of(page);
	while (h->e[i].page && h->e[i].page != page)
		i = (i + 1) & MASK;
	return &h->e[i];
}

void nl_hot_decay(struct nl_hot *h)
{
	struct nl_hot_entry *keep = malloc(sizeof(h->e));
	size_t k = 0;

	if (!keep) {
		/* No memory for the rebuild: forget everything instead. */
		memset(h->e, 0, sizeof(h->e));
		h->used = 0;
		h->since_decay = 0;
		return;
	}
	for (size_t i = 0; i < NL_HOT_SLOTS; i++)
		if (h->e[i].page && h->e[i].count / 2 > 0) {
			keep[k] = h->e[i];
			keep[k++].count /= 2;
		}
	memset(h->e, 0, sizeof(h->e));
	h->used = k;
	for (size_t i = 0; i < k; i++)
		*find(h, keep[i].page) = keep[i];
	free(keep);
	h->since_decay = 0;
}

void nl_hot_add(struct nl_hot *h, uint64_t addr, uint64_t page_size,
		int node_os)
{
	uint64_t page = addr & ~(page_size - 1);
	struct nl_hot_entry *e;

	if (!page)
		return;
	if (h->since_decay >= NL_HOT_DECAY_SAMPLES)
		nl_hot_decay(h);
	e = find(h, page);
	if (!e->page) {
		/* Full: halve until there is room (each halving forgets the
		 * pages sampled once; a bounded number of rounds). */
		while (h->used >= FULL) {
			nl_hot_decay(h);
			e = find(h, page);
		}
		e->page = page;
		e->count = 0;
		h->used++;
	}
	if (e->count < UINT32_MAX)
		e->count++;
	e->node = node_os;
	h->samples++;
	h->since_decay++;
}

static int hotter(const void *a, const void *b)
{
	const struct nl_hot_entry *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->page < y->page ? -1 : x->page > y->page;
}

size_t nl_hot_pick(const struct nl_hot *h, int node_os, uint64_t *pages,
		   size_t max)
{
	struct nl_hot_entry *on = malloc(sizeof(h->e));
	size_t k = 0;

	if (!on)
		return 0;
	for (size_t i = 0; i < NL_HOT_SLOTS; i++)
		if (h->e[i].page && h->e[i].node == node_os)
			on[k++] = h->e[i];
	qsort(on, k, sizeof(on[0]), hotter);
	if (k > max)
		k = max;
	for (size_t i = 0; i < k; i++)
		pages[i] = on[i].page;
	free(on);
	return k;
}

void nl_hot_moved(struct nl_hot *h, uint64_t page, int node_os)
{
	struct nl_hot_entry *e = find(h, page);
	if (e->page)
		e->node = node_os;
}
