/*
 * tmpl_check.h: loading template files and checking malformed ones against
 * their expected diagnostics, for the template language's tests (t/100 over
 * t/tmpl/, t/150 over t/region/).  A case DIR/NAME.tmpl must fail to load and
 * print exactly DIR/NAME.err; HGC_UPDATE_GOLDEN=1 rewrites the .err files.
 */
#ifndef HGC_T_TMPL_CHECK_H
#define HGC_T_TMPL_CHECK_H

#include "dsl/template.h"
#include "t/tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Load a template file; the number of checked templates, -1 on errors (d). */
static int tc_load(const char *path, struct hgc_diag *d)
{
	struct hgc_program p;
	struct hgc_vec v;
	size_t i;
	int rc;

	hgc_program_init(&p);
	hgc_vec_init(&v, sizeof(struct hgc_tmpl_sem *));
	rc = hgc_dsl_load_templates(&p, path, &v, d);
	if (rc == 0)
		rc = (int)v.len;
	for (i = 0; i < v.len; i++)
		hgc_tsem_free(HGC_VEC_AT(&v, struct hgc_tmpl_sem *, i));
	hgc_vec_release(&v);
	hgc_program_release(&p);
	return rc;
}

/* The malformed template dir/name (NAME.tmpl) against dir/NAME.err. */
static void tc_bad_case(const char *dir, const char *name)
{
	char path[512], err[512];
	struct hgc_diag d, scratch;
	char *want;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(err, sizeof(err), "%s/%.*s.err", dir, (int)strlen(name) - 5, name);
	hgc_diag_init(&d);
	rc = tc_load(path, &d);
	if (getenv("HGC_UPDATE_GOLDEN") && (f = fopen(err, "w"))) {
		fputs(hgc_diag_text(&d), f);
		fclose(f);
	}
	hgc_diag_init(&scratch);
	want = hgc_read_file(err, NULL, &scratch);
	hgc_diag_release(&scratch);
	ok(rc == -1 && d.nerr > 0, "%s: fails", name);
	is_str(hgc_diag_text(&d), want ? want : "(no .err file)", "%s: diagnostics", name);
	free(want);
	hgc_diag_release(&d);
}

#endif
