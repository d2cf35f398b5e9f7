/* numalot: find out, by trying, which counters this node really offers. */
#include "counters.h"
#include "latency.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", v) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Why perf_event_open said no, in words an administrator can act on. */
void nl_probe_perf_reason(char *buf, size_t len, int err, int paranoid,
			  int pmu_present)
{
	switch (err) {
	case EACCES:
	case EPERM:
		snprintf(buf, len,
			 "not permitted (perf_event_paranoid=%d; needs root, "
			 "CAP_PERFMON or a lower paranoid setting)",
			 paranoid);
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case EINVAL:
		snprintf(buf, len, "%s",
			 pmu_present ? "not supported by this CPU or kernel"
				     : "no PMU: the kernel exposes no hardware "
				       "counters (a virtual machine without a "
				       "virtual PMU?)");
		break;
	case EBUSY:
		snprintf(buf, len, "counter in use by another tool");
		break;
	case EMFILE:
	case ENFILE:
		snprintf(buf, len,
			 "out of file descriptors (raise RLIMIT_NOFILE)");
		break;
	default:
		snprintf(buf, len, "perf_event_open failed: %s", strerror(err));
	}
}

static void try_perf(struct nl_probe *p, struct nl_probe_backend *b,
		     const char *name, uint32_t type, uint64_t config,
		     pid_t tid)
{
	struct nl_probe_event *e = &b->events[b->nevents++];
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.exclude_hv = 1;
	e->name = name;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		e->available = 1;
		snprintf(e->reason, sizeof(e->reason), "opened on a thread");
		close(fd);
	} else {
		nl_probe_perf_reason(e->reason, sizeof(e->reason), errno,
				     p->perf_event_paranoid, p->pmu_present);
	}
}

static void probe_software(struct nl_probe *p, pid_t tid)
{
	struct nl_probe_backend *b = &p->backend[NL_BACKEND_SOFTWARE];
	try_perf(p, b, "task-clock", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_TASK_CLOCK, tid);
	try_perf(p, b, "context-switches", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_CONTEXT_SWITCHES, tid);
	try_perf(p, b, "cpu-migrations", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_CPU_MIGRATIONS, tid);
	try_perf(p, b, "page-faults", PERF_TYPE_SOFTWARE,
		 PERF_COUNT_SW_PAGE_FAULTS, tid);
	/* Always usable: without perf_event, utime+stime from /proc. */
	b->available = 1;
	if (b->events[0].available)
		snprintf(b->reason, sizeof(b->reason),
			 "CPU time and software events per thread; no ops, OI "
			 "or "
			 "latency: perf is the CPU share, plus data locality");
	else
		snprintf(b->reason, sizeof(b->reason),
			 "task-clock unavailable (%s): CPU time from /proc "
			 "utime+stime, at clock-tick resolution",
			 b->events[0].reason);
}

/*
 * Precise load-latency sampling, tried for real: the event opened on a
 * thread and its ring buffer mapped (what every managed thread will need).
 */
