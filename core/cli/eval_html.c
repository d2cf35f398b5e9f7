/* numalot eval --html=FILE: the table and numalot's cost as one
 * self-contained page (no script, no network), cells shaded by sign. */
#include <stdio.h>

#include "cli.h"
#include "eval.h"
#include "html.h"

static void class_table(FILE *f, const struct eval_plan *p, int cls)
{
	const struct eval_conf *c = &p->c;
	fprintf(f,
		"<h2>class %s</h2>\n<table><tr><th class=s>system</th>"
		"<th>runs</th><th>median (s)</th><th>interval (s)</th>"
		"<th>cover</th><th>better</th><th>mean</th><th>best</th>"
		"<th>numalot CPU (s a run)</th></tr>\n",
		nl_eval_class_names[cls]);
	for (int y = 0; y < SYS_COUNT; y++) {
		struct eval_cell e;
		if (!c->sys_on[y])
			continue;
		fprintf(f, "<tr><td class=s>%s</td>", nl_eval_system_names[y]);
		if (nl_eval_cell(p, cls, y, &e) < 0) {
			fputs("<td>0</td><td colspan=7 class=s>no run done "
			      "and ok</td></tr>\n",
			      f);
			continue;
		}
		fprintf(f,
			"<td>%zu</td><td>%.3f</td><td>[%.3f, %.3f]</td>"
			"<td>%.1f%%</td>",
			e.n, e.median, e.lo, e.hi, 100 * e.level);
		if (e.vs_ok) {
			fprintf(f, "<td>%.0f%%</td>", 100 * e.better);
			nl_html_pct_cell(f, e.mean, 1);
			nl_html_pct_cell(f, e.best, 1);
		} else {
			fputs("<td></td><td></td><td></td>", f);
		}
		if (e.cpu_mean >= 0)
			fprintf(f, "<td>%.3f (%.2f%% of a CPU)</td>",
				e.cpu_mean, 100 * e.cpu_share);
		else
			fputs("<td></td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static int page(FILE *f, const void *arg)
{
	const struct eval_plan *p = arg;
	const struct eval_conf *c = &p->c;

	nl_html_head(f, "numalot eval", NL_HTML_CSS_PAGE NL_HTML_CSS_FIGURES);
	fprintf(f,
		"<h1>numalot eval</h1>\n<p "
		"class=note>%d NUMA node%s, seed %llu, %d repetition%s; "
		"makespan of the co-scheduled commands:",
		c->nodes, nl_s(c->nodes), c->seed, c->reps, nl_s(c->reps));
	for (int i = 0; i < c->ncmds; i++) {
		fputc(' ', f);
		nl_html_esc(f, c->cmds[i].name);
	}
	fputs(". Improvement against linux's median (+ is faster); the "
	      "interval is the median's, from order statistics, with its "
	      "coverage (docs/evaluation.md, \"On your own nodes\").</p>\n",
	      f);
	if (c->one_node)
		fputs("<p><b>One NUMA node: nothing to place, so only "
		      "numalot's overhead is measured (monitor against "
		      "linux); no speed-up can be shown here.</b></p>\n",
		      f);
	for (int k = 0; k < c->nclasses; k++)
		class_table(f, p, c->classes[k]);
	fputs("<h2>skipped</h2>\n<ul>\n", f);
	for (int y = 0; y < SYS_COUNT; y++)
		if (!c->sys_on[y]) {
			fprintf(f, "<li>%s: ", nl_eval_system_names[y]);
			nl_html_esc(f, c->skip[y]);
			fputs("</li>\n", f);
		}
	fputs("</ul>\n</body></html>\n", f);
	return 0;
}

int nl_eval_write_html(const struct eval_plan *p, const char *path)
{
	return nl_cli_write_file(EVAL_CMD, path, page, p);
}
