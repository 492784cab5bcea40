/*
 * lower_check.h: helpers for the lowering tests (t/09x-*.c): building graphs
 * op by op, filling inputs, and checking a lowered, C-compiled graph against
 * the reference interpreter output by output.
 */
#ifndef HGC_T_LOWER_CHECK_H
#define HGC_T_LOWER_CHECK_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>

#include "core/codegen/codegen.h"
#include "core/graph/graph.h"
#include "core/lower/lower.h"
#include "core/tir/tir.h"
#include "t/tap.h"

/* How an input is filled. */
enum fill {
	F_UNIFORM,	/* floats in [-3, 3); ints over their range (s32: +-100000) */
	F_HALVES,	/* multiples of 0.25 in [-5, 5]: rounding ties */
	F_POS,		/* floats in [0.05, 4) */
	F_NAN,		/* uniform with a NaN every 7th element */
	F_NEAR1,	/* floats in [0.6, 1.4): products stay moderate */
	F_SMALL,	/* ints in [-5, 5] */
	F_WIDE,		/* s32 over its whole range */
};

/*
 * Modules built by cc link GCC's libgomp, which this binary may not (it can
 * get LLVM's libomp): load it for good before any module, or the first module
 * to load it unloads it on dlclose, idle threads and all (a crash, and a leak
 * of its constructor's memory under ASan).
 */
__attribute__((constructor)) static void lc_preload_gomp(void)
{
	if (!dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE))
		fprintf(stderr, "# cannot preload libgomp: %s\n", dlerror());
}

static uint32_t lc_seed = 2024;

/* A pseudo-random 24-bit number. */
static inline uint32_t lc_next(void)
{
	lc_seed = lc_seed * 1103515245u + 12345u;
	return (lc_seed >> 7) & 0xffffff;
}

/* A pseudo-random double in [lo, hi). */
static inline double lc_uniform(double lo, double hi)
{
	return lo + (hi - lo) * (double)lc_next() / 16777216.0;
}

/* A float value for fill mode how at element i. */
static inline double lc_float(enum fill how, int64_t i)
{
	switch (how) {
	case F_HALVES: return 0.25 * ((int)(lc_next() % 41) - 20);
	case F_POS: return lc_uniform(0.05, 4);
	case F_NAN: return i % 7 == 3 ? NAN : lc_uniform(-3, 3);
	case F_NEAR1: return lc_uniform(0.6, 1.4);
	default: return lc_uniform(-3, 3);
	}
}

/* An integer value of dtype dt for fill mode how. */
static inline double lc_int(enum hgc_dtype dt, enum fill how)
{
	if (how == F_SMALL)
		return (double)(lc_next() % 11) - 5;
	switch (dt) {
	case HGC_DT_S8: return (double)(lc_next() % 256) - 128;
	case HGC_DT_U8: return (double)(lc_next() % 256);
	case HGC_DT_BOOL: return lc_next() & 1;
	default:
		if (how == F_WIDE)
			return (double)(int32_t)((lc_next() << 8) ^ lc_next());
		return (double)(lc_next() % 200001) - 100000;
	}
}

/* Fill n elements of a dense buffer of type dt. */
static inline void lc_fill(enum hgc_dtype dt, void *p, int64_t n, enum fill how)
{
	int64_t i;

	for (i = 0; i < n; i++)
		hgc_store_f32(dt, p, i, (float)(dt == HGC_DT_F32 || dt == HGC_DT_BF16
							? lc_float(how, i) : lc_int(dt, how)));
}

/* Set attributes on an op. */
static inline void lc_attr_f(struct hgc_graph *g, struct hgc_op *op, const char *name, double v)
{
	struct hgc_attr a = { .name = name, .type = HGC_ATTR_FLOAT, .v.f = v };

	hgc_op_set_attr(g, op, &a);
}
static inline void lc_attr_i(struct hgc_graph *g, struct hgc_op *op, const char *name, int64_t v)
{
	struct hgc_attr a = { .name = name, .type = HGC_ATTR_INT, .v.i = v };

	hgc_op_set_attr(g, op, &a);
}
static inline void lc_attr_b(struct hgc_graph *g, struct hgc_op *op, const char *name, bool v)
{
	struct hgc_attr a = { .name = name, .type = HGC_ATTR_BOOL, .v.i = v };

	hgc_op_set_attr(g, op, &a);
}
static inline void lc_attr_s(struct hgc_graph *g, struct hgc_op *op, const char *name,
			     const char *v)
{
	struct hgc_attr a = { .name = name, .type = HGC_ATTR_STRING, .v.s = v };

	hgc_op_set_attr(g, op, &a);
}
static inline void lc_attr_ints(struct hgc_graph *g, struct hgc_op *op, const char *name, int n,
				const int64_t *v)
{
	struct hgc_attr a = { .name = name, .type = HGC_ATTR_INTS, .n = n, .v.ints = v };

	hgc_op_set_attr(g, op, &a);
}
static inline void lc_attr_floats(struct hgc_graph *g, struct hgc_op *op, const char *name,
				  int n, const double *v)
{
	struct hgc_attr a = { .name = name, .type = HGC_ATTR_FLOATS, .n = n, .v.floats = v };

	hgc_op_set_attr(g, op, &a);
}

