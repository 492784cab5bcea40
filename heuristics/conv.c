/*
 * conv.c: the estimate of the direct convolution family (conv_direct in
 * templates/conv.tmpl): N x OCBLK x OH rows of output in parallel, each row
 * OWBLK brgemm calls of OWB pixels by OCB channels summing ICBLK x KH x KW
 * blocks of ICB input channels.  The weights of one OCB block stay in L2
 * across the rows that use them; the packed input is read KH times.
 */
#include "heuristics.h"

#include <math.h>
#include <string.h>

#define V(n) hgc_heur_val(cx, e, HGC_HEUR_N_##n, 0)
#define HAS(n) (cx->slot[HGC_HEUR_N_##n] >= 0)

/* a / b rounded up (b > 0). */
static int64_t cdiv(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : a;
}

/* The L2 cache of a core of this machine (Zen 3, 512 KiB); the machine
   model's figure (model.c) is Zen 4's 1 MiB. */
static int64_t l2_bytes(const struct hgc_heur_ctx *cx)
{
	return cx->mc->l2 < (512 << 10) ? cx->mc->l2 : 512 << 10;
}

/*
 * ns one call spends streaming its weights: the kernel runs its row tiles
 * (6 rows) outer, each reading the call's whole B (k x OCB).  Fitted to the
 * ResNet-50 3x3 convolutions on this machine (Zen 3, batch 1, one thread):
 * B beyond half the L1 comes from L2 at about 11 bytes a cycle (4-row calls
 * over 147 KiB of weights ran 1.35x slower than their FMAs), and B beyond a
 * third of the L2 (its reuse distance across the row tiles) at about 20
 * bytes a ns (one 295 KiB call took 1.65x two of 147 KiB).  (A sixth put
 * the 147 KiB calls in the slow class: res2a_branch2b at batch 4 then took
 * OCB = 16 and read its input four times, about 1.2x slower than OCB = 64
 * with ICB = 64, whose calls are 147 KiB.)  Scaled by mc->l1_slowdown like
 * the model's L1 term: none on a core whose calls stream B from L2 at no
 * visible cost (the Xeon, l1_slowdown 0: with
 * this term res2a_branch2b took OCB = 32, 6.75 ms, against 5.59 ms for
 * OCB = 64 and ICB = 64, 2026-12-02).
 */
static double stream_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t bbytes)
{
	const struct hgc_heur_machine *mc = cx->mc;
	double bw = 11.0 * mc->ghz;

	if (bbytes <= mc->l1 / 2)
		return 0;
	if (bbytes > l2_bytes(cx) / 3)
		bw = 20.0;
	return mc->l1_slowdown * (double)(cdiv(rows, 6) * bbytes) / bw;
}

/*
 * Bytes of weights a thread of conv_direct reads from beyond L2 for its
 * rows: the rows of one OCB block are consecutive (oh innermost), so its
 * weights come once per block, and the part of them that does not fit
 * three quarters of L2 beside the input rows (ws in all) again for every
 * further row of the block.  (Counting all of them again per row made a
 * 295 KiB block with 113 KiB of input rows cost more than its FMAs.)
 */
static double direct_bytes(const struct hgc_heur_ctx *cx, int64_t ws, int64_t wblock,
			   int64_t rows, int64_t oh)
{
	int64_t over = ws - l2_bytes(cx) * 3 / 4, blocks = cdiv(rows, oh);

	if (over < 0)
		over = 0;
	return (double)(blocks * wblock) + (double)(rows - blocks) * (double)(over < wblock ? over : wblock);
}

/*
 * Bytes of packed input a thread of conv_direct reads from beyond L2: each
 * block of rows (one image and OCB block, OH rows) reads its image once;
 * consecutive blocks of the same image find it in L2 only when it fits
 * three quarters of L2 beside the weights of a block (res2's 58x58x64
 * image, 841 KiB, came from L3 once per OCB block).  images: the images
 * of the thread.
 */
