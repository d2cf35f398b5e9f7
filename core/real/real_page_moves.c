/* numalot: moving a managed process's pages with move_pages(2), in
 * batches over its private writable mappings, hottest sampled pages first,
 * leaving the policies it set itself (docs/real-node.md, "Page moves"). */
#include "real_priv.h"
#include "procfs.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BATCH 1024
/* At most this many pages looked at per call (16 GiB of 4 KiB pages). */
#define MAX_PAGES_LOOKED (4UL << 20)
/* A move this long looks for another placer's hand this often. */
#define LOOK_EVERY_S 0.1

struct walk {
	struct real *r;
	struct rproc *p;
	pid_t pid;
	int from_os, to_os;
	unsigned long page, huge;
	double want, moved;
	unsigned long looked;
	int bound_seen; /* a mapping with its own policy held some pages */
	double next_look;
};

/* Whether another placer has had a hand in the process since the move
 * began: numad binds its threads, then moves its memory, and a long move
 * (10 s for 190 MiB in the emulated guests) would go on moving its pages
 * the other way. Its threads' bindings are looked at every LOOK_EVERY_S;
 * numalot then lets go and stops (docs/real-node.md, "Other placers"). */
static int placer_came(struct walk *w)
{
	double now = nl_mono_s();
	if (now < w->next_look)
		return 0;
	w->next_look = now + LOOK_EVERY_S;
	nl_real_check_bindings(w->r, w->pid);
	return w->p->info.real.let_go[0] != 0;
}

/* Whether a mapping's memory policy in numa_maps (set by the process)
 * keeps its pages where they are: bind always, interleave unless flags
 * has NL_PAGES_SOFT; default, local and preferred never. */
static int held_by_policy(const char *line, int flags)
{
	const char *sp = strchr(line, ' ');
	if (!sp)
		return 0;
	sp++;
	return !strncmp(sp, "bind", 4) ||
	       (!strncmp(sp, "interleave", 10) && !(flags & NL_PAGES_SOFT));
}

/*
 * Move the k pages addr to node to_os; status gets where each page is
 * after. When some pages could not move (the call returns how many), the
 * kernel stops and leaves status unwritten for the batch: where they are
 * is then asked again. 0 or a negative errno.
 */
static int move_batch(pid_t pid, unsigned long k, void **addr, int *nodes,
		      int *status)
{
	long rc;

	for (unsigned long i = 0; i < k; i++)
		status[i] = -ENOENT;
	rc = move_pages(pid, k, addr, nodes, status, MPOL_MF_MOVE);
	if (rc < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	if (rc > 0 && move_pages(pid, k, addr, NULL, status, 0) < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	return 0;
}

unsigned long nl_page_batch_end(unsigned long a, unsigned long end,
				unsigned long count, unsigned long page,
				unsigned long huge)
{
	unsigned long lim = a + count * page;
	if (huge && (huge & (huge - 1)) == 0 && (lim & ~(huge - 1)) > a)
		lim &= ~(huge - 1);
	return lim < end ? lim : end;
}

/* The size of a transparent huge page (a PMD's), 0 if unknown. */
static unsigned long huge_page(void)
{
	static long size = -1;
	char path[NL_FS_PATH], *text = NULL;
	if (size < 0) {
		size = 0;
		nl_fs_path(
			path, sizeof(path),
			"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
		if (nl_proc_slurp(path, &text, NULL) == 0)
			size = atol(text);
		free(text);
	}
	return (unsigned long)size;
}

/* Move the pages of [start, end) on the source node, batch by batch. A
 * batch ends at a huge page's boundary: a transparent huge page moves
 * whole, so one cut by a batch's end would move with its first pages and
 * its others, found on the target by the next batch, would go uncounted
 * (in the 4-node guest numalot counted 170 MiB of 259 MiB it moved, and
 * took the rest for another placer's move: docs/real-node.md, "Other
 * placers"). */
static int walk_range(struct walk *w, unsigned long start, unsigned long end)
{
	void *addr[BATCH];
	int status[BATCH], nodes[BATCH];

	for (unsigned long a = start;
	     a < end && w->moved < w->want && w->looked < MAX_PAGES_LOOKED;) {
		int n = 0, k = 0;
		unsigned long lim =
			nl_page_batch_end(a, end, BATCH, w->page, w->huge);
		for (; a < lim && n < BATCH; a += w->page)
			addr[n++] = (void *)a;
		w->looked += (unsigned long)n;
		if (move_pages(w->pid, (unsigned long)n, addr, NULL, status,
			       0) < 0)
			return errno == ESRCH ? -ESRCH : -errno;
		for (int i = 0; i < n; i++)
			if (status[i] == w->from_os &&
			    w->moved + (double)(k + 1) * w->page <= w->want) {
				addr[k] = addr[i];
				nodes[k++] = w->to_os;
			}
		if (k == 0)
			continue;
		int rc = move_batch(w->pid, (unsigned long)k, addr, nodes,
				    status);
		if (rc < 0)
			return rc;
		for (int i = 0; i < k; i++)
			w->moved += status[i] == w->to_os ? w->page : 0;
		if (placer_came(w))
			return -ESRCH;
	}
	return 0;
}

struct vma {
	unsigned long start, end;
};

/* The process's mappings from /proc/PID/maps (their ends). */
static int read_maps(pid_t pid, struct vma **out, size_t *n)
{
	char path[NL_FS_PATH], *line = NULL;
	size_t cap = 0, k = 0, room = 0;
	struct vma *v = NULL;
	FILE *f;

	nl_fs_path(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		if (k == room) {
			size_t c = room ? room * 2 : 64;
			struct vma *x = realloc(v, c * sizeof(*x));
			if (!x) {
				free(v);
				free(line);
				fclose(f);
				return -ENOMEM;
			}
			v = x;
			room = c;
		}
		v[k++] = (struct vma){a, b};
	}
	free(line);
	fclose(f);
	*out = v;
	*n = k;
	return 0;
}

static unsigned long vma_end(const struct vma *v, size_t n, unsigned long start)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].start == start)
			return v[i].end;
	return start;
}

