/*
 * hgc.c: the hgc columns.  One prepare function per workload kind: build a
 * graph with the graph API from the workload (MatMul or Convolution, the
 * weights a constant input; int8 as Dequantize, MatMul, Quantize), or take
 * a spec's graph as it is (the subgraph rows, also compiled with fusion off
 * for the hgc_nofusion column), compile it through core/driver with the JIT
 * backend (no disk cache: compile_ms is a real compile, the median of 3),
 * and return a kernel that runs the compiled graph on the plain buffers of
 * io.  The first run happens here, outside the timed loop: it runs the
 * init function, which packs the constant weights into the template's
 * blocked layout once (oneDNN's packed column does the same with its
 * reorder).
 */
#include "bench/bench.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/codegen/codegen.h"
#include "core/driver/driver.h"

/* A compiled graph and the buffers it runs on. */
struct run {
	struct hgc_driver_graph *h;
	const void **in;		/* graph inputs, in graph order (malloc'ed) */
	void **out;			/* graph outputs (malloc'ed) */
};

/* The rule that switches fusion off: the "hgc_nofusion" column. */
static const struct hgc_tmpl_rule fuse_off = {"pass", "fuse", "off", {0}};

/* The timed call: one run of the compiled graph. */
static void run_graph(void *ctx)
{
	struct run *r = ctx;
	struct hgc_diag d;

	hgc_diag_init(&d);
	if (hgc_driver_run(r->h, r->in, r->out, &d) < 0)
		hgc_bug("hgc bench: %s", hgc_diag_text(&d));
	hgc_diag_release(&d);
}

/* Free the compiled graph. */
static void release(void *ctx)
{
	struct run *r = ctx;

	hgc_driver_release(r->h);
	free(r->in);
	free(r->out);
	free(r);
}

/* Set an attribute of op. */
static void set_ints(struct hgc_graph *g, struct hgc_op *op, const char *name, int n,
		     const int64_t *v)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_INTS, .n = n, .v.ints = v};

	hgc_op_set_attr(g, op, &a);
}

/* Set a string attribute of op. */
static void set_str(struct hgc_graph *g, struct hgc_op *op, const char *name, const char *s)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_STRING, .v.s = s};

	hgc_op_set_attr(g, op, &a);
}

