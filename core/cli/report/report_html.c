/*
 * numalot report --html=FILE / --svg=PREFIX: the reports as one
 * self-contained page (inline SVG and CSS; no script, no network: its
 * Content-Security-Policy forbids both), or as SVG files.
 *
 * Every string from a report is escaped (nl_html_esc): a report is user input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "advice.h"
#include "cli_out.h"
#include "html.h"
#include "report_html.h"
#include "report_view.h"

/* Where make install puts the documents (the Makefile sets it). */
#ifndef NUMALOT_DOCDIR
#define NUMALOT_DOCDIR "/usr/local/share/doc/numalot"
#endif

#define CMD "report"

static const char css[] = NL_HTML_CSS_PAGE
	"td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;"
	"vertical-align:top}th{background:#f4f4f4}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}"
	".scroll{max-height:640px;overflow:auto;border:1px solid #ddd}"
	".note{color:#555}.bad{color:#a31515}code{background:#f4f4f4}"
	".advice{border-left:4px solid #e8a33d;padding:2px 10px;margin:8px 0;"
	"background:#fffaf0}.advice ul{margin:4px 0}"
	"details{margin:4px 0}svg{display:block}";

static void text_or(FILE *f, const char *s, const char *dflt)
{
	nl_html_esc(f, s ? s : dflt);
}

/* before, v (4 significant digits), after; or dflt when v is unknown. */
static void num_or(FILE *f, const char *before, double v, const char *after,
		   const char *dflt)
{
	if (isnan(v))
		fputs(dflt, f);
	else
		fprintf(f, "%s%.4g%s", before, v, after);
}

/* The backend's measured counters, as a list of names. */
static void measured(FILE *f, struct json_object *r)
{
	struct json_object *m = rv_at(r, "counters.measured");
	int n = 0;

	if (!json_object_is_type(m, json_type_object)) {
		fputs("?", f);
		return;
	}
	json_object_object_foreach(m, k, v)
	{
		if (!json_object_is_type(v, json_type_boolean) ||
		    !json_object_get_boolean(v))
			continue;
		fputs(n++ ? ", " : "", f);
		nl_html_esc(f, k);
	}
	if (!n)
		fputs("nothing", f);
}

static void params(FILE *f, struct json_object *r)
{
	struct json_object *p = rv_at(r, "policy.params");

	if (!json_object_is_type(p, json_type_object))
		return;
	fputs("<details><summary>parameters</summary><table>", f);
	json_object_object_foreach(p, k, v)
	{
		fputs("<tr><td>", f);
		nl_html_esc(f, k);
		fputs("</td><td>", f);
		nl_html_esc(f, json_object_to_json_string(v));
		fputs("</td></tr>", f);
	}
	fputs("</table></details>", f);
}

static void header_row(FILE *f, const struct rv_report *r)
{
	struct json_object *o = r->r;

	fputs("<tr><td>", f);
	nl_html_esc(f, r->file);
	fputs("<br>", f);
	text_or(f, rv_str(o, "domain"), "");
	fputs("</td><td>", f);
	if (rv_at(o, "slurm")) {
		fputs("job ", f);
		nl_html_esc(f, json_object_get_string(rv_at(o, "slurm.job")));
		fputs(" step ", f);
		nl_html_esc(f, json_object_get_string(rv_at(o, "slurm.step")));
		fputs("<br>on ", f);
		nl_html_esc(f, json_object_get_string(rv_at(o, "slurm.node")));
	} else {
		fputs("<span class=\"note\">not a Slurm step</span>", f);
	}
	fputs("</td><td>", f);
	text_or(f, rv_str(o, "policy.name"), "?");
	fputs(", period ", f);
	num_or(f, "", rv_num(o, "policy.params.period"), " s", "?");
	params(f, o);
	fputs("</td><td><code>", f);
	text_or(f, rv_str(o, "counters.backend"), "?");
	fputs("</code>: ", f);
	measured(f, o);
	fputs("</td><td>", f);
	num_or(f, "", rv_num(o, "machine.nodes"), " NUMA nodes", "?");
	num_or(f, ", ", rv_num(o, "machine.cpus"), " CPUs", "");
	fputs("<br><span class=\"note\">", f);
	text_or(f, rv_str(o, "machine.topology"), "");
	fputs("</span></td><td class=\"n\">", f);
	fprintf(f, "%d threads<br>%d events", r->nthreads, r->nevents);
	num_or(f, "<br>", rv_num(o, "summary.periods"), " periods", "");
	num_or(f, "<br>", rv_num(o, "summary.duration_s"), " s", "");
	fputs("</td><td class=\"n\">", f);
	num_or(f, "", rv_num(o, "numalot_overhead.cpu_s"), " CPU s",
	       "<span class=\"note\">not recorded</span>");
	fputs("</td></tr>\n", f);
	if (r->error || rv_str(o, "warning")) {
		fputs("<tr><td colspan=\"7\" class=\"bad\">", f);
		if (r->error) {
			fputs("error: ", f);
			nl_html_esc(f, r->error);
		}
		if (rv_str(o, "warning")) {
			fputs(r->error ? "<br>warning: " : "warning: ", f);
			nl_html_esc(f, rv_str(o, "warning"));
		}
		fputs("</td></tr>\n", f);
	}
}

