/*
 * numalot: memory-latency sampling per thread: the ring-buffer reader, the
 * data_src rule, address to node, and the per-thread sampling event
 * (latency.h; the PMU's encoding is in latency_pmu.c).
 */
#include "latency.h"
#include "procfs.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Addresses per move_pages call, and samples decoded at a time. */
#define BATCH 256
/* The longest record the reader copies out (ours are 32 bytes). */
#define REC_MAX_WORDS 64

/* The sample fields the reader can step over or decode, in record order. */
#define SUPPORTED_SAMPLE                                                       \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |                \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |        \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |                      \
	 PERF_SAMPLE_DATA_SRC)

int nl_lat_past_llc(uint64_t data_src)
{
	uint64_t op = (data_src >> PERF_MEM_OP_SHIFT) & 0x1f;
	uint64_t lvl = (data_src >> PERF_MEM_LVL_SHIFT) & 0x3fff;
	uint64_t num = (data_src >> PERF_MEM_LVLNUM_SHIFT) & 0xf;

	if (!(op & PERF_MEM_OP_LOAD))
		return 0;
	if (num == PERF_MEM_LVLNUM_RAM || num == PERF_MEM_LVLNUM_PMEM ||
	    num == PERF_MEM_LVLNUM_CXL)
		return 1;
	/* Older encodings say it in the legacy level only (Sandy Bridge's
	 * remote DRAM carries lvl_num L3). */
	return (lvl & PERF_MEM_LVL_HIT) &&
	       (lvl & (PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_REM_RAM1 |
		       PERF_MEM_LVL_REM_RAM2));
}

int nl_lat_ring_init(struct nl_lat_ring *r, void *base, size_t len,
		     uint64_t sample_type)
{
	struct perf_event_mmap_page *m = base;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t off = m->data_offset ? m->data_offset : page;
	uint64_t size = m->data_size ? m->data_size : len - page;

	if (len <= page || (sample_type & ~(uint64_t)SUPPORTED_SAMPLE) ||
	    ((sample_type & PERF_SAMPLE_WEIGHT) &&
	     (sample_type & PERF_SAMPLE_WEIGHT_STRUCT)) ||
	    size == 0 || (size & (size - 1)) || off + size > len)
		return -EINVAL;
	r->meta = base;
	r->data = (const unsigned char *)base + off;
	r->size = size;
	r->sample_type = sample_type;
	return 0;
}

/* n bytes at ring position pos, across the end of the area. */
static void ring_copy(const struct nl_lat_ring *r, uint64_t pos, void *dst,
		      size_t n)
{
	size_t off = (size_t)(pos & (r->size - 1));
	size_t first = n < r->size - off ? n : (size_t)(r->size - off);
	memcpy(dst, r->data + off, first);
	memcpy((char *)dst + first, r->data, n - first);
}

/* Decode a PERF_RECORD_SAMPLE of nw words (header included). */
static int parse_sample(uint64_t st, const uint64_t *w, size_t nw,
			struct nl_lat_rec *rec)
{
	static const uint64_t skip_before_addr[] = {PERF_SAMPLE_IDENTIFIER,
						    PERF_SAMPLE_IP};
	static const uint64_t skip_after_addr[] = {
		PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
		PERF_SAMPLE_PERIOD};
	size_t i = 1, need = 1;

