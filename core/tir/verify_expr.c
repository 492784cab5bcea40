/*
 * verify_expr.c: the verifier's expression rules: operand types, intrinsic
 * signatures, index counts, and static bounds through affine forms (see the
 * comment at the top of verify.c).
 */
#include "tir.h"
#include "tir_int.h"

#include <string.h>

/* The type spelled into one of two rotating buffers, for messages. */
static const char *tname(struct hgc_tir_type t)
{
	static _Thread_local char buf[4][64];
	static _Thread_local int k;

	k = (k + 1) & 3;
	return hgc_tir_type_str(t, buf[k], sizeof(buf[k]));
}

/* Whether t is a plain value type (not void, not a pointer). */
static bool is_value(struct hgc_tir_type t)
{
	return !t.ptr && t.kind != HGC_TIR_VOID && t.kind < HGC_TIR_KIND_COUNT;
}

/* Whether t is index (the type of every index, extent and loop variable). */
static bool is_index(struct hgc_tir_type t)
{
	return hgc_tir_type_eq(t, hgc_tir_ty(HGC_TIR_INDEX));
}

/* Check a constant's type. */
static bool check_const(struct vctx *v, const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_FLOAT ? e->type.kind != HGC_TIR_F32 || e->type.ptr ||
						 e->type.lanes != 1
				       : !hgc_tir_type_is_int(e->type) &&
						 !hgc_tir_type_eq(e->type, hgc_tir_ty(HGC_TIR_BOOL)))
		return hgc_tir_verr(v, "%s constant of type %s",
				    e->kind == HGC_TIR_E_FLOAT ? "float" : "integer",
				    tname(e->type)), false;
	return true;
}

/* The operand rule of a binary operator on type t; NULL if t is accepted. */
static const char *binop_rule(enum hgc_tir_binop op, struct hgc_tir_type t)
{
	bool num = is_value(t) && t.kind != HGC_TIR_BOOL;

	if (op == HGC_TIR_AND || op == HGC_TIR_OR)
		return t.kind == HGC_TIR_BOOL && !t.ptr ? NULL : "bool operands";
	if (op == HGC_TIR_EQ || op == HGC_TIR_NE)
		return is_value(t) && t.kind != HGC_TIR_BF16 ? NULL : "numbers or bools (cast bf16 to f32)";
	if (op == HGC_TIR_MOD)
		return hgc_tir_type_is_int(t) ? NULL : "integer operands";
	return num && t.kind != HGC_TIR_BF16 ? NULL : "numbers (cast bf16 to f32)";
}

/* a op b: operands of one type that the operator accepts. */
static bool check_binary(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type a = e->ops[0]->type, b = e->ops[1]->type, want = a;
	const char *rule;

	if (!hgc_tir_type_eq(a, b))
		return hgc_tir_verr(v, "operands of '%s' have different types: %s and %s",
				    hgc_tir_binop_name(e->op), tname(a), tname(b)), false;
	if ((unsigned)e->op >= HGC_TIR_BINOP_COUNT)
		return hgc_tir_verr(v, "unknown binary operator %d", e->op), false;
	rule = binop_rule(e->op, a);
	if (rule)
		return hgc_tir_verr(v, "'%s' takes %s, not %s", hgc_tir_binop_name(e->op), rule,
				    tname(a)), false;
	if (e->op >= HGC_TIR_EQ)
		want.kind = HGC_TIR_BOOL;
	if (!hgc_tir_type_eq(e->type, want))
		return hgc_tir_verr(v, "'%s' has type %s, not %s", hgc_tir_binop_name(e->op),
				    tname(e->type), tname(want)), false;
	return true;
}

/* -a on numbers, !a on bools. */
static bool check_unary(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type t = e->ops[0]->type;
	bool good = e->op == HGC_TIR_NOT ? t.kind == HGC_TIR_BOOL && !t.ptr
					 : is_value(t) && t.kind != HGC_TIR_BOOL && t.kind != HGC_TIR_BF16;

	if (!good || !hgc_tir_type_eq(e->type, t))
		return hgc_tir_verr(v, "'%s' cannot apply to %s", e->op == HGC_TIR_NOT ? "!" : "-",
				    tname(t)), false;
	return true;
}

