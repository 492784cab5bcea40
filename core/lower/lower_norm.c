/*
 * lower_norm.c: SoftMax, LogSoftmax, LayerNorm and BatchNormInference, in
 * f32 with the interpreter's formulas and passes.  SoftMax and LayerNorm
 * reduce along axes that must be whole in the views; the other dims may be
 * slices.
 */
#include "lower_int.h"

#include <math.h>
#include <string.h>

/* Loops over the dims of v with the dims in [lo, hi) left out (extent 1). */
static void outer_loops(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			const struct hgc_lower_view *v, int lo, int hi, struct lw_nest *nest)
{
	int64_t dims[HGC_MAX_DIMS];
	int i;

	for (i = 0; i < v->ndims; i++)
		dims[i] = i >= lo && i < hi ? 1 : v->dims[i];
	lw_loops(cx, block, v->ndims, dims, v->ndims, lw_prod(v->ndims, v->dims), nest);
}

/* Serial loops over the dims of v in [lo, hi) only. */
static void inner_loops(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			const struct hgc_lower_view *v, int lo, int hi, struct lw_nest *nest)
{
	int64_t dims[HGC_MAX_DIMS];
	int i;

	for (i = 0; i < v->ndims; i++)
		dims[i] = i >= lo && i < hi ? v->dims[i] : 1;
	lw_loops(cx, block, v->ndims, dims, 0, 0, nest);
}

/* Indices from the inner nest in [lo, hi), the outer one elsewhere. */
static void split_index(struct hgc_lower_ctx *cx, const struct lw_nest *outer,
			const struct lw_nest *inner, int lo, int hi, struct hgc_tir_expr **idx)
{
	int i;

	for (i = 0; i < outer->n; i++)
		idx[i] = lw_v(cx, i >= lo && i < hi ? inner->var[i] : outer->var[i]);
}

/* A fresh inner loop over [lo, hi) loading x from v; returns x, the loop body in *body. */
static struct hgc_tir_var *inner_load(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				      const struct hgc_lower_view *v, const struct lw_nest *outer,
				      int lo, int hi, struct lw_nest *inner)
{
	struct hgc_tir_expr *idx[HGC_MAX_DIMS];

	inner_loops(cx, block, v, lo, hi, inner);
	split_index(cx, outer, inner, lo, hi, idx);
	return lw_let(cx, inner->body, "x", lw_load(cx, v, idx, LW_F32));
}

/* The views of a softmax: the same extents, the axis whole; the axis in *axis. */
static int softmax_check(const struct hgc_op *op, const struct hgc_lower_view *in,
			 const struct hgc_lower_view *out, int *axis, struct hgc_diag *d)
{
	if (lw_check_same(op, "the output", out, in, d))
		return -1;
	if (in->ndims != op->in[0]->ndims)
		return hgc_op_error(op, d, "the input view has %d dims, not %d", in->ndims,
				    op->in[0]->ndims);
	if (hgc_norm_axis(hgc_op_int(op, "axis"), in->ndims, axis))
		hgc_bug("lower: softmax axis out of range after inference");
	return lw_check_whole(op, "the softmax", in, op->in[0], *axis, d);
}

/* SoftMax and LogSoftmax: max, sum of exp(x - max), then the output pass
   (x - max <= 0 or NaN: exp_nonpos). */
