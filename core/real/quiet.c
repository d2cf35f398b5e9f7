/*
 * numalot: is a process quiet? The refresh reads an idle counted thread's
 * events in turns (refresh.c); this tells, from one reading of the
 * process's CPU clock a refresh, whether the turns can be longer
 * (docs/real-node.md, "Cost").
 *
 * The process's CPU clock counts every thread's time, ended threads' too
 * (for another process the kernel leaves out what a thread on a CPU ran
 * since its last tick: a thread that woke busy shows a period late at
 * worst; on a tickless CPU (nohz_full), where a lone thread's time is
 * counted once a second, up to a second late, and never past its turn of
 * 16). While the whole process ran under QUIET_SHARE of a CPU since its
 * last refresh, none of its threads did: none woke busy (with the
 * policies' idle_share set below QUIET_SHARE, a thread between the two
 * is busy to them, and may wait for its turn of 16 to be read). Only
 * the whole: taking from it the
 * time of the threads read would mix two clocks (the events' exact one
 * and the kernel's, late by up to a tick a running thread), and could
 * hide a thread that woke behind another's lag.
 */
#include "real_priv.h"

#include <time.h>

/* The policies' line between idle and busy (idle_share, 0.05 by
 * default): a thread over it, or threads over it together, open the
 * gate. */
#define QUIET_SHARE 0.05

int nl_real_quiet(struct rproc *p)
{
	struct timespec ts;
	unsigned long long ns;
	double t;
	int quiet;

	/* A process of one thread has no idle one to leave unread. */
	if (p->nthreads < 2 || p->clk_state < 0)
		goto none;
	if (p->clk_state == 0)
		p->clk_state =
			clock_getcpuclockid(p->info.pid, &p->clk) == 0 ? 1 : -1;
	if (p->clk_state < 0 || clock_gettime(p->clk, &ts) < 0)
		goto none;
	ns = (unsigned long long)ts.tv_sec * 1000000000ull +
	     (unsigned long long)ts.tv_nsec;
	t = nl_mono_s();
	quiet = p->clk_t > 0 && t > p->clk_t && ns >= p->clk_ns &&
		(double)(ns - p->clk_ns) < QUIET_SHARE * (t - p->clk_t) * 1e9;
	p->clk_ns = ns;
	p->clk_t = t;
	return quiet;
none:
	p->clk_t = 0; /* no reading to go from next time */
	return 0;
}