static void probe_latency(struct nl_probe *p, struct nl_probe_backend *b,
			  pid_t tid)
{
	struct nl_probe_event *e = &b->events[b->nevents++];
	struct nl_lat_pmu pmu;
	const char *where = "", *what;
	int rc = nl_lat_pmu_find(NL_LAT_SYSFS, &pmu);
	char why[112];

	e->name = "memory-latency sampling";
	if (rc == -ENOENT) {
		snprintf(e->reason, sizeof(e->reason),
			 "neither Intel PEBS mem-loads nor AMD IBS is exposed "
			 "by the kernel%s",
			 p->pmu_present ? "" : " (no PMU)");
		return;
	}
	what = strcmp(pmu.name, "ibs_op") == 0 ? "AMD IBS op"
					       : "Intel PEBS mem-loads";
	if (rc == -EOPNOTSUPP) {
		snprintf(e->reason, sizeof(e->reason),
			 "%s exposed, but kernels before 6.1 put no data "
			 "source, address or latency in its samples",
			 what);
		return;
	}
	if (rc < 0) {
		snprintf(e->reason, sizeof(e->reason),
			 "%s exposed, but its encoding in sysfs (%s) is "
			 "unreadable",
			 what, pmu.name);
		return;
	}
	rc = nl_lat_try(&pmu, tid, &where);
	if (rc == 0) {
		e->available = 1;
		if (pmu.kind == NL_LAT_PEBS)
			snprintf(e->reason, sizeof(e->reason),
				 "%s, ldlat %d cycles, 1 in %llu loads: opened "
				 "and mapped on a thread",
				 what, pmu.ldlat,
				 (unsigned long long)pmu.period);
		else
			snprintf(e->reason, sizeof(e->reason),
				 "%s, 1 in %llu %s%s: opened and mapped on a "
				 "thread",
				 what, (unsigned long long)pmu.period,
				 pmu.ibs_ops ? "ops" : "cycles",
				 pmu.ibs_l3_miss ? ", L3 misses only" : "");
		return;
	}
	if (strcmp(where, "mmap") == 0 && (rc == -EPERM || rc == -ENOMEM))
		snprintf(why, sizeof(why),
			 "its ring buffer could not be mapped (locked memory: "
			 "perf_event_mlock_kb, RLIMIT_MEMLOCK)");
	else
		nl_probe_perf_reason(why, sizeof(why), -rc,
				     p->perf_event_paranoid, p->pmu_present);
	if (snprintf(e->reason, sizeof(e->reason), "%s: %s: %s", what, where,
		     why) >= (int)sizeof(e->reason))
		e->reason[sizeof(e->reason) - 1] =
			'\0'; /* cut, still says it */
}

static void probe_perf(struct nl_probe *p, pid_t tid)
{
	struct nl_probe_backend *b = &p->backend[NL_BACKEND_PERF];

	try_perf(p, b, "instructions", PERF_TYPE_HARDWARE,
		 PERF_COUNT_HW_INSTRUCTIONS, tid);
	try_perf(p, b, "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
		 tid);
	try_perf(p, b, "cache-misses (last level)", PERF_TYPE_HARDWARE,
		 PERF_COUNT_HW_CACHE_MISSES, tid);
	probe_latency(p, b, tid);
	b->available = b->events[0].available && b->events[2].available;
	if (b->available)
		snprintf(b->reason, sizeof(b->reason),
			 "instructions and last-level misses per thread: ops/s "
			 "and OI; %s",
			 b->events[3].available
				 ? "latency by node from load sampling"
				 : "no latency term");
	else
		snprintf(b->reason, sizeof(b->reason), "%s",
			 !b->events[0].available ? b->events[0].reason
						 : b->events[2].reason);
}

void nl_probe_papi_reason(char *buf, size_t len, const char *event, int hwctrs)
{
	if (hwctrs <= 0)
		snprintf(buf, len,
			 "missing: PAPI finds no hardware counters here, so "
			 "no %s",
			 event);
	else
		snprintf(buf, len,
			 "missing: %s is no preset of this CPU (PAPI finds %d "
			 "hardware counter%s, none of them for %s)",
			 event, hwctrs, hwctrs == 1 ? "" : "s", event);
}

