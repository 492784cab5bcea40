/*
 * 140-fusion: fine-grained fusion of post-ops after MatMul.  The plan
 * (which ops join which MatMul, which stay out), the lowering (post-ops at
 * a template anchor, the candidates and their costs in the template log),
 * and the numbers against the reference interpreter on the JIT and the C
 * backend, with fusion on and switched off by `pass fuse = off`.  Row
 * reductions (softmax, layernorm) as post-ops and the limits: a reduction
 * over a non-last axis, a second reduction site, an anchor that does not
 * cover the rows, too many outside inputs.
 */
#include "t/driver_check.h"

#include "core/graph/fused.h"
#include "core/graph/passes/passes.h"
#include "core/lower/fused.h"
#include "heuristics/heuristics.h"

/* Graphs: MLP layers with bias and activations, a tail shape, a batch, and
   an Add whose other operand is computed after the MatMul (not fusible). */
static const char src[] =
	"spec relu { input x : f32[64, 96] = uniform(lo = -1, hi = 1, seed = 1);\n"
	"  const w : f32[96, 128] = normal(mean = 0, std = 0.1, seed = 2);\n"
	"  const b : f32[128] = uniform(lo = -0.1, hi = 0.1, seed = 3);\n"
	"  h = MatMul(x, w); a = Add(h, b); y = ReLU(a); output y; }\n"
	"spec gelu_sig { input x : f32[64, 64] = uniform(lo = -1, hi = 1, seed = 4);\n"
	"  input w : f32[64, 128] = uniform(lo = -1, hi = 1, seed = 5);\n"
	"  input s : f32[] = uniform(lo = 0, hi = 1, seed = 6);\n"
	"  h = MatMul(x, w); g = GELU(h); m = Multiply(g, s); y = Sigmoid(m);\n"
	"  output y; output g; }\n"
	"spec tail { input x : f32[50, 37] = uniform(lo = -1, hi = 1, seed = 7);\n"
	"  input w : f32[37, 70] = uniform(lo = -1, hi = 1, seed = 8);\n"
	"  h = MatMul(x, w); y = Tanh(h); output y; }\n"
	"spec batch { input x : f32[2, 3, 32, 16] = uniform(lo = -1, hi = 1, seed = 9);\n"
	"  input w : f32[2, 3, 16, 64] = uniform(lo = -1, hi = 1, seed = 10);\n"
	"  h = MatMul(x, w); y = Exp(h); output y; }\n"
	"spec late { input x : f32[32, 32] = uniform(lo = -1, hi = 1, seed = 11);\n"
	"  input w : f32[32, 64] = uniform(lo = -1, hi = 1, seed = 12);\n"
	"  h = MatMul(x, w); e = Exp(x); f = MatMul(e, w); y = Add(h, f);\n"
	"  z = Abs(f); output y; output z; }\n"
	/* attention scores: scale, mask, softmax over the last axis after a batched MatMul */
	"spec att { input q : f32[2, 3, 64, 32] = uniform(lo = -1, hi = 1, seed = 13);\n"
	"  input k : f32[2, 3, 128, 32] = uniform(lo = -1, hi = 1, seed = 14);\n"
	"  input mask : f32[2, 1, 1, 128] = uniform(lo = -2, hi = 0, seed = 15);\n"
	"  const scale : f32[] = [0.125];\n"
	"  s = MatMul(q, k, transpose_b = true); ss = Multiply(s, scale); sm = Add(ss, mask);\n"
	"  p = SoftMax(sm, axis = -1); output p; }\n"
	/* residual add and layernorm after a 2-D MatMul with bias */
	"spec ln { input x : f32[64, 96] = uniform(lo = -1, hi = 1, seed = 16);\n"
	"  const w : f32[96, 128] = normal(mean = 0, std = 0.1, seed = 17);\n"
	"  const b : f32[128] = uniform(lo = -0.1, hi = 0.1, seed = 18);\n"
	"  input res : f32[64, 128] = uniform(lo = -1, hi = 1, seed = 19);\n"
	"  const g : f32[128] = uniform(lo = 0.8, hi = 1.2, seed = 20);\n"
	"  const be : f32[128] = uniform(lo = -0.1, hi = 0.1, seed = 21);\n"
	"  h = MatMul(x, w, b); r = Add(h, res);\n"
	"  y = LayerNorm(r, g, be, keep_stats = false, epsilon = 0.00001); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	/* a reduction over a non-last axis stays out, and what reads it */
	"spec colsum { input x : f32[32, 48] = uniform(lo = -1, hi = 1, seed = 22);\n"
	"  input w : f32[48, 64] = uniform(lo = -1, hi = 1, seed = 23);\n"
	"  h = MatMul(x, w); e = Exp(h); c = ReduceSum(e, axes = [0], keep_dims = true);\n"
	"  y = Divide(e, c); output y; expect { rtol = 1e-4; atol = 1e-5; } }\n"
	/* five outside inputs: the fifth Add stays out */
	"spec extra { input x : f32[32, 32] = uniform(lo = -1, hi = 1, seed = 24);\n"
	"  input w : f32[32, 64] = uniform(lo = -1, hi = 1, seed = 25);\n"
	"  input b1 : f32[64] = uniform(lo = -1, hi = 1, seed = 26);\n"
	"  input b2 : f32[32, 1] = uniform(lo = -1, hi = 1, seed = 27);\n"
	"  input b3 : f32[32, 64] = uniform(lo = -1, hi = 1, seed = 28);\n"
	"  input b4 : f32[1, 64] = uniform(lo = -1, hi = 1, seed = 29);\n"
	"  input b5 : f32[64] = uniform(lo = -1, hi = 1, seed = 30);\n"
	"  h = MatMul(x, w); a1 = Add(h, b1); a2 = Add(a1, b2); a3 = Add(a2, b3);\n"
	"  a4 = Add(a3, b4); a5 = Add(a4, b1); a6 = Add(a5, b5); output a6; }\n"
	/* a second reduction site (all axes after the row softmax) stays out */
	"spec twosites { input x : f32[16, 32] = uniform(lo = -1, hi = 1, seed = 31);\n"
	"  input w : f32[32, 64] = uniform(lo = -1, hi = 1, seed = 32);\n"
	"  h = MatMul(x, w); p = SoftMax(h, axis = 1);\n"
	"  t = ReduceSum(p, axes = [0, 1], keep_dims = true); y = Multiply(p, t); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	/* regions without a MatMul: residual add and layernorm; an elementwise
	   chain; a lone op (no region) */
	"spec region_ln { input x : f32[2, 24, 80] = uniform(lo = -1, hi = 1, seed = 33);\n"
	"  input res : f32[2, 24, 80] = uniform(lo = -1, hi = 1, seed = 34);\n"
	"  const g : f32[80] = uniform(lo = 0.8, hi = 1.2, seed = 35);\n"
	"  const be : f32[80] = uniform(lo = -0.1, hi = 0.1, seed = 36);\n"
	"  r = Add(x, res); y = LayerNorm(r, g, be, keep_stats = false, epsilon = 0.00001);\n"
	"  output y; expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec region_chain { input x : f32[300, 40] = uniform(lo = -1, hi = 1, seed = 37);\n"
	"  input b : f32[40] = uniform(lo = -1, hi = 1, seed = 38);\n"
	"  a = Add(x, b); e = Tanh(a); m = Multiply(e, x); y = Abs(m); z = Exp(b);\n"
	"  output y; output z; output e; }\n"
	/* attention with the scores by V: the two MatMuls' parallel loops match */
	"spec attpv { input q : f32[2, 3, 64, 32] = uniform(lo = -1, hi = 1, seed = 39);\n"
	"  input k : f32[2, 3, 64, 32] = uniform(lo = -1, hi = 1, seed = 40);\n"
	"  input v : f32[2, 3, 64, 32] = uniform(lo = -1, hi = 1, seed = 41);\n"
	"  s = MatMul(q, k, transpose_b = true); p = SoftMax(s, axis = -1); y = MatMul(p, v);\n"
	"  output y; expect { rtol = 1e-4; atol = 1e-5; } }\n"
	/* pre-ops: K^T at graph entry folds into the packing; a transpose that
	   is also an output stays */
	"spec kt { input q : f32[2, 64, 32] = uniform(lo = -1, hi = 1, seed = 42);\n"
	"  input k : f32[2, 64, 32] = uniform(lo = -1, hi = 1, seed = 43);\n"
	"  kt = StaticTranspose(k, order = [0, -1, 1]); s = MatMul(q, kt); output s; }\n"
	"spec kt_out { input q : f32[64, 32] = uniform(lo = -1, hi = 1, seed = 44);\n"
	"  input k : f32[64, 32] = uniform(lo = -1, hi = 1, seed = 45);\n"
	"  kt = StaticTranspose(k, order = [1, 0]); s = MatMul(q, kt); y = ReLU(s);\n"
	"  output y; output kt; }\n";

