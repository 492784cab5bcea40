/*
 * conv.c: the estimate of the direct convolution family (conv_direct in
 * templates/conv.tmpl): N x OCBLK x OH rows of output in parallel, each row
 * OWBLK brgemm calls of OWB pixels by OCB channels summing ICBLK x KH x KW
 * blocks of ICB input channels.  The weights of one OCB block stay in L2
 * across the rows that use them; the packed input is read KH times.
 */
#include "heuristics.h"

#define V(n) hgc_heur_val(cx, e, HGC_HEUR_N_##n, 0)
#define HAS(n) (cx->slot[HGC_HEUR_N_##n] >= 0)

/* a / b rounded up (b > 0). */
static int64_t cdiv(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : a;
}

/* conv_direct's estimate. */
static void direct(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		   struct hgc_heur_est *o)
{
	int64_t N = V(N), IC = V(IC), OC = V(OC), KH = V(KH), KW = V(KW), OH = V(OH), OW = V(OW);
	int64_t ICB = V(ICB), OCB = V(OCB), OWB = V(OWB), icblk = V(ICBLK), ocblk = V(OCBLK);
	int64_t owblk = V(OWBLK), T = V(threads) > 0 ? V(threads) : 1;
	int64_t rows = N * ocblk * OH, per = cdiv(rows, T), bs = icblk * KH * KW;
	int64_t wblock = OCB * icblk * ICB * KH * KW * cx->esize[1];
	double useful = 2.0 * (double)(N * OC * OH * OW) * (double)(IC * KH * KW);
	double thread = 2.0 * (double)(per * owblk * OWB * OCB) * (double)(bs * ICB);
	double call = hgc_heur_call_ns(cx, OWB, OCB, bs * ICB, bs);

	o->working_set = wblock + KH * icblk * ICB * (OW + KW) * cx->esize[0] * 2;
	/* rows of one OCB block are consecutive: its weights are read once per
	   block when they stay in L2, once per row when they do not */
	o->mem_ns = hgc_heur_spill_ns(cx, o->working_set, wblock, per);
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	hgc_heur_finish(cx, o, useful, thread, T, (double)(per * owblk) * call, 2);
}

/* The direct convolution family, by its parameter names. */
bool hgc_heur_conv(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		   struct hgc_heur_est *out)
{
	if (cx->b->t->op != HGC_OP_CONVOLUTION || !HAS(ICB) || !HAS(OCB) || !HAS(OWB) ||
	    !HAS(ICBLK) || !HAS(OCBLK) || !HAS(OWBLK))
		return false;
	direct(cx, e, out);
	return true;
}
