/*
 * llvm_module.c: the LLVM backend's driver.  A module goes one way:
 *
 *     verify the TIR -> translate (constants, function declarations, bodies,
 *     wrappers) -> LLVMVerifyModule -> LLVMRunPasses("default<O3>") on the
 *     host target machine -> the JIT (or an object file, llvm_emit.c)
 *
 * and every failure on the way is a diagnostic, never an abort.  The module
 * is built in a ThreadSafeContext of its own, so the JIT can take it.
 */
#include "llvm_int.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdlib.h>
#include <string.h>

/* Mark tensors whose address is taken (they may be written through it). */
static void written_expr(struct hgc_tir_visitor *v, struct hgc_tir_expr *e)
{
	bool *w = v->ctx;

	if (e->kind == HGC_TIR_E_ADDR)
		w[e->u.tensor->id] = true;
}

/* Mark tensors that are stored to. */
static bool written_stmt(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	bool *w = v->ctx;

	if (s->kind == HGC_TIR_S_STORE)
		w[s->u.store.tensor->id] = true;
	return true;
}

/*
 * Zero-initialized constants of at least this many bytes in a module with an
 * init function are heap constants: a pointer global that init sets to
 * memory from hgc_rt_const_alloc, and fini gives back.  A zero-initialized
 * global costs the JIT a memset of all of it at load (runtime/constbuf.c).
 */
#define HEAP_CONST_MIN (1 << 20)

/* The bytes of t's buffer (at least one element). */
static int64_t const_bytes(const struct hgc_tir_tensor *t)
{
	int64_t n = hgc_tir_tensor_size(t);

	return (n > 0 ? n : 1) * hgc_llvm_elem_size(t->elem);
}

/* A heap constant: the null pointer global, recorded in g->heap. */
static void heap_constant(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t, const char *name)
{
	LLVMValueRef gv = LLVMAddGlobal(g->mod, g->t.i8p, name);

	LLVMSetInitializer(gv, LLVMConstNull(g->t.i8p));
	LLVMSetLinkage(gv, LLVMInternalLinkage);
	g->heap[t->id] = gv;
}

/* A module constant: a 64-byte aligned internal global, with its data or zeros;
   read-only when it has data and nothing writes it.  NULL for a heap constant,
   whose base each function loads (hgc_llvm_heap_base). */
static LLVMValueRef constant(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t)
{
	int64_t bytes = const_bytes(t);
	bool data = t->data && !t->elem.ptr && hgc_tir_tensor_size(t) > 0;
	LLVMTypeRef ty;
	char name[512];
	LLVMValueRef gv;

	snprintf(name, sizeof(name), "tir.%s", t->name);
	if (!data && g->m->init && bytes >= HEAP_CONST_MIN) {
		heap_constant(g, t, name);
		return NULL;
	}
	ty = LLVMArrayType(g->t.i8, (unsigned)bytes);
	gv = LLVMAddGlobal(g->mod, ty, name);
	LLVMSetInitializer(gv, data ? LLVMConstStringInContext(g->ctx, t->data, (unsigned)bytes, 1)
				    : LLVMConstNull(ty));
	LLVMSetLinkage(gv, LLVMInternalLinkage);
	LLVMSetAlignment(gv, 64);
	LLVMSetGlobalConstant(gv, data && !g->written[t->id]);
	return LLVMConstBitCast(gv, LLVMPointerType(hgc_llvm_mem_type(g, t->elem), 0));
}

/* The base of heap constant t in this function, from its pointer global: loaded
   in the entry block, or by b at the insertion point (init, after mapping). */
static LLVMValueRef heap_load(struct hgc_llvm_gen *g, LLVMBuilderRef b,
			      const struct hgc_tir_tensor *t)
{
	LLVMValueRef p = LLVMBuildLoad2(b, g->t.i8p, g->heap[t->id], t->name);

	return LLVMBuildBitCast(b, p, LLVMPointerType(hgc_llvm_mem_type(g, t->elem), 0), "");
}

/* The base pointer of heap constant t here, loaded once per function. */
LLVMValueRef hgc_llvm_heap_base(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t)
{
	if (!g->tensors[t->id]) {
		LLVMPositionBuilderAtEnd(g->ab, g->entry);
		g->tensors[t->id] = heap_load(g, g->ab, t);
	}
	return g->tensors[t->id];
}

