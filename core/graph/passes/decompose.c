/*
 * decompose.c: complex ops into basic fusible ones (elementwise, broadcast
 * binary, reductions with keep_dims, casts), so that fusion sees only
 * basic ops.  Intermediate values are f32 whatever the src type; the last
 * op stores the original output type, so a bf16 op rounds once, as its
 * reference does.  An op stays when its decomposition would not keep f32
 * accuracy: integer-typed activations and means (each integer step would
 * round or saturate) and BiasAdd of an integer src with an f32 bias.
 *
 * decompose_quant does the same for Quantize and Dequantize; it runs
 * after lowprec, which needs to see them whole.
 */
#include "passes_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F HGC_DT_F32

/* A decomposition: the tensor that replaces op's output, or NULL to keep op. */
typedef struct hgc_tensor *decomp_fn(struct hgc_pb *b, const struct hgc_op *op);

/* Does op read a float src (the types the f32 decompositions keep accurate)? */
static bool float_src(const struct hgc_op *op)
{
	return op->in[0]->dtype == HGC_DT_F32 || op->in[0]->dtype == HGC_DT_BF16;
}

/* A 0-d f32 constant. */
static struct hgc_tensor *c(struct hgc_pb *b, double v)
{
	return hgc_pb_scalar(b, F, v);
}

/* x * y into type dt. */
static struct hgc_tensor *mul(struct hgc_pb *b, enum hgc_dtype dt, struct hgc_tensor *x,
			      struct hgc_tensor *y)
{
	return hgc_pb_binary(b, HGC_OP_MULTIPLY, dt, x, y);
}

/* GELU, erf form: x * (1 + erf(x / sqrt 2)) * 0.5. */
static struct hgc_tensor *gelu_erf(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *x = op->in[0], *t;

	t = hgc_pb_unary(b, HGC_OP_ERF, F, mul(b, F, x, c(b, M_SQRT1_2)));
	t = mul(b, F, x, hgc_pb_binary(b, HGC_OP_ADD, F, t, c(b, 1)));
	return mul(b, op->out[0]->dtype, t, c(b, 0.5));
}

/*
 * GELU, tanh form: 0.5 x (1 + tanh(z)) = x * sigmoid(2 z) with
 * 2 z = x * (A + B x^2), A = 2 sqrt(2 / pi), B = 0.044715 A.
 */
static struct hgc_tensor *gelu_tanh(struct hgc_pb *b, const struct hgc_op *op)
{
	const double a = 2 * sqrt(2 / M_PI), bb = 0.044715 * a;
	struct hgc_tensor *x = op->in[0], *t;

	t = hgc_pb_unary(b, HGC_OP_SQUARE, F, x);
	t = mul(b, F, t, c(b, bb));
	t = mul(b, F, hgc_pb_binary(b, HGC_OP_ADD, F, t, c(b, a)), x);
	return mul(b, op->out[0]->dtype, hgc_pb_unary(b, HGC_OP_SIGMOID, F, t), x);
}

/* GELU by mode. */
static struct hgc_tensor *gelu(struct hgc_pb *b, const struct hgc_op *op)
{
	if (!float_src(op))
		return NULL;
	return strcmp(hgc_op_string(op, "mode"), "gelu_tanh") ? gelu_erf(b, op)
							     : gelu_tanh(b, op);
}

/* HardSwish: x * HardSigmoid(x; 1/6, 1/2) = x * clamp(x + 3, 0, 6) / 6. */
static struct hgc_tensor *hard_swish(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *x = op->in[0];
	struct hgc_op *hs;

	if (!float_src(op))
		return NULL;
	hs = hgc_pb_begin(b, HGC_OP_HARD_SIGMOID, F, 1, &x);
	hgc_pb_float(b, hs, "alpha", 1.0 / 6);
	hgc_pb_float(b, hs, "beta", 0.5);
	return mul(b, op->out[0]->dtype, x, hgc_pb_end(b, hs));
}

/* Mish: x * tanh(softplus(x)). */
static struct hgc_tensor *mish(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *x = op->in[0], *t;

	if (!float_src(op))
		return NULL;
	t = hgc_pb_unary(b, HGC_OP_TANH, F, hgc_pb_unary(b, HGC_OP_SOFT_PLUS, F, x));
	return mul(b, op->out[0]->dtype, x, t);
}

