/*
 * numalot: the do-no-harm check (docs/algorithms.md, "Do no harm"). Now
 * and then a domain's placement is handed back to the OS for a few
 * periods; if the domain runs at least as fast without numalot, it stays
 * with the OS for a while (longer after each such loss), else numalot's
 * placement is applied again.
 */
#include "policy_priv.h"

#include <stdlib.h>

/* Periods measured with the OS in charge before deciding. */
#define HARM_PERIODS 3
/* The OS must be this much slower for numalot's placement to return. */
#define HARM_MARGIN 0.02
#define HARM_MAX_BACKOFF 8
/* One process faster by this much under the OS is harm, whatever the
 * domain's total (a job's gain does not pay for another's loss). */
#define HARM_PROC_MARGIN 0.03

/* Thread i's progress: its ops/s, or where only its CPU share is
 * measured, that times its share of its core (SMT siblings busy beside it
 * take from it what no CPU share shows). */
static double progress(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	return t->tput_ops ? t->tput : t->tput * nl_step_core_share(st, i);
}

static double throughput(const struct step *st, int *count)
{
	double sum = 0;
	*count = 0;
	for (int i = 0; i < st->v->nthreads; i++)
		if (nl_step_in_domain(st, i) && st->v->threads[i].has_perf) {
			sum += progress(st, i);
			(*count)++;
		}
	return sum;
}

/* The domain's processes with a busy thread: what a verdict was for. */
static int processes(const struct step *st)
{
	int n = 0, last = -1;
	for (int i = 0; i < st->v->nthreads; i++)
		if (nl_step_in_domain(st, i) && !nl_step_idle(st, i) &&
		    st->v->threads[i].pid != last) {
			last = st->v->threads[i].pid;
			n++;
		}
	return n;
}

/* Some thread of the domain has ops/s measured, not only a CPU share. */
static int ops_measured(const struct step *st)
{
	for (int i = 0; i < st->v->nthreads; i++)
		if (nl_step_in_domain(st, i) && st->v->threads[i].has_perf &&
		    st->v->threads[i].tput_ops)
			return 1;
	return 0;
}

/* Process pid's entry, added (placed 0) when new; NULL without memory. */
static struct nl_harm_proc *harm_proc(struct nl_policy_state *s, int pid,
				      size_t *hint)
{
	if (*hint < s->nhp && s->hp[*hint].pid == pid)
		return &s->hp[*hint];
	for (size_t k = 0; k < s->nhp; k++)
		if (s->hp[k].pid == pid) {
			*hint = k;
			return &s->hp[k];
		}
	if (s->nhp == s->caphp) {
		size_t c = s->caphp ? s->caphp * 2 : 8;
		struct nl_harm_proc *x = realloc(s->hp, c * sizeof(*x));
		if (!x)
			return NULL;
		s->hp = x;
		s->caphp = c;
	}
	s->hp[s->nhp] = (struct nl_harm_proc){pid, 0, 0};
	*hint = s->nhp;
	return &s->hp[s->nhp++];
}

/* This period's throughput of each process of the domain: into placed
 * (a running mean) while numalot places, into os_sum while the OS does. */
static void note_processes(struct step *st, int os)
{
	struct nl_policy_state *s = st->s;
	size_t hint = 0;
	int pid = -1;
	double sum = 0;

	for (int i = 0; i <= st->v->nthreads; i++) {
		const struct nl_view_thread *t =
			i < st->v->nthreads ? &st->v->threads[i] : NULL;
		int in = t && nl_step_in_domain(st, i) && t->has_perf;
		if (pid >= 0 && (!t || (in && t->pid != pid))) {
			struct nl_harm_proc *h = harm_proc(s, pid, &hint);
			if (h && os)
				h->os_sum += sum;
			else if (h)
				h->placed = h->placed > 0 ? 0.5 * h->placed +
								    0.5 * sum
							  : sum;
			pid = -1;
		}
		if (!in)
			continue;
		if (pid < 0) {
			pid = t->pid;
			sum = 0;
		}
		sum += progress(st, i);
	}
}

/* Some process ran clearly faster under the OS than under numalot. */
static int a_process_lost(const struct nl_policy_state *s)
{
	for (size_t k = 0; k < s->nhp; k++)
		if (s->hp[k].placed > 0 &&
		    s->hp[k].os_sum / s->harm_n >
			    s->hp[k].placed * (1 + HARM_PROC_MARGIN))
			return 1;
	return 0;
}

