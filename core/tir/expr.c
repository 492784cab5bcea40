/*
 * expr.c: expression builders.  They compute each node's type from its
 * operands but check nothing: the verifier does, so that passes and
 * generated instantiators get one place that reports mistakes.
 */
#include "tir.h"
#include "tir_int.h"

#include <stdarg.h>
#include <string.h>

/* A node with n zeroed operand slots. */
struct hgc_tir_expr *hgc_tir_expr_alloc(struct hgc_tir_module *m, enum hgc_tir_expr_kind kind,
					struct hgc_tir_type type, int n)
{
	struct hgc_tir_expr *e = hgc_arena_calloc(&m->arena, 1, sizeof(*e));

	e->kind = kind;
	e->type = type;
	e->nops = n;
	if (n)
		e->ops = hgc_arena_calloc(&m->arena, (size_t)n, sizeof(*e->ops));
	return e;
}

/* An integer (or bool) constant of kind k. */
struct hgc_tir_expr *hgc_tir_int(struct hgc_tir_module *m, enum hgc_tir_kind k, int64_t v)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_INT, hgc_tir_ty(k), 0);

	e->u.i = v;
	return e;
}

/* An index constant: loop bounds, indices, dims. */
struct hgc_tir_expr *hgc_tir_idx(struct hgc_tir_module *m, int64_t v)
{
	return hgc_tir_int(m, HGC_TIR_INDEX, v);
}

/* true or false. */
struct hgc_tir_expr *hgc_tir_bool(struct hgc_tir_module *m, bool v)
{
	return hgc_tir_int(m, HGC_TIR_BOOL, v);
}

/* An f32 constant (kept as a double rounded to float). */
struct hgc_tir_expr *hgc_tir_f32(struct hgc_tir_module *m, double v)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_FLOAT, hgc_tir_ty(HGC_TIR_F32), 0);

	e->u.f = (float)v;
	return e;
}

/* A use of a variable. */
struct hgc_tir_expr *hgc_tir_ref(struct hgc_tir_module *m, struct hgc_tir_var *v)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_VAR, v->type, 0);

	e->u.var = v;
	return e;
}

/* Comparisons and logical operators give bool (with the operand's lanes). */
static bool is_predicate(enum hgc_tir_binop op)
{
	return op >= HGC_TIR_EQ && op <= HGC_TIR_OR;
}

/* a op b; the type is a's, or bool for comparisons and logic. */
struct hgc_tir_expr *hgc_tir_binary(struct hgc_tir_module *m, enum hgc_tir_binop op,
				    struct hgc_tir_expr *a, struct hgc_tir_expr *b)
{
	struct hgc_tir_type t = a->type;
	struct hgc_tir_expr *e;

	if (is_predicate(op)) {
		t.kind = HGC_TIR_BOOL;
		t.ptr = 0;
	}
	e = hgc_tir_expr_alloc(m, HGC_TIR_E_BINARY, t, 2);
	e->op = op;
	e->ops[0] = a;
	e->ops[1] = b;
	return e;
}

/* a + b */
struct hgc_tir_expr *hgc_tir_add(struct hgc_tir_module *m, struct hgc_tir_expr *a,
				 struct hgc_tir_expr *b)
{
	return hgc_tir_binary(m, HGC_TIR_ADD, a, b);
}

/* a - b */
struct hgc_tir_expr *hgc_tir_sub(struct hgc_tir_module *m, struct hgc_tir_expr *a,
				 struct hgc_tir_expr *b)
{
	return hgc_tir_binary(m, HGC_TIR_SUB, a, b);
}

/* a * b */
struct hgc_tir_expr *hgc_tir_mul(struct hgc_tir_module *m, struct hgc_tir_expr *a,
				 struct hgc_tir_expr *b)
{
	return hgc_tir_binary(m, HGC_TIR_MUL, a, b);
}

/* -a or !a, of a's type. */
struct hgc_tir_expr *hgc_tir_unary(struct hgc_tir_module *m, enum hgc_tir_unop op,
				   struct hgc_tir_expr *a)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_UNARY, a->type, 1);

	e->op = op;
	e->ops[0] = a;
	return e;
}

/* c ? a : b, of a's type; only the chosen branch is evaluated. */
struct hgc_tir_expr *hgc_tir_select(struct hgc_tir_module *m, struct hgc_tir_expr *c,
				    struct hgc_tir_expr *a, struct hgc_tir_expr *b)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_SELECT, a->type, 3);

	e->ops[0] = c;
	e->ops[1] = a;
	e->ops[2] = b;
	return e;
}

/* a converted to type to. */
struct hgc_tir_expr *hgc_tir_cast(struct hgc_tir_module *m, struct hgc_tir_type to,
				  struct hgc_tir_expr *a)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_CAST, to, 1);

	e->ops[0] = a;
	return e;
}

/* A node over a tensor with n index operands copied from idx. */
static struct hgc_tir_expr *indexed(struct hgc_tir_module *m, enum hgc_tir_expr_kind kind,
				    struct hgc_tir_type type, struct hgc_tir_tensor *t, int n,
				    struct hgc_tir_expr *const *idx)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, kind, type, n);

	e->u.tensor = t;
	if (n)
		memcpy(e->ops, idx, (size_t)n * sizeof(*idx));
	return e;
}

