/*
 * constbuf.c: the buffers of a compiled module's large constants (weights
 * packed into a template's layout).  The LLVM backend used to emit them as
 * zero-initialized globals, and the JIT's linker clears such a section with
 * memset when it loads the code: compiling a BERT-large batched MatMul
 * (151 MB of packed weights) spent 0.5 s faulting in and clearing pages that
 * init then overwrote.  Pages mapped here come zeroed from the kernel on
 * first touch, which is init's packing loop, so compiling costs nothing per
 * byte and the padding that init does not write still reads as zero.
 */
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* bytes of zeroed, page-aligned memory; out of memory is fatal, as for scratch. */
void *hgc_rt_const_alloc(int64_t bytes)
{
	void *p = mmap(NULL, (size_t)(bytes > 0 ? bytes : 1), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "hgc: out of memory for %lld bytes of constants\n", (long long)bytes);
		abort();
	}
	return p;
}

/* Give back what hgc_rt_const_alloc(bytes) returned; NULL is fine. */
void hgc_rt_const_free(void *p, int64_t bytes)
{
	if (p)
		munmap(p, (size_t)(bytes > 0 ? bytes : 1));
}
