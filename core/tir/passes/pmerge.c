/* pmerge.c: stub */
#include "passes_int.h"

int hgc_tir_pass_parallel_merge(struct hgc_tir_module *m, struct hgc_tir_passes *p, struct hgc_diag *d)
{
	(void)m; (void)p; (void)d;
	return 0;
}
