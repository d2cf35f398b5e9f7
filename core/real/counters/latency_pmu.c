/*
 * numalot: which PMU samples memory latency here, and its encoding, from
 * the kernel's sysfs description (events/ and format/ files), the way
 * perf's own cpu/mem-loads,ldlat=N/ syntax is resolved.
 */
#include "latency.h"
#include "procfs.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CPUFREQ_BASE "/sys/devices/system/cpu/cpu0/cpufreq/base_frequency"

/* dir/sub into buf; a path too long for buf is an error, not a guess. */
static int join(char *buf, size_t len, const char *dir, const char *sub)
{
	int n = snprintf(buf, len, "%s/%s", dir, sub);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first line of a small text file, without its newline. */
static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	while (isspace((unsigned char)*end))
		end++;
	return errno || *end ? -EINVAL : 0;
}

static int config_word(const char *name, size_t len)
{
	if (len == 6 && !strncmp(name, "config", 6))
		return 0;
	if (len == 7 && !strncmp(name, "config1", 7))
		return 1;
	if (len == 7 && !strncmp(name, "config2", 7))
		return 2;
	return -1;
}

int nl_lat_format_apply(const char *format, uint64_t value, uint64_t cfg[3])
{
	const char *colon = strchr(format, ':'), *s;
	int word = colon ? config_word(format, (size_t)(colon - format)) : -1;
	uint64_t mask = 0, out = 0, v = value;
	int pass;

	if (word < 0)
		return -EINVAL;
	/* Two passes: check the whole text before changing cfg. */
	for (pass = 0; pass < 2; pass++) {
		s = colon + 1;
		for (;;) {
			char *end;
			unsigned long lo = strtoul(s, &end, 10), hi = lo;
			if (end == s || lo > 63)
				return -EINVAL;
			if (*end == '-') {
				s = end + 1;
				hi = strtoul(s, &end, 10);
				if (end == s || hi > 63 || hi < lo)
					return -EINVAL;
			}
			for (unsigned long b = lo; b <= hi; b++) {
				if (pass == 0) {
					mask |= 1ull << b;
				} else {
					out |= (v & 1) << b;
					v >>= 1;
				}
			}
			s = end;
			if (*s == ',') {
				s++;
				continue;
			}
			while (isspace((unsigned char)*s))
				s++;
			if (*s)
				return -EINVAL;
			break;
		}
	}
	if (v) /* wider than the field */
		return -EINVAL;
	cfg[word] = (cfg[word] & ~mask) | out;
	return 0;
}

/* A term name from sysfs becomes a file name: letters, digits, '_' only. */
static int term_name_ok(const char *name)
{
	if (!*name)
		return 0;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return 0;
	return 1;
}

static int encode_term(const char *pmu_dir, char *term, uint64_t cfg[3])
{
	char *eq = strchr(term, '='), path[512], fmt[128];
	uint64_t v = 1; /* a bare term ("edge") means 1 */
	int rc, word;

	if (eq) {
		*eq = '\0';
		/* "?" marks a value the user must give: ours come later. */
		if (strcmp(eq + 1, "?") == 0)
			v = 0;
		else if (parse_u64(eq + 1, &v) < 0)
			return -EINVAL;
	}
	if (!term_name_ok(term))
		return -EINVAL;
	char sub[80];
	if (snprintf(sub, sizeof(sub), "format/%s", term) >= (int)sizeof(sub) ||
	    join(path, sizeof(path), pmu_dir, sub) < 0)
		return -EINVAL;
	rc = read_text(path, fmt, sizeof(fmt));
	if (rc == -ENOENT) {
		/* config=, config1=, config2= set a whole word. */
		word = config_word(term, strlen(term));
		if (word < 0)
			return -ENOENT;
		cfg[word] = v;
		return 0;
	}
	return rc < 0 ? rc : nl_lat_format_apply(fmt, v, cfg);
}

int nl_lat_encode(const char *pmu_dir, const char *terms, uint64_t cfg[3])
{
	char buf[256], *save = NULL, *t;
	int rc = 0;

	if (snprintf(buf, sizeof(buf), "%s", terms) >= (int)sizeof(buf))
		return -EINVAL;
	for (t = strtok_r(buf, ",\n", &save); t && rc == 0;
	     t = strtok_r(NULL, ",\n", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		t[strcspn(t, " \t\r")] = '\0';
		if (*t)
			rc = encode_term(pmu_dir, t, cfg);
	}
	return rc;
}

int nl_lat_read_ghz(const char *base_freq_path, const char *cpuinfo_path,
		    double *ghz)
{
	char line[256];
	uint64_t khz;
	FILE *f;

	if (base_freq_path &&
	    read_text(base_freq_path, line, sizeof(line)) == 0 &&
	    parse_u64(line, &khz) == 0 && khz > 0) {
		*ghz = (double)khz / 1e6;
		return 0;
	}
	f = cpuinfo_path ? fopen(cpuinfo_path, "r") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		double mhz;
		if (strncmp(line, "cpu MHz", 7) == 0 &&
		    sscanf(strchr(line, ':') ? strchr(line, ':') + 1 : "",
			   "%lf", &mhz) == 1 &&
		    mhz > 0) {
			fclose(f);
			*ghz = mhz / 1e3;
			return 0;
		}
	}
	if (f)
		fclose(f);
	return -ENOENT;
}

static int read_type(const char *pmu_dir, uint32_t *type)
{
	char path[512], buf[32];
	uint64_t v;
	int rc;

	rc = join(path, sizeof(path), pmu_dir, "type");
	if (rc == 0)
		rc = read_text(path, buf, sizeof(buf));
	if (rc < 0 || parse_u64(buf, &v) < 0 || v > UINT32_MAX)
		return -EINVAL;
	*type = (uint32_t)v;
	return 0;
}

