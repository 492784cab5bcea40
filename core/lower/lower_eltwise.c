/*
 * lower_eltwise.c: the elementwise map every pointwise op lowers through,
 * and the unary ops (ReLU ... Round) with the interpreter's formulas in f32,
 * or exact index arithmetic for the integer ops that allow it.
 */
#include "lower_int.h"

#include <math.h>
#include <string.h>

/* Check the inputs against the output, then out[idx] = fn(in[bcast idx]...). */
int lw_map_run(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, struct lw_map *mp,
	       struct hgc_diag *d)
{
	const struct hgc_lower_view *out = mp->out;
	struct hgc_tir_expr *idx[HGC_MAX_DIMS];
	struct hgc_tir_var *x[4];
	struct lw_nest nest;
	int i;

	for (i = 0; i < mp->nin; i++)
		if (lw_check_bcast(mp->op, i, mp->in[i], out, d))
			return -1;
	lw_loops(cx, block, out->ndims, out->dims, out->ndims, lw_prod(out->ndims, out->dims),
		 &nest);
	mp->nest = &nest;
	for (i = 0; i < mp->nin; i++) {
		lw_bcast_index(cx, mp->in[i], &nest, idx);
		x[i] = lw_let(cx, nest.body, "x", lw_load(cx, mp->in[i], idx, mp->in_kind[i]));
	}
	lw_index(cx, &nest, idx);
	lw_store(cx, out, nest.body, idx, mp->fn(cx, nest.body, x, mp), mp->out_kind);
	mp->nest = NULL;
	return 0;
}

/* A map loading every input in one kind. */
int lw_map_simple(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		  int nin, struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		  enum lw_kind kind, lw_elem_fn *fn, const void *ctx, struct hgc_diag *d)
{
	struct lw_map mp = { .op = op, .nin = nin, .in = in, .out = out, .out_kind = kind,
			     .fn = fn, .ctx = ctx };
	int i;

	for (i = 0; i < nin; i++)
		mp.in_kind[i] = kind;
	return lw_map_run(cx, block, &mp, d);
}

/* The op's float attribute as an f32 constant. */
static struct hgc_tir_expr *attr(struct hgc_lower_ctx *cx, const struct lw_map *mp,
				 const char *name)
{
	return lw_f(cx, hgc_op_float(mp->op, name));
}

/* a * b, a / b ... on f32 or index values. */
static struct hgc_tir_expr *mul(struct hgc_lower_ctx *cx, struct hgc_tir_expr *a,
				struct hgc_tir_expr *b)
{
	return lw_bin(cx, HGC_TIR_MUL, a, b);
}

/* 0.5 * x * (1 + erf(x / sqrt 2)) */
static struct hgc_tir_expr *gelu_erf(struct hgc_lower_ctx *cx, struct hgc_tir_var *x)
{
	struct hgc_tir_expr *e = lw_call1(cx, HGC_TIR_I_ERF, lw_bin(cx, HGC_TIR_DIV, lw_v(cx, x),
								  lw_f(cx, sqrt(2.0))));

	return mul(cx, mul(cx, lw_f(cx, 0.5), lw_v(cx, x)), lw_bin(cx, HGC_TIR_ADD, lw_f(cx, 1), e));
}

/* 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x * x * x))) */
static struct hgc_tir_expr *gelu_tanh(struct hgc_lower_ctx *cx, struct hgc_tir_var *x)
{
	struct hgc_tir_expr *c = mul(cx, mul(cx, mul(cx, lw_f(cx, 0.044715), lw_v(cx, x)),
					     lw_v(cx, x)), lw_v(cx, x));
	struct hgc_tir_expr *t = lw_call1(cx, HGC_TIR_I_TANH,
		mul(cx, lw_f(cx, sqrt(2 / 3.14159265358979323846)),
		    lw_bin(cx, HGC_TIR_ADD, lw_v(cx, x), c)));

	return mul(cx, mul(cx, lw_f(cx, 0.5), lw_v(cx, x)), lw_bin(cx, HGC_TIR_ADD, lw_f(cx, 1), t));
}

/* x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)) */
static struct hgc_tir_expr *sigmoid(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				    struct hgc_tir_var *x)
{
	struct hgc_tir_var *en = lw_let(cx, b, "en", lw_call1(cx, HGC_TIR_I_EXP,
		hgc_tir_unary(cx->m, HGC_TIR_NEG, lw_v(cx, x))));
	struct hgc_tir_var *ep = lw_let(cx, b, "ep", lw_call1(cx, HGC_TIR_I_EXP, lw_v(cx, x)));

