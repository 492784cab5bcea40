/*
 * llvm_int.h: what the files of the LLVM backend (llvm_*.c) share.  One
 * context, struct hgc_llvm_gen, holds the LLVM context, module and builders,
 * the cached types, the TIR module and the map from TIR variables, tensors
 * and functions (by id) to LLVM values; every helper takes it first.
 *
 * Files: llvm_session.c (host target machine, the process LLJIT, runtime
 * symbols, LLVM errors), llvm_type.c (types, storage conversions, bf16),
 * llvm_expr.c (expressions), llvm_intrin.c (intrinsics), llvm_stmt.c
 * (statements, loops), llvm_func.c (functions, wrappers), llvm_pfor.c
 * (outlined parallel-for bodies), llvm_module.c (the driver and the JIT
 * backend), llvm_emit.c (object, assembly, IR and header output),
 * llvm_object.c (objects in memory, and loading them into the JIT),
 * llvm_vfabi.c (math calls with vector variants for LLVM's vectorizers).
 */
#ifndef HGC_CODEGEN_LLVM_INT_H
#define HGC_CODEGEN_LLVM_INT_H

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Orc.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen.h"

/* Local tensors up to this many bytes (constant size) live on the stack. */
#define HGC_LLVM_STACK_MAX 65536

/* A TIR variable in the function being emitted. */
struct hgc_llvm_var {
	LLVMValueRef v;		/* its stack slot, or its value when !slot; NULL: undefined */
	bool slot;		/* v is an alloca holding the value */
};

/* The state of one translation from Tensor IR to LLVM IR. */
struct hgc_llvm_gen {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;		/* the builder at the current insertion point */
	LLVMBuilderRef ab;		/* a builder for allocas in the entry block */
	const struct hgc_tir_module *m;
	const char *prefix;		/* of exported symbols */
	struct hgc_diag *d;
	int nerr;
	struct {
		LLVMTypeRef v, i1, i8, i16, i32, i64, f32, i8p;
	} t;				/* cached types */
	LLVMValueRef *funcs;		/* per TIR function id */
	LLVMValueRef *tensors;		/* per tensor id: base pointer (element type) here */
	struct hgc_llvm_var *vars;	/* per variable id */
	bool *written;			/* per tensor id: stored to or address taken */
	LLVMValueRef *heap;		/* per tensor id: the pointer global of a heap
					   constant (llvm_module.c), else NULL */
	LLVMValueRef omp_num_threads;	/* declared runtime functions, lazily */
	/* the function being emitted */
	const struct hgc_tir_func *f;
	LLVMValueRef fn;
	LLVMBasicBlockRef entry;	/* holds the allocas, then branches to the code */
	struct hgc_vec scratch;		/* LLVMValueRef: heap locals open here, innermost last */
	int pfor_depth;			/* > 0 in an outlined parallel-for body */
	int npfor;			/* bodies outlined so far, for names */
	/* llvm_alias.c: per tensor id, its access's alias.scope and noalias lists */
	LLVMValueRef *alias_scope, *alias_others;
	unsigned md_alias_scope, md_noalias;
};

/* A loop the backend makes itself: i in [0, n) by one, as a phi. */
struct hgc_llvm_loop {
	LLVMValueRef i;			/* the induction variable, i64 */
	LLVMBasicBlockRef head, exit;
};

/* llvm_alias.c: scoped-noalias metadata, every tensor its own object but the
   parameters (which may overlap one another). */
void hgc_llvm_alias_init(struct hgc_llvm_gen *g);
void hgc_llvm_alias_release(struct hgc_llvm_gen *g);
/* Tag a load or store of an element of t. */
void hgc_llvm_alias_tag(struct hgc_llvm_gen *g, LLVMValueRef access,
			const struct hgc_tir_tensor *t);

/* llvm_module.c: heap constants (large zero-initialized ones, filled by init). */
/* The base of heap constant t in this function, loaded in its entry block. */
LLVMValueRef hgc_llvm_heap_base(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t);
/* At the top of init: map the heap constants not mapped yet and bind their bases. */
void hgc_llvm_heap_alloc(struct hgc_llvm_gen *g);

/* llvm_session.c */
/* The host target (cpu, features, triple, layout) once per process; -1 with the diag set. */
int hgc_llvm_target(struct hgc_diag *d);
/* The target machine for passes and object files (PIC, aggressive), after hgc_llvm_target. */
LLVMTargetMachineRef hgc_llvm_tm(void);
const char *hgc_llvm_triple(void);
const char *hgc_llvm_layout(void);
const char *hgc_llvm_cpu(void);
const char *hgc_llvm_features(void);
bool hgc_llvm_has_feature(const char *name);
/* Turn an LLVMErrorRef into an error "llvm backend: what: message"; consumes err, returns -1. */
int hgc_llvm_error(struct hgc_diag *d, LLVMErrorRef err, const char *what);
/* A unique prefix for the symbols of a module added to the JIT (malloc'ed). */
char *hgc_llvm_jit_prefix(void);
/* Add a module to the process JIT under its own resource tracker (ownership of mod and
   ctx passes to the JIT, even on failure); NULL with the diag set. */
