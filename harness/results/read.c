/* read.c - a results file loaded into the one in-memory model, an hb_run (results/results.h), and
 * the accessors every reader of it uses. */
#include "results/results.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hb_run_free(hb_run *r)
{
    if (!r) return;
    free(r->path);
    json_decref(r->meta);
    json_decref(r->backends);
    json_decref(r->cases);
    json_decref(r->end);
    memset(r, 0, sizeof *r);
}

hb_status hb_run_load(const char *path, hb_run *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "%s: cannot open", path); return HB_EDEVICE; }
    out->path = strdup(path);
    out->backends = json_array();
    out->cases = json_array();
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    hb_status st = HB_OK;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        int last = (line[len - 1] != '\n');
        if (len <= 1 && !last) continue;
        json_error_t je;
        json_t *rec = json_loadb(line, (size_t)len, 0, &je);
        if (!rec || !json_is_object(rec)) {
            json_decref(rec);
            if (last) { fprintf(stderr, "hybench: %s:%d: truncated last record skipped\n", path, lineno); break; }
            snprintf(err, errlen, "%s:%d: not a JSON object: %s", path, lineno, je.text);
            st = HB_EINVAL;
            break;
        }
        const char *type = json_string_value(json_object_get(rec, "type"));
        if (!type) { json_decref(rec); snprintf(err, errlen, "%s:%d: record without \"type\"", path, lineno); st = HB_EINVAL; break; }
        if (!strcmp(type, "meta")) { json_decref(out->meta); out->meta = rec; }
        else if (!strcmp(type, "backend")) json_array_append_new(out->backends, rec);
        else if (!strcmp(type, "case")) json_array_append_new(out->cases, rec);
        else if (!strcmp(type, "end")) { json_decref(out->end); out->end = rec; }
        else json_decref(rec); /* unknown record types are ignored (forward compatibility) */
    }
    free(line);
    fclose(f);
    if (st == HB_OK && !out->meta && json_array_size(out->cases) == 0) {
        snprintf(err, errlen, "%s: no hybench records", path);
        st = HB_EINVAL;
    }
    if (st != HB_OK) hb_run_free(out);
    return st;
}

const char *hb_rec_str(json_t *rec, const char *k)
{
    return json_string_value(json_object_get(rec, k));
}

const char *hb_run_meta(const hb_run *r, const char *k)
{
    return r && r->meta ? hb_rec_str(r->meta, k) : NULL;
}

const char *hb_run_cpu_model(const hb_run *r)
{
    return r && r->meta ? hb_rec_str(json_object_get(r->meta, "cpu"), "model") : NULL;
}

double hb_case_phase(json_t *c, const char *phase, const char *stat)
{
    json_t *v = json_object_get(json_object_get(json_object_get(c, "phases"), phase), stat);
    return json_is_number(v) ? json_number_value(v) : (double)NAN;
}

double hb_run_ceiling(const hb_run *r, const char *backend, const char *name)
{
    size_t i, j;
    json_t *b, *c;
    json_array_foreach(r->backends, i, b) {
        const char *bn = json_string_value(json_object_get(b, "backend"));
        if (!bn || strcmp(bn, backend)) continue;
        json_array_foreach(json_object_get(b, "ceilings"), j, c) {
            const char *cn = json_string_value(json_object_get(c, "name"));
            if (cn && !strcmp(cn, name)) return json_number_value(json_object_get(c, "value"));
        }
    }
    return NAN;
}
