/*
 * numalot bench --html=FILE: the evaluation as one self-contained page
 * (docs/evaluation.md): the chart of bench_svg.c, the summary per policy
 * and the per-scenario tables that bench_out.c prints, cells shaded by
 * sign (green: faster than linux, or closer to best-static). Inline SVG
 * and CSS, no script, no network.
 */
#include <errno.h>

#include "bench.h"
#include "cli_out.h"
#include "html.h"
#include "scenario.h"

#define CMD "bench"

static void scenario_table(FILE *f, const struct nl_bench *b, const char *id,
			   const char *title, enum nl_bench_metric m, int gap)
{
	fprintf(f, "<h2 id=\"%s\">", id);
	nl_html_esc(f, title);
	fputs("</h2>\n<table class=\"scen\"><tr><th class=\"s\">scenario</th>",
	      f);
	for (int p = 0; p < b->npol; p++)
		if (p != b->ilinux && !(gap && p == b->ibest)) {
			fputs("<th>", f);
			nl_html_esc(f, nl_run_name(b->pol[p]));
			fputs("</th>", f);
		}
	fputs("</tr>\n", f);
	for (int i = 0; i < b->nscen; i++) {
		fputs("<tr><td class=\"s\">", f);
		nl_html_esc(f, nl_scenario_name(b->sc[i]));
		fputs("</td>", f);
		for (int p = 0; p < b->npol; p++)
			if (p != b->ilinux && !(gap && p == b->ibest))
				nl_html_pct_cell(
					f, nl_bench_scen_mean(b, i, p, m, gap),
					!gap);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void summary_table(FILE *f, const struct nl_bench *b,
			  enum nl_bench_metric m)
{
	int gap = m == NL_BENCH_MAKESPAN;

	fputs("<table class=\"summary\"><tr><th class=\"s\">policy</th>"
	      "<th>mean</th><th>median</th><th>min</th><th>max</th>"
	      "<th>better</th><th>&gt;2% worse</th>",
	      f);
	if (gap)
		fputs("<th>gap to best-static (mean)</th><th>(median)</th>", f);
	fputs("</tr>\n", f);
	for (int p = 0; p < b->npol; p++) {
		struct nl_bench_stats s, g;
		if (p == b->ilinux || nl_bench_stats(b, p, m, 0, &s) < 0 ||
		    nl_bench_stats(b, p, NL_BENCH_MAKESPAN, 1, &g) < 0)
			continue;
		fputs("<tr><td class=\"s\">", f);
		nl_html_esc(f, nl_run_name(b->pol[p]));
		fputs("</td>", f);
		nl_html_pct_cell(f, s.mean, 1);
		nl_html_pct_cell(f, s.median, 1);
		nl_html_pct_cell(f, s.min, 1);
		nl_html_pct_cell(f, s.max, 1);
		fprintf(f, "<td>%.0f%%</td><td>%.0f%%</td>",
			100 * s.better_share, 100 * s.worse_share);
		if (gap) {
			nl_html_pct_cell(f, g.mean, 0);
			nl_html_pct_cell(f, g.median, 0);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void scenarios(FILE *f, const struct nl_bench *b)
{
	fputs("<h2 id=\"scenarios\">Scenarios</h2>\n<table><tr><th "
	      "class=\"s\">scenario</th><th class=\"s\">file</th><th "
	      "class=\"s\">processes</th></tr>\n",
	      f);
	for (int i = 0; i < b->nscen; i++) {
		fputs("<tr><td class=\"s\">", f);
		nl_html_esc(f, nl_scenario_name(b->sc[i]));
		fputs("</td><td class=\"s\">", f);
		nl_html_esc(f, b->files[i]);
		fputs("</td><td class=\"s\">", f);
		struct nl_scenario_proc p;
		for (int k = 0; nl_scenario_proc(b->sc[i], k, &p) == 0; k++) {
			fputs(k ? ", " : "", f);
			nl_html_esc(f, p.name);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static int page(FILE *f, const void *arg)
{
	const struct nl_bench *b = arg;

	nl_html_head(f, "numalot bench", NL_HTML_CSS_PAGE NL_HTML_CSS_FIGURES);
	fprintf(f,
		"<h1>numalot bench: IMAR2 and LBMA "
		"against Linux on the simulated NUMA node</h1>\n<p "
		"class=\"note\">%d scenarios &#215; %d policies &#215; %d "
		"seeds = %d runs. Improvement over linux: (T_linux &#8722; "
		"T) / T_linux, + is faster; gap to best-static: (T &#8722; "
		"T_best) / T_best, + is slower. Per scenario: the mean over "
		"the seeds. docs/evaluation.md says what it means.</p>\n",
		b->nscen, b->npol, b->nseeds, b->nscen * b->npol * b->nseeds);
	if (nl_bench_svg(b, f) < 0)
		return -ENOMEM;
	fputs("<h2 id=\"summary\">Over every scenario and seed</h2>\n"
	      "<p>Makespan: improvement over linux, and the gap to "
	      "best-static</p>\n",
	      f);
	summary_table(f, b, NL_BENCH_MAKESPAN);
	fputs("<p>Mean process completion time: improvement over linux</p>\n",
	      f);
	summary_table(f, b, NL_BENCH_MEAN_COMPLETION);
	scenario_table(f, b, "makespan", "Makespan: improvement over linux",
		       NL_BENCH_MAKESPAN, 0);
	scenario_table(f, b, "completion",
		       "Mean process completion time: improvement over linux",
		       NL_BENCH_MEAN_COMPLETION, 0);
	scenario_table(f, b, "gap", "Makespan: gap to best-static",
		       NL_BENCH_MAKESPAN, 1);
	scenarios(f, b);
	fputs("</body></html>\n", f);
	return 0;
}

int nl_bench_write_html(const struct nl_bench *b, const char *path)
{
	return nl_cli_write_file(CMD, path, page, b);
}
