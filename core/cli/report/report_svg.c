/*
 * numalot report --html / --svg: the per-thread roofline and the locality
 * chart, over every report of the set (docs/report-format.md, "Pictures").
 * A thread lacking a term is left out of the roofline, never drawn as 0.
 */
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "report_view.h"
#include "html.h"

#define FONT "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""

/* ---- roofline ---- */

#define RW 820
#define RH 480
#define RL 86
#define RR 600
#define RT 44
#define RB 420
#define LEGEND_PROCS 18

struct logaxis {
	double lo, hi; /* decades */
};

static double lx(const struct logaxis *a, double v)
{
	return RL + (log10(v) - a->lo) / (a->hi - a->lo) * (RR - RL);
}

static double ly(const struct logaxis *a, double v)
{
	return RB - (log10(v) - a->lo) / (a->hi - a->lo) * (RB - RT);
}

static int drawable(const struct rv_thread *t)
{
	return t->ops_per_s > 0 && t->oi > 0;
}

static void span(struct logaxis *a, double v)
{
	if (v > 0 && isfinite(v)) {
		a->lo = fmin(a->lo, floor(log10(v)));
		a->hi = fmax(a->hi, ceil(log10(v)));
	}
}

static void axes(const struct rv_set *set, struct logaxis *x, struct logaxis *y)
{
	*x = *y = (struct logaxis){INFINITY, -INFINITY};
	for (int i = 0; i < set->n; i++) {
		const struct rv_report *r = &set->reports[i];
		for (int k = 0; k < r->nthreads; k++)
			if (drawable(&r->threads[k])) {
				span(x, r->threads[k].oi);
				span(y, r->threads[k].ops_per_s);
			}
		span(y, r->peak_ops_per_s);
		span(x, r->peak_ops_per_s / r->bandwidth_bytes_per_s);
	}
	if (!isfinite(x->lo))
		*x = (struct logaxis){-2, 2};
	if (!isfinite(y->lo))
		*y = (struct logaxis){6, 10};
	if (x->hi - x->lo < 2)
		x->lo = x->hi - 2;
	if (y->hi - y->lo < 2)
		y->lo = y->hi - 2;
	/* No more than 12 decades: clip far outliers to the frame. */
	x->lo = fmax(x->lo, x->hi - 12);
	y->lo = fmax(y->lo, y->hi - 12);
}

static void grid(FILE *f, const struct logaxis *x, const struct logaxis *y)
{
	for (double d = x->lo; d <= x->hi; d++)
		fprintf(f,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
			"stroke=\"#e4e4e4\"/><text x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">1e%.0f</text>\n",
			lx(x, pow(10, d)), lx(x, pow(10, d)), RT, RB,
			lx(x, pow(10, d)), RB + 16, d);
	for (double d = y->lo; d <= y->hi; d++)
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#e4e4e4\"/><text x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\">1e%.0f</text>\n",
			RL, RR, ly(y, pow(10, d)), ly(y, pow(10, d)), RL - 6,
			ly(y, pow(10, d)) + 4, d);
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"none\" stroke=\"#888\"/>\n",
		RL, RT, RR - RL, RB - RT);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">operational "
		"intensity (ops per byte of LLC-miss traffic)</text>\n",
		(RL + RR) / 2, RB + 36);
	fprintf(f,
		"<text transform=\"translate(18 %d) rotate(-90)\" "
		"text-anchor=\"middle\">ops/s</text>\n",
		(RT + RB) / 2);
}

static void ceilings(FILE *f, const struct rv_set *set, const struct logaxis *x,
		     const struct logaxis *y)
{
	double done_peak = NAN, done_bw = NAN;

	for (int i = 0; i < set->n; i++) {
		const struct rv_report *r = &set->reports[i];
		double peak = r->peak_ops_per_s, bw = r->bandwidth_bytes_per_s;
		double ridge, x0 = pow(10, x->lo), x1 = pow(10, x->hi);
		if (isnan(peak) || isnan(bw) ||
		    (peak == done_peak && bw == done_bw))
			continue;
		done_peak = peak;
		done_bw = bw;
		ridge = peak / bw;
		fprintf(f,
			"<path class=\"ceiling\" clip-path=\"url(#rf-clip)\" "
			"d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1f\" fill=\"none\" "
			"stroke=\"#333\" stroke-width=\"2\"/>\n",
			lx(x, x0), ly(y, bw * x0), lx(x, ridge), ly(y, peak),
			lx(x, x1), ly(y, peak));
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
			"fill=\"#333\">peak %.3g ops/s per CPU</text>\n",
			RR - 6.0, ly(y, peak) - 6, peak);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" fill=\"#333\">memory "
			"%.3g GB/s per node</text>\n",
			RL + 8.0, fmin(RB - 8.0, ly(y, bw * x0) - 8), bw / 1e9);
	}
}

