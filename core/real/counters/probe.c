/* numalot: find out, by trying, which counters this node really offers. */
#include "counters_priv.h"
#include "latency.h"
#include "procfs.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Under the filesystem root (procfs.h). */
static int read_int(const char *file, int *v)
{
	char path[NL_FS_PATH];
	nl_fs_path(path, sizeof(path), "%s", file);
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", v) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static int exists(const char *file)
{
	char path[NL_FS_PATH];
	nl_fs_path(path, sizeof(path), "%s", file);
	return access(path, F_OK) == 0;
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

void nl_probe_try_perf(struct nl_probe *p, struct nl_probe_backend *b,
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
	out->pmu_present = exists(NL_LAT_SYSFS "/cpu") ||
			   exists(NL_LAT_SYSFS "/cpu_core") ||
			   exists(NL_LAT_SYSFS "/ibs_op");
	nl_counters_probe_backends(out, tid);
	out->backend[NL_BACKEND_AUTO].available = 1;
	out->best = nl_probe_pick(out);
	snprintf(out->backend[NL_BACKEND_AUTO].reason,
		 sizeof(out->backend[NL_BACKEND_AUTO].reason), "picks %s",
		 nl_backend_name(out->best));
}
