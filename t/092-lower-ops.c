/*
 * 092-lower-ops: the op kinds t/090-lower.c leaves out (pooling, data
 * movement, quantization, MatMul, Convolution) lowered from graphs to the
 * Tensor IR, verified, compiled by the C backend and by the LLVM one (O0,
 * or O3 for the tunable ops) and run against the reference interpreter.
 * Integers must match exactly; f32 within 1e-5 relative plus a small
 * absolute term where sums cancel.
 */
#include "t/lower_check.h"

#define F32 HGC_DT_F32
#define BF16 HGC_DT_BF16
#define S32 HGC_DT_S32
#define S8 HGC_DT_S8
#define U8 HGC_DT_U8

/* A pooling op with its window attributes. */
static void pool(struct hgc_graph *g, enum hgc_op_kind k, struct hgc_tensor *x, const char *fmt,
		 int64_t kern, int64_t stride, int64_t pad, int64_t dil, const char *rounding,
		 int exclude)
{
	struct hgc_op *op = lc_op(g, k, HGC_DT_UNDEF, 1, x);

	lc_attr_ints(g, op, "kernel", LC_INTS(kern, kern));
	lc_attr_ints(g, op, "strides", LC_INTS(stride, stride));
	lc_attr_ints(g, op, "pads_begin", LC_INTS(pad, 0));
	lc_attr_ints(g, op, "pads_end", LC_INTS(pad, pad));
	lc_attr_s(g, op, "data_format", fmt);
	lc_attr_s(g, op, "rounding_type", rounding);
	if (k == HGC_OP_MAX_POOL)
		lc_attr_ints(g, op, "dilations", LC_INTS(dil, 1));
	else
		lc_attr_b(g, op, "exclude_pad", exclude);
	lc_out(g, op);
}

/* MaxPool and AvgPool: formats, padding, ceil rounding, dilation, int8. */
static void test_pool(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(2, 3, 13, 11));
	struct hgc_tensor *n = lc_input(g, "n", F32, LC_INTS(1, 13, 11, 3));
	struct hgc_tensor *q = lc_input(g, "q", S8, LC_INTS(1, 3, 13, 11));
	struct hgc_tensor *u = lc_input(g, "u", U8, LC_INTS(1, 9, 7, 5));
	static const enum fill modes[] = { F_UNIFORM, F_NAN, F_UNIFORM, F_UNIFORM };

	pool(g, HGC_OP_MAX_POOL, x, "NCX", 3, 2, 1, 1, "ceil", 0);
	pool(g, HGC_OP_MAX_POOL, x, "NCX", 2, 1, 0, 2, "floor", 0);
	pool(g, HGC_OP_AVG_POOL, x, "NCX", 3, 2, 1, 1, "ceil", 0);
	pool(g, HGC_OP_AVG_POOL, x, "NCX", 3, 2, 1, 1, "ceil", 1);
	pool(g, HGC_OP_MAX_POOL, n, "NXC", 3, 3, 1, 1, "floor", 0);
	pool(g, HGC_OP_AVG_POOL, n, "NXC", 2, 2, 1, 1, "floor", 1);
	pool(g, HGC_OP_MAX_POOL, q, "NCX", 3, 2, 1, 1, "ceil", 0);
	pool(g, HGC_OP_AVG_POOL, q, "NCX", 3, 2, 1, 1, "ceil", 0);
	pool(g, HGC_OP_AVG_POOL, u, "NXC", 2, 2, 1, 1, "ceil", 1);
	lc_check(g, "pool", modes, LC_TOL(1e-5, 1e-6, 0));
}

