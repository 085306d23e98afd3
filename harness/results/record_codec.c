/*
 * record_codec.c - any struct of record.h read from, and written as, its JSON object through its
 * field table (record_fields.c): hb_rec_decode, hb_rec_encode, hb_rec_clear, hb_rec_release,
 * hb_rec_put. A struct keeps its keys' order and each value's JSON form (record.h, hb_rec_keys), so
 * that a record read and written back is the same JSON, key for key and bit for bit, and a record
 * that measure/ fills member by member is written in the order it was filled. The JSON forms of a
 * number (hb_json_num, hb_json_count) and of a shape (hb_rec_shape_json) are written here too: the
 * codec writes every value, write.c builds records with it.
 */
#include "results/results.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define AT(base, off, type) ((type *)((char *)(base) + (off)))
#define CAT(base, off, type) ((const type *)((const char *)(base) + (off)))
#define KEYS(t, base) AT(base, (t)->keys, hb_rec_keys)
#define FORM(j) ((unsigned char)(json_typeof(j) + 1))

/* ---- JSON values as every record writes them (results.h) ---- */
json_t *hb_json_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

json_t *hb_json_count(double x)
{
    if (!isfinite(x)) return json_null();
    if (fabs(x) <= 9007199254740992.0 && x == floor(x)) return json_integer((json_int_t)x);
    return json_real(x);
}

json_t *hb_rec_shape_json(const hb_rec_shape *s)
{
    if (!s || !s->present) return json_null();
    json_t *o = json_object();
    for (int i = 0; o && i < s->norder; i++) {
        const hb_shape_field *f = &hb_shape_fields[s->order[i]];
        json_object_set_new(o, f->name, json_integer(*(const int64_t *)((const char *)&s->v + f->offset)));
    }
    return o;
}

void hb_rec_clear(const hb_rec_table *t, void *base)
{
    for (int i = 0; i < t->n; i++) {
        const hb_rec_field *f = &t->f[i];
        switch (f->kind) {
        case HB_RK_STR: *AT(base, f->off, const char *) = NULL; break;
        case HB_RK_REAL: case HB_RK_REAL_INF: case HB_RK_INT: case HB_RK_COUNT: *AT(base, f->off, double) = NAN; break;
        case HB_RK_I64: *AT(base, f->off, long long) = -1; break;
        case HB_RK_BOOL: *AT(base, f->off, int) = -1; break;
        case HB_RK_NUMS: case HB_RK_INTS: memset(AT(base, f->off, hb_rec_nums), 0, sizeof(hb_rec_nums)); break;
        case HB_RK_STRS: memset(AT(base, f->off, hb_rec_strs), 0, sizeof(hb_rec_strs)); break;
        case HB_RK_SHAPE: memset(AT(base, f->off, hb_rec_shape), 0, sizeof(hb_rec_shape)); break;
        case HB_RK_JSON: *AT(base, f->off, json_t *) = NULL; break;
        case HB_RK_OBJ: hb_rec_clear(f->sub, AT(base, f->off, char)); break;
        case HB_RK_GROUP: hb_rec_clear(f->sub, base); break;
        case HB_RK_ARR: *AT(base, f->off, void *) = NULL; *AT(base, f->aux, size_t) = 0; break;
        }
    }
    memset(KEYS(t, base), 0, sizeof(hb_rec_keys));
}

void hb_rec_release(const hb_rec_table *t, void *base)
{
    for (int i = 0; i < t->n; i++) {
        const hb_rec_field *f = &t->f[i];
        if (f->kind == HB_RK_NUMS || f->kind == HB_RK_INTS) free(AT(base, f->off, hb_rec_nums)->v);
        else if (f->kind == HB_RK_STRS) free((void *)AT(base, f->off, hb_rec_strs)->v);
        else if (f->kind == HB_RK_OBJ) hb_rec_release(f->sub, AT(base, f->off, char));
        else if (f->kind == HB_RK_GROUP) hb_rec_release(f->sub, base);
        else if (f->kind == HB_RK_ARR) {
            char *a = *AT(base, f->off, char *);
            for (size_t k = 0; a && k < *AT(base, f->aux, size_t); k++) hb_rec_release(f->sub, a + k * f->sub->size);
            free(a);
        }
    }
    hb_rec_keys *k = KEYS(t, base);
    free(k->e);
    free(k->more);
    hb_rec_clear(t, base);
}

/* Appends an entry (field, form, more) to k; HB_OK or HB_ENOMEM. */
static hb_status add_entry(hb_rec_keys *k, int field, unsigned char form, int more)
{
    if (k->n == k->cap) {
        unsigned cap = k->cap ? 2u * k->cap : 8u;
        if (cap > 65535u) return HB_ENOMEM;
        hb_rec_entry *e = realloc(k->e, cap * sizeof *e);
        if (!e) return HB_ENOMEM;
        k->e = e;
        k->cap = (unsigned short)cap;
    }
    k->e[k->n++] = (hb_rec_entry){(short)field, form, more};
    return HB_OK;
}