static void point(FILE *f, const struct rv_report *r, const struct rv_thread *t,
		  const struct logaxis *x, const struct logaxis *y)
{
	const struct rv_process *p = t->proc >= 0 ? &r->procs[t->proc] : NULL;
	char buf[32];

	fprintf(f,
		"<circle class=\"pt\" data-tid=\"%d\" cx=\"%.1f\" cy=\"%.1f\" "
		"r=\"3.5\" fill=\"%s\" fill-opacity=\"0.7\"><title>thread %d "
		"of ",
		t->tid, fmax(RL, fmin(RR, lx(x, t->oi))),
		fmax(RT, fmin(RB, ly(y, t->ops_per_s))),
		rv_proc_color(p ? p->color : -1, buf, sizeof(buf)), t->tid);
	nl_html_esc(f, p && p->name ? p->name : "?");
	fprintf(f, " (pid %d): %.3g ops/s, OI %.3g", t->pid, t->ops_per_s,
		t->oi);
	if (!isnan(t->latency_ns))
		fprintf(f, ", latency %.3g ns", t->latency_ns);
	fputs("</title></circle>\n", f);
}

static void proc_legend(FILE *f, const struct rv_set *set)
{
	int n = 0;
	char buf[32];

	for (int i = 0; i < set->n; i++)
		for (int k = 0; k < set->reports[i].nprocs; k++, n++) {
			const struct rv_process *p = &set->reports[i].procs[k];
			double yy = RT + 6 + n * 18;
			if (n == LEGEND_PROCS) {
				fprintf(f,
					"<text x=\"%d\" y=\"%.0f\">&#8230; %d "
					"processes</text>\n",
					RR + 16, yy + 10, set->nprocs_total);
				return;
			}
			fprintf(f,
				"<circle cx=\"%d\" cy=\"%.0f\" r=\"5\" "
				"fill=\"%s\"/><text x=\"%d\" y=\"%.0f\">",
				RR + 20, yy + 6,
				rv_proc_color(p->color, buf, sizeof(buf)),
				RR + 30, yy + 10);
			nl_html_esc_n(f, p->name ? p->name : "?", 20);
			fprintf(f, " (%d)</text>\n", p->pid);
		}
}

/* Nothing to draw: say so in a small picture, not an empty frame. */
static void roofline_empty(FILE *f)
{
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" "
		"width=\"%d\" height=\"86\" viewBox=\"0 0 %d 86\" "
		"font-size=\"13\" " FONT ">\n<rect width=\"%d\" height=\"86\" "
		"fill=\"#fff\" stroke=\"#ccc\"/>\n",
		RW, RW, RW);
	fputs("<text x=\"16\" y=\"24\" font-size=\"15\" font-weight=\"bold\">"
	      "Per-thread roofline</text>\n<text x=\"16\" y=\"50\" "
	      "fill=\"#a31515\">Not drawn: no thread has both ops/s and "
	      "operational intensity measured (unmeasured terms are not "
	      "drawn as zeros).</text>\n<text x=\"16\" y=\"70\" "
	      "fill=\"#555\">The notes below say which 3DyRM terms this "
	      "run measured.</text>\n</svg>\n",
	      f);
}

void rv_svg_roofline(FILE *f, const struct rv_set *set)
{
	struct logaxis x, y;
	int drawn = 0;

	for (int i = 0; i < set->n; i++)
		for (int k = 0; k < set->reports[i].nthreads; k++)
			drawn += drawable(&set->reports[i].threads[k]);
	if (!drawn) {
		roofline_empty(f);
		return;
	}
	drawn = 0;
	axes(set, &x, &y);
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-size=\"12\" " FONT ">\n",
		RW, RH, RW, RH);
	fprintf(f,
		"<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/><defs>"
		"<clipPath id=\"rf-clip\"><rect x=\"%d\" y=\"%d\" "
		"width=\"%d\" height=\"%d\"/></clipPath></defs>\n",
		RW, RH, RL, RT, RR - RL, RB - RT);
	fputs("<text x=\"16\" y=\"22\" font-size=\"15\" font-weight=\"bold\">"
	      "Per-thread roofline (means over measured periods)</text>\n",
	      f);
	grid(f, &x, &y);
	ceilings(f, set, &x, &y);
	for (int i = 0; i < set->n; i++)
		for (int k = 0; k < set->reports[i].nthreads; k++)
			if (drawable(&set->reports[i].threads[k])) {
				point(f, &set->reports[i],
				      &set->reports[i].threads[k], &x, &y);
				drawn++;
			}
	proc_legend(f, set);
	fputs("</svg>\n", f);
}