/* The median of a, b and c. */
static double median3(double a, double b, double c)
{
	return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

/*
 * *ms, the time of a compile through the cache that missed, becomes the
 * median of it and of two more compiles without the cache: one compile on
 * a shared machine is one sample of its load (the same graph compiled in
 * 33 ms one minute and in 48 the next).  -1 with d set if one fails.
 */
static int recompile_ms(const struct hgc_graph *g, const struct hgc_driver_opts *o, double *ms,
			struct hgc_diag *d)
{
	double t[3] = {*ms};

	for (int i = 1; i < 3; i++) {
		double t0 = hgc_now();
		struct hgc_compiled *c = hgc_driver_build(g, o, NULL, d);

		t[i] = (hgc_now() - t0) * 1e3;
		if (!c)
			return -1;
		hgc_codegen_free(c);
	}
	*ms = median3(t[0], t[1], t[2]);
	return 0;
}

/*
 * Compile g (finished) with fusion on or off into a kernel over in and
 * out (copied); the first run, which packs the constants, outside the timing.
 */
static int compile(const struct hgc_graph *g, bool nofusion, int nin, void *const *in, int nout,
		   void *const *out, struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	struct hgc_driver_opts o;
	struct run *r;
	double t0;
	int i;

	hgc_driver_opts_init(&o);
	o.disk_cache = false;
	o.threads = omp_get_max_threads();
	if (nofusion) {
		o.rules = &fuse_off;
		o.nrules = 1;
	}
	r = hgc_xcalloc(1, sizeof(*r));
	t0 = hgc_now();
	r->h = hgc_driver_compile(g, &o, NULL, d);
	k->compile_ms = (hgc_now() - t0) * 1e3;
	if (!r->h) {
		free(r);
		return -1;
	}
	if (!nofusion && recompile_ms(g, &o, &k->compile_ms, d) < 0) {
		hgc_driver_release(r->h);
		free(r);
		return -1;
	}
	r->in = hgc_xcalloc((size_t)nin, sizeof(void *));
	r->out = hgc_xcalloc((size_t)nout, sizeof(void *));
	for (i = 0; i < nin; i++)
		r->in[i] = in[i];
	for (i = 0; i < nout; i++)
		r->out[i] = out[i];
	run_graph(r);
	k->run = run_graph;
	k->release = release;
	k->ctx = r;
	k->impl = nofusion ? "jit, fuse off" : "jit";
	return 0;
}

/* Finish the one op of g, make its output the graph's, compile with fusion on. */
static int finish(struct hgc_graph *g, struct hgc_op *op, const struct hgc_bench_io *io,
		  struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	void *in[2] = {io->src, io->wei};

	if (hgc_graph_finish_op(g, op, d) < 0)
		return -1;
	hgc_graph_add_output(g, op->out[0]);
	return compile(g, false, 2, in, 1, &io->dst, k, d);
}

/* A spec's graph as it is, fusion on. */
static int prepare_graph(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			 struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return compile(w->spec->graph, false, io->nin, io->in, io->nout, io->out, k, d);
}

/* A spec's graph with `pass fuse = off`. */
static int prepare_graph_nofusion(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
				  struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return compile(w->spec->graph, true, io->nin, io->in, io->nout, io->out, k, d);
}

/* Set a float-list attribute of op. */
static void set_floats(struct hgc_graph *g, struct hgc_op *op, const char *name, int n,
		       const double *v)
{
	struct hgc_attr a = {.name = name, .type = HGC_ATTR_FLOATS, .n = n, .v.floats = v};

	hgc_op_set_attr(g, op, &a);
}

/* A finished (De)Quantize of t: per tensor (n = 1) or per channel along the last axis. */
static struct hgc_tensor *quant(struct hgc_graph *g, enum hgc_op_kind kind, struct hgc_tensor *t,
				enum hgc_dtype out, int n, const double *scales,
				const int64_t *zps, struct hgc_diag *d)
{
	struct hgc_op *op = hgc_graph_add_op(g, kind, 1, &t, out, NULL);
	struct hgc_attr ax = {.name = "axis", .type = HGC_ATTR_INT, .v.i = t->ndims - 1};

	set_str(g, op, "qtype", n > 1 ? "per_channel" : "per_tensor");
	set_floats(g, op, "scales", n, scales);
	set_ints(g, op, "zps", n, zps);
	if (n > 1)
		hgc_op_set_attr(g, op, &ax);
	return hgc_graph_finish_op(g, op, d) < 0 ? NULL : op->out[0];
}

/*
 * The int8 matmul as a quantized model hands it over: Dequantize(u8 src),
 * Dequantize(s8 weights, per-column scales), MatMul, Quantize to u8 (scale 1,
 * zero points 0), so u8 dst = saturate(round(acc * scales[n])).  The lowprec
 * pass turns it into the u8 x s8 -> s32 MatMul the int8 brgemm runs, with
 * the scale applied after it (core/graph/passes/lowprec.c).
 */
static struct hgc_op *int8_matmul(struct hgc_graph *g, const struct hgc_bench_matmul *mm,
				  const struct hgc_bench_io *io, struct hgc_diag *d)
{
	int64_t n = mm->wei[mm->ndims - 1], i, zero = 0;
	double one = 1, *sc = hgc_xcalloc((size_t)n, sizeof(double));
	int64_t *zps = hgc_xcalloc((size_t)n, sizeof(int64_t));
	struct hgc_tensor *in[2], *x, *w = NULL, *h;
	struct hgc_op *mmop = NULL, *q = NULL;

	for (i = 0; i < n; i++)
		sc[i] = io->scales[i];
	in[0] = hgc_graph_add_input(g, "src", HGC_DT_U8, mm->ndims, mm->src, HGC_PROP_VARIABLE,
				    NULL);
	in[1] = hgc_graph_add_input(g, "wei", HGC_DT_S8, mm->ndims, mm->wei, HGC_PROP_CONSTANT,
				    NULL);
	x = quant(g, HGC_OP_DEQUANTIZE, in[0], HGC_DT_F32, 1, &one, &zero, d);
	if (x)
		w = quant(g, HGC_OP_DEQUANTIZE, in[1], HGC_DT_F32, (int)n, sc, zps, d);
	if (w) {
		struct hgc_tensor *xw[2] = {x, w};

		mmop = hgc_graph_add_op(g, HGC_OP_MATMUL, 2, xw, HGC_DT_F32, NULL);
		h = hgc_graph_finish_op(g, mmop, d) < 0 ? NULL : mmop->out[0];
		if (h) {
			q = hgc_graph_add_op(g, HGC_OP_QUANTIZE, 1, &h, HGC_DT_U8, NULL);
			set_str(g, q, "qtype", "per_tensor");
			set_floats(g, q, "scales", 1, &one);
			set_ints(g, q, "zps", 1, &zero);
		}
	}
	free(sc);
	free(zps);
	return q;
}

/* MatMul(src variable, wei constant): f32, or int8 through (de)quantization. */
static int prepare_matmul(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			  struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	const struct hgc_bench_matmul *mm = &w->shape.mm;
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *in[2];
	struct hgc_op *op;
	int rc = -1;

	if (w->dt == HGC_BENCH_INT8) {
		op = int8_matmul(g, mm, io, d);
	} else {
		in[0] = hgc_graph_add_input(g, "src", HGC_DT_F32, mm->ndims, mm->src,
					    HGC_PROP_VARIABLE, NULL);
		in[1] = hgc_graph_add_input(g, "wei", HGC_DT_F32, mm->ndims, mm->wei,
					    HGC_PROP_CONSTANT, NULL);
		op = hgc_graph_add_op(g, HGC_OP_MATMUL, 2, in, HGC_DT_F32, NULL);
	}
	if (op)
		rc = finish(g, op, io, k, d);
	hgc_graph_free(g);
	return rc;
}

/* One spatial output size of a convolution with end padding pe. */
static int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe)
{
	return (in + pb + pe - ((k - 1) * (d + 1) + 1)) / s + 1;
}

