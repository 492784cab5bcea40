/* inplace.c: stub */
#include "passes_int.h"

int hgc_tp_inplace_pick(struct reuse *ru, struct rtemp *r)
{
	(void)ru; (void)r;
	return -1;
}
