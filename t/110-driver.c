/*
 * 110-driver: graphs through the pipeline (lowering, TIR verification, the
 * LLVM JIT and the C backend) in process, against the reference
 * interpreter: the specs of a few spec/ files on the JIT and one spec per
 * file on the C backend (cc costs ~0.3 s a graph), hand-built graphs for
 * the argument convention (inputs, then outputs; an input that is also an
 * output; a scalar), and errors at each stage as diagnostics, never
 * crashes.  The disk cache is off here (t/111 tests it).
 */
#include "t/driver_check.h"

#include "core/tir/tir.h"

/* Spec files run through the JIT (every spec) and the C backend (the first). */
static const char *const files[] = {
	"spec/ops/matmul.hgc", "spec/ops/binary.hgc", "spec/ops/shape.hgc",
	"spec/ops/norm.hgc", "spec/ops/quant.hgc", "spec/ops/pool.hgc",
};

/* Options for backend b without the disk cache. */
static struct hgc_driver_opts opts_for(enum hgc_driver_backend b)
{
	struct hgc_driver_opts o;

	hgc_driver_opts_init(&o);
	o.backend = b;
	o.disk_cache = false;
	return o;
}

/* Compile sp's graph for b, run it on the spec's inputs, compare with the interpreter. */
static void run_spec(const struct hgc_spec *sp, enum hgc_driver_backend b)
{
	struct hgc_driver_opts o = opts_for(b);
	char why[512];

	if (!ok(dc_spec_matches(sp, &o, why, sizeof(why)), "%s: %s on %s", sp->file, sp->name,
		hgc_driver_backend_name(b)))
		diag("%s", why);
}

/* Every spec of each file on the JIT; the first positive spec on the C backend. */
static void test_specs(void)
{
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct hgc_program p;
		struct hgc_diag d;
		bool c_done = false;

		hgc_program_init(&p);
		hgc_diag_init(&d);
		if (!ok(hgc_program_load(&p, files[f], &d) == 0, "load %s", files[f]))
			diag("%s", hgc_diag_text(&d));
		for (size_t i = 0; i < p.specs.len; i++) {
			const struct hgc_spec *sp = HGC_PROGRAM_SPEC(&p, i);

			if (!sp->graph)
				continue;
			run_spec(sp, HGC_DRIVER_JIT);
			if (!c_done)
				run_spec(sp, HGC_DRIVER_C);
			c_done = true;
		}
		hgc_diag_release(&d);
		hgc_program_release(&p);
	}
	hgc_driver_cache_clear();
}

/* Finish op or die: test graphs are valid. */
static struct hgc_tensor *finish(struct hgc_graph *g, struct hgc_op *op, const char *name)
{
	struct hgc_diag d;