/* Keeps key/value as read; its index in k->more, or -1 when out of memory. */
static int add_more(hb_rec_keys *k, const char *key, json_t *v)
{
    if (k->nmore == k->capmore) {
        unsigned cap = k->capmore ? 2u * k->capmore : 4u;
        if (cap > 65535u) return -1;
        hb_rec_more *m = realloc(k->more, cap * sizeof *m);
        if (!m) return -1;
        k->more = m;
        k->capmore = (unsigned short)cap;
    }
    k->more[k->nmore] = (hb_rec_more){key, v};
    return k->nmore++;
}

static int is_key_of(const hb_rec_table *t, const char *key)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->f[i].key, key)) return i;
    return -1;
}

/* The array a of numbers as v (null and non-numbers NaN); HB_OK or HB_ENOMEM. Sets *alike 0 when an
 * element is not a real (an integer with ints) or null: what the writer writes. */
static hb_status dec_nums(json_t *a, hb_rec_nums *out, int ints, int *alike)
{
    memset(out, 0, sizeof *out);
    if (!json_is_array(a)) { *alike = 0; return HB_OK; }
    out->present = 1;
    size_t n = json_array_size(a);
    if (!n) return HB_OK;
    if (!(out->v = malloc(n * sizeof *out->v))) return HB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(a, i);
        out->v[i] = json_is_number(x) ? json_number_value(x) : (double)NAN;
        if (!(ints ? json_is_integer(x) : json_is_real(x)) && !json_is_null(x)) *alike = 0;
    }
    out->n = n;
    return HB_OK;
}

/* The array a of strings (borrowed from a) as out; HB_OK or HB_ENOMEM. *alike 0 unless every element
 * is a string (another element reads NULL). */
static hb_status dec_strs(json_t *a, hb_rec_strs *out, int *alike)
{
    memset(out, 0, sizeof *out);
    if (!json_is_array(a)) { *alike = 0; return HB_OK; }
    out->present = 1;
    size_t n = json_array_size(a);
    if (!n) return HB_OK;
    if (!(out->v = malloc(n * sizeof *out->v))) return HB_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        out->v[i] = json_string_value(json_array_get(a, i));
        if (!out->v[i]) *alike = 0;
    }
    out->n = n;
    return HB_OK;
}

/* The shape object o (record.h hb_rec_shape); *alike 0 unless every member is a known field and an integer. */
static void dec_shape(json_t *o, hb_rec_shape *s, int *alike)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o)) { *alike = 0; return; }
    s->present = 1;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        int i = 0;
        while (i < hb_shape_nfields && strcmp(hb_shape_fields[i].name, k)) i++;
        if (i == hb_shape_nfields || !json_is_integer(v) || s->norder == HB_REC_SHAPE_MAXF) *alike = 0;
        if (i == hb_shape_nfields || !json_is_number(v)) continue; /* a field this hybench does not know */
        *(int64_t *)((char *)&s->v + hb_shape_fields[i].offset) = (int64_t)json_number_value(v);
        *(int64_t *)((char *)&s->has + hb_shape_fields[i].offset) = 1;
        if (s->norder < HB_REC_SHAPE_MAXF) s->order[s->norder++] = (signed char)i;
    }
}

/* Member f of base read from v; *alike 0 when the writer would not write v back alike. */
static hb_status dec_value(const hb_rec_field *f, void *base, json_t *v, int *alike)
{
    switch (f->kind) {
    case HB_RK_STR:
        *AT(base, f->off, const char *) = json_string_value(v);
        *alike = json_is_string(v) || json_is_null(v);
        return HB_OK;
    case HB_RK_REAL: case HB_RK_REAL_INF: case HB_RK_INT: case HB_RK_COUNT:
        *AT(base, f->off, double) = json_is_number(v) ? json_number_value(v) : (double)NAN;
        *alike = (json_is_real(v) && f->kind != HB_RK_INT) || json_is_null(v) ||
                 (json_is_integer(v) && llabs((long long)json_integer_value(v)) <= (1LL << 53)) ||
                 (f->kind == HB_RK_REAL_INF && json_is_string(v) && !strcmp(json_string_value(v), "inf"));
        return HB_OK;
    case HB_RK_I64:
        *AT(base, f->off, long long) = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
        *alike = json_is_integer(v);
        return HB_OK;
    case HB_RK_BOOL:
        *AT(base, f->off, int) = json_is_boolean(v) ? json_is_true(v) : -1;
        *alike = json_is_boolean(v);
        return HB_OK;
    case HB_RK_NUMS: case HB_RK_INTS: return dec_nums(v, AT(base, f->off, hb_rec_nums), f->kind == HB_RK_INTS, alike);
    case HB_RK_STRS: return dec_strs(v, AT(base, f->off, hb_rec_strs), alike);
    case HB_RK_SHAPE: dec_shape(v, AT(base, f->off, hb_rec_shape), alike); return HB_OK;
    case HB_RK_JSON: *AT(base, f->off, json_t *) = v; return HB_OK;
    case HB_RK_OBJ:
        *alike = json_is_object(v);
        return hb_rec_decode(f->sub, AT(base, f->off, char), v);
    case HB_RK_GROUP:
        *alike = json_is_object(v);
        return hb_rec_decode(f->sub, base, v);
    case HB_RK_ARR: {
        size_t n = json_array_size(v);
        *alike = json_is_array(v);
        if (!n) return HB_OK;
        char *a = calloc(n, f->sub->size);
        if (!a) return HB_ENOMEM;
        *AT(base, f->off, char *) = a;
        *AT(base, f->aux, size_t) = n;
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_array_get(v, i);
            if (!json_is_object(x)) *alike = 0;
            if (hb_rec_decode(f->sub, a + i * f->sub->size, x)) return HB_ENOMEM;
        }
        return HB_OK;
    }
    }
    return HB_OK;
}

