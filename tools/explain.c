/*
 * explain.c: `hgc run --explain`: what was done for a spec and why: the
 * graph, the config, the backend and its plan, the timing split and the
 * speed of the compute-heavy ops; and `hgc explain FILE`: the parameter
 * search of each tunable op (heuristics/), its choice, cost and runners-up,
 * and the buffer plan of the TIR passes.
 */
#include "tools/tools.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"

/* Attribute name of op: as set on the op, else its schema default, else NULL. */
static const struct hgc_attr *find_attr(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr_spec *s = hgc_op_table[op->kind].attrs;

	for (int i = 0; i < op->nattr; i++)
		if (op->attrs[i].name && !strcmp(op->attrs[i].name, name))
			return &op->attrs[i];
	for (; s && s->name; s++)
		if (!strcmp(s->name, name) && !s->required)
			return &s->def;
	return NULL;
}

/* A boolean attribute (false when absent). */
static bool attr_bool(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr *a = find_attr(op, name);

	return a && a->v.i;
}

/* A string attribute, or dflt when absent. */
static const char *attr_str(const struct hgc_op *op, const char *name, const char *dflt)
{
	const struct hgc_attr *a = find_attr(op, name);

	return a && a->type == HGC_ATTR_STRING && a->v.s ? a->v.s : dflt;
}

/* Floating-point operations of a MatMul: 2 * |C| * K. */
static double matmul_flops(const struct hgc_op *op)
{
	const struct hgc_tensor *a = op->in[0];
	int64_t k;

	if (a->ndims == 0)
		return 0;
	k = a->ndims >= 2 && attr_bool(op, "transpose_a") ? a->dims[a->ndims - 2]
							     : a->dims[a->ndims - 1];
	return 2.0 * (double)hgc_tensor_nelems(op->out[0]) * (double)k;
}

/* Floating-point operations of a Convolution: 2 * |dst| * (IC / groups) * |kernel|. */
static double conv_flops(const struct hgc_op *op)
{
	const struct hgc_tensor *w = op->in[1], *y = op->out[0];
	bool xio = !strcmp(attr_str(op, "weights_format", "XIO"), "XIO");
	int64_t oc;

	if (w->ndims < 3 || y->ndims < 3)
		return 0;
	oc = xio ? w->dims[w->ndims - 1] : w->dims[0];
	if (oc <= 0)
		return 0;
	return 2.0 * (double)hgc_tensor_nelems(y) * (double)hgc_tensor_nelems(w) / (double)oc;
}

/* Floating-point operations of the MatMul and Convolution ops of g. */
double hgc_tool_graph_flops(const struct hgc_graph *g)
{
	double flops = 0;

	for (size_t i = 0; i < g->ops.len; i++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, i);

		if (op->kind == HGC_OP_MATMUL)
			flops += matmul_flops(op);
		else if (op->kind == HGC_OP_CONVOLUTION)
			flops += conv_flops(op);
	}
	return flops;
}

