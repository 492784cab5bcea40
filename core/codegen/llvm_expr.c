/*
 * llvm_expr.c: Tensor IR expressions as LLVM values.  Integer arithmetic
 * follows C: division truncates, % takes the dividend's sign, s8 and u8
 * division happens in 32 bits (so -128 / -1 does not trap), index and s32
 * arithmetic may assume no signed overflow.  A select or a logical operator
 * whose lazy operand cannot be evaluated eagerly (it loads, calls or
 * divides) branches; LLVM folds the branch back into a select when it can.
 */
#include "llvm_int.h"

#include <stdarg.h>

/* Record an error in the function being emitted. */
int hgc_llvm_err(struct hgc_llvm_gen *g, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	g->nerr++;
	if (g->f)
		return hgc_error(g->d, NULL, "llvm backend: in '%s': %s", g->f->name, buf);
	return hgc_error(g->d, NULL, "llvm backend: %s", buf);
}

/* The current value of a variable: a load from its slot, or the value itself. */
LLVMValueRef hgc_llvm_var_get(struct hgc_llvm_gen *g, const struct hgc_tir_var *v)
{
	struct hgc_llvm_var *x = &g->vars[v->id];

	if (!x->v) {
		hgc_llvm_err(g, "'%s' has no value here", v->name);
		return LLVMGetUndef(hgc_llvm_type(g, v->type));
	}
	if (!x->slot)
		return x->v;
	return LLVMBuildLoad2(g->b, hgc_llvm_type(g, v->type), x->v, v->name);
}

/* Dim i of t (an index expression, usually a constant). */
LLVMValueRef hgc_llvm_dim(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t, int i)
{
	return hgc_llvm_expr(g, t->dims[i]);
}

/* The base pointer of t here. */
static LLVMValueRef base(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t)
{
	if (!g->tensors[t->id] && g->heap[t->id])
		return hgc_llvm_heap_base(g, t);
	if (!g->tensors[t->id]) {
		hgc_llvm_err(g, "tensor '%s' has no buffer here", t->name);
		return LLVMGetUndef(LLVMPointerType(hgc_llvm_mem_type(g, t->elem), 0));
	}
	return g->tensors[t->id];
}

/* &t[idx]: ((i0 * d1 + i1) * d2 + i2) ... elements from the base, in bounds. */
LLVMValueRef hgc_llvm_elem_addr(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t,
				struct hgc_tir_expr *const *idx, int n)
{
	LLVMValueRef lin = n ? hgc_llvm_expr(g, idx[0]) : LLVMConstInt(g->t.i64, 0, 0);
	int i;

	for (i = 1; i < n; i++) {
		lin = LLVMBuildNSWMul(g->b, lin, hgc_llvm_dim(g, t, i), "");
		lin = LLVMBuildNSWAdd(g->b, lin, hgc_llvm_expr(g, idx[i]), "");
	}
	return LLVMBuildInBoundsGEP2(g->b, hgc_llvm_mem_type(g, t->elem), base(g, t), &lin, 1, "");
}

/* Whether e can be evaluated even when C would not evaluate it. */
bool hgc_llvm_speculable(const struct hgc_tir_expr *e)
{
	int i;

	switch (e->kind) {
	case HGC_TIR_E_LOAD:
	case HGC_TIR_E_INTRIN:
	case HGC_TIR_E_CALL:
		return false;
	case HGC_TIR_E_BINARY:
		if ((e->op == HGC_TIR_DIV || e->op == HGC_TIR_MOD) && e->type.kind != HGC_TIR_F32)
			return false;
		break;
	default:
		break;
	}
	for (i = 0; i < e->nops; i++)
		if (!hgc_llvm_speculable(e->ops[i]))
			return false;
	return true;
}

