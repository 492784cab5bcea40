/*
 * tmpl_build.c: the builders generated build functions call.  They wrap
 * the Tensor IR builder: constants fold as expressions are built, loops
 * and lets record the range of their variables (so a brgemm's address
 * arrays can be sized), statements carry the template's source location,
 * and the brgemm and elementwise helpers turn slices of (blocked) buffers
 * into addresses, leading dimensions and element accesses.
 */
#include "tmpl.h"

#include <stdarg.h>
#include <string.h>

/* A known interval of a variable's values. */
struct range {
	bool known;
	int64_t lo, hi;
};

/* Report an error at a template location; returns -1. */
int hgc_tmpl_fail(struct hgc_tmpl_build *b, struct hgc_loc loc, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	b->nerr++;
	return hgc_error(b->d, loc.file ? &loc : NULL, "template %s: %s", b->t->name, buf);
}

/* An index constant. */
struct hgc_tir_expr *hgc_tmpl_k(struct hgc_tmpl_build *b, int64_t v)
{
	return hgc_tir_idx(b->m, v);
}

/* A bool constant. */
struct hgc_tir_expr *hgc_tmpl_kb(struct hgc_tmpl_build *b, bool v)
{
	return hgc_tir_bool(b->m, v);
}

/* A variable's value. */
struct hgc_tir_expr *hgc_tmpl_ref(struct hgc_tmpl_build *b, struct hgc_tir_var *v)
{
	return hgc_tir_ref(b->m, v);
}

/* Whether e is a constant of kind k, and its value. */
static bool konst(const struct hgc_tir_expr *e, enum hgc_tir_kind k, int64_t *v)
{
	if (e->kind != HGC_TIR_E_INT || e->type.kind != k || e->type.ptr)
		return false;
	*v = e->u.i;
	return true;
}

/* Fold an index operation of two constants (false: leave it to run time). */
static bool fold(struct hgc_tmpl_build *b, enum hgc_tir_binop op, int64_t x, int64_t y,
		 struct hgc_tir_expr **out)
{
	struct hgc_tmpl_env *e = &b->env;
	int64_t r;

	switch (op) {
	case HGC_TIR_ADD: r = hgc_tmpl_add(e, x, y); break;
	case HGC_TIR_SUB: r = hgc_tmpl_sub(e, x, y); break;
	case HGC_TIR_MUL: r = hgc_tmpl_mul(e, x, y); break;
	case HGC_TIR_DIV: r = hgc_tmpl_div(e, x, y); break;
	case HGC_TIR_MOD: r = hgc_tmpl_mod(e, x, y); break;
	case HGC_TIR_MIN: r = x < y ? x : y; break;
	case HGC_TIR_MAX: r = x > y ? x : y; break;
	case HGC_TIR_EQ: *out = hgc_tir_bool(b->m, x == y); return true;
	case HGC_TIR_NE: *out = hgc_tir_bool(b->m, x != y); return true;
	case HGC_TIR_LT: *out = hgc_tir_bool(b->m, x < y); return true;
	case HGC_TIR_LE: *out = hgc_tir_bool(b->m, x <= y); return true;
	case HGC_TIR_GT: *out = hgc_tir_bool(b->m, x > y); return true;
	case HGC_TIR_GE: *out = hgc_tir_bool(b->m, x >= y); return true;
	default: return false;
	}
	*out = hgc_tir_idx(b->m, r);
	return true;
}

/* x op y with constants folded and x + 0, x * 1, x - 0, x / 1 simplified. */
struct hgc_tir_expr *hgc_tmpl_bin(struct hgc_tmpl_build *b, enum hgc_tir_binop op,
				  struct hgc_tir_expr *x, struct hgc_tir_expr *y)
{
	struct hgc_tir_expr *r;
	int64_t cx = 0, cy = 0;
	bool kx = konst(x, HGC_TIR_INDEX, &cx), ky = konst(y, HGC_TIR_INDEX, &cy);