/* Titles name at most this many jobs' steps, then how many more. */
#define TITLE_STEPS 8

/* The title: every job and step the page holds ("job 10 step 0, job 11
 * steps 0, 1"), each once, in the order of the files. */
static void title(FILE *f, const struct rv_set *set)
{
	int shown = 0, more = 0, any = 0;

	for (int i = 0; i < set->n; i++) {
		struct json_object *r = set->reports[i].r;
		const char *job = json_object_get_string(rv_at(r, "slurm.job"));
		int seen = !job;
		for (int j = 0; j < i && !seen; j++) {
			const char *o = json_object_get_string(
				rv_at(set->reports[j].r, "slurm.job"));
			seen = o && !strcmp(o, job);
		}
		if (seen)
			continue;
		if (shown == TITLE_STEPS) {
			more++;
			continue;
		}
		fputs(any ? ", job " : ": job ", f);
		nl_html_esc(f, job);
		any = 1;
		shown++;
		/* Its steps, each once. */
		int nsteps = 0;
		for (int j = i; j < set->n; j++) {
			struct json_object *q = set->reports[j].r;
			const char *o =
				json_object_get_string(rv_at(q, "slurm.job"));
			const char *st =
				json_object_get_string(rv_at(q, "slurm.step"));
			int dup = !o || strcmp(o, job) || !st;
			for (int k = i; k < j && !dup; k++) {
				struct json_object *x = set->reports[k].r;
				const char *xo = json_object_get_string(
					rv_at(x, "slurm.job"));
				const char *xs = json_object_get_string(
					rv_at(x, "slurm.step"));
				dup = xo && xs && !strcmp(xo, job) &&
				      !strcmp(xs, st);
			}
			if (dup)
				continue;
			fputs(nsteps++ ? ", " : " step ", f);
			nl_html_esc(f, st);
		}
	}
	if (more)
		fprintf(f, " and %d more job%s", more, more == 1 ? "" : "s");
}

static void header(FILE *f, const struct rv_set *set)
{
	fputs("<h1>numalot report", f);
	title(f, set);
	fprintf(f, "</h1><p class=\"note\">%d report%s from numalot ", set->n,
		set->n == 1 ? "" : "s");
	text_or(f, set->n ? rv_str(set->reports[0].r, "numalot") : NULL, "?");
	fputs("; the format is " NUMALOT_DOCDIR "/report-format.md.</p>\n", f);
	for (int i = 0; i < set->nproblems; i++) {
		fputs("<p class=\"bad\">skipped ", f);
		nl_html_esc(f, set->problems[i]);
		fputs("</p>\n", f);
	}
	fputs("<table><tr><th>file, domain</th><th>Slurm</th><th>policy"
	      "</th><th>counters backend: measures</th><th>machine</th>"
	      "<th>seen</th><th>numalot's own CPU time</th></tr>\n",
	      f);
	for (int i = 0; i < set->n; i++)
		header_row(f, &set->reports[i]);
	fputs("</table>\n", f);
}

/* What was wrong, what numalot did, what to set next time (advice.h):
 * the same words as numalot report's text. */
