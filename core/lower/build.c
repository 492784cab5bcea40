/* build.c: lets, loop nests with their parallel outer loops, broadcasting and view checks. */
#include "lower_int.h"

#include <string.h>

/* let name = value; the variable takes value's type. */
struct hgc_tir_var *lw_let(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			   const char *name, struct hgc_tir_expr *value)
{
	struct hgc_tir_var *v = hgc_tir_var_new(cx->m, name, value->type);

	hgc_tir_let(cx->m, block, v, value);
	return v;
}

/* value held in a variable: itself when it reads an immutable variable already, else a let. */
struct hgc_tir_var *lw_hold(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			    const char *name, struct hgc_tir_expr *value)
{
	if (value->kind == HGC_TIR_E_VAR && !value->u.var->nassign)
		return value->u.var;
	return lw_let(cx, block, name, value);
}

/* A variable the code assigns later (an accumulator): a let, then assignments mark it mutable. */
struct hgc_tir_var *lw_mut(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
			   const char *name, struct hgc_tir_expr *value)
{
	return lw_let(cx, block, name, value);
}

/* let name = o * stride + k * dilation - pad_begin. */
struct hgc_tir_var *lw_tap(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, const char *name,
			   struct hgc_tir_var *o, struct hgc_tir_var *k, const struct hgc_win *w)
{
	struct hgc_tir_expr *e = lw_bin(cx, HGC_TIR_MUL, lw_v(cx, o), lw_i(cx, w->stride));

	e = lw_bin(cx, HGC_TIR_ADD, e, lw_bin(cx, HGC_TIR_MUL, lw_v(cx, k), lw_i(cx, w->dilation)));
	return lw_let(cx, block, name, lw_bin(cx, HGC_TIR_SUB, e, lw_i(cx, w->pad_begin)));
}

/* Names of loop indices by depth. */
static const char *const index_names[HGC_MAX_DIMS] = { "i", "j", "k", "l", "p", "q", "r", "s" };

/* Positions (among dims[0..npar)) of the loops that go parallel: 0, 1 or 2 of them. */
static int parallel_dims(struct hgc_lower_ctx *cx, int npar, const int64_t *dims, int64_t work,
			 int *pos)
{
	int i, n = 0;

	if (cx->in_parallel || cx->opts->serial || work < cx->parallel_min)
		return 0;
	for (i = 0; i < npar && n < 2; i++) {
		if (dims[i] == 1)
			continue;
		if (dims[i] < 1)
			return 0;
		pos[n++] = i;
		if (dims[i] >= 16)
			break;
	}
	return n;
}

/* A parallel for over the dims at pos[0..np) (adjacent loops once extent-1 dims are dropped). */
static struct hgc_tir_stmt *par_loop(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				     const int64_t *dims, const int *pos, int np,
				     struct lw_nest *nest)
{
	struct hgc_tir_expr *begin[2], *end[2];
	struct hgc_tir_var *vars[2];
	int k;

	for (k = 0; k < np; k++) {
		vars[k] = hgc_tir_var_new(cx->m, index_names[pos[k]], hgc_tir_ty(HGC_TIR_INDEX));
		nest->var[pos[k]] = vars[k];
		begin[k] = lw_i(cx, 0);
		end[k] = lw_i(cx, dims[pos[k]]);
	}
	return hgc_tir_body(hgc_tir_pfor(cx->m, block, np, vars, begin, end, NULL));
}

/* Build the nest; parallel dims first when chosen, then the rest in order. */
void lw_loops(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block, int n,
	      const int64_t *dims, int npar, int64_t work, struct lw_nest *nest)
{
	int pos[2], np = parallel_dims(cx, npar < n ? npar : n, dims, work, pos), i;
	struct hgc_tir_var *v;
	struct hgc_tir_stmt *b = block;

	memset(nest, 0, sizeof(*nest));
	nest->n = n;
	if (np)
		b = par_loop(cx, b, dims, pos, np, nest);
	for (i = 0; i < n; i++) {
		if (dims[i] == 1 || nest->var[i])
			continue;
		v = hgc_tir_var_new(cx->m, index_names[i], hgc_tir_ty(HGC_TIR_INDEX));
		nest->var[i] = v;
		b = hgc_tir_body(hgc_tir_for(cx->m, b, v, lw_i(cx, 0), lw_i(cx, dims[i]), NULL));
	}
	nest->body = b;
}

/* Fresh references to the nest's indices. */
void lw_index(struct hgc_lower_ctx *cx, const struct lw_nest *nest, struct hgc_tir_expr **idx)
{
	int i;

	for (i = 0; i < nest->n; i++)
		idx[i] = lw_v(cx, nest->var[i]);
}

/* Indices of v (aligned right against the nest) with 0 where v has extent 1. */
void lw_bcast_index(struct hgc_lower_ctx *cx, const struct hgc_lower_view *v,
		    const struct lw_nest *nest, struct hgc_tir_expr **idx)
{
	int lead = nest->n - v->ndims, i;

	for (i = 0; i < v->ndims; i++)
		idx[i] = v->dims[i] == 1 ? lw_i(cx, 0) : lw_v(cx, nest->var[lead + i]);
}

/* "[a,b,c]" of a view's dims. */
static const char *view_dims(char *buf, const struct hgc_lower_view *v)
{
	return hgc_dims_str(buf, v->ndims, v->dims);
}

/* Input view i must broadcast (one way) to the output view. */
int lw_check_bcast(const struct hgc_op *op, int i, const struct hgc_lower_view *v,
		   const struct hgc_lower_view *out, struct hgc_diag *d)
{
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];
	int lead = out->ndims - v->ndims, k;
	bool good = lead >= 0;

	for (k = 0; good && k < v->ndims; k++)
		good = v->dims[k] == 1 || v->dims[k] == out->dims[lead + k];
	if (good)
		return 0;
	return hgc_op_error(op, d, "input view %d %s does not broadcast to the output view %s", i,
			    view_dims(b1, v), view_dims(b2, out));
}

/* Two views of the same extents. */
int lw_check_same(const struct hgc_op *op, const char *what, const struct hgc_lower_view *a,
		  const struct hgc_lower_view *b, struct hgc_diag *d)
{
	char b1[HGC_DIMS_BUF], b2[HGC_DIMS_BUF];

	view_dims(b1, a);
	view_dims(b2, b);
	if (!strcmp(b1, b2))
		return 0;
	return hgc_op_error(op, d, "%s view %s does not match %s", what, b1, b2);
}

/* Dim k of v is all of dim k of t (a reduced or normalized axis cannot be cut). */
int lw_check_whole(const struct hgc_op *op, const char *what, const struct hgc_lower_view *v,
		   const struct hgc_tensor *t, int k, struct hgc_diag *d)
{
	if (k < v->ndims && k < t->ndims && v->dims[k] == t->dims[k])
		return 0;
	return hgc_op_error(op, d, "the slice cuts %s axis %d (%lld of %lld)", what, k,
			    (long long)(k < v->ndims ? v->dims[k] : 0),
			    (long long)(k < t->ndims ? t->dims[k] : 0));
}

/* Product of n dims. */
int64_t lw_prod(int n, const int64_t *dims)
{
	int64_t p = 1;
	int i;

	for (i = 0; i < n; i++)
		p *= dims[i];
	return p;
}
