/*
 * matmul.c: estimates of the MatMul template families (templates/matmul.tmpl):
 *
 *  - a thread grid MPN x NPN over blocks of MB x NB, brgemm over BS blocks
 *    of KB, the k loop outside (ORDER 0) or inside (ORDER 1) the n loop
 *    (matmul_core);
 *  - threads splitting k (KPN) and n (NPN), partial sums added up in a
 *    second parallel loop (matmul_ksplit);
 *  - a batch dim BT and the block rows in parallel (matmul_batch);
 *  - one row of A or one column of B in vectorized loops (gemv_row,
 *    gemv_col: no KB).
 *
 * A family is recognized by its parameter names, so a template written with
 * the same names is modelled too.
 */
#include "heuristics.h"

#include <string.h>

#define V(n) hgc_heur_val(cx, e, HGC_HEUR_N_##n, 0)

/* How fast the post-ops of a short int8 call read its C block back (int8_c_readback_ns). */
#define C_READBACK_BYTES_PER_NS 10.0
#define HAS(n) (cx->slot[HGC_HEUR_N_##n] >= 0)

/* a / b rounded up (b > 0). */
static int64_t cdiv(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : a;
}

/*
 * int8 threads that split N (NPN > 1) each compute a part of every row of C
 * in their block rows, where splitting M gives each its own rows.  The
 * model rated the two alike (and preferred the N split for its smaller
 * working set), but at two threads the M split ran faster on the smaller
 * int8 rows where the choice differs (wall-clock minima of 20-100 rounds,
 * the two choices alternated in one process with oneDNN, load 6-10):
 * 256^3 0.13-0.18 -> 0.11 ms, wd 512x512x256 0.48-0.72 -> 0.42-0.56 ms,
 * DLRM 128x512x256 0.11-0.15 -> 0.10-0.11 ms; the larger DLRM layers moved
 * both ways (docs/heuristics.md has the rows and runs).  The f32 rows
 * measured alike or up to 9% slower with the M split, so f32 keeps its
 * choices.  Why int8 is sensitive is not established (its s32 C is a
 * temporary that the Quantize post-ops read back; the B check and touch_b
 * read each call's B block).  Charged per row of C the busiest thread
 * shares: 100 ns, below the 130-300 ns per row measured, so that only
 * near-ties move.
 */
#define SHARED_ROW_NS 100.0

static double shared_rows_ns(const struct hgc_heur_ctx *cx, int64_t npn, int64_t rows)
{
	enum hgc_dtype a = cx->b->dtype[0];

	if (npn < 2 || (a != HGC_DT_U8 && a != HGC_DT_S8))
		return 0;
	return (double)rows * SHARED_ROW_NS;
}

/* matmul_core: the grid, the order and the working set against L2. */
static void core(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		 struct hgc_heur_est *o)
{
	int64_t M = V(M), N = V(N), K = V(K), MB = V(MB), NB = V(NB), KB = V(KB);
	int64_t bs = HAS(BS) ? V(BS) : V(KBLK), mblk = V(MBLK), nblk = V(NBLK), kblk = V(KBLK);
	int64_t msn = V(MSN), nsn = V(NSN), T = V(MPN) * V(NPN);
	int64_t m_t = msn < mblk ? msn : mblk, n_t = nsn < nblk ? nsn : nblk;
	int64_t ea = cx->esize[0], eb = cx->esize[1], ec = 4;
	int64_t wb = n_t * NB * kblk * KB * eb, wa = MB * kblk * KB * ea;
	double calls = (double)(m_t * n_t) * (double)cdiv(kblk, bs);

	o->working_set = V(ORDER) == 0 ? n_t * NB * bs * KB * eb + n_t * MB * NB * ec + wa : wb + wa;
	/* B's panel of the thread is read again for every block row */
	o->mem_ns = hgc_heur_spill_ns(cx, wb + wa, wb, m_t);
	/* ORDER 0 reloads the row of C blocks for every k step of BS blocks */
	if (V(ORDER) == 0)
		o->mem_ns += hgc_heur_spill_ns(cx, n_t * MB * NB * ec * 2, n_t * MB * NB * ec * 2,
					       cdiv(kblk, bs));
	o->mem_ns += shared_rows_ns(cx, V(NPN), m_t * MB);
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	hgc_heur_finish(cx, o, 2.0 * (double)(M * N) * (double)K, 2.0 * (double)(m_t * MB * n_t * NB) * (double)K,
	       T, calls * hgc_heur_call_ns(cx, MB, NB, bs * KB, bs), 2);
}