static void advice(FILE *f, const struct rv_set *set)
{
	int any = 0;

	fputs("<h2 id=\"advice\">Advice</h2>\n", f);
	for (int i = 0; i < set->n; i++) {
		struct json_object *a = nl_advice(set->reports[i].r);
		size_t n = a ? json_object_array_length(a) : 0;
		for (size_t k = 0; k < n; k++) {
			struct json_object *o = json_object_array_get_idx(a, k);
			fprintf(f, "<div class=\"advice\" data-rule=\"");
			nl_html_esc(f, rv_str(o, "rule"));
			fputs("\"><p><b>", f);
			nl_html_esc(f, rv_str(o, "problem"));
			fputs("</b> <span class=\"note\">(", f);
			nl_html_esc(f, set->reports[i].file);
			fputs(")</span></p><ul><li>Evidence: ", f);
			nl_html_esc(f, rv_str(o, "evidence"));
			fputs("</li><li>What numalot did: ", f);
			nl_html_esc(f, rv_str(o, "numalot_did"));
			fputs("</li><li>Next time, without numalot: ", f);
			nl_html_esc(f, rv_str(o, "next_time"));
			fputs("</li></ul></div>\n", f);
			any = 1;
		}
		json_object_put(a);
	}
	if (!any)
		fputs("<p class=\"note\">Nothing found wrong with the "
		      "placement (the rules: " NUMALOT_DOCDIR
		      "/advice.md).</p>\n",
		      f);
}

static void timelines(FILE *f, const struct rv_set *set)
{
	fputs("<h2 id=\"timeline\">Placement timeline</h2>\n<p class=\"note\">"
	      "Every thread has its own row, none sampled or merged: rows "
	      "are 16 px high for up to 40 threads and shrink to 3 px past "
	      "400 (1,024 threads: about 3,100 px, in a box that scrolls). "
	      "Colour: the NUMA node the thread was on, where numalot's "
	      "samples found it (in older reports without them, rebuilt "
	      "from numalot's events); a tick per event on the thread's row "
	      "(dashed: the partner of a swap); a page move of a process "
	      "(events of kind pages) is a dashed green line across its "
	      "rows. Hover a row or a mark for details.</p>\n",
	      f);
	for (int i = 0; i < set->n; i++) {
		const struct rv_report *r = &set->reports[i];
		if (!r->nthreads) {
			fputs("<p class=\"note\">", f);
			nl_html_esc(f, r->file);
			fputs(": no threads in this report.</p>\n", f);
			continue;
		}
		if (r->nevents > RV_TITLES_MAX)
			fprintf(f,
				"<p class=\"note\">%d events: marks carry no "
				"hover text above %d (the page stays "
				"quick).</p>\n",
				r->nevents, RV_TITLES_MAX);
		if (r->events_unplaced)
			fprintf(f,
				"<p class=\"note\">%d events name threads "
				"the report does not list (or have no time) "
				"and are not drawn.</p>\n",
				r->events_unplaced);
		fputs("<div class=\"scroll\">\n", f);
		rv_svg_timeline(f, r, r->nevents <= RV_TITLES_MAX);
		fputs("</div>\n", f);
	}
}