static const struct hgc_tmpl_rule fuse_off[] = { { "pass", "fuse", "off", { NULL, 0, 0 } } };

/* Compile sp on backend b (fusion on unless off), run it, compare. */
static void run(const struct hgc_spec *sp, enum hgc_driver_backend b, bool off)
{
	struct hgc_driver_opts o;
	char why[512];

	hgc_driver_opts_init(&o);
	o.backend = b;
	o.disk_cache = false;
	o.threads = 2;
	if (off)
		o.rules = fuse_off, o.nrules = 1;
	if (!ok(dc_spec_matches(sp, &o, why, sizeof(why)), "%s on %s, fusion %s", sp->name,
		hgc_driver_backend_name(b), off ? "off" : "on"))
		diag("%s", why);
}

/* The plan of sp after the graph passes, as text: its "fused op" lines
   (without the template log --dump=fused prints after them). */
static char *plan_of(const struct hgc_spec *sp)
{
	struct hgc_driver_opts o;
	struct hgc_diag d;
	char *text = NULL, *at;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	hgc_driver_opts_init(&o);
	hgc_diag_init(&d);
	if (hgc_driver_dump_fused(out, sp->graph, &o, &d) < 0)
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	fclose(out);
	at = strstr(text, "fused op ");
	memmove(text, at ? at : text + len, strlen(at ? at : text + len) + 1);
	if ((at = strstr(text, "# anchors")))	/* the template log after the plan */
		*at = 0;
	return text;
}