#define LC_INTS(...) (sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ }

/* A graph input with dims given as a list. */
static inline struct hgc_tensor *lc_input(struct hgc_graph *g, const char *name, enum hgc_dtype dt,
					  int nd, const int64_t *dims)
{
	return hgc_graph_add_input(g, name, dt, nd, dims, HGC_PROP_VARIABLE, NULL);
}

/* A new op over nin inputs, with output type dt (UNDEF: inferred). */
static inline struct hgc_op *lc_op(struct hgc_graph *g, enum hgc_op_kind k, enum hgc_dtype dt,
				   int nin, ...)
{
	struct hgc_tensor *in[8];
	va_list ap;
	int i;

	va_start(ap, nin);
	for (i = 0; i < nin; i++)
		in[i] = va_arg(ap, struct hgc_tensor *);
	va_end(ap);
	return hgc_graph_add_op(g, k, nin, in, dt, NULL);
}

/* Finish an op (its attributes set) and make its output a graph output. */
static inline struct hgc_tensor *lc_out(struct hgc_graph *g, struct hgc_op *op)
{
	struct hgc_diag d;

	hgc_diag_init(&d);
	if (hgc_graph_finish_op(g, op, &d)) {
		diag("%s", hgc_diag_text(&d));
		hgc_bug("test graph: %s does not infer", hgc_op_table[op->kind].name);
	}
	hgc_diag_release(&d);
	hgc_graph_add_output(g, op->out[0]);
	return op->out[0];
}

/* Tolerances of a check: f32 |got - want| <= rtol |want| + atol; bf16 adds one
   bf16 step; integers differ by at most islack. */
struct lc_tol {
	double rtol, atol;
	int64_t islack;
};

/* Does got match want for dtype dt? */
static inline bool lc_close(enum hgc_dtype dt, const void *got, const void *want, int64_t i,
			    const struct lc_tol *t)
{
	double g = hgc_load_f32(dt, got, i), w = hgc_load_f32(dt, want, i);

	if (isnan(w) || isnan(g))
		return isnan(w) && isnan(g);
	if (isinf(w) || isinf(g))
		return g == w;
	if (dt == HGC_DT_F32)
		return fabs(g - w) <= t->rtol * fabs(w) + t->atol;
	if (dt == HGC_DT_BF16 && (t->rtol > 0 || t->atol > 0))
		return fabs(g - w) <= (t->rtol + 1.0 / 128) * fabs(w) + t->atol;
	if (dt == HGC_DT_BF16)
		return g == w;
	return fabs(g - w) <= (double)t->islack;
}

/* Compare output k of g (n elements); one TAP line. */
static inline void lc_compare(const struct hgc_graph *g, size_t k, const void *got,
			      const void *want, const char *what, const struct lc_tol *t)
{
	const struct hgc_tensor *o = HGC_GRAPH_OUTPUT(g, k);
	int64_t i, n = hgc_tensor_nelems(o), bad = -1;

	for (i = 0; i < n && bad < 0; i++)
		if (!lc_close(o->dtype, got, want, i, t))
			bad = i;
	ok(bad < 0, "%s: output %zu (%s %s) matches the interpreter", what, k,
	   o->producer ? hgc_op_table[o->producer->kind].name : "input", hgc_dtype_name(o->dtype));
	if (bad >= 0)
		diag("element %lld: got %.9g, want %.9g", (long long)bad,
		     (double)hgc_load_f32(o->dtype, got, bad), (double)hgc_load_f32(o->dtype, want, bad));
}

/* Lower g and verify the module; NULL (with TAP failures) when a step fails. */
static inline struct hgc_tir_module *lc_lower(const struct hgc_graph *g, const char *what,
					      const struct hgc_lower_opts *opts)
{
	struct hgc_tir_module *m;
	struct hgc_diag d;

	hgc_diag_init(&d);
	m = hgc_lower_graph(g, opts, &d);
	ok(m != NULL, "%s: lowers", what);
	if (m && !ok(hgc_tir_verify(m, &d) == 0, "%s: the module verifies", what)) {
		hgc_tir_print_module(stdout, m);
		hgc_tir_module_free(m);
		m = NULL;
	}
	if (d.nerr)
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return m;
}

/* The LLVM backend's pipeline: O0 by default (the lowering's numbers are the
   point, and O3 takes seconds per module); a test may set NULL (O3). */
static struct hgc_codegen_llvm_opts lc_llvm_opts = { .passes = "default<O0>" };

