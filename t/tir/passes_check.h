/*
 * passes_check.h: running the Tensor IR passes on a module built by hand,
 * and comparing its results with the module as built, shared by
 * t/053-tir-passes.c, t/148-copy-loops.c and t/149-loop-fuse.c.
 */
#ifndef HGC_T_TIR_PASSES_CHECK_H
#define HGC_T_TIR_PASSES_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "core/tir/passes/tir_passes.h"
#include "t/llvm_check.h"

/* Run the passes on m with every switch on but those named in off (a comma list,
   or NULL), planning for threads; the plan into *plan when asked (the caller
   releases it), else released.  Failures are printed as TAP diagnostics. */
static inline int tir_passes_off(struct hgc_tir_module *m, const char *off,
				 struct hgc_tir_plan *plan, int threads)
{
	struct hgc_tir_passes p;
	struct hgc_diag d;
	int rc;

	hgc_tir_passes_init(&p);
	p.threads = threads;
	for (int k = 0; k < HGC_TIR_PASS_COUNT; k++)
		if (off && strstr(off, hgc_tir_pass_name((enum hgc_tir_pass)k)))
			p.on[k] = false;
	hgc_diag_init(&d);
	rc = hgc_tir_passes_run(m, &p, &d);
	if (rc < 0)
		diag("%s", hgc_diag_text(&d));
	if (plan)
		*plan = p.plan;
	else
		hgc_tir_passes_release(&p);
	hgc_diag_release(&d);
	return rc;
}

/* Run a and b (a copy after the passes) through the JIT on the same inputs, one
   buffer of sizes[i] bytes per argument, random floats; the same outputs.  Frees both. */
static inline void tir_same_results(struct hgc_tir_module *a, struct hgc_tir_module *b,
				    int nargs, const size_t *sizes, const char *what)
{
	void *x[MAXARGS], *y[MAXARGS];
	struct hgc_compiled *ca = jit(a, what), *cb = jit(b, what);
	unsigned seed = 7;
	bool same = true;

	for (int i = 0; i < nargs; i++) {
		x[i] = calloc(1, sizes[i]);
		for (size_t k = 0; k < sizes[i] / 4; k++)
			((float *)x[i])[k] = rnd(&seed);
		y[i] = memcpy(malloc(sizes[i]), x[i], sizes[i]);
	}
	if (ca && cb) {
		hgc_codegen_run(ca, x);
		hgc_codegen_run(cb, y);
		for (int i = 0; i < nargs; i++)
			same &= !memcmp(x[i], y[i], sizes[i]);
	}
	ok(ca && cb && same, "%s: the same results before and after the passes", what);
	for (int i = 0; i < nargs; i++) {
		free(x[i]);
		free(y[i]);
	}
	hgc_codegen_free(ca);
	hgc_codegen_free(cb);
	hgc_tir_module_free(a);
	hgc_tir_module_free(b);
}

#endif
