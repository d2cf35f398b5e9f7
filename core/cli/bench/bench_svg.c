/*
 * numalot bench --svg: one chart of the makespan improvements over linux.
 * One row per policy: every run (scenario and seed) a dot, the quartiles a
 * box, the median a bar; on the right the median, the share of wins and
 * the share of slowdowns beyond 2%. Plain SVG text, no library.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli_out.h"

#define CMD "bench"

#define W 980
#define LEFT 130   /* policy names */
#define PLOT_W 520 /* the axis */
#define ROW_H 54
#define TOP 92
#define BOTTOM 56
#define CLAMP_PCT 60.0 /* values beyond are drawn at the edge */

static const char *color_of(enum nl_run_kind k)
{
	switch (k) {
	case NL_RUN_IMAR2:
		return "#1f6fb4";
	case NL_RUN_LBMA:
		return "#e8700e";
	case NL_RUN_MONITOR:
		return "#17a2b8";
	case NL_RUN_STATIC:
		return "#6c6c6c";
	case NL_RUN_LINUX_NONUMA:
		return "#8c564b";
	case NL_RUN_BEST_STATIC:
		return "#2a9d3a";
	case NL_RUN_IDEAL_LOCALITY:
		return "#8e5fbf";
	case NL_RUN_IMAR2_PAPER:
		return "#9ecae1";
	case NL_RUN_LBMA_PAPER:
		return "#fdae6b";
	default:
		return "#000000";
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)floor(pos);

	if (i >= n - 1)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

struct axis {
	double lo, hi, step; /* in % */
};

static double xpos(const struct axis *a, double pct)
{
	if (pct < a->lo)
		pct = a->lo;
	if (pct > a->hi)
		pct = a->hi;
	return LEFT + (pct - a->lo) / (a->hi - a->lo) * PLOT_W;
}

/* A fixed, even spread of a run's dot around its row (no generator). */
static double jitter(int scen, int seed)
{
	uint32_t h = (uint32_t)scen * 2654435761u ^ (uint32_t)seed * 40503u;
	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return (double)(h % 1000) / 999.0 - 0.5;
}

static void make_axis(const struct nl_bench *b, struct axis *a)
{
	double lo = 0, hi = 0, span;

	for (int p = 0; p < b->npol; p++)
		for (int i = 0; p != b->ilinux && i < b->nscen; i++)
			for (int s = 0; s < b->nseeds; s++) {
				double v = 100 * nl_bench_improvement(
							 b, i, s, p,
							 NL_BENCH_MAKESPAN);
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
	lo = fmax(lo, -CLAMP_PCT);
	hi = fmin(hi, CLAMP_PCT);
	span = hi - lo;
	a->step = span > 60 ? 10 : span > 24 ? 5 : span > 10 ? 2 : 1;
	a->lo = floor(lo / a->step - 0.3) * a->step;
	a->hi = ceil(hi / a->step + 0.3) * a->step;
}

static void draw_axis(FILE *f, const struct axis *a, int rows)
{
	double y0 = TOP - 8, y1 = TOP + rows * ROW_H;
	double x0 = xpos(a, 0);

	/* Faster than linux to the right: a green wash; slower: red. */
	fprintf(f,
		"<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"#fbeaea\"/>\n",
		LEFT, y0, x0 - LEFT, y1 - y0);
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"#eaf6ec\"/>\n",
		x0, y0, LEFT + PLOT_W - x0, y1 - y0);
	for (double t = a->lo; t <= a->hi + 1e-9; t += a->step) {
		double x = xpos(a, t);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"%s\" stroke-width=\"%s\"/>\n",
			x, y0, x, y1, fabs(t) < 1e-9 ? "#333" : "#d0d0d0",
			fabs(t) < 1e-9 ? "1.5" : "0.7");
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
			"text-anchor=\"middle\" fill=\"#444\">%+.0f%%</text>\n",
			x, y1 + 18, t);
	}
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
		"text-anchor=\"end\" fill=\"#a33\">&#8592; slower than "
		"linux</text>\n",
		x0 - 6, y0 - 6);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#2a7a38\">"
		"faster than linux &#8594;</text>\n",
		x0 + 6, y0 - 6);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
		"text-anchor=\"middle\" fill=\"#444\">makespan improvement "
		"over linux, (T_linux - T) / T_linux</text>\n",
		LEFT + PLOT_W / 2.0, y1 + 38);
}

