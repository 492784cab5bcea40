/*
 * llvm_func.c: functions.  Every TIR function becomes an LLVM function with
 * tensors as pointers to their stored elements and scalars by value.  The
 * entry and init functions are exported as PREFIXentry_fn / PREFIXinit_fn
 * with those natural signatures and as PREFIXentry(void **args) /
 * PREFIXinit(void **args), the calling convention of struct hgc_compiled;
 * the other functions are internal ("tir.NAME", so no C symbol can clash).
 * Each function starts with a block of allocas only, then its code.
 */
#include "llvm_int.h"

#include <string.h>

/* Host CPU and feature attributes (so any later code generator sees them), nounwind. */
void hgc_llvm_func_attrs(struct hgc_llvm_gen *g, LLVMValueRef fn)
{
	const char *cpu = hgc_llvm_cpu(), *feat = hgc_llvm_features();
	unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);

	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				   LLVMCreateStringAttribute(g->ctx, "target-cpu", 10, cpu,
							     (unsigned)strlen(cpu)));
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				   LLVMCreateStringAttribute(g->ctx, "target-features", 15, feat,
							     (unsigned)strlen(feat)));
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				   LLVMCreateEnumAttribute(g->ctx, nounwind, 0));
}

/* Call an external C function, declared on first use; a later use with other
   types calls it through a cast pointer. */
LLVMValueRef hgc_llvm_call_extern(struct hgc_llvm_gen *g, const char *name, LLVMTypeRef ret,
				  LLVMTypeRef *params, LLVMValueRef *args, int n)
{
	LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);

	if (!fn)
		fn = LLVMAddFunction(g->mod, name, fty);
	if (LLVMGlobalGetValueType(fn) != fty)
		fn = LLVMConstBitCast(fn, LLVMPointerType(fty, 0));
	return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n, "");
}

/* The LLVM type of f: tensors as element pointers, scalars by value. */
static LLVMTypeRef func_type(struct hgc_llvm_gen *g, const struct hgc_tir_func *f)
{
	LLVMTypeRef params[256];
	const struct hgc_tir_param *p;
	int i, n = f->nparams < 256 ? f->nparams : 256;

	if (f->nparams > 256)
		hgc_llvm_err(g, "'%s' has %d parameters (at most 256)", f->name, f->nparams);
	for (i = 0; i < n; i++) {
		p = &f->params[i];
		params[i] = p->tensor ? LLVMPointerType(hgc_llvm_mem_type(g, p->tensor->elem), 0)
				      : hgc_llvm_type(g, p->var->type);
	}
	return LLVMFunctionType(hgc_llvm_type(g, f->ret), params, (unsigned)n, 0);
}

/* The name of f in the module: exported for entry and init, internal otherwise. */
static char *func_name(struct hgc_llvm_gen *g, const struct hgc_tir_func *f, char *buf,
		       size_t size)
{
	if (f == g->m->entry || f == g->m->init)
		snprintf(buf, size, "%s%s_fn", g->prefix, f == g->m->entry ? "entry" : "init");
	else
		snprintf(buf, size, "tir.%s", f->name);
	return buf;
}

/* Declare every TIR function before any body, so calls may go either way. */
void hgc_llvm_declare_funcs(struct hgc_llvm_gen *g)
{
	const struct hgc_tir_func *f;
	char name[512];
	size_t i;

	for (i = 0; i < g->m->funcs.len; i++) {
		f = HGC_TIR_FUNC(g->m, i);
		g->funcs[f->id] = LLVMAddFunction(g->mod, func_name(g, f, name, sizeof(name)),
						  func_type(g, f));
		if (f != g->m->entry && f != g->m->init)
			LLVMSetLinkage(g->funcs[f->id], LLVMInternalLinkage);
		else	/* one copy of the body: the args wrapper calls it, not inlines it */
			LLVMAddAttributeAtIndex(g->funcs[f->id], LLVMAttributeFunctionIndex,
						LLVMCreateEnumAttribute(g->ctx,
							LLVMGetEnumAttributeKindForName("noinline", 8), 0));
		hgc_llvm_func_attrs(g, g->funcs[f->id]);
	}
}

/* Point the builders at a fresh function: "entry" for allocas, "code" for the rest. */
void hgc_llvm_begin_function(struct hgc_llvm_gen *g, LLVMValueRef fn)
{
	g->fn = fn;
	g->entry = hgc_llvm_new_block(g, "entry");
	LLVMPositionBuilderAtEnd(g->b, hgc_llvm_new_block(g, "code"));
}

