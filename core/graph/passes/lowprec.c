/*
 * lowprec.c: low-precision conversion.  A quantized model arrives as f32
 * MatMul and Convolution ops reading Dequantize(x_q) and Dequantize(w_q).
 * With x = (x_q - zx) sx per tensor and w = (w_q - zw) sw (per tensor, or
 * per output channel n), the product is exactly
 *
 *     sum_k x w = sx sw[n] (sum_k x_q w_q - zw[n] sum_k x_q - zx sum_k w_q + K zx zw[n])
 *
 * so the pass computes sum_k x_q w_q with the integer op (u8/s8 operands,
 * s32 accumulation), subtracts the zero-point compensation in s32 (the
 * row sums of x_q and the column sums of w_q are themselves integer
 * MatMuls with a constant of ones, exact, and fold when w_q is known), and
 * only then converts to f32 and applies the combined scale and the bias:
 * the scales and zero-point corrections move after the op.  A Quantize
 * after it stays (decompose_quant or the lowering handles it).
 *
 * Convolutions take the same path when the weights have no zero point:
 * the activation zero point's compensation is the convolution of a
 * constant of ones with w_q, which also gets the padded borders right.
 * The result differs from the f32 graph only by f32 rounding (the f32
 * graph rounds every dequantized value); an element of a following
 * Quantize may then round to a neighbour at a tie (docs/passes.md).
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

/* A Dequantize the rewrite can look through. */
struct deq {
	const struct hgc_op *op;
	struct hgc_tensor *q;	/* its u8/s8 src */
	int axis;		/* channel axis, -1 per tensor */
	int n;			/* number of scales (and zero points) */
	bool zp;		/* some zero point is not 0 */
};

/* Is t the output of a Dequantize of u8/s8 data?  Fill dq. */
static bool as_deq(const struct hgc_tensor *t, struct deq *dq)
{
	const struct hgc_op *op = t->producer;
	const int64_t *zps;
	int i, nz;

	if (!op || op->kind != HGC_OP_DEQUANTIZE)
		return false;
	if (op->in[0]->dtype != HGC_DT_U8 && op->in[0]->dtype != HGC_DT_S8)
		return false;
	dq->op = op;
	dq->q = op->in[0];
	dq->axis = -1;
	if (!strcmp(hgc_op_string(op, "qtype"), "per_channel"))
		hgc_norm_axis(hgc_op_int(op, "axis"), dq->q->ndims, &dq->axis);
	dq->n = hgc_op_nfloats(op, "scales");
	nz = hgc_op_ints(op, "zps", &zps);
	dq->zp = false;
	for (i = 0; i < nz; i++)
		dq->zp |= zps[i] != 0;
	return true;
}

/* Zero point i of a Dequantize (0 when it has none). */
static double zp_at(const struct deq *dq, int i)
{
	const int64_t *zps;
	int nz = hgc_op_ints(dq->op, "zps", &zps);

	return nz ? (double)zps[dq->axis < 0 ? 0 : i] : 0;
}

/* v[0..n) as a constant along axis of a rank-r result ([n, 1, ...]), 0-d when per tensor. */
static struct hgc_tensor *channel_const(struct hgc_pb *b, enum hgc_dtype dt, int n, int axis,
					int rank, const double *v)
{
	int64_t dims[HGC_MAX_DIMS];
	int nd = 0;

	if (n > 1 || axis >= 0)
		nd = hgc_pb_channel_shape(n, axis, rank, dims);
	return hgc_pb_const(b, dt, nd, dims, v);
}

/* sx * sw[i] for every weight channel (one value per tensor). */
static double *scales(const struct deq *x, const struct deq *w)
{
	double sx = hgc_op_float_at(x->op, "scales", 0), *v;
	int i;

	v = hgc_xcalloc((size_t)w->n + 1, sizeof(*v));
	for (i = 0; i < w->n; i++)
		v[i] = sx * hgc_op_float_at(w->op, "scales", i);
	return v;
}

