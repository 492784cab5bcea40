/*
 * lower_reduce.c: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
 * ReduceL1 and ReduceL2.  One accumulator per output element, folded over
 * the reduced dims in increasing order (the interpreter's order).  Integers
 * accumulate exactly in index; a product saturates at +-2^31 on the way (past
 * every integer type's range, so the final saturation is the interpreter's,
 * and small enough that the next product cannot overflow).
 *
 * On f32, when the last dim is reduced and its extent is a multiple of LANES
 * (at least 2 * LANES), the fold is reassociated explicitly: LANES partial
 * accumulators, lane v taking the elements at v mod LANES, then combined as
 * a tree of halves by a lanes_* intrinsic (a max or min takes MINMAX_LANES
 * when the extent allows).  The chains are independent, so the loop runs at
 * the adds' throughput instead of their latency and vectorizes; both
 * backends follow the TIR's order and agree bit for bit, and the result
 * stays within the specs' tolerances of the interpreter's in-order double
 * sum.
 */
#include "lower_int.h"

#include <math.h>
#include <string.h>

#define PROD_CAP ((int64_t)1 << 31)
#define LANES 8			/* partial accumulators of a split f32 reduction */
#define WIDE_LANES 16		/* the same where the code around is zmm (cx->wide_lanes) */
#define MINMAX_LANES 32		/* the same for max and min, when the extent allows */

/* What one reduction kind needs. */
struct red {
	const struct hgc_op *op;
	enum lw_kind kind;
	bool mask[HGC_MAX_DIMS];	/* reduced dims of the input view */
	int64_t count;			/* elements per output */
};

/* The accumulator's first value. */
static struct hgc_tir_expr *red_init(struct hgc_lower_ctx *cx, const struct red *r,
				     enum hgc_dtype dt)
{
	int64_t lo = 0, hi = 0;
	bool is_int = r->kind == LW_INT;

	if (is_int && (r->op->kind == HGC_OP_REDUCE_MAX || r->op->kind == HGC_OP_REDUCE_MIN))
		lw_int_range(dt, &lo, &hi);
	switch (r->op->kind) {
	case HGC_OP_REDUCE_MAX: return is_int ? lw_i(cx, lo) : lw_f(cx, -INFINITY);
	case HGC_OP_REDUCE_MIN: return is_int ? lw_i(cx, hi) : lw_f(cx, INFINITY);
	case HGC_OP_REDUCE_PROD: return is_int ? lw_i(cx, 1) : lw_f(cx, 1);
	default: return is_int ? lw_i(cx, 0) : lw_f(cx, 0);
	}
}

/* max/min fold: on f32 a NaN element is taken, and a NaN accumulator stays
   NaN: max(x, acc) is x > acc ? x : acc, which keeps acc when either is
   NaN (one vmaxps; the NaN test of x is off the accumulator's chain, but
   LLVM makes compare, unordered compare, or and blend of the two).  Under
   ignore_nan the max alone: a NaN x is passed by. */
static struct hgc_tir_expr *fold_minmax(struct hgc_lower_ctx *cx, const struct red *r,
					struct hgc_tir_var *acc, struct hgc_tir_var *x)
{
	bool is_max = r->op->kind == HGC_OP_REDUCE_MAX;
	enum hgc_tir_binop cmp = is_max ? HGC_TIR_GT : HGC_TIR_LT;

	if (r->kind == LW_INT)
		return lw_sel(cx, lw_bin(cx, cmp, lw_v(cx, x), lw_v(cx, acc)), lw_v(cx, x),
			      lw_v(cx, acc));
	if (hgc_op_bool(r->op, "ignore_nan"))
		return lw_bin(cx, is_max ? HGC_TIR_MAX : HGC_TIR_MIN, lw_v(cx, x), lw_v(cx, acc));
	return lw_sel(cx, lw_isnan(cx, x), lw_v(cx, x),
		      lw_bin(cx, is_max ? HGC_TIR_MAX : HGC_TIR_MIN, lw_v(cx, x), lw_v(cx, acc)));
}