LLVMOrcResourceTrackerRef hgc_llvm_jit_add(LLVMModuleRef mod, LLVMOrcThreadSafeContextRef tsc,
					   struct hgc_diag *d);
/* Add an object file to the process JIT under its own resource tracker (the JIT takes
   obj, even on failure); NULL with the diag set. */
LLVMOrcResourceTrackerRef hgc_llvm_jit_add_object(LLVMMemoryBufferRef obj, struct hgc_diag *d);
/* The address of a symbol of the JIT (compiles its module on first use); NULL with the diag set. */
void *hgc_llvm_jit_lookup(const char *name, struct hgc_diag *d);
/* Remove a module's code and release its tracker. */
void hgc_llvm_jit_remove(LLVMOrcResourceTrackerRef rt);
/* The compiled module behind rt (NULL: adding it failed): PREFIXentry, and
   PREFIXinit and PREFIXfini when has_init; NULL with d set, rt removed, when
   one is missing.  Its release calls fini, then removes rt. */
struct hgc_compiled *hgc_llvm_jit_compiled(LLVMOrcResourceTrackerRef rt, const char *prefix,
					   int nargs, bool has_init, struct hgc_diag *d);

/* llvm_type.c */
void hgc_llvm_types_init(struct hgc_llvm_gen *g);
/* The register type of values of t (bool i1, bf16 i16, vectors for lanes > 1). */
LLVMTypeRef hgc_llvm_type(struct hgc_llvm_gen *g, struct hgc_tir_type t);
/* The type tensor elements of type elem are stored as (bool as i8). */
LLVMTypeRef hgc_llvm_mem_type(struct hgc_llvm_gen *g, struct hgc_tir_type elem);
/* Bytes per stored element of type elem. */
int hgc_llvm_elem_size(struct hgc_tir_type elem);
/* Whether integers of kind k are signed (s8, s32, index). */
bool hgc_llvm_signed(enum hgc_tir_kind k);
/* An integer constant of t (splat for vectors). */
LLVMValueRef hgc_llvm_const_int(struct hgc_llvm_gen *g, struct hgc_tir_type t, int64_t v);
/* v repeated in a vector of n lanes (n 1: v). */
LLVMValueRef hgc_llvm_splat(struct hgc_llvm_gen *g, LLVMValueRef v, int n);
/* A value of t as stored in memory, and back. */
LLVMValueRef hgc_llvm_to_mem(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type t);
LLVMValueRef hgc_llvm_from_mem(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type t);
/* bf16 bits (i16, or vectors) from f32 rounded to nearest even (NaN stays NaN), and back. */
LLVMValueRef hgc_llvm_f32_to_bf16(struct hgc_llvm_gen *g, LLVMValueRef v);
LLVMValueRef hgc_llvm_bf16_to_f32(struct hgc_llvm_gen *g, LLVMValueRef v);
/* (u8) or (s8) of round(x) in one step where the target allows, else NULL (llvm_type.c). */
LLVMValueRef hgc_llvm_round_to_byte(struct hgc_llvm_gen *g, LLVMValueRef x, struct hgc_tir_type to);
/* v of type from converted to type to, as the C backend's casts do. */
LLVMValueRef hgc_llvm_cast(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type from,
			   struct hgc_tir_type to);