int hgc_lower_softmax(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		      struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		      struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_tir_expr *idx[HGC_MAX_DIMS], *y, *v;
	struct hgc_tir_var *mx, *sum, *x, *t;
	struct lw_nest outer, inner;
	int a;

	if (softmax_check(op, in[0], out, &a, d))
		return -1;
	outer_loops(cx, block, in[0], a, a + 1, &outer);
	mx = lw_mut(cx, outer.body, "mx", lw_f(cx, -INFINITY));
	x = inner_load(cx, outer.body, in[0], &outer, a, a + 1, &inner);
	hgc_tir_assign(cx->m, inner.body, mx, lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, x),
								lw_v(cx, mx)),
						     lw_v(cx, x), lw_v(cx, mx)));
	sum = lw_mut(cx, outer.body, "sum", lw_f(cx, 0));
	x = inner_load(cx, outer.body, in[0], &outer, a, a + 1, &inner);
	y = lw_call1(cx, HGC_TIR_I_EXP_NONPOS, lw_bin(cx, HGC_TIR_SUB, lw_v(cx, x), lw_v(cx, mx)));
	hgc_tir_assign(cx->m, inner.body, sum, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, sum), y));
	x = inner_load(cx, outer.body, in[0], &outer, a, a + 1, &inner);
	t = lw_let(cx, inner.body, "t", lw_bin(cx, HGC_TIR_SUB, lw_v(cx, x), lw_v(cx, mx)));
	if (op->kind == HGC_OP_LOG_SOFTMAX)
		v = lw_bin(cx, HGC_TIR_SUB, lw_v(cx, t), lw_call1(cx, HGC_TIR_I_LOG, lw_v(cx, sum)));
	else
		v = lw_bin(cx, HGC_TIR_DIV, lw_call1(cx, HGC_TIR_I_EXP_NONPOS, lw_v(cx, t)),
			   lw_v(cx, sum));
	split_index(cx, &outer, &inner, a, a + 1, idx);
	lw_store(cx, out, inner.body, idx, v, LW_F32);
	return 0;
}

/* The views of a layer norm: same extents, normalized dims whole, gamma and beta
   of the normalized extents; the first normalized dim in *axis. */
static int layer_norm_check(const struct hgc_op *op, struct hgc_lower_view *const *in,
			    const struct hgc_lower_view *out, int *axis, struct hgc_diag *d)
{
	const struct hgc_lower_view *src = in[0];
	struct hgc_lower_view want = *src;
	int i;

	if (lw_check_same(op, "the output", out, src, d))
		return -1;
	if (src->ndims != op->in[0]->ndims)
		return hgc_op_error(op, d, "the input view has %d dims, not %d", src->ndims,
				    op->in[0]->ndims);
	if (hgc_norm_axis(hgc_op_int(op, "begin_norm_axis"), src->ndims, axis))
		hgc_bug("lower: begin_norm_axis out of range after inference");
	for (i = *axis; i < src->ndims; i++)
		if (lw_check_whole(op, "normalized", src, op->in[0], i, d))
			return -1;
	want.ndims = src->ndims - *axis;
	for (i = 0; i < want.ndims; i++)
		want.dims[i] = src->dims[*axis + i];
	for (i = 1; i < op->nin; i++)
		if (lw_check_same(op, i == 1 ? "the gamma" : "the beta", in[i], &want, d))
			return -1;
	return 0;
}

/* gamma or beta at the normalized indices of the inner nest. */
static struct hgc_tir_expr *param_at(struct hgc_lower_ctx *cx, const struct hgc_lower_view *p,
				     const struct lw_nest *inner, int axis)
{
	struct hgc_tir_expr *idx[HGC_MAX_DIMS];
	int i;

	for (i = 0; i < p->ndims; i++)
		idx[i] = lw_v(cx, inner->var[axis + i]);
	return lw_load(cx, p, idx, LW_F32);
}

/* The output pass of a layer norm: (x - mean) * rstd, then * gamma + beta. */
static void layer_norm_out(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			   struct hgc_lower_view *const *in, const struct hgc_lower_view *out,
			   const struct lw_nest *outer, int a, struct hgc_tir_var *m,
			   struct hgc_tir_var *rstd)
{
	struct hgc_tir_expr *idx[HGC_MAX_DIMS], *y;
	struct hgc_tir_var *x;
	struct lw_nest inner;
	int r = in[0]->ndims;

	x = inner_load(cx, outer->body, in[0], outer, a, r, &inner);
	y = lw_bin(cx, HGC_TIR_MUL, lw_bin(cx, HGC_TIR_SUB, lw_v(cx, x), lw_v(cx, m)),
		   lw_v(cx, rstd));
	if (op->nin == 3)
		y = lw_bin(cx, HGC_TIR_ADD, lw_bin(cx, HGC_TIR_MUL, y, param_at(cx, in[1], &inner, a)),
			   param_at(cx, in[2], &inner, a));
	split_index(cx, outer, &inner, a, r, idx);
	lw_store(cx, out, inner.body, idx, y, LW_F32);
}

