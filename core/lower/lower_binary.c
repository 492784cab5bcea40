/*
 * lower_binary.c: Add, Subtract, Multiply, Divide, Maximum, Minimum and
 * AddRound with numpy broadcasting over the views, and BiasAdd.  f32 arithmetic rounds
 * once as the interpreter's double does; integers run exact in index and
 * saturate (Divide rounds its quotient half to even).
 */
#include "lower_int.h"

#include <stdlib.h>
#include <string.h>

/* Maximum / Minimum on f32: NaN if either is (a + b carries it), else the larger / smaller. */
static struct hgc_tir_expr *minmax_f32(struct hgc_lower_ctx *cx, struct hgc_tir_var *a,
				       struct hgc_tir_var *b, enum hgc_tir_binop cmp)
{
	struct hgc_tir_expr *nan = lw_bin(cx, HGC_TIR_OR, lw_isnan(cx, a), lw_isnan(cx, b));

	return lw_sel(cx, nan, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, a), lw_v(cx, b)),
		      lw_sel(cx, lw_bin(cx, cmp, lw_v(cx, a), lw_v(cx, b)), lw_v(cx, a),
			     lw_v(cx, b)));
}

/* The arithmetic operator of a binary op kind (MIN/MAX for the comparisons). */
static enum hgc_tir_binop arith(enum hgc_op_kind k)
{
	switch (k) {
	case HGC_OP_ADD: return HGC_TIR_ADD;
	case HGC_OP_SUBTRACT: return HGC_TIR_SUB;
	case HGC_OP_MULTIPLY: return HGC_TIR_MUL;
	case HGC_OP_DIVIDE: return HGC_TIR_DIV;
	case HGC_OP_MAXIMUM: return HGC_TIR_GT;
	case HGC_OP_MINIMUM: return HGC_TIR_LT;
	default: hgc_bug("lower: %s is not a binary op", hgc_op_table[k].name);
	}
}

/* One element of a binary op on f32 values. */
static struct hgc_tir_expr *binary_f32(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				       struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	enum hgc_tir_binop op = arith(mp->op->kind);

	(void)b;
	if (op == HGC_TIR_GT || op == HGC_TIR_LT)
		return minmax_f32(cx, x[0], x[1], op);
	return lw_bin(cx, op, lw_v(cx, x[0]), lw_v(cx, x[1]));
}

/* One element of a binary op on index values (exact; Divide rounds and saturates). */
static struct hgc_tir_expr *binary_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				       struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	enum hgc_tir_binop op = arith(mp->op->kind);
	int64_t lo, hi;

	if (op == HGC_TIR_GT || op == HGC_TIR_LT)
		return lw_sel(cx, lw_bin(cx, op, lw_v(cx, x[0]), lw_v(cx, x[1])), lw_v(cx, x[0]),
			      lw_v(cx, x[1]));
	if (op != HGC_TIR_DIV)
		return lw_bin(cx, op, lw_v(cx, x[0]), lw_v(cx, x[1]));
	lw_int_range(mp->out->dtype, &lo, &hi);
	return lw_div_int(cx, b, lw_v(cx, x[0]), lw_v(cx, x[1]), lo, hi);
}

/* What AddRound may assume of its second operand: a constant's parity, if one. */
static enum lw_zp add_round_zp(const struct hgc_op *op)
{
	const struct hgc_tensor *b = op->in[1];
	int64_t n = hgc_tensor_nelems(b), i;
	double *v;
	enum lw_zp zp;

	if (!b->data)
		return LW_ZP_ANY;
	v = hgc_xcalloc((size_t)n + 1, sizeof(*v));
	for (i = 0; i < n; i++)
		v[i] = hgc_load_f64(b->dtype, b->data, i);
	zp = lw_zp_kind(v, n);
	free(v);
	return zp;
}

/* One element of AddRound; the context is its lw_zp. */
static struct hgc_tir_expr *add_round_f32(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
					  struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	return lw_add_round(cx, b, lw_v(cx, x[0]), lw_v(cx, x[1]), *(const enum lw_zp *)mp->ctx);
}

/* The broadcasting binary ops. */
int hgc_lower_binary(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		     struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		     struct hgc_diag *d)
{
	enum lw_kind kind = lw_kind_of(in, 2, true);
	enum lw_zp zp;

	if (op->kind == HGC_OP_ADD_ROUND) {
		zp = add_round_zp(op);
		return lw_map_simple(cx, op, block, 2, in, out, LW_F32, add_round_f32, &zp, d);
	}

	if (kind == LW_INT && (out->dtype == HGC_DT_F32 || out->dtype == HGC_DT_BF16))
		kind = LW_F32;
	return lw_map_simple(cx, op, block, 2, in, out, kind,
			     kind == LW_INT ? binary_int : binary_f32, NULL, d);
}

/* BiasAdd's channel axis in a rank-r src: last for NXC, 1 for NCX. */
static int bias_axis(const struct hgc_op *op, int r)
{
	return strcmp(hgc_op_string(op, "data_format"), "NXC") ? 1 : r - 1;
}

/* x + bias[channel]; the bias view is the map's context. */
static struct hgc_tir_expr *bias_elem(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				      struct hgc_tir_var *const *x, const struct lw_map *mp)
{
	const struct hgc_lower_view *bias = mp->ctx;
	struct hgc_tir_expr *idx[1];
	int axis = bias_axis(mp->op, mp->out->ndims);

	(void)b;
	idx[0] = lw_v(cx, mp->nest->var[axis]);
	return lw_bin(cx, HGC_TIR_ADD, lw_v(cx, x[0]), lw_load(cx, bias, idx, mp->out_kind));
}

/* BiasAdd: src plus a [C] bias along the channel axis. */
int hgc_lower_bias_add(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		       struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		       struct hgc_lower_view *out, struct hgc_diag *d)
{
	enum lw_kind kind = lw_kind_of(in, 2, true);
	int axis = bias_axis(op, out->ndims);

	if (lw_check_same(op, "the output", out, in[0], d))
		return -1;
	if (out->ndims < 2 || in[1]->ndims != 1 || in[1]->dims[0] != out->dims[axis])
		return hgc_op_error(op, d, "the bias view must be [%lld] (the channels)",
				    (long long)(out->ndims >= 2 ? out->dims[axis] : 0));
	return lw_map_simple(cx, op, block, 1, in, out, kind, bias_elem, in[1], d);
}
