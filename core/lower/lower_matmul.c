/*
 * lower_matmul.c: the naive MatMul, the fallback when no template takes the
 * op: a parallel nest over the output (batch dims broadcast, M, N) with a dot
 * product over K inside, f32 for float inputs and s32 for int8 ones (the
 * interpreter's sums are exact there), then the broadcast bias.  K must be
 * whole in the views; the other dims may be slices.
 */
#include "lower_int.h"

/* A matmul problem on views: operand ranks, transposes and the matrix dims. */
struct mm {
	int ra, rb, ro, nbo;		/* ranks of A, B, the output; output batch dims */
	bool ta, tb;
	int64_t m, k, n;
	bool ints;			/* int8 operands: s32 accumulation */
};

/* Rows and columns of an operand after its transpose (1-D: a row for A, a column for B). */
static void mat_dims(const struct hgc_lower_view *v, bool trans, bool is_a, int64_t *rows,
		     int64_t *cols)
{
	int r = v->ndims;

	if (r == 1) {
		*rows = is_a ? 1 : v->dims[0];
		*cols = is_a ? v->dims[0] : 1;
		return;
	}
	*rows = trans ? v->dims[r - 1] : v->dims[r - 2];
	*cols = trans ? v->dims[r - 2] : v->dims[r - 1];
}

/* The position of K in A (its last matrix dim) or in B (its first). */
static int k_pos(const struct mm *p, bool is_a)
{
	int r = is_a ? p->ra : p->rb;
	bool t = is_a ? p->ta : p->tb;

	if (r == 1)
		return 0;
	return is_a == t ? r - 2 : r - 1;
}

/* The output extents the operand views imply; -1 with d set when they do not fit. */
static int mm_check(const struct hgc_op *op, struct mm *p, struct hgc_lower_view *const *in,
		    const struct hgc_lower_view *out, struct hgc_diag *d)
{
	const struct hgc_lower_view *a = in[0], *b = in[1];
	struct hgc_lower_view want = *out, batch;
	int64_t k2;
	int i;

	p->ra = a->ndims, p->rb = b->ndims, p->ro = out->ndims;
	p->nbo = p->ro - (p->ra > 1) - (p->rb > 1);
	if (p->ra < 1 || p->rb < 1 || p->nbo < 0)
		return hgc_op_error(op, d, "matmul views of ranks %d, %d into %d do not fit", p->ra,
				    p->rb, p->ro);
	mat_dims(a, p->ta, true, &p->m, &p->k);
	mat_dims(b, p->tb, false, &k2, &p->n);
	if (p->k != k2)
		return hgc_op_error(op, d, "the views' inner dims differ: %lld vs %lld",
				    (long long)p->k, (long long)k2);
	if (lw_check_whole(op, "the reduced", a, op->in[0], k_pos(p, true), d))
		return -1;
	if (p->rb > 1)
		want.dims[p->ro - 1] = p->n;
	if (p->ra > 1)
		want.dims[p->ro - 1 - (p->rb > 1)] = p->m;
	if (lw_check_same(op, "the output", out, &want, d))
		return -1;
	want.ndims = p->nbo;
	for (i = 0; i < 2; i++) {
		batch = *in[i];
		batch.ndims = in[i]->ndims - 2;
		if (batch.ndims > 0 && lw_check_bcast(op, i, &batch, &want, d))
			return -1;
	}
	return 0;
}

/* Indices of operand v (A or B) at output batch indices, row or column r, and k. */
static void operand_index(struct hgc_lower_ctx *cx, const struct mm *p, bool is_a,
			  const struct hgc_lower_view *v, const struct lw_nest *o,
			  struct hgc_tir_var *k, struct hgc_tir_expr **idx)
{
	int r = v->ndims, nb = r > 2 ? r - 2 : 0, i, kp = k_pos(p, is_a);
	struct hgc_tir_var *mn = NULL;

