/*
 * passes.h: the graph passes that run before fusion, one file each, and
 * the pipeline (pipeline.c) that runs them in order:
 *
 *     decompose -> cse -> dce -> constfold -> lowprec -> dce
 *     -> decompose_quant -> channels_last -> transpose -> cse -> constfold
 *     -> dce
 *
 * Every pass keeps the graph's interface: the same inputs in the same
 * order, the same outputs (an output may become an alias of another tensor
 * or an embedded constant).  Each pass can be switched off by name (a
 * config's `pass NAME = off;`), and the graph can be printed after each.
 * See docs/passes.md.
 */
#ifndef HGC_PASSES_H
#define HGC_PASSES_H

#include <stdbool.h>
#include <stdio.h>

#include "../graph.h"

/*
 * The passes: X(enum suffix, name, on by default, function, what it does).
 * The order of the rows is the order of --dump and the docs, not the
 * pipeline's (pipeline.c).
 */
#define HGC_PASS_LIST(X)                                                                   \
	X(DECOMPOSE, "decompose", true, hgc_pass_decompose,                                \
	  "complex ops (GELU, SoftMax, LayerNorm ...) into basic ones")                    \
	X(CSE, "cse", true, hgc_pass_cse, "merge identical ops and identical constants")   \
	X(DCE, "dce", true, hgc_pass_dce, "remove ops no output depends on")               \
	X(CONSTFOLD, "constfold", true, hgc_pass_constfold,                                \
	  "evaluate ops on constants whose data is known")                                 \
	X(LOWPREC, "lowprec", true, hgc_pass_lowprec,                                      \
	  "Dequantize -> MatMul/Convolution into the int8 op with s32 accumulation")       \
	X(DECOMPOSE_QUANT, "decompose_quant", true, hgc_pass_decompose_quant,              \
	  "Quantize and Dequantize into casts, multiplies and adds")                       \
	X(CHANNELS_LAST, "channels_last", false, hgc_pass_channels_last,                   \
	  "run NCX convolutions and pools as NXC between transposes")                      \
	X(TRANSPOSE, "transpose", true, hgc_pass_transpose,                                \
	  "push transposes down, remove inverse pairs, identities and plain copies")       \
	X(FUSE, "fuse", true, hgc_pass_fuse,                                               \
	  "fine-grained fusion: post-ops at the template's anchors (planned at lowering)")

enum hgc_pass {
#define X(e, n, on, f, what) HGC_PASS_##e,
	HGC_PASS_LIST(X)
#undef X
	HGC_PASS_COUNT
};

/* What the passes did, summed over every run of each. */
struct hgc_pass_stats {
	int runs[HGC_PASS_COUNT];
	int changes[HGC_PASS_COUNT];	/* rewrites (ops replaced, removed or folded) */
	double seconds[HGC_PASS_COUNT];
};

/* Called after every pass that ran, with the graph as it left it. */
typedef void hgc_pass_hook(void *user, enum hgc_pass pass, int changes,
			   const struct hgc_graph *g);

/* Which passes run and what watches them: a plain struct, filled from a config by the caller. */
struct hgc_pass_switches {
	bool on[HGC_PASS_COUNT];
	bool keep[HGC_OP_COUNT];	/* complex op kinds decompose leaves alone */
	FILE *dump;			/* print the graph after every pass that ran, or NULL */
	hgc_pass_hook *hook;		/* or NULL */
	void *user;			/* for hook */
	struct hgc_pass_stats *stats;	/* filled in when not NULL */
};

/* pipeline.c */
/* Every pass at its default (on, but channels_last), nothing kept, no dump. */
void hgc_pass_switches_init(struct hgc_pass_switches *sw);
const char *hgc_pass_name(enum hgc_pass p);
const char *hgc_pass_what(enum hgc_pass p);
enum hgc_pass hgc_pass_find(const char *name);	/* HGC_PASS_COUNT if none */
/* `pass NAME = on|off;`: -1 with d set (at loc) for an unknown pass or value. */
int hgc_pass_switches_set(struct hgc_pass_switches *sw, const char *name, const char *value,
			  const struct hgc_loc *loc, struct hgc_diag *d);
/*
 * Run the pipeline on g in place (sw NULL: the defaults).  The graph is
 * checked after every pass that changed it; -1 with d set if a pass fails
 * or breaks it.
 */
int hgc_graph_passes_run(struct hgc_graph *g, const struct hgc_pass_switches *sw,
			 struct hgc_diag *d);

/* Each pass returns the number of rewrites it made, or -1 with d set. */

/* decompose.c */
int hgc_pass_decompose(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		       struct hgc_diag *d);
int hgc_pass_decompose_quant(struct hgc_graph *g, const struct hgc_pass_switches *sw,
			     struct hgc_diag *d);

/* cse.c */
int hgc_pass_cse(struct hgc_graph *g, const struct hgc_pass_switches *sw, struct hgc_diag *d);

/* dce.c */
int hgc_pass_dce(struct hgc_graph *g, const struct hgc_pass_switches *sw, struct hgc_diag *d);

/* constfold.c */
int hgc_pass_constfold(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		       struct hgc_diag *d);

/* lowprec.c */
int hgc_pass_lowprec(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		     struct hgc_diag *d);

/* transpose.c */
int hgc_pass_channels_last(struct hgc_graph *g, const struct hgc_pass_switches *sw,
			   struct hgc_diag *d);
int hgc_pass_transpose(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		       struct hgc_diag *d);

/* fuse.c (the plan itself: ../fused.h) */
int hgc_pass_fuse(struct hgc_graph *g, const struct hgc_pass_switches *sw, struct hgc_diag *d);

#endif
