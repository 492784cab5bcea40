/*
 * lower_shape.c: data movement: StaticTranspose, StaticReshape, Reorder
 * (a copy: the views' accessors change the layout), Concat and Select, and
 * the generic copy between two views.  Elements move as they are unless the
 * views' types differ, in which case they convert as a store does.
 */
#include "lower_int.h"

#include <string.h>

/* How a value moves from type a to type b: as is, or through a compute kind. */
static enum lw_kind move_kind(enum hgc_dtype a, enum hgc_dtype b)
{
	bool ia = a == HGC_DT_S32 || a == HGC_DT_S8 || a == HGC_DT_U8;
	bool ib = b == HGC_DT_S32 || b == HGC_DT_S8 || b == HGC_DT_U8;

	if (a == b)
		return LW_RAW;
	return ia && ib ? LW_INT : LW_F32;
}

/* dst[dst_idx] = src[src_idx] (both consumed), converting between the views' types. */
static void move(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
		 const struct hgc_lower_view *src, struct hgc_tir_expr **src_idx,
		 const struct hgc_lower_view *dst, struct hgc_tir_expr **dst_idx)
{
	enum lw_kind kind = move_kind(src->dtype, dst->dtype);

	lw_store(cx, dst, b, dst_idx, lw_load(cx, src, src_idx, kind), kind);
}

/* dst[idx] = src[idx] over the extents of dst, which src must share. */
int hgc_lower_copy(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
		   const struct hgc_lower_view *src, const struct hgc_lower_view *dst,
		   struct hgc_diag *d)
{
	struct hgc_tir_expr *si[HGC_MAX_DIMS], *di[HGC_MAX_DIMS];
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];
	struct lw_nest nest;

	hgc_dims_str(b1, src->ndims, src->dims);
	hgc_dims_str(b2, dst->ndims, dst->dims);
	if (strcmp(b1, b2))
		return hgc_error(d, NULL, "lower: cannot copy a view %s into a view %s", b1, b2);
	lw_loops(cx, block, dst->ndims, dst->dims, dst->ndims, lw_prod(dst->ndims, dst->dims),
		 &nest);
	lw_index(cx, &nest, si);
	lw_index(cx, &nest, di);
	move(cx, nest.body, src, si, dst, di);
	return 0;
}

/* StaticTranspose: output dim k is input dim order[k]. */
int hgc_lower_transpose(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_tir_expr *si[HGC_MAX_DIMS], *di[HGC_MAX_DIMS];
	struct hgc_lower_view want = *out;
	const int64_t *order;
	int n = hgc_op_ints(op, "order", &order), perm[HGC_MAX_DIMS], k;
	struct lw_nest nest;

	if (n != in[0]->ndims)
		return hgc_op_error(op, d, "order has %d values for a %d-D input view", n,
				    in[0]->ndims);
	for (k = 0; k < n; k++)
		if (hgc_norm_axis(order[k], n, &perm[k]))
			hgc_bug("lower: transpose order out of range after inference");
	want.ndims = n;
	for (k = 0; k < n; k++)
		want.dims[k] = in[0]->dims[perm[k]];
	if (lw_check_same(op, "the output", out, &want, d))
		return -1;
	lw_loops(cx, block, n, out->dims, n, lw_prod(n, out->dims), &nest);
	for (k = 0; k < n; k++)
		si[perm[k]] = lw_v(cx, nest.var[k]);
	lw_index(cx, &nest, di);
	move(cx, nest.body, in[0], si, out, di);
	return 0;
}

/* Row-major unravel of the linear index var lin over dims into idx. */
static void unravel(struct hgc_lower_ctx *cx, struct hgc_tir_var *lin, int n,
		    const int64_t *dims, struct hgc_tir_expr **idx)
{
	int64_t stride = 1;
	int k;

	for (k = n - 1; k >= 0; k--) {
		idx[k] = stride > 1 ? lw_bin(cx, HGC_TIR_DIV, lw_v(cx, lin), lw_i(cx, stride))
				    : lw_v(cx, lin);
		if (k > 0)
			idx[k] = lw_bin(cx, HGC_TIR_MOD, idx[k], lw_i(cx, dims[k]));
		stride *= dims[k];
	}
}

/* The row-major linear index of a nest over dims. */
static struct hgc_tir_expr *ravel(struct hgc_lower_ctx *cx, const struct lw_nest *nest,
				  const int64_t *dims)
{
	struct hgc_tir_expr *e = lw_i(cx, 0);
	int k;

	for (k = 0; k < nest->n; k++)
		e = lw_bin(cx, HGC_TIR_ADD, lw_bin(cx, HGC_TIR_MUL, e, lw_i(cx, dims[k])),
			   lw_v(cx, nest->var[k]));
	return e;
}