/* Close the alloca block with a branch to the code. */
void hgc_llvm_end_function(struct hgc_llvm_gen *g)
{
	LLVMPositionBuilderAtEnd(g->ab, g->entry);
	LLVMBuildBr(g->ab, LLVMGetNextBasicBlock(g->entry));
}

/* Parameters: tensors are their pointers, scalars get a slot (they may be assigned). */
static void bind_params(struct hgc_llvm_gen *g, const struct hgc_tir_func *f)
{
	const struct hgc_tir_param *p;
	LLVMValueRef v, s;
	int i;

	for (i = 0; i < f->nparams && i < 256; i++) {
		p = &f->params[i];
		v = LLVMGetParam(g->fn, (unsigned)i);
		if (p->tensor) {
			LLVMSetValueName2(v, p->tensor->name, strlen(p->tensor->name));
			g->tensors[p->tensor->id] = v;
			continue;
		}
		s = hgc_llvm_alloca(g, hgc_llvm_type(g, p->var->type), 0, p->var->name);
		LLVMBuildStore(g->b, v, s);
		g->vars[p->var->id].v = s;
		g->vars[p->var->id].slot = true;
	}
}

/* Emit the body of f; falling off the end returns (zero for a value). */
void hgc_llvm_func(struct hgc_llvm_gen *g, const struct hgc_tir_func *f)
{
	LLVMTypeRef ret = hgc_llvm_type(g, f->ret);

	g->f = f;
	g->npfor = 0;
	g->scratch.len = 0;
	hgc_llvm_begin_function(g, g->funcs[f->id]);
	bind_params(g, f);
	if (f == g->m->init)
		hgc_llvm_heap_alloc(g);
	hgc_llvm_stmt(g, f->body);
	if (!hgc_llvm_terminated(g)) {
		hgc_llvm_free_scratch(g, 0);
		if (LLVMGetTypeKind(ret) == LLVMVoidTypeKind)
			LLVMBuildRetVoid(g->b);
		else
			LLVMBuildRet(g->b, LLVMConstNull(ret));
	}
	hgc_llvm_end_function(g);
	g->f = NULL;
}

/* Argument i of a wrapper: args[i] is the buffer of a tensor, the address of a scalar. */
static LLVMValueRef unpack(struct hgc_llvm_gen *g, LLVMValueRef args, const struct hgc_tir_param *p,
			   int i)
{
	LLVMValueRef idx = LLVMConstInt(g->t.i64, (unsigned long long)i, 0), a;
	struct hgc_tir_type t = p->tensor ? p->tensor->elem : p->var->type;
	LLVMTypeRef mem = hgc_llvm_mem_type(g, t);

	a = LLVMBuildInBoundsGEP2(g->b, g->t.i8p, args, &idx, 1, "");
	a = LLVMBuildLoad2(g->b, g->t.i8p, a, "");
	a = LLVMBuildBitCast(g->b, a, LLVMPointerType(mem, 0), "");
	if (p->tensor)
		return a;
	return hgc_llvm_from_mem(g, LLVMBuildLoad2(g->b, mem, a, p->var->name), t);
}

/* PREFIXrole(void **args): unpack the arguments and call f. */
void hgc_llvm_wrapper(struct hgc_llvm_gen *g, const struct hgc_tir_func *f, const char *role)
{
	LLVMTypeRef fty = LLVMFunctionType(g->t.v, (LLVMTypeRef[]){ LLVMPointerType(g->t.i8p, 0) },
					   1, 0);
	LLVMValueRef args[256], fn, target = g->funcs[f->id];
	char name[512];
	int i;

	snprintf(name, sizeof(name), "%s%s", g->prefix, role);
	fn = LLVMAddFunction(g->mod, name, fty);
	hgc_llvm_func_attrs(g, fn);
	g->fn = fn;
	LLVMPositionBuilderAtEnd(g->b, hgc_llvm_new_block(g, "entry"));
	for (i = 0; i < f->nparams && i < 256; i++)
		args[i] = unpack(g, LLVMGetParam(fn, 0), &f->params[i], i);
	LLVMBuildCall2(g->b, LLVMGlobalGetValueType(target), target, args, (unsigned)i, "");
	LLVMBuildRetVoid(g->b);
}