/* c ? a : b with a and b evaluated only on their branch; scalar c. */
static LLVMValueRef lazy_select(struct hgc_llvm_gen *g, LLVMValueRef c,
				const struct hgc_tir_expr *a, const struct hgc_tir_expr *b)
{
	LLVMBasicBlockRef bt = hgc_llvm_new_block(g, "sel.a"), bf = hgc_llvm_new_block(g, "sel.b");
	LLVMBasicBlockRef join = hgc_llvm_new_block(g, "sel.join");
	LLVMValueRef v[2], phi;
	LLVMBasicBlockRef from[2];

	LLVMBuildCondBr(g->b, c, bt, bf);
	LLVMPositionBuilderAtEnd(g->b, bt);
	v[0] = hgc_llvm_expr(g, a);
	from[0] = LLVMGetInsertBlock(g->b);
	LLVMBuildBr(g->b, join);
	LLVMPositionBuilderAtEnd(g->b, bf);
	v[1] = hgc_llvm_expr(g, b);
	from[1] = LLVMGetInsertBlock(g->b);
	LLVMBuildBr(g->b, join);
	LLVMPositionBuilderAtEnd(g->b, join);
	phi = LLVMBuildPhi(g->b, LLVMTypeOf(v[0]), "");
	LLVMAddIncoming(phi, v, from, 2);
	return phi;
}

/* A cast; (u8) or (s8) of an f32 round() in one step where hgc_llvm_round_to_byte can. */
static LLVMValueRef cast_expr(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	const struct hgc_tir_expr *x = e->ops[0];
	LLVMValueRef v;

	if ((e->type.kind == HGC_TIR_U8 || e->type.kind == HGC_TIR_S8) && !e->type.ptr &&
	    x->kind == HGC_TIR_E_INTRIN && x->op == HGC_TIR_I_ROUND && x->type.kind == HGC_TIR_F32 &&
	    !x->type.ptr && x->type.lanes == 1 &&
	    (v = hgc_llvm_round_to_byte(g, hgc_llvm_expr(g, x->ops[0]), e->type)))
		return v;
	return hgc_llvm_cast(g, hgc_llvm_expr(g, x), x->type, e->type);
}

/* select(c, a, b): an LLVM select when both sides are safe or c is a vector. */
static LLVMValueRef select_expr(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	LLVMValueRef c = hgc_llvm_expr(g, e->ops[0]);

	if (e->ops[0]->type.lanes > 1 ||
	    (hgc_llvm_speculable(e->ops[1]) && hgc_llvm_speculable(e->ops[2])))
		return LLVMBuildSelect(g->b, c, hgc_llvm_expr(g, e->ops[1]),
				       hgc_llvm_expr(g, e->ops[2]), "");
	return lazy_select(g, c, e->ops[1], e->ops[2]);
}

/* a && b, a || b: b only evaluated when needed (unless it is safe to evaluate). */
static LLVMValueRef logic(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	bool and = e->op == HGC_TIR_AND;
	LLVMValueRef a = hgc_llvm_expr(g, e->ops[0]), bv;
	struct hgc_tir_expr lit = { .kind = HGC_TIR_E_INT, .type = e->type };

	if (e->type.lanes > 1 || hgc_llvm_speculable(e->ops[1])) {
		bv = hgc_llvm_expr(g, e->ops[1]);
		return and ? LLVMBuildAnd(g->b, a, bv, "") : LLVMBuildOr(g->b, a, bv, "");
	}
	lit.u.i = !and;
	return and ? lazy_select(g, a, e->ops[1], &lit) : lazy_select(g, a, &lit, e->ops[1]);
}

/* Comparison predicates: C's, signed or unsigned by kind, ordered floats but != . */
static LLVMValueRef compare(struct hgc_llvm_gen *g, int op, struct hgc_tir_type t,
			    LLVMValueRef a, LLVMValueRef b)
{
	static const LLVMIntPredicate si[] = { LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE,
					       LLVMIntSGT, LLVMIntSGE };
	static const LLVMIntPredicate ui[] = { LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE,
					       LLVMIntUGT, LLVMIntUGE };
	static const LLVMRealPredicate fp[] = { LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
						LLVMRealOLE, LLVMRealOGT, LLVMRealOGE };
	int k = op - HGC_TIR_EQ;	/* ORDER: EQ NE LT LE GT GE in HGC_TIR_BINOP_LIST */

	if (t.kind == HGC_TIR_F32)
		return LLVMBuildFCmp(g->b, fp[k], a, b, "");
	return LLVMBuildICmp(g->b, hgc_llvm_signed(t.kind) ? si[k] : ui[k], a, b, "");
}

