/* numalot command line: what its pages share (html.h). */
#include "html.h"

#include <math.h>
#include <string.h>

void nl_html_head(FILE *f, const char *title, const char *css)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	      "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-"
	      "Policy\" content=\"default-src 'none'; style-src "
	      "'unsafe-inline'\">\n<title>",
	      f);
	nl_html_esc(f, title);
	fputs("</title>\n<style>", f);
	fputs(css, f);
	fputs("</style></head><body>\n", f);
}

void nl_html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			/* No control characters in XML 1.0. */
			if ((unsigned char)*s >= 0x20 || *s == '\n' ||
			    *s == '\t')
				fputc(*s, f);
		}
}

void nl_html_esc_n(FILE *f, const char *s, size_t max)
{
	char buf[256];
	size_t n = s ? strlen(s) : 0;

	if (n <= max || max >= sizeof(buf)) {
		nl_html_esc(f, s);
		return;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	memcpy(buf, s, max);
	buf[max] = 0;
	nl_html_esc(f, buf);
	fputs("&#8230;", f);
}

void nl_html_pct_cell(FILE *f, double v, int higher_is_better)
{
	double g = higher_is_better ? v : -v;
	double a = fmin(1, fabs(g) / 0.2) * 0.55;

	if (isnan(v)) {
		fputs("<td>?</td>", f);
		return;
	}
	fprintf(f, "<td style=\"background:rgba(%s,%.2f)\">%+.1f%%</td>",
		g >= 0 ? "42,157,58" : "214,39,40", a, 100 * v);
}
