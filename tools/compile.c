/* compile.c: `hgc compile`: print the stages of each spec (only the Graph IR today). */
#include "tools/tools.h"

/* The stages of HGC_DUMP_* bits, and whether this build can print them yet. */
static const struct stage {
	unsigned bit;
	const char *name;
	bool available;
} stages[] = {
	{HGC_DUMP_GRAPH, "graph", true},
	{HGC_DUMP_FUSED, "fused", false},
	{HGC_DUMP_TIR, "tir", false},
	{HGC_DUMP_LLVM, "llvm", false},
};

/* Report the first requested stage this build cannot print; 0 if none. */
static int check_stages(unsigned dumps, const char *where)
{
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
		if ((dumps & stages[i].bit) && !stages[i].available) {
			fprintf(stderr, "hgc: error: %s: the '%s' dump is not available yet (only "
				"'graph' is)\n", where, stages[i].name);
			return -1;
		}
	return 0;
}

/* Print what dumps asks for of one spec; -1 when a stage is missing. */
static int compile_spec(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
			const struct hgc_config *cfg)
{
	const struct hgc_config *c = cfg ? cfg : sp->config;
	unsigned dumps = o->dumps ? o->dumps : c && c->dumps ? c->dumps : HGC_DUMP_GRAPH;

	printf("# spec %s (%s:%d)%s%s\n", sp->name, sp->file ? sp->file : "?", sp->loc.line,
	       c ? ", config " : "", c ? c->name : "");
	if (sp->expect_error) {
		printf("# negative spec: building failed with: %s\n",
		       sp->build_error ? sp->build_error : "(nothing: it built)");
		return 0;
	}
	if (check_stages(dumps, sp->name) < 0)
		return -1;
	if (sp->graph)
		hgc_graph_print(stdout, sp->graph);
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

/* `hgc compile FILE... [--dump=LIST] [--config NAME]`. */
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
	if (check_stages(o.dumps, "--dump") < 0) {
		hgc_tool_opts_release(&o);
		return HGC_EXIT_FAIL;
	}
	hgc_tool_session_init(&s);
	hgc_tool_session_load(&s, &o.paths);
	rc = hgc_tool_exec_setup(&o, &s, &cfg);
	if (!rc)
		rc = compile_all(&o, &s, cfg) ? HGC_EXIT_FAIL : HGC_EXIT_OK;
	hgc_tool_session_release(&s);
	hgc_tool_opts_release(&o);
	return rc;
}
