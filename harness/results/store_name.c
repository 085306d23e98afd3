/* store_name.c - a history store named without its password (results/store.h): which engine a store
 * name means, the form every message, record and report gives it (rebuilt from libpq's own parse of
 * the connection string, PQconninfoParse, with each password as "***"), and a libpq message with the
 * password taken out. */
#include "results/store.h"
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASK "***"

static int is_pg_uri(const char *url)
{
    return !strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11);
}

/* libpq's options of url (PQconninfoFree), or NULL when libpq cannot parse it. Its error message is
 * dropped unread: it may quote a piece of the string, the password among them. */
static PQconninfoOption *parse(const char *url)
{
    char *em = NULL;
    PQconninfoOption *o = PQconninfoParse(url, &em);
    if (em) PQfreemem(em);
    return o;
}

static int secret(const char *keyword) { return !strcmp(keyword, "password") || !strcmp(keyword, "sslpassword"); }

int hb_store_is_postgres(const char *url)
{
    if (!url || !*url) return 0;
    if (is_pg_uri(url)) return 1;
    if (!strchr(url, '=')) return 0;
    PQconninfoOption *o = parse(url); /* "key=value ..." with libpq's keywords only: no file name is that */
    if (!o) return 0;
    PQconninfoFree(o);
    return 1;
}

typedef struct sbuf { char *d; size_t len, n; } sbuf; /* appends, truncated at len - 1 */

static void add(sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n && b->n + 1 < b->len; i++) b->d[b->n++] = s[i];
    b->d[b->n] = 0;
}
static void adds(sbuf *b, const char *s) { add(b, s, strlen(s)); }

/* s percent-encoded (RFC 3986) as a libpq URI takes it: all but the unreserved characters and those of
 * `keep` ("/:,@" in a query value, where RFC 3986 allows them: host=/var/run/postgresql). */
static void add_pct_keep(sbuf *b, const char *s, const char *keep)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || strchr("-._~", *p) ||
            strchr(keep, *p)) {
            add(b, (const char *)p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            add(b, e, 3);
        }
    }
}

static void add_pct(sbuf *b, const char *s) { add_pct_keep(b, s, ""); }

/* s as a key=value connection string value: as it is when it needs no quotes, else in single quotes
 * with ' and \ escaped by a backslash. */
static void add_kv_value(sbuf *b, const char *s)
{
    if (*s && !strpbrk(s, " \t\n\r\f\v'\\")) { adds(b, s); return; }
    adds(b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'' || *p == '\\') adds(b, "\\");
        add(b, p, 1);
    }
    adds(b, "'");
}

static const char *opt(const PQconninfoOption *o, const char *k)
{
    for (; o->keyword; o++)
        if (o->val && !strcmp(o->keyword, k)) return o->val;
    return NULL;
}

/* The URI form of o: postgresql://[user[:***]@][host[:port]][/dbname][?key=value&...]. One host
 * without '/' (a socket folder) or ',' (several hosts) goes into the authority (an IPv6 address in
 * brackets); otherwise host and port are query parameters, as libpq also reads them. A password
 * without a user is the query parameter password=***. */
static void uri_form(sbuf *b, const PQconninfoOption *o)
{
    const char *user = opt(o, "user"), *pw = opt(o, "password"), *host = opt(o, "host"), *port = opt(o, "port"),
               *db = opt(o, "dbname");
    int host_in_authority = host && *host && !strpbrk(host, "/,") && !(port && strchr(port, ','));
    adds(b, "postgresql://");
    if (user) {
        add_pct(b, user);
        if (pw) adds(b, ":" MASK);
        adds(b, "@");
    }
    if (host_in_authority) {
        int v6 = strchr(host, ':') != NULL;
        if (v6) adds(b, "[");
        add_pct_keep(b, host, v6 ? ":" : "");
        if (v6) adds(b, "]");
        if (port && *port) { adds(b, ":"); add_pct(b, port); }
    }
    if (db) { adds(b, "/"); add_pct(b, db); }
    char sep = '?';
    for (const PQconninfoOption *p = o; p->keyword; p++) {
        if (!p->val || !strcmp(p->keyword, "user") || !strcmp(p->keyword, "dbname") ||
            (user && !strcmp(p->keyword, "password")))
            continue;
        if (host_in_authority && (!strcmp(p->keyword, "host") || !strcmp(p->keyword, "port"))) continue;
        add(b, &sep, 1);
        sep = '&';
        adds(b, p->keyword);
        adds(b, "=");
        if (secret(p->keyword)) adds(b, MASK);
        else add_pct_keep(b, p->val, "/:,@");
    }
}

/* The key=value form of o: keyword=value ..., libpq's order, each secret as ***. */
static void kv_form(sbuf *b, const PQconninfoOption *o)
{
    int first = 1;
    for (const PQconninfoOption *p = o; p->keyword; p++) {
        if (!p->val) continue;
        if (!first) adds(b, " ");
        first = 0;
        adds(b, p->keyword);
        adds(b, "=");
        if (secret(p->keyword)) adds(b, MASK);
        else add_kv_value(b, p->val);
    }
}

const char *hb_store_safe_name(const char *url, char *buf, size_t len)
{
    if (!buf || !len) return "";
    sbuf b = {buf, len, 0};
    buf[0] = 0;
    if (!url) { adds(&b, "(no store)"); return buf; }
    if (!hb_store_is_postgres(url)) { adds(&b, url); return buf; } /* a SQLite file: its path */
    PQconninfoOption *o = parse(url);
    if (!o) {
        adds(&b, "(a PostgreSQL connection string that libpq cannot parse; not shown, as it may hold a password)");
        return buf;
    }
    if (is_pg_uri(url)) uri_form(&b, o);
    else kv_form(&b, o);
    PQconninfoFree(o);
    return buf;
}

void hb_store_scrub(const char *url, char *text, size_t len)
{
    if (!url || !text || !len) return;
    PQconninfoOption *o = hb_store_is_postgres(url) ? parse(url) : NULL;
    if (!o) return;
    for (const PQconninfoOption *p = o; p->keyword; p++) {
        if (!p->val || !*p->val || !secret(p->keyword)) continue;
        size_t pl = strlen(p->val), ml = strlen(MASK);
        char *hit;
        size_t from = 0;
        while ((hit = strstr(text + from, p->val))) {
            size_t at = (size_t)(hit - text), tl = strlen(text);
            size_t tail = tl - at - pl;                 /* bytes after the password */
            size_t keep = at + ml + tail + 1 <= len ? tail : (len > at + ml + 1 ? len - at - ml - 1 : 0);
            if (at + ml + 1 > len) { text[at] = 0; break; } /* no room for the mask: cut there */
            memmove(text + at + ml, text + at + pl, keep);
            memcpy(text + at, MASK, ml);
            text[at + ml + keep] = 0;
            from = at + ml;
        }
    }
    PQconninfoFree(o);
}
