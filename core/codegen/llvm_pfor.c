/*
 * llvm_pfor.c: a parallel for becomes a call of the runtime,
 *
 *     hgc_rt_parallel_for(body, &ctx, total)
 *
 * which runs body(&ctx, i) for i in [0, total) under OpenMP with a static
 * schedule; for n collapsed indices total is the product of the trip counts
 * and body decomposes i row-major, so the iterations (and which thread runs
 * each) are those of the C backend's `omp parallel for collapse(n)`.  The
 * body is outlined into an internal function; ctx is a struct on the
 * caller's stack holding what the body uses from outside: range values and
 * variables (by value: the body may not assign them) and tensor pointers.
 * Values that are LLVM constants (constant ranges, module constants) are
 * not stored but used directly, so the body divides by constant trip counts.
 */
#include "llvm_int.h"

#include <stdlib.h>
#include <string.h>

/* What a parallel-for body uses and defines, by variable and tensor id. */
struct uses {
	struct hgc_tir_visitor v;
	const struct hgc_tir_var **var_use;	/* the variable, when used */
	char *var_def;
	const struct hgc_tir_tensor **ten_use;	/* the tensor, when used */
};

/* Statements define variables, assign and store. */
static bool use_stmt(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	struct uses *u = v->ctx;
	int i;

	switch (s->kind) {
	case HGC_TIR_S_LET: u->var_def[s->u.let.var->id] = 1; break;
	case HGC_TIR_S_ASSIGN: u->var_use[s->u.let.var->id] = s->u.let.var; break;
	case HGC_TIR_S_FOR: u->var_def[s->u.loop.var->id] = 1; break;
	case HGC_TIR_S_STORE: u->ten_use[s->u.store.tensor->id] = s->u.store.tensor; break;
	case HGC_TIR_S_PFOR:
		for (i = 0; i < s->u.pfor.n; i++)
			u->var_def[s->u.pfor.vars[i]->id] = 1;
		break;
	default: break;
	}
	return true;
}

/* Expressions use variables and tensors. */
static void use_expr(struct hgc_tir_visitor *v, struct hgc_tir_expr *e)
{
	struct uses *u = v->ctx;

	if (e->kind == HGC_TIR_E_VAR)
		u->var_use[e->u.var->id] = e->u.var;
	else if (e->kind == HGC_TIR_E_LOAD || e->kind == HGC_TIR_E_ADDR)
		u->ten_use[e->u.tensor->id] = e->u.tensor;
}

/* Collect the uses of the body of s, with the variables in used tensors' dims. */
static void find_uses(struct uses *u, const struct hgc_tir_module *m, const struct hgc_tir_stmt *s)
{
	const struct hgc_tir_tensor *t;
	int i, k;

	u->var_use = hgc_xcalloc((size_t)m->nvars + 1, sizeof(*u->var_use));
	u->var_def = hgc_xcalloc((size_t)m->nvars + 1, 1);
	u->ten_use = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*u->ten_use));
	u->v = (struct hgc_tir_visitor){ use_stmt, NULL, use_expr, u };
	for (i = 0; i < s->u.pfor.n; i++)
		u->var_def[s->u.pfor.vars[i]->id] = 1;
	hgc_tir_walk_stmt(s->u.pfor.body, &u->v);
	for (i = 0; i < m->ntensors; i++)
		for (k = 0; (t = u->ten_use[i]) && k < t->ndims; k++)
			hgc_tir_walk_expr(t->dims[k], &u->v);
}

/* One value the body takes from the parent. */
struct cap {
	LLVMValueRef v;		/* in the parent */
	int var, ten;		/* the variable or tensor it is in the body, or -1 */
	int field;		/* its ctx field, or -1 for a constant used directly */
};

/* The outlining of one parallel for. */
struct outline {
	const struct hgc_tir_stmt *s;
	int n;			/* collapsed indices: caps 3k, 3k+1, 3k+2 are begin, step, trip */
	LLVMValueRef total;	/* iterations, in the parent */
	struct hgc_vec caps;	/* struct cap */
	int nfields;
	LLVMTypeRef ctx_type;
};

/* Add a captured value; non-constants get a ctx field. */
static void capture(struct outline *o, LLVMValueRef v, int var, int ten)
{
	struct cap *c = hgc_vec_push(&o->caps);

	c->v = v;
	c->var = var;
	c->ten = ten;
	c->field = LLVMIsConstant(v) ? -1 : o->nfields++;
}

