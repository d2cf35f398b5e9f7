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
 *
 * In a process that is not quiet, an idle counted thread is read in
 * turns of 8 refreshes, and the same clock tells when one woke sooner
 * (nl_real_wake): the process's share of a CPU over the window rose, since
 * the window before, by more than a busy thread's share (QUIET_SHARE and
 * a tick of the clock's lag at each end of the window), and by more than
 * WAKE_DEV times how much it moved from one window to the next of late
 * (busy threads that come and go, more threads' lag). Then the refresh
 * reads every idle thread at once: a thread that woke is seen within
 * two refreshes. Threads that woke while the process's CPUs were all
 * taken add nothing to its clock: they are seen at their turn. A refresh
 * that found threads come or go only keeps the figures.
 */
#include "real_priv.h"

#include <math.h>
#include <time.h>

/* The policies' line between idle and busy (idle_share, 0.05 by
 * default): a thread over it, or threads over it together, open the
 * gate. */
#define QUIET_SHARE 0.05
/* The longest a thread's CPU time waits, on its CPU, to reach the
 * process's clock: a scheduler tick (HZ 250, Debian's). With a longer
 * tick the gate may open without a wake (a read more), or a wake show a
 * window late. */
#define LAG_TICK_S 0.004
/* A rise opens the gate past this many times the share's mean move (an
 * average over about WAKE_DEV_SPAN refreshes). */
#define WAKE_DEV 4.0
#define WAKE_DEV_SPAN 8.0

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
	if (p->clk_state < 0)
		goto none;
	if (clock_gettime(p->clk, &ts) < 0) {
		p->clk_state = -1; /* no clock to go by: turns of 4 */
		goto none;
	}
	ns = (unsigned long long)ts.tv_sec * 1000000000ull +
	     (unsigned long long)ts.tv_nsec;
	t = nl_mono_s();
	p->win_s = 0;
	if (p->clk_t > 0 && t > p->clk_t && ns >= p->clk_ns) {
		p->win_cpu_s = (double)(ns - p->clk_ns) * 1e-9;
		p->win_s = t - p->clk_t;
	}
	quiet = p->win_s > 0 && p->win_cpu_s < QUIET_SHARE * p->win_s;
	p->clk_ns = ns;
	p->clk_t = t;
	return quiet;
none:
	p->clk_t = 0; /* no reading to go from next time */
	p->win_s = 0;
	return 0;
}

int nl_real_wake(struct rproc *p, int judged)
{
	double u, rise;
	int woke;

	if (!(p->win_s > 0)) {
		p->wake_ok = 0;
		return 0;
	}
	u = p->win_cpu_s / p->win_s;
	rise = u - p->wake_u;
	/* Refreshes in a row that could not judge (threads came or went). */
	p->wake_unjudged =
		judged ? 0 : p->wake_unjudged + (p->wake_unjudged < 64);
	woke = judged && p->wake_ok &&
	       rise > QUIET_SHARE + 2 * LAG_TICK_S / p->win_s &&
	       rise > WAKE_DEV * p->wake_dev;
	/* How far the share moves from one refresh to the next, of late. */
	if (p->wake_ok)
		p->wake_dev += (fabs(rise) - p->wake_dev) / WAKE_DEV_SPAN;
	p->wake_u = u;
	p->wake_ok = 1;
	return woke;
}
