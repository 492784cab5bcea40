/*
 * codegen.h: backends from the Tensor IR to running code.  Every backend
 * yields a struct hgc_compiled with the same calling convention (see
 * docs/tir.md): entry(args), where args[i] points to the i-th parameter of
 * the module's entry function (a dense buffer for a tensor, the value for a
 * scalar), inputs first, then outputs.
 *
 * The C backend prints the module as C (c_emit.c), compiles it with the
 * system compiler into a shared object and loads it with dlopen
 * (c_backend.c).
 */
#ifndef HGC_CODEGEN_H
#define HGC_CODEGEN_H

#include <stdbool.h>
#include <stdio.h>

#include "../tir/tir.h"
#include "../util/util.h"

/* A compiled module's entry points all take the argument array. */
typedef void (*hgc_compiled_fn)(void **args);

/* A compiled module, whatever backend made it. */
struct hgc_compiled {
	hgc_compiled_fn entry;	/* runs the module's entry function */
	hgc_compiled_fn init;	/* fills constant buffers once, or NULL */
	bool inited;		/* init has run */
	int nargs;		/* parameters of the entry function */
	const char *dir;	/* C backend with keep: where the source was left */
	void (*release)(struct hgc_compiled *c);	/* the backend's cleanup */
	void *impl;		/* the backend's own state */
};

/* Run a compiled module: init on the first run, then the entry. */
static inline void hgc_codegen_run(struct hgc_compiled *c, void **args)
{
	if (c->init && !c->inited) {
		c->init(args);
		c->inited = true;
	}
	c->entry(args);
}

/* Release a compiled module (NULL is fine). */
static inline void hgc_codegen_free(struct hgc_compiled *c)
{
	if (c)
		c->release(c);
}

/*
 * The runtime functions generated C may call: X(name, C parameter list).
 * The emitted code holds a function pointer for each, bound at load time,
 * so it needs no symbols exported from the host program.
 */
#define HGC_CODEGEN_C_RUNTIME(X)                                                               \
	X(hgc_brgemm_f32, "(const float *const *, const float *const *, float *, int64_t, "     \
			  "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int)")         \
	X(hgc_brgemm_f32_post, "(const float *const *, const float *const *, float *, int64_t, " \
			       "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, "     \
			       "const float *, int)")                                           \
	X(hgc_brgemm_f32_strd, "(const float *, const float *, float *, int64_t, int64_t, "     \
			       "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, " \
			       "int)")                                                          \
	X(hgc_brgemm_u8s8s32, "(const uint8_t *const *, const int8_t *const *, int32_t *, "    \
			      "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, " \
			      "int)")                                                           \
	X(hgc_brgemm_u8s8s32_strd, "(const uint8_t *, const int8_t *, int32_t *, int64_t, "    \
				   "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, "     \
				   "int64_t, int64_t, int)")                                    \
	X(hgc_brgemm_u8s8_q, "(const uint8_t *const *, const int8_t *const *, int32_t *, "     \
			     "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, "  \
			     "int, void *, int64_t, int64_t, const float *, const float *, "    \
			     "const float *, const float *)")                                   \
	X(hgc_brgemm_bf16, "(const uint16_t *const *, const uint16_t *const *, float *, "      \
			   "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int)") \
	X(hgc_brgemm_bf16_strd, "(const uint16_t *, const uint16_t *, float *, int64_t, "      \
				"int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, " \
				"int64_t, int)")

/* Options of the C backend. */
struct hgc_codegen_c_opts {
	const char *cc;		/* compiler command; NULL: $CC, else "cc" */
	const char *cflags;	/* extra flags after the defaults, or NULL */
	bool keep;		/* keep the temporary directory (module.c ...) */
};

/* c_emit.c */
/* Print the module as a C translation unit; -1 with the diag set on IR it cannot emit. */
int hgc_codegen_c_emit(FILE *out, const struct hgc_tir_module *m, struct hgc_diag *d);

/* c_backend.c */
/* Verify, emit, compile with cc -O2 -fPIC -shared -fopenmp, dlopen; NULL with the diag set. */
struct hgc_compiled *hgc_codegen_c_compile(const struct hgc_tir_module *m,
					   const struct hgc_codegen_c_opts *opts,
					   struct hgc_diag *d);

/* llvm*.c: the LLVM backend (docs/codegen.md).  TIR -> LLVM IR -> O3 on the host
   target machine -> the process's ORC LLJIT, or an object file and its header. */
/* Options of the LLVM backend (a NULL or zeroed struct: the defaults). */
struct hgc_codegen_llvm_opts {
	const char *passes;	/* LLVM pass pipeline; NULL: "default<O3>" */
	const char *prefix;	/* exported names PREFIXentry ... of objects; NULL: "hgc_" */
	bool unroll;		/* let the pipeline unroll loops: much slower compiles of
				   loop nests, no speed-up measured (docs/codegen.md) */
};

/* llvm_module.c */
/* Verify, translate, optimize and JIT-compile; NULL with the diag set. */
struct hgc_compiled *hgc_codegen_llvm_compile(const struct hgc_tir_module *m,
					      const struct hgc_codegen_llvm_opts *opts,
					      struct hgc_diag *d);
/* Print the optimized LLVM IR of m (`hgc compile --dump=llvm`); -1 with the diag set. */
int hgc_codegen_llvm_dump(FILE *out, const struct hgc_tir_module *m,
			  const struct hgc_codegen_llvm_opts *opts, struct hgc_diag *d);

/* llvm_emit.c */
/* Write m as a host object (or assembly) file exporting PREFIXentry(void **args),
   PREFIXentry_fn(params...) and the same for init (`hgc compile --emit=obj`). */
int hgc_codegen_llvm_emit_file(const struct hgc_tir_module *m,
			       const struct hgc_codegen_llvm_opts *opts, const char *path,
			       bool assembly, struct hgc_diag *d);
/* Write the C header declaring what such an object file exports. */
int hgc_codegen_llvm_emit_header(const struct hgc_tir_module *m,
				 const struct hgc_codegen_llvm_opts *opts, const char *path,
				 struct hgc_diag *d);

/* llvm_object.c: object code in memory, for the compiled-graph cache (core/driver) */
/* Compile m into a host object file in memory: *obj (malloc'ed) and *size; the same
   exports as hgc_codegen_llvm_emit_file.  -1 with the diag set. */
int hgc_codegen_llvm_object(const struct hgc_tir_module *m,
			    const struct hgc_codegen_llvm_opts *opts, void **obj, size_t *size,
			    struct hgc_diag *d);
/* Load such an object (exports PREFIXentry, and PREFIXinit when has_init) into the
   process JIT; NULL with the diag set.  The bytes are copied.  Objects loaded at the
   same time must have different prefixes. */
struct hgc_compiled *hgc_codegen_llvm_load_object(const void *obj, size_t size,
						  const char *prefix, int nargs, bool has_init,
						  struct hgc_diag *d);
/* The host target ("triple, cpu NAME, features ..."), set up on first call; NULL with
   the diag set when LLVM cannot target the host. */
const char *hgc_codegen_llvm_host(struct hgc_diag *d);

/* llvm_session.c */
/* "triple, cpu NAME, features ..." of the host target once it is set up, else "". */
const char *hgc_codegen_llvm_target(void);
/* Dispose the process's JIT and target machine; does nothing while compiled modules
   are still alive (release them first). */
void hgc_codegen_llvm_shutdown(void);

#endif