/* Evaluate the ranges in the parent: trip = end > begin ? (end - begin + step - 1) / step : 0. */
static void ranges(struct hgc_llvm_gen *g, struct outline *o)
{
	const struct hgc_tir_stmt *s = o->s;
	LLVMValueRef b, e, st, t, one = LLVMConstInt(g->t.i64, 1, 0);
	int k;

	o->total = one;
	for (k = 0; k < o->n; k++) {
		b = hgc_llvm_expr(g, s->u.pfor.begin[k]);
		e = hgc_llvm_expr(g, s->u.pfor.end[k]);
		st = hgc_llvm_expr(g, s->u.pfor.step[k]);
		t = LLVMBuildNSWSub(g->b, LLVMBuildNSWAdd(g->b, LLVMBuildNSWSub(g->b, e, b, ""), st, ""),
				    one, "");
		t = LLVMBuildSDiv(g->b, t, st, "");
		t = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSGT, e, b, ""), t,
				    LLVMConstInt(g->t.i64, 0, 0), "");
		capture(o, b, -1, -1);
		capture(o, st, -1, -1);
		capture(o, t, -1, -1);
		o->total = LLVMBuildNSWMul(g->b, o->total, t, "");
	}
}

/* Ranges, then every outside variable and tensor the body uses, by id. */
static void captures(struct hgc_llvm_gen *g, struct outline *o)
{
	struct uses u;
	int i;

	find_uses(&u, g->m, o->s);
	ranges(g, o);
	for (i = 0; i < g->m->nvars; i++)
		if (u.var_use[i] && !u.var_def[i] && g->vars[i].v)
			capture(o, hgc_llvm_var_get(g, u.var_use[i]), i, -1);
	for (i = 0; i < g->m->ntensors; i++)
		if (u.ten_use[i] && g->tensors[i])
			capture(o, g->tensors[i], -1, i);
	free(u.var_use);
	free(u.var_def);
	free(u.ten_use);
}

/* The ctx struct type, and the parent's stores into a stack instance of it. */
static LLVMValueRef build_ctx(struct hgc_llvm_gen *g, struct outline *o)
{
	LLVMTypeRef *types = hgc_xcalloc((size_t)o->nfields + 1, sizeof(*types));
	LLVMValueRef ctx;
	struct cap *c;
	size_t i;

	for (i = 0; i < o->caps.len; i++) {
		c = &HGC_VEC_AT(&o->caps, struct cap, i);
		if (c->field >= 0)
			types[c->field] = LLVMTypeOf(c->v);
	}
	o->ctx_type = LLVMStructTypeInContext(g->ctx, types, (unsigned)o->nfields, 0);
	free(types);
	if (!o->nfields)
		return LLVMConstNull(g->t.i8p);
	ctx = hgc_llvm_alloca(g, o->ctx_type, 0, "pfor.ctx");
	for (i = 0; i < o->caps.len; i++) {
		c = &HGC_VEC_AT(&o->caps, struct cap, i);
		if (c->field >= 0)
			LLVMBuildStore(g->b, c->v, LLVMBuildStructGEP2(g->b, o->ctx_type, ctx,
								       (unsigned)c->field, ""));
	}
	return LLVMBuildBitCast(g->b, ctx, g->t.i8p, "");
}

/* Body side: every captured value, loaded from ctx or used as the constant it is;
   variables and tensors are bound, range values returned in vals. */
static void take_caps(struct hgc_llvm_gen *g, struct outline *o, LLVMValueRef *vals)
{
	LLVMValueRef ctx = LLVMGetParam(g->fn, 0), v;
	struct cap *c;
	size_t i;

	ctx = LLVMBuildBitCast(g->b, ctx, LLVMPointerType(o->ctx_type, 0), "ctx");
	for (i = 0; i < o->caps.len; i++) {
		c = &HGC_VEC_AT(&o->caps, struct cap, i);
		v = c->v;
		if (c->field >= 0)
			v = LLVMBuildLoad2(g->b, LLVMTypeOf(c->v),
					   LLVMBuildStructGEP2(g->b, o->ctx_type, ctx,
							       (unsigned)c->field, ""), "");
		if (c->var >= 0)
			g->vars[c->var] = (struct hgc_llvm_var){ v, false };
		else if (c->ten >= 0)
			g->tensors[c->ten] = v;
		else
			vals[i] = v;
	}
}