static double input_bytes(const struct hgc_heur_ctx *cx, int64_t ximg, int64_t wblock,
			  int64_t rows, int64_t oh, int64_t images)
{
	if (ximg + wblock <= l2_bytes(cx) * 3 / 4)
		return (double)(images * ximg);
	return (double)(cdiv(rows, oh) * ximg);
}

/* One call's kernel time without the model's L1 term: bs batch elements
   of k = ICB each, rated as bs calls of one element (whose B, ICB x OCB,
   fits half the L1 for ICB, OCB <= 64) less their extra fixed costs. */
static double unblocked_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols,
			   int64_t ICB, int64_t bs)
{
	double fixed = hgc_heur_call_ns(cx, 0, 0, 0, 0);

	return fixed + (double)bs * (hgc_heur_call_ns(cx, rows, cols, ICB, 1) - fixed);
}

/* What a call of rows x OCB outputs and bs batch elements pays beside its
   FMAs, one of chunks calls over its rows. */
static double call_overhead_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t OCB,
			       int64_t bs, int64_t chunks)
{
	double ns = 0;

	/* a call after the first of its rows reloads C (BS < ICBLK) */
	if (chunks > 1)
		ns += (double)(2 * rows * OCB * cx->esize[2]) / 32.0;
	/* every row tile starts each batch element (its addresses, the k
	   loop): about 8 cycles, which short blocks of input channels pay
	   often (a channels-last 3x3 conv of 64 channels ran 1.1x faster with
	   ICB = 64 than with 16; res5's 3x3, 512 channels at 7x7: ICB = 64 or
	   32 took 0.93-0.96x the CPU time of ICB = 16, BS = 1) */
	return ns + (double)(cdiv(rows, 6) * cdiv(OCB, 16) * bs * 8) / cx->mc->ghz;
}

/* One brgemm call of a conv template: OWB pixels of a row of OW, OCB
   channels of OC, bs batch elements of ICB input channels each, one of
   chunks calls per pixel block (conv_direct and conv_1x1 alike). */
static double call_ns(const struct hgc_heur_ctx *cx, int64_t OWB, int64_t OW, int64_t OCB,
		      int64_t OC, int64_t ICB, int64_t bs, int64_t chunks)
{
	double call = hgc_heur_call_ns(cx, OWB, OCB, bs * ICB, bs);

	/* fewer rows than the 6-row tile where the row has more: every pass over
	   B feeds few FMAs (measured 1.35x to 2.8x slower with 4 rows than 28) */
	if (OWB < 6 && OWB < OW)
		call *= 6.0 / (double)OWB;
	/* 8 channels run the 8x1 tile, one FMA per load: kept for small OC */
	if (OCB < 16 && OC >= 16)
		call *= 1.25;
	return call + call_overhead_ns(cx, OWB, OCB, bs, chunks);
}

/* conv_direct's estimate.  A call sums BS input-channel blocks over the
   kernel window; its weights (k x OCB) are read by every row tile of the
   call, so a call whose weights exceed half the L1 runs slower (the model's
   L1 term), which BS < ICBLK avoids at the price of more calls.
   conv_direct_nb (NB, the batch in the rows of a call): a call is OWB
   pixels of all NB images, its weights read once for them. */
