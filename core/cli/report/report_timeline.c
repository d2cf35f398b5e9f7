/*
 * numalot report --html / --svg: the placement timeline of one report,
 * every thread a row, numalot's moves marks on top (docs/report-format.md,
 * "Pictures"); drawn in few elements, so that a page of a thousand threads
 * stays quick.
 */
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "report_view.h"
#include "html.h"

#define W 1100
#define LEFT 170
#define PLOT_W 740
#define SHARE_X (LEFT + PLOT_W + 24)
#define SHARE_W 130
#define TOP 92
#define BOTTOM 34
#define LEGEND_NODES 16

static int row_h(int nthreads)
{
	return nthreads <= 40	 ? 16
	       : nthreads <= 128 ? 8
	       : nthreads <= 400 ? 5
				 : 3;
}

static double xpos(const struct rv_report *r, double t)
{
	double x = (t - r->t_lo_s) / (r->t_hi_s - r->t_lo_s);
	return LEFT + fmax(0, fmin(1, x)) * PLOT_W;
}

static double nice_step(double span, int ticks)
{
	double raw = span / ticks, p = pow(10, floor(log10(raw)));
	double m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void legend(FILE *f, const struct rv_report *r)
{
	char buf[32];
	double x = 16;
	static const struct {
		const char *label, *color;
		enum rv_kind kind;
	} marks[] = {{"migration", "#111", RV_MIGRATE},
		     {"swap", "#7b2fbe", RV_SWAP},
		     {"rollback", "#d01010", RV_ROLLBACK},
		     {"skipped move", "#777", RV_SKIP},
		     {"stay", "#aaa", RV_STAY},
		     {"back to the OS", "#0a8a7a", RV_RELEASE},
		     {"page move", "#1a8f3a", RV_PAGES}};

	for (int k = 0; k < r->nnodes && k < LEGEND_NODES; k++, x += 68)
		fprintf(f,
			"<rect x=\"%.0f\" y=\"32\" width=\"14\" height=\"12\" "
			"fill=\"%s\"/><text x=\"%.0f\" y=\"42\">node %d"
			"</text>\n",
			x, rv_node_color(k, buf, sizeof(buf)), x + 18, k);
	if (r->nnodes > LEGEND_NODES)
		fprintf(f,
			"<text x=\"%.0f\" y=\"42\">&#8230; %d nodes</text>\n",
			x, r->nnodes);
	fprintf(f,
		"<rect x=\"16\" y=\"50\" width=\"14\" height=\"12\" "
		"fill=\"%s\"/><text x=\"34\" y=\"60\">unknown, or the OS's"
		"</text>\n",
		rv_node_color(-1, buf, sizeof(buf)));
	x = 178;
	for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++) {
		fprintf(f,
			"<path d=\"M%.0f 49 v14\" stroke=\"%s\" "
			"stroke-width=\"2\"/><text x=\"%.0f\" y=\"60\">%s "
			"(%d)</text>\n",
			x, marks[k].color, x + 6, marks[k].label,
			r->counts[marks[k].kind]);
		x += k == 3 || k == 5 ? 136 : 118;
	}
	if (r->counts[RV_OTHER])
		fprintf(f, "<text x=\"%.0f\" y=\"60\">other (%d)</text>\n", x,
			r->counts[RV_OTHER]);
}

static void axis(FILE *f, const struct rv_report *r, double y1)
{
	double span = r->t_hi_s - r->t_lo_s, step = nice_step(span, 8);

	double o = r->origin_s, lo = r->t_lo_s - o, hi = r->t_hi_s - o;

	/* Ticks in the axis's own time: 0 at a Slurm step's start. */
	for (double t = ceil(lo / step) * step; t <= hi + 1e-9; t += step) {
		double x = xpos(r, t + o);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%g</text>\n",
			x, TOP - 4, x, y1, x, TOP - 8, fabs(t) < 1e-9 ? 0 : t);
	}
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		LEFT + PLOT_W / 2, y1 + 20,
		rv_at(r->r, "slurm") ? "time, s since the step's first task "
				       "started"
				     : "time, s since numalot started");
	fprintf(f, "<text x=\"%d\" y=\"%d\">CPU time per node</text>\n",
		SHARE_X, TOP - 8);
}

