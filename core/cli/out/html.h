/*
 * numalot command line: what its pages (numalot report --html, bench
 * --html, eval --html) share: the head that forbids any load or script,
 * the style of a page and of a table of figures, escaping, shaded cells.
 */
#ifndef NUMALOT_CLI_HTML_H
#define NUMALOT_CLI_HTML_H

#include <stddef.h>
#include <stdio.h>

/* A page's type, headings and tables. */
#define NL_HTML_CSS_PAGE                                                       \
	"body{font:14px/1.45 'DejaVu Sans',Helvetica,Arial,sans-serif;"        \
	"color:#1a1a1a;margin:24px;max-width:1180px}"                          \
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 "    \
	"6px;border-bottom:1px solid #ddd}"                                    \
	"table{border-collapse:collapse;margin:6px 0}"
/* Tables of figures: numbers to the right, class s for text. */
#define NL_HTML_CSS_FIGURES                                                    \
	"td,th{border:1px solid #ddd;padding:3px 7px;text-align:right;"        \
	"font-variant-numeric:tabular-nums}th{background:#f4f4f4}"             \
	"td.s,th.s{text-align:left}.note{color:#555}"

/* The page up to <body>: its title (escaped) and style (css). */
void nl_html_head(FILE *f, const char *title, const char *css);

/* Write text HTML- (and XML-) escaped. */
void nl_html_esc(FILE *f, const char *s);
/* The same, at most max bytes of s (whole UTF-8 characters), then "...". */
void nl_html_esc_n(FILE *f, const char *s, size_t max);

/* A percentage cell shaded green for good, red for bad, paler as |v|
 * shrinks to 0 (full at 20%); "?" for NAN. */
void nl_html_pct_cell(FILE *f, double v, int higher_is_better);

#endif