static void direct(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		   struct hgc_heur_est *o)
{
	int64_t N = V(N), IC = V(IC), OC = V(OC), KH = V(KH), KW = V(KW), OH = V(OH), OW = V(OW);
	int64_t ICB = V(ICB), OCB = V(OCB), icblk = V(ICBLK), ocblk = V(OCBLK);
	int64_t nb = HAS(NB) && V(NB) > 0 ? V(NB) : 1, OWB = V(OWB) * nb;
	int64_t owblk = V(OWBLK), T = V(threads) > 0 ? V(threads) : 1;
	int64_t BS = HAS(BS) && V(BS) > 0 ? V(BS) : icblk, chunks = cdiv(icblk, BS);
	int64_t rows = cdiv(N, nb) * ocblk * OH, per = cdiv(rows, T), bs = BS * KH * KW;
	int64_t wblock = OCB * icblk * ICB * KH * KW * cx->esize[1];
	int64_t ximg = (V(IH) + KH - 1) * (V(IW) + KW - 1) * icblk * ICB * nb * cx->esize[0];
	double useful = 2.0 * (double)(N * OC * OH * OW) * (double)(IC * KH * KW);
	double thread = 2.0 * (double)(per * owblk * OWB * OCB) * (double)(icblk * KH * KW * ICB);
	double call = call_ns(cx, OWB, OW * nb, OCB, OC, ICB, bs, chunks);
	double stream = stream_ns(cx, OWB, bs * ICB * OCB * cx->esize[1]);
	/* the input rows a row of output reads (KH rows of every image) */
	int64_t xrows = KH * (OW + KW) * nb * icblk * ICB * cx->esize[0];

	o->working_set = wblock + KH * icblk * ICB * (OW + KW) * nb * cx->esize[0] * 2;
	/* calls of 6 rows or more: B's passes are stream_ns's (from L2), not
	   the model's L1 term (28x64x576 calls over 147 KiB of B ran at 0.98
	   of peak with B in L2; res2a_branch2b at batch 4 ran about 1.2x
	   faster with OCB = ICB = 64 than with 16, which that term rated 1.6x
	   slower).  conv_direct_nb only when a block of weights and the input
	   rows of a row fit three quarters of L2, so that B does come from L2:
	   res4a_branch2b at batch 4 (147 + 208 KiB) ran 1.03-1.13x faster
	   with ICB = 32 (18 KiB calls) than with 16, which that term rated
	   slower; res5's 3x3 (295 + 240 KiB) ran 1.03x slower with ICB = 32
	   and slower still with OCB = ICB = 64 (1.2 MiB blocks of weights) */
	if (OWB >= 6 && (nb == 1 || wblock + xrows <= l2_bytes(cx) * 3 / 4))
		call = fmin(call, unblocked_ns(cx, OWB, OCB, ICB, bs) +
				  (call - hgc_heur_call_ns(cx, OWB, OCB, bs * ICB, bs)));
	o->mem_ns = (direct_bytes(cx, o->working_set, wblock, per, OH) +
		     input_bytes(cx, ximg, wblock, per, OH, cdiv(cdiv(N, nb), T))) / 16.0;
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	hgc_heur_finish(cx, o, useful, thread, T, (double)(per * owblk * chunks) * fmax(call, stream), 2);
}

/*
 * Bytes conv_1x1 reads from beyond L2 on one thread.  A group's input rows
 * (OHB output rows of OW pixels, IC channels each) are read once, and the
 * part of them that does not fit three quarters of L2 beside one block of
 * weights again by each further block (by each further block of the image
 * when one group holds all its rows): the blocks of a group pass one at a
 * time, so the rows compete with one block, not with the group (counting
 * the group made res4b_branch2a take 28-row calls over 4 blocks, measured
 * 1.1x slower than 98-row calls over 16).  A group of weights is read once
 * per image, and the part that does not fit beside the rows again by each
 * further row group.  (Written for any window, so that a template reading
 * a channels-last input in place with a kernel window can share it.)
 */
static double nxc_bytes(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e, int64_t T)
{
	int64_t N = V(N), IC = V(IC), OW = V(OW), KH = V(KH), KW = V(KW), OCB = V(OCB);
	int64_t OHB = V(OHB), OCGB = V(OCGB), sh = V(stride_h), sw = V(stride_w);
	int64_t ohblk = V(OHBLK), ocgn = V(OCGN), fit = l2_bytes(cx) * 3 / 4;
	int64_t rows = (OHB - 1) * sh + KH < OHB * KH ? (OHB - 1) * sh + KH : OHB * KH;
	int64_t pix = (OW - 1) * sw + KW < OW * KW ? (OW - 1) * sw + KW : OW * KW;
	double xg = (double)(rows * pix * IC * cx->esize[0]);
	double wg = (double)(OCGB * OCB * IC * KH * KW * cx->esize[1]);
	double over = fmax(0, xg + wg - (double)fit), x, w;
	double over_x = fmax(0, xg + wg / (double)OCGB - (double)fit);

	/* one row group per image: consecutive channel groups share its rows */
	if (ohblk == 1)
		x = (double)N * (xg + (double)(ocgn * OCGB - 1) * fmin(xg, over_x));
	else
		x = (double)(N * ocgn * ohblk) * (xg + (double)(OCGB - 1) * fmin(xg, over_x));
	w = (double)(N * ocgn) * (wg + (double)(ohblk - 1) * fmin(wg, over));
	return (x + w) / (double)T;
}