/* Body side: the indices from the linear iteration i, last index fastest. */
static void decompose(struct hgc_llvm_gen *g, struct outline *o, LLVMValueRef *vals)
{
	LLVMValueRef rem = LLVMGetParam(g->fn, 1), q, v, slot;
	const struct hgc_tir_var *var;
	int k;

	for (k = o->n - 1; k >= 0; k--) {
		q = rem;
		if (k > 0) {
			q = LLVMBuildURem(g->b, rem, vals[3 * k + 2], "");
			rem = LLVMBuildUDiv(g->b, rem, vals[3 * k + 2], "");
		}
		var = o->s->u.pfor.vars[k];
		v = LLVMBuildNSWAdd(g->b, vals[3 * k], LLVMBuildNSWMul(g->b, q, vals[3 * k + 1], ""),
				    var->name);
		slot = hgc_llvm_alloca(g, g->t.i64, 0, var->name);
		LLVMBuildStore(g->b, v, slot);
		g->vars[var->id] = (struct hgc_llvm_var){ slot, true };
	}
}

/* The state of the function being emitted, kept while a body is outlined. */
struct saved {
	LLVMValueRef fn;
	LLVMBasicBlockRef entry, at;
	struct hgc_llvm_var *vars;
	LLVMValueRef *tensors;
};

/* Save the parent's state and clear the maps for the body. */
static void save(struct hgc_llvm_gen *g, struct saved *sv)
{
	size_t nv = (size_t)g->m->nvars + 1, nt = (size_t)g->m->ntensors + 1;

	sv->fn = g->fn;
	sv->entry = g->entry;
	sv->at = LLVMGetInsertBlock(g->b);
	sv->vars = hgc_xmalloc(nv * sizeof(*sv->vars));
	memcpy(sv->vars, g->vars, nv * sizeof(*sv->vars));
	memset(g->vars, 0, nv * sizeof(*g->vars));
	sv->tensors = hgc_xmalloc(nt * sizeof(*sv->tensors));
	memcpy(sv->tensors, g->tensors, nt * sizeof(*sv->tensors));
	memset(g->tensors, 0, nt * sizeof(*g->tensors));
}

/* Back to the parent. */
static void restore(struct hgc_llvm_gen *g, struct saved *sv)
{
	size_t nv = (size_t)g->m->nvars + 1, nt = (size_t)g->m->ntensors + 1;

	g->fn = sv->fn;
	g->entry = sv->entry;
	LLVMPositionBuilderAtEnd(g->b, sv->at);
	memcpy(g->vars, sv->vars, nv * sizeof(*sv->vars));
	memcpy(g->tensors, sv->tensors, nt * sizeof(*sv->tensors));
	free(sv->vars);
	free(sv->tensors);
}

/* Emit the body function: void NAME.pforK(i8 *ctx, i64 i). */
static LLVMValueRef body(struct hgc_llvm_gen *g, struct outline *o)
{
	LLVMTypeRef params[2] = { g->t.i8p, g->t.i64 };
	LLVMValueRef fn, *vals = hgc_xcalloc(o->caps.len + 1, sizeof(*vals));
	struct saved sv;
	size_t mark = g->scratch.len;
	char name[512];

	snprintf(name, sizeof(name), "tir.%s.pfor%d", g->f->name, g->npfor++);
	fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->t.v, params, 2, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	hgc_llvm_func_attrs(g, fn);
	save(g, &sv);
	hgc_llvm_begin_function(g, fn);
	take_caps(g, o, vals);
	decompose(g, o, vals);
	g->pfor_depth++;
	hgc_llvm_stmt(g, o->s->u.pfor.body);
	g->pfor_depth--;
	if (!hgc_llvm_terminated(g)) {
		hgc_llvm_free_scratch(g, mark);
		LLVMBuildRetVoid(g->b);
	}
	g->scratch.len = mark;
	hgc_llvm_end_function(g);
	restore(g, &sv);
	free(vals);
	return fn;
}

/* A parallel for: ranges and captures in the parent, the body outlined, the runtime call. */
void hgc_llvm_pfor(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s)
{
	struct outline o = { .s = s, .n = s->u.pfor.n };
	LLVMValueRef args[3];
	LLVMTypeRef types[3];

	hgc_vec_init(&o.caps, sizeof(struct cap));
	captures(g, &o);
	args[1] = build_ctx(g, &o);
	args[2] = o.total;
	args[0] = body(g, &o);
	types[0] = LLVMTypeOf(args[0]);
	types[1] = g->t.i8p;
	types[2] = g->t.i64;
	hgc_llvm_call_extern(g, "hgc_rt_parallel_for", g->t.v, types, args, 3);
	hgc_vec_release(&o.caps);
}