/* Compile m with the C backend (llvm false) or the LLVM one; NULL with a failure. */
static inline struct hgc_compiled *lc_compile(const struct hgc_tir_module *m, const char *what,
					      bool llvm)
{
	struct hgc_compiled *c;
	struct hgc_diag d;

	hgc_diag_init(&d);
	c = llvm ? hgc_codegen_llvm_compile(m, &lc_llvm_opts, &d) : hgc_codegen_c_compile(m, NULL, &d);
	ok(c != NULL, "%s: compiles", what);
	if (d.nerr)
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return c;
}

/* Lower g, verify and compile it with the C backend; NULL when a step fails. */
static inline struct hgc_compiled *lc_build(const struct hgc_graph *g, const char *what,
					    const struct hgc_lower_opts *opts)
{
	struct hgc_tir_module *m = lc_lower(g, what, opts);
	struct hgc_compiled *c = m ? lc_compile(m, what, false) : NULL;

	hgc_tir_module_free(m);
	return c;
}

/* Buffers for every input and output of g. */
struct lc_bufs {
	size_t nin, nout;
	void **in, **got, **want;
};

/* Allocate and fill the inputs (modes per input, NULL: uniform), allocate outputs. */
static inline void lc_bufs_init(struct lc_bufs *b, const struct hgc_graph *g,
				const enum fill *modes)
{
	size_t i;

	b->nin = g->inputs.len;
	b->nout = g->outputs.len;
	b->in = calloc(b->nin + 1, sizeof(void *));
	b->got = calloc(b->nout + 1, sizeof(void *));
	b->want = calloc(b->nout + 1, sizeof(void *));
	for (i = 0; i < b->nin; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_INPUT(g, i);

		b->in[i] = calloc(hgc_tensor_nbytes(t) + 1, 1);
		lc_fill(t->dtype, b->in[i], hgc_tensor_nelems(t), modes ? modes[i] : F_UNIFORM);
	}
	for (i = 0; i < b->nout; i++) {
		size_t n = hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, i)) + 1;

		b->got[i] = calloc(n, 1);
		b->want[i] = calloc(n, 1);
		memset(b->got[i], 0x5a, n);
	}
}

/* Free the buffers. */
static inline void lc_bufs_release(struct lc_bufs *b)
{
	size_t i;

	for (i = 0; i < b->nin; i++)
		free(b->in[i]);
	for (i = 0; i < b->nout; i++) {
		free(b->got[i]);
		free(b->want[i]);
	}
	free(b->in);
	free(b->got);
	free(b->want);
}

/* Run compiled c on the buffers: inputs, then outputs. */
static inline void lc_run(struct hgc_compiled *c, struct lc_bufs *b)
{
	void **args = calloc(b->nin + b->nout + 1, sizeof(void *));
	size_t i;

	for (i = 0; i < b->nin; i++)
		args[i] = b->in[i];
	for (i = 0; i < b->nout; i++)
		args[b->nin + i] = b->got[i];
	hgc_codegen_run(c, args);
	free(args);
}

/* Run the interpreter into want; false (with a failure) if it fails. */
static inline bool lc_interp(const struct hgc_graph *g, struct lc_bufs *b, const char *what)
{
	struct hgc_diag d;
	int r;

	hgc_diag_init(&d);
	r = hgc_interp_run(g, (const void *const *)b->in, b->want, &d);
	if (r)
		ok(0, "%s: the interpreter runs: %s", what, hgc_diag_text(&d));
	hgc_diag_release(&d);
	return r == 0;
}

/* Run c on b's inputs and compare every output with the interpreter's. */
static inline void lc_run_compare(const struct hgc_graph *g, struct hgc_compiled *c,
				  struct lc_bufs *b, const char *what, const struct lc_tol *tol)
{
	size_t k;

	for (k = 0; k < b->nout; k++)
		memset(b->got[k], 0x5a, hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, k)));
	lc_run(c, b);
	for (k = 0; k < b->nout; k++)
		lc_compare(g, k, b->got[k], b->want[k], what, tol);
}

/* The whole check: lower, verify, compile with both backends, run, compare every output. */
static inline void lc_check(struct hgc_graph *g, const char *what, const enum fill *modes,
			    struct lc_tol tol)
{
	struct hgc_tir_module *m = lc_lower(g, what, NULL);
	struct hgc_compiled *c;
	struct lc_bufs b;
	char name[256];
	int llvm;

	lc_bufs_init(&b, g, modes);
	if (m && lc_interp(g, &b, what)) {
		for (llvm = 0; llvm < 2; llvm++) {
			snprintf(name, sizeof(name), "%s (%s)", what,
				 !llvm ? "C" : lc_llvm_opts.passes ? lc_llvm_opts.passes : "LLVM O3");
			c = lc_compile(m, name, llvm);
			if (c)
				lc_run_compare(g, c, &b, name, &tol);
			hgc_codegen_free(c);
		}
	}
	hgc_tir_module_free(m);
	lc_bufs_release(&b);
	hgc_graph_free(g);
}

#define LC_TOL(r, a, s) ((struct lc_tol){ (r), (a), (s) })

#endif
