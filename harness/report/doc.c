/* doc.c - the report as a list of blocks, rendered to a self-contained HTML page and to
 * Markdown. See report.h for the block types.
 * Table cells may start with a tone marker "[good] ", "[warn] ", "[bad] " or "[info] ": HTML shows
 * the cell as a coloured badge, Markdown drops the marker. */
#include "report/report.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static json_t *doc_of(hb_report *rp)
{
    if (!rp->doc) rp->doc = json_array();
    return rp->doc;
}

static json_t *vjson_str(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) return json_string("");
    json_t *j = json_string(s);
    free(s);
    return j ? j : json_string("(invalid UTF-8)");
}

void hb_doc_h(hb_report *rp, int level, const char *anchor, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *t = vjson_str(fmt, ap);
    va_end(ap);
    json_array_append_new(doc_of(rp), json_pack("{s:i,s:o,s:s}", "h", level, "text", t, "anchor", anchor ? anchor : ""));
}

void hb_doc_p(hb_report *rp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *t = vjson_str(fmt, ap);
    va_end(ap);
    json_array_append_new(doc_of(rp), json_pack("{s:o}", "p", t));
}

void hb_doc_note(hb_report *rp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_t *t = vjson_str(fmt, ap);
    va_end(ap);
    json_array_append_new(doc_of(rp), json_pack("{s:o}", "note", t));
}

json_t *hb_doc_table_v(const char *caption, int collapsed, int ncols, va_list ap, json_t **rows)
{
    json_t *head = json_array();
    *rows = json_array();
    for (int i = 0; i < ncols; i++) {
        const char *h = va_arg(ap, const char *);
        json_array_append_new(head, json_string(h ? h : ""));
    }
    return json_pack("{s:s,s:o,s:o,s:b}", "caption", caption ? caption : "", "head", head, "rows", *rows, "collapsed",
                     collapsed);
}

json_t *hb_doc_table(hb_report *rp, const char *caption, int collapsed, int ncols, ...)
{
    json_t *rows;
    va_list ap;
    va_start(ap, ncols);
    json_t *t = hb_doc_table_v(caption, collapsed, ncols, ap, &rows);
    va_end(ap);
    json_array_append_new(doc_of(rp), json_pack("{s:o}", "table", t));
    return rows;
}

void hb_doc_row(json_t *rows, int ncols, ...)
{
    json_t *r = json_array();
    va_list ap;
    va_start(ap, ncols);
    for (int i = 0; i < ncols; i++) {
        const char *c = va_arg(ap, const char *);
        json_t *s = json_string(c ? c : "");
        json_array_append_new(r, s ? s : json_string("?"));
    }
    va_end(ap);
    json_array_append_new(rows, r);
}

void hb_doc_more(hb_report *rp, const char *summary, json_t *items)
{
    json_t *last = json_array_get(rp->doc, json_array_size(rp->doc) - 1), *t = json_object_get(last, "table");
    if (!t) { json_decref(items); return; }
    json_t *more = json_object_get(t, "more");
    if (!more) json_object_set_new(t, "more", more = json_array());
    json_array_append_new(more, json_pack("{s:s,s:o}", "summary", summary ? summary : "", "items", items ? items : json_array()));
}

void hb_doc_plots(hb_report *rp, json_t *ids)
{
    if (json_array_size(ids) == 0) { json_decref(ids); return; }
    json_array_append_new(doc_of(rp), json_pack("{s:o}", "plots", ids));
}

/* ---- rendering ---- */

/* Split a tone marker off a cell. Returns the tone ("" when none) and sets *text after it. */
static const char *cell_tone(const char *c, const char **text)
{
    static const char *const tones[] = { "good", "warn", "bad", "info" };
    *text = c;
    if (c[0] != '[') return "";
    for (size_t i = 0; i < sizeof tones / sizeof tones[0]; i++) {
        size_t l = strlen(tones[i]);
        if (!strncmp(c + 1, tones[i], l) && c[1 + l] == ']') {
            *text = c + 2 + l;
            while (**text == ' ') (*text)++;
            return tones[i];
        }
    }
    return "";
}

static int looks_numeric(const char *s)
{
    if (!*s) return 0;
    if (!strcmp(s, "n/a")) return 1;
    if (*s == '-' || *s == '+' || *s == '.' || (*s >= '0' && *s <= '9')) return 1;
    return !strncmp(s, "\xe2\x88\x92", 3); /* U+2212 minus */
}

static const hb_plot *plot_find(const hb_report *rp, const char *id, int *index)
{
    for (int i = 0; i < rp->nplots; i++)
        if (!strcmp(rp->plots[i].id, id)) { *index = i; return &rp->plots[i]; }
    return NULL;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (s && n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n > 0 ? n : 0] = 0;
    fclose(f);
    return s;
}