static void row_title(FILE *f, const struct rv_report *r,
		      const struct rv_thread *t)
{
	const struct rv_process *p = t->proc >= 0 ? &r->procs[t->proc] : NULL;

	fprintf(f, "<title>thread %d of ", t->tid);
	nl_html_esc(f, p && p->name ? p->name : "?");
	fprintf(f, " (pid %d): %.3g to %.3g s, %d moves; CPU time", t->pid,
		t->t0_s - r->origin_s, t->t1_s - r->origin_s, t->migrations);
	for (int k = 0; k < r->nnodes; k++)
		if (t->time_on_node_s[k] > 0)
			fprintf(f, " node %d %.3g s", k, t->time_on_node_s[k]);
	/* Where its samples found it (at most 16 entries a thread). */
	for (size_t k = 0; t->sampled && k < json_object_array_length(t->cpus);
	     k++) {
		struct json_object *e = json_object_array_get_idx(t->cpus, k);
		double ts = rv_number(json_object_array_get_idx(e, 0));
		double cpu = rv_number(json_object_array_get_idx(e, 1));
		if (json_object_is_type(e, json_type_array) && !isnan(ts) &&
		    !isnan(cpu))
			fprintf(f, "%s CPU %.0f from %.3g s",
				k ? "," : "; sampled on", cpu,
				ts - r->origin_s);
	}
	fprintf(f, "</title>");
}

/* The thread's row: its hover text over the plot, its tid if room. */
static void row(FILE *f, const struct rv_report *r, int i, int rh)
{
	const struct rv_thread *t = &r->threads[i];
	double y = TOP + (double)i * rh;

	fprintf(f, "<g class=\"row\" data-tid=\"%d\" data-pid=\"%d\">", t->tid,
		t->pid);
	row_title(f, r, t);
	fprintf(f,
		"<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" "
		"fill=\"transparent\"/></g>\n",
		LEFT, y, SHARE_X + SHARE_W - LEFT, rh);
	if (rh >= 8)
		fprintf(f,
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
			"font-size=\"%d\">%d</text>\n",
			LEFT - 6, y + rh - 3, rh >= 14 ? 11 : 8, t->tid);
}

/* Where every thread was: one path per node for all rows (a page of a
 * thousand threads stays quick). */
static void segments(FILE *f, const struct rv_report *r, int rh)
{
	double h = rh >= 5 ? rh - 1 : rh;
	char buf[32];

	for (int k = -1; k < r->nnodes; k++) {
		int any = 0;
		for (int i = 0; i < r->nthreads; i++) {
			const struct rv_thread *t = &r->threads[i];
			for (int s = 0; s < t->nseg; s++) {
				const struct rv_segment *g = &t->seg[s];
				double x0 = xpos(r, g->t0_s);
				double w = fmax(xpos(r, g->t1_s) - x0, 0.5);
				if (g->node != k)
					continue;
				if (!any)
					fprintf(f,
						"<path class=\"seg\" "
						"fill=\"%s\" d=\"",
						rv_node_color(k, buf,
							      sizeof(buf)));
				any = 1;
				fprintf(f, "M%.1f %.1fh%.2fv%.0fh%.2fz", x0,
					TOP + (double)i * rh, w, h, -w);
			}
		}
		if (any)
			fputs("\"/>\n", f);
	}
}

/* Each thread's CPU time per node, a stacked bar at the right of its row:
 * one path per node for all rows (fewer elements, a quicker page). */
static void shares(FILE *f, const struct rv_report *r, int rh)
{
	double h = rh >= 5 ? rh - 1 : rh;
	char buf[32];

	for (int k = 0; k < r->nnodes; k++) {
		int any = 0;
		for (int i = 0; i < r->nthreads; i++) {
			const struct rv_thread *t = &r->threads[i];
			double x = SHARE_X, w;
			if (!(t->time_total_s > 0) ||
			    !(t->time_on_node_s[k] > 0))
				continue;
			for (int q = 0; q < k; q++)
				x += SHARE_W * t->time_on_node_s[q] /
				     t->time_total_s;
			w = SHARE_W * t->time_on_node_s[k] / t->time_total_s;
			if (!any)
				fprintf(f,
					"<path class=\"share\" fill=\"%s\" "
					"d=\"",
					rv_node_color(k, buf, sizeof(buf)));
			any = 1;
			fprintf(f, "M%.1f %.1fh%.2fv%.0fh%.2fz", x,
				TOP + (double)i * rh, w, h, -w);
		}
		if (any)
			fputs("\"/>\n", f);
	}
}