/* matmul_ksplit: KPN x NPN threads, a partial sum each, then the reduction. */
static void ksplit(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		   struct hgc_heur_est *o)
{
	int64_t M = V(M), N = V(N), K = V(K), MB = V(MB), NB = V(NB), KB = V(KB);
	int64_t mblk = V(MBLK), nblk = V(NBLK), kblk = V(KBLK), ksn = V(KSN), nsn = V(NSN);
	int64_t kpn = V(KPN), T = kpn * V(NPN), n_t = nsn < nblk ? nsn : nblk;
	int64_t k_t = ksn < kblk ? ksn : kblk;
	double calls = (double)(n_t * mblk);
	double red = (double)(kpn * mblk * MB * nblk * NB) * cx->mc->pack_ns / (double)T;

	o->working_set = n_t * NB * k_t * KB * cx->esize[1] + mblk * MB * k_t * KB * cx->esize[0];
	o->mem_ns = red;
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	hgc_heur_finish(cx, o, 2.0 * (double)(M * N) * (double)K,
	       2.0 * (double)(mblk * MB * n_t * NB) * (double)(k_t * KB), T,
	       calls * hgc_heur_call_ns(cx, MB, NB, k_t * KB, k_t), 3);
}

/*
 * The post-ops that scale and convert an int8 call's s32 C block (the
 * lowprec pass's Dequantize scale, a Quantize) read it back right after
 * the call.  Where the call is short (K <= 64: 16 k steps a tile), they
 * are a large share, and a block beyond half the L1 slowed them down:
 * bert_large's 12 x 384x64x384 on matmul_batch_plain (one thread, thread
 * CPU-time minima alternated in one process with oneDNN, load 5-8) took
 * 2.66 ms with MB=384 (96 KiB of C a call), 2.34 ms with MB=128 (32
 * KiB), 2.06 ms with MB=64 (16 KiB): about 0.4 ns per element beyond 16
 * KiB.  The kernel alone ran those calls alike (a nest of them on one
 * cached C block), and with K = 384 (12 x 384x384x64) blocks of 12 to 48
 * KiB measured alike too: the term is for short calls only.
 */
static double int8_c_readback_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols,
				 int64_t k)
{
	double bytes = (double)(rows * cols) * 4, half = (double)cx->mc->l1 / 2;
	enum hgc_dtype a = cx->b->dtype[0];

	if ((a != HGC_DT_U8 && a != HGC_DT_S8) || k > 64 || bytes <= half)
		return 0;
	return (bytes - half) / C_READBACK_BYTES_PER_NS;
}

/*
 * A brgemm call reading B where it is (no layout: rows N apart) in column
 * blocks narrower than N: 1.17x the call.  Measured against the same nest
 * on packed B (matmul_batch_inb against matmul_batch_plain, one thread,
 * CPU-time minimum of 30-40 runs interleaved, load 5-9): 12 x 128x64x128
 * 1.18x (1.03x with B variable, packing included), 12 x 128x128x64 1.17x
 * (1.03x), 12 x 384x64x384 1.20x (1.07x), 12 x 384x384x64 1.20x, 1536 x
 * 128x64x128 1.16x.  The block's rows, a few cache lines each at a stride
 * with a large power-of-two factor (512 or 1536 bytes), fill only some of
 * the L1 sets (half at those strides), which the A and C streams then
 * evict.
 */
#define STRIDED_B 1.17

/* Whether B is read in place in blocks of NB < N columns. */
static bool strided_b(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e)
{
	struct hgc_tmpl_layout l;
	struct hgc_tmpl_env tmp = *e;

	if (cx->b->t->ninputs < 2 || V(NB) >= V(N))
		return false;
	cx->b->t->layout(&tmp, 1, &l);
	return !l.declared;
}

/* One call of a batched template: f32 calls whose batch element's B (K x N)
   fits half the L2 through hgc_heur_batch_call_ns (B stays in L2 for all
   the element's row blocks), others as any call. */
static double batch_call_ns(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e)
{
	int64_t K = V(K), N = V(N), MB = V(MB), NB = V(NB), KB = V(KB), kblk = V(KBLK);

	if (cx->b->dtype[0] == HGC_DT_F32 &&
	    (double)(K * N) * cx->esize[1] <= (double)cx->mc->l2 / 2)
		return hgc_heur_batch_call_ns(cx, MB, NB, kblk * KB, kblk);
	return hgc_heur_call_ns(cx, MB, NB, kblk * KB, kblk);
}

