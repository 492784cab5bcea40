/*
 * 090-lower: the elementwise, binary, reduction and normalization op kinds
 * lowered from graphs to the Tensor IR, verified, compiled by the C backend
 * and by the LLVM one (O0) and run against the reference interpreter: odd
 * sizes, broadcasting, negative axes, scalars, bf16, NaN, rounding ties.
 * Integers must match exactly (but for the f32 functions the interpreter
 * rounds from double); f32 within 1e-5 relative plus a small absolute term
 * where sums cancel.  Several ops share one graph to keep the compiler runs
 * few; t/092-lower-ops.c has the other op kinds.
 */
#include "t/lower_check.h"

#define F32 HGC_DT_F32
#define BF16 HGC_DT_BF16
#define S32 HGC_DT_S32
#define S8 HGC_DT_S8
#define U8 HGC_DT_U8

/* One unary op on x with up to two float attributes (NULL names: none). */
static struct hgc_tensor *unary(struct hgc_graph *g, enum hgc_op_kind k, struct hgc_tensor *x,
				const char *a, double av, const char *b, double bv)
{
	struct hgc_op *op = lc_op(g, k, HGC_DT_UNDEF, 1, x);

	if (a)
		lc_attr_f(g, op, a, av);
	if (b)
		lc_attr_f(g, op, b, bv);
	return lc_out(g, op);
}

/* The f32 unary functions on [-3, 3], the positive-only ones on (0, 4), Round on ties. */
static void test_unary_f32(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(3, 13));
	struct hgc_tensor *p = lc_input(g, "p", F32, LC_INTS(97));
	struct hgc_tensor *h = lc_input(g, "h", F32, LC_INTS(1, 97));
	static const enum fill modes[] = { F_UNIFORM, F_POS, F_HALVES };
	static const enum hgc_op_kind plain[] = {
		HGC_OP_RELU, HGC_OP_SIGMOID, HGC_OP_TANH, HGC_OP_HARD_SWISH, HGC_OP_MISH,
		HGC_OP_EXP, HGC_OP_SQUARE, HGC_OP_ABS, HGC_OP_RECIPROCAL, HGC_OP_ROUND,
		HGC_OP_ERF,
	};
	struct hgc_op *op;
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		unary(g, plain[i], x, NULL, 0, NULL, 0);
	unary(g, HGC_OP_LEAKY_RELU, x, "alpha", 0.1, NULL, 0);
	unary(g, HGC_OP_ELU, x, "alpha", 0.7, NULL, 0);
	unary(g, HGC_OP_HARD_SIGMOID, x, "alpha", 0.2, "beta", 0.5);
	unary(g, HGC_OP_SOFT_PLUS, x, NULL, 0, NULL, 0);
	unary(g, HGC_OP_SOFT_PLUS, x, "beta", 2.5, NULL, 0);
	unary(g, HGC_OP_CLAMP, x, "min", -0.5, "max", 1.25);
	unary(g, HGC_OP_GELU, x, NULL, 0, NULL, 0);
	op = lc_op(g, HGC_OP_GELU, HGC_DT_UNDEF, 1, x);
	lc_attr_s(g, op, "mode", "gelu_tanh");
	lc_out(g, op);
	unary(g, HGC_OP_LOG, p, NULL, 0, NULL, 0);
	unary(g, HGC_OP_SQRT, p, NULL, 0, NULL, 0);
	unary(g, HGC_OP_POW, p, "beta", 1.7, NULL, 0);
	unary(g, HGC_OP_POW, x, "beta", 3, NULL, 0);
	unary(g, HGC_OP_ROUND, h, NULL, 0, NULL, 0);
	unary(g, HGC_OP_ELU, h, "alpha", 1.0, NULL, 0);
	unary(g, HGC_OP_RELU, h, NULL, 0, NULL, 0);
	lc_check(g, "unary f32", modes, LC_TOL(1e-5, 1e-6, 0));
}