/* Transpose, reshape, reorder, concat and select on several types. */
static void test_shape(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(3, 13, 5));
	struct hgc_tensor *q = lc_input(g, "q", S8, LC_INTS(3, 2, 5));
	struct hgc_tensor *r = lc_input(g, "r", S8, LC_INTS(3, 1, 5));
	struct hgc_tensor *q2 = lc_input(g, "q2", S8, LC_INTS(3, 13, 5));
	struct hgc_tensor *c = lc_input(g, "c", HGC_DT_BOOL, LC_INTS(13, 1));
	struct hgc_tensor *e = lc_input(g, "e", F32, LC_INTS(1));
	struct hgc_tensor *h = lc_input(g, "h", BF16, LC_INTS(13, 5));
	struct hgc_op *op;

	op = lc_op(g, HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, x);
	lc_attr_ints(g, op, "order", LC_INTS(2, 0, -2));
	lc_out(g, op);
	op = lc_op(g, HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, q2);
	lc_attr_ints(g, op, "order", LC_INTS(1, 2, 0));
	lc_out(g, op);
	op = lc_op(g, HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, x);
	lc_attr_ints(g, op, "shape", LC_INTS(5, -1));
	lc_attr_b(g, op, "special_zero", false);
	lc_out(g, op);
	op = lc_op(g, HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, h);
	lc_attr_ints(g, op, "shape", LC_INTS(0, 1, 5));
	lc_attr_b(g, op, "special_zero", true);
	lc_out(g, op);
	lc_out(g, lc_op(g, HGC_OP_REORDER, HGC_DT_UNDEF, 1, q));
	op = lc_op(g, HGC_OP_CONCAT, HGC_DT_UNDEF, 3, q, q2, r);
	lc_attr_i(g, op, "axis", -2);
	lc_out(g, op);
	op = lc_op(g, HGC_OP_CONCAT, HGC_DT_UNDEF, 2, h, h);
	lc_attr_i(g, op, "axis", 0);
	lc_out(g, op);
	lc_out(g, lc_op(g, HGC_OP_SELECT, HGC_DT_UNDEF, 3, c, x, e));
	lc_out(g, lc_op(g, HGC_OP_SELECT, HGC_DT_UNDEF, 3, c, h, h));
	lc_check(g, "shape", NULL, LC_TOL(0, 0, 0));
}

/* A Quantize or Dequantize op. */
static struct hgc_tensor *quant(struct hgc_graph *g, enum hgc_op_kind k, struct hgc_tensor *x,
				enum hgc_dtype dt, int axis, int n, const double *scales,
				const int64_t *zps)
{
	struct hgc_op *op = lc_op(g, k, dt, 1, x);

	if (axis != 99) {
		lc_attr_s(g, op, "qtype", "per_channel");
		lc_attr_i(g, op, "axis", axis);
	}
	lc_attr_floats(g, op, "scales", n, scales);
	if (zps)
		lc_attr_ints(g, op, "zps", n, zps);
	return lc_out(g, op);
}

/* Quantize and Dequantize per tensor and per channel, and TypeCast both ways. */
static void test_quant(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(3, 13));
	struct hgc_tensor *y = lc_input(g, "y", F32, LC_INTS(2, 3, 5));
	struct hgc_tensor *u = lc_input(g, "u", U8, LC_INTS(13));
	struct hgc_tensor *s = lc_input(g, "s", S8, LC_INTS(2, 3, 5));
	struct hgc_tensor *w = lc_input(g, "w", S32, LC_INTS(7));
	struct hgc_tensor *h = lc_input(g, "h", BF16, LC_INTS(7));
	struct hgc_tensor *big = lc_input(g, "big", F32, LC_INTS(97));
	static const enum fill modes[] = { F_HALVES, F_UNIFORM, F_UNIFORM, F_UNIFORM,
					   F_UNIFORM, F_UNIFORM, F_NAN };
	static const double sc3[] = { 0.25, 0.5, 1.0 }, half[] = { 0.5 };
	static const int64_t z3[] = { -3, 0, 5 }, z10[] = { 10 }, zu3[] = { 0, 7, 200 };
	enum hgc_dtype to[] = { S8, U8, S32, BF16 };
	size_t i;

	quant(g, HGC_OP_QUANTIZE, x, U8, 99, 1, half, z10);
	quant(g, HGC_OP_QUANTIZE, x, S8, 99, 1, (double[]){ 0.03125 }, NULL);
	quant(g, HGC_OP_QUANTIZE, y, S8, 1, 3, sc3, z3);
	quant(g, HGC_OP_QUANTIZE, y, U8, -2, 3, sc3, zu3);
	quant(g, HGC_OP_DEQUANTIZE, u, F32, 99, 1, half, z10);
	quant(g, HGC_OP_DEQUANTIZE, s, F32, 1, 3, sc3, z3);
	quant(g, HGC_OP_DEQUANTIZE, w, F32, 99, 1, (double[]){ 0.125 }, NULL);
	for (i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
		lc_out(g, lc_op(g, HGC_OP_TYPE_CAST, to[i], 1, x));
		lc_out(g, lc_op(g, HGC_OP_TYPE_CAST, to[i], 1, big));
	}
	lc_out(g, lc_op(g, HGC_OP_TYPE_CAST, F32, 1, u));
	lc_out(g, lc_op(g, HGC_OP_TYPE_CAST, F32, 1, s));
	lc_out(g, lc_op(g, HGC_OP_TYPE_CAST, F32, 1, w));
	lc_out(g, lc_op(g, HGC_OP_TYPE_CAST, F32, 1, h));
	lc_check(g, "quant", modes, LC_TOL(0, 0, 0));
}

