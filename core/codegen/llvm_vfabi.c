/*
 * llvm_vfabi.c: math functions that LLVM's vectorizers see as calls with
 * vector variants, for the few whose vector code is better than what the
 * vectorizers make of the scalar code.
 *
 * Most inline math (llvm_intrin.c) is scalar IR that the loop and SLP
 * vectorizers widen as it is.  Some vector instructions have no scalar IR
 * that widens into them: on AVX-512, exp's p * 2^n is one vscalefps where
 * the scalar IR takes a shift, an integer max and a multiply (softmax's
 * exp loop: 14 vector operations instead of 16).  Such a function is
 * emitted as a call to an internal scalar function "hgc.vf.NAME" (kept
 * out of line while the pipeline runs) whose call site names variants of
 * 4, 8 and 16 lanes ("vector-function-abi-variant", LLVM's VFABI): where a
 * vectorizer widens the loop it calls the variant of its width.  After the
 * pipeline, hgc_llvm_vfabi_inline inlines what is left (the variants, and
 * the scalar function where nothing was widened) and drops the unused.
 */
#include "llvm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VF_PREFIX "hgc.vf."

static const int vf_lanes[] = { 4, 8, 16 };
#define NVF ((int)(sizeof(vf_lanes) / sizeof(vf_lanes[0])))

/* A function attribute by enum name on fn. */
static void add_enum_attr(LLVMContextRef ctx, LLVMValueRef fn, const char *name)
{
	unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));

	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, k, 0));
}

/* Internal function name(x: ty) -> ty with body(g, x), built on a builder of its own. */
static LLVMValueRef define(struct hgc_llvm_gen *g, const char *name, LLVMTypeRef ty,
			   hgc_llvm_unary_body body)
{
	LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(ty, &ty, 1, 0));
	LLVMBuilderRef outer = g->b;

	LLVMSetLinkage(fn, LLVMInternalLinkage);
	hgc_llvm_func_attrs(g, fn);
	g->b = LLVMCreateBuilderInContext(g->ctx);
	LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, fn, ""));
	LLVMBuildRet(g->b, body(g, LLVMGetParam(fn, 0)));
	LLVMDisposeBuilder(g->b);
	g->b = outer;
	return fn;
}

/* Add fns to @llvm.compiler.used (which keeps them alive until a call is made). */
static void keep_used(struct hgc_llvm_gen *g, LLVMValueRef *fns, int n)
{
	LLVMTypeRef i8p = LLVMPointerType(g->t.i8, 0);
	LLVMValueRef old = LLVMGetNamedGlobal(g->mod, "llvm.compiler.used"), *all, arr, gv;
	int nold = old ? LLVMGetNumOperands(LLVMGetInitializer(old)) : 0, i;

	all = hgc_xcalloc((size_t)(nold + n), sizeof(*all));
	for (i = 0; i < nold; i++)
		all[i] = LLVMGetOperand(LLVMGetInitializer(old), (unsigned)i);
	for (i = 0; i < n; i++)
		all[nold + i] = LLVMConstBitCast(fns[i], i8p);
	if (old)
		LLVMDeleteGlobal(old);
	arr = LLVMConstArray(i8p, all, (unsigned)(nold + n));
	gv = LLVMAddGlobal(g->mod, LLVMTypeOf(arr), "llvm.compiler.used");
	LLVMSetLinkage(gv, LLVMAppendingLinkage);
	LLVMSetSection(gv, "llvm.metadata");
	LLVMSetInitializer(gv, arr);
	free(all);
}

/* The scalar function hgc.vf.NAME and its variants, defined on first use. */
static LLVMValueRef scalar_fn(struct hgc_llvm_gen *g, const char *fname, hgc_llvm_unary_body body)
{
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, fname), vfs[NVF];
	char vname[96];
	int i;

	if (fn)
		return fn;
	fn = define(g, fname, g->t.f32, body);
	add_enum_attr(g->ctx, fn, "noinline");
	for (i = 0; i < NVF; i++) {
		snprintf(vname, sizeof(vname), "%s.v%d", fname, vf_lanes[i]);
		vfs[i] = define(g, vname, LLVMVectorType(g->t.f32, (unsigned)vf_lanes[i]), body);
		add_enum_attr(g->ctx, vfs[i], "alwaysinline");
	}
	keep_used(g, vfs, NVF);
	return fn;
}

LLVMValueRef hgc_llvm_vfabi_call(struct hgc_llvm_gen *g, const char *name, LLVMValueRef x,
				 hgc_llvm_unary_body body)
{
	static const char key[] = "vector-function-abi-variant";
	char fname[64], variants[400];
	LLVMValueRef fn, call;
	size_t len = 0;
	int i;

	snprintf(fname, sizeof(fname), VF_PREFIX "%s", name);
	fn = scalar_fn(g, fname, body);
	for (i = 0; i < NVF; i++)
		len += (size_t)snprintf(variants + len, sizeof(variants) - len,
					"%s_ZGV_LLVM_N%dv_%s(%s.v%d)", i ? "," : "", vf_lanes[i],
					fname, fname, vf_lanes[i]);
	call = LLVMBuildCall2(g->b, LLVMFunctionType(g->t.f32, &g->t.f32, 1, 0), fn, &x, 1, "");
	LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
				 LLVMCreateStringAttribute(g->ctx, key, sizeof(key) - 1, variants,
							   (unsigned)len));
	return call;
}

int hgc_llvm_vfabi_inline(LLVMModuleRef mod, LLVMPassBuilderOptionsRef opts, struct hgc_diag *d)
{
	LLVMValueRef used = LLVMGetNamedGlobal(mod, "llvm.compiler.used"), fn;
	unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
	LLVMErrorRef err;
	bool any = false;

	for (fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
		size_t n;
		const char *name = LLVMGetValueName2(fn, &n);

		if (strncmp(name, VF_PREFIX, sizeof(VF_PREFIX) - 1) || LLVMIsDeclaration(fn))
			continue;
		any = true;
		if (LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, noinline)) {
			LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, noinline);
			add_enum_attr(LLVMGetModuleContext(mod), fn, "alwaysinline");
		}
	}
	if (!any)
		return 0;
	/* Only the variants are in it (nothing else of ours uses it). */
	if (used)
		LLVMDeleteGlobal(used);
	err = LLVMRunPasses(mod, "always-inline,globaldce", hgc_llvm_tm(), opts);
	return err ? hgc_llvm_error(d, err, "cannot inline the vector variants") : 0;
}