/* Unary ops on integers: exact ones (saturating), and f32 ones rounded half to even. */
static void test_unary_int(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", S8, LC_INTS(13, 3));
	struct hgc_tensor *u = lc_input(g, "u", U8, LC_INTS(97));
	struct hgc_tensor *w = lc_input(g, "w", S32, LC_INTS(5, 7));
	static const enum fill modes[] = { F_UNIFORM, F_UNIFORM, F_WIDE };
	static const enum hgc_op_kind exact[] = {
		HGC_OP_RELU, HGC_OP_ABS, HGC_OP_SQUARE, HGC_OP_ROUND,
	};
	size_t i;

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		unary(g, exact[i], x, NULL, 0, NULL, 0);
		unary(g, exact[i], u, NULL, 0, NULL, 0);
		unary(g, exact[i], w, NULL, 0, NULL, 0);
	}
	unary(g, HGC_OP_CLAMP, x, "min", -3.5, "max", 100.2);
	unary(g, HGC_OP_CLAMP, u, "min", 2.5, "max", 1000);
	unary(g, HGC_OP_CLAMP, w, "min", -1e12, "max", 5.5);
	unary(g, HGC_OP_LEAKY_RELU, x, "alpha", 0.5, NULL, 0);
	unary(g, HGC_OP_HARD_SIGMOID, x, "alpha", 0.25, "beta", 0.5);
	unary(g, HGC_OP_RECIPROCAL, x, NULL, 0, NULL, 0);
	lc_check(g, "unary int", modes, LC_TOL(0, 0, 0));
}

/* Binary ops broadcasting f32 and bf16, NaN for Maximum and Minimum, a scalar operand. */
static void test_binary_float(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *a = lc_input(g, "a", F32, LC_INTS(3, 1, 13));
	struct hgc_tensor *b = lc_input(g, "b", F32, LC_INTS(4, 13));
	struct hgc_tensor *n = lc_input(g, "n", F32, LC_INTS(4, 13));
	struct hgc_tensor *s = lc_input(g, "s", F32, 0, NULL);
	struct hgc_tensor *h = lc_input(g, "h", BF16, LC_INTS(13));
	struct hgc_tensor *h2 = lc_input(g, "h2", BF16, LC_INTS(4, 1));
	static const enum fill modes[] = { F_UNIFORM, F_UNIFORM, F_NAN, F_UNIFORM, F_UNIFORM,
					   F_UNIFORM };
	enum hgc_op_kind k;

	for (k = HGC_OP_ADD; k <= HGC_OP_MINIMUM; k++) {
		lc_out(g, lc_op(g, k, HGC_DT_UNDEF, 2, a, b));
		lc_out(g, lc_op(g, k, HGC_DT_UNDEF, 2, h, h2));
	}
	lc_out(g, lc_op(g, HGC_OP_MAXIMUM, HGC_DT_UNDEF, 2, n, a));
	lc_out(g, lc_op(g, HGC_OP_MINIMUM, HGC_DT_UNDEF, 2, a, n));
	lc_out(g, lc_op(g, HGC_OP_ADD, HGC_DT_UNDEF, 2, s, a));
	lc_out(g, lc_op(g, HGC_OP_MULTIPLY, HGC_DT_UNDEF, 2, s, s));
	lc_out(g, lc_op(g, HGC_OP_SUBTRACT, HGC_DT_UNDEF, 2, b, h));
	lc_check(g, "binary float", modes, LC_TOL(0, 0, 0));
}

/* Binary ops on integers: saturation, division rounding half to even and by zero. */
static void test_binary_int(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *a = lc_input(g, "a", S8, LC_INTS(7, 13));
	struct hgc_tensor *b = lc_input(g, "b", S8, LC_INTS(13));
	struct hgc_tensor *c = lc_input(g, "c", S8, LC_INTS(7, 1));
	struct hgc_tensor *u = lc_input(g, "u", U8, LC_INTS(97));
	struct hgc_tensor *v = lc_input(g, "v", U8, LC_INTS(97));
	struct hgc_tensor *w = lc_input(g, "w", S32, LC_INTS(3, 5));
	struct hgc_tensor *z = lc_input(g, "z", S32, LC_INTS(5));
	static const enum fill modes[] = { F_UNIFORM, F_UNIFORM, F_SMALL, F_UNIFORM, F_UNIFORM,
					   F_WIDE, F_SMALL };
	enum hgc_op_kind k;

	for (k = HGC_OP_ADD; k <= HGC_OP_MINIMUM; k++) {
		lc_out(g, lc_op(g, k, HGC_DT_UNDEF, 2, a, b));
		lc_out(g, lc_op(g, k, HGC_DT_UNDEF, 2, u, v));
		lc_out(g, lc_op(g, k, HGC_DT_UNDEF, 2, w, z));
	}
	lc_out(g, lc_op(g, HGC_OP_DIVIDE, HGC_DT_UNDEF, 2, a, c));
	lc_out(g, lc_op(g, HGC_OP_DIVIDE, HGC_DT_UNDEF, 2, z, w));
	lc_check(g, "binary int", modes, LC_TOL(0, 0, 0));
}