/* The end padding to give the graph: benchdnn writes -1 (or less) when a
   strided window never reaches the last input rows; 0 gives the same output
   size then, since the division floors. Returns -1 when no such pad exists. */
static int64_t end_pad(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe)
{
	if (pe >= 0)
		return pe;
	if (conv_out(in, k, s, d, pb, 0) == conv_out(in, k, s, d, pb, pe))
		return 0;
	return -1;
}

/* Convolution(src NXC variable, wei XIO constant) in f32. */
static int prepare_conv(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	const struct hgc_bench_conv *c = &w->shape.conv;
	int64_t xd[4] = {c->mb, c->ih, c->iw, c->ic}, wd[4] = {c->kh, c->kw, c->ic / c->g, c->oc};
	int64_t st[2] = {c->sh, c->sw}, pb[2] = {c->ph, c->pw}, pe[2] = {c->pr_h, c->pr_w};
	int64_t dl[2] = {c->dh + 1, c->dw + 1};
	struct hgc_graph *g;
	struct hgc_tensor *in[2];
	struct hgc_op *op;
	int rc;

	pe[0] = end_pad(c->ih, c->kh, c->sh, c->dh, c->ph, c->pr_h);
	pe[1] = end_pad(c->iw, c->kw, c->sw, c->dw, c->pw, c->pr_w);
	if (w->dt != HGC_BENCH_F32 || c->g != 1 || pe[0] < 0 || pe[1] < 0 || pb[0] < 0 ||
	    pb[1] < 0) {
		hgc_error(d, NULL, "hgc: only f32 convolutions without groups or negative pads");
		return HGC_BENCH_NA;
	}
	g = hgc_graph_new();
	in[0] = hgc_graph_add_input(g, "src", HGC_DT_F32, 4, xd, HGC_PROP_VARIABLE, NULL);
	in[1] = hgc_graph_add_input(g, "wei", HGC_DT_F32, 4, wd, HGC_PROP_CONSTANT, NULL);
	op = hgc_graph_add_op(g, HGC_OP_CONVOLUTION, 2, in, HGC_DT_F32, NULL);
	set_ints(g, op, "strides", 2, st);
	set_ints(g, op, "pads_begin", 2, pb);
	set_ints(g, op, "pads_end", 2, pe);
	set_ints(g, op, "dilations", 2, dl);
	set_str(g, op, "data_format", "NXC");
	set_str(g, op, "weights_format", "XIO");
	rc = finish(g, op, io, k, d);
	hgc_graph_free(g);
	return rc;
}

