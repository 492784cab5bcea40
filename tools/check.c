/* check.c: `hgc check`: the specs as one TAP stream for prove. */
#include "tools/tools.h"

#include <math.h>

/* A file that failed to load: one failing test, its diagnostics as comments. */
static void tap_file_error(int n, const struct hgc_tool_file *f)
{
	printf("not ok %d - %s: cannot load\n", n, f->path);
	hgc_tool_print_diag(stdout, "# ", hgc_diag_text(&f->diag));
}

/* One spec as one test line, with why it failed as comments. */
static void tap_spec(int n, const struct hgc_tool_file *f, const struct hgc_spec *sp,
		     const struct hgc_tool_result *r)
{
	printf("%sok %d - %s: %s", r->ok ? "" : "not ", n, f->path, sp->name);
	if (!r->ok && !isnan(r->max_err))
		printf(" # max_err %.3g", r->max_err);
	printf("\n");
	if (!r->ok)
		hgc_tool_print_diag(stdout, "# ", hgc_diag_text(&r->why));
}

/* Run everything in TAP order; returns how many tests failed. */
static int check_all(const struct hgc_tool_opts *o, const struct hgc_tool_session *s,
		     const struct hgc_config *cfg)
{
	int n = 0, nbad = 0;

	printf("1..%d\n", s->nspecs + s->nfailed);
	for (size_t i = 0; i < s->files.len; i++) {
		const struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);

		if (f->failed) {
			tap_file_error(++n, f);
			nbad++;
		}
		for (size_t j = 0; !f->failed && j < f->prog.specs.len; j++) {
			const struct hgc_spec *sp = HGC_PROGRAM_SPEC(&f->prog, j);
			struct hgc_tool_result r;

			hgc_tool_exec_spec(o, sp, cfg, &r);
			tap_spec(++n, f, sp, &r);
			nbad += !r.ok;
			hgc_tool_result_release(&r);
			fflush(stdout);
		}
	}
	return nbad;
}

/* `hgc check PATH...`. */
int hgc_tool_check(int argc, char **argv)
{
	struct hgc_tool_opts o;
	struct hgc_tool_session s;
	const struct hgc_config *cfg;
	int rc;

	if ((rc = hgc_tool_args_parse(&o, "check", argc, argv)) || o.help) {
		if (!rc)
			hgc_tool_args_help(stdout, "check");
		hgc_tool_opts_release(&o);
		return rc;
	}
	hgc_tool_session_init(&s);
	hgc_tool_session_load(&s, &o.paths);
	rc = hgc_tool_exec_setup(&o, &s, &cfg);
	if (rc)
		printf("Bail out! hgc check: cannot run (see the error above)\n");
	else
		rc = check_all(&o, &s, cfg) ? HGC_EXIT_FAIL : HGC_EXIT_OK;
	hgc_tool_session_release(&s);
	hgc_tool_opts_release(&o);
	return rc;
}