/* One reduction of x over axes. */
static void reduce(struct hgc_graph *g, enum hgc_op_kind k, struct hgc_tensor *x, bool keep,
		   int n, const int64_t *axes)
{
	struct hgc_op *op = lc_op(g, k, HGC_DT_UNDEF, 1, x);

	lc_attr_ints(g, op, "axes", n, axes);
	lc_attr_b(g, op, "keep_dims", keep);
	lc_out(g, op);
}

/* Every reduction on f32 (with negative axes, keep_dims, down to a scalar) and bf16. */
static void test_reduce_float(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(3, 13, 5));
	struct hgc_tensor *p = lc_input(g, "p", F32, LC_INTS(3, 13, 5));
	struct hgc_tensor *h = lc_input(g, "h", BF16, LC_INTS(13, 3));
	static const enum fill modes[] = { F_UNIFORM, F_NEAR1, F_UNIFORM };

	reduce(g, HGC_OP_REDUCE_SUM, x, false, LC_INTS(1));
	reduce(g, HGC_OP_REDUCE_MEAN, x, true, LC_INTS(0, -1));
	reduce(g, HGC_OP_REDUCE_MAX, x, false, LC_INTS(-1));
	reduce(g, HGC_OP_REDUCE_MIN, x, true, LC_INTS(0));
	reduce(g, HGC_OP_REDUCE_PROD, p, false, LC_INTS(1));
	reduce(g, HGC_OP_REDUCE_L1, x, false, LC_INTS(0, 1, 2));
	reduce(g, HGC_OP_REDUCE_L2, x, true, LC_INTS(2));
	reduce(g, HGC_OP_REDUCE_SUM, h, false, LC_INTS(0));
	reduce(g, HGC_OP_REDUCE_MAX, h, true, LC_INTS(1));
	lc_check(g, "reduce float", modes, LC_TOL(1e-5, 2e-5, 0));
}

/* Every reduction on integers: exact sums and products (saturating), rounded means. */
static void test_reduce_int(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", S8, LC_INTS(3, 13, 5));
	struct hgc_tensor *s = lc_input(g, "s", S8, LC_INTS(3, 13, 5));
	struct hgc_tensor *u = lc_input(g, "u", U8, LC_INTS(97, 3));
	struct hgc_tensor *w = lc_input(g, "w", S32, LC_INTS(5, 4));
	static const enum fill modes[] = { F_UNIFORM, F_SMALL, F_UNIFORM, F_WIDE };

	reduce(g, HGC_OP_REDUCE_SUM, x, false, LC_INTS(1));
	reduce(g, HGC_OP_REDUCE_MEAN, x, false, LC_INTS(-1));
	reduce(g, HGC_OP_REDUCE_MEAN, s, true, LC_INTS(1, 2));
	reduce(g, HGC_OP_REDUCE_MAX, x, false, LC_INTS(0, 2));
	reduce(g, HGC_OP_REDUCE_MIN, x, false, LC_INTS(1));
	reduce(g, HGC_OP_REDUCE_PROD, s, false, LC_INTS(1));
	reduce(g, HGC_OP_REDUCE_PROD, x, false, LC_INTS(2));
	reduce(g, HGC_OP_REDUCE_L1, s, false, LC_INTS(2));
	reduce(g, HGC_OP_REDUCE_SUM, u, true, LC_INTS(0));
	reduce(g, HGC_OP_REDUCE_MEAN, u, false, LC_INTS(0));
	reduce(g, HGC_OP_REDUCE_SUM, w, false, LC_INTS(0));
	reduce(g, HGC_OP_REDUCE_MEAN, w, false, LC_INTS(1));
	reduce(g, HGC_OP_REDUCE_PROD, w, false, LC_INTS(1));
	lc_check(g, "reduce int", modes, LC_TOL(0, 0, 0));
}