/* s8 / u8 division and remainder in 32 bits, as C promotes them. */
static LLVMValueRef narrow_div(struct hgc_llvm_gen *g, int op, struct hgc_tir_type t,
			       LLVMValueRef a, LLVMValueRef b)
{
	bool s = hgc_llvm_signed(t.kind);
	LLVMTypeRef wide = t.lanes > 1 ? LLVMVectorType(g->t.i32, t.lanes) : g->t.i32;
	LLVMValueRef r;

	a = LLVMBuildIntCast2(g->b, a, wide, s, "");
	b = LLVMBuildIntCast2(g->b, b, wide, s, "");
	if (op == HGC_TIR_DIV)
		r = s ? LLVMBuildSDiv(g->b, a, b, "") : LLVMBuildUDiv(g->b, a, b, "");
	else
		r = s ? LLVMBuildSRem(g->b, a, b, "") : LLVMBuildURem(g->b, a, b, "");
	return LLVMBuildTrunc(g->b, r, hgc_llvm_type(g, t), "");
}

/* + - * / % on integers. */
static LLVMValueRef int_arith(struct hgc_llvm_gen *g, int op, struct hgc_tir_type t,
			      LLVMValueRef a, LLVMValueRef b)
{
	bool wide = t.kind == HGC_TIR_S32 || t.kind == HGC_TIR_INDEX;

	switch (op) {
	case HGC_TIR_ADD: return wide ? LLVMBuildNSWAdd(g->b, a, b, "") : LLVMBuildAdd(g->b, a, b, "");
	case HGC_TIR_SUB: return wide ? LLVMBuildNSWSub(g->b, a, b, "") : LLVMBuildSub(g->b, a, b, "");
	case HGC_TIR_MUL: return wide ? LLVMBuildNSWMul(g->b, a, b, "") : LLVMBuildMul(g->b, a, b, "");
	default: break;
	}
	if (!wide)
		return narrow_div(g, op, t, a, b);
	return op == HGC_TIR_DIV ? LLVMBuildSDiv(g->b, a, b, "") : LLVMBuildSRem(g->b, a, b, "");
}

/* a op b for arithmetic, min, max and comparisons. */
static LLVMValueRef arith(struct hgc_llvm_gen *g, int op, struct hgc_tir_type t, LLVMValueRef a,
			  LLVMValueRef b)
{
	bool f = t.kind == HGC_TIR_F32;

	switch (op) {
	case HGC_TIR_MIN:
		return LLVMBuildSelect(g->b, compare(g, HGC_TIR_LT, t, a, b), a, b, "");
	case HGC_TIR_MAX:
		return LLVMBuildSelect(g->b, compare(g, HGC_TIR_GT, t, a, b), a, b, "");
	case HGC_TIR_ADD: if (f) return LLVMBuildFAdd(g->b, a, b, ""); break;
	case HGC_TIR_SUB: if (f) return LLVMBuildFSub(g->b, a, b, ""); break;
	case HGC_TIR_MUL: if (f) return LLVMBuildFMul(g->b, a, b, ""); break;
	case HGC_TIR_DIV: if (f) return LLVMBuildFDiv(g->b, a, b, ""); break;
	case HGC_TIR_MOD: if (f) return LLVMBuildFRem(g->b, a, b, ""); break;
	default:
		return compare(g, op, t, a, b);
	}
	return int_arith(g, op, t, a, b);
}

/* A binary expression. */
static LLVMValueRef binary(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type t = e->ops[0]->type;

	if (e->op == HGC_TIR_AND || e->op == HGC_TIR_OR)
		return logic(g, e);
	if (t.ptr || t.kind == HGC_TIR_BF16 || t.kind == HGC_TIR_VOID) {
		hgc_llvm_err(g, "'%s' on %s", hgc_tir_binop_name(e->op),
			     t.ptr ? "pointers" : hgc_tir_kind_name(t.kind));
		return LLVMGetUndef(hgc_llvm_type(g, e->type));
	}
	return arith(g, e->op, t, hgc_llvm_expr(g, e->ops[0]), hgc_llvm_expr(g, e->ops[1]));
}

/* -a, !a */
static LLVMValueRef unary(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	LLVMValueRef a = hgc_llvm_expr(g, e->ops[0]);

	if (e->op == HGC_TIR_NOT)
		return LLVMBuildNot(g->b, a, "");
	if (e->type.kind == HGC_TIR_F32)
		return LLVMBuildFNeg(g->b, a, "");
	return LLVMBuildNeg(g->b, a, "");
}

