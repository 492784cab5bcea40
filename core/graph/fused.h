/*
 * fused.h: fused ops, as fine-grained fusion (core/graph/passes/fuse.c)
 * plans them.  A fused op is not a new op kind: the graph is left as it is,
 * and a plan beside it names, for each fused op, its anchor op (a tunable
 * op: MatMul) and its member fusible ops (elementwise and broadcast binary
 * ops that consume the anchor's result or another member's), in graph
 * order.  Members may include one reduction site: reductions (keep_dims)
 * over the same trailing axes of the result, e.g. the max and the sum of a
 * row softmax or the two means of a layernorm, and the elementwise ops on
 * their row-shaped results.  The lowering (core/lower/fused.c) instantiates the anchor op's
 * template and lowers every member at a template anchor on the anchor's
 * slice; hgc_lower_graph then skips the members.  See docs/fusion.md.
 */
#ifndef HGC_FUSED_H
#define HGC_FUSED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "graph.h"

#define HGC_FUSE_MAX_MEMBERS 16	/* fusible ops of one fused op */
#define HGC_FUSE_MAX_EXTRA 4	/* inputs from outside the fused op, besides the anchor's */

/* One fused op: a tunable op and the fusible ops after it, or a region of
   fusible ops alone (anchor NULL, member[0] its first op). */
struct hgc_fused_op {
	const struct hgc_op *anchor;	/* the tunable op, or NULL for a region */
	const struct hgc_tensor *domain;	/* the full shape: the anchor's result, or the
					   region's first result (a reduction's input) */
	int nmembers;
	const struct hgc_op *member[HGC_FUSE_MAX_MEMBERS];	/* in graph order */
	int nextra;			/* tensors from outside that members read */
	const struct hgc_tensor *extra[HGC_FUSE_MAX_EXTRA];	/* those, distinct */
	const struct hgc_op *pre[2];	/* per MatMul operand: a StaticTranspose of its
					   last two dims at graph entry folded into the
					   operand's packing (transpose_a/b flipped), or NULL */
	bool reduces;			/* the members hold a reduction site */
	bool reduced[HGC_MAX_DIMS];	/* its axes (dims of the anchor's result) */
};

/* The plan: every fused op of a graph. */
struct hgc_fusion {
	int n;
	struct hgc_fused_op *ops;	/* malloc'ed */
	/* For the lowering, set by the caller after planning (the plan zeroes them):
	   whether a member's result may take the buffer of an input that dies with
	   it (the buffer_reuse switch), and where to add the bytes that did (or NULL). */
	bool in_place;
	int64_t *in_place_bytes;
};

/* fuse.c */
/* Plan fine-grained fusion of g into f (release it with hgc_fusion_release). */
void hgc_fusion_plan(const struct hgc_graph *g, struct hgc_fusion *f);
void hgc_fusion_release(struct hgc_fusion *f);
/* Whether kind is elementwise: each output element from the inputs' elements at
   the same index (broadcast inputs aside), so a fused op may take it as a post-op. */
bool hgc_fusion_eltwise_kind(enum hgc_op_kind k);
/* The fused op whose anchor is op, or NULL. */
const struct hgc_fused_op *hgc_fusion_of(const struct hgc_fusion *f, const struct hgc_op *op);
/* The region (fused op without anchor) whose first member is op, or NULL. */
const struct hgc_fused_op *hgc_fusion_region_of(const struct hgc_fusion *f,
						const struct hgc_op *op);
/* Whether op is a member of some fused op. */
bool hgc_fusion_is_member(const struct hgc_fusion *f, const struct hgc_op *op);
/* Print the plan: a line per fused op with its members. */
void hgc_fusion_print(FILE *out, const struct hgc_fusion *f);

#endif
