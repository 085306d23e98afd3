/*
 * templates.h - where the report's and the history site's templates are (templates/ of the source tree:
 * style.gp and style.css for `hybench report`, site.js and site.css for `hybench publish`). Used by
 * cmd_report.c and cmd_publish.c only. docs/report.md ("--templates"), docs/history.md.
 */
#ifndef HB_CLI_TEMPLATES_H
#define HB_CLI_TEMPLATES_H
#include <stddef.h>

/* The template folder holding the file `marker` ("style.gp", "site.js") into out[0..len): opt when given
 * (a --templates option; it must hold marker), else $HB_REPORT_TEMPLATES where it holds marker, else
 * templates/ of the source tree the running executable was built in (<exe dir>/../templates for build/,
 * <exe dir>/../../templates for build/tests/ and build/asan/), else ./templates. Returns 0, or -1 when
 * none holds marker (out then names ./templates, or opt, for the caller's message). */
int hb_find_templates(const char *opt, const char *marker, char *out, size_t len);
#endif
