/*
 * convert.c: loads and stores in a compute kind, with the interpreter's
 * conversions: integers round half to even and saturate (NaN gives 0: the
 * TIR round and cast do both), bf16 rounds to nearest even (the TIR cast),
 * booleans test for non-zero.
 */
#include "lower_int.h"

#include <math.h>

/* Integer dtypes whose arithmetic LW_INT keeps exact. */
static bool is_int_dt(enum hgc_dtype dt)
{
	return dt == HGC_DT_S32 || dt == HGC_DT_S8 || dt == HGC_DT_U8;
}

/* LW_INT when every view is an integer and the op is exact on integers. */
enum lw_kind lw_kind_of(struct hgc_lower_view *const *in, int n, bool exact_int)
{
	int i;

	for (i = 0; i < n; i++)
		if (!is_int_dt(in[i]->dtype))
			return LW_F32;
	return exact_int ? LW_INT : LW_F32;
}

/* Load and convert to the compute kind. */
struct hgc_tir_expr *lw_load(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
			     struct hgc_tir_expr **idx, enum lw_kind kind)
{
	struct hgc_tir_expr *x = hgc_lower_view_load(cx, v, idx);

	if (kind == LW_F32 && v->dtype != HGC_DT_F32)
		return lw_cast(cx, HGC_TIR_F32, x);
	if (kind == LW_INT) {
		if (v->dtype == HGC_DT_F32 || v->dtype == HGC_DT_BF16)
			hgc_bug("lower: integer load of a %s view", hgc_dtype_name(v->dtype));
		return lw_cast(cx, HGC_TIR_INDEX, x);
	}
	return x;
}

/* The range of an integer dtype. */
void lw_int_range(enum hgc_dtype dt, int64_t *lo, int64_t *hi)
{
	switch (dt) {
	case HGC_DT_S8: *lo = INT8_MIN, *hi = INT8_MAX; break;
	case HGC_DT_U8: *lo = 0, *hi = UINT8_MAX; break;
	case HGC_DT_S32: *lo = INT32_MIN, *hi = INT32_MAX; break;
	default: hgc_bug("lower: no integer range for %s", hgc_dtype_name(dt));
	}
}

/* x clamped into [lo, hi] (index values). */
struct hgc_tir_expr *lw_clamp_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				  struct hgc_tir_expr *x, int64_t lo, int64_t hi)
{
	struct hgc_tir_var *v = lw_hold(cx, block, "c", x);

	return lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, v), lw_i(cx, lo)), lw_i(cx, lo),
		      lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, v), lw_i(cx, hi)), lw_i(cx, hi),
			     lw_v(cx, v)));
}

/* Round half to even: the TIR round intrinsic (docs/tir.md). */
struct hgc_tir_expr *lw_round_even(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				   struct hgc_tir_expr *x)
{
	(void)block;
	return lw_call1(cx, HGC_TIR_I_ROUND, x);
}

/* Round half away from zero (C round): round |x| half up, then restore the sign. */
struct hgc_tir_expr *lw_round_away(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				   struct hgc_tir_expr *x)
{
	struct hgc_tir_var *xv = lw_hold(cx, block, "x", x), *a, *fl, *r;

	a = lw_let(cx, block, "a", lw_call1(cx, HGC_TIR_I_ABS, lw_v(cx, xv)));
	fl = lw_let(cx, block, "fl", lw_call1(cx, HGC_TIR_I_FLOOR, lw_v(cx, a)));
	r = lw_let(cx, block, "r", lw_bin(cx, HGC_TIR_ADD, lw_v(cx, fl),
		lw_sel(cx, lw_bin(cx, HGC_TIR_GE, lw_bin(cx, HGC_TIR_SUB, lw_v(cx, a), lw_v(cx, fl)),
				  lw_f(cx, 0.5)),
		       lw_f(cx, 1), lw_f(cx, 0))));
	return lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, xv), lw_f(cx, 0)),
		      hgc_tir_unary(cx->m, HGC_TIR_NEG, lw_v(cx, r)), lw_v(cx, r));
}

/* Ties of x, an f32, to odd: round half to even, then the other neighbour at a tie
   (x - r is exact, and x + (x - r) = r +- 1 at a tie). */
static struct hgc_tir_expr *round_half_odd(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
					   struct hgc_tir_expr *x)
{
	struct hgc_tir_var *xv = lw_hold(cx, block, "x", x), *r, *d;

	r = lw_let(cx, block, "r", lw_round_even(cx, block, lw_v(cx, xv)));
	d = lw_let(cx, block, "d", lw_bin(cx, HGC_TIR_SUB, lw_v(cx, xv), lw_v(cx, r)));
	return lw_sel(cx, lw_bin(cx, HGC_TIR_EQ, lw_call1(cx, HGC_TIR_I_ABS, lw_v(cx, d)),
				 lw_f(cx, 0.5)),
		      lw_bin(cx, HGC_TIR_ADD, lw_v(cx, xv), lw_v(cx, d)), lw_v(cx, r));
}