/* The normalized "axis" of a softmax. */
static int64_t softmax_axis(const struct hgc_op *op)
{
	int a = 0;

	hgc_norm_axis(hgc_op_int(op, "axis"), op->in[0]->ndims, &a);
	return a;
}

/*
 * x - max(x) along the softmax axis, and exp of it.  The max ignores NaNs
 * (ops_reduce.c: one instruction a vector instead of four): a NaN in a row
 * still makes every output of the row NaN, through the row's sum of exps.
 */
static struct hgc_tensor *shifted(struct hgc_pb *b, const struct hgc_op *op,
				  struct hgc_tensor **e)
{
	int64_t axis = softmax_axis(op);
	struct hgc_tensor *x = op->in[0], *m, *dx;
	struct hgc_op *max = hgc_pb_reduce_begin(b, HGC_OP_REDUCE_MAX, F, x, 1, &axis);

	hgc_pb_bool(b, max, "ignore_nan", true);
	m = hgc_pb_end(b, max);
	dx = hgc_pb_binary(b, HGC_OP_SUBTRACT, F, x, m);
	*e = hgc_pb_unary(b, HGC_OP_EXP, F, dx);
	return dx;
}

/* SoftMax: e / sum(e) with e = exp(x - max). */
static struct hgc_tensor *softmax(struct hgc_pb *b, const struct hgc_op *op)
{
	int64_t axis = softmax_axis(op);
	struct hgc_tensor *e, *s;

	shifted(b, op, &e);
	s = hgc_pb_reduce(b, HGC_OP_REDUCE_SUM, F, e, 1, &axis);
	return hgc_pb_binary(b, HGC_OP_DIVIDE, op->out[0]->dtype, e, s);
}

/* LogSoftmax: (x - max) - log(sum(exp(x - max))). */
static struct hgc_tensor *log_softmax(struct hgc_pb *b, const struct hgc_op *op)
{
	int64_t axis = softmax_axis(op);
	struct hgc_tensor *e, *dx, *s;

	dx = shifted(b, op, &e);
	s = hgc_pb_reduce(b, HGC_OP_REDUCE_SUM, F, e, 1, &axis);
	return hgc_pb_binary(b, HGC_OP_SUBTRACT, op->out[0]->dtype, dx,
			     hgc_pb_unary(b, HGC_OP_LOG, F, s));
}

/* Mean over axes (keep_dims) of x: sum / count. */
static struct hgc_tensor *mean(struct hgc_pb *b, struct hgc_tensor *x, int naxes,
			       const int64_t *axes, int64_t count)
{
	struct hgc_tensor *s = hgc_pb_reduce(b, HGC_OP_REDUCE_SUM, F, x, naxes, axes);

	return hgc_pb_binary(b, HGC_OP_DIVIDE, F, s, c(b, (double)count));
}

/*
 * LayerNorm over the dims from begin_norm_axis: xc = x - mean,
 * y = xc * 1 / sqrt(mean(xc^2) + eps) [* gamma + beta].
 */
static struct hgc_tensor *layer_norm(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *x = op->in[0], *xc, *v, *y;
	enum hgc_dtype dt = op->out[0]->dtype;
	int64_t axes[HGC_MAX_DIMS], n;
	int a = 0, i, r = x->ndims;

	hgc_norm_axis(hgc_op_int(op, "begin_norm_axis"), r, &a);
	for (i = a; i < r; i++)
		axes[i - a] = i;
	n = hgc_dims_prod(r - a, x->dims + a);
	xc = hgc_pb_binary(b, HGC_OP_SUBTRACT, F, x, mean(b, x, r - a, axes, n));
	v = mean(b, hgc_pb_unary(b, HGC_OP_SQUARE, F, xc), r - a, axes, n);
	v = hgc_pb_binary(b, HGC_OP_ADD, F, v, c(b, hgc_op_float(op, "epsilon")));
	v = hgc_pb_unary(b, HGC_OP_RECIPROCAL, F, hgc_pb_unary(b, HGC_OP_SQRT, F, v));
	if (op->nin < 3)
		return mul(b, dt, xc, v);
	y = mul(b, F, mul(b, F, xc, v), op->in[1]);
	return hgc_pb_binary(b, HGC_OP_ADD, dt, y, op->in[2]);
}

/* The channel axis of a BiasAdd or BatchNormInference src. */
static int channel_axis(const struct hgc_op *op)
{
	return strcmp(hgc_op_string(op, "data_format"), "NXC") ? 1 : op->in[0]->ndims - 1;
}

