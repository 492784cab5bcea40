/*
 * 122-lowprec: the int8 conversion.  Dequantize -> MatMul/Convolution
 * becomes the integer op (s32 accumulation) with the zero-point
 * compensation in s32 and the scales after it; checked op by op and
 * against the interpreter on the f32 graph: f32 outputs within rounding
 * (the f32 graph rounds every dequantized value; atol covers sums near 0),
 * quantized outputs exactly or off by one at a rounding tie, counted.
 * Patterns it must not touch stay as they are.
 */
#include "t/passes_build.h"

#define I64(v) ((int64_t)(v))
#define F32 HGC_DT_F32

/* Set a FLOATS attribute. */
static void floats(struct hgc_op *op, const char *name, int n, const double *v)
{
	hgc_op_set_attr(pt.g, op, &(struct hgc_attr){.name = name, .type = HGC_ATTR_FLOATS, .n = n,
		.v.floats = v});
}

/* Dequantize(q) with scales, zero points (NULL: none) and a channel axis (-1 per tensor). */
static struct hgc_tensor *deq(struct hgc_tensor *q, int n, const double *scales,
			      const int64_t *zps, int axis)
{
	struct hgc_op *op = pt_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, q);

	floats(op, "scales", n, scales);
	if (zps)
		hgc_pb_ints(&pt.b, op, "zps", n, zps);
	if (axis >= 0) {
		hgc_pb_string(&pt.b, op, "qtype", "per_channel");
		hgc_pb_int(&pt.b, op, "axis", axis);
	}
	return pt_end(op);
}

/* Quantize(x) to dt, per tensor. */
static struct hgc_tensor *quant(struct hgc_tensor *x, enum hgc_dtype dt, double scale,
				int64_t zp)
{
	struct hgc_op *op = pt_op(HGC_OP_QUANTIZE, dt, 1, x);

	floats(op, "scales", 1, &scale);
	hgc_pb_ints(&pt.b, op, "zps", 1, &zp);
	return pt_end(op);
}

static const double wscales[5] = {0.01, 0.012, 0.008, 0.011, 0.009};

/* u8 x s8 per output channel, bias, ReLU, u8 out; the f32 MatMul result is an output too. */
static void mlp_layer(const void *wdata)
{
	struct hgc_tensor *xq, *wq, *h, *b;

	pt_new();
	xq = pt_var("xq", HGC_DT_U8, 2, I64(7), I64(64));
	wq = pt_const("wq", HGC_DT_S8, 2, I64(64), I64(5));
	b = pt_const("b", F32, 1, I64(5));
	wq->data = wdata;
	h = pt_end(pt_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 3,
			 deq(xq, 1, (const double[]){0.02}, (const int64_t[]){128}, -1),
			 deq(wq, 5, wscales, NULL, 1), b));
	h->name = "h";
	pt_out(quant(pt_un(HGC_OP_RELU, h), HGC_DT_U8, 0.05, 0));
	pt_out(h);
}

/* MatMuls: activation and weight zero points, per-channel scales, transposes, batches. */
static void test_matmul(void)
{
	struct hgc_tensor *xq, *wq, *h;
	struct hgc_op *op;

	mlp_layer(NULL);
	pt_check(hgc_pass_lowprec, NULL, 1,
		 "Dequantize Dequantize MatMul MatMul Multiply Subtract TypeCast Multiply Add "
		 "ReLU Quantize", 1e-5, 1e-4, true, "u8 x s8 per channel, bias");
	pt_new();
	xq = pt_var("xq", HGC_DT_S8, 3, I64(2), I64(3), I64(40));
	wq = pt_const("wq", HGC_DT_S8, 2, I64(6), I64(40));
	op = pt_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2,
		   deq(xq, 1, (const double[]){0.05}, (const int64_t[]){-7}, -1),
		   deq(wq, 1, (const double[]){0.004}, (const int64_t[]){3}, -1));
	hgc_pb_bool(&pt.b, op, "transpose_b", true);
	h = pt_end(op);
	pt_out(quant(h, HGC_DT_S8, 0.1, 4));
	pt_check(hgc_pass_lowprec, NULL, 1,
		 "Dequantize Dequantize MatMul MatMul Subtract Multiply Subtract MatMul Multiply "
		 "Subtract TypeCast Multiply Quantize", 1e-5, 1e-4, true,
		 "s8 x s8, both zero points, transpose_b, batched");
	pt_new();
	xq = pt_var("xq", HGC_DT_U8, 2, I64(16), I64(3));
	wq = pt_const("wq", HGC_DT_S8, 2, I64(16), I64(5));
	op = pt_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, deq(xq, 1, (const double[]){0.5}, NULL, -1),
		   deq(wq, 5, wscales, (const int64_t[]){1, -2, 3, 0, 5}, 1));
	hgc_pb_bool(&pt.b, op, "transpose_a", true);
	pt_out(pt_end(op));
	pt_check(hgc_pass_lowprec, NULL, 1,
		 "Dequantize Dequantize MatMul MatMul Multiply Subtract TypeCast Multiply", 1e-5,
		 1e-4, false, "transpose_a, per-channel weight zero points only");
}