/*
 * ns a call of conv_1x1 spends bringing its weights (bbytes, a new block
 * each call) from L2 into L1: the first row tile waits for them, the later
 * ones find them in L1.  Fitted on this machine (Zen 3, one thread,
 * res4a_branch2c at batch 4, 16 KiB of weights a call): 28-row calls took
 * about 1.08x the time of 196-row calls, 0.26 us more a call, about 64
 * bytes a ns.  The model's kernel rate (model.c) rates calls of any length
 * from a tile's rate, with no such cost.
 */
static double b_fetch_ns(int64_t bbytes)
{
	return (double)bbytes / 64.0;
}

/* conv_1x1's estimate: the brgemm calls of conv_direct's model (X and Y
   in place: nothing packed per run) and what the order of the row and
   channel groups reads from beyond L2, at 16 B/ns (measured: reading a
   56x56x256 input 4 times instead of once cost 2.2 ms more for 38 MB). */
static void nxc(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		struct hgc_heur_est *o)
{
	int64_t N = V(N), IC = V(IC), OC = V(OC), OH = V(OH), OW = V(OW), KH = V(KH), KW = V(KW);
	int64_t ICB = V(ICB), OCB = V(OCB), OWB = V(OWB), icblk = V(ICBLK);
	int64_t T = V(threads) > 0 ? V(threads) : 1;
	int64_t BS = V(BS) > 0 ? V(BS) : icblk, chunks = cdiv(icblk, BS), bs = BS * KH * KW;
	/* per: the calls of a thread for each chunk of input channels (an item
	   is OHB rows of OCB channels, OWB pixels a call) */
	int64_t items = N * V(OCGN) * V(OHBLK) * V(OCGB), per = cdiv(items, T) * V(OHB) * OW / OWB;
	double useful = 2.0 * (double)(N * OC * OH * OW) * (double)(IC * KH * KW);
	double thread = 2.0 * (double)(per * OWB * OCB) * (double)(icblk * ICB * KH * KW);
	double call = call_ns(cx, OWB, OW, OCB, OC, ICB, bs, chunks) +
		      b_fetch_ns(bs * ICB * OCB * cx->esize[1]);
	double stream = stream_ns(cx, OWB, bs * ICB * OCB * cx->esize[1]);

	o->working_set = (V(OHB) * OW * IC + V(OCGB) * OCB * IC * KH * KW) * cx->esize[0];
	o->mem_ns = nxc_bytes(cx, e, T) / 16.0;
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	/* conv_1x1_copy copies the picked pixels of an item's rows into T once
	   per (image, row group, channel group) */
	if (!strcmp(cx->b->t->name, "conv_1x1_copy"))
		o->pack_ns += (double)cdiv(N * V(OHBLK) * V(OCGN), T) *
			      (double)(V(OHB) * OW * IC) * cx->mc->pack_ns;
	hgc_heur_finish(cx, o, useful, thread, T, (double)(per * chunks) * fmax(call, stream), 2);
}