/* A row's folded facts, after its table: {"summary": text, "items": [[key, value], ...]} behind a
 * <details> whose summary names the row by its first cell (the table stays narrow; the facts open at
 * the page's width). */
static void html_more(FILE *f, json_t *row, json_t *m)
{
    size_t i;
    json_t *kv;
    if (!json_array_size(json_object_get(m, "items"))) return;
    fputs("<details class=\"more\"><summary>", f);
    hb_report_html_esc(f, json_string_value(json_array_get(row, 0)));
    fputs(": ", f);
    hb_report_html_esc(f, json_string_value(json_object_get(m, "summary")));
    fputs("</summary><dl>", f);
    json_array_foreach(json_object_get(m, "items"), i, kv) {
        fputs("<dt>", f);
        hb_report_html_esc(f, json_string_value(json_array_get(kv, 0)));
        fputs("</dt><dd>", f);
        hb_report_html_esc(f, json_string_value(json_array_get(kv, 1)));
        fputs("</dd>", f);
    }
    fputs("</dl></details>\n", f);
}

static void html_table(FILE *f, json_t *t)
{
    const char *cap = json_string_value(json_object_get(t, "caption"));
    json_t *head = json_object_get(t, "head"), *rows = json_object_get(t, "rows");
    int collapsed = json_is_true(json_object_get(t, "collapsed"));
    size_t i, j;
    json_t *r, *c;
    if (collapsed) {
        fputs("<details><summary>", f);
        hb_report_html_esc(f, cap && *cap ? cap : "table");
        fprintf(f, " <span class=\"count\">(%zu row%s)</span></summary>\n", json_array_size(rows), json_array_size(rows) == 1 ? "" : "s");
    }
    fputs("<div class=\"tablewrap\"><table>\n", f);
    if (!collapsed && cap && *cap) { fputs("<caption>", f); hb_report_html_esc(f, cap); fputs("</caption>\n", f); }
    json_t *more = json_object_get(t, "more");
    fputs("<thead><tr>", f);
    json_array_foreach(head, j, c) { fputs("<th>", f); hb_report_html_esc(f, json_string_value(c)); fputs("</th>", f); }
    fputs("</tr></thead>\n<tbody>\n", f);
    json_array_foreach(rows, i, r) {
        fputs("<tr>", f);
        json_array_foreach(r, j, c) {
            const char *text, *tone = cell_tone(json_string_value(c), &text);
            if (*tone) {
                fputs("<td><span class=\"badge ", f);
                hb_report_html_esc(f, tone);
                fputs("\">", f);
                hb_report_html_esc(f, text);
                fputs("</span></td>", f);
            } else {
                fputs(looks_numeric(text) ? "<td class=\"num\">" : "<td>", f);
                hb_report_html_esc(f, text);
                fputs("</td>", f);
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    json_array_foreach(rows, i, r) if (more) html_more(f, r, json_array_get(more, i));
    if (collapsed) fputs("</details>\n", f);
}

static void html_plots(hb_report *rp, FILE *f, json_t *ids)
{
    size_t i;
    json_t *id;
    fputs("<div class=\"plots\">\n", f);
    json_array_foreach(ids, i, id) {
        int n = 0;
        const hb_plot *p = plot_find(rp, json_string_value(id), &n);
        if (!p) continue;
        /* a wide plot is drawn at least at its own width (its text at the size gnuplot set) and
         * scrolls sideways inside its figure rather than shrinking */
        fprintf(f, "<figure class=\"plot%s%s\" id=\"plot-%s\"", p->width > 1000 ? " wide" : "", p->ok ? "" : " failed", p->id);
        if (p->width > 1000) fprintf(f, " style=\"--plot-w: %dpx\"", p->width);
        fputs(">\n", f);
        if (!p->ok || hb_report_svg_inline(rp, p, n, f) != 0) {
            fputs("<p class=\"plotfail\">Plot not drawn: ", f);
            hb_report_html_esc(f, *p->err ? p->err : "SVG missing");
            fputs("</p>\n", f);
        }
        fputs("<figcaption>", f);
        hb_report_html_esc(f, p->title);
        fprintf(f, " <span class=\"files\"><a href=\"%s.svg\">svg</a> <a href=\"%s.png\">png</a> "
                   "<a href=\"%s.gp\">gnuplot</a> <a href=\"%s.dat\">data</a></span></figcaption>\n</figure>\n",
                p->id, p->id, p->id, p->id);
    }
    fputs("</div>\n", f);
}

/* The five cards: the question (a link to its section), the verdict, the one sentence, and the
 * per-device table behind a <details> (a card whose details are open spans the row: style.css). A
 * card is a <div>, not a link: a <details> may not sit inside an <a>. */
static void html_summary(FILE *f, json_t *cards)
{
    size_t i;
    json_t *c;
    fputs("<section class=\"verdicts\">\n", f);
    json_array_foreach(cards, i, c) {
        const char *tone = json_string_value(json_object_get(c, "tone"));
        int q = (int)json_integer_value(json_object_get(c, "q"));
        fputs("<div class=\"card ", f);
        hb_report_html_esc(f, tone ? tone : "none");
        fprintf(f, "\" id=\"card-q%d\"><div class=\"qn\">Q%d</div><h3><a href=\"#q%d\">", q, q, q);
        hb_report_html_esc(f, json_string_value(json_object_get(c, "title")));
        fputs("</a></h3><div class=\"verdict\">", f);
        hb_report_html_esc(f, json_string_value(json_object_get(c, "badge")));
        fputs("</div><p>", f);
        hb_report_html_esc(f, json_string_value(json_object_get(c, "text")));
        fputs("</p>\n", f);
        json_t *d = json_object_get(c, "details");
        if (json_array_size(json_object_get(d, "rows"))) html_table(f, d);
        fputs("</div>\n", f);
    }
    fputs("</section>\n", f);
}

static hb_status write_html(hb_report *rp, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/index.html", rp->outdir);
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, errlen, "%s: cannot write", path); return HB_EDEVICE; }
    snprintf(path, sizeof path, "%s/style.css", rp->tpl_dir);
    char *css = read_all(path);
    if (!css) fprintf(stderr, "hybench report: %s missing, page left unstyled\n", path);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>hybench report: ", f);
    hb_report_html_esc(f, rp->name);
    fputs("</title>\n<style>\n", f);
    if (css) fputs(css, f);
    free(css);
    fputs("</style>\n</head>\n<body>\n", f);
    size_t i;
    json_t *b;
    /* table of contents from the level-2 headings */
    fputs("<nav class=\"toc\"><span class=\"brand\">hybench</span>", f);
    json_array_foreach(rp->doc, i, b) {
        if (json_integer_value(json_object_get(b, "h")) != 2) continue;
        const char *a = json_string_value(json_object_get(b, "anchor"));
        if (!a || !*a) continue;
        fputs("<a href=\"#", f);
        hb_report_html_esc(f, a);
        fputs("\">", f);
        hb_report_html_esc(f, json_string_value(json_object_get(b, "text")));
        fputs("</a>", f);
    }
    fputs("</nav>\n<main>\n", f);
    json_array_foreach(rp->doc, i, b) {
        json_t *v;
        if ((v = json_object_get(b, "h"))) {
            int l = (int)json_integer_value(v);
            const char *a = json_string_value(json_object_get(b, "anchor"));
            fprintf(f, "<h%d", l);
            if (a && *a) { fputs(" id=\"", f); hb_report_html_esc(f, a); fputc('"', f); }
            fputc('>', f);
            hb_report_html_esc(f, json_string_value(json_object_get(b, "text")));
            fprintf(f, "</h%d>\n", l);
        } else if ((v = json_object_get(b, "p"))) {
            fputs("<p>", f);
            hb_report_html_esc(f, json_string_value(v));
            fputs("</p>\n", f);
        } else if ((v = json_object_get(b, "note"))) {
            fputs("<p class=\"note\">", f);
            hb_report_html_esc(f, json_string_value(v));
            fputs("</p>\n", f);
        } else if ((v = json_object_get(b, "table"))) {
            html_table(f, v);
        } else if ((v = json_object_get(b, "plots"))) {
            html_plots(rp, f, v);
        } else if ((v = json_object_get(b, "summary"))) {
            html_summary(f, v);
        }
    }
    fprintf(f, "</main>\n<footer>hybench %s &middot; report ", HB_VERSION);
    hb_report_html_esc(f, rp->name);
    fputs(" &middot; <a href=\"report.md\">report.md</a> &middot; <a href=\"summary.json\">summary.json</a>"
          " &middot; <a href=\"routing.json\">routing.json</a></footer>\n</body>\n</html>\n", f);
    int bad = ferror(f);
    if (fclose(f) || bad) { snprintf(err, errlen, "%s/index.html: write failed", rp->outdir); return HB_EDEVICE; }
    return HB_OK;
}

/* A table as Markdown: its caption in bold, the header, the rows (tone markers dropped); a table with
 * "more" cells lists them after it, one line per row named by its first cell. */
static void md_table(FILE *f, json_t *v)
{
    size_t j, k;
    json_t *r, *c;
    const char *cap = json_string_value(json_object_get(v, "caption"));
    json_t *head = json_object_get(v, "head"), *rows = json_object_get(v, "rows"), *more = json_object_get(v, "more");
    if (cap && *cap) { fputs("**", f); hb_report_md_esc(f, cap); fputs("**\n\n", f); }
    fputc('|', f);
    json_array_foreach(head, j, c) { fputc(' ', f); hb_report_md_esc(f, json_string_value(c)); fputs(" |", f); }
    fputs("\n|", f);
    json_array_foreach(head, j, c) fputs(" --- |", f);
    fputc('\n', f);
    json_array_foreach(rows, k, r) {
        fputc('|', f);
        json_array_foreach(r, j, c) {
            const char *text;
            cell_tone(json_string_value(c), &text);
            fputc(' ', f);
            hb_report_md_esc(f, text);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
    if (!more) return;
    json_array_foreach(rows, k, r) {
        json_t *items = json_object_get(json_array_get(more, k), "items"), *kv;
        if (!json_array_size(items)) continue;
        fputs("- **", f);
        hb_report_md_esc(f, json_string_value(json_array_get(r, 0)));
        fputs("**:", f);
        json_array_foreach(items, j, kv) {
            fputs(j ? "; " : " ", f);
            hb_report_md_esc(f, json_string_value(json_array_get(kv, 0)));
            fputs(": ", f);
            hb_report_md_esc(f, json_string_value(json_array_get(kv, 1)));
        }
        fputc('\n', f);
    }
    fputc('\n', f);
}

static hb_status write_md(hb_report *rp, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/report.md", rp->outdir);
    FILE *f = fopen(path, "w");
    if (!f) { snprintf(err, errlen, "%s: cannot write", path); return HB_EDEVICE; }
    size_t i, j;
    json_t *b, *v, *c;
    json_array_foreach(rp->doc, i, b) {
        if ((v = json_object_get(b, "h"))) {
            for (int l = 0; l < (int)json_integer_value(v); l++) fputc('#', f);
            fputc(' ', f);
            hb_report_md_esc(f, json_string_value(json_object_get(b, "text")));
            fputs("\n\n", f);
        } else if ((v = json_object_get(b, "p"))) {
            hb_report_md_esc(f, json_string_value(v));
            fputs("\n\n", f);
        } else if ((v = json_object_get(b, "note"))) {
            fputs("> ", f);
            hb_report_md_esc(f, json_string_value(v));
            fputs("\n\n", f);
        } else if ((v = json_object_get(b, "table"))) {
            md_table(f, v);
        } else if ((v = json_object_get(b, "plots"))) {
            json_array_foreach(v, j, c) {
                int n = 0;
                const hb_plot *p = plot_find(rp, json_string_value(c), &n);
                if (!p) continue;
                if (p->ok) {
                    fputs("![", f);
                    hb_report_md_esc(f, p->title);
                    fprintf(f, "](%s.svg)\n", p->id); /* ids are [A-Za-z0-9_-] (hb_report_plot_begin) */
                } else {
                    fputs("*Plot not drawn (", f);
                    hb_report_md_esc(f, p->title);
                    fputs("): ", f);
                    hb_report_md_esc(f, p->err);
                    fputs("*\n", f);
                }
            }
            fputc('\n', f);
        } else if ((v = json_object_get(b, "summary"))) {
            /* per card: the verdict and its sentence, then its per-device table */
            json_array_foreach(v, j, c) {
                fprintf(f, "**Q%d ", (int)json_integer_value(json_object_get(c, "q")));
                hb_report_md_esc(f, json_string_value(json_object_get(c, "title")));
                fputs(": ", f);
                hb_report_md_esc(f, json_string_value(json_object_get(c, "badge")));
                fputs(".** ", f);
                hb_report_md_esc(f, json_string_value(json_object_get(c, "text")));
                fputs("\n\n", f);
                json_t *d = json_object_get(c, "details");
                if (json_array_size(json_object_get(d, "rows"))) md_table(f, d);
            }
        }
    }
    int bad = ferror(f);
    if (fclose(f) || bad) { snprintf(err, errlen, "%s/report.md: write failed", rp->outdir); return HB_EDEVICE; }
    return HB_OK;
}

hb_status hb_report_render(hb_report *rp, char *err, size_t errlen)
{
    if (!rp->doc) rp->doc = json_array();
    hb_status st = write_html(rp, err, errlen);
    if (st != HB_OK) return st;
    return write_md(rp, err, errlen);
}