/* A 4-D Convolution of x by w, with a bias unless b is NULL. */
static struct hgc_op *conv(struct hgc_tensor *x, struct hgc_tensor *w, struct hgc_tensor *b,
			   bool nxc)
{
	struct hgc_op *op = pt_op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, b ? 3 : 2, x, w, b);

	hgc_pb_ints(&pt.b, op, "strides", 2, (const int64_t[]){2, 1});
	hgc_pb_ints(&pt.b, op, "pads_begin", 2, (const int64_t[]){1, 0});
	hgc_pb_ints(&pt.b, op, "pads_end", 2, (const int64_t[]){1, 2});
	hgc_pb_ints(&pt.b, op, "dilations", 2, (const int64_t[]){1, 1});
	hgc_pb_string(&pt.b, op, "data_format", nxc ? "NXC" : "NCX");
	hgc_pb_string(&pt.b, op, "weights_format", nxc ? "XIO" : "OIX");
	return op;
}

/* Convolutions: padding with an activation zero point, both formats, groups. */
static void test_conv(void)
{
	struct hgc_tensor *xq, *wq, *b, *x, *w;
	struct hgc_op *op;

	pt_new();
	xq = pt_var("xq", HGC_DT_U8, 4, I64(2), I64(4), I64(5), I64(6));
	wq = pt_const("wq", HGC_DT_S8, 4, I64(4), I64(2), I64(3), I64(3));
	b = pt_const("b", F32, 1, I64(4));
	x = deq(xq, 1, (const double[]){0.03}, (const int64_t[]){100}, -1);
	w = deq(wq, 4, wscales, (const int64_t[]){0, 0, 0, 0}, 0);
	op = conv(x, w, b, false);
	hgc_pb_int(&pt.b, op, "groups", 2);
	pt_out(quant(pt_end(op), HGC_DT_U8, 0.1, 10));
	pt_check(hgc_pass_lowprec, NULL, 1,
		 "Dequantize Dequantize Convolution Convolution Multiply Subtract TypeCast "
		 "Multiply StaticReshape Add Quantize", 1e-5, 1e-4, true,
		 "u8 conv NCX, groups, padding with a zero point, bias");
	pt_new();
	xq = pt_var("xq", HGC_DT_S8, 4, I64(1), I64(5), I64(4), I64(3));
	wq = pt_const("wq", HGC_DT_S8, 4, I64(3), I64(3), I64(3), I64(5));
	x = deq(xq, 1, (const double[]){0.03}, NULL, -1);
	w = deq(wq, 5, wscales, NULL, 3);
	pt_out(pt_end(conv(x, w, NULL, true)));
	pt_check(hgc_pass_lowprec, NULL, 1, "Dequantize Dequantize Convolution TypeCast Multiply",
		 1e-5, 1e-4, false, "s8 conv NXC/XIO per output channel");
}

/* What the rewrite cannot express stays. */
static void test_untouched(void)
{
	struct hgc_tensor *xq, *wq, *x, *w;

	pt_new();
	xq = pt_var("xq", HGC_DT_U8, 2, I64(3), I64(4));
	wq = pt_const("wq", HGC_DT_S8, 2, I64(4), I64(5));
	pt_out(pt_bin(HGC_OP_MATMUL, deq(xq, 3, wscales, NULL, 0), deq(wq, 1, wscales, NULL, -1)));
	pt_out(pt_bin(HGC_OP_MATMUL, deq(xq, 1, wscales, NULL, -1), deq(wq, 4, wscales, NULL, 0)));
	x = pt_var("x", F32, 2, I64(3), I64(4));
	pt_out(pt_bin(HGC_OP_MATMUL, x, deq(wq, 1, wscales, NULL, -1)));
	pt_out(pt_bin(HGC_OP_MATMUL, deq(pt_var("s", HGC_DT_S32, 2, I64(3), I64(4)), 1, wscales,
					 NULL, -1), deq(wq, 1, wscales, NULL, -1)));
	pt_check(hgc_pass_lowprec, NULL, 0,
		 "Dequantize Dequantize MatMul Dequantize Dequantize MatMul Dequantize MatMul "
		 "Dequantize Dequantize MatMul", 0, 0, false,
		 "per-row activations, per-K weights, f32 or s32 operands stay");
	pt_new();
	xq = pt_var("xq", HGC_DT_U8, 4, I64(1), I64(2), I64(4), I64(4));
	wq = pt_const("wq", HGC_DT_S8, 4, I64(3), I64(2), I64(3), I64(3));
	x = deq(xq, 1, (const double[]){0.1}, NULL, -1);
	w = deq(wq, 1, (const double[]){0.1}, (const int64_t[]){2}, -1);
	pt_out(pt_end(conv(x, w, NULL, false)));
	pt_check(hgc_pass_lowprec, NULL, 0, "Dequantize Dequantize Convolution", 0, 0, false,
		 "a conv with a weight zero point stays");
}

/* With w_q known, the whole pipeline folds the compensation into one constant. */
static void test_pipeline(void)
{
	static int8_t w[64 * 5];
	int i;

	for (i = 0; i < 64 * 5; i++)
		w[i] = (int8_t)((i * 37) % 255 - 127);
	mlp_layer(w);
	pt_check(hgc_graph_passes_run, NULL, 0,
		 "MatMul Subtract TypeCast Multiply Add ReLU Divide TypeCast", 1e-5, 1e-4, true,
		 "the pipeline with known weights");
}

int main(void)
{
	test_matmul();
	test_conv();
	test_untouched();
	test_pipeline();
	return done_testing();
}