/* At the top of init: map each heap constant not mapped yet, and bind its base. */
void hgc_llvm_heap_alloc(struct hgc_llvm_gen *g)
{
	const struct hgc_tir_tensor *t;
	LLVMBasicBlockRef map, next;
	LLVMValueRef p, size;
	size_t i;

	for (i = 0; i < g->m->consts.len; i++) {
		t = HGC_TIR_CONST_AT(g->m, i);
		if (!g->heap[t->id])
			continue;
		map = hgc_llvm_new_block(g, "heap.map");
		next = hgc_llvm_new_block(g, "heap.next");
		p = LLVMBuildLoad2(g->b, g->t.i8p, g->heap[t->id], "");
		LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, p, ""), map, next);
		LLVMPositionBuilderAtEnd(g->b, map);
		size = LLVMConstInt(g->t.i64, (unsigned long long)const_bytes(t), 0);
		p = hgc_llvm_call_extern(g, "hgc_rt_const_alloc", g->t.i8p, &g->t.i64, &size, 1);
		LLVMBuildStore(g->b, p, g->heap[t->id]);
		LLVMBuildBr(g->b, next);
		LLVMPositionBuilderAtEnd(g->b, next);
		g->tensors[t->id] = heap_load(g, g->b, t);
	}
}

/* PREFIXfini(void): unmap every heap constant (init maps them again). */
static void heap_fini(struct hgc_llvm_gen *g)
{
	LLVMTypeRef types[2] = { g->t.i8p, g->t.i64 };
	const struct hgc_tir_tensor *t;
	LLVMValueRef fn, args[2];
	char name[512];
	size_t i;

	snprintf(name, sizeof(name), "%sfini", g->prefix);
	fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->t.v, NULL, 0, 0));
	hgc_llvm_func_attrs(g, fn);
	g->fn = fn;
	LLVMPositionBuilderAtEnd(g->b, hgc_llvm_new_block(g, "entry"));
	for (i = 0; i < g->m->consts.len; i++) {
		t = HGC_TIR_CONST_AT(g->m, i);
		if (!g->heap[t->id])
			continue;
		args[0] = LLVMBuildLoad2(g->b, g->t.i8p, g->heap[t->id], "");
		args[1] = LLVMConstInt(g->t.i64, (unsigned long long)const_bytes(t), 0);
		hgc_llvm_call_extern(g, "hgc_rt_const_free", g->t.v, types, args, 2);
		LLVMBuildStore(g->b, LLVMConstNull(g->t.i8p), g->heap[t->id]);
	}
	LLVMBuildRetVoid(g->b);
}

/* Everything of the module into g->mod. */
static void translate(struct hgc_llvm_gen *g)
{
	const struct hgc_tir_module *m = g->m;
	struct hgc_tir_visitor v = { written_stmt, NULL, written_expr, g->written };
	LLVMValueRef *globals = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*globals));
	const struct hgc_tir_tensor *t;
	size_t i;

	hgc_tir_walk_module((struct hgc_tir_module *)m, &v);
	for (i = 0; i < m->consts.len; i++) {
		t = HGC_TIR_CONST_AT(m, i);
		globals[t->id] = constant(g, t);
	}
	hgc_llvm_declare_funcs(g);
	for (i = 0; i < m->funcs.len; i++) {
		memcpy(g->tensors, globals, ((size_t)m->ntensors + 1) * sizeof(*globals));
		memset(g->vars, 0, ((size_t)m->nvars + 1) * sizeof(*g->vars));
		hgc_llvm_func(g, HGC_TIR_FUNC(m, i));
	}
	hgc_llvm_wrapper(g, m->entry, "entry");
	if (m->init) {
		hgc_llvm_wrapper(g, m->init, "init");
		heap_fini(g);
	}
	free(globals);
}

/* Translate m into lm->mod; -1 with the diag set. */
static int generate(struct hgc_llvm_module *lm, const struct hgc_tir_module *m, struct hgc_diag *d)
{
	struct hgc_llvm_gen g = { .ctx = lm->ctx, .mod = lm->mod, .m = m, .prefix = lm->prefix,
				  .d = d };

	hgc_llvm_types_init(&g);
	g.b = LLVMCreateBuilderInContext(g.ctx);
	g.ab = LLVMCreateBuilderInContext(g.ctx);
	g.funcs = hgc_xcalloc(m->funcs.len + 1, sizeof(*g.funcs));
	g.tensors = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*g.tensors));
	g.vars = hgc_xcalloc((size_t)m->nvars + 1, sizeof(*g.vars));
	g.written = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*g.written));
	g.heap = hgc_xcalloc((size_t)m->ntensors + 1, sizeof(*g.heap));
	hgc_vec_init(&g.scratch, sizeof(LLVMValueRef));
	hgc_llvm_alias_init(&g);
	translate(&g);
	hgc_llvm_alias_release(&g);
	hgc_vec_release(&g.scratch);
	free(g.funcs);
	free(g.tensors);
	free(g.vars);
	free(g.written);
	free(g.heap);
	LLVMDisposeBuilder(g.ab);
	LLVMDisposeBuilder(g.b);
	return g.nerr ? -1 : 0;
}