/* The f32 result: cast(acc) * sx sw [+ bias], the scale along the output channel axis. */
static struct hgc_tensor *rescale(struct hgc_pb *b, const struct hgc_op *op,
				  const struct deq *x, const struct deq *w,
				  struct hgc_tensor *acc, int axis, struct hgc_tensor *bias)
{
	double *s = scales(x, w);
	enum hgc_dtype dt = op->out[0]->dtype;
	struct hgc_tensor *y, *sc;

	sc = channel_const(b, HGC_DT_F32, w->n, w->axis >= 0 ? axis : -1, acc->ndims, s);
	free(s);
	y = hgc_pb_cast(b, acc, HGC_DT_F32);
	y = hgc_pb_binary(b, HGC_OP_MULTIPLY, bias ? HGC_DT_F32 : dt, y, sc);
	return bias ? hgc_pb_binary(b, HGC_OP_ADD, dt, y, bias) : y;
}

/* The integer MatMul or Convolution of a and c with op's attributes (s32 out). */
static struct hgc_tensor *int_op(struct hgc_pb *b, const struct hgc_op *op,
				 struct hgc_tensor *a, struct hgc_tensor *c)
{
	struct hgc_tensor *in[2] = {a, c};
	struct hgc_op *n = hgc_pb_begin(b, op->kind, HGC_DT_S32, 2, in);

	hgc_pb_copy_attrs(b, n, op);
	return hgc_pb_end(b, n);
}

/* s32 a - s32 c. */
static struct hgc_tensor *isub(struct hgc_pb *b, struct hgc_tensor *a, struct hgc_tensor *c)
{
	return hgc_pb_binary(b, HGC_OP_SUBTRACT, HGC_DT_S32, a, c);
}

/* s32 a * s32 c. */
static struct hgc_tensor *imul(struct hgc_pb *b, struct hgc_tensor *a, struct hgc_tensor *c)
{
	return hgc_pb_binary(b, HGC_OP_MULTIPLY, HGC_DT_S32, a, c);
}

/* An integer MatMul with the given transposes. */
static struct hgc_tensor *int_matmul(struct hgc_pb *b, struct hgc_tensor *a, struct hgc_tensor *c,
				     bool ta, bool tb)
{
	struct hgc_tensor *in[2] = {a, c};
	struct hgc_op *n = hgc_pb_begin(b, HGC_OP_MATMUL, HGC_DT_S32, 2, in);

	hgc_pb_bool(b, n, "transpose_a", ta);
	hgc_pb_bool(b, n, "transpose_b", tb);
	return hgc_pb_end(b, n);
}

/* The zero points of w times k, per channel, as an s32 constant along the last axis. */
static struct hgc_tensor *wzp(struct hgc_pb *b, const struct deq *w, int rank, int64_t k)
{
	double *v = hgc_xcalloc((size_t)w->n + 1, sizeof(*v));
	struct hgc_tensor *t;
	int i;

	for (i = 0; i < w->n; i++)
		v[i] = (double)k * zp_at(w, i);
	t = channel_const(b, HGC_DT_S32, w->n, w->axis >= 0 ? rank - 1 : -1, rank, v);
	free(v);
	return t;
}

/*
 * acc - zx (colsum(w_q) - K zw) - zw rowsum(x_q): the zero-point terms of
 * the product, each sum an integer MatMul with ones.
 */
static struct hgc_tensor *mm_compensate(struct hgc_pb *b, const struct hgc_op *op,
					const struct deq *x, const struct deq *w,
					struct hgc_tensor *acc, int64_t k)
{
	bool ta = hgc_op_bool(op, "transpose_a"), tb = hgc_op_bool(op, "transpose_b");
	int64_t row[2] = {1, k}, col[2] = {k, 1};
	double zx = zp_at(x, 0);
	struct hgc_tensor *t;

	if (zx != 0) {
		t = int_matmul(b, hgc_pb_fill(b, HGC_DT_U8, 2, row, 1), w->q, false, tb);
		if (w->zp)
			t = isub(b, t, wzp(b, w, acc->ndims, k));
		t = imul(b, t, hgc_pb_scalar(b, HGC_DT_S32, zx));
		acc = isub(b, acc, t);
	}
	if (w->zp) {
		t = int_matmul(b, x->q, hgc_pb_fill(b, HGC_DT_S8, 2, col, 1), ta, false);
		t = imul(b, t, wzp(b, w, acc->ndims, 1));
		acc = isub(b, acc, t);
	}
	return acc;
}