/* Some process ran clearly slower under the OS than under numalot. */
static int a_process_gained(const struct nl_policy_state *s)
{
	for (size_t k = 0; k < s->nhp; k++)
		if (s->hp[k].placed > 0 &&
		    s->hp[k].os_sum / s->harm_n * (1 + HARM_PROC_MARGIN) <
			    s->hp[k].placed)
			return 1;
	return 0;
}

/* Is thread i on its data's node, within its own binding (as the kernel
 * keeps it), with memory its process did not bind? The kernel's NUMA
 * balancing takes such a thread to that node as well: there the OS's
 * placement is where it is now, and sending it back to where the OS had
 * it first measures only the seconds the kernel takes to bring it back. */
static int where_os_takes_it(const struct step *st, int i)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	int c = st->cpu[i];
	return c >= 0 && !t->mem_bound && t->preferred_node >= 0 &&
	       st->v->topo->cpu_node[c] == t->preferred_node &&
	       t->here_share >= st->p->data_share &&
	       (!t->own || hwloc_bitmap_isset(t->own, (unsigned)c));
}

/* Would thread i, sent to cpu, leave the node of memory its process
 * bound there, which neither the kernel nor numalot will move? */
static int away_from_bound_memory(const struct step *st, int i, int cpu)
{
	const struct nl_view_thread *t = &st->v->threads[i];
	const int *node = st->v->topo->cpu_node;
	return t->mem_bound && t->preferred_node >= 0 && st->cpu[i] >= 0 &&
	       node[st->cpu[i]] == t->preferred_node &&
	       node[cpu] != t->preferred_node;
}

static int save_and_release(struct step *st, int count)
{
	struct nl_policy_state *s = st->s;
	int rc = 0;

	s->nsaved = 0;
	for (int i = 0; i < st->v->nthreads && rc == 0; i++) {
		const struct nl_view_thread *t = &st->v->threads[i];
		if (!nl_step_in_domain(st, i) || !t->pinned || st->moved[i])
			continue;
		if (s->nsaved == s->capsaved) {
			size_t c = s->capsaved ? s->capsaved * 2 : 16;
			struct nl_memo *x = realloc(s->saved, c * sizeof(*x));
			if (!x)
				return -ENOMEM;
			s->saved = x;
			s->capsaved = c;
		}
		s->saved[s->nsaved++] = (struct nl_memo){
			.tid = t->tid, .to_cpu = st->cpu[i], .pair = -1};
		/* Back where the OS had it, so that what is measured is the
		 * OS's placement, not numalot's left to the OS. */
		/* Only to a free CPU: the OS had several on one CPU at
		 * different times (three of four threads back on one CPU). */
		int back = t->origin_cpu >= 0 &&
					   t->origin_cpu < st->v->topo->ncpus &&
					   t->origin_cpu != st->cpu[i] &&
					   st->head[t->origin_cpu] < 0 &&
					   nl_step_allows(t, t->origin_cpu) &&
					   !away_from_bound_memory(
						   st, i, t->origin_cpu) &&
					   !where_os_takes_it(st, i)
				   ? t->origin_cpu
				   : -1;
		rc = nl_plan_add(st->plan,
				 &(struct nl_action){
					 .kind = NL_ACT_RELEASE,
					 .tid = t->tid,
					 .other_tid = -1,
					 .from_cpu = st->cpu[i],
					 .to_cpu = back,
					 .reason = "do-no-harm check: handed "
						   "to the OS to compare"});
		if (back >= 0)
			nl_step_occ_move(st, i, back);
		st->moved[i] = 1;
	}
	s->harm_phase = 1;
	s->harm_sum = 0;
	s->harm_n = 0;
	s->harm_count = count;
	for (size_t k = 0; k < s->nhp; k++)
		s->hp[k].os_sum = 0;
	return rc;
}