/* LLVMVerifyModule: a failure is our bug, reported as an internal error. */
static int verify(struct hgc_llvm_module *lm, struct hgc_diag *d)
{
	char *msg = NULL;
	int rc = 0;

	if (LLVMVerifyModule(lm->mod, LLVMReturnStatusAction, &msg))
		rc = hgc_error(d, NULL, "llvm backend: internal error: invalid LLVM IR: %s",
			       msg ? msg : "(no message)");
	LLVMDisposeMessage(msg);
	return rc;
}

/*
 * Run the pass pipeline (default<O3>) with the host target machine, so the
 * vectorizers see the target.  The loop unroller is off unless asked for: it
 * multiplies compile time on loop nests (a 13x97 softmax: 45 ms instead of
 * 200+) for no speed we could measure; the vectorizer still interleaves.
 * Then the math calls with vector variants are inlined (llvm_vfabi.c).
 */
static int optimize(struct hgc_llvm_module *lm, const struct hgc_codegen_llvm_opts *o,
		    struct hgc_diag *d)
{
	LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err;
	int rc;

	LLVMPassBuilderOptionsSetLoopUnrolling(opts, o && o->unroll);
	err = LLVMRunPasses(lm->mod, o && o->passes ? o->passes : "default<O3>", hgc_llvm_tm(), opts);
	rc = err ? hgc_llvm_error(d, err, "cannot optimize") : hgc_llvm_vfabi_inline(lm->mod, opts, d);
	LLVMDisposePassBuilderOptions(opts);
	return rc;
}

/* A fresh LLVM module for m in a context of its own, targeting the host. */
static struct hgc_llvm_module *module_new(const struct hgc_tir_module *m, const char *prefix)
{
	struct hgc_llvm_module *lm = hgc_xcalloc(1, sizeof(*lm));

	lm->prefix = strdup(prefix);
	lm->tsc = LLVMOrcCreateNewThreadSafeContext();
	lm->ctx = LLVMOrcThreadSafeContextGetContext(lm->tsc);
	lm->mod = LLVMModuleCreateWithNameInContext(m->name, lm->ctx);
	LLVMSetTarget(lm->mod, hgc_llvm_triple());
	LLVMSetDataLayout(lm->mod, hgc_llvm_layout());
	return lm;
}

/* Verify, translate, verify the IR, optimize. */
struct hgc_llvm_module *hgc_llvm_module_build(const struct hgc_tir_module *m, const char *prefix,
					      const struct hgc_codegen_llvm_opts *opts,
					      struct hgc_diag *d)
{
	struct hgc_llvm_module *lm;

	if (hgc_tir_verify(m, d) < 0 || hgc_llvm_target(d) < 0)
		return NULL;
	lm = module_new(m, prefix);
	if (generate(lm, m, d) < 0 || verify(lm, d) < 0 || optimize(lm, opts, d) < 0) {
		hgc_llvm_module_free(lm);
		return NULL;
	}
	return lm;
}

/* Dispose the module (unless the JIT took it), then our reference to the context. */
void hgc_llvm_module_free(struct hgc_llvm_module *lm)
{
	if (!lm)
		return;
	if (lm->mod)
		LLVMDisposeModule(lm->mod);
	LLVMOrcDisposeThreadSafeContext(lm->tsc);
	free(lm->prefix);
	free(lm);
}

/* Compile m into the process JIT; NULL with the diag set. */
struct hgc_compiled *hgc_codegen_llvm_compile(const struct hgc_tir_module *m,
					      const struct hgc_codegen_llvm_opts *opts,
					      struct hgc_diag *d)
{
	char *prefix = hgc_llvm_jit_prefix();
	struct hgc_llvm_module *lm = hgc_llvm_module_build(m, prefix, opts, d);
	struct hgc_compiled *c = NULL;
	LLVMOrcResourceTrackerRef rt;

	if (lm) {
		rt = hgc_llvm_jit_add(lm->mod, lm->tsc, d);
		lm->mod = NULL;		/* the JIT owns it now, even when adding failed */
		hgc_llvm_module_free(lm);
		c = hgc_llvm_jit_compiled(rt, prefix, m->entry->nparams, m->init != NULL, d);
	}
	free(prefix);
	return c;
}

/* Print the optimized IR of m (exported names PREFIXentry ...). */
int hgc_codegen_llvm_dump(FILE *out, const struct hgc_tir_module *m,
			  const struct hgc_codegen_llvm_opts *opts, struct hgc_diag *d)
{
	struct hgc_llvm_module *lm;

	lm = hgc_llvm_module_build(m, opts && opts->prefix ? opts->prefix : "hgc_", opts, d);
	if (!lm)
		return -1;
	hgc_llvm_module_print(out, lm);
	hgc_llvm_module_free(lm);
	return 0;
}