/*
 * a + b rounded half to even for any f32 b: the sum s and its rounding error e
 * (TwoSum, exact), then s rounded, moved to the other neighbour when s sits on
 * a tie the exact sum is past (e points away from the rounded value).
 */
static struct hgc_tir_expr *add_round_any(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
					  struct hgc_tir_expr *a, struct hgc_tir_expr *b)
{
	struct hgc_tir_var *av = lw_hold(cx, block, "a", a), *bv = lw_hold(cx, block, "b", b);
	struct hgc_tir_var *s, *bb, *e, *r, *d;

	s = lw_let(cx, block, "s", lw_bin(cx, HGC_TIR_ADD, lw_v(cx, av), lw_v(cx, bv)));
	bb = lw_let(cx, block, "bb", lw_bin(cx, HGC_TIR_SUB, lw_v(cx, s), lw_v(cx, av)));
	e = lw_let(cx, block, "e", lw_bin(cx, HGC_TIR_ADD,
		lw_bin(cx, HGC_TIR_SUB, lw_v(cx, av),
		       lw_bin(cx, HGC_TIR_SUB, lw_v(cx, s), lw_v(cx, bb))),
		lw_bin(cx, HGC_TIR_SUB, lw_v(cx, bv), lw_v(cx, bb))));
	r = lw_let(cx, block, "r", lw_round_even(cx, block, lw_v(cx, s)));
	d = lw_let(cx, block, "d", lw_bin(cx, HGC_TIR_SUB, lw_v(cx, s), lw_v(cx, r)));
	return lw_sel(cx, lw_bin(cx, HGC_TIR_AND,
				 lw_bin(cx, HGC_TIR_EQ, lw_call1(cx, HGC_TIR_I_ABS, lw_v(cx, d)),
					lw_f(cx, 0.5)),
				 lw_bin(cx, HGC_TIR_GT, lw_bin(cx, HGC_TIR_MUL, lw_v(cx, d),
							       lw_v(cx, e)), lw_f(cx, 0))),
		      lw_bin(cx, HGC_TIR_ADD, lw_v(cx, s), lw_v(cx, d)), lw_v(cx, r));
}

/* AddRound (a zero point b added to a quotient a): with integer b of one parity the
   quotient rounds alone, ties to b's parity, and adding b is then exact (or beyond
   2^24, where every integer type saturates). */
struct hgc_tir_expr *lw_add_round(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				  struct hgc_tir_expr *a, struct hgc_tir_expr *b, enum lw_zp zp)
{
	switch (zp) {
	case LW_ZP_EVEN:
		return lw_bin(cx, HGC_TIR_ADD, lw_round_even(cx, block, a), b);
	case LW_ZP_ODD:
		return lw_bin(cx, HGC_TIR_ADD, round_half_odd(cx, block, a), b);
	default:
		return add_round_any(cx, block, a, b);
	}
}

/* What lw_add_round may assume of the n values v. */
enum lw_zp lw_zp_kind(const double *v, int64_t n)
{
	bool even = true, odd = true;
	int64_t i;

	for (i = 0; i < n; i++) {
		if (v[i] != nearbyint(v[i]) || fabs(v[i]) > 1 << 24)
			return LW_ZP_ANY;
		even &= fmod(v[i], 2) == 0;
		odd &= fmod(v[i], 2) != 0;
	}
	return even ? LW_ZP_EVEN : odd ? LW_ZP_ODD : LW_ZP_ANY;
}

/*
 * An f32 into an integer dtype: round half to even, then the TIR cast, which
 * saturates and takes NaN to 0 (docs/tir.md): hgc_store_f64's conversion.
 */
static struct hgc_tir_expr *f32_to_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				       struct hgc_tir_expr *x, enum hgc_dtype dt)
{
	return lw_cast(cx, (enum hgc_tir_kind)hgc_lower_type(dt).kind,
		       lw_round_even(cx, block, x));
}

/* An f32 value as dtype dt. */
static struct hgc_tir_expr *from_f32(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				     struct hgc_tir_expr *x, enum hgc_dtype dt)
{
	switch (dt) {
	case HGC_DT_F32: return x;
	case HGC_DT_BF16: return lw_cast(cx, HGC_TIR_BF16, x);
	case HGC_DT_BOOL: return lw_bin(cx, HGC_TIR_NE, x, lw_f(cx, 0));
	default: return f32_to_int(cx, block, x, dt);
	}
}

/* An index value as dtype dt: integers saturate, floats round from f32. */
static struct hgc_tir_expr *from_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				     struct hgc_tir_expr *x, enum hgc_dtype dt)
{
	int64_t lo, hi;

	switch (dt) {
	case HGC_DT_F32: return lw_cast(cx, HGC_TIR_F32, x);
	case HGC_DT_BF16: return lw_cast(cx, HGC_TIR_BF16, lw_cast(cx, HGC_TIR_F32, x));
	case HGC_DT_BOOL: return lw_bin(cx, HGC_TIR_NE, x, lw_i(cx, 0));
	default:
		lw_int_range(dt, &lo, &hi);
		return lw_cast(cx, (enum hgc_tir_kind)hgc_lower_type(dt).kind,
			       lw_clamp_int(cx, block, x, lo, hi));
	}
}