/* select(c, a, b): bool condition, branches of one type. */
static bool check_select(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type c = e->ops[0]->type, a = e->ops[1]->type, b = e->ops[2]->type;

	if (c.kind != HGC_TIR_BOOL || c.ptr)
		return hgc_tir_verr(v, "select condition has type %s, not bool", tname(c)), false;
	if (!hgc_tir_type_eq(a, b) || !hgc_tir_type_eq(e->type, a))
		return hgc_tir_verr(v, "select branches have different types: %s and %s",
				    tname(a), tname(b)), false;
	return true;
}

/* (to)x: values to values of the same lanes, pointers to pointers. */
static bool check_cast(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type from = e->ops[0]->type, to = e->type;
	bool good = (is_value(from) && is_value(to) && from.lanes == to.lanes) ||
		    (from.ptr && to.ptr);

	if (!good)
		return hgc_tir_verr(v, "cannot cast %s to %s", tname(from), tname(to)), false;
	return true;
}

/* Check argument i of intrinsic e against a predicate, with a message when it fails. */
static bool arg_is(struct vctx *v, const struct hgc_tir_expr *e, int i, bool good,
		   const char *want)
{
	if (!good)
		hgc_tir_verr(v, "argument %d of %s must be %s, not %s", i + 1,
			     hgc_tir_intrin_name(e->op), want, tname(e->ops[i]->type));
	return good;
}

/* Whether t points (depth ptr) to kind k. */
static bool ptr_to(struct hgc_tir_type t, int ptr, enum hgc_tir_kind k)
{
	return t.ptr == ptr && t.kind == k && t.lanes == 1;
}

/* brgemm and brgemm_strd: A, B, C pointers of a supported type triple, index
   sizes, a bool accumulate flag last. */
static bool check_brgemm(struct vctx *v, const struct hgc_tir_expr *e, int depth)
{
	static const enum hgc_tir_kind triples[3][3] = {
		{ HGC_TIR_F32, HGC_TIR_F32, HGC_TIR_F32 },
		{ HGC_TIR_U8, HGC_TIR_S8, HGC_TIR_S32 },
		{ HGC_TIR_BF16, HGC_TIR_BF16, HGC_TIR_F32 },
	};
	struct hgc_tir_type a = e->ops[0]->type, b = e->ops[1]->type, c = e->ops[2]->type;
	bool good = true;
	int i;

	for (i = 0; i < 3; i++)
		if (ptr_to(a, depth, triples[i][0]) && ptr_to(b, depth, triples[i][1]) &&
		    ptr_to(c, 1, triples[i][2]))
			break;
	if (i == 3) {
		hgc_tir_verr(v, "%s takes A, B, C pointers to f32 f32 f32, u8 s8 s32 or "
			     "bf16 bf16 f32 (A and B %s), not %s %s %s",
			     hgc_tir_intrin_name(e->op), depth == 2 ? "as address arrays" : "as bases",
			     tname(a), tname(b), tname(c));
		good = false;
	}
	for (i = 3; i < e->nops - 1; i++)
		good &= arg_is(v, e, i, is_index(e->ops[i]->type), "index");
	good &= arg_is(v, e, i, hgc_tir_type_eq(e->ops[i]->type, hgc_tir_ty(HGC_TIR_BOOL)), "bool");
	return good;
}

/* brgemm_post: brgemm's 11 arguments on f32, a ptr<f32> bias, a bool relu. */
static bool check_brgemm_post(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_expr head = *e;
	bool good;

	head.nops = 11;
	good = check_brgemm(v, &head, 2);
	good &= arg_is(v, e, 0, ptr_to(e->ops[0]->type, 2, HGC_TIR_F32), "ptr<ptr<f32>>");
	good &= arg_is(v, e, 11, ptr_to(e->ops[11]->type, 1, HGC_TIR_F32), "ptr<f32>");
	good &= arg_is(v, e, 12, hgc_tir_type_eq(e->ops[12]->type, hgc_tir_ty(HGC_TIR_BOOL)),
		       "bool");
	return good;
}

/* brgemm_q: brgemm's 11 arguments on u8 s8 s32, a ptr<u8> or ptr<s8> Y, index ldy
   and steps (a constant), four ptr<f32> operands. */