	for (i = 0; i < nb; i++)
		idx[i] = v->dims[i] == 1 ? lw_i(cx, 0) : lw_v(cx, o->var[p->nbo - nb + i]);
	if (r == 1) {
		idx[0] = lw_v(cx, k);
		return;
	}
	if (is_a)
		mn = o->var[p->ro - 1 - (p->rb > 1)];
	else
		mn = o->var[p->ro - 1];
	idx[kp] = lw_v(cx, k);
	idx[kp == r - 1 ? r - 2 : r - 1] = lw_v(cx, mn);
}

/* The product of one A and one B element in the accumulator's type. */
static struct hgc_tir_expr *product(struct hgc_lower_ctx *cx, const struct mm *p,
				    struct hgc_lower_view *const *in, const struct lw_nest *o,
				    struct hgc_tir_var *k)
{
	struct hgc_tir_expr *idx[HGC_MAX_DIMS], *x[2];
	enum hgc_tir_kind acc = p->ints ? HGC_TIR_S32 : HGC_TIR_F32;
	int i;

	for (i = 0; i < 2; i++) {
		operand_index(cx, p, i == 0, in[i], o, k, idx);
		x[i] = hgc_lower_view_load(cx, in[i], idx);
		if (in[i]->dtype != (p->ints ? HGC_DT_S32 : HGC_DT_F32))
			x[i] = lw_cast(cx, acc, x[i]);
	}
	return lw_bin(cx, HGC_TIR_MUL, x[0], x[1]);
}

/* acc [+ bias] in the kind the store converts from: index for ints with an integer
   bias (or none), f32 otherwise. */
static struct hgc_tir_expr *with_bias(struct hgc_lower_ctx *cx, const struct mm *p,
				      struct hgc_lower_view *const *in, int nin,
				      const struct lw_nest *o, struct hgc_tir_var *acc,
				      enum lw_kind *kind)
{
	struct hgc_tir_expr *idx[HGC_MAX_DIMS], *v;

	*kind = p->ints && (nin < 3 || in[2]->dtype == HGC_DT_S32) ? LW_INT : LW_F32;
	v = *kind == LW_INT ? lw_cast(cx, HGC_TIR_INDEX, lw_v(cx, acc))
			    : p->ints ? lw_cast(cx, HGC_TIR_F32, lw_v(cx, acc)) : lw_v(cx, acc);
	if (nin < 3)
		return v;
	lw_bcast_index(cx, in[2], o, idx);
	return lw_bin(cx, HGC_TIR_ADD, v, lw_load(cx, in[2], idx, *kind));
}

/* MatMul: out[b..., m, n] = sum_k A[b..., m, k] * B[b..., k, n] (+ bias). */
int hgc_lower_matmul(struct hgc_lower_ctx *cx, const struct hgc_op *op,
		     struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		     struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct mm p = { .ta = hgc_op_bool(op, "transpose_a"), .tb = hgc_op_bool(op, "transpose_b") };
	struct hgc_tir_var *k = hgc_tir_var_new(cx->m, "k", hgc_tir_ty(HGC_TIR_INDEX)), *acc;
	struct hgc_tir_expr *idx[HGC_MAX_DIMS], *v;
	struct hgc_tir_stmt *b;
	struct lw_nest o;
	enum lw_kind kind;

	if (mm_check(op, &p, in, out, d))
		return -1;
	if (op->nin > 2 && lw_check_bcast(op, 2, in[2], out, d))
		return -1;
	p.ints = in[0]->dtype == HGC_DT_U8 || in[0]->dtype == HGC_DT_S8;
	lw_loops(cx, block, out->ndims, out->dims, out->ndims, cx->parallel_min, &o);
	acc = lw_mut(cx, o.body, "acc", p.ints ? hgc_tir_int(cx->m, HGC_TIR_S32, 0) : lw_f(cx, 0));
	b = hgc_tir_body(hgc_tir_for(cx->m, o.body, k, lw_i(cx, 0), lw_i(cx, p.k), NULL));
	hgc_tir_assign(cx->m, b, acc, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, acc),
					     product(cx, &p, in, &o, k)));
	v = with_bias(cx, &p, in, op->nin, &o, acc, &kind);
	lw_index(cx, &o, idx);
	lw_store(cx, out, o.body, idx, v, kind);
	return 0;
}