	if (kx && ky && fold(b, op, cx, cy, &r))
		return r;
	if (konst(x, HGC_TIR_BOOL, &cx) && (op == HGC_TIR_AND || op == HGC_TIR_OR))
		return (op == HGC_TIR_AND) == (cx != 0) ? y : x;
	if (konst(y, HGC_TIR_BOOL, &cy) && (op == HGC_TIR_AND || op == HGC_TIR_OR))
		return (op == HGC_TIR_AND) == (cy != 0) ? x : y;
	if (ky && ((cy == 0 && (op == HGC_TIR_ADD || op == HGC_TIR_SUB)) ||
		   (cy == 1 && (op == HGC_TIR_MUL || op == HGC_TIR_DIV))))
		return x;
	if (kx && ((cx == 0 && op == HGC_TIR_ADD) || (cx == 1 && op == HGC_TIR_MUL)))
		return y;
	return hgc_tir_binary(b->m, op, x, y);
}

/* ceildiv(x, y) for non-negative x and positive y: (x + y - 1) / y. */
struct hgc_tir_expr *hgc_tmpl_cdiv_x(struct hgc_tmpl_build *b, struct hgc_tir_expr *x,
				     struct hgc_tir_expr *y)
{
	struct hgc_tir_expr *y1 = hgc_tmpl_bin(b, HGC_TIR_SUB, hgc_tir_expr_copy(b->m, y),
					       hgc_tmpl_k(b, 1));

	return hgc_tmpl_bin(b, HGC_TIR_DIV, hgc_tmpl_bin(b, HGC_TIR_ADD, x, y1), y);
}

/* -x */
struct hgc_tir_expr *hgc_tmpl_neg_x(struct hgc_tmpl_build *b, struct hgc_tir_expr *x)
{
	int64_t v;

	if (konst(x, HGC_TIR_INDEX, &v))
		return hgc_tmpl_k(b, hgc_tmpl_neg(&b->env, v));
	return hgc_tir_unary(b->m, HGC_TIR_NEG, x);
}

/* !x */
struct hgc_tir_expr *hgc_tmpl_not_x(struct hgc_tmpl_build *b, struct hgc_tir_expr *x)
{
	int64_t v;

	if (konst(x, HGC_TIR_BOOL, &v))
		return hgc_tmpl_kb(b, !v);
	return hgc_tir_unary(b->m, HGC_TIR_NOT, x);
}

/* The range slot of variable v (grown on demand). */
static struct range *range_of(struct hgc_tmpl_build *b, const struct hgc_tir_var *v)
{
	if (b->ranges.elem == 0)
		hgc_vec_init(&b->ranges, sizeof(struct range));
	while ((int)b->ranges.len <= v->id)
		hgc_vec_push(&b->ranges);
	return &HGC_VEC_AT(&b->ranges, struct range, v->id);
}

/* The interval of an index expression: false when it cannot be bounded. */
bool hgc_tmpl_bounds(struct hgc_tmpl_build *b, const struct hgc_tir_expr *e, int64_t *lo,
		     int64_t *hi)
{
	int64_t a0, a1, b0, b1, c[4];
	int i;

	if (e->kind == HGC_TIR_E_INT) {
		*lo = *hi = e->u.i;
		return true;
	}
	if (e->kind == HGC_TIR_E_VAR) {
		struct range *r = range_of(b, e->u.var);

		*lo = r->lo, *hi = r->hi;
		return r->known;
	}
	if (e->kind != HGC_TIR_E_BINARY || !hgc_tmpl_bounds(b, e->ops[0], &a0, &a1) ||
	    !hgc_tmpl_bounds(b, e->ops[1], &b0, &b1))
		return false;
	switch (e->op) {
	case HGC_TIR_ADD: *lo = a0 + b0, *hi = a1 + b1; return true;
	case HGC_TIR_SUB: *lo = a0 - b1, *hi = a1 - b0; return true;
	case HGC_TIR_MIN: *lo = a0 < b0 ? a0 : b0, *hi = a1 < b1 ? a1 : b1; return true;
	case HGC_TIR_MAX: *lo = a0 > b0 ? a0 : b0, *hi = a1 > b1 ? a1 : b1; return true;
	case HGC_TIR_MUL:
		c[0] = a0 * b0, c[1] = a0 * b1, c[2] = a1 * b0, c[3] = a1 * b1;
		for (*lo = *hi = c[0], i = 1; i < 4; i++) {
			*lo = c[i] < *lo ? c[i] : *lo;
			*hi = c[i] > *hi ? c[i] : *hi;
		}
		return true;
	case HGC_TIR_DIV:
		if (b0 <= 0 || a0 < 0)
			return false;
		*lo = a0 / b1, *hi = a1 / b0;
		return true;
	case HGC_TIR_MOD:
		if (b0 <= 0 || a0 < 0)
			return false;
		*lo = 0, *hi = a1 < b1 - 1 ? a1 : b1 - 1;
		return true;
	default:
		return false;
	}
}