static void locality_table(FILE *f, const struct rv_set *set)
{
	fputs("<table class=\"loc\"><tr><th>process</th><th>threads</th>"
	      "<th>CPU time per node</th><th>pages per node, first &#8594; "
	      "last reading</th><th>page locality, first &#8594; last</th>"
	      "</tr>\n",
	      f);
	for (int i = 0; i < set->n; i++) {
		const struct rv_report *r = &set->reports[i];
		for (int k = 0; k < r->nprocs; k++) {
			const struct rv_process *p = &r->procs[k];
			double node[RV_MAX_NODES] = {0}, tot = 0, pf = 0,
			       pl = 0;
			int n = 0;
			for (int t = 0; t < r->nthreads; t++) {
				if (r->threads[t].proc != k)
					continue;
				n++;
				for (int j = 0; j < r->nnodes; j++)
					node[j] +=
						r->threads[t].time_on_node_s[j];
			}
			for (int j = 0; j < r->nnodes; j++) {
				tot += node[j];
				pf += p->pages_first[j];
				pl += p->pages_last[j];
			}
			fputs("<tr><td>", f);
			text_or(f, p->name, "?");
			fprintf(f, " (%d)</td><td class=\"n\">%d</td><td>",
				p->pid, n);
			for (int j = 0; tot > 0 && j < r->nnodes; j++)
				fprintf(f, "%s%d: %.0f%%", j ? ", " : "", j,
					100 * node[j] / tot);
			fputs("</td><td>", f);
			for (int j = 0;
			     p->have_pages && pf > 0 && pl > 0 && j < r->nnodes;
			     j++)
				fprintf(f, "%s%d: %.0f%% &#8594; %.0f%%",
					j ? ", " : "", j,
					100 * p->pages_first[j] / pf,
					100 * p->pages_last[j] / pl);
			if (!p->have_pages)
				fputs("<span class=\"note\">not recorded"
				      "</span>",
				      f);
			fputs("</td><td class=\"n\">", f);
			num_or(f, "", round(100 * rv_page_locality(r, k, 0)),
			       "%", "?");
			fputs(" &#8594; ", f);
			num_or(f, "", round(100 * rv_page_locality(r, k, 1)),
			       "%", "?");
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}

static void page(FILE *f, const struct rv_set *set)
{
	nl_html_head(f, "numalot report", css);
	header(f, set);
	advice(f, set);
	timelines(f, set);
	fputs("<h2 id=\"roofline\">Per-thread roofline</h2>\n", f);
	rv_svg_roofline(f, set);
	fputs("<ul class=\"notes\">\n", f);
	rv_roofline_notes(f, set);
	fputs("</ul>\n<h2 id=\"locality\">Locality</h2>\n<p class=\"note\">"
	      "Page locality: the share of a process's pages where its "
	      "threads are, node by node (the sum over nodes of min(share "
	      "of its pages, share of its threads)), at numalot's first and "
	      "last reading: the report's pages.locality_before and "
	      "_after, as numalot report's table shows them.</p>\n",
	      f);
	rv_svg_locality(f, set);
	locality_table(f, set);
	fputs("</body></html>\n", f);
}

struct drawing {
	const struct rv_set *set;
	void (*draw)(FILE *, const struct rv_set *, int);
	int k;
};

static int fill(FILE *f, const void *arg)
{
	const struct drawing *d = arg;
	d->draw(f, d->set, d->k);
	return 0;
}

static int write_file(const char *path, const struct rv_set *set,
		      void (*draw)(FILE *, const struct rv_set *, int), int k)
{
	struct drawing d = {set, draw, k};
	return nl_cli_write_file(CMD, path, fill, &d);
}

static void draw_page(FILE *f, const struct rv_set *set, int k)
{
	(void)k;
	page(f, set);
}

static void draw_timeline(FILE *f, const struct rv_set *set, int k)
{
	const struct rv_report *r = &set->reports[k];
	rv_svg_timeline(f, r, r->nevents <= RV_TITLES_MAX);
}

static void draw_roofline(FILE *f, const struct rv_set *set, int k)
{
	(void)k;
	rv_svg_roofline(f, set);
}

static void draw_locality(FILE *f, const struct rv_set *set, int k)
{
	(void)k;
	rv_svg_locality(f, set);
}

static int write_svgs(const char *prefix, const struct rv_set *set)
{
	char path[4096];
	int rc = 0, several = 0;

	for (int i = 0; i < set->n; i++)
		several += set->reports[i].nthreads > 0;
	several = several > 1;
	for (int i = 0; i < set->n && rc == 0; i++) {
		if (!set->reports[i].nthreads)
			continue;
		if (several)
			snprintf(path, sizeof(path), "%s-timeline-%d.svg",
				 prefix, i + 1);
		else
			snprintf(path, sizeof(path), "%s-timeline.svg", prefix);
		rc = write_file(path, set, draw_timeline, i);
	}
	snprintf(path, sizeof(path), "%s-roofline.svg", prefix);
	if (rc == 0)
		rc = write_file(path, set, draw_roofline, 0);
	snprintf(path, sizeof(path), "%s-locality.svg", prefix);
	if (rc == 0)
		rc = write_file(path, set, draw_locality, 0);
	return rc;
}

int nl_report_pictures(const char *html, const char *svg_prefix, char **files,
		       int nfiles)
{
	struct rv_set set;
	int rc = 0;

	if (rv_load(&set, files, nfiles) < 0) {
		nl_cli_error(CMD, "out of memory");
		rv_free(&set);
		return NL_EXIT_FAIL;
	}
	if (set.n == 0) {
		nl_cli_error(CMD, "no numalot report to draw");
		rv_free(&set);
		return NL_EXIT_USAGE;
	}
	if (html)
		rc = write_file(html, &set, draw_page, 0);
	if (rc == 0 && svg_prefix)
		rc = write_svgs(svg_prefix, &set);
	rv_free(&set);
	return rc ? NL_EXIT_FAIL : NL_EXIT_OK;
}