/* Whether a numa_maps line shows pages on node `os`. */
static int has_pages_on(const char *line, int os)
{
	char key[16];
	snprintf(key, sizeof(key), " N%d=", os);
	return strstr(line, key) != NULL;
}

/* A private anonymous mapping numalot may move pages of. */
struct range {
	unsigned long start, end;
};

/* Whether page lies in one of the ranges. */
static int in_ranges(const struct range *g, size_t n, unsigned long page)
{
	for (size_t i = 0; i < n; i++)
		if (page >= g[i].start && page < g[i].end)
			return 1;
	return 0;
}

/*
 * Hot pages first: the pages sampled most on the source node (hot.h), those
 * still there and in a mapping numalot may move, up to the bytes asked.
 */
static int move_hot(struct walk *w, struct nl_hot *hot, const struct range *g,
		    size_t ng, double *hot_moved)
{
	uint64_t pick[BATCH];
	void *addr[BATCH];
	int status[BATCH], nodes[BATCH];
	size_t max = (size_t)(w->want / (double)w->page), n, k = 0;

	if (max > BATCH)
		max = BATCH;
	n = nl_hot_pick(hot, w->from_os, pick, max);
	for (size_t i = 0; i < n; i++)
		if (in_ranges(g, ng, pick[i]))
			addr[k++] = (void *)(uintptr_t)pick[i];
	if (k == 0)
		return 0;
	if (move_pages(w->pid, k, addr, NULL, status, 0) < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	n = 0;
	for (size_t i = 0; i < k; i++) {
		if (status[i] != w->from_os) {
			/* Moved since it was sampled (by the kernel?). */
			if (status[i] >= 0)
				nl_hot_moved(hot, (uintptr_t)addr[i],
					     status[i]);
			continue;
		}
		addr[n] = addr[i];
		nodes[n++] = w->to_os;
	}
	if (n == 0)
		return 0;
	int rc = move_batch(w->pid, n, addr, nodes, status);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		if (status[i] == w->to_os) {
			w->moved += (double)w->page;
			*hot_moved += (double)w->page;
			nl_hot_moved(hot, (uintptr_t)addr[i], w->to_os);
		}
	return placer_came(w) ? -ESRCH : 0;
}

int nl_real_move_pages(struct nl_machine *m, int pid, int from, int to,
		       double max_bytes, int flags, double *moved)
{
	struct real *r = R(m);
	const struct nl_topology *t = m->topo;
	struct walk w = {.r = r, .pid = pid, .want = max_bytes};
	char path[64], *line = NULL;
	size_t cap = 0, nv = 0, ng = 0;
	struct vma *v = NULL;
	struct range *g = NULL;
	struct rproc *p = proc_of(r, pid);
	FILE *f;
	int rc = 0;

	*moved = 0;
	if (!p || p->info.real.let_go[0]) /* left to another placer */
		return -ESRCH;
	if (from < 0 || from >= t->nnodes || to < 0 || to >= t->nnodes ||
	    !(max_bytes >= 0))
		return -EINVAL;
	if (from == to || numa_available() < 0 || numa_max_node() < 1)
		return 0;
	w.from_os = t->node_os[from];
	w.to_os = t->node_os[to];
	w.page = (unsigned long)sysconf(_SC_PAGESIZE);
	w.huge = huge_page();
	w.p = p;
	w.next_look = nl_mono_s() + LOOK_EVERY_S;
	rc = read_maps(pid, &v, &nv);
	if (rc < 0)
		return rc;
	nl_fs_path(path, sizeof(path), "/proc/%d/numa_maps", pid);
	f = fopen(path, "re");
	if (!f) {
		free(v);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	/* The mappings it may move: private anonymous memory (the data the
	 * threads made) with pages on the source node, not held by a policy
	 * of its own. */
	g = calloc(nv ? nv : 1, sizeof(*g));
	rc = g ? 0 : -ENOMEM;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		unsigned long start;
		if (sscanf(line, "%lx", &start) != 1 ||
		    !strstr(line, "anon=") || !has_pages_on(line, w.from_os))
			continue;
		if (held_by_policy(line, flags)) {
			w.bound_seen = 1;
			continue;
		}
		if (ng < nv)
			g[ng++] = (struct range){start, vma_end(v, nv, start)};
	}
	fclose(f);
	free(line);
	free(v);
	if (rc == 0 && p->hot)
		rc = move_hot(&w, p->hot, g, ng, &p->info.real.hot_moved_bytes);
	for (size_t i = 0; rc == 0 && i < ng && w.moved < w.want; i++)
		rc = walk_range(&w, g[i].start, g[i].end);
	free(g);
	*moved = w.moved;
	/* Where its pages are changed: read numa_maps again next time, and
	 * know those moves for numalot's own (peers.c). */
	if (w.moved > 0) {
		p->have_pages = 0;
		p->moved_since += w.moved;
	}
	if (rc == 0 && w.moved == 0 && w.bound_seen)
		return -EPERM;
	return rc;
}
