/*
 * llvm_stmt.c: Tensor IR statements as LLVM basic blocks.  Every variable
 * gets a stack slot in the entry block (SROA turns them into registers); a
 * for loop evaluates its end and step once, as the IR says; local tensors
 * are entry-block arrays up to HGC_LLVM_STACK_MAX bytes, else runtime
 * scratch memory freed at the end of their block and before a return.
 * Statements after a return go to a block nothing reaches.
 */
#include "llvm_int.h"

/* A new block at the end of the function being emitted. */
LLVMBasicBlockRef hgc_llvm_new_block(struct hgc_llvm_gen *g, const char *name)
{
	return LLVMAppendBasicBlockInContext(g->ctx, g->fn, name);
}

/* Whether the insertion block already has its terminator. */
bool hgc_llvm_terminated(struct hgc_llvm_gen *g)
{
	return LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)) != NULL;
}

/* A slot in the entry block, so that it is allocated once per call. */
LLVMValueRef hgc_llvm_alloca(struct hgc_llvm_gen *g, LLVMTypeRef ty, unsigned align,
			     const char *name)
{
	LLVMValueRef a;

	LLVMPositionBuilderAtEnd(g->ab, g->entry);
	a = LLVMBuildAlloca(g->ab, ty, name);
	if (align)
		LLVMSetAlignment(a, align);
	return a;
}

/* Open a counted loop: head with the phi, then the body. */
void hgc_llvm_loop_open(struct hgc_llvm_gen *g, struct hgc_llvm_loop *l, LLVMValueRef n)
{
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b), body;
	LLVMValueRef zero = LLVMConstInt(g->t.i64, 0, 0);

	l->head = hgc_llvm_new_block(g, "loop.head");
	body = hgc_llvm_new_block(g, "loop.body");
	l->exit = hgc_llvm_new_block(g, "loop.exit");
	LLVMBuildBr(g->b, l->head);
	LLVMPositionBuilderAtEnd(g->b, l->head);
	l->i = LLVMBuildPhi(g->b, g->t.i64, "i");
	LLVMAddIncoming(l->i, &zero, &pre, 1);
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, l->i, n, ""), body, l->exit);
	LLVMPositionBuilderAtEnd(g->b, body);
}

/* Close it: i + 1 back to the head, continue at the exit. */
void hgc_llvm_loop_close(struct hgc_llvm_gen *g, struct hgc_llvm_loop *l)
{
	LLVMValueRef next = LLVMBuildNSWAdd(g->b, l->i, LLVMConstInt(g->t.i64, 1, 0), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);

	LLVMBuildBr(g->b, l->head);
	LLVMAddIncoming(l->i, &next, &latch, 1);
	LLVMPositionBuilderAtEnd(g->b, l->exit);
}

/* Free heap locals newer than mark (not popped: the caller decides). */
void hgc_llvm_free_scratch(struct hgc_llvm_gen *g, size_t mark)
{
	LLVMValueRef p;
	size_t i;

	for (i = g->scratch.len; i > mark; i--) {
		p = HGC_VEC_AT(&g->scratch, LLVMValueRef, i - 1);
		hgc_llvm_call_extern(g, "hgc_rt_scratch_free", g->t.v, &g->t.i8p, &p, 1);
	}
}

/* A block: its statements, then the frees of the heap locals it defined. */
static void block(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	size_t mark = g->scratch.len;
	int i;

	if (s->kind != HGC_TIR_S_BLOCK) {
		hgc_llvm_stmt(g, s);
		return;
	}
	for (i = 0; i < s->u.block.n; i++)
		hgc_llvm_stmt(g, s->u.block.stmts[i]);
	if (!hgc_llvm_terminated(g))
		hgc_llvm_free_scratch(g, mark);
	g->scratch.len = mark;
}

/* The slot of a variable, made on its first definition. */
static LLVMValueRef slot(struct hgc_llvm_gen *g, const struct hgc_tir_var *v)
{
	struct hgc_llvm_var *x = &g->vars[v->id];

	if (!x->v || !x->slot) {
		x->v = hgc_llvm_alloca(g, hgc_llvm_type(g, v->type), 0, v->name);
		x->slot = true;
	}
	return x->v;
}

/* let and assign: store into the variable's slot. */
static void let(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_var *v = s->u.let.var;
	LLVMValueRef val;

	if (v->type.kind == HGC_TIR_VOID && !v->type.ptr) {
		hgc_llvm_err(g, "'%s' is a void variable", v->name);
		return;
	}
	if (s->kind == HGC_TIR_S_ASSIGN && g->vars[v->id].v && !g->vars[v->id].slot) {
		hgc_llvm_err(g, "'%s' is assigned in a parallel for but defined outside it",
			     v->name);
		return;
	}
	val = hgc_llvm_expr(g, s->u.let.value);
	LLVMBuildStore(g->b, val, slot(g, v));
}

