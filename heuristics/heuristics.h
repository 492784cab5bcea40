/*
 * heuristics.h: the parameter search of the templates.  For an op bound to
 * a template (core/lower/tmpl.h) it visits every valid candidate of the
 * template's generated parameter space (pins from configs fixed), estimates
 * each one's run time with one cost model, and keeps the cheapest few.  The
 * model (model.c) combines
 *
 *  - single-core efficiency: the brgemm microkernel's register tiles for the
 *    ISA in use, full tiles against edge rows and masked column tails, the
 *    padding the blocks add, C loaded and stored once per call and per tile,
 *    the fixed cost of a call;
 *  - load balance: the busiest thread's share of the blocks decides;
 *  - memory: a thread's working set against the L2 cache (1 MiB per core),
 *    data it re-reads from L3 when it does not fit;
 *  - packing: variable inputs are packed into the blocked layouts on every
 *    run, constant ones once by the init function (free per run).
 *
 * The template families are modelled in matmul.c (matmul_core, matmul_ksplit,
 * matmul_batch and any template with the same parameter names) and conv.c
 * (conv_direct); an unknown template falls back to the least padding.
 * See docs/heuristics.md.
 */
#ifndef HGC_HEURISTICS_H
#define HGC_HEURISTICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/lower/tmpl.h"
#include "../core/util/util.h"

#define HGC_HEUR_TOP 5		/* candidates a search keeps, best first */

/*
 * Names the models read from a template's environment (a parameter, a let,
 * a shape or a built-in), resolved to slots once per search:
 * X(name).  ORDER: HGC_HEUR_N_<name>.
 */
#define HGC_HEUR_NAMES(X)                                                         \
	X(M) X(N) X(K) X(BT) X(MB) X(NB) X(KB) X(BS) X(ORDER) X(MPN) X(NPN) X(KPN) \
	X(MBLK) X(NBLK) X(KBLK) X(MSN) X(NSN) X(KSN)                              \
	X(IC) X(IH) X(IW) X(OC) X(KH) X(KW) X(OH) X(OW) X(ICB) X(OCB) X(OWB)      \
	X(ICBLK) X(OCBLK) X(OWBLK) X(PR) X(PB) X(pad_top) X(pad_left) X(stride_w) \
	X(threads) X(vlen) X(kpack) X(OHB) X(OCGB) X(OHBLK) X(OCGN) X(stride_h)

enum hgc_heur_name {
#define X(n) HGC_HEUR_N_##n,
	HGC_HEUR_NAMES(X)
#undef X
	HGC_HEUR_NNAMES
};

/* The machine the model describes (one core's figures, per thread). */
struct hgc_heur_machine {
	const char *vendor;	/* the core model: "amd" (Zen 3/4) or "intel" (heuristics/model.c) */
	int vlen;		/* f32 lanes of a vector: 8 (AVX2) or 16 (AVX-512) */
	double ghz;		/* clock */
	double fma_per_cycle;	/* vector FMA (or dot-product) instructions per cycle */
	double loads_per_cycle;	/* vector loads and broadcasts per cycle */
	double fma_latency;	/* cycles: an accumulator's chain */
	double bcast_fma;	/* FMA slots a broadcast of A takes from the tile (zmm, Intel) */
	int64_t l1, l2;		/* data cache bytes per core */
	double l1_slowdown;	/* a brgemm call's slowdown when its B block is twice the
				   L1 term's limit (0: B streams from L2 at no cost) */
	double l3_bw;		/* bytes per ns one core streams from L3 / memory */
	double call_cycles;	/* fixed cost of a brgemm call */
	double pack_ns;		/* ns per element packed or written back, one thread */
	double fork_ns;		/* a parallel region's start and join */
};

/* What the model estimates for one candidate. */
struct hgc_heur_est {
	double total_ns;	/* the cost: what the search minimizes */
	double compute_ns;	/* the busiest thread's microkernel time */
	double mem_ns;		/* data re-read from L3 when the working set spills L2 */
	double pack_ns;		/* per-run packing and write-back */
	double eff;		/* useful flops / (the compute time at peak) of one core */
	double balance;		/* average thread work / the busiest thread's */
	int64_t working_set;	/* bytes one thread keeps live in its loop nest */
	bool modelled;		/* a known family; false: least padding only */
};

/* One candidate: its environment and estimate. */
struct hgc_heur_cand {
	struct hgc_tmpl_env env;
	struct hgc_heur_est est;
};

/* What a search found. */
struct hgc_heur_result {
	const struct hgc_tmpl *t;
	long nvalid;		/* candidates that satisfied the constraints */
	int n;			/* kept, at most HGC_HEUR_TOP */
	struct hgc_heur_cand top[HGC_HEUR_TOP];	/* best first */
};