/* t[idx...], of t's element type. */
struct hgc_tir_expr *hgc_tir_load(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				  struct hgc_tir_expr *const *idx)
{
	return indexed(m, HGC_TIR_E_LOAD, t->elem, t, n, idx);
}

/* Collect n expression arguments of a variadic builder into an arena array. */
static struct hgc_tir_expr **collect(struct hgc_tir_module *m, int n, va_list ap)
{
	struct hgc_tir_expr **v = hgc_arena_calloc(&m->arena, (size_t)(n ? n : 1), sizeof(*v));
	int i;

	for (i = 0; i < n; i++)
		v[i] = va_arg(ap, struct hgc_tir_expr *);
	return v;
}

/* t[i0, i1, ...] with the indices as arguments. */
struct hgc_tir_expr *hgc_tir_loadv(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				   ...)
{
	struct hgc_tir_expr **idx;
	va_list ap;

	va_start(ap, n);
	idx = collect(m, n, ap);
	va_end(ap);
	return hgc_tir_load(m, t, n, idx);
}

/* &t[idx : extents]: a pointer to t's element type. */
struct hgc_tir_expr *hgc_tir_addr(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				  struct hgc_tir_expr *const *idx, const int64_t *extents)
{
	struct hgc_tir_expr *e = indexed(m, HGC_TIR_E_ADDR, hgc_tir_ptr_to(t->elem), t, n, idx);
	int i;

	e->extents = hgc_arena_calloc(&m->arena, (size_t)(n ? n : 1), sizeof(*e->extents));
	for (i = 0; i < n; i++)
		e->extents[i] = extents ? extents[i] : 1;
	return e;
}

/* &t[i0, i1, ...] (one element per dim) with the indices as arguments. */
struct hgc_tir_expr *hgc_tir_addrv(struct hgc_tir_module *m, struct hgc_tir_tensor *t, int n,
				   ...)
{
	struct hgc_tir_expr **idx;
	va_list ap;

	va_start(ap, n);
	idx = collect(m, n, ap);
	va_end(ap);
	return hgc_tir_addr(m, t, n, idx, NULL);
}

/* The result type of an intrinsic: void for data movement, index for thread
   queries, the first argument's type for math. */
static struct hgc_tir_type intrin_type(enum hgc_tir_intrin id, int n,
				       struct hgc_tir_expr *const *args)
{
	switch (id) {
	case HGC_TIR_I_THREAD_ID:
	case HGC_TIR_I_NUM_THREADS:
		return hgc_tir_ty(HGC_TIR_INDEX);
	case HGC_TIR_I_EXP: case HGC_TIR_I_EXP_NONPOS: case HGC_TIR_I_LOG: case HGC_TIR_I_SQRT:
	case HGC_TIR_I_TANH: case HGC_TIR_I_ERF: case HGC_TIR_I_ABS: case HGC_TIR_I_FLOOR:
	case HGC_TIR_I_ROUND: case HGC_TIR_I_POW:
		return n > 0 ? args[0]->type : hgc_tir_ty(HGC_TIR_F32);
	case HGC_TIR_I_LANES_ADD: case HGC_TIR_I_LANES_MUL:
	case HGC_TIR_I_LANES_MAX: case HGC_TIR_I_LANES_MIN:
		return hgc_tir_ty(HGC_TIR_F32);
	default:
		return hgc_tir_ty(HGC_TIR_VOID);
	}
}

/* An intrinsic call with n arguments copied from args. */
struct hgc_tir_expr *hgc_tir_intrin(struct hgc_tir_module *m, enum hgc_tir_intrin id, int n,
				    struct hgc_tir_expr *const *args)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_INTRIN, intrin_type(id, n, args), n);

	e->op = id;
	if (n)
		memcpy(e->ops, args, (size_t)n * sizeof(*args));
	return e;
}

/* An intrinsic call with the arguments as arguments. */
struct hgc_tir_expr *hgc_tir_intrinv(struct hgc_tir_module *m, enum hgc_tir_intrin id, int n,
				     ...)
{
	struct hgc_tir_expr **args;
	va_list ap;

	va_start(ap, n);
	args = collect(m, n, ap);
	va_end(ap);
	return hgc_tir_intrin(m, id, n, args);
}

/* A call of a module function: its return type. */
struct hgc_tir_expr *hgc_tir_call(struct hgc_tir_module *m, struct hgc_tir_func *f, int n,
				  struct hgc_tir_expr *const *args)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_CALL, f->ret, n);

	e->callee = f;
	if (n)
		memcpy(e->ops, args, (size_t)n * sizeof(*args));
	return e;
}

/* A call of an external C symbol (a runtime helper). */
struct hgc_tir_expr *hgc_tir_call_extern(struct hgc_tir_module *m, const char *sym,
					 struct hgc_tir_type ret, int n,
					 struct hgc_tir_expr *const *args)
{
	struct hgc_tir_expr *e = hgc_tir_expr_alloc(m, HGC_TIR_E_CALL, ret, n);

	e->u.sym = hgc_arena_strdup(&m->arena, sym);
	if (n)
		memcpy(e->ops, args, (size_t)n * sizeof(*args));
	return e;
}

/* Whether e is an integer constant, and its value. */
bool hgc_tir_const_int(const struct hgc_tir_expr *e, int64_t *v)
{
	if (!e || e->kind != HGC_TIR_E_INT)
		return false;
	*v = e->u.i;
	return true;
}