/* ms of one hgc_driver_compile of g under o, or -1 with d set; where it came from into *src. */
static double compile_once(const struct hgc_graph *g, const struct hgc_driver_opts *o,
			   enum hgc_driver_source *src, struct hgc_diag *d)
{
	struct hgc_driver_info info;
	struct hgc_driver_graph *h;
	double t0 = hgc_now(), ms;

	h = hgc_driver_compile(g, o, &info, d);
	ms = (hgc_now() - t0) * 1e3;
	*src = info.source;
	hgc_driver_release(h);
	return h ? ms : -1;
}

/*
 * What a user compares with oneDNN's primitive creation: compiling g cold
 * (no cache), loading it from a fresh disk cache (a new process's case)
 * and finding it in the in-memory cache.  The disk cache lives in a
 * temporary directory, removed afterwards.
 */
int hgc_bench_hgc_create_ms(const struct hgc_graph *g, int threads, double ms[3],
			    struct hgc_diag *d)
{
	static const enum hgc_driver_source want[3] = { HGC_DRIVER_MISS, HGC_DRIVER_DISK,
							HGC_DRIVER_MEMORY };
	char dir[] = "/tmp/hgc-bench-cache.XXXXXX", cmd[64];
	enum hgc_driver_source src[3];
	struct hgc_driver_opts o;
	int i, rc = 0;

	if (!mkdtemp(dir))
		return hgc_error(d, NULL, "cannot make a temporary cache directory");
	hgc_driver_opts_init(&o);
	o.threads = threads;
	o.disk_cache = false;
	hgc_driver_cache_clear();
	ms[0] = compile_once(g, &o, &src[0], d);
	o.disk_cache = true;
	o.cache_dir = dir;
	hgc_driver_cache_clear();
	compile_once(g, &o, &src[1], d);	/* compiles and writes the disk cache */
	hgc_driver_cache_clear();
	ms[1] = compile_once(g, &o, &src[1], d);
	ms[2] = compile_once(g, &o, &src[2], d);
	hgc_driver_cache_clear();
	for (i = 0; i < 3 && !rc; i++)
		if (ms[i] < 0 || src[i] != want[i])
			rc = hgc_error(d, NULL, "compile %d of 3 came from %s, not %s", i + 1,
				       hgc_driver_source_name(src[i]),
				       hgc_driver_source_name(want[i]));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		hgc_error(d, NULL, "cannot remove %s", dir);
	return rc;
}

const struct hgc_bench_peer hgc_bench_peer_hgc = {
	.name = "hgc",
	.prepare = {[HGC_BENCH_MATMUL] = prepare_matmul, [HGC_BENCH_CONV] = prepare_conv,
		    [HGC_BENCH_GRAPH] = prepare_graph},
	.begin = hgc_bench_omp_threads,
};

const struct hgc_bench_peer hgc_bench_peer_hgc_nofusion = {
	.name = "hgc_nofusion",
	.prepare = {[HGC_BENCH_GRAPH] = prepare_graph_nofusion},
	.begin = hgc_bench_omp_threads,
};
