/*
 * llvm_alias.c: what the backend knows about aliasing, told to LLVM as
 * scoped-noalias metadata on every load and store of a tensor element.
 *
 * Tensors are separate objects unless both are the caller's: a local is a
 * fresh stack array or scratch block (buffer reuse rewrites the accesses of
 * the temporaries sharing one to that buffer's tensor), a constant a
 * module buffer, and neither is ever reached through another tensor (the
 * Tensor IR has no pointer loads; tensors of pointers only hand addresses
 * to the runtime).  Only parameters may overlap one another: the caller
 * may pass one buffer twice.  So every tensor that is not a parameter gets
 * a scope of its own, the parameters one scope together, and an access
 * says it is in its tensor's scope and aliases none of the others.
 *
 * Without it, LLVM vectorized a loop over a short row (a MatMul block's
 * bias and ReLU, 64 columns; int8's u8 epilogue, 40) behind run-time
 * checks that C and the bias, or the s32 block and the output, do not
 * overlap: address arithmetic and branches on every row.  Accesses the
 * backend makes itself (copy, fill, the lanes' folds) carry no metadata
 * and stay may-alias for LLVM.
 */
#include "llvm_int.h"

#include <llvm-c/DebugInfo.h>
#include <stdlib.h>

/* Modules with more tensors than this go without (the lists grow as its square). */
#define ALIAS_MAX_TENSORS 512

/* A distinct node {self, ops...}: a domain or scope. */
static LLVMMetadataRef self_node(LLVMContextRef ctx, LLVMMetadataRef *ops, int n)
{
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(ctx, NULL, 0), node;

	ops[0] = tmp;
	node = LLVMMDNodeInContext2(ctx, ops, (size_t)n);
	LLVMMetadataReplaceAllUsesWith(tmp, node);	/* disposes of tmp */
	return node;
}

/* What the module's tensors are, by id: an object of its own, or possibly
   shared with another (parameters, and any tensor not seen defined). */
enum kind { K_SHARED, K_OWN };

/* Visitor: a local tensor is an object of its own. */
static void local_seen(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	enum kind *kind = v->ctx;

	if (s->kind == HGC_TIR_S_TENSOR && s->u.tensor->scope != HGC_TIR_GLOBAL &&
	    !s->u.tensor->is_param)
		kind[s->u.tensor->id] = K_OWN;
}

/* Each tensor id's kind: constants and locals K_OWN, parameters K_SHARED (a
   parameter of one function wins over a local of another: the tensor is
   reached through an argument there). */
static enum kind *kinds(const struct hgc_tir_module *m)
{
	enum kind *kind = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*kind));
	struct hgc_tir_visitor vis = { .stmt_post = local_seen, .ctx = kind };

	for (size_t i = 0; i < m->consts.len; i++)
		kind[HGC_VEC_AT(&m->consts, struct hgc_tir_tensor *, i)->id] = K_OWN;
	for (size_t i = 0; i < m->funcs.len; i++)
		hgc_tir_walk_stmt(HGC_VEC_AT(&m->funcs, struct hgc_tir_func *, i)->body, &vis);
	for (size_t i = 0; i < m->funcs.len; i++) {
		const struct hgc_tir_func *f = HGC_VEC_AT(&m->funcs, struct hgc_tir_func *, i);

		for (int k = 0; k < f->nparams; k++)
			if (f->params[k].tensor)
				kind[f->params[k].tensor->id] = K_SHARED;
	}
	return kind;
}

void hgc_llvm_alias_init(struct hgc_llvm_gen *g)
{
	int n = g->m->ntensors, k;
	enum kind *kind;
	LLVMMetadataRef *scope, *others, ops[3], domain, params;

	if (n <= 0 || n > ALIAS_MAX_TENSORS)
		return;
	kind = kinds(g->m);
	scope = hgc_xcalloc((size_t)n, sizeof(*scope));
	others = hgc_xcalloc((size_t)n + 1, sizeof(*others));
	ops[1] = LLVMMDStringInContext2(g->ctx, "hgc tensors", 11);
	domain = self_node(g->ctx, ops, 2);
	ops[1] = domain;
	ops[2] = LLVMMDStringInContext2(g->ctx, "parameters", 10);
	params = self_node(g->ctx, ops, 3);
	ops[2] = LLVMMDStringInContext2(g->ctx, "tensor", 6);
	for (int id = 0; id < n; id++)
		scope[id] = kind[id] == K_OWN ? self_node(g->ctx, ops, 3) : params;
	g->alias_scope = hgc_xcalloc((size_t)n, sizeof(*g->alias_scope));
	g->alias_others = hgc_xcalloc((size_t)n, sizeof(*g->alias_others));
	for (int id = 0; id < n; id++) {
		k = 0;
		for (int j = 0; j < n; j++)
			if (kind[j] == K_OWN && j != id)
				others[k++] = scope[j];
		if (kind[id] == K_OWN)
			others[k++] = params;
		g->alias_scope[id] = LLVMMetadataAsValue(g->ctx,
							 LLVMMDNodeInContext2(g->ctx, &scope[id], 1));
		g->alias_others[id] = LLVMMetadataAsValue(g->ctx,
							  LLVMMDNodeInContext2(g->ctx, others, (size_t)k));
	}
	g->md_alias_scope = LLVMGetMDKindIDInContext(g->ctx, "alias.scope", 11);
	g->md_noalias = LLVMGetMDKindIDInContext(g->ctx, "noalias", 7);
	free(others);
	free(scope);
	free(kind);
}

void hgc_llvm_alias_release(struct hgc_llvm_gen *g)
{
	free(g->alias_scope);
	free(g->alias_others);
	g->alias_scope = g->alias_others = NULL;
}

void hgc_llvm_alias_tag(struct hgc_llvm_gen *g, LLVMValueRef access, const struct hgc_tir_tensor *t)
{
	if (!g->alias_scope || t->id < 0 || t->id >= g->m->ntensors)
		return;
	LLVMSetMetadata(access, g->md_alias_scope, g->alias_scope[t->id]);
	LLVMSetMetadata(access, g->md_noalias, g->alias_others[t->id]);
}