/* |x| on the compute kind. */
static struct hgc_tir_expr *absval(struct hgc_lower_ctx *cx, const struct red *r,
				   struct hgc_tir_var *x)
{
	if (r->kind != LW_INT)
		return lw_call1(cx, HGC_TIR_I_ABS, lw_v(cx, x));
	return lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, x), lw_i(cx, 0)),
		      hgc_tir_unary(cx->m, HGC_TIR_NEG, lw_v(cx, x)), lw_v(cx, x));
}

/* acc folded with x. */
static struct hgc_tir_expr *red_fold(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				     const struct red *r, struct hgc_tir_var *acc,
				     struct hgc_tir_var *x)
{
	struct hgc_tir_expr *p;

	switch (r->op->kind) {
	case HGC_OP_REDUCE_MAX:
	case HGC_OP_REDUCE_MIN:
		return fold_minmax(cx, r, acc, x);
	case HGC_OP_REDUCE_PROD:
		p = lw_bin(cx, HGC_TIR_MUL, lw_v(cx, acc), lw_v(cx, x));
		return r->kind == LW_INT ? lw_clamp_int(cx, b, p, -PROD_CAP, PROD_CAP) : p;
	case HGC_OP_REDUCE_L1:
		return lw_bin(cx, HGC_TIR_ADD, lw_v(cx, acc), absval(cx, r, x));
	case HGC_OP_REDUCE_L2:
		return lw_bin(cx, HGC_TIR_ADD, lw_v(cx, acc),
			      lw_bin(cx, HGC_TIR_MUL, lw_v(cx, x), lw_v(cx, x)));
	default:
		return lw_bin(cx, HGC_TIR_ADD, lw_v(cx, acc), lw_v(cx, x));
	}
}

/* The output value from the accumulator: the mean divides, L2 takes the root. */
static struct hgc_tir_expr *red_final(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				      const struct red *r, struct hgc_tir_var *acc,
				      enum hgc_dtype dt)
{
	int64_t lo, hi;

	if (r->op->kind == HGC_OP_REDUCE_L2)
		return lw_call1(cx, HGC_TIR_I_SQRT, lw_v(cx, acc));
	if (r->op->kind != HGC_OP_REDUCE_MEAN)
		return lw_v(cx, acc);
	if (r->kind == LW_F32)
		return lw_bin(cx, HGC_TIR_DIV, lw_v(cx, acc), lw_f(cx, (double)r->count));
	lw_int_range(dt, &lo, &hi);
	return lw_div_int(cx, b, lw_v(cx, acc), lw_i(cx, r->count), lo, hi);
}

/* Mark the reduced dims and check the views: reduced dims whole, the output the
   input without them (or with extent 1 under keep_dims). */
static int red_check(const struct hgc_op *op, struct red *r, const struct hgc_lower_view *in,
		     const struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_lower_view want = *out;
	const int64_t *axes;
	bool keep = hgc_op_bool(op, "keep_dims");
	int n = hgc_op_ints(op, "axes", &axes), i, a;

	if (in->ndims != op->in[0]->ndims)
		return hgc_op_error(op, d, "the input view has %d dims, not %d", in->ndims,
				    op->in[0]->ndims);
	for (i = 0; i < n; i++)
		if (!hgc_norm_axis(axes[i], in->ndims, &a))
			r->mask[a] = true;
	r->count = 1;
	want.ndims = 0;
	for (i = 0; i < in->ndims; i++) {
		if (r->mask[i] && lw_check_whole(op, "reduced", in, op->in[0], i, d))
			return -1;
		r->count *= r->mask[i] ? in->dims[i] : 1;
		if (!r->mask[i] || keep)
			want.dims[want.ndims++] = r->mask[i] ? 1 : in->dims[i];
	}
	return lw_check_same(op, "the output", out, &want, d);
}