/* LayerNorm: mean, biased variance, then (x - mean) * rstd [* gamma + beta]. */
int hgc_lower_layer_norm(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			 struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			 struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_tir_var *sum, *var, *x, *m, *t, *rstd;
	struct hgc_tir_expr *cnt;
	struct lw_nest outer, inner;
	int a, r = in[0]->ndims;

	if (layer_norm_check(op, in, out, &a, d))
		return -1;
	outer_loops(cx, block, in[0], a, r, &outer);
	sum = lw_mut(cx, outer.body, "sum", lw_f(cx, 0));
	x = inner_load(cx, outer.body, in[0], &outer, a, r, &inner);
	hgc_tir_assign(cx->m, inner.body, sum, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, sum), lw_v(cx, x)));
	cnt = lw_f(cx, (double)lw_prod(r - a, in[0]->dims + a));
	m = lw_let(cx, outer.body, "mean", lw_bin(cx, HGC_TIR_DIV, lw_v(cx, sum), cnt));
	var = lw_mut(cx, outer.body, "var", lw_f(cx, 0));
	x = inner_load(cx, outer.body, in[0], &outer, a, r, &inner);
	t = lw_let(cx, inner.body, "t", lw_bin(cx, HGC_TIR_SUB, lw_v(cx, x), lw_v(cx, m)));
	hgc_tir_assign(cx->m, inner.body, var, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, var),
		lw_bin(cx, HGC_TIR_MUL, lw_v(cx, t), lw_v(cx, t))));
	cnt = lw_f(cx, (double)lw_prod(r - a, in[0]->dims + a));
	rstd = lw_let(cx, outer.body, "rstd", lw_bin(cx, HGC_TIR_DIV, lw_f(cx, 1),
		lw_call1(cx, HGC_TIR_I_SQRT, lw_bin(cx, HGC_TIR_ADD,
			lw_bin(cx, HGC_TIR_DIV, lw_v(cx, var), cnt),
			lw_f(cx, hgc_op_float(op, "epsilon"))))));
	layer_norm_out(cx, op, in, out, &outer, a, m, rstd);
	return 0;
}

/* BatchNormInference's channel axis: last for NXC, 1 for NCX. */
static int bn_axis(const struct hgc_op *op, int r)
{
	return strcmp(hgc_op_string(op, "data_format"), "NXC") ? 1 : r - 1;
}

/* (x - mean) / sqrt(variance + epsilon) * gamma + beta; the views are the context. */
static struct hgc_tir_expr *bn_elem(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				    struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	struct hgc_lower_view *const *in = mp->ctx;
	struct hgc_tir_expr *p[5], *idx[1], *y;
	int axis = bn_axis(mp->op, mp->out->ndims), i;

	(void)b;
	for (i = 1; i < 5; i++) {
		idx[0] = lw_v(cx, mp->nest->var[axis]);
		p[i] = lw_load(cx, in[i], idx, LW_F32);
	}
	y = lw_bin(cx, HGC_TIR_DIV, lw_bin(cx, HGC_TIR_SUB, lw_v(cx, x[0]), p[3]),
		   lw_call1(cx, HGC_TIR_I_SQRT, lw_bin(cx, HGC_TIR_ADD, p[4],
			    lw_f(cx, hgc_op_float(mp->op, "epsilon")))));
	return lw_bin(cx, HGC_TIR_ADD, lw_bin(cx, HGC_TIR_MUL, y, p[1]), p[2]);
}

/* BatchNormInference: elementwise with four [C] parameters along the channel axis. */
int hgc_lower_batch_norm(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			 struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			 struct hgc_lower_view *out, struct hgc_diag *d)
{
	int axis = bn_axis(op, out->ndims), i;

	if (lw_check_same(op, "the output", out, in[0], d))
		return -1;
	for (i = 1; i < 5; i++)
		if (out->ndims < 2 || in[i]->ndims != 1 || in[i]->dims[0] != out->dims[axis])
			return hgc_op_error(op, d, "parameter view %d must be [%lld] (the channels)",
					    i, (long long)(out->ndims >= 2 ? out->dims[axis] : 0));
	return lw_map_simple(cx, op, block, 1, in, out, LW_F32, bn_elem, in, d);
}