static void probe_papi(struct nl_probe *p, pid_t tid)
{
	struct nl_probe_backend *b = &p->backend[NL_BACKEND_PAPI];
	static const struct {
		const char *name;
		int code;
	} presets[] = {{"PAPI_TOT_INS", PAPI_TOT_INS},
		       {"PAPI_TOT_CYC", PAPI_TOT_CYC},
		       {"PAPI_FP_OPS", PAPI_FP_OPS},
		       {"PAPI_L3_TCM", PAPI_L3_TCM},
		       {"PAPI_L3_DCM", PAPI_L3_DCM}};
	int v = PAPI_library_init(PAPI_VER_CURRENT);
	(void)p;

	if (v != PAPI_VER_CURRENT && v != PAPI_EINVAL /* already done */) {
		snprintf(b->reason, sizeof(b->reason),
			 "PAPI_library_init failed: %s",
			 v > 0 ? "version mismatch" : PAPI_strerror(v));
		return;
	}
	const PAPI_component_info_t *ci = PAPI_get_component_info(0);
	if (ci && ci->disabled) {
		snprintf(b->reason, sizeof(b->reason),
			 "PAPI CPU component %.40s "
			 "disabled: %.180s",
			 ci->name, ci->disabled_reason);
	}
	int present = 0;
	char missing[96] = ""; /* the presets this CPU lacks */
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		struct nl_probe_event *e = &b->events[b->nevents++];
		e->name = presets[i].name;
		if (PAPI_query_event(presets[i].code) != PAPI_OK) {
			nl_probe_papi_reason(e->reason, sizeof(e->reason),
					     e->name, PAPI_num_cmp_hwctrs(0));
			snprintf(missing + strlen(missing),
				 sizeof(missing) - strlen(missing), "%s%s",
				 missing[0] ? ", " : "", e->name);
			continue;
		}
		/* Listed is not usable: attach to a thread and start it. */
		int set = PAPI_NULL, rc = PAPI_create_eventset(&set);
		long long val;
		if (rc == PAPI_OK)
			rc = PAPI_assign_eventset_component(set, 0);
		if (rc == PAPI_OK)
			rc = PAPI_attach(set, (unsigned long)tid);
		if (rc == PAPI_OK)
			rc = PAPI_add_event(set, presets[i].code);
		if (rc == PAPI_OK)
			rc = PAPI_start(set);
		if (rc == PAPI_OK) {
			PAPI_stop(set, &val);
			e->available = 1;
			present++;
			snprintf(e->reason, sizeof(e->reason),
				 "started on a thread");
		} else {
			snprintf(e->reason, sizeof(e->reason),
				 "listed but unusable: %s", PAPI_strerror(rc));
		}
		if (set != PAPI_NULL) {
			PAPI_cleanup_eventset(set);
			PAPI_destroy_eventset(&set);
		}
	}
	/* papi samples latency the same way as perf (tried there). */
	b->events[b->nevents++] = p->backend[NL_BACKEND_PERF].events[3];
	b->available = b->events[0].available;
	if (b->available)
		snprintf(b->reason, sizeof(b->reason),
			 "%d of %d presets usable per thread%s%s%s; %s",
			 present, (int)(sizeof(presets) / sizeof(presets[0])),
			 missing[0] ? " (missing: " : "", missing,
			 missing[0] ? ")" : "",
			 b->events[b->nevents - 1].available
				 ? "latency by node from load sampling"
				 : "no latency term");
	else if (!b->reason[0])
		snprintf(b->reason, sizeof(b->reason), "%s",
			 b->events[0].reason);
}

enum nl_backend nl_probe_pick(const struct nl_probe *p)
{
	/* PAPI's presets include FP ops; perf_event's generic events do not;
	 * software needs no PMU at all. */
	if (p->backend[NL_BACKEND_PAPI].available)
		return NL_BACKEND_PAPI;
	if (p->backend[NL_BACKEND_PERF].available)
		return NL_BACKEND_PERF;
	return NL_BACKEND_SOFTWARE;
}

void nl_counters_probe(pid_t tid, struct nl_probe *out)
{
	memset(out, 0, sizeof(*out));
	if (tid == 0)
		tid = (pid_t)syscall(SYS_gettid);
	if (read_int("/proc/sys/kernel/perf_event_paranoid",
		     &out->perf_event_paranoid) < 0)
		out->perf_event_paranoid = -1000;
	if (read_int("/proc/sys/kernel/numa_balancing", &out->numa_balancing) <
	    0)
		out->numa_balancing = -1;
	out->pmu_present =
		access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
		access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ||
		access("/sys/bus/event_source/devices/ibs_op", F_OK) == 0;
	probe_software(out, tid);
	probe_perf(out, tid);
	probe_papi(out, tid);
	out->backend[NL_BACKEND_AUTO].available = 1;
	out->best = nl_probe_pick(out);
	snprintf(out->backend[NL_BACKEND_AUTO].reason,
		 sizeof(out->backend[NL_BACKEND_AUTO].reason), "picks %s",
		 nl_backend_name(out->best));
}