/* MatMul(Dequantize(x_q), Dequantize(w_q)[, bias]) in integers, or NULL if not that. */
static struct hgc_tensor *matmul(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *acc;
	struct deq x, w;
	int r;
	int64_t k;
	bool tb;

	if (!as_deq(op->in[0], &x) || !as_deq(op->in[1], &w) || x.axis >= 0)
		return NULL;
	r = w.q->ndims;
	tb = hgc_op_bool(op, "transpose_b");
	if (x.q->ndims < 2 || r < 2 || (w.axis >= 0 && w.axis != (tb ? r - 2 : r - 1)))
		return NULL;
	k = w.q->dims[tb ? r - 1 : r - 2];
	acc = int_op(b, op, x.q, w.q);
	acc = mm_compensate(b, op, &x, &w, acc, k);
	return rescale(b, op, &x, &w, acc, op->out[0]->ndims - 1, op->nin > 2 ? op->in[2] : NULL);
}

/* The output channel axis of a Convolution and of its weights. */
static void conv_axes(const struct hgc_op *op, int *out_axis, int *w_axis)
{
	*out_axis = strcmp(hgc_op_string(op, "data_format"), "NXC") ? 1 : 3;
	*w_axis = strcmp(hgc_op_string(op, "weights_format"), "XIO") ? 0 : 3;
}

/* acc - zx conv(ones, w_q): the activation zero point, padding included. */
static struct hgc_tensor *conv_compensate(struct hgc_pb *b, const struct hgc_op *op,
					  const struct deq *x, const struct deq *w,
					  struct hgc_tensor *acc)
{
	int64_t dims[HGC_MAX_DIMS];
	double zx = zp_at(x, 0);
	struct hgc_tensor *ones, *t;

	if (zx == 0)
		return acc;
	memcpy(dims, x->q->dims, sizeof(dims));
	dims[0] = 1;
	ones = hgc_pb_fill(b, HGC_DT_U8, x->q->ndims, dims, 1);
	t = int_op(b, op, ones, w->q);
	t = imul(b, t, hgc_pb_scalar(b, HGC_DT_S32, zx));
	return isub(b, acc, t);
}

/* Convolution(Dequantize(x_q), Dequantize(w_q)[, bias]) in integers, or NULL. */
static struct hgc_tensor *conv(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *bias = NULL, *acc;
	int64_t dims[HGC_MAX_DIMS];
	int out_axis, w_axis;
	struct deq x, w;

	if (!as_deq(op->in[0], &x) || !as_deq(op->in[1], &w) || x.axis >= 0 || w.zp)
		return NULL;
	conv_axes(op, &out_axis, &w_axis);
	if (w.axis >= 0 && w.axis != w_axis)
		return NULL;
	acc = conv_compensate(b, op, &x, &w, int_op(b, op, x.q, w.q));
	if (op->nin > 2)
		bias = hgc_pb_reshape(b, op->in[2],
				      hgc_pb_channel_shape(op->in[2]->dims[0], out_axis, 4, dims),
				      dims);
	return rescale(b, op, &x, &w, acc, out_axis, bias);
}

/* The integer form of a quantized MatMul or Convolution, or NULL. */
static struct hgc_tensor *lower_precision(struct hgc_pb *b, struct hgc_op *op, void *ctx)
{
	(void)ctx;
	if (op->kind == HGC_OP_MATMUL)
		return matmul(b, op);
	if (op->kind == HGC_OP_CONVOLUTION)
		return conv(b, op);
	return NULL;
}

/* Rewrite every quantized MatMul and Convolution; the number rewritten. */
int hgc_pass_lowprec(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		     struct hgc_diag *d)
{
	(void)sw;
	return hgc_pb_rewrite(g, lower_precision, NULL, d);
}
