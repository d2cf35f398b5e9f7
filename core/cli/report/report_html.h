/* numalot report --html / --svg (report_html.c). */
#ifndef NUMALOT_CLI_REPORT_HTML_H
#define NUMALOT_CLI_REPORT_HTML_H

/*
 * Draw the reports in files: one self-contained page at html, and/or
 * PREFIX-timeline.svg (PREFIX-timeline-N.svg for the Nth of several
 * reports), PREFIX-roofline.svg and PREFIX-locality.svg. Files that are
 * not reports are named on the page and skipped. An exit status.
 */
int nl_report_pictures(const char *html, const char *svg_prefix, char **files,
		       int nfiles);

#endif