/* Quantize with a scale no binary fraction holds: x / scale in f32 can land
   on the other side of a tie than in double, by one step at most. */
static void test_quant_inexact(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(97));

	quant(g, HGC_OP_QUANTIZE, x, S8, 99, 1, (double[]){ 0.1 }, (int64_t[]){ 3 });
	quant(g, HGC_OP_DEQUANTIZE, quant(g, HGC_OP_QUANTIZE, x, U8, 99, 1, (double[]){ 0.07 },
					  (int64_t[]){ 128 }),
	      F32, 99, 1, (double[]){ 0.07 }, (int64_t[]){ 128 });
	lc_check(g, "quant inexact", NULL, LC_TOL(1e-6, 0, 1));
}

/* A MatMul with transposes. */
static struct hgc_tensor *matmul(struct hgc_graph *g, struct hgc_tensor *a, struct hgc_tensor *b,
				 struct hgc_tensor *bias, enum hgc_dtype dt, bool ta, bool tb)
{
	struct hgc_op *op = bias ? lc_op(g, HGC_OP_MATMUL, dt, 3, a, b, bias)
				 : lc_op(g, HGC_OP_MATMUL, dt, 2, a, b);

	lc_attr_b(g, op, "transpose_a", ta);
	lc_attr_b(g, op, "transpose_b", tb);
	return lc_out(g, op);
}

/* MatMul on f32 and bf16: bias, transposes, broadcast batches, 1-D operands. */
static void test_matmul_float(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *a = lc_input(g, "a", F32, LC_INTS(13, 97));
	struct hgc_tensor *b = lc_input(g, "b", F32, LC_INTS(97, 3));
	struct hgc_tensor *bias = lc_input(g, "bias", F32, LC_INTS(3));
	struct hgc_tensor *at = lc_input(g, "at", F32, LC_INTS(97, 13));
	struct hgc_tensor *bt = lc_input(g, "bt", F32, LC_INTS(3, 97));
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(2, 1, 3, 13));
	struct hgc_tensor *y = lc_input(g, "y", F32, LC_INTS(4, 13, 5));
	struct hgc_tensor *bx = lc_input(g, "bx", F32, LC_INTS(4, 1, 5));
	struct hgc_tensor *v = lc_input(g, "v", F32, LC_INTS(13));
	struct hgc_tensor *ha = lc_input(g, "ha", BF16, LC_INTS(5, 13));
	struct hgc_tensor *hb = lc_input(g, "hb", BF16, LC_INTS(13, 7));

	matmul(g, a, b, bias, HGC_DT_UNDEF, false, false);
	matmul(g, at, bt, NULL, HGC_DT_UNDEF, true, true);
	matmul(g, a, bt, bias, HGC_DT_UNDEF, false, true);
	matmul(g, x, y, bx, HGC_DT_UNDEF, false, false);
	matmul(g, v, y, NULL, HGC_DT_UNDEF, false, false);
	matmul(g, x, v, NULL, HGC_DT_UNDEF, false, false);
	matmul(g, v, v, NULL, HGC_DT_UNDEF, false, false);
	matmul(g, ha, hb, NULL, HGC_DT_UNDEF, false, false);
	lc_check(g, "matmul float", NULL, LC_TOL(1e-5, 2e-5, 0));
}