static int has_file(const char *dir, const char *sub)
{
	char path[512];
	return join(path, sizeof(path), dir, sub) == 0 &&
	       access(path, F_OK) == 0;
}

/* The ldlat event, with our threshold; mem-loads-aux where it exists. */
static int pebs_setup(const char *pmu_dir, struct nl_lat_pmu *p)
{
	char path[512], text[256], ldlat[32];
	uint64_t cfg[3] = {0, 0, 0}, aux[3] = {0, 0, 0};
	int rc;

	rc = join(path, sizeof(path), pmu_dir, "events/mem-loads");
	if (rc == 0)
		rc = read_text(path, text, sizeof(text));
	if (rc == 0)
		rc = nl_lat_encode(pmu_dir, text, cfg);
	/* Without an ldlat field there is no threshold to set. */
	if (rc == 0 && !has_file(pmu_dir, "format/ldlat"))
		rc = -EINVAL;
	snprintf(ldlat, sizeof(ldlat), "ldlat=%d", NL_LAT_LDLAT_CYCLES);
	if (rc == 0)
		rc = nl_lat_encode(pmu_dir, ldlat, cfg);
	if (rc < 0)
		return -EINVAL;
	if (join(path, sizeof(path), pmu_dir, "events/mem-loads-aux") == 0 &&
	    read_text(path, text, sizeof(text)) == 0) {
		if (nl_lat_encode(pmu_dir, text, aux) < 0)
			return -EINVAL;
		p->aux = 1;
		p->aux_config = aux[0];
	}
	p->kind = NL_LAT_PEBS;
	p->config = cfg[0];
	p->config1 = cfg[1];
	p->config2 = cfg[2];
	p->ldlat = NL_LAT_LDLAT_CYCLES;
	p->period = NL_LAT_PEBS_PERIOD;
	p->exclude_kernel = 1;
	return 0;
}

/*
 * IBS op (Linux 6.1+ fills data_src, weight = DcMissLat and the data
 * address). Count ops rather than cycles when the CPU can (cnt_ctl), only
 * L3 misses where the CPU can (l3missonly, Zen 4), and filter out kernel
 * samples where the kernel can (swfilt): without it IBS refuses exclude_*.
 */
static int ibs_setup(const char *pmu_dir, struct nl_lat_pmu *p)
{
	struct utsname u;
	int major = 0, minor = 0;
	uint64_t cfg[3] = {0, 0, 0};
	int ops = has_file(pmu_dir, "format/cnt_ctl");
	int l3 = has_file(pmu_dir, "format/l3missonly");
	int sw = has_file(pmu_dir, "format/swfilt");

	/* Before 6.1 IBS samples carry none of the three generically. */
	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major < 6 || (major == 6 && minor < 1)))
		return -EOPNOTSUPP;
	if ((ops && nl_lat_encode(pmu_dir, "cnt_ctl=1", cfg) < 0) ||
	    (l3 && nl_lat_encode(pmu_dir, "l3missonly=1", cfg) < 0) ||
	    (sw && nl_lat_encode(pmu_dir, "swfilt=1", cfg) < 0))
		return -EINVAL;
	p->kind = NL_LAT_IBS;
	p->config = cfg[0];
	p->config1 = cfg[1];
	p->config2 = cfg[2];
	p->period = l3 ? NL_LAT_IBS_PERIOD_L3MISS : NL_LAT_IBS_PERIOD;
	p->exclude_kernel = sw;
	p->ibs_ops = ops;
	p->ibs_l3_miss = l3;
	return 0;
}

int nl_lat_pmu_find(const char *devices_dir, struct nl_lat_pmu *out)
{
	/* Hybrid Intel: the big cores' PMU (the small ones are not used). */
	static const char *const pmus[] = {"cpu_core", "cpu", "ibs_op"};
	char dir[512];
	double ghz;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++) {
		int ibs = !strcmp(pmus[i], "ibs_op"), rc;
		if (join(dir, sizeof(dir), devices_dir, pmus[i]) < 0)
			return -EINVAL;
		if (!has_file(dir, ibs ? "type" : "events/mem-loads"))
			continue;
		/* Named even on failure: the probe says which one. */
		snprintf(out->name, sizeof(out->name), "%s", pmus[i]);
		rc = read_type(dir, &out->type);
		if (rc == 0)
			rc = ibs ? ibs_setup(dir, out) : pebs_setup(dir, out);
		if (rc < 0)
			return rc;
		out->sample_type = PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT |
				   PERF_SAMPLE_DATA_SRC;
		/* Weights are core cycles: ns at the nominal clock (turbo and
		 * power saving make this an approximation). Unknown clock:
		 * 1 GHz, the mean is then in cycles. */
		out->ns_per_cycle = 1.0;
		char base[NL_FS_PATH], cpuinfo[NL_FS_PATH];
		nl_fs_path(base, sizeof(base), CPUFREQ_BASE);
		nl_fs_path(cpuinfo, sizeof(cpuinfo), "/proc/cpuinfo");
		if (nl_lat_read_ghz(base, cpuinfo, &ghz) == 0)
			out->ns_per_cycle = 1.0 / ghz;
		return 0;
	}
	return -ENOENT;
}

void nl_lat_attr(const struct nl_lat_pmu *p, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = p->type;
	a->config = p->config;
	a->config1 = p->config1;
	a->config2 = p->config2;
	a->sample_period = p->period;
	a->sample_type = p->sample_type;
	/* PEBS: the most precise level; the opener steps down from here. */
	a->precise_ip = p->kind == NL_LAT_PEBS ? 3 : 0;
	a->exclude_kernel = (unsigned)p->exclude_kernel;
	a->exclude_hv = (unsigned)p->exclude_kernel;
}