/* value of the compute kind as dt. */
struct hgc_tir_expr *lw_convert(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				struct hgc_tir_expr *value, enum lw_kind kind, enum hgc_dtype dt)
{
	if (kind == LW_F32)
		return from_f32(cx, block, value, dt);
	if (kind == LW_INT)
		return from_int(cx, block, value, dt);
	return value;
}

/* Convert and store. */
void lw_store(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
	      struct hgc_tir_stmt *block, struct hgc_tir_expr **idx, struct hgc_tir_expr *value,
	      enum lw_kind kind)
{
	hgc_lower_view_store(cx, v, block, idx, lw_convert(cx, block, value, kind, v->dtype));
}

/* The quotient of a floor division by a positive d, rounded half to even at the end. */
static struct hgc_tir_expr *div_even(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				     struct hgc_tir_var *n, struct hgc_tir_var *d)
{
	struct hgc_tir_var *q0, *r0, *q, *r;
	struct hgc_tir_expr *up;

	q0 = lw_let(cx, block, "q", lw_bin(cx, HGC_TIR_DIV, lw_v(cx, n), lw_v(cx, d)));
	r0 = lw_let(cx, block, "rem", lw_bin(cx, HGC_TIR_SUB, lw_v(cx, n),
					     lw_bin(cx, HGC_TIR_MUL, lw_v(cx, q0), lw_v(cx, d))));
	q = lw_let(cx, block, "q", lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, r0), lw_i(cx, 0)),
					  lw_bin(cx, HGC_TIR_SUB, lw_v(cx, q0), lw_i(cx, 1)),
					  lw_v(cx, q0)));
	r = lw_let(cx, block, "rem", lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, r0), lw_i(cx, 0)),
					    lw_bin(cx, HGC_TIR_ADD, lw_v(cx, r0), lw_v(cx, d)),
					    lw_v(cx, r0)));
	up = lw_bin(cx, HGC_TIR_OR,
		    lw_bin(cx, HGC_TIR_GT, lw_bin(cx, HGC_TIR_MUL, lw_i(cx, 2), lw_v(cx, r)),
			   lw_v(cx, d)),
		    lw_bin(cx, HGC_TIR_AND,
			   lw_bin(cx, HGC_TIR_EQ, lw_bin(cx, HGC_TIR_MUL, lw_i(cx, 2), lw_v(cx, r)),
				  lw_v(cx, d)),
			   lw_bin(cx, HGC_TIR_NE, lw_bin(cx, HGC_TIR_MOD, lw_v(cx, q), lw_i(cx, 2)),
				  lw_i(cx, 0))));
	return lw_bin(cx, HGC_TIR_ADD, lw_v(cx, q), lw_sel(cx, up, lw_i(cx, 1), lw_i(cx, 0)));
}

/*
 * a / b stored as an integer: the sign moves to the numerator, the quotient
 * rounds half to even and saturates; by zero it is the saturated infinity of
 * a's sign, or 0 for 0 / 0 (NaN).
 */
struct hgc_tir_expr *lw_div_int(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				struct hgc_tir_expr *a, struct hgc_tir_expr *b, int64_t lo,
				int64_t hi)
{
	struct hgc_tir_var *av = lw_hold(cx, block, "a", a), *bv = lw_hold(cx, block, "b", b);
	struct hgc_tir_var *neg, *n, *d, *q;

	neg = lw_let(cx, block, "neg", lw_bin(cx, HGC_TIR_LT, lw_v(cx, bv), lw_i(cx, 0)));
	n = lw_let(cx, block, "n", lw_sel(cx, lw_v(cx, neg),
					  hgc_tir_unary(cx->m, HGC_TIR_NEG, lw_v(cx, av)),
					  lw_v(cx, av)));
	d = lw_let(cx, block, "d", lw_sel(cx, lw_v(cx, neg),
					  hgc_tir_unary(cx->m, HGC_TIR_NEG, lw_v(cx, bv)),
					  lw_sel(cx, lw_bin(cx, HGC_TIR_EQ, lw_v(cx, bv), lw_i(cx, 0)),
						 lw_i(cx, 1), lw_v(cx, bv))));
	q = lw_let(cx, block, "q", lw_clamp_int(cx, block, div_even(cx, block, n, d), lo, hi));
	return lw_sel(cx, lw_bin(cx, HGC_TIR_EQ, lw_v(cx, bv), lw_i(cx, 0)),
		      lw_sel(cx, lw_bin(cx, HGC_TIR_GT, lw_v(cx, av), lw_i(cx, 0)), lw_i(cx, hi),
			     lw_sel(cx, lw_bin(cx, HGC_TIR_LT, lw_v(cx, av), lw_i(cx, 0)),
				    lw_i(cx, lo), lw_i(cx, 0))),
		      lw_v(cx, q));
}