/* A bound template with its names resolved: what the models read. */
struct hgc_heur_ctx {
	const struct hgc_tmpl_bind *b;
	const struct hgc_heur_machine *mc;
	int slot[HGC_HEUR_NNAMES];	/* -1: the template has no such name */
	bool konst[HGC_TMPL_MAX_OPERANDS];	/* input prepacked by init (constant) */
	int esize[HGC_TMPL_MAX_OPERANDS];	/* bytes of an element of each buffer */
};

/* model.c */
/* The figures of this machine at vector length vlen (8 or 16). */
void hgc_heur_machine_host(struct hgc_heur_machine *mc, int vlen);
/* Whether a graph tensor is constant: prepacked once by the init function. */
bool hgc_heur_tensor_const(const struct hgc_tensor *t);
/* Prepare the context of a bound template. */
void hgc_heur_ctx_init(struct hgc_heur_ctx *cx, const struct hgc_tmpl_bind *b,
		       const struct hgc_heur_machine *mc);
/* The value of a name in e, or dflt when the template has none. */
int64_t hgc_heur_val(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		     enum hgc_heur_name n, int64_t dflt);
/* Operations per ns of one core at the microkernel instruction's peak. */
double hgc_heur_peak(const struct hgc_heur_ctx *cx);
/* Nanoseconds one brgemm call takes on one core: C of rows x cols, k values
   summed over bs batch elements (k in total), in A's element type. */
double hgc_heur_call_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols, int64_t k,
			int64_t bs);
/* The same for a call of the batched templates, whose B stays in L2: the
   AVX2 kernel's even row split, no L1 term (model.c). */
double hgc_heur_batch_call_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols,
			      int64_t k, int64_t bs);
/* Per-run packing of operand i at elements of its layout, over threads. */
double hgc_heur_pack_ns(const struct hgc_heur_ctx *cx, int operand, int64_t elems, int64_t threads);
/* Extra ns a thread spends re-reading bytes from L3 (reads of a block of size
   bytes, times times) when its working set ws exceeds the L2 cache. */
double hgc_heur_spill_ns(const struct hgc_heur_ctx *cx, int64_t ws, int64_t bytes, int64_t times);
/* Packing every variable input and writing the result back on a run, over
   threads, at the sizes of e's layouts. */
double hgc_heur_pack_layouts(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
			     int64_t threads);
/* Complete o (mem_ns and pack_ns set) from the busiest thread's microkernel
   time calls_ns, the flops it and all threads do, and the parallel regions. */
void hgc_heur_finish(const struct hgc_heur_ctx *cx, struct hgc_heur_est *o, double useful_flops,
		     double thread_flops, int64_t threads, double calls_ns, int regions);
/* Estimate candidate e: 0, or -1 when e is unusable (an evaluation failed). */
int hgc_heur_estimate(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		      struct hgc_heur_est *out);

/* matmul.c: the MatMul families; false when the template is not one of them */
bool hgc_heur_matmul(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		     struct hgc_heur_est *out);

/* conv.c: the direct convolution family; false when the template is not one */
bool hgc_heur_conv(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		   struct hgc_heur_est *out);

/* search.c */
/*
 * Search b's parameter space (pins fixed) with the host machine's model:
 * the HGC_HEUR_TOP cheapest candidates into r, best first (the first in
 * enumeration order among equal costs).  0, or -1 with d set (at the pin
 * when one is to blame) when no candidate is valid; d NULL: -1 alone, which
 * spares the full walk that finds the reason.
 */
int hgc_heur_search(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins, int npins,
		    struct hgc_heur_result *r, struct hgc_diag *d);
/* The same with a given machine (tests, what-if listings). */
int hgc_heur_search_on(const struct hgc_tmpl_bind *b, const struct hgc_tmpl_pin *pins,
		       int npins, const struct hgc_heur_machine *mc, struct hgc_heur_result *r,
		       struct hgc_diag *d);
/* Print a search: the chosen candidate and the runners-up with their costs. */
void hgc_heur_print(FILE *f, const struct hgc_heur_result *r);

/* explain.c */
/*
 * `hgc explain`: for each tunable op of g (after the graph passes, as the
 * driver lowers it), the template the lowering takes under o's rules and
 * threads, the chosen parameters with the estimated cost, and the
 * runners-up.  0, or -1 with d set.
 */
int hgc_heur_explain_graph(FILE *f, const struct hgc_graph *g, const struct hgc_tmpl_opts *o,
			   struct hgc_diag *d);

#endif