/* Print a tensor as "name : f32[2, 3]". */
static void print_tensor(FILE *f, const struct hgc_tensor *t)
{
	if (t->name)
		fprintf(f, "%s : ", t->name);
	else
		fprintf(f, "t%d : ", t->id);
	fprintf(f, "%s[", hgc_dtype_name(t->dtype));
	for (int i = 0; i < t->ndims; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
	fprintf(f, "]");
}

/* Print the value of an attribute as the spec language writes it. */
static void print_attr(FILE *f, const struct hgc_attr *a)
{
	fprintf(f, ", %s = ", a->name);
	switch (a->type) {
	case HGC_ATTR_BOOL: fprintf(f, "%s", a->v.i ? "true" : "false"); break;
	case HGC_ATTR_INT: fprintf(f, "%lld", (long long)a->v.i); break;
	case HGC_ATTR_FLOAT: fprintf(f, "%g", a->v.f); break;
	case HGC_ATTR_STRING: fprintf(f, "\"%s\"", a->v.s ? a->v.s : ""); break;
	case HGC_ATTR_INTS:
	case HGC_ATTR_FLOATS:
		fprintf(f, "[");
		for (int i = 0; i < a->n; i++)
			if (a->type == HGC_ATTR_INTS)
				fprintf(f, "%s%lld", i ? ", " : "", (long long)a->v.ints[i]);
			else
				fprintf(f, "%s%g", i ? ", " : "", a->v.floats[i]);
		fprintf(f, "]");
		break;
	case HGC_ATTR_NONE: fprintf(f, "?"); break;
	}
}

/* Print one op: "  name : f32[..] = Kind(in, ..., attr = v)   (1.2 MFLOP)". */
static void print_op(FILE *f, const struct hgc_op *op)
{
	double flops = op->kind == HGC_OP_MATMUL ? matmul_flops(op)
		     : op->kind == HGC_OP_CONVOLUTION ? conv_flops(op) : 0;

	fprintf(f, "    ");
	print_tensor(f, op->out[0]);
	fprintf(f, " = %s(", hgc_op_table[op->kind].name);
	for (int i = 0; i < op->nin; i++) {
		if (op->in[i]->name)
			fprintf(f, "%s%s", i ? ", " : "", op->in[i]->name);
		else
			fprintf(f, "%st%d", i ? ", " : "", op->in[i]->id);
	}
	for (int i = 0; i < op->nattr; i++)
		print_attr(f, &op->attrs[i]);
	fprintf(f, ")");
	if (flops > 0)
		fprintf(f, "   # %.3g MFLOP", flops * 1e-6);
	fprintf(f, "\n");
}

/* "3 MatMul, 3 BiasAdd, 3 ReLU": how many ops of each kind, in table order. */
static void print_op_counts(FILE *f, const struct hgc_graph *g)
{
	int count[HGC_OP_COUNT] = {0};
	bool first = true;

	for (size_t i = 0; i < g->ops.len; i++)
		count[HGC_GRAPH_OP(g, i)->kind]++;
	for (int k = 0; k < HGC_OP_COUNT; k++)
		if (count[k]) {
			fprintf(f, "%s%d %s", first ? "" : ", ", count[k], hgc_op_table[k].name);
			first = false;
		}
}

/* The graph: inputs, ops in order, outputs. */
static void print_graph(FILE *f, const struct hgc_graph *g)
{
	int nconst = 0;

	for (size_t i = 0; i < g->inputs.len; i++)
		nconst += HGC_GRAPH_INPUT(g, i)->prop == HGC_PROP_CONSTANT;
	fprintf(f, "  graph: %zu op%s (", g->ops.len, g->ops.len == 1 ? "" : "s");
	print_op_counts(f, g);
	fprintf(f, "), %zu input%s (%d constant), %zu output%s\n", g->inputs.len,
		g->inputs.len == 1 ? "" : "s", nconst, g->outputs.len,
		g->outputs.len == 1 ? "" : "s");
	for (size_t i = 0; i < g->inputs.len; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_INPUT(g, i);

		fprintf(f, "    %s ", t->prop == HGC_PROP_CONSTANT ? "const" : "input");
		print_tensor(f, t);
		fprintf(f, "\n");
	}
	for (size_t i = 0; i < g->ops.len; i++)
		print_op(f, HGC_GRAPH_OP(g, i));
	fprintf(f, "    output ");
	for (size_t i = 0; i < g->outputs.len; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(g, i);

		fprintf(f, "%s%s", i ? ", " : "", t->name ? t->name : "?");
	}
	fprintf(f, "\n");
}

/* The config a spec runs under, and where each setting came from. */
static void print_config(FILE *f, const struct hgc_spec *sp, const struct hgc_tool_result *r)
{
	const struct hgc_config *c = r->config;

	if (!c) {
		fprintf(f, "  config: none (defaults: every core, the best backend built in)\n");
		return;
	}
	fprintf(f, "  config: %s (%s:%d)%s: ", c->name, c->loc.file ? c->loc.file : "?",
		c->loc.line, c == sp->config ? "" : " from --config");
	if (c->threads > 0)
		fprintf(f, "threads %d, ", c->threads);
	else
		fprintf(f, "threads: every core, ");
	fprintf(f, "backend %s\n", c->backend == HGC_BACKEND_DEFAULT ? "default"
		: hgc_tool_backend_of(c->backend)->name);
	for (int i = 0; i < c->nentries; i++)
		fprintf(f, "    %s %s = %s (applied when compiling; the interpreter ignores it)\n",
			c->entries[i].kind, c->entries[i].key, c->entries[i].value);
}

/* Before the run: the spec, its graph, its config, the backend and threads. */
void hgc_tool_explain_graph(FILE *f, const struct hgc_spec *sp,
			    const struct hgc_tool_result *r)
{
	fprintf(f, "spec %s (%s:%d)\n", sp->name, sp->file ? sp->file : "?", sp->loc.line);
	if (sp->graph)
		print_graph(f, sp->graph);
	print_config(f, sp, r);
	fprintf(f, "  backend: %s: %s; %d OpenMP thread%s\n", r->backend->name, r->backend->what,
		r->threads, r->threads == 1 ? "" : "s");
}

/* Milliseconds, for the timing lines. */
static double ms(double s)
{
	return s * 1e3;
}

/* What the check compared: each output with its dtype and tolerances. */
static void print_check(FILE *f, const struct hgc_spec *sp, const struct hgc_tool_result *r)
{
	const struct hgc_graph *g = sp->graph;
	double rtol, atol;

	fprintf(f, "  check: against the reference interpreter%s, max_err %.3g:",
		sp->ngolden ? " and golden values" : "", r->max_err);
	for (size_t i = 0; i < g->outputs.len; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(g, i);

		hgc_tool_tolerance(sp, t->dtype, &rtol, &atol);
		fprintf(f, "%s %s (%s, ", i ? ";" : "", t->name ? t->name : "?",
			hgc_dtype_name(t->dtype));
		if (rtol == 0 && atol == 0)
			fprintf(f, "exact)");
		else
			fprintf(f, "rtol %g, atol %g%s)", rtol, atol, sp->has_tol ? "" : " by default");
	}
	fprintf(f, "\n");
}

/* After the run: the timing split, the speed, what the check compared. */
void hgc_tool_explain_result(FILE *f, const struct hgc_spec *sp,
			     const struct hgc_tool_result *r)
{
	double flops;

	if (r->negative) {
		fprintf(f, "  negative spec: building must fail with \"%s\"; it %s\n",
			sp->expect_error, sp->build_error ? "failed" : "built");
		return;
	}
	fprintf(f, "  timing: build %.3f ms, inputs %.3f ms, run %.3f ms (%s of %d, after "
		   "%d warmup), reference %.3f ms, check %.3f ms\n", ms(r->t.build),
		ms(r->t.inputs), ms(r->t.run), r->t.fastest ? "fastest" : "median", r->t.iters,
		r->t.warmup, ms(r->t.ref),
		ms(r->t.check));
	flops = sp->graph ? hgc_tool_graph_flops(sp->graph) : 0;
	if (flops > 0 && r->t.run > 0)
		fprintf(f, "  speed: %.3g GFLOP of MatMul/Convolution per run: %.2f GFLOP/s\n",
			flops * 1e-9, flops * 1e-9 / r->t.run);
	if (sp->graph)
		print_check(f, sp, r);
	fprintf(f, "\n");
}

/* ---- `hgc explain FILE...`: the parameter search per tunable op ---- */

/* The buffer plan of the TIR passes (core/tir/passes): the spec lowered as the driver
   does it, the plan's lines printed; -1 with d set. */
static int explain_buffers(const struct hgc_spec *sp, struct hgc_driver_opts *o, int threads,
			   struct hgc_diag *d)
{
	struct hgc_tir_module *m;
	char *plan = NULL, *at;

	o->threads = threads;
	if (!(m = hgc_driver_lower(sp->graph, o, &plan, d)))
		return -1;
	hgc_tir_module_free(m);
	at = plan ? strstr(plan, "buffer plan:") : NULL;
	if (at)
		hgc_tool_print_diag(stdout, "  ", at);
	free(plan);
	return 0;
}

/* Explain one spec under cfg (its own when NULL); 0, or -1 (printed). */
static int explain_spec(const struct hgc_spec *sp, const struct hgc_config *cfg, int threads)
{
	struct hgc_driver_opts dopts;
	struct hgc_tmpl_rule *rules;
	struct hgc_tmpl_opts to;
	struct hgc_graph *work = NULL;
	struct hgc_diag d;
	int rc = -1;

	if (!sp->graph)
		return 0;
	cfg = cfg ? cfg : sp->config;
	hgc_tool_driver_opts(cfg, HGC_DRIVER_JIT, &dopts, &rules);
	hgc_tmpl_opts_init(&to);
	to.threads = threads ? threads : cfg && cfg->threads ? cfg->threads : omp_get_max_threads();
	to.rules = rules;
	to.nrules = dopts.nrules;
	hgc_diag_init(&d);
	printf("spec %s (%s:%d), %d thread%s, config %s\n", sp->name, sp->loc.file, sp->loc.line,
	       to.threads, to.threads == 1 ? "" : "s", cfg ? cfg->name : "(none)");
	if (hgc_tmpl_check_rules(rules, dopts.nrules, &d) == 0 &&
	    (work = hgc_driver_graph_passes(sp->graph, &dopts, &d)))
		rc = hgc_heur_explain_graph(stdout, work, &to, &d);
	if (rc == 0)
		rc = explain_buffers(sp, &dopts, to.threads, &d);
	if (rc < 0)
		hgc_tool_print_diag(stdout, "  ", hgc_diag_text(&d));
	hgc_graph_free(work);
	hgc_diag_release(&d);
	hgc_tmpl_opts_release(&to);
	free(rules);
	return rc;
}

/* `hgc explain [--threads=N] [--config=NAME] FILE|DIR...` */
int hgc_tool_explain(int argc, char **argv)
{
	struct hgc_tool_opts o;
	struct hgc_tool_session s;
	const struct hgc_config *cfg = NULL;
	int rc, nbad = 0, n = 0;

	if ((rc = hgc_tool_args_parse(&o, "explain", argc, argv)) || o.help) {
		if (!rc)
			hgc_tool_args_help(stdout, "explain");
		hgc_tool_opts_release(&o);
		return rc;
	}
	hgc_tool_session_init(&s);
	hgc_tool_session_load(&s, &o.paths);
	if (o.config && !(cfg = hgc_tool_session_config(&s, o.config))) {
		fprintf(stderr, "hgc: no config named '%s' in the files given\n", o.config);
		nbad++;
	}
	/* A spec that fails (a pin no candidate meets at these threads) does not
	   stop the others: every file is explained, and the status says 1. */
	for (size_t i = 0; i < s.files.len && !(o.config && !cfg); i++) {
		const struct hgc_tool_file *f = HGC_SESSION_FILE(&s, i);

		if (f->failed) {
			fputs(hgc_diag_text(&f->diag), stderr);
			nbad++;
		}
		for (size_t j = 0; !f->failed && j < f->prog.specs.len; j++) {
			if (n++)
				putchar('\n');
			nbad += explain_spec(HGC_PROGRAM_SPEC(&f->prog, j), cfg, o.threads) < 0;
		}
	}
	hgc_tool_session_release(&s);
	hgc_tool_opts_release(&o);
	return nbad ? HGC_EXIT_FAIL : HGC_EXIT_OK;
}
