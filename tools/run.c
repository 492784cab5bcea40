/* run.c: `hgc run`: run specs, one aligned line per spec, exit 1 on any failure. */
#include "tools/tools.h"

#include <math.h>
#include <string.h>

/* Print the diagnostics of every file that failed to load, to stderr. */
static void print_load_errors(const struct hgc_tool_session *s)
{
	for (size_t i = 0; i < s->files.len; i++) {
		const struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);

		if (f->failed)
			fputs(hgc_diag_text(&f->diag), stderr);
	}
}

/* One line per spec: "name  ok|FAIL  max_err=...  time=...ms", then why it failed. */
static void print_line(const struct hgc_spec *sp, const struct hgc_tool_result *r, int width)
{
	char err[32], time[32];

	if (isnan(r->max_err))
		snprintf(err, sizeof(err), "-");
	else
		snprintf(err, sizeof(err), "%.2e", r->max_err);
	snprintf(time, sizeof(time), "%.3fms", r->t.run * 1e3);
	printf("%-*s  %-4s  max_err=%-9s  time=%s%s\n", width, sp->name, r->ok ? "ok" : "FAIL",
	       err, time, r->negative ? "  (expected error)" : "");
	if (!r->ok)
		hgc_tool_print_diag(stdout, "    ", hgc_diag_text(&r->why));
}

/* Run every spec of the session; returns how many failed. */
static int run_all(const struct hgc_tool_opts *o, const struct hgc_tool_session *s,
		   const struct hgc_config *cfg)
{
	int nbad = 0;

	for (size_t i = 0; i < s->files.len; i++) {
		const struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);

		for (size_t j = 0; !f->failed && j < f->prog.specs.len; j++) {
			const struct hgc_spec *sp = HGC_PROGRAM_SPEC(&f->prog, j);
			struct hgc_tool_result r;

			hgc_tool_exec_spec(o, sp, cfg, &r);
			print_line(sp, &r, s->name_width);
			if (o->explain)
				hgc_tool_explain_result(stdout, sp, &r);
			nbad += !r.ok;
			hgc_tool_result_release(&r);
			fflush(stdout);
		}
	}
	return nbad;
}

/* `hgc run FILE|DIR...`. */
int hgc_tool_run(int argc, char **argv)
{
	struct hgc_tool_opts o;
	struct hgc_tool_session s;
	const struct hgc_config *cfg;
	int rc, nbad;
	double t0 = hgc_now();

	if ((rc = hgc_tool_args_parse(&o, "run", argc, argv)) || o.help) {
		if (!rc)
			hgc_tool_args_help(stdout, "run");
		hgc_tool_opts_release(&o);
		return rc;
	}
	hgc_tool_session_init(&s);
	hgc_tool_session_load(&s, &o.paths);
	print_load_errors(&s);
	rc = hgc_tool_exec_setup(&o, &s, &cfg);
	if (!rc) {
		nbad = run_all(&o, &s, cfg);
		printf("%d spec%s: %d ok, %d failed", s.nspecs, s.nspecs == 1 ? "" : "s",
		       s.nspecs - nbad, nbad);
		if (s.nfailed)
			printf("; %d file%s with errors", s.nfailed, s.nfailed == 1 ? "" : "s");
		printf(" (%.1f s)\n", hgc_now() - t0);
		rc = nbad || s.nfailed ? HGC_EXIT_FAIL : HGC_EXIT_OK;
	}
	hgc_tool_session_release(&s);
	hgc_tool_opts_release(&o);
	return rc;
}