static int reapply(struct step *st)
{
	struct nl_policy_state *s = st->s;
	int rc = 0;

	for (size_t k = 0; k < s->nsaved && rc == 0; k++) {
		const struct nl_memo *m = &s->saved[k];
		int i;
		for (i = 0; i < st->v->nthreads; i++)
			if (st->v->threads[i].tid == m->tid)
				break;
		if (i == st->v->nthreads || !nl_step_in_domain(st, i) ||
		    !nl_step_allows(&st->v->threads[i], m->to_cpu))
			continue;
		rc = nl_plan_add(
			st->plan,
			&(struct nl_action){.kind = NL_ACT_PIN,
					    .tid = m->tid,
					    .other_tid = -1,
					    .from_cpu = st->cpu[i],
					    .to_cpu = m->to_cpu,
					    .reason = "do-no-harm check: "
						      "numalot's placement "
						      "was faster"});
		nl_step_occ_move(st, i, m->to_cpu);
		st->moved[i] = 1;
	}
	s->nsaved = 0;
	return rc;
}

static int decide(struct step *st, double tput, int count)
{
	struct nl_policy_state *s = st->s;
	double now = st->v->now_s, check = st->p->harm_check_s;

	s->harm_phase = 0;
	if (count != s->harm_count) {
		/* Threads came or went: no fair comparison; keep the OS's. */
		s->nsaved = 0;
		s->harm_next_s = now + check * s->harm_backoff;
		return 1;
	}
	s->harm_sum += tput;
	s->harm_n++;
	note_processes(st, 1);
	if (s->harm_n < HARM_PERIODS) {
		s->harm_phase = 1;
		return 1;
	}
	/* With op counts, the OS keeps the domain unless numalot's
	 * placement was clearly faster. A CPU share says nothing of memory
	 * speed (no PMU): there the OS takes it back only when it gave the
	 * domain clearly more CPU (numalot's placement crowded it). */
	/* Nor does one job's gain pay for another's loss the other way: a
	 * process clearly faster under numalot, none clearly slower, keeps
	 * numalot's placement however little it weighs in the domain's sum
	 * (a 4-thread latency-bound job beside 12 compute threads). */
	int ops = ops_measured(st);
	double bar = ops ? 1 - HARM_MARGIN : 1 + HARM_MARGIN;
	if ((ops && a_process_lost(s)) ||
	    (s->harm_sum / s->harm_n >= s->harm_placed * bar &&
	     !(ops && a_process_gained(s)))) {
		/* The OS does as well: leave the domain to it for a while. */
		s->nsaved = 0;
		s->harm_won = 1;
		s->harm_passive = 1;
		s->harm_procs = processes(st);
		if (s->harm_backoff < HARM_MAX_BACKOFF)
			s->harm_backoff *= 2;
		s->harm_next_s = now + check * s->harm_backoff;
		return 1;
	}
	/* numalot's placement won: each win in a row puts the next check
	 * further off (each costs HARM_PERIODS periods under the OS's). */
	s->harm_backoff = 1;
	if (s->harm_won < HARM_MAX_BACKOFF)
		s->harm_won *= 2;
	s->harm_next_s = now + check * s->harm_won;
	int rc = reapply(st);
	return rc < 0 ? rc : 1;
}

int nl_harm_check(struct step *st)
{
	struct nl_policy_state *s = st->s;
	double now = st->v->now_s, check = st->p->harm_check_s;
	int count, pinned = 0;
	double tput;

	if (!(check > 0))
		return 0;
	tput = throughput(st, &count);
	if (s->harm_next_s < 0)
		s->harm_next_s = now + check;
	if (s->harm_phase == 1)
		return decide(st, tput, count);
	if (s->harm_passive) {
		/* The OS won for the processes then running: once one has
		 * come or gone, that verdict no longer holds. */
		if (now < s->harm_next_s && processes(st) == s->harm_procs)
			return 1;
		s->harm_passive = 0;
		s->harm_next_s = now + check;
	}
	/* Recent throughput under numalot's placement. */
	s->harm_placed =
		s->harm_placed > 0 ? 0.5 * s->harm_placed + 0.5 * tput : tput;
	note_processes(st, 0);
	if (now < s->harm_next_s)
		return 0;
	for (int i = 0; i < st->v->nthreads; i++)
		pinned += nl_step_in_domain(st, i) && st->v->threads[i].pinned;
	/* With CPU shares only, the OS wins only by giving the domain 2%
	 * more CPU: when numalot's placement already gives its threads about
	 * a whole core each, no check could find harm, and one would cost
	 * the OS's placement (and the pages it moves) for nothing. */
	if (!pinned ||
	    (!ops_measured(st) && s->harm_placed * (1 + HARM_MARGIN) > count)) {
		s->harm_next_s = now + check;
		return 0;
	}
	int rc = save_and_release(st, count);
	return rc < 0 ? rc : 1;
}