/* Indices of the element: the outer nest's for kept dims, the inner one's for reduced. */
static void red_index(struct hgc_lower_ctx *cx, const struct red *r, const struct lw_nest *outer,
		      const struct lw_nest *inner, struct hgc_tir_expr **idx)
{
	int i;

	for (i = 0; i < outer->n; i++)
		idx[i] = lw_v(cx, r->mask[i] ? inner->var[i] : outer->var[i]);
}

/* Output indices: kept dims, plus 0 for reduced ones under keep_dims. */
static void out_index(struct hgc_lower_ctx *cx, const struct red *r, const struct lw_nest *outer,
		      bool keep, struct hgc_tir_expr **idx)
{
	int i, k = 0;

	for (i = 0; i < outer->n; i++)
		if (!r->mask[i] || keep)
			idx[k++] = r->mask[i] ? lw_i(cx, 0) : lw_v(cx, outer->var[i]);
}

/*
 * How many partial accumulators the reduction over src splits into: LANES,
 * or for a max or min MINMAX_LANES, or half of it, when the extent is a
 * multiple (at least twice): with 8 lanes the loop of a NaN-aware max
 * (compare, unordered compare, or, blend) came out of LLVM's SLP vectorizer
 * as two <4 x float> halves when the lanes were folded one by one after it;
 * with 16 as one <16 x float> (lanes_* fold them) whose step waits for the
 * last one's blend (about 5 cycles a vector, twice the ports' time); with
 * 32 as two such chains that overlap: attention at BERT-large seq 384 (its
 * max pass also holds the scale and mask add) ran 3.4% faster.  A max or min
 * is the same value in any order (up to the sign of a zero and which NaN).
 * Beside zmm microkernels (cx->wide_lanes: codegen vectorizes such a
 * function at 512 bits) a sum takes WIDE_LANES too, so that its loop
 * (softmax's exp and sum) is one <16 x float>: as 8 lanes it stayed
 * <8 x float> between zmm loops, and the mix cost 5% of attention at seq 128
 * (on Intel, 512-bit work in flight takes the vector ALU of port 1 from the
 * ymm code); 16 lanes in ymm code (a LayerNorm region) were 6-10% slower
 * than 8.  0: no split.
 */
static int red_lanes_of(struct hgc_lower_ctx *cx, const struct red *r,
			const struct hgc_lower_view *src)
{
	int64_t last = src->dims[src->ndims - 1];
	bool minmax = r->op->kind == HGC_OP_REDUCE_MAX || r->op->kind == HGC_OP_REDUCE_MIN;
	int lanes = cx->wide_lanes ? WIDE_LANES : LANES, l;

	if (r->kind != LW_F32 || src->ndims == 0 || !r->mask[src->ndims - 1])
		return 0;
	for (l = MINMAX_LANES; minmax && l > lanes; l /= 2)
		if (last % l == 0 && last >= 2 * l)
			return l;
	if (last % lanes == 0 && last >= 2 * lanes)
		return lanes;
	return last % LANES == 0 && last >= 2 * LANES ? LANES : 0;
}

/* The intrinsic that combines the lanes: L1, L2 and the sums add their
   partial results (each lane already took |x| or x * x). */
static enum hgc_tir_intrin lanes_intrin(const struct red *r)
{
	switch (r->op->kind) {
	case HGC_OP_REDUCE_MAX: return HGC_TIR_I_LANES_MAX;
	case HGC_OP_REDUCE_MIN: return HGC_TIR_I_LANES_MIN;
	case HGC_OP_REDUCE_PROD: return HGC_TIR_I_LANES_MUL;
	default: return HGC_TIR_I_LANES_ADD;
	}
}

/* The split fold: L accumulators over the reduced dims, the last dim in
   steps of L, lane v reading element step * L + v; then the lanes stored
   to a local tensor and folded by lanes_* (a tree of halves, log2(L)
   steps deep; folded one by one they were a chain of L - 1, a quarter of a
   softmax row at seq 384) into the returned value (in outer->body). */