static void draw_row(FILE *f, const struct nl_bench *b, const struct axis *a,
		     int p, int row, double *v)
{
	double yc = TOP + row * ROW_H + ROW_H / 2.0, q1, q3, med;
	const char *col = color_of(b->pol[p]);
	int n = 0, better = 0, worse = 0;

	if (row % 2)
		fprintf(f,
			"<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\" "
			"fill=\"#000\" fill-opacity=\"0.035\"/>\n",
			yc - ROW_H / 2.0, W, ROW_H);
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" font-size=\"14\" "
		"font-weight=\"bold\" "
		"text-anchor=\"end\" fill=\"%s\">%s</text>\n",
		LEFT - 10, yc + 5, col, nl_run_name(b->pol[p]));
	for (int i = 0; i < b->nscen; i++)
		for (int s = 0; s < b->nseeds; s++) {
			double x = 100 * nl_bench_improvement(
						 b, i, s, p, NL_BENCH_MAKESPAN);
			double y = yc + jitter(i, s) * ROW_H * 0.62;
			v[n++] = x;
			better += x > 0;
			worse += x < -2;
			if (x < a->lo || x > a->hi)
				fprintf(f,
					"<path d=\"M%.1f %.1f l%d -4 l0 8 z\" "
					"fill=\"%s\"/>\n",
					xpos(a, x), y, x < a->lo ? 7 : -7, col);
			else
				fprintf(f,
					"<circle cx=\"%.1f\" cy=\"%.1f\" "
					"r=\"2.6\" fill=\"%s\" "
					"fill-opacity=\"0.45\"/>\n",
					xpos(a, x), y, col);
		}
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	q1 = quantile(v, n, 0.25);
	med = quantile(v, n, 0.5);
	q3 = quantile(v, n, 0.75);
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
		xpos(a, q1), yc - ROW_H * 0.3, xpos(a, q3) - xpos(a, q1),
		ROW_H * 0.6, col);
	fprintf(f,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"%s\" stroke-width=\"4\"/>\n",
		xpos(a, med), yc - ROW_H * 0.36, xpos(a, med),
		yc + ROW_H * 0.36, col);
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" font-size=\"13\" fill=\"#222\">"
		"median %+.1f%% &#183; wins %.0f%% &#183; &gt;2%% worse "
		"%.0f%%</text>\n",
		LEFT + PLOT_W + 16, yc + 5, med, 100.0 * better / n,
		100.0 * worse / n);
}

int nl_bench_svg(const struct nl_bench *b, FILE *f)
{
	int rows = b->npol - 1, row = 0, h = TOP + rows * ROW_H + BOTTOM;
	double *v = malloc(sizeof(double) * ((size_t)b->nscen * b->nseeds + 1));
	struct axis a;

	if (!v)
		return -ENOMEM;

	make_axis(b, &a);
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
		W, h, W, h);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, h);
	fprintf(f,
		"<text x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\" "
		"fill=\"#111\">Makespan vs Linux on the simulated NUMA node"
		"</text>\n");
	fprintf(f,
		"<text x=\"16\" y=\"46\" font-size=\"12.5\" fill=\"#444\">%d "
		"scenarios x %d seeds; each dot is one run, the box spans the "
		"middle half, the bar is the median (numalot bench)</text>\n",
		b->nscen, b->nseeds);
	draw_axis(f, &a, rows);
	for (int p = 0; p < b->npol; p++)
		if (p != b->ilinux)
			draw_row(f, b, &a, p, row++, v);
	fprintf(f, "</svg>\n");
	free(v);
	return 0;
}

static int chart(FILE *f, const void *b)
{
	return nl_bench_svg(b, f);
}

int nl_bench_write_svg(const struct nl_bench *b, const char *path)
{
	return nl_cli_write_file(CMD, path, chart, b);
}