static bool check_brgemm_q(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_expr head = *e;
	struct hgc_tir_type y = e->ops[11]->type;
	int64_t steps;
	bool good;
	int i;

	head.nops = 11;
	good = check_brgemm(v, &head, 2);
	good &= arg_is(v, e, 0, ptr_to(e->ops[0]->type, 2, HGC_TIR_U8), "ptr<ptr<u8>>");
	good &= arg_is(v, e, 11, ptr_to(y, 1, HGC_TIR_U8) || ptr_to(y, 1, HGC_TIR_S8),
		       "ptr<u8> or ptr<s8>");
	good &= arg_is(v, e, 12, is_index(e->ops[12]->type), "index");
	good &= arg_is(v, e, 13, hgc_tir_const_int(e->ops[13], &steps) && steps >= 0,
		       "an index constant");
	for (i = 14; i < 18; i++)
		good &= arg_is(v, e, i, ptr_to(e->ops[i]->type, 1, HGC_TIR_F32), "ptr<f32>");
	return good;
}

/* fill(dst, value, n), copy(dst, src, n), copy2d(dst, src, rows, cols, ldd, lds). */
static bool check_move(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type d = e->ops[0]->type, elem = d;
	bool good = arg_is(v, e, 0, d.ptr >= 1 && d.lanes == 1 && !(d.ptr == 1 && d.kind == HGC_TIR_VOID),
			   "a typed pointer");
	int i;

	elem.ptr--;
	if (good && e->op == HGC_TIR_I_FILL)
		good &= arg_is(v, e, 1, hgc_tir_type_eq(e->ops[1]->type, elem), tname(elem));
	else if (good)
		good &= arg_is(v, e, 1, hgc_tir_type_eq(e->ops[1]->type, d), tname(d));
	for (i = 2; i < e->nops; i++)
		good &= arg_is(v, e, i, is_index(e->ops[i]->type), "index");
	return good;
}

/* Math intrinsics: f32 (abs also integers), of the result's type. */
static bool check_math(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type t = e->ops[0]->type;
	bool good = !t.ptr && (t.kind == HGC_TIR_F32 ||
			       (e->op == HGC_TIR_I_ABS && hgc_tir_type_is_int(t)));
	int i;

	good = arg_is(v, e, 0, good, e->op == HGC_TIR_I_ABS ? "f32 or an integer" : "f32");
	for (i = 1; good && i < e->nops; i++)
		good &= arg_is(v, e, i, hgc_tir_type_eq(e->ops[i]->type, t), tname(t));
	return good && hgc_tir_type_eq(e->type, t);
}

/* lanes_add/mul/max/min(p, n): p a ptr<f32>, n a constant power of two in
   [2, HGC_TIR_LANES_MAX] (the backends fold the lanes as a tree of halves). */
static bool check_lanes(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type p = e->ops[0]->type;
	const struct hgc_tir_expr *n = e->ops[1];
	bool good = arg_is(v, e, 0, p.ptr == 1 && p.kind == HGC_TIR_F32 && p.lanes == 1,
			   "ptr<f32>");

	return arg_is(v, e, 1, n->kind == HGC_TIR_E_INT && n->u.i >= 2 &&
		      n->u.i <= HGC_TIR_LANES_MAX && !(n->u.i & (n->u.i - 1)),
		      "a constant power of two up to 64") && good;
}

/* An intrinsic call: known id, argument count, then its signature. */
static bool check_intrin(struct vctx *v, const struct hgc_tir_expr *e)
{
	int want = hgc_tir_intrin_nargs(e->op);

	if (want < 0)
		return hgc_tir_verr(v, "unknown intrinsic #%d", e->op), false;
	if (e->nops != want)
		return hgc_tir_verr(v, "%s takes %d arguments, not %d", hgc_tir_intrin_name(e->op),
				    want, e->nops), false;
	switch (e->op) {
	case HGC_TIR_I_BRGEMM:
		return check_brgemm(v, e, 2);
	case HGC_TIR_I_BRGEMM_STRD:
		return check_brgemm(v, e, 1);
	case HGC_TIR_I_BRGEMM_POST:
		return check_brgemm_post(v, e);
	case HGC_TIR_I_BRGEMM_Q:
		return check_brgemm_q(v, e);
	case HGC_TIR_I_FILL:
	case HGC_TIR_I_COPY:
	case HGC_TIR_I_COPY2D:
		return check_move(v, e);
	case HGC_TIR_I_THREAD_ID:
	case HGC_TIR_I_NUM_THREADS:
		return true;
	case HGC_TIR_I_LANES_ADD:
	case HGC_TIR_I_LANES_MUL:
	case HGC_TIR_I_LANES_MAX:
	case HGC_TIR_I_LANES_MIN:
		return check_lanes(v, e);
	default:
		return check_math(v, e);
	}
}