/*
 * conv_1x1_nb's estimate.  A thread's items are (channel group, output
 * row) pairs; each copies the strided pixels of that row of every image
 * into T (OW x N x IC values, read from beyond L2: one pass over the
 * picked pixels per channel group) and runs OCGB x chunks calls of OW x N
 * rows.  A call's B (BS x ICB by OCB) is fetched into L1 once (b_fetch_ns)
 * and, beyond half the L1, streamed by every row tile from L2
 * (stream_ns), not rated by the model's L1 term: res4a_branch1 at batch 4
 * ran about 1.1x faster with OCB = 32, BS = 2 (32 KiB a call) than with
 * OCB = 64, BS = 1, which that term had rated 1.3x slower.  The weights
 * come once when all of them fit three quarters of L2; else a group's
 * weights once per run of a thread's items on that group (its rows, one
 * after another) when the group and T fit three quarters of L2, the rows
 * after the first finding them there (res5a_branch1 at batch 4 on the
 * Xeon, 2 MiB of L2: groups of 1 MiB ran 4.34-4.82 ms, groups of 2 MiB
 * 5.00-5.22; this test takes the machine's own L2, not l2_bytes' Zen 3
 * figure); else once per item, from L3 at 16 B/ns while a group fits
 * L3_SHARE.
 * (conv_direct's model counted the whole input read once per block of
 * output channels: 2x to 4x what the copies read.)
 */
/* The part of the shared L3 (32 MiB here, other tenants' too) that a
   group of weights re-read by a thread's consecutive items can count on; a
   larger group comes back from memory at about half the rate
   (res5a_branch1 at batch 4: one group of all 8 MiB of weights, read once
   per output row, ran 1.4x the time of groups of 1 MiB, whose 7 rows run
   one after another; res4a_branch1's one group of 2 MiB ran well). */
#define L3_SHARE (2 << 20)

static void nb1x1(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		  struct hgc_heur_est *o)
{
	int64_t N = V(N), IC = V(IC), OC = V(OC), OH = V(OH), OW = V(OW);
	int64_t ICB = V(ICB), OCB = V(OCB), icblk = V(ICBLK), OCGB = V(OCGB);
	int64_t T = V(threads) > 0 ? V(threads) : 1;
	int64_t BS = V(BS) > 0 ? V(BS) : icblk, chunks = cdiv(icblk, BS), rows = OW * N;
	int64_t per = cdiv(V(OCGN) * OH, T), bbytes = BS * ICB * OCB * cx->esize[1];
	int64_t tbytes = rows * IC * cx->esize[0], wall = OC * IC * cx->esize[1];
	int64_t wgroup = OCGB * OCB * IC * cx->esize[1];
	double useful = 2.0 * (double)(N * OC * OH * OW) * (double)IC;
	double thread = 2.0 * (double)(per * OCGB * rows * OCB) * (double)(icblk * ICB);
	double call = unblocked_ns(cx, rows, OCB, ICB, BS) + b_fetch_ns(bbytes) +
		      call_overhead_ns(cx, rows, OCB, BS, chunks);
	double wbytes = wall <= l2_bytes(cx) * 3 / 4 ? (double)wall
			: wgroup + tbytes <= cx->mc->l2 * 3 / 4 ? (double)(cdiv(per, OH) * wgroup)
			: (double)(per * wgroup);

	o->working_set = tbytes + bbytes;
	o->mem_ns = (double)(per * tbytes) / 16.0 + wbytes / (wgroup > L3_SHARE ? 8.0 : 16.0);
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T) + (double)per * (double)(rows * IC) *
							  cx->mc->pack_ns;
	hgc_heur_finish(cx, o, useful, thread, T,
			(double)(per * OCGB * chunks) * fmax(call, stream_ns(cx, rows, bbytes)), 2);
}

/* The direct convolution family, by its parameter names. */
bool hgc_heur_conv(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		   struct hgc_heur_est *out)
{
	if (cx->b->t->op != HGC_OP_CONVOLUTION || !HAS(ICB) || !HAS(OCB) || !HAS(OWB) ||
	    !HAS(ICBLK) || !HAS(OCBLK) || !HAS(OWBLK))
		return false;
	if (HAS(OHB) && HAS(OCGB) && HAS(OHBLK) && HAS(OCGN))
		nxc(cx, e, out);
	else if (HAS(NB) && HAS(OCGB) && HAS(OCGN))
		nb1x1(cx, e, out);
	else
		direct(cx, e, out);
	return true;
}
