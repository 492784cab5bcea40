/*
 * llvm_object.c: object code in memory, for the compiled-graph cache
 * (core/driver/cache.c).  A module is compiled once into a host object in
 * memory (the same code `hgc compile --emit=obj` writes), which the cache
 * stores on disk and loads into the process JIT; a later process loads the
 * stored object directly, skipping translation, O3 and code generation.
 * The cache checks the bytes it stores (length, hash) before they get here:
 * LLVM is not asked to survive a corrupt object.
 */
#include "llvm_int.h"

#include <stdlib.h>
#include <string.h>

/* The host target description ("triple, cpu NAME, features ..."), setting it up on
   first use; NULL with the diag set. */
const char *hgc_codegen_llvm_host(struct hgc_diag *d)
{
	if (hgc_llvm_target(d) < 0)
		return NULL;
	return hgc_codegen_llvm_target();
}

/* Compile m into a host object file in memory (malloc'ed bytes). */
int hgc_codegen_llvm_object(const struct hgc_tir_module *m,
			    const struct hgc_codegen_llvm_opts *opts, void **obj, size_t *size,
			    struct hgc_diag *d)
{
	const char *prefix = opts && opts->prefix ? opts->prefix : "hgc_";
	struct hgc_llvm_module *lm = hgc_llvm_module_build(m, prefix, opts, d);
	LLVMMemoryBufferRef buf = NULL;
	char *msg = NULL;
	int rc = 0;

	*obj = NULL;
	*size = 0;
	if (!lm)
		return -1;
	if (LLVMTargetMachineEmitToMemoryBuffer(hgc_llvm_tm(), lm->mod, LLVMObjectFile, &msg, &buf)) {
		rc = hgc_error(d, NULL, "llvm backend: cannot make an object file: %s",
			       msg ? msg : "(no message)");
	} else {
		*size = LLVMGetBufferSize(buf);
		*obj = hgc_xmalloc(*size ? *size : 1);
		memcpy(*obj, LLVMGetBufferStart(buf), *size);
		LLVMDisposeMemoryBuffer(buf);
	}
	LLVMDisposeMessage(msg);
	hgc_llvm_module_free(lm);
	return rc;
}

/* Load an object exporting PREFIXentry (and PREFIXinit, PREFIXfini) into the process JIT. */
struct hgc_compiled *hgc_codegen_llvm_load_object(const void *obj, size_t size,
						  const char *prefix, int nargs, bool has_init,
						  struct hgc_diag *d)
{
	LLVMMemoryBufferRef buf;
	LLVMOrcResourceTrackerRef rt;

	if (hgc_llvm_target(d) < 0)
		return NULL;
	buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj, size, "hgc-object");
	rt = hgc_llvm_jit_add_object(buf, d);	/* takes buf */
	return hgc_llvm_jit_compiled(rt, prefix, nargs, has_init, d);
}
