/*
 * math.c: f32 functions the TIR has no intrinsic for, composed from the ones
 * it has without losing accuracy (Kahan's expm1 and log1p), and C's fmax and
 * fmin whose NaN rules the interpreter relies on.
 */
#include "lower_int.h"

/* x != x */
struct hgc_tir_expr *lw_isnan(struct hgc_lower_ctx *cx, struct hgc_tir_var *x)
{
	return lw_bin(cx, HGC_TIR_NE, lw_v(cx, x), lw_v(cx, x));
}

/*
 * exp(x) - 1 without cancellation near 0: with u = exp(x), x when u rounds to
 * 1, -1 when u - 1 does, else (u - 1) * x / log(u); large x take u - 1.
 */
struct hgc_tir_expr *lw_expm1(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			      struct hgc_tir_expr *x)
{
	struct hgc_tir_var *xv = lw_hold(cx, block, "x", x), *u, *um1;
	struct hgc_tir_expr *e;

	u = lw_let(cx, block, "u", lw_call1(cx, HGC_TIR_I_EXP, lw_v(cx, xv)));
	um1 = lw_let(cx, block, "um1", lw_bin(cx, HGC_TIR_SUB, lw_v(cx, u), lw_f(cx, 1)));
	e = lw_bin(cx, HGC_TIR_DIV, lw_bin(cx, HGC_TIR_MUL, lw_v(cx, um1), lw_v(cx, xv)),
		   lw_call1(cx, HGC_TIR_I_LOG, lw_v(cx, u)));
	e = lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, xv), lw_f(cx, 80)), lw_v(cx, um1), e);
	e = lw_sel(cx, lw_bin(cx, HGC_TIR_EQ, lw_v(cx, um1), lw_f(cx, -1)), lw_f(cx, -1), e);
	return lw_sel(cx, lw_bin(cx, HGC_TIR_EQ, lw_v(cx, u), lw_f(cx, 1)), lw_v(cx, xv), e);
}

/* log(1 + z) for finite z > -1: z when 1 + z rounds to 1, else log(w) * z / (w - 1). */
struct hgc_tir_expr *lw_log1p(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			      struct hgc_tir_expr *z)
{
	struct hgc_tir_var *zv = lw_hold(cx, block, "z", z), *w;
	struct hgc_tir_expr *e;

	w = lw_let(cx, block, "w", lw_bin(cx, HGC_TIR_ADD, lw_f(cx, 1), lw_v(cx, zv)));
	e = lw_bin(cx, HGC_TIR_DIV,
		   lw_bin(cx, HGC_TIR_MUL, lw_call1(cx, HGC_TIR_I_LOG, lw_v(cx, w)), lw_v(cx, zv)),
		   lw_bin(cx, HGC_TIR_SUB, lw_v(cx, w), lw_f(cx, 1)));
	return lw_sel(cx, lw_bin(cx, HGC_TIR_EQ, lw_v(cx, w), lw_f(cx, 1)), lw_v(cx, zv), e);
}

/* Stable softplus: (y > 0 ? y : 0) + log1p(exp(-|y|)). */
struct hgc_tir_expr *lw_softplus(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				 struct hgc_tir_expr *y)
{
	struct hgc_tir_var *yv = lw_hold(cx, block, "y", y);
	struct hgc_tir_expr *l;

	l = lw_log1p(cx, block, lw_call1(cx, HGC_TIR_I_EXP, hgc_tir_unary(cx->m, HGC_TIR_NEG,
		lw_call1(cx, HGC_TIR_I_ABS, lw_v(cx, yv)))));
	return lw_bin(cx, HGC_TIR_ADD,
		      lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, yv), lw_f(cx, 0)), lw_v(cx, yv),
			     lw_f(cx, 0)),
		      l);
}

/* fmax/fmin: a NaN operand gives the other, else the larger (smaller) one. */
static struct hgc_tir_expr *fminmax(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				    struct hgc_tir_expr *a, struct hgc_tir_expr *b,
				    enum hgc_tir_binop cmp)
{
	struct hgc_tir_var *av = lw_hold(cx, block, "a", a), *bv = lw_hold(cx, block, "b", b);

	return lw_sel(cx, lw_isnan(cx, av), lw_v(cx, bv),
		      lw_sel(cx, lw_isnan(cx, bv), lw_v(cx, av),
			     lw_sel(cx, lw_bin(cx, cmp, lw_v(cx, av), lw_v(cx, bv)), lw_v(cx, av),
				    lw_v(cx, bv))));
}

/* C fmax. */
struct hgc_tir_expr *lw_fmax(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			     struct hgc_tir_expr *a, struct hgc_tir_expr *b)
{
	return fminmax(cx, block, a, b, HGC_TIR_GT);
}

/* C fmin. */
struct hgc_tir_expr *lw_fmin(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			     struct hgc_tir_expr *a, struct hgc_tir_expr *b)
{
	return fminmax(cx, block, a, b, HGC_TIR_LT);
}
