/*
 * passes_check.h: running the Tensor IR passes on a module built by hand,
 * shared by t/053-tir-passes.c and t/148-copy-loops.c.
 */
#ifndef HGC_T_TIR_PASSES_CHECK_H
#define HGC_T_TIR_PASSES_CHECK_H

#include <string.h>

#include "core/tir/passes/tir_passes.h"
#include "t/tap.h"

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

#endif