hb_status hb_rec_decode(const hb_rec_table *t, void *base, json_t *o)
{
    hb_rec_clear(t, base);
    if (!json_is_object(o)) return HB_OK;
    hb_rec_keys *k = KEYS(t, base);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        int i = is_key_of(t, key), alike = 1, m = -1;
        if (i >= 0 && dec_value(&t->f[i], base, v, &alike)) goto oom;
        if ((i < 0 || !alike) && (m = add_more(k, key, v)) < 0) goto oom;
        if (add_entry(k, i, FORM(v), m)) goto oom;
    }
    return HB_OK;
oom:
    hb_rec_release(t, base);
    return HB_ENOMEM;
}

/* A number of kind `kind` read in JSON form `form` (0: set by hb_rec_put) as JSON. */
static json_t *enc_number(hb_rec_kind kind, unsigned char form, double x)
{
    int fin = isfinite(x);
    if (form == JSON_NULL + 1 && isnan(x)) return json_null();
    if (form == JSON_INTEGER + 1 && fin && x == floor(x) && fabs(x) <= 9007199254740992.0) return json_integer((json_int_t)x);
    if (form == JSON_REAL + 1 && fin) return json_real(x);
    if (form == JSON_STRING + 1 && !fin) return json_string("inf");
    switch (kind) {
    case HB_RK_REAL_INF: return fin ? json_real(x) : json_string("inf");
    case HB_RK_INT: return fin ? json_integer((json_int_t)x) : json_null();
    case HB_RK_COUNT: return hb_json_count(x);
    default: return hb_json_num(x);
    }
}

static json_t *enc_value(const hb_rec_field *f, unsigned char form, const void *base)
{
    switch (f->kind) {
    case HB_RK_STR: {
        const char *s = *CAT(base, f->off, const char *);
        return s ? json_string(s) : json_null();
    }
    case HB_RK_REAL: case HB_RK_REAL_INF: case HB_RK_INT: case HB_RK_COUNT:
        return enc_number(f->kind, form, *CAT(base, f->off, double));
    case HB_RK_I64: return json_integer((json_int_t)*CAT(base, f->off, long long));
    case HB_RK_BOOL: return json_boolean(*CAT(base, f->off, int) > 0);
    case HB_RK_NUMS: case HB_RK_INTS: {
        const hb_rec_nums *a = CAT(base, f->off, hb_rec_nums);
        json_t *j = json_array();
        for (size_t i = 0; j && i < a->n; i++) {
            double x = a->v[i];
            json_t *e = f->kind == HB_RK_NUMS ? hb_json_num(x) : isfinite(x) ? json_integer((json_int_t)x) : json_null();
            if (json_array_append_new(j, e)) { json_decref(j); return NULL; }
        }
        return j;
    }
    case HB_RK_STRS: {
        const hb_rec_strs *a = CAT(base, f->off, hb_rec_strs);
        json_t *j = json_array();
        for (size_t i = 0; j && i < a->n; i++)
            if (json_array_append_new(j, a->v[i] ? json_string(a->v[i]) : json_null())) { json_decref(j); return NULL; }
        return j;
    }
    case HB_RK_SHAPE: return hb_rec_shape_json(CAT(base, f->off, hb_rec_shape));
    case HB_RK_JSON: {
        json_t *j = *(json_t *const *)((const char *)base + f->off);
        return j ? json_incref(j) : json_null();
    }
    case HB_RK_OBJ: return hb_rec_encode(f->sub, CAT(base, f->off, char));
    case HB_RK_GROUP: return hb_rec_encode(f->sub, base);
    case HB_RK_ARR: {
        const char *a = *CAT(base, f->off, const char *);
        size_t n = *CAT(base, f->aux, size_t);
        json_t *j = json_array();
        for (size_t i = 0; j && i < n; i++)
            if (json_array_append_new(j, hb_rec_encode(f->sub, a + i * f->sub->size))) { json_decref(j); return NULL; }
        return j;
    }
    }
    return NULL;
}