/* A process's name at its first row, a line between processes. */
static void groups(FILE *f, const struct rv_report *r, int rh)
{
	for (int i = 0; i < r->nthreads; i++) {
		const struct rv_thread *t = &r->threads[i];
		const struct rv_process *p =
			t->proc >= 0 ? &r->procs[t->proc] : NULL;
		double y = TOP + (double)i * rh;
		int n = 0;
		if (i > 0 && r->threads[i - 1].pid == t->pid)
			continue;
		while (i + n < r->nthreads && r->threads[i + n].pid == t->pid)
			n++;
		if (i > 0)
			fprintf(f,
				"<line x1=\"4\" x2=\"%d\" y1=\"%.1f\" "
				"y2=\"%.1f\" stroke=\"#888\"/>\n",
				SHARE_X + SHARE_W, y - 0.5, y - 0.5);
		fprintf(f, "<text x=\"6\" y=\"%.1f\" font-weight=\"bold\">",
			y + 11);
		nl_html_esc_n(f, p && p->name ? p->name : "?", 18);
		if (n * rh < 28)
			fprintf(f, " (%d)</text>\n", t->pid);
		else
			fprintf(f,
				"</text><text x=\"6\" y=\"%.1f\" "
				"fill=\"#555\">pid %d, %d thread%s</text>\n",
				y + 24, t->pid, n, n > 1 ? "s" : "");
	}
}

/* "CPU 3 (node 1)", "node 1" or "?": only what the event knows. */
static void place(FILE *f, int cpu, int node)
{
	if (cpu >= 0)
		fprintf(f, "CPU %d", cpu);
	if (node >= 0)
		fprintf(f, cpu >= 0 ? " (node %d)" : "node %d", node);
	if (cpu < 0 && node < 0)
		fputs("?", f);
}

static void mark_title(FILE *f, const struct rv_report *r,
		       const struct rv_event *e)
{
	fprintf(f, "<title>%.3g s: ", e->t_s - r->origin_s);
	nl_html_esc(f, e->kind_name ? e->kind_name : "?");
	fprintf(f, " thread %d", e->tid);
	if (e->other_tid >= 0)
		fprintf(f, " with %d", e->other_tid);
	fputs(", ", f);
	place(f, e->from_cpu, e->from_node);
	/* A skip, a stay or a release goes nowhere numalot knows. */
	if (e->to_cpu >= 0 || e->to_node >= 0) {
		fputs(" to ", f);
		place(f, e->to_cpu, e->to_node);
	}
	if (e->total_tickets > 0)
		fprintf(f, ", %.3g of %.3g tickets", e->tickets,
			e->total_tickets);
	if (e->reason) {
		fputs(": ", f);
		nl_html_esc(f, e->reason);
	}
	fputs("</title>", f);
}

static const char *const mark_color[RV_OTHER + 1] = {
	[RV_MIGRATE] = "#111",	   [RV_SWAP] = "#7b2fbe",
	[RV_ROLLBACK] = "#d01010", [RV_SKIP] = "#777",
	[RV_STAY] = "#aaa",	   [RV_RELEASE] = "#0a8a7a",
	[RV_PAGES] = "#1a8f3a",	   [RV_OTHER] = "#777"};
static const char *const mark_class[RV_OTHER + 1] = {
	[RV_MIGRATE] = "migrate",   [RV_SWAP] = "swap",
	[RV_ROLLBACK] = "rollback", [RV_SKIP] = "skip",
	[RV_STAY] = "stay",	    [RV_RELEASE] = "release",
	[RV_PAGES] = "pages",	    [RV_OTHER] = "other"};

static void page_title(FILE *f, const struct rv_report *r,
		       const struct rv_event *e)
{
	fprintf(f, "<title>%.3g s: pages of process %d", e->t_s - r->origin_s,
		e->pid);
	if (e->from_node >= 0 && e->to_node >= 0)
		fprintf(f, ", node %d to node %d", e->from_node, e->to_node);
	if (!isnan(e->bytes))
		fprintf(f, ", %.3g MiB", e->bytes / (1 << 20));
	if (e->reason) {
		fputs(": ", f);
		nl_html_esc(f, e->reason);
	}
	fputs("</title>", f);
}

/* A mark per event, each its own element with its hover text. */
static void marks_each(FILE *f, const struct rv_report *r, int rh)
{
	for (int i = 0; i < r->nevents; i++) {
		const struct rv_event *e = &r->events[i];
		double x = xpos(r, e->t_s), y = TOP + (double)e->row * rh;
		if (e->row < 0)
			continue;
		int ring = e->kind == RV_SKIP || e->kind == RV_STAY;
		if (e->kind == RV_PAGES) {
			fprintf(f,
				"<path class=\"ev pages\" d=\"M%.1f %.1fv%d\" "
				"stroke=\"#1a8f3a\" stroke-width=\"2.5\" "
				"stroke-dasharray=\"5 2\">",
				x, y - 1, e->rows * rh + 1);
			page_title(f, r, e);
			fputs("</path>\n", f);
			continue;
		}
		if (ring)
			fprintf(f,
				"<circle class=\"ev %s\" cx=\"%.1f\" "
				"cy=\"%.1f\" r=\"%.1f\" fill=\"none\" "
				"stroke=\"%s\">",
				mark_class[e->kind], x, y + rh / 2.0,
				fmin(rh / 2.0, 4), mark_color[e->kind]);
		else
			fprintf(f,
				"<path class=\"ev %s\" d=\"M%.1f %.1fv%d\" "
				"stroke=\"%s\" stroke-width=\"%s\">",
				mark_class[e->kind], x, y - 1, rh + 1,
				mark_color[e->kind],
				e->kind == RV_ROLLBACK ? "2.5" : "1.5");
		mark_title(f, r, e);
		fputs(ring ? "</circle>\n" : "</path>\n", f);
		/* A class of its own: marks of class ev count as events do. */
		if (e->other_row >= 0)
			fprintf(f,
				"<path class=\"ev-partner swap\" "
				"d=\"M%.1f %.1fv%d\" stroke=\"#7b2fbe\" "
				"stroke-width=\"1.5\" stroke-dasharray=\"2 "
				"1\"/>\n",
				x, TOP + (double)e->other_row * rh - 1, rh + 1);
	}
}