/* llvm_expr.c */
/* Record "llvm backend: in 'func': message"; returns -1. */
int hgc_llvm_err(struct hgc_llvm_gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
LLVMValueRef hgc_llvm_expr(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e);
/* Dim i of t as an i64 value here. */
LLVMValueRef hgc_llvm_dim(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t, int i);
/* &t[idx...]: the row-major flattened element address (in bounds). */
LLVMValueRef hgc_llvm_elem_addr(struct hgc_llvm_gen *g, const struct hgc_tir_tensor *t,
				struct hgc_tir_expr *const *idx, int n);
/* The value of a variable here (NULL after an error). */
LLVMValueRef hgc_llvm_var_get(struct hgc_llvm_gen *g, const struct hgc_tir_var *v);
/* Whether e can be evaluated eagerly: no loads, calls or integer division. */
bool hgc_llvm_speculable(const struct hgc_tir_expr *e);

/* llvm_intrin.c */
LLVMValueRef hgc_llvm_intrin(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e);
/* Call the LLVM intrinsic name overloaded on types ov[0..nov). */
LLVMValueRef hgc_llvm_call_intrinsic(struct hgc_llvm_gen *g, const char *name, LLVMTypeRef *ov,
				     int nov, LLVMValueRef *args, int n);

/* llvm_vfabi.c */
/* The IR of a unary f32 function on x (a float or a vector of them), built at g->b. */
typedef LLVMValueRef (*hgc_llvm_unary_body)(struct hgc_llvm_gen *g, LLVMValueRef x);
/* body(x) for an f32 x as a call to hgc.vf.NAME, whose 4-, 8- and 16-lane variants
   (body on vectors) LLVM's vectorizers call where they widen the loop. */
LLVMValueRef hgc_llvm_vfabi_call(struct hgc_llvm_gen *g, const char *name, LLVMValueRef x,
				 hgc_llvm_unary_body body);
/* After the pass pipeline: inline every hgc.vf function and drop those left unused;
   -1 with d set. */
int hgc_llvm_vfabi_inline(LLVMModuleRef mod, LLVMPassBuilderOptionsRef opts, struct hgc_diag *d);

/* llvm_stmt.c */
void hgc_llvm_stmt(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s);
/* A new basic block at the end of the current function. */
LLVMBasicBlockRef hgc_llvm_new_block(struct hgc_llvm_gen *g, const char *name);
/* Whether the current block already ends (after a return). */
bool hgc_llvm_terminated(struct hgc_llvm_gen *g);
/* A stack slot of type ty in the entry block, aligned to align (0: natural). */
LLVMValueRef hgc_llvm_alloca(struct hgc_llvm_gen *g, LLVMTypeRef ty, unsigned align,
			     const char *name);
/* Open a loop over i in [0, n) (n an i64); the builder is left in its body. */
void hgc_llvm_loop_open(struct hgc_llvm_gen *g, struct hgc_llvm_loop *l, LLVMValueRef n);
/* Close it: step i and continue after the loop. */
void hgc_llvm_loop_close(struct hgc_llvm_gen *g, struct hgc_llvm_loop *l);
/* Free the heap locals opened since mark, innermost first. */
void hgc_llvm_free_scratch(struct hgc_llvm_gen *g, size_t mark);

/* llvm_func.c */
/* Declare every module function, and the exported wrappers' names. */
void hgc_llvm_declare_funcs(struct hgc_llvm_gen *g);
/* Emit the body of TIR function f. */
void hgc_llvm_func(struct hgc_llvm_gen *g, const struct hgc_tir_func *f);
/* Emit PREFIXentry(void **args) / PREFIXinit(void **args) around f. */
void hgc_llvm_wrapper(struct hgc_llvm_gen *g, const struct hgc_tir_func *f, const char *role);
/* Start emitting into fn: an entry block for allocas and a first code block. */
void hgc_llvm_begin_function(struct hgc_llvm_gen *g, LLVMValueRef fn);
/* Finish fn: branch from the alloca block to the code. */
void hgc_llvm_end_function(struct hgc_llvm_gen *g);
/* Host cpu and features attributes, nounwind. */
void hgc_llvm_func_attrs(struct hgc_llvm_gen *g, LLVMValueRef fn);
/* Call (declaring it on first use) the external C function name: ret(params). */
LLVMValueRef hgc_llvm_call_extern(struct hgc_llvm_gen *g, const char *name, LLVMTypeRef ret,
				  LLVMTypeRef *params, LLVMValueRef *args, int n);

/* llvm_pfor.c */
/* A parallel for: the body outlined and run by hgc_rt_parallel_for. */
void hgc_llvm_pfor(struct hgc_llvm_gen *g, const struct hgc_tir_stmt *s);

/* llvm_module.c */
/* A TIR module translated to LLVM IR: its own context, or a JIT-ready one. */
struct hgc_llvm_module {
	LLVMOrcThreadSafeContextRef tsc;	/* owns ctx */
	LLVMContextRef ctx;
	LLVMModuleRef mod;			/* owned until given to the JIT */
	char *prefix;
};
/* Verify m, translate it with exported names PREFIXentry ..., verify the LLVM IR and
   optimize it as opts say (NULL: defaults); NULL with the diag set. */
struct hgc_llvm_module *hgc_llvm_module_build(const struct hgc_tir_module *m, const char *prefix,
					      const struct hgc_codegen_llvm_opts *opts,
					      struct hgc_diag *d);
void hgc_llvm_module_free(struct hgc_llvm_module *lm);

/* llvm_emit.c */
/* The optimized module as text. */
void hgc_llvm_module_print(FILE *out, const struct hgc_llvm_module *lm);

#endif