/* A [C] operand reshaped to broadcast along the channel axis of op's src. */
static struct hgc_tensor *per_channel(struct hgc_pb *b, const struct hgc_op *op,
				      struct hgc_tensor *p)
{
	int64_t dims[HGC_MAX_DIMS];
	int n = hgc_pb_channel_shape(p->dims[0], channel_axis(op), op->in[0]->ndims, dims);

	return hgc_pb_reshape(b, p, n, dims);
}

/* BatchNormInference: (x - mean) * (gamma / sqrt(variance + eps)) + beta. */
static struct hgc_tensor *batch_norm(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *const *in = op->in;
	struct hgc_tensor *s, *y;

	s = hgc_pb_binary(b, HGC_OP_ADD, F, in[4], c(b, hgc_op_float(op, "epsilon")));
	s = hgc_pb_unary(b, HGC_OP_RECIPROCAL, F, hgc_pb_unary(b, HGC_OP_SQRT, F, s));
	s = per_channel(b, op, mul(b, F, in[1], s));
	y = hgc_pb_binary(b, HGC_OP_SUBTRACT, F, in[0], per_channel(b, op, in[3]));
	y = mul(b, F, y, s);
	return hgc_pb_binary(b, HGC_OP_ADD, op->out[0]->dtype, y, per_channel(b, op, in[2]));
}

/* BiasAdd: Add with the bias along the channel axis (exact: one rounding, as before). */
static struct hgc_tensor *bias_add(struct hgc_pb *b, const struct hgc_op *op)
{
	if (!float_src(op) && op->in[1]->dtype != op->in[0]->dtype)
		return NULL;
	return hgc_pb_binary(b, HGC_OP_ADD, op->out[0]->dtype, op->in[0],
			     per_channel(b, op, op->in[1]));
}

/* The number of elements a reduction folds into each output element. */
static int64_t reduced_count(const struct hgc_op *op)
{
	const int64_t *axes;
	int n = hgc_op_ints(op, "axes", &axes), i, a;
	int64_t count = 1;

	for (i = 0; i < n; i++)
		if (!hgc_norm_axis(axes[i], op->in[0]->ndims, &a))
			count *= op->in[0]->dims[a];
	return count;
}

/* A ReduceSum of x with op's axes and keep_dims, into dt. */
static struct hgc_tensor *sum_like(struct hgc_pb *b, const struct hgc_op *op,
				   enum hgc_dtype dt, struct hgc_tensor *x)
{
	struct hgc_op *s = hgc_pb_begin(b, HGC_OP_REDUCE_SUM, dt, 1, &x);

	hgc_pb_copy_attrs(b, s, op);
	return hgc_pb_end(b, s);
}

/* ReduceMean: ReduceSum / count. */
static struct hgc_tensor *reduce_mean(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *s;

	if (!float_src(op))
		return NULL;
	s = sum_like(b, op, F, op->in[0]);
	return hgc_pb_binary(b, HGC_OP_DIVIDE, op->out[0]->dtype, s,
			     c(b, (double)reduced_count(op)));
}

/* ReduceL1: ReduceSum(|x|). */
static struct hgc_tensor *reduce_l1(struct hgc_pb *b, const struct hgc_op *op)
{
	if (!float_src(op))
		return NULL;
	return sum_like(b, op, op->out[0]->dtype, hgc_pb_unary(b, HGC_OP_ABS, F, op->in[0]));
}

/* ReduceL2: sqrt(ReduceSum(x^2)). */
static struct hgc_tensor *reduce_l2(struct hgc_pb *b, const struct hgc_op *op)
{
	if (!float_src(op))
		return NULL;
	return hgc_pb_unary(b, HGC_OP_SQRT, op->out[0]->dtype,
			    sum_like(b, op, F, hgc_pb_unary(b, HGC_OP_SQUARE, F, op->in[0])));
}

/* The channel axis of a per-channel Quantize or Dequantize, -1 per tensor. */
static int quant_axis(const struct hgc_op *op)
{
	int a = -1;

	if (strcmp(hgc_op_string(op, "qtype"), "per_channel"))
		return -1;
	hgc_norm_axis(hgc_op_int(op, "axis"), op->in[0]->ndims, &a);
	return a;
}

/* Scales (zps false) or zero points of op as an f32 constant broadcasting along its axis;
   NULL for zero points that are all 0. */