/* t[idx]: a scalar, or lanes consecutive elements for a vector type. */
static LLVMValueRef load(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	const struct hgc_tir_tensor *t = e->u.tensor;
	LLVMValueRef p = hgc_llvm_elem_addr(g, t, e->ops, e->nops), v;
	LLVMTypeRef ty = hgc_llvm_mem_type(g, t->elem);

	if (e->type.lanes > 1) {
		ty = LLVMVectorType(ty, e->type.lanes);
		p = LLVMBuildBitCast(g->b, p, LLVMPointerType(ty, 0), "");
	}
	v = LLVMBuildLoad2(g->b, ty, p, "");
	LLVMSetAlignment(v, (unsigned)hgc_llvm_elem_size(t->elem));
	hgc_llvm_alias_tag(g, v, t);
	return hgc_llvm_from_mem(g, v, e->type);
}

/* Constants of any lanes. */
static LLVMValueRef constant(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_INT)
		return hgc_llvm_const_int(g, e->type, e->u.i);
	return hgc_llvm_splat(g, LLVMConstReal(g->t.f32, e->u.f), e->type.lanes);
}

/* Narrow integer arguments of an external call extended as the C ABI expects. */
static void abi_ext(struct hgc_llvm_gen *g, LLVMValueRef call, const struct hgc_tir_expr *e)
{
	const char *what;
	struct hgc_tir_type t;
	int i;

	for (i = 0; i < e->nops; i++) {
		t = e->ops[i]->type;
		if (t.ptr || t.lanes > 1 || (t.kind != HGC_TIR_BOOL && t.kind != HGC_TIR_S8 &&
					     t.kind != HGC_TIR_U8 && t.kind != HGC_TIR_BF16))
			continue;
		what = t.kind == HGC_TIR_S8 ? "signext" : "zeroext";
		LLVMAddCallSiteAttribute(call, (unsigned)i + 1, LLVMCreateEnumAttribute(g->ctx,
					 LLVMGetEnumAttributeKindForName(what, 7), 0));
	}
}

/* A call of a module function or of an external C symbol. */
static LLVMValueRef call(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	LLVMValueRef args[64];
	LLVMTypeRef types[64];
	LLVMValueRef fn;
	int i;

	if (e->nops > 64) {
		hgc_llvm_err(g, "a call with %d arguments (at most 64)", e->nops);
		return LLVMGetUndef(hgc_llvm_type(g, e->type));
	}
	for (i = 0; i < e->nops; i++) {
		args[i] = hgc_llvm_expr(g, e->ops[i]);
		types[i] = LLVMTypeOf(args[i]);
	}
	if (!e->callee) {
		fn = hgc_llvm_call_extern(g, e->u.sym, hgc_llvm_type(g, e->type), types, args,
					  e->nops);
		abi_ext(g, fn, e);
		return fn;
	}
	fn = g->funcs[e->callee->id];
	return LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)e->nops, "");
}

/* The value of an expression. */
LLVMValueRef hgc_llvm_expr(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	switch (e->kind) {
	case HGC_TIR_E_INT:
	case HGC_TIR_E_FLOAT:
		return constant(g, e);
	case HGC_TIR_E_VAR:
		return hgc_llvm_var_get(g, e->u.var);
	case HGC_TIR_E_BINARY:
		return binary(g, e);
	case HGC_TIR_E_UNARY:
		return unary(g, e);
	case HGC_TIR_E_SELECT:
		return select_expr(g, e);
	case HGC_TIR_E_CAST:
		return cast_expr(g, e);
	case HGC_TIR_E_LOAD:
		return load(g, e);
	case HGC_TIR_E_ADDR:
		return hgc_llvm_elem_addr(g, e->u.tensor, e->ops, e->nops);
	case HGC_TIR_E_INTRIN:
		return hgc_llvm_intrin(g, e);
	case HGC_TIR_E_CALL:
		return call(g, e);
	}
	hgc_llvm_err(g, "unknown expression kind %d", (int)e->kind);
	return LLVMGetUndef(g->t.i64);
}
