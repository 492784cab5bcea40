/*
 * compile.c: `hgc compile`: print the stages of each spec (the Graph IR, the
 * graph after the passes with its fusion plan, the Tensor IR the driver
 * lowers it to, the optimized LLVM IR) and write the
 * compiled graph as C source or as an object file with its C header.
 */
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

/* The C source of m into -o PATH, or stdout. */
static int emit_c(const struct hgc_tool_opts *o, const struct hgc_tir_module *m,
		  struct hgc_diag *d)
{
	FILE *f = o->output ? fopen(o->output, "w") : stdout;
	int rc;

	if (!f)
		return hgc_error(d, NULL, "cannot write %s", o->output);
	rc = hgc_codegen_c_emit(f, m, d);
	if (f != stdout && fclose(f) && !rc)
		rc = hgc_error(d, NULL, "cannot write %s", o->output);
	return rc;
}

/* An object file (-o PATH, else SPEC.o) and its header beside it (.o -> .h). */
static int emit_obj(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
		    const struct hgc_tir_module *m, struct hgc_diag *d)
{
	size_t n = o->output ? strlen(o->output) : strlen(sp->name) + 2;
	char *path = hgc_xmalloc(n + 1), *hdr = hgc_xmalloc(n + 3);
	int rc;

	snprintf(path, n + 1, "%s%s", o->output ? o->output : sp->name, o->output ? "" : ".o");
	if (n > 2 && !strcmp(path + n - 2, ".o"))
		snprintf(hdr, n + 3, "%.*s.h", (int)(n - 2), path);
	else
		snprintf(hdr, n + 3, "%s.h", path);
	rc = hgc_codegen_llvm_emit_file(m, NULL, path, false, d);
	if (!rc)
		rc = hgc_codegen_llvm_emit_header(m, NULL, hdr, d);
	free(path);
	free(hdr);
	return rc;
}

/* The later stages of one spec's graph: lower it once, then dump and emit. */
static int later_stages(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
			const struct hgc_config *c, unsigned dumps, struct hgc_diag *d)
{
	struct hgc_driver_opts dopts;
	struct hgc_tmpl_rule *rules;
	struct hgc_tir_module *m;
	char *plan;
	int rc = 0;

	hgc_tool_driver_opts(c, HGC_DRIVER_JIT, &dopts, &rules);
	dopts.threads = o->threads > 0 ? o->threads : c ? c->threads : 0;
	if ((dumps & HGC_DUMP_FUSED) && hgc_driver_dump_fused(stdout, sp->graph, &dopts, d) < 0) {
		free(rules);
		return -1;
	}
	if (!(dumps & (HGC_DUMP_TIR | HGC_DUMP_LLVM)) && !o->emits) {
		free(rules);
		return 0;
	}
	m = hgc_driver_lower(sp->graph, &dopts, &plan, d);
	free(rules);
	if (!m)
		return -1;
	if (dumps & HGC_DUMP_TIR) {
		hgc_tool_print_diag(stdout, "# ", plan);
		hgc_tir_print_module(stdout, m);
	}
	free(plan);
	if (dumps & HGC_DUMP_LLVM)
		rc = hgc_codegen_llvm_dump(stdout, m, NULL, d);
	if (!rc && (o->emits & HGC_EMIT_C))
		rc = emit_c(o, m, d);
	if (!rc && (o->emits & HGC_EMIT_OBJ))
		rc = emit_obj(o, sp, m, d);
	hgc_tir_module_free(m);
	return rc;
}

/* Print what dumps asks for of one spec and write what --emit asks for; -1 on an
   error (printed). */
