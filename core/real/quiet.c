/* numalot: is a process quiet, or did one of its idle threads wake? One
 * reading of its CPU clock a refresh (docs/real-node.md, "Cost"). */
#include "real_priv.h"

#include <math.h>
#include <time.h>

/* The policies' default idle_share: a thread over it opens the gate. */
#define QUIET_SHARE 0.05
/* How late a running thread's time reaches the process's clock: a tick
 * (HZ 250); a longer one costs a read more or a wake seen a window late. */
#define LAG_TICK_S 0.004
/* A rise opens the gate past this many times the share's mean move (an
 * average over about WAKE_DEV_SPAN refreshes). */
#define WAKE_DEV 4.0
#define WAKE_DEV_SPAN 8.0

int nl_real_quiet(struct rproc *p)
{
	struct timespec ts;

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
	return nl_real_quiet_at(p,
				(unsigned long long)ts.tv_sec * 1000000000ull +
					(unsigned long long)ts.tv_nsec,
				nl_mono_s());
none:
	p->clk_t = 0; /* no reading to go from next time */
	p->win_s = 0;
	return 0;
}

int nl_real_quiet_at(struct rproc *p, unsigned long long ns, double t)
{
	int quiet;

	p->win_s = 0;
	if (p->clk_t > 0 && t > p->clk_t && ns >= p->clk_ns) {
		p->win_cpu_s = (double)(ns - p->clk_ns) * 1e-9;
		p->win_s = t - p->clk_t;
	}
	quiet = p->win_s > 0 && p->win_cpu_s < QUIET_SHARE * p->win_s;
	p->clk_ns = ns;
	p->clk_t = t;
	return quiet;
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