	return lw_sel(cx, lw_bin(cx, HGC_TIR_GE, lw_v(cx, x), lw_f(cx, 0)),
		      lw_bin(cx, HGC_TIR_DIV, lw_f(cx, 1),
			     lw_bin(cx, HGC_TIR_ADD, lw_f(cx, 1), lw_v(cx, en))),
		      lw_bin(cx, HGC_TIR_DIV, lw_v(cx, ep),
			     lw_bin(cx, HGC_TIR_ADD, lw_f(cx, 1), lw_v(cx, ep))));
}

/* x < lo ? lo : x > hi ? hi : x on f32 values. */
static struct hgc_tir_expr *clamp_f(struct hgc_lower_ctx *cx, struct hgc_tir_var *x, double lo,
				    double hi)
{
	return lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, x), lw_f(cx, lo)), lw_f(cx, lo),
		      lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, x), lw_f(cx, hi)), lw_f(cx, hi),
			     lw_v(cx, x)));
}

/* The f32 functions with a parameter or several steps. */
static struct hgc_tir_expr *unary_f32_more(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
					   struct hgc_tir_var *x, const struct lw_map *mp)
{
	struct hgc_tir_expr *t;

	switch (mp->op->kind) {
	case HGC_OP_ELU:
		t = mul(cx, attr(cx, mp, "alpha"), lw_expm1(cx, b, lw_v(cx, x)));
		return lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, x), lw_f(cx, 0)), lw_v(cx, x), t);
	case HGC_OP_HARD_SWISH:
		t = lw_bin(cx, HGC_TIR_ADD, lw_v(cx, x), lw_f(cx, 3));
		t = lw_fmin(cx, b, lw_fmax(cx, b, t, lw_f(cx, 0)), lw_f(cx, 6));
		return lw_bin(cx, HGC_TIR_DIV, mul(cx, lw_v(cx, x), t), lw_f(cx, 6));
	case HGC_OP_HARD_SIGMOID:
		t = lw_bin(cx, HGC_TIR_ADD, mul(cx, attr(cx, mp, "alpha"), lw_v(cx, x)),
			   attr(cx, mp, "beta"));
		return lw_fmax(cx, b, lw_f(cx, 0), lw_fmin(cx, b, lw_f(cx, 1), t));
	case HGC_OP_SOFT_PLUS:
		t = lw_softplus(cx, b, mul(cx, attr(cx, mp, "beta"), lw_v(cx, x)));
		return lw_bin(cx, HGC_TIR_DIV, t, attr(cx, mp, "beta"));
	case HGC_OP_MISH:
		t = lw_call1(cx, HGC_TIR_I_TANH, lw_softplus(cx, b, lw_v(cx, x)));
		return mul(cx, lw_v(cx, x), t);
	case HGC_OP_POW:
		return hgc_tir_intrinv(cx->m, HGC_TIR_I_POW, 2, lw_v(cx, x), attr(cx, mp, "beta"));
	case HGC_OP_CLAMP:
		return clamp_f(cx, x, hgc_op_float(mp->op, "min"), hgc_op_float(mp->op, "max"));
	case HGC_OP_ROUND:
		return lw_round_away(cx, b, lw_v(cx, x));
	case HGC_OP_GELU:
		return strcmp(hgc_op_string(mp->op, "mode"), "gelu_tanh") ? gelu_erf(cx, x)
									  : gelu_tanh(cx, x);
	default:
		hgc_bug("lower: %s is not a unary op", hgc_op_table[mp->op->kind].name);
	}
}

/*
 * Whether every element of t is <= 0 or NaN because t = x - ReduceMax(x)
 * (keep_dims, so each element has its own max subtracted), in floats (an
 * integer subtract could wrap): softmax's shift, whose exp then takes
 * exp_nonpos.
 */
static bool below_own_max(const struct hgc_tensor *t)
{
	const struct hgc_op *sub = t->producer, *max;

	if (!sub || sub->kind != HGC_OP_SUBTRACT || hgc_dtype_is_int(t->dtype))
		return false;
	max = sub->in[1]->producer;
	return max && max->kind == HGC_OP_REDUCE_MAX && max->in[0] == sub->in[0] &&
	       hgc_op_bool(max, "keep_dims") && !hgc_dtype_is_int(sub->in[0]->dtype);
}

/* A unary op on an f32 value. */
static struct hgc_tir_expr *unary_f32(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				      struct hgc_tir_var *const *xs, const struct lw_map *mp)
{
	struct hgc_tir_var *x = xs[0];