/* Record the interval of v: [lo, hi] when known. */
static void set_range(struct hgc_tmpl_build *b, const struct hgc_tir_var *v, bool known,
		      int64_t lo, int64_t hi)
{
	struct range *r = range_of(b, v);

	r->known = known && lo <= hi;
	r->lo = lo, r->hi = hi;
}

/* A fresh index variable. */
struct hgc_tir_var *hgc_tmpl_var(struct hgc_tmpl_build *b, const char *name)
{
	return hgc_tir_var_new(b->m, name, hgc_tir_ty(HGC_TIR_INDEX));
}

/* let name = value. */
struct hgc_tir_var *hgc_tmpl_let(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				 const char *name, struct hgc_tir_expr *value, struct hgc_loc loc)
{
	struct hgc_tir_var *v = hgc_tir_var_new(b->m, name, value->type);
	int64_t lo = 0, hi = 0;
	bool known = value->type.kind == HGC_TIR_INDEX && hgc_tmpl_bounds(b, value, &lo, &hi);

	hgc_tir_let(b->m, block, v, value)->loc = loc;
	set_range(b, v, known, lo, hi);
	return v;
}

/* The interval of a loop variable over [lo, hi). */
static void loop_range(struct hgc_tmpl_build *b, const struct hgc_tir_var *v,
		       const struct hgc_tir_expr *lo, const struct hgc_tir_expr *hi)
{
	int64_t l0, l1, h0, h1;
	bool known = hgc_tmpl_bounds(b, lo, &l0, &l1) && hgc_tmpl_bounds(b, hi, &h0, &h1);

	set_range(b, v, known, l0, h1 - 1);
}

/* for var in [lo, hi) step: the body. */
struct hgc_tir_stmt *hgc_tmpl_for(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				  struct hgc_tir_var *var, struct hgc_tir_expr *lo,
				  struct hgc_tir_expr *hi, struct hgc_tir_expr *step,
				  struct hgc_loc loc)
{
	struct hgc_tir_stmt *s;

	loop_range(b, var, lo, hi);
	s = hgc_tir_for(b->m, block, var, lo, hi, step);
	s->loc = loc;
	return hgc_tir_body(s);
}

/* A parallel for, or serial loops inside one already or when the lowering is serial. */
struct hgc_tir_stmt *hgc_tmpl_pfor(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block, int n,
				   struct hgc_tir_var *const *vars, struct hgc_tir_expr *const *lo,
				   struct hgc_tir_expr *const *hi, struct hgc_tir_expr *const *step,
				   struct hgc_loc loc)
{
	struct hgc_tir_stmt *s;
	int i;

	b->par_depth++;
	if (b->cx->in_parallel || b->par_depth > 1 || b->cx->opts->serial) {
		for (i = 0; i < n; i++)
			block = hgc_tmpl_for(b, block, vars[i], lo[i], hi[i], step ? step[i] : NULL,
					     loc);
		return block;
	}
	for (i = 0; i < n; i++)
		loop_range(b, vars[i], lo[i], hi[i]);
	s = hgc_tir_pfor(b->m, block, n, vars, lo, hi, step);
	s->loc = loc;
	b->cx->in_parallel = true;
	return hgc_tir_body(s);
}