/* int8 MatMul: u8 x s8 and s8 x s8 into s32 (with s32 bias) or f32 (with f32 bias). */
static void test_matmul_int(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *a = lc_input(g, "a", U8, LC_INTS(13, 97));
	struct hgc_tensor *b = lc_input(g, "b", S8, LC_INTS(97, 5));
	struct hgc_tensor *bi = lc_input(g, "bi", S32, LC_INTS(5));
	struct hgc_tensor *bf = lc_input(g, "bf", F32, LC_INTS(1, 5));
	struct hgc_tensor *s = lc_input(g, "s", S8, LC_INTS(3, 13, 97));
	static const enum fill modes[] = { F_UNIFORM, F_UNIFORM, F_UNIFORM, F_HALVES, F_UNIFORM };

	matmul(g, a, b, bi, HGC_DT_UNDEF, false, false);
	matmul(g, a, b, bf, F32, false, false);
	matmul(g, s, b, NULL, HGC_DT_UNDEF, false, false);
	matmul(g, b, a, NULL, HGC_DT_UNDEF, true, true);
	lc_check(g, "matmul int", modes, LC_TOL(0, 0, 0));
}

/* A Convolution. */
static void conv(struct hgc_graph *g, struct hgc_tensor *x, struct hgc_tensor *w,
		 struct hgc_tensor *bias, enum hgc_dtype dt, const char *df, const char *wf,
		 int64_t groups, int64_t stride, int64_t pad, int64_t dil)
{
	struct hgc_op *op = bias ? lc_op(g, HGC_OP_CONVOLUTION, dt, 3, x, w, bias)
				 : lc_op(g, HGC_OP_CONVOLUTION, dt, 2, x, w);

	lc_attr_ints(g, op, "strides", LC_INTS(stride, 1));
	lc_attr_ints(g, op, "pads_begin", LC_INTS(pad, pad));
	lc_attr_ints(g, op, "pads_end", LC_INTS(0, pad));
	lc_attr_ints(g, op, "dilations", LC_INTS(1, dil));
	lc_attr_i(g, op, "groups", groups);
	lc_attr_s(g, op, "data_format", df);
	lc_attr_s(g, op, "weights_format", wf);
	lc_out(g, op);
}

/* Convolution: NCX/OIX with groups and stride, NXC/XIO with dilation, int8. */
static void test_conv(void)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *x = lc_input(g, "x", F32, LC_INTS(2, 4, 9, 7));
	struct hgc_tensor *w = lc_input(g, "w", F32, LC_INTS(6, 2, 3, 3));
	struct hgc_tensor *b6 = lc_input(g, "b6", F32, LC_INTS(6));
	struct hgc_tensor *n = lc_input(g, "n", F32, LC_INTS(1, 9, 7, 3));
	struct hgc_tensor *k = lc_input(g, "k", F32, LC_INTS(3, 2, 3, 5));
	struct hgc_tensor *q = lc_input(g, "q", U8, LC_INTS(1, 3, 7, 5));
	struct hgc_tensor *qw = lc_input(g, "qw", S8, LC_INTS(4, 3, 3, 1));
	struct hgc_tensor *qb = lc_input(g, "qb", S32, LC_INTS(4));

	conv(g, x, w, b6, HGC_DT_UNDEF, "NCX", "OIX", 2, 2, 1, 1);
	conv(g, n, k, NULL, HGC_DT_UNDEF, "NXC", "XIO", 1, 1, 1, 2);
	conv(g, q, qw, qb, HGC_DT_UNDEF, "NCX", "OIX", 1, 1, 1, 1);
	lc_check(g, "conv", NULL, LC_TOL(1e-5, 2e-5, 0));
}

int main(void)
{
	test_pool();
	test_shape();
	test_quant();
	lc_llvm_opts.passes = NULL;	/* O3 where it compiles fast */
	test_quant_inexact();
	test_matmul_float();
	test_matmul_int();
	test_conv();
	return done_testing();
}