	for (uint64_t b = st; b; b &= b - 1)
		need++; /* every supported field is one u64 */
	if (nw < need)
		return -EINVAL;
	memset(rec, 0, sizeof(*rec));
	for (size_t k = 0; k < 2; k++)
		i += (st & skip_before_addr[k]) != 0;
	if (st & PERF_SAMPLE_TID) {
		/* { u32 pid, tid; } in memory order */
		memcpy(&rec->pid, &w[i], sizeof(rec->pid));
		memcpy(&rec->tid, (const char *)&w[i] + 4, sizeof(rec->tid));
		i++;
	}
	if (st & PERF_SAMPLE_TIME)
		rec->time = w[i++];
	if (st & PERF_SAMPLE_ADDR)
		rec->addr = w[i++];
	for (size_t k = 0; k < 4; k++)
		i += (st & skip_after_addr[k]) != 0;
	if (st & PERF_SAMPLE_WEIGHT)
		rec->weight = w[i++];
	else if (st & PERF_SAMPLE_WEIGHT_STRUCT)
		rec->weight = (uint32_t)w[i++]; /* var1_dw: the latency */
	if (st & PERF_SAMPLE_DATA_SRC)
		rec->data_src = w[i++];
	return 0;
}

size_t nl_lat_ring_read(struct nl_lat_ring *r, struct nl_lat_rec *out,
			size_t max, struct nl_lat_stats *st)
{
	struct perf_event_mmap_page *m = r->meta;
	/* Acquire: the records before data_head are complete once seen. */
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&m->data_tail, __ATOMIC_RELAXED);
	uint64_t w[REC_MAX_WORDS];
	size_t n = 0;

	if (head - tail > r->size) { /* never from a sane kernel */
		st->malformed++;
		tail = head;
	}
	while (n < max && head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail || h.size % 8) {
			st->malformed++; /* cannot find the next record */
			tail = head;
			break;
		}
		int wanted = h.type == PERF_RECORD_SAMPLE ||
			     h.type == PERF_RECORD_LOST ||
			     h.type == PERF_RECORD_THROTTLE;
		if (wanted && h.size > sizeof(w)) {
			st->malformed++;
		} else if (wanted) {
			ring_copy(r, tail, w, h.size);
			size_t nw = h.size / 8;
			if (h.type == PERF_RECORD_THROTTLE) {
				st->throttled++;
			} else if (h.type == PERF_RECORD_LOST) {
				if (nw >= 3)
					st->lost += w[2]; /* header, id, lost */
				else
					st->malformed++;
			} else if (parse_sample(r->sample_type, w, nw,
						&out[n]) == 0) {
				st->records++;
				n++;
			} else {
				st->malformed++;
			}
		}
		tail += h.size;
	}
	/* Release: our reads of the records happen before the kernel may
	 * reuse their space. */
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

int nl_lat_nodes(pid_t pid, const uint64_t *addr, size_t n, int *node)
{
	uint64_t mask = ~((uint64_t)sysconf(_SC_PAGESIZE) - 1);
	void *pages[BATCH];
	int status[BATCH];

	for (size_t i = 0; i < n; i += BATCH) {
		size_t k = n - i < BATCH ? n - i : BATCH;
		for (size_t j = 0; j < k; j++)
			pages[j] = (void *)(uintptr_t)(addr[i + j] & mask);
		/* nodes == NULL: only ask where each page is. */
		if (numa_move_pages(pid, k, pages, NULL, status, 0) < 0)
			return -errno;
		for (size_t j = 0; j < k; j++)
			node[i + j] = status[j] >= 0 ? status[j] : -1;
	}
	return 0;
}

static int dense_node(const int *node_os, int nnodes, int os)
{
	for (int i = 0; i < nnodes; i++)
		if (node_os[i] == os)
			return i;
	return -1;
}

/* Add k kept samples (addresses and latencies) to out by dense node. */
static int add_by_node(pid_t pid, const int *node_os, int nnodes,
		       const uint64_t *addr, const double *lat_ns, size_t k,
		       struct nl_sample *out, struct nl_lat_stats *st,
		       struct nl_hot *hot)
{
	int node[BATCH];
	int rc = nnodes > 0 ? nl_lat_nodes(pid, addr, k, node) : 0;

