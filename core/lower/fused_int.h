/*
 * fused_int.h: what fused.c (fused ops at a template's anchors) and
 * region.c (regions of fusible ops) share: the lowering state, boxes of a
 * tensor, and the helpers that place a fused op's members on a box.
 */
#ifndef HGC_LOWER_FUSED_INT_H
#define HGC_LOWER_FUSED_INT_H

#include "fused.h"
#include "lower_int.h"

#define L1_BYTES 32768		/* the data a slice may touch and stay in L1 */
#define HGC_FUSE_CHAIN_MAX 16	/* MatMuls one row-split chain holds at most */

/* The lowering state: the plan and the template options. */
struct fstate {
	const struct hgc_fusion *f;
	struct hgc_tmpl_opts *o;
	struct hgc_lower_opts plain;	/* the options hgc_tmpl_lower_tunable expects */
	struct hgc_tir_stmt *last;	/* the previous fused op's parallel loop, while
					   no other op came after it */
	const char *last_name;		/* its fused op, for the log */
	int groups;			/* merge groups given so far */
	const struct hgc_tmpl *last_t;	/* the previous fused op's template and its MB
					   (0: none): the next MatMul takes the same rows */
	int64_t last_mb;
	/* A chain of MatMuls split by rows jointly (MPN = threads, NPN = 1), so
	   that their parallel loops merge: its layers, and how many are lowered. */
	const struct hgc_op *chain[HGC_FUSE_CHAIN_MAX];
	int nchain, chain_at;
	bool chain_split;		/* the estimates chose the split (else: planned, not split) */
	int chain_parts;		/* a split chain's MPN: the threads times its row chunks */
};

/* A box of the result: start and extent per canonical dim. */
struct box {
	int n;
	struct hgc_tir_expr *start[HGC_MAX_DIMS];
	int64_t ext[HGC_MAX_DIMS];
};

/* fused.c */
/* Add a line to the template log. */
void hgc_fused_log(struct hgc_tmpl_opts *o, const char *text);
/* (x / div) % mod as an index expression (x is copied; NULL is 0). */
struct hgc_tir_expr *hgc_fused_fold_index(struct hgc_tir_module *m, struct hgc_tir_expr *x,
					  int64_t div, int64_t mod);
/* Views for every member's inputs and outputs, before the nest is built. */
int hgc_fused_prepare(struct hgc_lower_ctx *cx, const struct fstate *st,
		      const struct hgc_fused_op *fo, struct hgc_diag *d);
/* Lower the members into block, on box bx (NULL: whole tensors). */
int hgc_fused_members(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo,
		      struct hgc_tir_stmt *block, const struct box *bx, struct hgc_diag *d);
/* The last parallel loop among block's statements from index from on. */
struct hgc_tir_stmt *hgc_fused_new_pfor(struct hgc_tir_stmt *block, int from);
/* Coarse-grained fusion marks for the fused op just lowered (its parallel loop pf). */
void hgc_fused_mark_merge(struct fstate *st, struct hgc_tir_stmt *pf, const char *name);
/* The name of fused op fo for the log. */
const char *hgc_fused_name(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo);

/* fused_loops.c */
/* Merge adjacent elementwise loops over the same range among block's
   statements from index from (same indices for every written tensor). */
void hgc_fused_merge_loops(struct hgc_tir_module *m, struct hgc_tir_stmt *block, int from);

/* region.c */
/* Lower region fo (fusible ops alone) at its first member: 1, or -1 with d set. */
int hgc_fused_lower_region(struct hgc_lower_ctx *cx, struct fstate *st,
			   const struct hgc_fused_op *fo, struct hgc_diag *d);

#endif