json_t *hb_rec_encode(const hb_rec_table *t, const void *base)
{
    const hb_rec_keys *k = CAT(base, t->keys, hb_rec_keys);
    json_t *o = json_object();
    for (unsigned i = 0; o && i < k->n; i++) {
        const hb_rec_entry *e = &k->e[i];
        const char *key = e->more >= 0 ? k->more[e->more].key : t->f[e->field].key;
        json_t *v = e->more >= 0 ? json_incref(k->more[e->more].value) : enc_value(&t->f[e->field], e->form, base);
        /* a value JSON cannot hold (a string that is not UTF-8) leaves its key out, as jansson does */
        if (v && json_object_set_new(o, key, v)) { json_decref(o); return NULL; }
    }
    return o;
}

/* The row of t at member offset off (a GROUP's row sits at its keys), else -1. */
static int row_at(const hb_rec_table *t, size_t off)
{
    for (int i = 0; i < t->n; i++)
        if (t->f[i].off == off) return i;
    return -1;
}

/* The entry of row i in k, or NULL. */
static hb_rec_entry *entry_of(const hb_rec_keys *k, int i)
{
    for (unsigned j = 0; j < k->n; j++)
        if (k->e[j].field == i) return &k->e[j];
    return NULL;
}

static hb_status mark(const hb_rec_table *t, void *base, int i)
{
    hb_rec_keys *k = KEYS(t, base);
    hb_rec_entry *e = entry_of(k, i);
    if (!e) return add_entry(k, i, 0, -1);
    e->form = 0;
    e->more = -1;
    return HB_OK;
}

static int holds(const hb_rec_table *t, size_t off)
{
    if (row_at(t, off) >= 0) return 1;
    for (int i = 0; i < t->n; i++)
        if (t->f[i].kind == HB_RK_GROUP && holds(t->f[i].sub, off)) return 1;
    return 0;
}

hb_status hb_rec_put(const hb_rec_table *t, void *base, size_t off)
{
    int i = row_at(t, off);
    if (i >= 0) return mark(t, base, i);
    for (i = 0; i < t->n; i++)
        if (t->f[i].kind == HB_RK_GROUP && holds(t->f[i].sub, off)) {
            hb_rec_entry *g = entry_of(KEYS(t, base), i);
            hb_status st = g && g->more < 0 ? HB_OK : mark(t, base, i);
            return st ? st : hb_rec_put(t->f[i].sub, base, off);
        }
    return HB_EINVAL;
}

const hb_rec_entry *hb_rec_entry_at(const hb_rec_table *t, const void *base, size_t off)
{
    int i = row_at(t, off);
    if (i >= 0) return entry_of(CAT(base, t->keys, hb_rec_keys), i);
    for (i = 0; i < t->n; i++)
        if (t->f[i].kind == HB_RK_GROUP && holds(t->f[i].sub, off))
            return entry_of(CAT(base, t->keys, hb_rec_keys), i) ? hb_rec_entry_at(t->f[i].sub, base, off) : NULL;
    return NULL;
}

hb_status hb_rec_remove(const hb_rec_table *t, void *base, size_t off)
{
    int i = row_at(t, off);
    if (i < 0) {
        for (int g = 0; g < t->n; g++)
            if (t->f[g].kind == HB_RK_GROUP && holds(t->f[g].sub, off)) return hb_rec_remove(t->f[g].sub, base, off);
        return HB_EINVAL;
    }
    hb_rec_keys *k = KEYS(t, base);
    hb_rec_entry *e = entry_of(k, i);
    if (!e) return HB_OK;
    memmove(e, e + 1, (size_t)(k->e + k->n - (e + 1)) * sizeof *e);
    k->n--;
    const hb_rec_field *f = &t->f[i];
    switch (f->kind) { /* the member absent again (an array or object member's own allocations stay until _free) */
    case HB_RK_STR: *AT(base, f->off, const char *) = NULL; break;
    case HB_RK_REAL: case HB_RK_REAL_INF: case HB_RK_INT: case HB_RK_COUNT: *AT(base, f->off, double) = NAN; break;
    case HB_RK_I64: *AT(base, f->off, long long) = -1; break;
    case HB_RK_BOOL: *AT(base, f->off, int) = -1; break;
    case HB_RK_JSON: *AT(base, f->off, json_t *) = NULL; break;
    default: break;
    }
    return HB_OK;
}