	/* A kernel without NUMA has no move_pages, and one node. */
	if (rc == -ENOSYS && nnodes == 1) {
		for (size_t j = 0; j < k; j++)
			node[j] = node_os[0];
		rc = 0;
	}
	if (rc < 0 || nnodes <= 0) {
		st->unresolved += k;
		return rc;
	}
	for (size_t j = 0; j < k; j++) {
		int d = node[j] >= 0 ? dense_node(node_os, nnodes, node[j])
				     : -1;
		if (d < 0 || d >= NL_MAX_NODES) {
			st->unresolved++;
			continue;
		}
		out->lat_count[d] += 1;
		out->lat_sum_ns[d] += lat_ns[j];
		st->kept++;
		if (hot)
			nl_hot_add(hot, addr[j],
				   (uint64_t)sysconf(_SC_PAGESIZE), node[j]);
	}
	return 0;
}

static void stats_add(struct nl_lat_stats *a, const struct nl_lat_stats *b)
{
	a->records += b->records;
	a->kept += b->kept;
	a->filtered += b->filtered;
	a->unresolved += b->unresolved;
	a->lost += b->lost;
	a->throttled += b->throttled;
	a->malformed += b->malformed;
}

int nl_lat_collect(struct nl_lat_ring *r, const struct nl_lat_pmu *p, pid_t pid,
		   const int *node_os, int nnodes, struct nl_sample *out,
		   struct nl_lat_stats *st, struct nl_hot *hot)
{
	struct nl_lat_rec rec[BATCH];
	uint64_t addr[BATCH];
	double lat[BATCH];
	struct nl_lat_stats s = {0};
	/* At most a ring's worth per call: a thread that samples faster
	 * than we read cannot keep us here. */
	uint64_t budget = r->size / sizeof(struct perf_event_header);
	int rc = 0;

	while (budget > 0) {
		size_t got = nl_lat_ring_read(r, rec, BATCH, &s), k = 0;
		budget = got < budget ? budget - got : 0;
		for (size_t j = 0; j < got; j++) {
			/* PEBS and IBS: only loads past the LLC, with a
			 * latency; a raw event has no data source. */
			if (p->kind != NL_LAT_RAW &&
			    (!nl_lat_past_llc(rec[j].data_src) ||
			     rec[j].weight == 0)) {
				s.filtered++;
				continue;
			}
			addr[k] = rec[j].addr;
			lat[k++] = (double)rec[j].weight * p->ns_per_cycle;
		}
		if (k > 0 && rc == 0)
			rc = add_by_node(pid, node_os, nnodes, addr, lat, k,
					 out, &s, hot);
		else if (k > 0)
			s.unresolved += k;
		if (got < BATCH)
			break;
	}
	if (s.kept > 0)
		out->measured |= NL_M_LATENCY;
	if (st)
		stats_add(st, &s);
	return rc;
}

struct nl_lat_sampler {
	struct nl_lat_pmu pmu;
	pid_t pid;
	int fd, aux_fd;
	void *map;
	size_t map_len;
	struct nl_lat_ring ring;
	struct nl_lat_stats stats;
};

