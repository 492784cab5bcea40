/*
 * lower_pool.c: MaxPool and AvgPool over the two spatial dims of a 4-D src,
 * with the interpreter's window geometry (core/graph/window.c).  The views
 * may slice batch and channels; the spatial dims must be whole.
 */
#include "lower_int.h"

#include <math.h>
#include <string.h>

/* A pooling problem: dim positions in the views and both windows. */
struct pool {
	int pn, pc, ph, pw;		/* positions of N, C, H, W in the 4-D views */
	int64_t h, w;			/* input spatial size */
	struct hgc_win wh, ww;
	bool is_max, exclude;
};

/* Decode the op (already checked by inference) into p. */
static void pool_setup(const struct hgc_op *op, struct pool *p)
{
	const struct hgc_tensor *s = op->in[0];
	bool nxc = !strcmp(hgc_op_string(op, "data_format"), "NXC");
	bool ceil_mode = !strcmp(hgc_op_string(op, "rounding_type"), "ceil");
	const int64_t *k;

	p->pn = 0;
	p->pc = nxc ? 3 : 1;
	p->ph = nxc ? 1 : 2;
	p->pw = nxc ? 2 : 3;
	p->h = s->dims[p->ph];
	p->w = s->dims[p->pw];
	hgc_op_ints(op, "kernel", &k);
	if (hgc_win_setup(op, 0, p->h, k[0], ceil_mode, &p->wh, NULL) ||
	    hgc_win_setup(op, 1, p->w, k[1], ceil_mode, &p->ww, NULL))
		hgc_bug("lower: pooling geometry fails after inference");
	p->is_max = op->kind == HGC_OP_MAX_POOL;
	p->exclude = !p->is_max && hgc_op_bool(op, "exclude_pad");
}

/* The views: 4-D, batch and channels alike, spatial dims whole. */
static int pool_check(const struct hgc_op *op, const struct pool *p,
		      const struct hgc_lower_view *in, const struct hgc_lower_view *out,
		      struct hgc_diag *d)
{
	if (in->ndims != 4 || out->ndims != 4)
		return hgc_op_error(op, d, "pooling views must be 4-D");
	if (in->dims[p->pn] != out->dims[p->pn] || in->dims[p->pc] != out->dims[p->pc])
		return hgc_op_error(op, d, "the input and output views differ in batch or channels");
	if (lw_check_whole(op, "spatial", in, op->in[0], p->ph, d) ||
	    lw_check_whole(op, "spatial", in, op->in[0], p->pw, d) ||
	    lw_check_whole(op, "spatial", out, op->out[0], p->ph, d) ||
	    lw_check_whole(op, "spatial", out, op->out[0], p->pw, d))
		return -1;
	return 0;
}

/* lo <= v && v < hi on an index variable. */
static struct hgc_tir_expr *within(struct hgc_lower_ctx *cx, struct hgc_tir_var *v, int64_t lo,
				   int64_t hi)
{
	return lw_bin(cx, HGC_TIR_AND, lw_bin(cx, HGC_TIR_GE, lw_v(cx, v), lw_i(cx, lo)),
		      lw_bin(cx, HGC_TIR_LT, lw_v(cx, v), lw_i(cx, hi)));
}

/* The accumulator, the count of elements averaged, and the compute kind. */
struct acc {
	struct hgc_tir_var *acc, *cnt;
	enum lw_kind kind;
};

/* Fold the input at (ih, iw) into the accumulator when it is inside the input. */
static void pool_tap(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b, const struct pool *p,
		     const struct hgc_lower_view *in, const struct lw_nest *o, struct acc *a,
		     struct hgc_tir_var *ih, struct hgc_tir_var *iw)
{
	struct hgc_tir_expr *idx[4], *take, *count;
	struct hgc_tir_stmt *then;
	struct hgc_tir_var *x;