	switch (mp->op->kind) {
	case HGC_OP_RELU:
		return lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, x), lw_f(cx, 0)), lw_f(cx, 0),
			      lw_v(cx, x));
	case HGC_OP_LEAKY_RELU:
		return lw_sel(cx, lw_bin(cx, HGC_TIR_GE, lw_v(cx, x), lw_f(cx, 0)), lw_v(cx, x),
			      mul(cx, attr(cx, mp, "alpha"), lw_v(cx, x)));
	case HGC_OP_SIGMOID: return sigmoid(cx, b, x);
	case HGC_OP_TANH: return lw_call1(cx, HGC_TIR_I_TANH, lw_v(cx, x));
	case HGC_OP_ERF: return lw_call1(cx, HGC_TIR_I_ERF, lw_v(cx, x));
	case HGC_OP_EXP:
		return lw_call1(cx, below_own_max(mp->op->in[0]) ? HGC_TIR_I_EXP_NONPOS : HGC_TIR_I_EXP,
				lw_v(cx, x));
	case HGC_OP_LOG: return lw_call1(cx, HGC_TIR_I_LOG, lw_v(cx, x));
	case HGC_OP_SQRT: return lw_call1(cx, HGC_TIR_I_SQRT, lw_v(cx, x));
	case HGC_OP_SQUARE: return mul(cx, lw_v(cx, x), lw_v(cx, x));
	case HGC_OP_ABS: return lw_call1(cx, HGC_TIR_I_ABS, lw_v(cx, x));
	case HGC_OP_RECIPROCAL: return lw_bin(cx, HGC_TIR_DIV, lw_f(cx, 1), lw_v(cx, x));
	default: return unary_f32_more(cx, b, x, mp);
	}
}

/* A double bound as an index constant (clamped far beyond every integer dtype). */
static int64_t bound(double v)
{
	return v < -4e18 ? -(int64_t)4e18 : v > 4e18 ? (int64_t)4e18 : (int64_t)v;
}

/*
 * Clamp on integers: x < min iff x < ceil(min), x > max iff x > floor(max);
 * a bound taken is stored rounded half to even, as the interpreter does.
 */
static struct hgc_tir_expr *clamp_int(struct hgc_lower_ctx *cx, struct hgc_tir_var *x,
				      const struct hgc_op *op)
{
	double lo = hgc_op_float(op, "min"), hi = hgc_op_float(op, "max");

	return lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, x), lw_i(cx, bound(ceil(lo)))),
		      lw_i(cx, bound(hgc_round_half_even(lo))),
		      lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, x), lw_i(cx, bound(floor(hi)))),
			     lw_i(cx, bound(hgc_round_half_even(hi))), lw_v(cx, x)));
}

/* A unary op that is exact on integers, on an index value. */
static struct hgc_tir_expr *unary_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				      struct hgc_tir_var *const *xs, const struct lw_map *mp)
{
	struct hgc_tir_var *x = xs[0];
	struct hgc_tir_expr *neg = lw_bin(cx, HGC_TIR_LT, lw_v(cx, x), lw_i(cx, 0));

	(void)b;
	switch (mp->op->kind) {
	case HGC_OP_RELU: return lw_sel(cx, neg, lw_i(cx, 0), lw_v(cx, x));
	case HGC_OP_ABS:
		return lw_sel(cx, neg, hgc_tir_unary(cx->m, HGC_TIR_NEG, lw_v(cx, x)), lw_v(cx, x));
	case HGC_OP_SQUARE: return mul(cx, lw_v(cx, x), lw_v(cx, x));
	case HGC_OP_CLAMP: return clamp_int(cx, x, mp->op);
	case HGC_OP_ROUND: return lw_v(cx, x);
	default: hgc_bug("lower: %s has no integer form", hgc_op_table[mp->op->kind].name);
	}
}

/* Unary ops whose integer results need no rounding of a fraction. */
static bool exact_on_ints(enum hgc_op_kind k)
{
	return k == HGC_OP_RELU || k == HGC_OP_ABS || k == HGC_OP_SQUARE || k == HGC_OP_CLAMP ||
	       k == HGC_OP_ROUND;
}

/* Every unary elementwise op. */
int hgc_lower_unary(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		    struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		    struct hgc_diag *d)
{
	enum lw_kind kind = lw_kind_of(in, 1, exact_on_ints(op->kind));

	if (lw_check_same(op, "the output", out, in[0], d))
		return -1;
	return lw_map_simple(cx, op, block, 1, in, out, kind,
			     kind == LW_INT ? unary_int : unary_f32, NULL, d);
}