static int compile_spec(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
			const struct hgc_config *cfg)
{
	const struct hgc_config *c = cfg ? cfg : sp->config;
	unsigned dumps = o->dumps ? o->dumps : c && c->dumps ? c->dumps
			 : o->emits ? 0 : HGC_DUMP_GRAPH;
	struct hgc_diag d;
	int rc = 0;

	if (dumps)
		printf("# spec %s (%s:%d)%s%s\n", sp->name, sp->file ? sp->file : "?",
		       sp->loc.line, c ? ", config " : "", c ? c->name : "");
	if (sp->expect_error) {
		if (dumps)
			printf("# negative spec: building failed with: %s\n",
			       sp->build_error ? sp->build_error : "(nothing: it built)");
		return 0;
	}
	if (sp->graph && (dumps & HGC_DUMP_GRAPH))
		hgc_graph_print(stdout, sp->graph);
	if (!sp->graph || !((dumps & (HGC_DUMP_FUSED | HGC_DUMP_TIR | HGC_DUMP_LLVM)) || o->emits))
		return 0;
	hgc_diag_init(&d);
	if ((rc = later_stages(o, sp, c, dumps, &d)) < 0) {
		fflush(stdout);
		fprintf(stderr, "hgc: spec %s:\n", sp->name);
		fputs(hgc_diag_text(&d), stderr);
	}
	hgc_diag_release(&d);
	return rc;
}

/* Specs with a graph over every loaded file. */
static int count_graphs(const struct hgc_tool_session *s)
{
	int n = 0;

	for (size_t i = 0; i < s->files.len; i++) {
		const struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);

		for (size_t j = 0; !f->failed && j < f->prog.specs.len; j++)
			n += HGC_PROGRAM_SPEC(&f->prog, j)->graph != NULL;
	}
	return n;
}

/* -o names one file: one kind to emit, from one spec. */
static int check_output(const struct hgc_tool_opts *o, const struct hgc_tool_session *s)
{
	int n;

	if (!o->output)
		return 0;
	if (!o->emits || o->emits == (HGC_EMIT_C | HGC_EMIT_OBJ)) {
		fprintf(stderr, "hgc: error: -o PATH goes with one of --emit=c and --emit=obj\n");
		return -1;
	}
	if ((n = count_graphs(s)) != 1) {
		fprintf(stderr, "hgc: error: -o PATH writes one compiled graph, but the files "
			"hold %d specs with a graph\n", n);
		return -1;
	}
	return 0;
}

/* Compile every spec of every loaded file; returns how many failed. */
static int compile_all(const struct hgc_tool_opts *o, const struct hgc_tool_session *s,
		       const struct hgc_config *cfg)
{
	int nbad = 0;

	for (size_t i = 0; i < s->files.len; i++) {
		const struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);

		if (f->failed) {
			fputs(hgc_diag_text(&f->diag), stderr);
			nbad++;
		}
		for (size_t j = 0; !f->failed && j < f->prog.specs.len; j++)
			nbad += compile_spec(o, HGC_PROGRAM_SPEC(&f->prog, j), cfg) < 0;
	}
	return nbad;
}

/* `hgc compile FILE... [--dump=LIST] [--emit=LIST [-o PATH]] [--config NAME]`. */
int hgc_tool_compile(int argc, char **argv)
{
	struct hgc_tool_opts o;
	struct hgc_tool_session s;
	const struct hgc_config *cfg;
	int rc;

	if ((rc = hgc_tool_args_parse(&o, "compile", argc, argv)) || o.help) {
		if (!rc)
			hgc_tool_args_help(stdout, "compile");
		hgc_tool_opts_release(&o);
		return rc;
	}
	hgc_tool_session_init(&s);
	hgc_tool_session_load(&s, &o.paths);
	rc = hgc_tool_exec_setup(&o, &s, &cfg);
	if (!rc && check_output(&o, &s) < 0)
		rc = HGC_EXIT_FAIL;
	if (!rc)
		rc = compile_all(&o, &s, cfg) ? HGC_EXIT_FAIL : HGC_EXIT_OK;
	hgc_tool_session_release(&s);
	hgc_tool_opts_release(&o);
	return rc;
}
