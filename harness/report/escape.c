/* escape.c - every string that may come from a results file reaches report.md, index.html or a
 * gnuplot script only through these (report/report.h, "Escaping"): HTML, Markdown, gnuplot strings
 * and comments. doc.c and plot.c both use them. */
#include "report/report.h"
#include <string.h>

/* HTML text and attribute values (every attribute here is double-quoted; ' is escaped as well). */
void hb_report_html_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Markdown: escape every character that could start markup (emphasis, code, links and images,
 * raw HTML and autolinks, headings, table cells) in running text, headings and table cells, and keep
 * the text on one line, so that no string can open a block (heading, list, quote, code) of its own. */
void hb_report_md_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) fputc(' ', f);
        else if (strchr("\\`*_[]<>#|", *s)) { fputc('\\', f); fputc(*s, f); }
        else fputc(*s, f);
    }
}

static int is_ctrl(char c)
{
    return (unsigned char)c < 0x20 || c == 0x7f;
}

const char *hb_report_gp_str(const char *s)
{
    static char ring[8][512];
    static int next;
    char *o = ring[next];
    next = (next + 1) % 8;
    size_t j = 0;
    for (; *s && j + 3 < sizeof ring[0]; s++) {
        if (*s == '\'') o[j++] = '\'';
        o[j++] = is_ctrl(*s) ? ' ' : *s;
    }
    o[j] = 0;
    return o;
}

const char *hb_report_gp_comment(const char *s)
{
    static char ring[4][512];
    static int next;
    char *o = ring[next];
    next = (next + 1) % 4;
    size_t j = 0;
    for (; *s && j + 1 < sizeof ring[0]; s++) o[j++] = is_ctrl(*s) ? ' ' : *s == '\\' ? '/' : *s;
    o[j] = 0;
    return o;
}
