/* numalot: the operating system modelled under the simulated node. */
#ifndef NUMALOT_SIM_OS_MODE_H
#define NUMALOT_SIM_OS_MODE_H

/*
 * The operating system's treatment of threads that are not pinned, and of
 * pages (docs/machine-model.md, "Operating system"):
 * - NONE: a thread stays on the CPU it started on; pages never move.
 * - LINUX: fork balancing at start, the load balancer, and automatic NUMA
 *   balancing (thread placement towards data, private page migration).
 * - LINUX_NONUMA: the same without automatic NUMA balancing.
 * Fork balancing (the start placement) is the same under every mode.
 */
enum nl_os_mode {
	NL_OS_NONE,
	NL_OS_LINUX, /* kernel-like: costs, limits, adaptive scanning */
	NL_OS_LINUX_NONUMA,
	NL_OS_LINUX_IDEAL, /* idealised NUMA balancing: exact, free, at once */
};

/* "none", "linux", "linux-nonuma", "linux-ideal"; NULL for a bad value. */
const char *nl_os_mode_name(enum nl_os_mode mode);
/* 0 and *mode, or -EINVAL for an unknown name. */
int nl_os_mode_from_name(const char *name, enum nl_os_mode *mode);
/* "linux, linux-ideal, linux-nonuma, none" (for error messages). */
const char *nl_os_mode_names(void);

#endif
