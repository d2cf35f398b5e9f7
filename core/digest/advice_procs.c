/*
 * numalot: advice about one process of a report (advice.h): its data on
 * one node while its threads ran on several, its memory bound away from
 * its threads, its children not followed (docs/advice.md).
 */
#include "advice_priv.h"

#include <stdio.h>

/* A node list "0, 2" of the nodes with a share of at least min. */
static void nodes_text(char *buf, size_t n, const double *v, int nodes,
		       double total, double min)
{
	size_t at = 0;
	buf[0] = 0;
	for (int k = 0; k < nodes && at < n; k++)
		if (total > 0 && v[k] / total >= min)
			at += (size_t)snprintf(buf + at, n - at, "%s%d",
					       at ? ", " : "", k);
}

/*
 * A process's pages by node (the first reading, else the last), and where
 * its busy threads were before numalot moved them: each counts 1, on the
 * node of its first sample (threads[].cpus), or in an older report spread
 * as its CPU time was. 0 when either is not known.
 */
static int process_view(const struct ctx *c, struct json_object *p,
			double *pages, double *pages_total, double *thr,
			double *threads)
{
	struct json_object *pg = get(p, "pages_per_node_first");
	int pid = inum(get(p, "pid"), -1);
	int nn = c->nodes < MAX_NODES ? c->nodes : MAX_NODES;
	if (!len(pg))
		pg = get(p, "pages_per_node_last");
	*pages_total = *threads = 0;
	for (int k = 0; k < nn; k++) {
		pages[k] = num(idx(pg, (size_t)k), 0);
		*pages_total += pages[k];
		thr[k] = 0;
	}
	for (int i = 0; i < c->n; i++) {
		const struct th *t = &c->th[i];
		if (t->pid != pid || !t->busy)
			continue;
		if (t->node0 >= 0 && t->node0 < nn)
			thr[t->node0] += 1;
		else
			for (int k = 0; k < nn; k++)
				thr[k] += t->node_s[k] / t->cpu_s;
		*threads += 1;
	}
	return *pages_total >= MIN_PAGES && *threads > 0;
}

static int moved_threads_of(const struct ctx *c, int pid, int *threads)
{
	int m = 0;
	*threads = 0;
	for (int i = 0; i < c->n; i++)
		if (c->th[i].pid == pid && c->th[i].busy) {
			m += c->th[i].migrations;
			(*threads)++;
		}
	return m;
}

/* What numalot did for a process: its page and thread moves. */
static void process_did(const struct ctx *c, struct json_object *p, char *did,
			size_t n, const char *pages_left)
{
	int nt, mig = moved_threads_of(c, inum(get(p, "pid"), -1), &nt);
	int pm = inum(get(get(p, "pages"), "moves"), 0);
	double mb = num(get(get(p, "pages"), "moved_bytes"), 0) / (1 << 20);
	char threads[64], pages[96];

	if (mig)
		snprintf(threads, sizeof(threads), "made %d thread move%s", mig,
			 plural(mig));
	else
		snprintf(threads, sizeof(threads), "moved none of its threads");
	if (pages_left)
		snprintf(pages, sizeof(pages), "%s", pages_left);
	else if (pm)
		snprintf(pages, sizeof(pages),
			 "moved its pages %d time%s (%.1f MiB)", pm, plural(pm),
			 mb);
	else
		snprintf(pages, sizeof(pages), "moved none of its pages");
	snprintf(did, n, "numalot %s, and %s", pages, threads);
}

/* Threads on several nodes, their data on one (first touch by one
 * thread, or an allocation before the threads started). */
