/*
 * 123-transpose: the OneFlow layout transform.  Transposes compose and
 * cancel, identities, reshape chains and plain Reorders go, transposes
 * sink through elementwise ops, binaries and reductions (with the other
 * operand following), and channels_last then transpose leave one
 * transpose at each end of a convolution chain.  Each case checks the
 * exact ops left and the interpreter against the graph before.
 */
#include "t/passes_build.h"

#define I64(v) ((int64_t)(v))
#define F32 HGC_DT_F32

/* A StaticTranspose of x by order (n values). */
static struct hgc_tensor *tr(struct hgc_tensor *x, int n, const int64_t *order)
{
	struct hgc_op *op = pt_op(HGC_OP_STATIC_TRANSPOSE, HGC_DT_UNDEF, 1, x);

	hgc_pb_ints(&pt.b, op, "order", n, order);
	return pt_end(op);
}

/* A StaticReshape of x to n dims. */
static struct hgc_tensor *rs(struct hgc_tensor *x, int n, const int64_t *shape)
{
	struct hgc_op *op = pt_op(HGC_OP_STATIC_RESHAPE, HGC_DT_UNDEF, 1, x);

	hgc_pb_ints(&pt.b, op, "shape", n, shape);
	hgc_pb_bool(&pt.b, op, "special_zero", false);
	return pt_end(op);
}

static const int64_t nhwc[4] = {0, 2, 3, 1}, nchw[4] = {0, 3, 1, 2}, swap12[3] = {0, 2, 1};

/* Composition, cancellation, identities, reshapes, Reorders. */
static void test_simplify(void)
{
	struct hgc_tensor *x;

	pt_new();
	x = pt_var("x", F32, 4, I64(1), I64(3), I64(4), I64(5));
	pt_out(pt_un(HGC_OP_EXP, tr(tr(x, 4, nhwc), 4, nchw)));
	pt_check(hgc_pass_transpose, NULL, 1, "Exp", 0, 0, false, "inverse transposes cancel");
	pt_new();
	x = pt_var("x", F32, 3, I64(2), I64(3), I64(4));
	pt_out(pt_un(HGC_OP_EXP, tr(tr(x, 3, swap12), 3, (const int64_t[]){1, 0, 2})));
	pt_check(hgc_pass_transpose, NULL, 2, "Exp StaticTranspose", 0, 0, false,
		 "two transposes compose into one, which sinks");
	pt_new();
	x = pt_var("x", F32, 2, I64(2), I64(3));
	pt_out(pt_un(HGC_OP_EXP, tr(x, 2, (const int64_t[]){0, -1})));
	pt_check(hgc_pass_transpose, NULL, 1, "Exp", 0, 0, false, "an identity transpose goes");
	pt_new();
	x = pt_var("x", F32, 2, I64(2), I64(3));
	x = rs(rs(pt_un(HGC_OP_REORDER, x), 2, (const int64_t[]){3, 2}), 1, (const int64_t[]){6});
	pt_out(pt_un(HGC_OP_EXP, rs(x, 1, (const int64_t[]){6})));
	pt_check(hgc_pass_transpose, NULL, 3, "StaticReshape Exp", 0, 0, false,
		 "reshape chains, same-shape reshapes and Reorders go");
}

/* Transposes sink through layout-agnostic ops and meet their inverse. */
static void test_sink(void)
{
	struct hgc_tensor *x, *y, *t;
	struct hgc_op *op;

	pt_new();
	x = pt_var("x", F32, 3, I64(2), I64(3), I64(4));
	pt_out(pt_un(HGC_OP_EXP, pt_un(HGC_OP_RELU, tr(x, 3, swap12))));
	pt_check(hgc_pass_transpose, NULL, 2, "ReLU Exp StaticTranspose", 0, 0, false,
		 "a transpose sinks through a chain");
	pt_new();
	x = pt_var("x", F32, 4, I64(1), I64(3), I64(4), I64(5));
	pt_out(tr(pt_un(HGC_OP_RELU, tr(x, 4, nhwc)), 4, nchw));
	pt_check(hgc_pass_transpose, NULL, 2, "ReLU", 0, 0, false, "sinks, then cancels");
	pt_new();
	x = pt_var("x", F32, 4, I64(1), I64(4), I64(5), I64(3));
	t = pt_bin(HGC_OP_ADD, tr(x, 4, nchw), pt_const("c", F32, 3, I64(3), I64(1), I64(1)));
	t = pt_bin(HGC_OP_MULTIPLY, t, hgc_pb_scalar(&pt.b, F32, 0.5));
	pt_out(pt_un(HGC_OP_RELU, t));
	pt_check(hgc_pass_transpose, NULL, 3, "StaticReshape Add Multiply ReLU StaticTranspose",
		 0, 0, false, "per-channel operands follow by a reshape, scalars as they are");
	pt_new();
	x = pt_var("x", F32, 3, I64(2), I64(3), I64(4));
	y = pt_var("y", F32, 3, I64(2), I64(3), I64(4));
	pt_out(pt_bin(HGC_OP_MULTIPLY, tr(x, 3, swap12), tr(y, 3, swap12)));
	pt_check(hgc_pass_transpose, NULL, 1, "Multiply StaticTranspose", 0, 0, false,
		 "both operands transposed alike");
	pt_new();
	x = pt_var("x", F32, 3, I64(2), I64(3), I64(4));
	op = pt_op(HGC_OP_REDUCE_MAX, HGC_DT_UNDEF, 1, tr(x, 3, swap12));
	hgc_pb_ints(&pt.b, op, "axes", 2, (const int64_t[]){-2, 0});
	hgc_pb_bool(&pt.b, op, "keep_dims", true);
	pt_out(pt_end(op));
	pt_check(hgc_pass_transpose, NULL, 1, "ReduceMax StaticTranspose", 0, 0, false,
		 "a reduction keeping its dims takes the permuted axes");
}