/* Many events: one path per kind, one subpath (M...) per event, no hover
 * text (RV_TITLES_MAX). partner: the swaps' partners' marks. */
static void marks_merged(FILE *f, const struct rv_report *r, int rh,
			 enum rv_kind kind, int partner)
{
	int n = 0;

	for (int i = 0; i < r->nevents; i++) {
		const struct rv_event *e = &r->events[i];
		int row = partner ? e->other_row : e->row;
		if (e->kind == kind && row >= 0 && e->row >= 0)
			n++;
	}
	if (!n)
		return;
	fprintf(f,
		"<path class=\"%s %s\" data-marks=\"%d\" stroke=\"%s\" "
		"stroke-width=\"%s\"%s d=\"",
		partner ? "ev-partner-all" : "ev-all", mark_class[kind], n,
		mark_color[kind], kind == RV_ROLLBACK ? "2.5" : "1.5",
		partner ? " stroke-dasharray=\"2 1\"" : "");
	for (int i = 0; i < r->nevents; i++) {
		const struct rv_event *e = &r->events[i];
		int row = partner ? e->other_row : e->row;
		double y = TOP + (double)row * rh;
		if (e->kind != kind || row < 0 || e->row < 0)
			continue;
		/* No move: a short tick in the middle of the row. */
		if (kind == RV_PAGES)
			fprintf(f, "M%.1f %.1fv%d", xpos(r, e->t_s), y - 1,
				e->rows * rh + 1);
		else if (kind == RV_SKIP || kind == RV_STAY)
			fprintf(f, "M%.1f %.1fv%.1f", xpos(r, e->t_s),
				y + rh / 4.0, rh / 2.0);
		else
			fprintf(f, "M%.1f %.1fv%d", xpos(r, e->t_s), y - 1,
				rh + 1);
	}
	fputs("\"/>\n", f);
}

static void marks(FILE *f, const struct rv_report *r, int rh, int titles)
{
	fputs("<g class=\"marks\">\n", f);
	if (titles)
		marks_each(f, r, rh);
	else
		for (int k = RV_MIGRATE; k <= RV_OTHER; k++) {
			marks_merged(f, r, rh, (enum rv_kind)k, 0);
			if (k == RV_SWAP)
				marks_merged(f, r, rh, RV_SWAP, 1);
		}
	fputs("</g>\n", f);
}

void rv_svg_timeline(FILE *f, const struct rv_report *r, int titles)
{
	int rh = row_h(r->nthreads);
	double y1 = TOP + (double)r->nthreads * rh;
	int h = (int)y1 + BOTTOM;
	const char *dom = rv_str(r->r, "domain");
	const char *host = rv_str(r->r, "slurm.node");

	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"data-threads=\"%d\" data-events=\"%d\" font-size=\"12\" "
		"font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
		W, h, W, h, r->nthreads, r->nevents);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, h);
	fputs("<text x=\"16\" y=\"20\" font-size=\"15\" font-weight=\"bold\">"
	      "Placement over time",
	      f);
	if (dom || host) {
		fputs(": ", f);
		nl_html_esc(f, dom ? dom : "");
		if (host) {
			fputs(" on ", f);
			nl_html_esc(f, host);
		}
	}
	fprintf(f,
		"</text><text x=\"%d\" y=\"20\" fill=\"#555\">%d threads, "
		"%d events, one row each</text>\n",
		W - 300, r->nthreads, r->nevents);
	legend(f, r);
	axis(f, r, y1);
	groups(f, r, rh);
	segments(f, r, rh);
	shares(f, r, rh);
	for (int i = 0; i < r->nthreads; i++)
		row(f, r, i, rh);
	marks(f, r, rh, titles);
	fputs("</svg>\n", f);
}