/* The template log of lowering sp under rules (the explain text), or NULL. */
static char *log_rules(const struct hgc_spec *sp, const struct hgc_tmpl_rule *rules, int n)
{
	struct hgc_driver_opts o;
	struct hgc_tir_module *m;
	struct hgc_diag d;
	char *plan = NULL;

	hgc_driver_opts_init(&o);
	o.threads = 2;
	o.rules = rules, o.nrules = n;
	hgc_diag_init(&d);
	m = hgc_driver_lower(sp->graph, &o, &plan, &d);
	if (!m)
		diag("%s", hgc_diag_text(&d));
	hgc_tir_module_free(m);
	hgc_diag_release(&d);
	return plan;
}

/* The template log of lowering sp with the default rules. */
static char *log_of(const struct hgc_spec *sp)
{
	return log_rules(sp, NULL, 0);
}

/* Plans: members, graph order, what stays out. */
static void test_plans(const struct hgc_program *p)
{
	static const char *const want[] = {
		"fused op 0: MatMul h + Add a, ReLU y\n",
		NULL,	/* gelu_sig: the passes decompose GELU, checked below */
		"fused op 0: MatMul h + Tanh y\n",
		"fused op 0: MatMul h + Exp y\n",
		"fused op 0: MatMul f + Add y, Abs z\n",	/* h is ready before f; Add joins f, not h */
		"fused op 0: MatMul s + Multiply ss, Add sm, ReduceMax %8, Subtract %9, Exp %10, "
		"ReduceSum %11, Divide p (rows over axes [3])\n",
		NULL,	/* ln: checked below */
		"fused op 0: MatMul h + Exp e\n",
		"fused op 0: MatMul h + Add a1, Add a2, Add a3, Add a4, Add a5\n",	/* b1 twice: one input */
		NULL,	/* twosites: checked below */
		NULL,	/* region_ln: checked below */
		"fused op 0: region: Add a, Tanh e, Multiply m, Abs y\n",
		"fused op 0: MatMul s + ReduceMax %6, Subtract %7, Exp %8, ReduceSum %9, Divide p "
		"(rows over axes [3])\n",
		"fused op 0: MatMul s (pre-op of B: StaticTranspose kt)\n",
		"fused op 0: MatMul s + ReLU y\n",
	};
	for (size_t i = 0; i < p->specs.len; i++) {
		char *t = plan_of(HGC_PROGRAM_SPEC(p, i));

		if (want[i])
			is_str(t, want[i], "plan of %s", HGC_PROGRAM_SPEC(p, i)->name);
		else if (i == 1)
			ok(strstr(t, "MatMul h + Multiply ") && strstr(t, "Multiply g, Multiply m, Sigmoid y\n"),
			   "gelu_sig: the decomposed GELU and the two post-ops join");
		else if (i == 6)	/* 2 reductions, 11 ops on them; eps and the counts are immediates */
			ok(strstr(t, "MatMul h + Add r, ReduceSum ") && strstr(t, ", Add y (rows over axes [1])\n"),
			   "ln: residual and layernorm join as one row site");
		else if (i == 10)
			ok(strstr(t, "fused op 0: region: Add r, ReduceSum ") &&
			   strstr(t, ", Add y (rows over axes [2])\n"),
			   "region_ln: residual add and layernorm are one region");
		else if (i == 9)
			ok(strstr(t, ", Divide p (rows over axes [1])\nfused op 1: region: ReduceSum t, "
				  "Multiply y (rows over axes [0, 1])\n") != NULL,
			   "twosites: the softmax joins, the second site is a region of its own");
		free(t);
	}
}