/* StaticReshape: the same row-major elements; both views must be whole tensors. */
int hgc_lower_reshape(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		      struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		      struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_tir_expr *si[HGC_MAX_DIMS], *di[HGC_MAX_DIMS];
	struct hgc_lower_view want = *in[0];
	struct hgc_tir_var *lin;
	struct lw_nest nest;

	want.ndims = op->in[0]->ndims;
	memcpy(want.dims, op->in[0]->dims, sizeof(want.dims));
	if (lw_check_same(op, "the input", in[0], &want, d))
		return -1;
	want.ndims = op->out[0]->ndims;
	memcpy(want.dims, op->out[0]->dims, sizeof(want.dims));
	if (lw_check_same(op, "the output", out, &want, d))
		return -1;
	lw_loops(cx, block, out->ndims, out->dims, out->ndims, lw_prod(out->ndims, out->dims),
		 &nest);
	lin = lw_let(cx, nest.body, "lin", ravel(cx, &nest, out->dims));
	unravel(cx, lin, in[0]->ndims, in[0]->dims, si);
	lw_index(cx, &nest, di);
	move(cx, nest.body, in[0], si, out, di);
	return 0;
}

/* Reorder: a copy between views of the same extents (their layouts may differ). */
int hgc_lower_reorder(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		      struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		      struct hgc_lower_view *out, struct hgc_diag *d)
{
	if (lw_check_same(op, "the output", out, in[0], d))
		return -1;
	return hgc_lower_copy(cx, block, in[0], out, d);
}

/* Concat's views: the axis whole everywhere, the other dims those of the output. */
static int concat_check(const struct hgc_op *op, int axis, struct hgc_lower_view *const *in,
			const struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_lower_view want;
	int i;

	if (out->ndims != op->out[0]->ndims)
		return hgc_op_error(op, d, "the output view has %d dims, not %d", out->ndims,
				    op->out[0]->ndims);
	if (lw_check_whole(op, "the concat", out, op->out[0], axis, d))
		return -1;
	for (i = 0; i < op->nin; i++) {
		want = *out;
		want.dims[axis] = op->in[i]->dims[axis];
		if (lw_check_same(op, "an input", in[i], &want, d))
			return -1;
	}
	return 0;
}

/* Concat: each input's loops write its part of the output along the axis. */
int hgc_lower_concat(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		     struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		     struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_tir_expr *si[HGC_MAX_DIMS], *di[HGC_MAX_DIMS];
	const struct hgc_lower_view *v;
	struct lw_nest nest;
	int64_t off = 0;
	int axis, i;

	if (hgc_norm_axis(hgc_op_int(op, "axis"), op->out[0]->ndims, &axis))
		hgc_bug("lower: concat axis out of range after inference");
	if (concat_check(op, axis, in, out, d))
		return -1;
	for (i = 0; i < op->nin; i++, off += v->dims[axis]) {
		v = in[i];
		lw_loops(cx, block, v->ndims, v->dims, v->ndims, lw_prod(v->ndims, v->dims), &nest);
		lw_index(cx, &nest, si);
		lw_index(cx, &nest, di);
		di[axis] = lw_bin(cx, HGC_TIR_ADD, di[axis], lw_i(cx, off));
		move(cx, nest.body, v, si, out, di);
	}
	return 0;
}

/* cond ? then : else on the loaded values. */
static struct hgc_tir_expr *select_elem(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
					struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	(void)b;
	(void)mp;
	return lw_sel(cx, lw_v(cx, x[0]), lw_v(cx, x[1]), lw_v(cx, x[2]));
}

/* Select: a broadcasting ternary on a boolean condition. */
int hgc_lower_select(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		     struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		     struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct lw_map mp = { .op = op, .nin = 3, .in = in, .out = out, .fn = select_elem };

	if (in[0]->dtype != HGC_DT_BOOL)
		return hgc_op_error(op, d, "the condition view must be boolean");
	mp.in_kind[0] = LW_RAW;
	mp.out_kind = in[1]->dtype == out->dtype && in[2]->dtype == out->dtype ? LW_RAW : LW_F32;
	mp.in_kind[1] = mp.in_kind[2] = mp.out_kind;
	return lw_map_run(cx, block, &mp, d);
}