static struct hgc_tensor *qparam(struct hgc_pb *b, const struct hgc_op *op, bool zps)
{
	int axis = quant_axis(op), n = hgc_op_nfloats(op, "scales"), i, nd = 0;
	const int64_t *zp;
	int nz = hgc_op_ints(op, "zps", &zp);
	double *v = hgc_xcalloc((size_t)n + 1, sizeof(*v));
	int64_t dims[HGC_MAX_DIMS];
	struct hgc_tensor *t = NULL;
	bool any = false;

	for (i = 0; i < n; i++) {
		v[i] = zps ? (nz ? (double)zp[i] : 0) : hgc_op_float_at(op, "scales", i);
		any |= v[i] != 0;
	}
	if (axis >= 0)
		nd = hgc_pb_channel_shape(n, axis, op->in[0]->ndims, dims);
	if (!zps || any)
		t = hgc_pb_const(b, F, nd, dims, v);
	free(v);
	return t;
}

/* Quantize: cast(AddRound(x / scale, zp)), the cast saturating (and rounding half
   to even without a zero point).  AddRound rounds the exact sum: an f32 Add would
   round it first, and then a quotient just below k + 0.5 could become the tie. */
static struct hgc_tensor *quantize(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *q = hgc_pb_binary(b, HGC_OP_DIVIDE, F, op->in[0], qparam(b, op, false));
	struct hgc_tensor *zp;

	zp = qparam(b, op, true);
	if (zp)
		q = hgc_pb_binary(b, HGC_OP_ADD_ROUND, F, q, zp);
	return hgc_pb_cast(b, q, op->out[0]->dtype);
}

/* Dequantize: (cast(x) - zp) * scale. */
static struct hgc_tensor *dequantize(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *x = hgc_pb_cast(b, op->in[0], F), *zp;

	zp = qparam(b, op, true);
	if (zp)
		x = hgc_pb_binary(b, HGC_OP_SUBTRACT, F, x, zp);
	return mul(b, op->out[0]->dtype, x, qparam(b, op, false));
}

/* The complex ops decompose rewrites. */
static decomp_fn *const complex_ops[HGC_OP_COUNT] = {
	[HGC_OP_GELU] = gelu,
	[HGC_OP_HARD_SWISH] = hard_swish,
	[HGC_OP_MISH] = mish,
	[HGC_OP_SOFTMAX] = softmax,
	[HGC_OP_LOG_SOFTMAX] = log_softmax,
	[HGC_OP_LAYER_NORM] = layer_norm,
	[HGC_OP_BATCH_NORM_INFERENCE] = batch_norm,
	[HGC_OP_BIAS_ADD] = bias_add,
	[HGC_OP_REDUCE_MEAN] = reduce_mean,
	[HGC_OP_REDUCE_L1] = reduce_l1,
	[HGC_OP_REDUCE_L2] = reduce_l2,
};

/* The ones decompose_quant rewrites. */
static decomp_fn *const quant_ops[HGC_OP_COUNT] = {
	[HGC_OP_QUANTIZE] = quantize,
	[HGC_OP_DEQUANTIZE] = dequantize,
};

/* Which table to use and which kinds to keep. */
struct decomp {
	decomp_fn *const *table;
	const bool *keep;
};

/* The decomposition of op, if the table has one and keep does not hold it. */
static struct hgc_tensor *decompose_one(struct hgc_pb *b, struct hgc_op *op, void *ctx)
{
	const struct decomp *c = ctx;

	if (!c->table[op->kind] || (c->keep && c->keep[op->kind]))
		return NULL;
	return c->table[op->kind](b, op);
}

/* Rewrite every op the table has a decomposition for (and keep does not hold). */
static int run(struct hgc_graph *g, decomp_fn *const *table, const bool *keep,
	       struct hgc_diag *d)
{
	struct decomp c = { table, keep };

	return hgc_pb_rewrite(g, decompose_one, &c, d);
}

/* Complex ops into basic ones, but Quantize and Dequantize (lowprec needs them). */
int hgc_pass_decompose(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		       struct hgc_diag *d)
{
	return run(g, complex_ops, sw ? sw->keep : NULL, d);
}

/* Quantize and Dequantize into casts and arithmetic. */
int hgc_pass_decompose_quant(struct hgc_graph *g, const struct hgc_pass_switches *sw,
			     struct hgc_diag *d)
{
	return run(g, quant_ops, sw ? sw->keep : NULL, d);
}