	hgc_diag_init(&d);
	if (hgc_graph_finish_op(g, op, &d) < 0)
		hgc_bug("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	op->out[0]->name = name;
	return op->out[0];
}

/* Inputs a[2,3], b[3], scalar s; outputs a+b, a (an input), s*a, a+b again. */
static struct hgc_graph *args_graph(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *a, *b, *s, *sum, *in[2];

	a = hgc_graph_add_input(g, "a", HGC_DT_F32, 2, (int64_t[]){ 2, 3 }, HGC_PROP_VARIABLE,
				NULL);
	b = hgc_graph_add_input(g, "b", HGC_DT_F32, 1, (int64_t[]){ 3 }, HGC_PROP_CONSTANT, NULL);
	s = hgc_graph_add_input(g, "s", HGC_DT_F32, 0, NULL, HGC_PROP_VARIABLE, NULL);
	in[0] = a;
	in[1] = b;
	sum = finish(g, hgc_graph_add_op(g, HGC_OP_ADD, 2, in, HGC_DT_UNDEF, NULL), "sum");
	in[0] = s;
	in[1] = a;
	hgc_graph_add_output(g, sum);
	hgc_graph_add_output(g, a);
	hgc_graph_add_output(g, finish(g, hgc_graph_add_op(g, HGC_OP_MULTIPLY, 2, in,
							   HGC_DT_UNDEF, NULL), "scaled"));
	hgc_graph_add_output(g, sum);
	return g;
}

/* The argument convention on both backends: outputs land in order. */
static void test_args(void)
{
	struct hgc_graph *g = args_graph();

	for (int b = HGC_DRIVER_JIT; b <= HGC_DRIVER_C; b++) {
		struct hgc_driver_opts o = opts_for((enum hgc_driver_backend)b);
		struct hgc_driver_graph *h;
		struct dc_bufs bufs;
		struct hgc_diag d;
		char why[512] = "";

		hgc_diag_init(&d);
		dc_alloc(&bufs, g);
		dc_fill(&bufs, g, 7 + (unsigned)b);
		h = hgc_driver_compile(g, &o, NULL, &d);
		if (!ok(h, "args graph compiles on %s", hgc_driver_backend_name(o.backend)))
			diag("%s", hgc_diag_text(&d));
		if (h) {
			is_int(h->nin, 3, "three inputs");
			is_int(h->nout, 4, "four outputs");
			is_int(h->code->nargs, 7, "seven arguments");
			if (!ok(dc_check(h, g, NULL, &bufs, why, sizeof(why)),
				"inputs then outputs, an input as an output, a scalar, a repeat"))
				diag("%s", why);
			ok(!memcmp(bufs.out[1], bufs.in[0], 24), "the input output is a copy");
		}
		hgc_driver_release(h);
		dc_release(&bufs);
		hgc_diag_release(&d);
	}
	hgc_graph_free(g);
}

/* The pipeline's parts: lowering to verified TIR, the build without the cache. */
static void test_stages(void)
{
	struct hgc_graph *g = dc_matmul(5, 7, 3, true);
	struct hgc_driver_opts o = opts_for(HGC_DRIVER_JIT);
	struct hgc_tir_module *m;
	struct hgc_compiled *c;
	struct hgc_diag d;
	char *text;

	hgc_diag_init(&d);
	m = hgc_driver_lower(g, &o, NULL, &d);
	ok(m && hgc_tir_verify(m, &d) == 0, "hgc_driver_lower: a verified module");
	if (m) {
		is_int(m->entry->nparams, 3, "entry takes x, w, y");
		text = hgc_tir_module_str(m);
		ok(strstr(text, "entry func entry(x: f32[5, 7], w: f32[7, 3], y: f32[5, 3])") != NULL,
		   "entry parameters: inputs, then outputs, dense");
		free(text);
		hgc_tir_module_free(m);
	}
	c = hgc_driver_build(g, &o, NULL, &d);
	ok(c && c->nargs == 3 && c->entry, "hgc_driver_build: a compiled module");
	hgc_codegen_free(c);
	is_int(d.nerr, 0, "no diagnostics");
	is_str(hgc_driver_backend_name(HGC_DRIVER_C), "c", "backend name c");
	is_str(hgc_driver_backend_name(HGC_DRIVER_JIT), "jit", "backend name jit");
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* A graph the lowering refuses: an input with a non-dense layout. */
static void test_lower_error(void)
{
	struct hgc_graph *g = dc_matmul(4, 4, 4, false);
	struct hgc_tensor *x = HGC_GRAPH_INPUT(g, 0);
	struct hgc_driver_opts o = opts_for(HGC_DRIVER_JIT);
	struct hgc_diag d;

	x->layout.strides[0] = 1;
	x->layout.strides[1] = 4;
	hgc_diag_init(&d);
	ok(!hgc_driver_compile(g, &o, NULL, &d), "a non-dense input does not compile");
	ok(strstr(hgc_diag_text(&d), "error: cannot lower graph input %0 with a non-dense "
		  "layout yet") != NULL, "and says why");
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	ok(!hgc_driver_lower(g, &o, NULL, &d) && d.nerr == 1, "hgc_driver_lower: the same error");
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* A C compiler that fails: a diagnostic with its status, no crash. */
static void test_cc_error(void)
{
	struct hgc_graph *g = dc_matmul(3, 2, 3, false);
	struct hgc_driver_opts o = opts_for(HGC_DRIVER_C);
	const char *old = getenv("CC");
	char *saved = old ? strdup(old) : NULL;
	struct hgc_driver_graph *h;
	struct hgc_diag d;

	setenv("CC", "false", 1);
	hgc_diag_init(&d);
	ok(!hgc_driver_compile(g, &o, NULL, &d), "CC=false: no compiled graph");
	if (!ok(strstr(hgc_diag_text(&d), "error: c backend: the C compiler failed (exit "
			"status 1): false") != NULL, "the compiler's failure is the diagnostic"))
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	if (saved)
		setenv("CC", saved, 1);
	else
		unsetenv("CC");
	free(saved);
	hgc_diag_init(&d);
	h = hgc_driver_compile(g, &o, NULL, &d);
	ok(h, "with the compiler back, it compiles (the failure was not cached)");
	hgc_driver_release(h);
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* Hand-built graphs first, then the specs. */
int main(void)
{
	test_args();
	test_stages();
	test_lower_error();
	test_cc_error();
	test_specs();
	hgc_driver_cache_clear();
	return done_testing();
}