/* Leave a parallel for. */
void hgc_tmpl_pfor_end(struct hgc_tmpl_build *b)
{
	if (--b->par_depth == 0)
		b->cx->in_parallel = b->outer_parallel;
}

/* if (cond) { } [else { }] */
struct hgc_tir_stmt *hgc_tmpl_if(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				 struct hgc_tir_expr *cond, struct hgc_tir_stmt **els,
				 struct hgc_loc loc)
{
	struct hgc_tir_stmt *s = hgc_tir_if(b->m, block, cond, els != NULL);

	s->loc = loc;
	if (els)
		*els = hgc_tir_else(s);
	return hgc_tir_body(s);
}

/* A local tensor of a template: acc is the accumulator type. */
struct hgc_tir_tensor *hgc_tmpl_tensor(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block,
				       const char *name, const char *dtype, int n,
				       const int64_t *dims, struct hgc_loc loc)
{
	enum hgc_dtype dt = strcmp(dtype, "acc") ? hgc_dtype_parse(dtype, strlen(dtype)) : b->acc;
	struct hgc_tir_tensor *t;
	int i;

	for (i = 0; i < n; i++)
		if (dims[i] < 1) {
			hgc_tmpl_fail(b, loc, "dim %d of tensor '%s' is %lld", i, name,
				      (long long)dims[i]);
			return hgc_tir_tensor_newc(b->m, name, hgc_lower_type(dt), HGC_TIR_LOCAL, 1,
						   (int64_t[]){1});
		}
	t = hgc_tir_tensor_newc(b->m, name, hgc_lower_type(dt), HGC_TIR_LOCAL, n, dims);
	hgc_tir_def_tensor(b->m, block, t)->loc = loc;
	return t;
}

/* Start a slice. */
void hgc_tmpl_slice(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, struct hgc_tir_tensor *t,
		    int operand, int n, struct hgc_loc loc)
{
	memset(s, 0, sizeof(*s));
	s->tensor = t;
	s->operand = operand;
	s->n = n;
	s->loc = loc;
	if (n != t->ndims || n > HGC_TMPL_MAX_PHYS)
		hgc_tmpl_fail(b, loc, "a slice of '%s' with %d indices for %d dims", t->name, n,
			      t->ndims);
}

/* Index i: one element. */
void hgc_tmpl_at(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, int i,
		 struct hgc_tir_expr *x)
{
	s->start[i] = x;
	s->len[i] = s->step[i] = 1;
	(void)b;
}

/* Index i: x : len : step. */
void hgc_tmpl_range(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, int i,
		    struct hgc_tir_expr *x, int64_t len, int64_t step)
{
	s->start[i] = x;
	s->len[i] = len;
	s->step[i] = step;
	s->range[i] = true;
	s->rank++;
	if (len < 1 || step < 1)
		hgc_tmpl_fail(b, s->loc, "a slice of '%s' of %lld elements by %lld",
			      s->tensor->name, (long long)len, (long long)step);
}

/* Index i: the whole dim. */
void hgc_tmpl_all(struct hgc_tmpl_build *b, struct hgc_tmpl_slice *s, int i)
{
	int64_t n = i < s->tensor->ndims ? hgc_tir_tensor_dim(s->tensor, i) : 1;

	hgc_tmpl_range(b, s, i, hgc_tmpl_k(b, 0), n, 1);
}

/* Record anchor i: an empty block here, and the slice it exposes. */
void hgc_tmpl_anchor(struct hgc_tmpl_build *b, struct hgc_tir_stmt *block, int i,
		     const struct hgc_tmpl_slice *s)
{
	struct hgc_tmpl_point *p = &b->points[i];

	p->block = hgc_tir_block(b->m, block);
	p->parent = block;
	p->slice = *s;
	p->in_parallel = b->par_depth > 0 || b->outer_parallel;
}