/* A call: a function of this module with matching arguments, or an external symbol. */
static bool check_call(struct vctx *v, const struct hgc_tir_expr *e)
{
	const struct hgc_tir_func *f = e->callee;
	const struct hgc_tir_param *p;
	struct hgc_tir_type want;
	int i;

	if (!f) {
		if (!e->u.sym || !*e->u.sym)
			return hgc_tir_verr(v, "call of nothing"), false;
		return true;
	}
	if (f->mod != v->m)
		return hgc_tir_verr(v, "call of '%s' from another module", f->name), false;
	if (e->nops != f->nparams)
		return hgc_tir_verr(v, "'%s' takes %d arguments, not %d", f->name, f->nparams,
				    e->nops), false;
	for (i = 0; i < e->nops; i++) {
		p = &f->params[i];
		want = p->tensor ? hgc_tir_ptr_to(p->tensor->elem) : p->var->type;
		if (!hgc_tir_type_eq(e->ops[i]->type, want))
			return hgc_tir_verr(v, "argument %d of '%s' must be %s, not %s", i + 1,
					    f->name, tname(want), tname(e->ops[i]->type)), false;
	}
	return true;
}

/* Kind-specific checks once the operands are known to be well formed. */
static bool check_node(struct vctx *v, const struct hgc_tir_expr *e)
{
	switch (e->kind) {
	case HGC_TIR_E_INT:
	case HGC_TIR_E_FLOAT:
		return check_const(v, e);
	case HGC_TIR_E_VAR:
		return hgc_tir_vuse_var(v, e->u.var);
	case HGC_TIR_E_BINARY:
		return e->nops == 2 && check_binary(v, e);
	case HGC_TIR_E_UNARY:
		return e->nops == 1 && check_unary(v, e);
	case HGC_TIR_E_SELECT:
		return e->nops == 3 && check_select(v, e);
	case HGC_TIR_E_CAST:
		return e->nops == 1 && check_cast(v, e);
	case HGC_TIR_E_LOAD:
	case HGC_TIR_E_ADDR:
		if (!hgc_tir_vuse_tensor(v, e->u.tensor))
			return false;
		hgc_tir_vindices(v, e->u.tensor, e->ops, e->nops,
				 e->kind == HGC_TIR_E_ADDR ? e->extents : NULL);
		return true;
	case HGC_TIR_E_INTRIN:
		return check_intrin(v, e);
	case HGC_TIR_E_CALL:
		return check_call(v, e);
	}
	return hgc_tir_verr(v, "unknown expression kind %d", (int)e->kind), false;
}

/* Check an expression tree, operands first; a select's branches count as guarded. */
bool hgc_tir_vexpr(struct vctx *v, const struct hgc_tir_expr *e)
{
	bool good = true;
	int i;

	if (!e)
		return hgc_tir_verr(v, "missing expression"), false;
	for (i = 0; i < e->nops; i++) {
		v->guard += e->kind == HGC_TIR_E_SELECT && i > 0;
		good &= hgc_tir_vexpr(v, e->ops[i]);
		v->guard -= e->kind == HGC_TIR_E_SELECT && i > 0;
	}
	if (!good)
		return false;
	return check_node(v, e);
}

/* Add c * (form b) to form a; false on overflow or too many terms. */
static bool aff_add(struct vaffine *a, const struct vaffine *b, int64_t c)
{
	int i, j;
	int64_t t;

	if (__builtin_mul_overflow(b->c0, c, &t) || __builtin_add_overflow(a->c0, t, &a->c0))
		return false;
	for (i = 0; i < b->n; i++) {
		if (__builtin_mul_overflow(b->t[i].c, c, &t))
			return false;
		for (j = 0; j < a->n && a->t[j].var != b->t[i].var; j++)
			;
		if (j == a->n) {
			if (a->n == HGC_TIR_AFF_MAX)
				return false;
			a->t[a->n].var = b->t[i].var;
			a->t[a->n++].c = 0;
		}
		if (__builtin_add_overflow(a->t[j].c, t, &a->t[j].c))
			return false;
	}
	return true;
}

/* The affine form of an index expression, or !ok when it has none. */
static struct vaffine affine(struct vctx *v, const struct hgc_tir_expr *e)
{
	struct vaffine r = { .ok = false }, a, b;
	const struct hgc_tir_var *var;