static const char *yes_no(int v)
{
	return v > 0 ? "measured" : v == 0 ? "<b>not measured</b>" : "unknown";
}

void rv_roofline_notes(FILE *f, const struct rv_set *set)
{
	for (int i = 0; i < set->n; i++) {
		const struct rv_report *r = &set->reports[i];
		int no_ops = 0, no_oi = 0, no_lat = 0;
		const char *be = rv_str(r->r, "counters.backend");
		if (r->error && !rv_at(r->r, "policy"))
			continue;
		for (int k = 0; k < r->nthreads; k++) {
			no_ops += !(r->threads[k].ops_per_s > 0);
			no_oi += !(r->threads[k].oi > 0);
			no_lat += isnan(r->threads[k].latency_ns);
		}
		fputs("<li>", f);
		nl_html_esc(f, r->file);
		if (set->n > 1 && rv_str(r->r, "domain")) {
			fputs(" (", f);
			nl_html_esc(f, rv_str(r->r, "domain"));
			fputs(")", f);
		}
		fputs(": counters backend <code>", f);
		nl_html_esc(f, be ? be : "?");
		fprintf(f,
			"</code>. 3DyRM terms in this run: ops/s %s, "
			"operational intensity %s, latency %s",
			yes_no(rv_bool(r->r, "counters.perf_terms.ops_per_s")),
			yes_no(rv_bool(r->r, "counters.perf_terms.oi")),
			yes_no(rv_bool(r->r, "counters.perf_terms.latency")));
		if (rv_bool(r->r, "counters.perf_terms.cpu_share") > 0)
			fputs("; CPU share stood in for ops/s", f);
		fprintf(f,
			". Of %d threads, %d have no ops/s, %d no OI and %d no "
			"latency; a thread lacking ops/s or OI is not drawn "
			"(not as a zero). ",
			r->nthreads, no_ops, no_oi, no_lat);
		if (isnan(r->peak_ops_per_s) || isnan(r->bandwidth_bytes_per_s))
			fputs("Ceilings: not known for this machine (numalot "
			      "does not measure its peak ops/s or memory "
			      "bandwidth), none drawn.",
			      f);
		else {
			fputs("Ceilings: from ", f);
			nl_html_esc(f, r->ceilings_source ? r->ceilings_source
							  : "the report");
			fputs(".", f);
		}
		fputs("</li>\n", f);
	}
}

/* ---- locality ---- */

#define LW 1100
#define LROW 66
#define LTOP 58
#define STRIP_X 230
#define STRIP_W 420
#define PAGES_X 660
#define PAGES_W 150

double rv_page_locality(const struct rv_report *r, int proc, int last)
{
	const struct rv_process *p = &r->procs[proc];
	const double *pages = last ? p->pages_last : p->pages_first;
	double own = last ? p->locality_after : p->locality_before;
	double total = 0, on[RV_MAX_NODES] = {0}, sum = 0;
	int n = 0;

	/* The report's own figure, as numalot report's text shows it. */
	if (!isnan(own))
		return own;
	if (!p->have_pages)
		return NAN;
	for (int k = 0; k < r->nnodes; k++)
		total += pages[k];
	for (int i = 0; total > 0 && i < r->nthreads; i++) {
		int node = last ? r->threads[i].last_node
				: r->threads[i].first_node;
		if (r->threads[i].proc != proc || node < 0)
			continue;
		on[node]++;
		n++;
	}
	/* The same measure: the sum over nodes of min(share of its pages,
	 * share of its threads) (docs/report-format.md). */
	for (int k = 0; n && k < r->nnodes; k++)
		sum += fmin(pages[k] / total, on[k] / n);
	return n ? sum : NAN;
}