/* matmul_batch: BT x MBLK rows of blocks over the threads. */
static void batch(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		  struct hgc_heur_est *o)
{
	int64_t M = V(M), N = V(N), K = V(K), MB = V(MB), NB = V(NB), KB = V(KB), BT = V(BT);
	int64_t mblk = V(MBLK), nblk = V(NBLK), kblk = V(KBLK), T = V(threads);
	int64_t rows = BT * mblk, per = cdiv(rows, T > 0 ? T : 1);
	int64_t wb = nblk * NB * kblk * KB * cx->esize[1], wa = MB * kblk * KB * cx->esize[0];
	double calls = (double)(per * nblk) * (strided_b(cx, e) ? STRIDED_B : 1);

	if (T < 1)
		T = 1;
	o->working_set = wb + wa;
	o->mem_ns = (double)(per * nblk) * int8_c_readback_ns(cx, MB, NB, kblk * KB);
	/* int8: a batch element's B, read again for each of its block rows a thread runs */
	if (cx->esize[0] == 1)
		o->mem_ns += hgc_heur_spill_ns(cx, wb + wa, wb, per < mblk ? per : mblk);
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	hgc_heur_finish(cx, o, 2.0 * (double)(BT * M * N) * (double)K,
	       2.0 * (double)(per * MB * nblk * NB) * (double)K, T,
	       calls * batch_call_ns(cx, e), 2);
}

/*
 * gemv_row (templates/gemv.tmpl): each thread's NSN blocks of NB columns;
 * every 4 k, per vector of the accumulator, 4 loads of B, its load and
 * store, 4 multiplies and 4 adds: about 2.5 cycles (two vector loads per
 * cycle), 0.625 per vector and k.
 */
static void gemv_row(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		     struct hgc_heur_est *o)
{
	int64_t M = V(M), N = V(N), K = V(K), NB = V(NB), nsn = V(NSN), T = V(NPN);
	int64_t vecs = cdiv(NB, cx->mc->vlen);
	double cyc = (double)nsn * ((double)K * (double)vecs * 0.625 + 2.0 * (double)vecs + 20);

	o->working_set = NB * 4 + K * NB * cx->esize[1];
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	hgc_heur_finish(cx, o, 2.0 * (double)(M * N) * (double)K,
			2.0 * (double)(nsn * NB) * (double)K, T, cyc / cx->mc->ghz, T > 1);
}

/*
 * gemv_col: each thread's MSN blocks of MB rows; per row and 64 k values
 * 20 vector loads (A, x and the four partial sums: about 10 cycles at two
 * a cycle), a lone group of 32 about 6, the pairwise sum of the 32 (a
 * chain of five adds, about 25 cycles), and the K % 32 tail through C in
 * memory (a load, an add and a store each, about 6 cycles).
 */
static void gemv_col(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		     struct hgc_heur_est *o)
{
	int64_t M = V(M), N = V(N), K = V(K), MB = V(MB), msn = V(MSN), T = V(MPN);
	double row = (double)(K / 64) * 10 + (double)(K / 32 % 2) * 6 + 25 + (double)(K % 32) * 6;
	double cyc = (double)(msn * MB) * (row + 4) + (double)msn * 20;

	o->working_set = MB * 32 * 4 + K * cx->esize[1];
	o->pack_ns = hgc_heur_pack_layouts(cx, e, T);
	hgc_heur_finish(cx, o, 2.0 * (double)(M * N) * (double)K,
			2.0 * (double)(msn * MB) * (double)K, T, cyc / cx->mc->ghz, T > 1);
}

/* The matrix-vector families: true when t is one (estimate in out).  One
   thread (NPN or MPN 1) is the serial forms, or one thread in all: no
   parallel region to pay for. */
static bool gemv(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		 struct hgc_heur_est *out)
{
	if (HAS(KB) || HAS(BS))
		return false;
	if (HAS(NB) && HAS(NPN) && HAS(NSN) && !HAS(MB))
		gemv_row(cx, e, out);
	else if (HAS(MB) && HAS(MPN) && HAS(MSN) && !HAS(NB))
		gemv_col(cx, e, out);
	else
		return false;
	return true;
}

/* A MatMul family, by its parameter names. */
bool hgc_heur_matmul(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		     struct hgc_heur_est *out)
{
	if (cx->b->t->op == HGC_OP_MATMUL && gemv(cx, e, out))
		return true;
	if (cx->b->t->op != HGC_OP_MATMUL || !HAS(MB) || !HAS(NB) || !HAS(KB) || !HAS(MBLK) ||
	    !HAS(NBLK) || !HAS(KBLK))
		return false;
	if (HAS(KPN) && HAS(NPN) && HAS(KSN) && HAS(NSN))
		ksplit(cx, e, out);
	else if (HAS(MPN) && HAS(NPN) && HAS(MSN) && HAS(NSN))
		core(cx, e, out);
	else if (HAS(BT))
		batch(cx, e, out);
	else
		return false;
	return true;
}