/* for v in [begin, end) step: end and step evaluated once. */
static void loop(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_var *v = s->u.loop.var;
	LLVMTypeRef ty = hgc_llvm_type(g, v->type);
	LLVMValueRef begin = hgc_llvm_expr(g, s->u.loop.begin), end, step, p, cur;
	LLVMBasicBlockRef head, body, exit;

	end = hgc_llvm_expr(g, s->u.loop.end);
	step = hgc_llvm_expr(g, s->u.loop.step);
	p = slot(g, v);
	LLVMBuildStore(g->b, begin, p);
	head = hgc_llvm_new_block(g, "for.head");
	body = hgc_llvm_new_block(g, "for.body");
	exit = hgc_llvm_new_block(g, "for.exit");
	LLVMBuildBr(g->b, head);
	LLVMPositionBuilderAtEnd(g->b, head);
	cur = LLVMBuildLoad2(g->b, ty, p, v->name);
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, cur, end, ""), body, exit);
	LLVMPositionBuilderAtEnd(g->b, body);
	block(g, s->u.loop.body);
	if (!hgc_llvm_terminated(g)) {
		cur = LLVMBuildLoad2(g->b, ty, p, v->name);
		LLVMBuildStore(g->b, LLVMBuildNSWAdd(g->b, cur, step, ""), p);
		LLVMBuildBr(g->b, head);
	}
	LLVMPositionBuilderAtEnd(g->b, exit);
}

/* if (cond) then [else els] */
static void cond(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	LLVMValueRef c = hgc_llvm_expr(g, s->u.cond.cond);
	LLVMBasicBlockRef then = hgc_llvm_new_block(g, "if.then");
	LLVMBasicBlockRef els = s->u.cond.els ? hgc_llvm_new_block(g, "if.else") : NULL;
	LLVMBasicBlockRef join = hgc_llvm_new_block(g, "if.end");

	LLVMBuildCondBr(g->b, c, then, els ? els : join);
	LLVMPositionBuilderAtEnd(g->b, then);
	block(g, s->u.cond.then);
	if (!hgc_llvm_terminated(g))
		LLVMBuildBr(g->b, join);
	if (els) {
		LLVMPositionBuilderAtEnd(g->b, els);
		block(g, s->u.cond.els);
		if (!hgc_llvm_terminated(g))
			LLVMBuildBr(g->b, join);
	}
	LLVMPositionBuilderAtEnd(g->b, join);
}

/* t[idx] = value: a scalar, or lanes consecutive elements for a vector value. */
static void store(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_tensor *t = s->u.store.tensor;
	struct hgc_tir_type vt = s->u.store.value->type;
	LLVMValueRef v = hgc_llvm_to_mem(g, hgc_llvm_expr(g, s->u.store.value), vt);
	LLVMValueRef p = hgc_llvm_elem_addr(g, t, s->u.store.idx, s->u.store.n), st;

	if (vt.lanes > 1)
		p = LLVMBuildBitCast(g->b, p, LLVMPointerType(LLVMTypeOf(v), 0), "");
	st = LLVMBuildStore(g->b, v, p);
	LLVMSetAlignment(st, (unsigned)hgc_llvm_elem_size(t->elem));
	hgc_llvm_alias_tag(g, st, t);
}

/* A local tensor: a 64-byte aligned stack array when small and static, else scratch. */
static void local(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t)
{
	LLVMTypeRef ty = hgc_llvm_mem_type(g, t->elem);
	int64_t n = hgc_tir_tensor_size(t), size = hgc_llvm_elem_size(t->elem);
	LLVMValueRef bytes, p;
	int i;

	if (n >= 0 && n * size <= HGC_LLVM_STACK_MAX) {
		p = hgc_llvm_alloca(g, LLVMArrayType(ty, (unsigned)(n ? n : 1)), 64, t->name);
		g->tensors[t->id] = LLVMBuildBitCast(g->b, p, LLVMPointerType(ty, 0), "");
		return;
	}
	bytes = LLVMConstInt(g->t.i64, (unsigned long long)size, 0);
	for (i = 0; i < t->ndims; i++)
		bytes = LLVMBuildNSWMul(g->b, bytes, hgc_llvm_dim(g, t, i), "");
	p = hgc_llvm_call_extern(g, "hgc_rt_scratch_alloc", g->t.i8p, &g->t.i64, &bytes, 1);
	*(LLVMValueRef *)hgc_vec_push(&g->scratch) = p;
	g->tensors[t->id] = LLVMBuildBitCast(g->b, p, LLVMPointerType(ty, 0), t->name);
}

/* return [value]: free every heap local first; later statements are dead. */
static void ret(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	LLVMValueRef v = s->u.expr ? hgc_llvm_expr(g, s->u.expr) : NULL;

	if (g->pfor_depth) {
		hgc_llvm_err(g, "return inside a parallel for");
		return;
	}
	hgc_llvm_free_scratch(g, 0);
	if (v)
		LLVMBuildRet(g->b, v);
	else
		LLVMBuildRetVoid(g->b);
	LLVMPositionBuilderAtEnd(g->b, hgc_llvm_new_block(g, "dead"));
}

/* Emit one statement. */
void hgc_llvm_stmt(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	switch (s->kind) {
	case HGC_TIR_S_BLOCK: block(g, s); break;
	case HGC_TIR_S_FOR: loop(g, s); break;
	case HGC_TIR_S_PFOR: hgc_llvm_pfor(g, s); break;
	case HGC_TIR_S_IF: cond(g, s); break;
	case HGC_TIR_S_LET: case HGC_TIR_S_ASSIGN: let(g, s); break;
	case HGC_TIR_S_STORE: store(g, s); break;
	case HGC_TIR_S_TENSOR: local(g, s->u.tensor); break;
	case HGC_TIR_S_EVAL: hgc_llvm_expr(g, s->u.expr); break;
	case HGC_TIR_S_RETURN: ret(g, s); break;
	default: hgc_llvm_err(g, "unknown statement kind %d", (int)s->kind); break;
	}
}