static int perf_open(struct perf_event_attr *a, pid_t tid, int group)
{
	int fd = (int)syscall(SYS_perf_event_open, a, tid, -1, group,
			      PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* PEBS: step precise_ip down until the CPU takes it (as perf's :P). */
static int open_sampling(const struct nl_lat_pmu *p, pid_t tid, int group)
{
	struct perf_event_attr a;
	int fd;

	nl_lat_attr(p, &a);
	for (;;) {
		fd = perf_open(&a, tid, group);
		if (fd >= 0 || p->kind != NL_LAT_PEBS || a.precise_ip <= 1 ||
		    (fd != -EINVAL && fd != -EOPNOTSUPP))
			return fd;
		a.precise_ip--;
	}
}

/* 1 + 2^n pages, MAP_SHARED and writable: the kernel then never
 * overwrites what we have not read, it drops and counts (PERF_RECORD_LOST).
 * Past perf_event_mlock_kb the mapping is charged to RLIMIT_MEMLOCK and
 * refused when that is spent (EPERM): try a smaller ring then. */
static int map_ring(struct nl_lat_sampler *s)
{
	static const int pages[] = {NL_LAT_DATA_PAGES, NL_LAT_DATA_PAGES_MIN};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int rc = -EINVAL;

	for (size_t i = 0; i < 2; i++) {
		size_t len = (1 + (size_t)pages[i]) * page;
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       s->fd, 0);
		if (m != MAP_FAILED) {
			s->map = m;
			s->map_len = len;
			return nl_lat_ring_init(&s->ring, m, len,
						s->pmu.sample_type);
		}
		rc = -errno;
		if (rc != -EPERM && rc != -ENOMEM)
			break;
	}
	return rc;
}

int nl_lat_open(const struct nl_lat_pmu *p, pid_t pid, pid_t tid,
		struct nl_lat_sampler **out, const char **where)
{
	struct nl_lat_sampler *s = calloc(1, sizeof(*s));
	const char *step = "perf_event_open";
	int rc = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->pmu = *p;
	s->pid = pid;
	s->fd = s->aux_fd = -1;
	if (p->aux) {
		/* Sapphire Rapids and the big cores of Alder Lake take the
		 * ldlat event only behind this one (a counter, no samples). */
		struct perf_event_attr a;
		nl_lat_attr(p, &a);
		a.config = p->aux_config;
		a.config1 = a.config2 = 0;
		a.sample_period = 0;
		a.sample_type = 0;
		a.precise_ip = 0;
		s->aux_fd = perf_open(&a, tid, -1);
		if (s->aux_fd < 0) {
			rc = s->aux_fd;
			step = "perf_event_open (mem-loads-aux)";
		}
	}
	if (rc == 0) {
		s->fd = open_sampling(p, tid, s->aux_fd);
		rc = s->fd < 0 ? s->fd : 0;
	}
	if (rc == 0) {
		rc = map_ring(s);
		step = "mmap";
	}
	if (rc < 0) {
		if (where)
			*where = step;
		nl_lat_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int nl_lat_read(struct nl_lat_sampler *s, const int *node_os, int nnodes,
		struct nl_sample *out, struct nl_hot *hot)
{
	return nl_lat_collect(&s->ring, &s->pmu, s->pid, node_os, nnodes, out,
			      &s->stats, hot);
}

const char *nl_lat_kind_name(const struct nl_lat_sampler *s)
{
	if (!s)
		return NULL;
	return s->pmu.kind == NL_LAT_PEBS  ? "PEBS"
	       : s->pmu.kind == NL_LAT_IBS ? "IBS"
					   : "raw event";
}

const struct nl_lat_stats *nl_lat_stats(const struct nl_lat_sampler *s)
{
	return &s->stats;
}

void nl_lat_close(struct nl_lat_sampler *s)
{
	if (!s)
		return;
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	if (s->aux_fd >= 0)
		close(s->aux_fd);
	free(s);
}

int nl_lat_try(const struct nl_lat_pmu *p, pid_t tid, const char **where)
{
	struct nl_lat_sampler *s;
	int rc = nl_lat_open(p, getpid(), tid, &s, where);
	nl_lat_close(s);
	return rc;
}

static struct {
	int state; /* 0 not probed, 1 usable, -1 not */
	struct nl_lat_pmu pmu;
} def;

const struct nl_lat_pmu *nl_lat_default(void)
{
	if (def.state == 0) {
		def.state = -1;
		char dir[NL_FS_PATH];
		nl_fs_path(dir, sizeof(dir), NL_LAT_SYSFS);
		if (nl_lat_pmu_find(dir, &def.pmu) == 0 &&
		    nl_lat_try(&def.pmu, 0, NULL) == 0)
			def.state = 1;
	}
	return def.state > 0 ? &def.pmu : NULL;
}

void nl_lat_set_default(const struct nl_lat_pmu *p)
{
	def.state = p ? 1 : -1;
	if (p)
		def.pmu = *p;
}