static struct hgc_tir_var *red_lanes(struct hgc_lower_ctx *cx, const struct red *r,
				     const struct hgc_lower_view *src,
				     const struct lw_nest *outer, const int64_t *rdims,
				     enum hgc_dtype dt, int L)
{
	struct hgc_tir_var *lane[MINMAX_LANES], *x;
	struct hgc_tir_expr *idx[HGC_MAX_DIMS], *args[2], *zero = lw_i(cx, 0);
	int64_t dims[HGC_MAX_DIMS], n_lanes = L;
	struct hgc_tir_tensor *t;
	struct lw_nest inner;
	int n = src->ndims, v;

	memcpy(dims, rdims, sizeof(dims[0]) * (size_t)n);
	dims[n - 1] /= L;
	for (v = 0; v < L; v++)
		lane[v] = lw_mut(cx, outer->body, "acc", red_init(cx, r, dt));
	lw_loops(cx, outer->body, n, dims, 0, 0, &inner);
	for (v = 0; v < L; v++) {
		red_index(cx, r, outer, &inner, idx);
		idx[n - 1] = lw_bin(cx, HGC_TIR_ADD,
				    lw_bin(cx, HGC_TIR_MUL, idx[n - 1], lw_i(cx, L)),
				    lw_i(cx, v));
		x = lw_let(cx, inner.body, "x", lw_load(cx, src, idx, r->kind));
		hgc_tir_assign(cx->m, inner.body, lane[v],
			       red_fold(cx, inner.body, r, lane[v], x));
	}
	t = hgc_tir_tensor_newc(cx->m, "lanes", hgc_tir_ty(HGC_TIR_F32), HGC_TIR_LOCAL, 1,
				&n_lanes);
	hgc_tir_def_tensor(cx->m, outer->body, t);
	for (v = 0; v < L; v++) {
		struct hgc_tir_expr *at = lw_i(cx, v);

		hgc_tir_store(cx->m, outer->body, t, 1, &at, lw_v(cx, lane[v]));
	}
	args[0] = hgc_tir_addr(cx->m, t, 1, &zero, &n_lanes);
	args[1] = lw_i(cx, L);
	return lw_let(cx, outer->body, "acc", hgc_tir_intrin(cx->m, lanes_intrin(r), 2, args));
}

/* Every reduction. */
int hgc_lower_reduce(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		     struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		     struct hgc_diag *d)
{
	const struct hgc_lower_view *src = in[0];
	struct red r = { .op = op };
	int64_t odims[HGC_MAX_DIMS], rdims[HGC_MAX_DIMS];
	struct hgc_tir_expr *idx[HGC_MAX_DIMS];
	struct hgc_tir_var *acc, *x;
	struct lw_nest outer, inner;
	int i, n0, lanes;

	if (red_check(op, &r, src, out, d))
		return -1;
	r.kind = lw_kind_of(in, 1, op->kind != HGC_OP_REDUCE_L2);
	for (i = 0; i < src->ndims; i++) {
		odims[i] = r.mask[i] ? 1 : src->dims[i];
		rdims[i] = r.mask[i] ? src->dims[i] : 1;
	}
	n0 = block->u.block.n;
	lw_loops(cx, block, src->ndims, odims, src->ndims, lw_prod(src->ndims, src->dims), &outer);
	if ((lanes = red_lanes_of(cx, &r, src))) {
		acc = red_lanes(cx, &r, src, &outer, rdims, out->dtype, lanes);
		if (outer.body == block)
			lw_fold_row(cx, block, n0);
	} else {
		acc = lw_mut(cx, outer.body, "acc", red_init(cx, &r, out->dtype));
		lw_loops(cx, outer.body, src->ndims, rdims, 0, 0, &inner);
		red_index(cx, &r, &outer, &inner, idx);
		x = lw_let(cx, inner.body, "x", lw_load(cx, src, idx, r.kind));
		hgc_tir_assign(cx->m, inner.body, acc, red_fold(cx, inner.body, &r, acc, x));
	}
	out_index(cx, &r, &outer, hgc_op_bool(op, "keep_dims"), idx);
	lw_store(cx, out, outer.body, idx, red_final(cx, outer.body, &r, acc, out->dtype), r.kind);
	return 0;
}