	if (!p->is_max && !p->exclude) {
		count = lw_bin(cx, HGC_TIR_AND,
			       lw_bin(cx, HGC_TIR_LT, lw_v(cx, ih), lw_i(cx, p->h + p->wh.user_pad_end)),
			       lw_bin(cx, HGC_TIR_LT, lw_v(cx, iw), lw_i(cx, p->w + p->ww.user_pad_end)));
		hgc_tir_assign(cx->m, b, a->cnt, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, a->cnt),
			lw_sel(cx, count, lw_i(cx, 1), lw_i(cx, 0))));
	}
	then = hgc_tir_body(hgc_tir_if(cx->m, b, lw_bin(cx, HGC_TIR_AND, within(cx, ih, 0, p->h),
							within(cx, iw, 0, p->w)), false));
	idx[p->pn] = lw_v(cx, o->var[p->pn]);
	idx[p->pc] = lw_v(cx, o->var[p->pc]);
	idx[p->ph] = lw_v(cx, ih);
	idx[p->pw] = lw_v(cx, iw);
	x = lw_let(cx, then, "x", lw_load(cx, in, idx, a->kind));
	if (p->exclude)
		hgc_tir_assign(cx->m, then, a->cnt, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, a->cnt),
							   lw_i(cx, 1)));
	if (!p->is_max) {
		hgc_tir_assign(cx->m, then, a->acc, lw_bin(cx, HGC_TIR_ADD, lw_v(cx, a->acc),
							   lw_v(cx, x)));
		return;
	}
	take = lw_bin(cx, HGC_TIR_GT, lw_v(cx, x), lw_v(cx, a->acc));
	if (a->kind == LW_F32)
		take = lw_bin(cx, HGC_TIR_OR, take, lw_isnan(cx, x));
	hgc_tir_assign(cx->m, then, a->acc, lw_sel(cx, take, lw_v(cx, x), lw_v(cx, a->acc)));
}

/* The pooled value: the max, or the sum over the count (0 for no count). */
static struct hgc_tir_expr *pool_value(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *b,
				       const struct pool *p, const struct acc *a,
				       enum hgc_dtype dt)
{
	int64_t lo, hi;

	if (p->is_max)
		return lw_v(cx, a->acc);
	if (a->kind == LW_INT) {
		lw_int_range(dt, &lo, &hi);
		return lw_div_int(cx, b, lw_v(cx, a->acc), lw_v(cx, a->cnt), lo, hi);
	}
	return lw_sel(cx, lw_bin(cx, HGC_TIR_EQ, lw_v(cx, a->cnt), lw_i(cx, 0)), lw_f(cx, 0),
		      lw_bin(cx, HGC_TIR_DIV, lw_v(cx, a->acc),
			     lw_cast(cx, HGC_TIR_F32, lw_v(cx, a->cnt))));
}

/* The accumulator's first value: -inf (or the type's least) for max, else 0. */
static struct hgc_tir_expr *pool_init(struct hgc_lower_ctx *cx, const struct pool *p,
				      enum lw_kind kind, enum hgc_dtype dt)
{
	int64_t lo = 0, hi;

	if (kind == LW_INT && p->is_max)
		lw_int_range(dt, &lo, &hi);
	if (kind == LW_INT)
		return lw_i(cx, lo);
	return lw_f(cx, p->is_max ? -INFINITY : 0);
}

/* MaxPool and AvgPool: per output element, loops over the kernel taps. */
int hgc_lower_pool(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		   struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		   struct hgc_diag *d)
{
	struct hgc_tir_var *kh = hgc_tir_var_new(cx->m, "kh", hgc_tir_ty(HGC_TIR_INDEX));
	struct hgc_tir_var *kw = hgc_tir_var_new(cx->m, "kw", hgc_tir_ty(HGC_TIR_INDEX));
	struct hgc_tir_expr *idx[4];
	struct hgc_tir_stmt *b;
	struct lw_nest o;
	struct pool p;
	struct acc a;

	pool_setup(op, &p);
	if (pool_check(op, &p, in[0], out, d))
		return -1;
	a.kind = lw_kind_of(in, 1, true);
	lw_loops(cx, block, 4, out->dims, 4, lw_prod(4, out->dims) * p.wh.kernel * p.ww.kernel, &o);
	a.acc = lw_mut(cx, o.body, "acc", pool_init(cx, &p, a.kind, out->dtype));
	a.cnt = p.is_max ? NULL : lw_mut(cx, o.body, "cnt", lw_i(cx, 0));
	b = hgc_tir_body(hgc_tir_for(cx->m, o.body, kh, lw_i(cx, 0), lw_i(cx, p.wh.kernel), NULL));
	b = hgc_tir_body(hgc_tir_for(cx->m, b, kw, lw_i(cx, 0), lw_i(cx, p.ww.kernel), NULL));
	pool_tap(cx, b, &p, in[0], &o, &a, lw_tap(cx, b, "ih", o.var[p.ph], kh, &p.wh),
		 lw_tap(cx, b, "iw", o.var[p.pw], kw, &p.ww));
	lw_index(cx, &o, idx);
	lw_store(cx, out, o.body, idx, pool_value(cx, o.body, &p, &a, out->dtype), a.kind);
	return 0;
}
