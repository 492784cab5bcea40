/*
 * 140-fusion: fine-grained fusion of post-ops after MatMul.  The plan
 * (which ops join which MatMul, which stay out), the lowering (post-ops at
 * a template anchor, the candidates and their costs in the template log),
 * and the numbers against the reference interpreter on the JIT and the C
 * backend, with fusion on and switched off by `pass fuse = off`.
 */
#include "t/driver_check.h"

#include "core/graph/fused.h"
#include "core/lower/fused.h"

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
	"  z = Abs(f); output y; output z; }\n";

static const struct hgc_tmpl_rule fuse_off[] = { { "pass", "fuse", "off", { NULL, 0, 0 } } };

/* Compile sp on backend b (fusion on unless off), run it, compare. */
static void run(const struct hgc_spec *sp, enum hgc_driver_backend b, bool off)
{
	struct hgc_driver_opts o;
	struct hgc_driver_graph *h;
	struct dc_bufs bufs;
	struct hgc_diag d;
	char why[512] = "";
	bool same = false;

	hgc_driver_opts_init(&o);
	o.backend = b;
	o.disk_cache = false;
	o.threads = 2;
	if (off)
		o.rules = fuse_off, o.nrules = 1;
	hgc_diag_init(&d);
	dc_alloc(&bufs, sp->graph);
	h = hgc_driver_compile(sp->graph, &o, NULL, &d);
	for (int i = 0; h && i < bufs.nin; i++)
		if (hgc_gen_fill(&sp->gens[i], HGC_GRAPH_INPUT(sp->graph, i), bufs.in[i], &d) < 0)
			snprintf(why, sizeof(why), "%s", hgc_diag_text(&d));
	if (h && !why[0])
		same = dc_check(h, sp->graph, sp, &bufs, why, sizeof(why));
	if (!ok(h && same, "%s on %s, fusion %s", sp->name, hgc_driver_backend_name(b),
		off ? "off" : "on"))
		diag("%s%s", hgc_diag_text(&d), why);
	hgc_driver_release(h);
	dc_release(&bufs);
	hgc_diag_release(&d);
}

/* The plan of sp as text. */
static char *plan_of(const struct hgc_spec *sp)
{
	struct hgc_fusion f;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	hgc_fusion_plan(sp->graph, &f);
	hgc_fusion_print(out, &f);
	fclose(out);
	hgc_fusion_release(&f);
	return text;
}

/* The template log of lowering sp (the explain text), or NULL. */
static char *log_of(const struct hgc_spec *sp)
{
	struct hgc_driver_opts o;
	struct hgc_tir_module *m;
	struct hgc_diag d;
	char *plan = NULL;

	hgc_driver_opts_init(&o);
	o.threads = 2;
	hgc_diag_init(&d);
	m = hgc_driver_lower(sp->graph, &o, &plan, &d);
	if (!m)
		diag("%s", hgc_diag_text(&d));
	hgc_tir_module_free(m);
	hgc_diag_release(&d);
	return plan;
}

/* Plans: members, graph order, what stays out. */
static void test_plans(const struct hgc_program *p)
{
	static const char *const want[] = {
		"fused op 0: MatMul h + Add a, ReLU y\n",
		NULL,	/* gelu_sig: decomposed by the passes, checked below */
		"fused op 0: MatMul h + Tanh y\n",
		"fused op 0: MatMul h + Exp y\n",
		"fused op 0: MatMul f + Add y, Abs z\n",	/* h is ready before f; Add joins f, not h */
	};
	for (size_t i = 0; i < p->specs.len; i++) {
		char *t = plan_of(HGC_PROGRAM_SPEC(p, i));

		if (want[i])
			is_str(t, want[i], "plan of %s", HGC_PROGRAM_SPEC(p, i)->name);
		else
			ok(strstr(t, "MatMul h + GELU g, Multiply m, Sigmoid y") != NULL,
			   "gelu_sig: the three post-ops join (%s)", t);
		free(t);
	}
}

/* The log says where the post-ops went and what the candidates cost. */
static void test_log(const struct hgc_program *p)
{
	char *t = log_of(HGC_PROGRAM_SPEC(p, 0));

	ok(t && strstr(t, "MatMul h: template matmul_core, fused (") && strstr(t, "candidates:") &&
	   strstr(t, "cost=") && strstr(t, ": Add ReLU"), "relu: anchor and costs logged");
	if (t)
		diag("%s", t);
	free(t);
	t = log_of(HGC_PROGRAM_SPEC(p, 2));
	ok(t && strstr(t, "post-ops at the end: Tanh"), "tail: no anchor is a box, post-ops at the end");
	free(t);
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