/* The log says where the post-ops went and what the candidates cost. */
static void test_log(const struct hgc_program *p)
{
	char *t = log_of(HGC_PROGRAM_SPEC(p, 0));

	ok(t && strstr(t, "MatMul h: template matmul_") && strstr(t, ", fused (") && strstr(t, "candidates:") &&
	   strstr(t, "cost=") && strstr(t, ": Add ReLU"), "relu: anchor and costs logged");
	if (t)
		diag("%s", t);
	free(t);
	t = log_of(HGC_PROGRAM_SPEC(p, 2));
	ok(t && strstr(t, "post-ops at the end: Tanh"), "tail: no anchor is a box, post-ops at the end");
	free(t);
}

/* Row reductions: the anchor must cover whole rows; NPN = 1 is asked for. */
static void test_rows(const struct hgc_program *p)
{
	static const struct hgc_tmpl_rule npn2[] = {
		{ "use", "MatMul", "matmul_core", { NULL, 0, 0 } },
		{ "pin", "matmul_core.NPN", "2", { NULL, 0, 0 } },
		{ "pin", "matmul_core.NB", "32", { NULL, 0, 0 } },
	};
	static const struct hgc_tmpl_rule core[] = { { "use", "MatMul", "matmul_core", { NULL, 0, 0 } } };
	char *t = log_of(HGC_PROGRAM_SPEC(p, 5));

	ok(t && strstr(t, "template matmul_batch") && strstr(t, "post-ops at post_row: Multiply Add "
	   "ReduceMax Subtract Exp ReduceSum Divide"), "att: softmax at matmul_batch's post_row");
	ok(t && strstr(t, "post_block(ws=4096 calls=12: does not cover whole rows of the reduction)"),
	   "att: post_block (MB x NB of 64 x 64) does not cover a row of 128");
	ok(t && strstr(t, ": members row by row at post_row, ") && strstr(t, " rows of 128\n"),
	   "att: the softmax members go row by row (rows of 128) at post_row");
	if (t)
		diag("%s", t);
	free(t);
	t = log_rules(HGC_PROGRAM_SPEC(p, 6), core, 1);
	ok(t && strstr(t, " NPN=1 ") && !strstr(t, "post-ops at the end"),
	   "ln: matmul_core with NPN = 1, layernorm at an anchor");
	if (t)
		diag("%s", t);
	free(t);
	t = log_rules(HGC_PROGRAM_SPEC(p, 6), npn2, 3);
	ok(t && strstr(t, " NPN=2 ") && strstr(t, "post_row(ws=4096 calls=2: does not cover whole rows") &&
	   strstr(t, "post-ops at the end: Add ReduceSum"),
	   "ln: a pinned NPN = 2 splits the rows: the members follow the nest");
	if (t)
		diag("%s", t);
	free(t);
}