/* Where sinking would cost more, or cannot be expressed, nothing moves. */
static void test_stay(void)
{
	static const float cv[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				     13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
	struct hgc_tensor *x, *t, *c;
	struct hgc_op *op;

	pt_new();
	x = pt_var("x", F32, 3, I64(2), I64(3), I64(4));
	t = tr(x, 3, swap12);
	pt_out(pt_un(HGC_OP_RELU, t));
	pt_out(pt_un(HGC_OP_EXP, t));
	pt_out(pt_bin(HGC_OP_ADD, tr(x, 3, swap12), pt_var("y", F32, 3, I64(2), I64(4), I64(3))));
	op = pt_op(HGC_OP_REDUCE_SUM, HGC_DT_UNDEF, 1, tr(x, 3, swap12));
	hgc_pb_ints(&pt.b, op, "axes", 1, (const int64_t[]){1});
	pt_out(pt_end(op));
	pt_out(pt_bin(HGC_OP_MATMUL, tr(x, 3, swap12), x));
	pt_check(hgc_pass_transpose, NULL, 0,
		 "StaticTranspose ReLU Exp StaticTranspose Add StaticTranspose ReduceSum "
		 "StaticTranspose MatMul", 0, 0, false,
		 "two readers, an unknown full operand, a reduction dropping dims, a MatMul");
	pt_new();
	x = pt_var("x", F32, 3, I64(2), I64(3), I64(4));
	c = pt_const("c", F32, 3, I64(2), I64(4), I64(3));
	c->data = cv;
	pt_out(pt_bin(HGC_OP_ADD, tr(x, 3, swap12), c));
	pt_check(hgc_pass_transpose, NULL, 1, "StaticTranspose Add StaticTranspose", 0, 0, false,
		 "a known operand is transposed instead (constfold folds it)");
}

/* A 3x3 convolution, NCX/OIX, padding 1. */
static struct hgc_tensor *conv(struct hgc_tensor *x, struct hgc_tensor *w)
{
	struct hgc_op *op = pt_op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, x, w);
	static const int64_t one[2] = {1, 1};

	hgc_pb_ints(&pt.b, op, "strides", 2, one);
	hgc_pb_ints(&pt.b, op, "pads_begin", 2, one);
	hgc_pb_ints(&pt.b, op, "pads_end", 2, one);
	hgc_pb_ints(&pt.b, op, "dilations", 2, one);
	hgc_pb_string(&pt.b, op, "data_format", "NCX");
	hgc_pb_string(&pt.b, op, "weights_format", "OIX");
	return pt_end(op);
}

/* x -> conv -> relu -> maxpool -> conv -> relu, all NCX. */
static void conv_chain(void)
{
	struct hgc_tensor *x, *w1, *w2;
	struct hgc_op *op;

	pt_new();
	x = pt_var("x", F32, 4, I64(1), I64(3), I64(6), I64(6));
	w1 = pt_const("w1", F32, 4, I64(4), I64(3), I64(3), I64(3));
	w2 = pt_const("w2", F32, 4, I64(2), I64(4), I64(3), I64(3));
	op = pt_op(HGC_OP_MAX_POOL, HGC_DT_UNDEF, 1, pt_un(HGC_OP_RELU, conv(x, w1)));
	hgc_pb_ints(&pt.b, op, "strides", 2, (const int64_t[]){2, 2});
	hgc_pb_ints(&pt.b, op, "kernel", 2, (const int64_t[]){2, 2});
	hgc_pb_ints(&pt.b, op, "pads_begin", 2, (const int64_t[]){0, 0});
	hgc_pb_ints(&pt.b, op, "pads_end", 2, (const int64_t[]){0, 0});
	hgc_pb_string(&pt.b, op, "data_format", "NCX");
	pt_out(pt_un(HGC_OP_RELU, conv(pt_end(op), w2)));
}

/* channels_last inserts; transpose leaves one transpose at each end. */
static void test_channels_last(void)
{
	struct hgc_pass_switches sw;
	int p;

	conv_chain();
	pt_check(hgc_pass_channels_last, NULL, 3,
		 "StaticTranspose Convolution StaticTranspose ReLU StaticTranspose MaxPool "
		 "StaticTranspose StaticTranspose Convolution StaticTranspose ReLU", 1e-5, 1e-6,
		 false, "channels_last wraps the NCX ops");
	hgc_pass_switches_init(&sw);
	for (p = 0; p < HGC_PASS_COUNT; p++)
		sw.on[p] = p == HGC_PASS_CHANNELS_LAST || p == HGC_PASS_TRANSPOSE;
	conv_chain();
	pt_check(hgc_graph_passes_run, &sw, 0,
		 "StaticTranspose Convolution ReLU MaxPool Convolution ReLU StaticTranspose", 1e-5,
		 1e-6, false, "then transpose leaves one at each end");
}

int main(void)
{
	test_simplify();
	test_sink();
	test_stay();
	test_channels_last();
	return done_testing();
}