	if (e->kind == HGC_TIR_E_INT) {
		r.ok = true;
		r.c0 = e->u.i;
	} else if (e->kind == HGC_TIR_E_VAR) {
		var = e->u.var;
		if (v->lets[var->id].ok)
			return v->lets[var->id];
		if (v->ranges[var->id].known) {
			r.ok = true;
			r.n = 1;
			r.t[0].var = var->id;
			r.t[0].c = 1;
		}
	} else if (e->kind == HGC_TIR_E_BINARY && e->op <= HGC_TIR_MUL) {
		a = affine(v, e->ops[0]);
		b = affine(v, e->ops[1]);
		if (!a.ok || !b.ok)
			return r;
		if (e->op == HGC_TIR_MUL && a.n && b.n)
			return r;
		if (e->op == HGC_TIR_MUL && a.n)
			r = a, a = b, b = r;	/* constant first */
		r = (struct vaffine){ .ok = true };
		if (e->op == HGC_TIR_MUL)
			r.ok = aff_add(&r, &b, a.c0);
		else
			r.ok = aff_add(&r, &a, 1) && aff_add(&r, &b, e->op == HGC_TIR_SUB ? -1 : 1);
	}
	return r;
}

/* Record the affine value of an immutable index let. */
void hgc_tir_vlet(struct vctx *v, const struct hgc_tir_var *var, const struct hgc_tir_expr *e)
{
	if (e && is_index(var->type) && is_index(e->type))
		v->lets[var->id] = affine(v, e);
}

/* The interval of an affine form over the box of its variables' ranges. */
static bool aff_range(struct vctx *v, const struct vaffine *a, int64_t *lo, int64_t *hi)
{
	const struct vrange *r;
	int64_t x, y;
	int i;

	*lo = *hi = a->c0;
	for (i = 0; i < a->n; i++) {
		r = &v->ranges[a->t[i].var];
		if (!r->known || __builtin_mul_overflow(a->t[i].c, r->lo, &x) ||
		    __builtin_mul_overflow(a->t[i].c, r->hi, &y))
			return false;
		if (__builtin_add_overflow(*lo, x < y ? x : y, lo) ||
		    __builtin_add_overflow(*hi, x < y ? y : x, hi))
			return false;
	}
	return true;
}

/* Check one index of t against dim d (extent ext) when its range is known. */
static void bound(struct vctx *v, const struct hgc_tir_tensor *t, int d,
		  const struct hgc_tir_expr *e, int64_t ext)
{
	struct vaffine a = affine(v, e);
	int64_t size = hgc_tir_tensor_dim(t, d), lo, hi;

	if (!a.ok || size < 0 || (v->guard && a.n) || !aff_range(v, &a, &lo, &hi))
		return;
	if (ext < 1)
		hgc_tir_verr(v, "slice of '%s' has extent %lld in dimension %d", t->name,
			     (long long)ext, d);
	else if (lo < 0 || hi > size - 1 || hi > size - ext) {
		if (lo < 0)
			hgc_tir_verr(v, "index %d of '%s' %s %lld, below 0", d, t->name,
				     a.n ? "can be" : "is", (long long)lo);
		else if (ext == 1)
			hgc_tir_verr(v, "index %d of '%s' %s %lld, beyond its size %lld", d, t->name,
				     a.n ? "can be" : "is", (long long)hi, (long long)size);
		else
			hgc_tir_verr(v, "slice %d of '%s' reaches %lld, beyond its size %lld", d,
				     t->name, (long long)(hi + ext), (long long)size);
	}
}

/* Index count, index types, then static bounds of each index (the index
   expressions themselves are already checked). */
void hgc_tir_vindices(struct vctx *v, const struct hgc_tir_tensor *t,
		      struct hgc_tir_expr *const *idx, int n, const int64_t *extents)
{
	bool good = true;
	int i;

	if (n != t->ndims) {
		hgc_tir_verr(v, "'%s' has %d dimension%s but is indexed with %d", t->name, t->ndims,
			     t->ndims == 1 ? "" : "s", n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (!is_index(idx[i]->type)) {
			hgc_tir_verr(v, "index %d of '%s' has type %s, not index", i, t->name,
				     tname(idx[i]->type));
			good = false;
		}
	}
	for (i = 0; good && i < n; i++)
		bound(v, t, i, idx[i], extents ? extents[i] : 1);
}
