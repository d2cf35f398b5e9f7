/*
 * Unit tests of memory-latency sampling that need no PMU and no machine:
 * the sysfs encoding against recorded text, the data_src rule, and the
 * ring-buffer reader on buffers built here (wrap-around, lost and foreign
 * records, broken ones). test_latency_live.c runs the rest on this node.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "latency.h"
#include "latency_fixtures.h"

/* ---- a sysfs tree written by the test ---- */

static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s;
	     s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int rm_one(const char *p, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_tree(const char *root)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Intel's cpu PMU as Skylake-SP and later kernels describe it. */
static void put_intel(const char *root, const char *pmu)
{
	char rel[128];
	static const char *const files[][2] = {
		{"type", "4\n"},
		{"events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n"},
		{"events/mem-stores", "event=0xd0,umask=0x82\n"},
		{"format/event", "config:0-7\n"},
		{"format/umask", "config:8-15\n"},
		{"format/edge", "config:18\n"},
		{"format/inv", "config:23\n"},
		{"format/cmask", "config:24-31\n"},
		{"format/ldlat", "config1:0-15\n"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "%s/%s", pmu, files[i][0]);
		put(root, rel, files[i][1]);
	}
}

static void format_apply(void **state)
{
	(void)state;
	uint64_t cfg[3] = {0, 0, 0};
	assert_int_equal(nl_lat_format_apply("config:0-7\n", 0xcd, cfg), 0);
	assert_int_equal(nl_lat_format_apply("config:8-15", 0x1, cfg), 0);
	assert_true(cfg[0] == 0x1cd);
	assert_int_equal(nl_lat_format_apply("config1:0-15", 3, cfg), 0);
	assert_int_equal(nl_lat_format_apply("config1:0-15", 64, cfg), 0);
	assert_true(cfg[1] == 64); /* the later value replaces the field */
	assert_int_equal(nl_lat_format_apply("config2:0", 1, cfg), 0);
	assert_true(cfg[2] == 1);
	/* Split field: low bits first, then the next range. */
	memset(cfg, 0, sizeof(cfg));
	assert_int_equal(nl_lat_format_apply("config:0-7,32-35", 0x1cd, cfg),
			 0);
	assert_true(cfg[0] == (0xcdull | (1ull << 32)));
	/* Errors leave cfg alone. */
	assert_int_equal(nl_lat_format_apply("config:0-7", 0x100, cfg),
			 -EINVAL);
	assert_int_equal(nl_lat_format_apply("config3:0", 1, cfg), -EINVAL);
	assert_int_equal(nl_lat_format_apply("config:8-4", 1, cfg), -EINVAL);
	assert_int_equal(nl_lat_format_apply("config:64", 1, cfg), -EINVAL);
	assert_int_equal(nl_lat_format_apply("config:0-x", 1, cfg), -EINVAL);
	assert_int_equal(nl_lat_format_apply("config", 1, cfg), -EINVAL);
	assert_true(cfg[0] == (0xcdull | (1ull << 32)));
}

static void encode_terms(void **state)
{
	(void)state;
	char root[] = "/tmp/nl_lat_XXXXXX", dir[64];
	uint64_t cfg[3] = {0, 0, 0};
	assert_non_null(mkdtemp(root));
	put_intel(root, "cpu");
	snprintf(dir, sizeof(dir), "%s/cpu", root);
	assert_int_equal(
		nl_lat_encode(dir, "event=0xcd,umask=0x1,ldlat=3\n", cfg), 0);
	assert_true(cfg[0] == 0x1cd && cfg[1] == 3 && cfg[2] == 0);
	assert_int_equal(nl_lat_encode(dir, " edge , ldlat=64", cfg), 0);
	assert_true(cfg[0] == (0x1cd | 1u << 18) && cfg[1] == 64);
	assert_int_equal(nl_lat_encode(dir, "config=0x1234", cfg), 0);
	assert_true(cfg[0] == 0x1234);
	assert_int_equal(nl_lat_encode(dir, "ldlat=?", cfg), 0);
	assert_true(cfg[1] == 0);
	assert_int_equal(nl_lat_encode(dir, "frontend=1", cfg), -ENOENT);
	assert_int_equal(nl_lat_encode(dir, "../type=1", cfg), -EINVAL);
	assert_int_equal(nl_lat_encode(dir, "event=zz", cfg), -EINVAL);
	assert_int_equal(nl_lat_encode(dir, "event=-1", cfg), -EINVAL);
	rm_tree(root);
}

static void pmu_intel(void **state)
{
	(void)state;
	char root[] = "/tmp/nl_lat_XXXXXX", dir[64];
	struct nl_lat_pmu p;
	struct perf_event_attr a;
	assert_non_null(mkdtemp(root));
	assert_int_equal(nl_lat_pmu_find(root, &p), -ENOENT); /* no PMU */
	put_intel(root, "cpu");
	assert_int_equal(nl_lat_pmu_find(root, &p), 0);
	assert_int_equal(p.kind, NL_LAT_PEBS);
	assert_string_equal(p.name, "cpu");
	assert_int_equal(p.type, 4);
	assert_true(p.config == 0x1cd);
	assert_true(p.config1 == NL_LAT_LDLAT_CYCLES);
	assert_int_equal(p.ldlat, NL_LAT_LDLAT_CYCLES);
	assert_int_equal(p.aux, 0);
	assert_true(p.period == NL_LAT_PEBS_PERIOD);
	assert_true(p.sample_type == (PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT |
				      PERF_SAMPLE_DATA_SRC));
	assert_true(p.ns_per_cycle > 0);
	nl_lat_attr(&p, &a);
	assert_int_equal(a.type, 4);
	assert_true(a.config == 0x1cd && a.config1 == NL_LAT_LDLAT_CYCLES);
	assert_int_equal(a.precise_ip, 3);
	assert_true(a.sample_period == NL_LAT_PEBS_PERIOD && !a.freq);
	assert_true(a.exclude_kernel && a.exclude_hv && !a.disabled);
	/* Sapphire Rapids: the auxiliary event leads the group. */
	put(root, "cpu/events/mem-loads-aux", "event=0x03,umask=0x82\n");
	assert_int_equal(nl_lat_pmu_find(root, &p), 0);
	assert_int_equal(p.aux, 1);
	assert_true(p.aux_config == 0x8203);
	/* Hybrid: the big cores' PMU wins. */
	put_intel(root, "cpu_core");
	put(root, "cpu_core/type", "8\n");
	assert_int_equal(nl_lat_pmu_find(root, &p), 0);
	assert_string_equal(p.name, "cpu_core");
	assert_int_equal(p.type, 8);
	/* No ldlat field: no threshold, not usable. */
	snprintf(dir, sizeof(dir), "%s/cpu_core/format/ldlat", root);
	unlink(dir);
	assert_int_equal(nl_lat_pmu_find(root, &p), -EINVAL);
	assert_string_equal(p.name, "cpu_core");
	rm_tree(root);
}

static void pmu_amd(void **state)
{
	(void)state;
	char root[] = "/tmp/nl_lat_XXXXXX";
	struct nl_lat_pmu p;
	struct perf_event_attr a;
	assert_non_null(mkdtemp(root));
	/* Zen 3: ops counting, no L3-miss filter, no software filter. */
	put(root, "ibs_op/type", "11\n");
	put(root, "ibs_op/format/cnt_ctl", "config:19\n");
	assert_int_equal(nl_lat_pmu_find(root, &p), 0);
	assert_int_equal(p.kind, NL_LAT_IBS);
	assert_int_equal(p.type, 11);
	assert_true(p.config == 1ull << 19 && p.config2 == 0);
	assert_true(p.period == NL_LAT_IBS_PERIOD && p.period % 16 == 0);
	assert_true(p.ibs_ops && !p.ibs_l3_miss);
	nl_lat_attr(&p, &a);
	/* IBS refuses exclude_* without swfilt. */
	assert_true(!a.exclude_kernel && !a.exclude_hv && !a.precise_ip);
	/* Zen 4 on a recent kernel. */
	put(root, "ibs_op/format/l3missonly", "config:16\n");
	put(root, "ibs_op/format/swfilt", "config2:0\n");
	assert_int_equal(nl_lat_pmu_find(root, &p), 0);
	assert_true(p.config == ((1ull << 19) | (1ull << 16)));
	assert_true(p.config2 == 1);
	assert_true(p.period == NL_LAT_IBS_PERIOD_L3MISS && p.ibs_l3_miss);
	nl_lat_attr(&p, &a);
	assert_true(a.exclude_kernel && a.config2 == 1);
	put(root, "ibs_op/type", "x\n");
	assert_int_equal(nl_lat_pmu_find(root, &p), -EINVAL);
	rm_tree(root);
}

static void cpu_ghz(void **state)
{
	(void)state;
	char root[] = "/tmp/nl_lat_XXXXXX", base[64], info[64];
	double ghz = 0;
	assert_non_null(mkdtemp(root));
	snprintf(base, sizeof(base), "%s/base_frequency", root);
	snprintf(info, sizeof(info), "%s/cpuinfo", root);
	assert_int_equal(nl_lat_read_ghz(base, info, &ghz), -ENOENT);
	put(root, "cpuinfo",
	    "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2994.374\n");
	assert_int_equal(nl_lat_read_ghz(base, info, &ghz), 0);
	assert_true(ghz > 2.9943 && ghz < 2.9944);
	put(root, "base_frequency", "garbage\n");
	assert_int_equal(nl_lat_read_ghz(base, info, &ghz), 0);
	assert_true(ghz > 2.99 && ghz < 3.0);
	put(root, "base_frequency", "2100000\n");
	assert_int_equal(nl_lat_read_ghz(base, info, &ghz), 0);
	assert_true(ghz > 2.0999 && ghz < 2.1001);
	rm_tree(root);
}

static void data_src_rule(void **state)
{
	(void)state;
	/* Past the LLC: local and remote DRAM in every encoding. */
	assert_true(nl_lat_past_llc(DS_LOC_RAM));
	assert_true(nl_lat_past_llc(DS(OP, LOAD) | DS(LVL, HIT) |
				    DS(LVLNUM, RAM) | DS(REMOTE, REMOTE)));
	/* Sandy Bridge's remote DRAM: lvl_num says L3, the level RAM. */
	assert_true(nl_lat_past_llc(DS(OP, LOAD) | DS(LVL, HIT) |
				    DS(LVL, REM_RAM1) | DS(LVLNUM, L3)));
	assert_true(nl_lat_past_llc(DS(OP, LOAD) | DS(LVLNUM, PMEM)));
	assert_true(nl_lat_past_llc(DS(OP, LOAD) | DS(LVLNUM, CXL)));
	/* Not: cache hits, remote caches, unknown L3 miss, stores, NA. */
	assert_false(nl_lat_past_llc(DS_L3_HIT));
	assert_false(nl_lat_past_llc(DS(OP, LOAD) | DS(LVL, HIT) |
				     DS(LVL, REM_CCE1) | DS(LVLNUM, L3)));
	assert_false(nl_lat_past_llc(DS(OP, LOAD) | DS(LVL, HIT) |
				     DS(LVLNUM, ANY_CACHE) |
				     DS(REMOTE, REMOTE)));
	assert_false(nl_lat_past_llc(DS(OP, LOAD) | DS(LVL, MISS) |
				     DS(LVL, L3) | DS(LVLNUM, L3)));
	assert_false(nl_lat_past_llc(DS(OP, LOAD) | DS(LVLNUM, L4)));
	assert_false(nl_lat_past_llc(DS(OP, STORE) | DS(LVL, HIT) |
				     DS(LVL, LOC_RAM) | DS(LVLNUM, RAM)));
	assert_false(nl_lat_past_llc(DS(OP, LOAD) | DS(LVL, MISS) |
				     DS(LVL, LOC_RAM)));
	assert_false(
		nl_lat_past_llc(DS(OP, NA) | DS(LVL, NA) | DS(LVLNUM, NA)));
	assert_false(nl_lat_past_llc(0));
}

static void ring_wrap(void **state)
{
	(void)state;
	struct fake_ring f;
	struct nl_lat_ring r;
	struct nl_lat_rec rec[8];
	struct nl_lat_stats st = {0};
	const uint64_t lost[2] = {77, 7}, mmap_rec[3] = {1, 2, 3};
	const uint64_t thr[3] = {1, 2, 3};

	/* 256 bytes of data, starting near the end: records wrap. */
	fake_init(&f, 256, 200);
	assert_int_equal(nl_lat_ring_init(&r, f.mem, f.len, ST_TEST), 0);
	fake_sample(&f, 11, 1000, 0x1000, 300, DS_LOC_RAM); /* 200..248 */
	fake_sample(&f, 12, 1001, 0x2000, 310, DS_L3_HIT);  /* wraps */
	fake_put(&f, PERF_RECORD_LOST, lost, 2);
	fake_put(&f, PERF_RECORD_MMAP, mmap_rec, 3); /* not ours: skipped */
	fake_put(&f, PERF_RECORD_THROTTLE, thr, 3);
	fake_sample(&f, 13, 1002, 0x3000, 320, DS_LOC_RAM);
	assert_int_equal(nl_lat_ring_read(&r, rec, 8, &st), 3);
	assert_int_equal(rec[0].pid, 4242);
	assert_int_equal(rec[0].tid, 11);
	assert_true(rec[0].time == 1000 && rec[0].addr == 0x1000);
	assert_true(rec[0].weight == 300 && rec[0].data_src == DS_LOC_RAM);
	assert_int_equal(rec[1].tid, 12);
	assert_true(rec[1].addr == 0x2000 && rec[1].weight == 310);
	assert_true(rec[1].data_src == DS_L3_HIT);
	assert_true(rec[2].addr == 0x3000 && rec[2].time == 1002);
	assert_true(st.records == 3 && st.lost == 7 && st.throttled == 1);
	assert_true(st.malformed == 0);
	assert_true(f.meta->data_tail == f.meta->data_head);
	/* Nothing new: nothing read, the tail stays. */
	assert_int_equal(nl_lat_ring_read(&r, rec, 8, &st), 0);
	/* A partial read resumes where it stopped. */
	for (uint32_t i = 0; i < 3; i++)
		fake_sample(&f, 20 + i, 0, 0x4000 + i, 1, DS_LOC_RAM);
	assert_int_equal(nl_lat_ring_read(&r, rec, 2, &st), 2);
	assert_int_equal(rec[1].tid, 21);
	assert_true(f.meta->data_tail < f.meta->data_head);
	assert_int_equal(nl_lat_ring_read(&r, rec, 8, &st), 1);
	assert_int_equal(rec[0].tid, 22);
	/* A broken record: skip to the head rather than loop or crash. */
	struct perf_event_header bad = {.type = PERF_RECORD_SAMPLE, .size = 0};
	memcpy(f.mem + f.meta->data_offset + (f.pos & 255), &bad, 8);
	f.pos += 8;
	f.meta->data_head = f.pos;
	assert_int_equal(nl_lat_ring_read(&r, rec, 8, &st), 0);
	assert_true(st.malformed == 1 &&
		    f.meta->data_tail == f.meta->data_head);
	/* A sample shorter than its sample_type says. */
	const uint64_t shortb[2] = {1, 2};
	fake_put(&f, PERF_RECORD_SAMPLE, shortb, 2);
	assert_int_equal(nl_lat_ring_read(&r, rec, 8, &st), 0);
	assert_true(st.malformed == 2);
	/* A head more than a ring ahead of the tail is not believed. */
	f.meta->data_head += 4096;
	assert_int_equal(nl_lat_ring_read(&r, rec, 8, &st), 0);
	assert_true(st.malformed == 3 &&
		    f.meta->data_tail == f.meta->data_head);
	free(f.mem);
}

static void ring_layout(void **state)
{
	(void)state;
	struct fake_ring f;
	struct nl_lat_ring r;
	struct nl_lat_rec rec[2];
	struct nl_lat_stats st = {0};
	uint64_t st_all = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			  PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			  PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
			  PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT_STRUCT |
			  PERF_SAMPLE_DATA_SRC;
	uint32_t pt[2] = {5, 6};
	/* id, ip, pid/tid, time, addr, id, cpu, period, weight, data_src */
	uint64_t b[10] = {
		9,    0x400000,		  0,	     77, 0xabc000, 9, 1,
		1000, (3ull << 32) | 250, DS_LOC_RAM};
	memcpy(&b[2], pt, 8);

	fake_init(&f, 4096, 0);
	assert_int_equal(nl_lat_ring_init(&r, f.mem, f.len, st_all), 0);
	fake_put(&f, PERF_RECORD_SAMPLE, b, 10);
	assert_int_equal(nl_lat_ring_read(&r, rec, 2, &st), 1);
	assert_true(rec[0].pid == 5 && rec[0].tid == 6 && rec[0].time == 77);
	assert_true(rec[0].addr == 0xabc000 && rec[0].weight == 250);
	assert_true(rec[0].data_src == DS_LOC_RAM);
	/* What the reader cannot parse, it refuses up front. */
	assert_int_equal(nl_lat_ring_init(&r, f.mem, f.len,
					  ST_TEST | PERF_SAMPLE_CALLCHAIN),
			 -EINVAL);
	assert_int_equal(nl_lat_ring_init(&r, f.mem, f.len,
					  ST_TEST | PERF_SAMPLE_WEIGHT_STRUCT),
			 -EINVAL);
	f.meta->data_size = 200;
	assert_int_equal(nl_lat_ring_init(&r, f.mem, f.len, ST_TEST), -EINVAL);
	/* A kernel older than data_offset/data_size: the page after meta. */
	f.meta->data_size = 0;
	f.meta->data_offset = 0;
	assert_int_equal(nl_lat_ring_init(&r, f.mem, f.len, ST_TEST), 0);
	assert_true(r.size == page_size() && r.data == f.mem + page_size());
	free(f.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_apply), cmocka_unit_test(encode_terms),
		cmocka_unit_test(pmu_intel),	cmocka_unit_test(pmu_amd),
		cmocka_unit_test(cpu_ghz),	cmocka_unit_test(data_src_rule),
		cmocka_unit_test(ring_wrap),	cmocka_unit_test(ring_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