/* Regions: one loop over blocks of rows. */
static void test_regions(const struct hgc_program *p)
{
	char *t = log_of(HGC_PROGRAM_SPEC(p, 10));

	ok(t && strstr(t, "region of 13 fusible ops (Add ...): 8 blocks of 6 x 80"),
	   "region_ln: 2 x 24 rows of 80 in blocks of 6 (14 tensors of a block in 32 KiB)");
	if (t)
		diag("%s", t);
	free(t);
	t = log_of(HGC_PROGRAM_SPEC(p, 11));
	ok(t && strstr(t, "region of 4 fusible ops (Add ...): 10 blocks of 30 x 40"),
	   "region_chain: 300 rows of 40 in blocks of 30");
	free(t);
}

/* Pre-ops: the transpose goes into the B packing. */
static void test_pre(const struct hgc_program *p)
{
	char *t = log_of(HGC_PROGRAM_SPEC(p, 13));

	ok(t && strstr(t, "B's StaticTranspose folded into its packing"), "kt: K^T folded");
	free(t);
}

/* Coarse-grained marks: consecutive fused ops with matching parallel loops. */
static void test_merges(const struct hgc_program *p)
{
	char *t = log_of(HGC_PROGRAM_SPEC(p, 12));

	ok(t && strstr(t, "coarse-grained: s and y: parallel loops over the same ranges, merge group 1"),
	   "attpv: the two MatMuls per batch and head are marked for a merge");
	free(t);
	t = log_of(HGC_PROGRAM_SPEC(p, 4));
	ok(t && !strstr(t, "coarse-grained"), "late: an op between the MatMuls: no merge mark");
	free(t);
}

/* hgc_heur_explain_graph: the plan, the anchors with their costs, the merges. */
static void test_explain(const struct hgc_program *p)
{
	const struct hgc_spec *sp = HGC_PROGRAM_SPEC(p, 12);
	struct hgc_pass_switches sw;
	struct hgc_tmpl_opts o;
	struct hgc_graph *g = hgc_graph_clone(sp->graph);
	struct hgc_diag d;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	hgc_diag_init(&d);
	hgc_pass_switches_init(&sw);
	hgc_tmpl_opts_init(&o);
	o.threads = 2;
	ok(hgc_graph_passes_run(g, &sw, &d) == 0 && hgc_heur_explain_graph(out, g, &o, &d) == 0,
	   "explain attpv");
	fclose(out);
	ok(strstr(text, "fusion: 1 fused op\nfused op 0: MatMul s + ReduceMax ") &&
	   strstr(text, "anchors (candidates with their cost") && strstr(text, "post_row(ws=") &&
	   strstr(text, "cost=") && strstr(text, "  coarse-grained: s and y:"),
	   "explain: members, candidates with costs, merges");
	diag("%s", text);
	free(text);
	hgc_tmpl_opts_release(&o);
	hgc_graph_free(g);
	hgc_diag_release(&d);
}

int main(void)
{
	struct hgc_program p;
	struct hgc_diag d;

	hgc_program_init(&p);
	hgc_diag_init(&d);
	if (!ok(hgc_program_load_string(&p, "t/140.hgc", src, &d) == 0, "load the specs"))
		diag("%s", hgc_diag_text(&d));
	test_plans(&p);
	test_log(&p);
	test_rows(&p);
	test_regions(&p);
	test_merges(&p);
	test_pre(&p);
	test_explain(&p);
	for (size_t i = 0; i < p.specs.len; i++) {
		run(HGC_PROGRAM_SPEC(&p, i), HGC_DRIVER_JIT, false);
		run(HGC_PROGRAM_SPEC(&p, i), HGC_DRIVER_JIT, true);
		run(HGC_PROGRAM_SPEC(&p, i), HGC_DRIVER_C, false);
	}
	hgc_driver_cache_clear();
	hgc_diag_release(&d);
	hgc_program_release(&p);
	done_testing();
}