/* ReduceL2 on integers: the root in f32 rounds like the interpreter's, nearly always. */
static void test_reduce_l2_int(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", S8, LC_INTS(3, 13));

	reduce(g, HGC_OP_REDUCE_L2, x, false, LC_INTS(1));
	lc_check(g, "reduce l2 int", NULL, LC_TOL(0, 0, 1));
}

/* SoftMax, LogSoftmax, LayerNorm, BatchNormInference, BiasAdd. */
static void test_norm(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(3, 13));
	struct hgc_tensor *y = lc_input(g, "y", F32, LC_INTS(3, 4, 13));
	struct hgc_tensor *gm = lc_input(g, "gamma", F32, LC_INTS(4, 13));
	struct hgc_tensor *bt = lc_input(g, "beta", F32, LC_INTS(4, 13));
	struct hgc_tensor *z = lc_input(g, "z", F32, LC_INTS(2, 3, 4, 5));
	struct hgc_tensor *c3 = lc_input(g, "c3", F32, LC_INTS(3));
	struct hgc_tensor *c5 = lc_input(g, "c5", F32, LC_INTS(5));
	struct hgc_tensor *v3 = lc_input(g, "v3", F32, LC_INTS(3));
	struct hgc_tensor *h = lc_input(g, "h", BF16, LC_INTS(5, 13));
	static const enum fill modes[] = { F_UNIFORM, F_UNIFORM, F_UNIFORM, F_UNIFORM,
					   F_UNIFORM, F_UNIFORM, F_UNIFORM, F_POS, F_UNIFORM };
	struct hgc_op *op;

	op = lc_op(g, HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, x);
	lc_out(g, op);
	op = lc_op(g, HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, y);
	lc_attr_i(g, op, "axis", 0);
	lc_out(g, op);
	lc_out(g, lc_op(g, HGC_OP_LOG_SOFTMAX, HGC_DT_UNDEF, 1, y));
	op = lc_op(g, HGC_OP_SOFTMAX, HGC_DT_UNDEF, 1, h);
	lc_attr_i(g, op, "axis", -1);
	lc_out(g, op);
	op = lc_op(g, HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 3, y, gm, bt);
	lc_attr_i(g, op, "begin_norm_axis", -2);
	lc_out(g, op);
	op = lc_op(g, HGC_OP_LAYER_NORM, HGC_DT_UNDEF, 1, y);
	lc_attr_b(g, op, "use_affine", false);
	lc_attr_f(g, op, "epsilon", 0.01);
	lc_out(g, op);
	op = lc_op(g, HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 5, z, c3, c3, c3, v3);
	lc_attr_f(g, op, "epsilon", 1e-3);
	lc_attr_s(g, op, "data_format", "NCX");
	lc_out(g, op);
	op = lc_op(g, HGC_OP_BATCH_NORM_INFERENCE, HGC_DT_UNDEF, 5, z, c5, c5, c5, c5);
	lc_attr_f(g, op, "epsilon", 1e-3);
	lc_out(g, lc_op(g, HGC_OP_RELU, HGC_DT_UNDEF, 1, lc_out(g, op)));
	lc_out(g, lc_op(g, HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, z, c5));
	op = lc_op(g, HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, z, c3);
	lc_attr_s(g, op, "data_format", "NCX");
	lc_out(g, op);
	lc_check(g, "norm", modes, LC_TOL(1e-5, 1e-6, 0));
}

/* BiasAdd on integers, with a saturating sum and an f32 bias. */
static void test_bias_int(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", S8, LC_INTS(3, 13));
	struct hgc_tensor *b = lc_input(g, "b", S8, LC_INTS(13));
	struct hgc_tensor *f = lc_input(g, "f", F32, LC_INTS(13));
	static const enum fill modes[] = { F_UNIFORM, F_UNIFORM, F_HALVES };

	lc_out(g, lc_op(g, HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, x, b));
	lc_out(g, lc_op(g, HGC_OP_BIAS_ADD, HGC_DT_UNDEF, 2, x, f));
	lc_check(g, "bias int", modes, LC_TOL(0, 0, 0));
}

int main(void)
{
	test_unary_f32();
	test_unary_int();
	test_binary_float();
	test_binary_int();
	test_reduce_float();
	test_reduce_int();
	test_reduce_l2_int();
	test_norm();
	test_bias_int();
	return done_testing();
}