static void stacked(FILE *f, const struct rv_report *r, const double *v,
		    double x, double y, double w, double h)
{
	double total = 0;
	char buf[32];

	for (int k = 0; k < r->nnodes; k++)
		total += v[k];
	if (!(total > 0)) {
		fprintf(f,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" fill=\"none\" stroke=\"#bbb\" "
			"stroke-dasharray=\"3 2\"/><text x=\"%.1f\" y=\"%.1f\" "
			"fill=\"#777\">not recorded</text>\n",
			x, y, w, h, x + 6, y + h - 4);
		return;
	}
	for (int k = 0; k < r->nnodes; k++) {
		double ww = w * v[k] / total;
		if (ww <= 0)
			continue;
		fprintf(f,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
			"height=\"%.1f\" fill=\"%s\"><title>node %d: %.0f%%"
			"</title></rect>\n",
			x, y, ww, h, rv_node_color(k, buf, sizeof(buf)), k,
			100 * v[k] / total);
		x += ww;
	}
}

/* One thin bar per thread, as one path per node. */
static void strip(FILE *f, const struct rv_report *r, int proc, double y)
{
	int n = 0, i0 = -1;
	char buf[32];

	for (int i = 0; i < r->nthreads; i++)
		if (r->threads[i].proc == proc && n++ == 0)
			i0 = i;
	if (!n)
		return;
	for (int k = 0; k < r->nnodes; k++) {
		double bw = (double)STRIP_W / n;
		int any = 0;
		for (int i = i0, j = 0; i < r->nthreads; i++) {
			const struct rv_thread *t = &r->threads[i];
			double h;
			if (t->proc != proc)
				continue;
			h = t->time_total_s > 0 ? 40 * t->time_on_node_s[k] /
							  t->time_total_s
						: 0;
			if (h > 0) {
				double below = 0;
				for (int q = 0; q < k; q++)
					below += 40 * t->time_on_node_s[q] /
						 t->time_total_s;
				if (!any)
					fprintf(f, "<path fill=\"%s\" d=\"",
						rv_node_color(k, buf,
							      sizeof(buf)));
				any = 1;
				fprintf(f, "M%.2f %.2fh%.2fv%.2fh%.2fz",
					STRIP_X + j * bw, y + below,
					fmax(bw * 0.85, 0.4), h,
					-fmax(bw * 0.85, 0.4));
			}
			j++;
		}
		if (any)
			fputs("\"/>\n", f);
	}
}

static void pct_or_unknown(FILE *f, double v)
{
	if (isnan(v))
		fputs("?", f);
	else
		fprintf(f, "%.0f%%", round(100 * v));
}

void rv_svg_locality(FILE *f, const struct rv_set *set)
{
	int rows = 0, row = 0, h;

	for (int i = 0; i < set->n; i++)
		rows += set->reports[i].nprocs;
	h = LTOP + rows * LROW + 16;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"locality\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-size=\"12\" " FONT ">\n",
		LW, h, LW, h);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", LW, h);
	fputs("<text x=\"16\" y=\"22\" font-size=\"15\" font-weight=\"bold\">"
	      "Locality per process</text>\n",
	      f);
	fprintf(f,
		"<text x=\"%d\" y=\"48\">share of each thread's CPU time "
		"per node (one bar per thread)</text><text x=\"%d\" y=\"48\">"
		"pages per node: first, last reading</text>\n",
		STRIP_X, PAGES_X);
	for (int i = 0; i < set->n; i++) {
		const struct rv_report *r = &set->reports[i];
		for (int k = 0; k < r->nprocs; k++, row++) {
			const struct rv_process *p = &r->procs[k];
			double y = LTOP + row * LROW;
			fprintf(f,
				"<g class=\"proc\" data-pid=\"%d\"><text "
				"x=\"16\" y=\"%.0f\" font-weight=\"bold\">",
				p->pid, y + 14);
			nl_html_esc_n(f, p->name ? p->name : "?", 26);
			fprintf(f,
				"</text><text x=\"16\" y=\"%.0f\" "
				"fill=\"#555\">pid %d</text>\n",
				y + 30, p->pid);
			strip(f, r, k, y);
			stacked(f, r, p->pages_first, PAGES_X, y, PAGES_W, 18);
			stacked(f, r, p->pages_last, PAGES_X, y + 22, PAGES_W,
				18);
			fprintf(f, "<text x=\"%d\" y=\"%.0f\">page locality: ",
				PAGES_X + PAGES_W + 10, y + 24);
			pct_or_unknown(f, rv_page_locality(r, k, 0));
			fputs(" &#8594; ", f);
			pct_or_unknown(f, rv_page_locality(r, k, 1));
			fputs("</text></g>\n", f);
		}
	}
	fputs("</svg>\n", f);
}