void nl_advice_data_on_one_node(struct ctx *c, struct json_object *p)
{
	double pages[MAX_NODES], cpu[MAX_NODES], pt, ct;
	char ev[640], did[256], next[512], on[128];
	int top = 0;

	if (c->nodes < 2 ||
	    json_object_get_boolean(
		    get(get(p, "pages"), "bound_by_its_policy")) ||
	    !process_view(c, p, pages, &pt, cpu, &ct))
		return;
	for (int k = 1; k < c->nodes && k < MAX_NODES; k++)
		top = pages[k] > pages[top] ? k : top;
	double away = (ct - cpu[top]) / ct;
	if (pages[top] / pt < DATA_ONE_SHARE || away < DATA_AWAY_SHARE)
		return;
	nodes_text(on, sizeof(on), cpu, c->nodes, ct, 0.05);
	snprintf(ev, sizeof(ev),
		 "process %d (%s): %d%% of its pages were on node %d while "
		 "its busy threads were on nodes %s when numalot first "
		 "sampled them, %d%% of them away from node %d",
		 inum(get(p, "pid"), -1), name_of(p),
		 (int)(100 * pages[top] / pt + 0.5), top, on,
		 (int)(100 * away + 0.5), top);
	process_did(c, p, did, sizeof(did), NULL);
	snprintf(next, sizeof(next),
		 "if the threads share the data, keep them on its node: "
		 "numactl --cpunodebind=%d --membind=%d (srun --cpu-bind=ldoms "
		 "--mem-bind=local); if each thread works on its own part, "
		 "let that thread touch it first, with OMP_PROC_BIND=spread "
		 "OMP_PLACES=cores, so that its pages land on its node; or "
		 "spread the pages: numactl --interleave=all",
		 top, top);
	nl_advice_add(c, "data_on_one_node",
		      "threads spread over nodes, their data on one", ev, did,
		      next);
}

/* Memory the process bound itself (numactl --membind, mbind) to nodes
 * its threads did not run on: every access remote, and numalot may not
 * move those pages. */
void nl_advice_memory_bound_away(struct ctx *c, struct json_object *p)
{
	double pages[MAX_NODES], cpu[MAX_NODES], pt, ct, loc = 0;
	char ev[640], did[256], next[400], pon[128], ton[128];

	if (c->nodes < 2 ||
	    !json_object_get_boolean(
		    get(get(p, "pages"), "bound_by_its_policy")) ||
	    !process_view(c, p, pages, &pt, cpu, &ct))
		return;
	for (int k = 0; k < c->nodes && k < MAX_NODES; k++)
		loc += pages[k] / pt < cpu[k] / ct ? pages[k] / pt
						   : cpu[k] / ct;
	if (loc >= BOUND_LOCALITY)
		return;
	nodes_text(pon, sizeof(pon), pages, c->nodes, pt, 0.05);
	nodes_text(ton, sizeof(ton), cpu, c->nodes, ct, 0.05);
	snprintf(ev, sizeof(ev),
		 "process %d (%s): its memory is bound by its own policy to "
		 "node %s, its busy threads were on node %s when numalot "
		 "first sampled them: %d%% of its pages were where its "
		 "threads were",
		 inum(get(p, "pid"), -1), name_of(p), pon, ton,
		 (int)(100 * loc + 0.5));
	process_did(c, p, did, sizeof(did),
		    "left its pages where their policy binds them");
	int top = 0;
	for (int k = 1; k < c->nodes && k < MAX_NODES; k++)
		top = pages[k] > pages[top] ? k : top;
	snprintf(next, sizeof(next),
		 "bind the threads where the memory is, or the memory where "
		 "the threads run: numactl --cpunodebind=%d --membind=%d, or "
		 "--localalloc; under Slurm, srun --cpu-bind=ldoms "
		 "--mem-bind=local",
		 top, top);
	nl_advice_add(c, "memory_bound_away",
		      "memory bound away from its threads", ev, did, next);
}

/* Children run while numalot followed only the process it started. */
void nl_advice_children_not_followed(struct ctx *c, struct json_object *p)
{
	int k = inum(get(p, "children_not_followed"), 0), nt;
	char ev[400], did[256];

	if (k <= 0)
		return;
	moved_threads_of(c, inum(get(p, "pid"), -1), &nt);
	snprintf(ev, sizeof(ev),
		 "process %d (%s) had %d child process%s at once that numalot "
		 "did not manage; %d of its own threads were busy",
		 inum(get(p, "pid"), -1), name_of(p), k, k == 1 ? "" : "es",
		 nt);
	snprintf(did, sizeof(did),
		 "numalot managed only process %d's own threads: the children "
		 "ran where the OS put them",
		 inum(get(p, "pid"), -1));
	nl_advice_add(
		c, "children_not_followed",
		"a multi-process program whose children were not followed", ev,
		did,
		"with numalot, add --children (numalot run --children -- CMD); "
		"without it, bind each child where it should run: srun "
		"--cpu-bind=cores for Slurm tasks, or numactl --cpunodebind=N "
		"--membind=N in the command that starts each child");
}
