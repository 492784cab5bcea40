/*
 * fuse.c: fine-grained fusion, planned.  From each MatMul (in graph order)
 * a fused op grows over the fusible elementwise and broadcast binary ops
 * that consume its result or a member's, in graph order, while every other
 * input they read is ready before the MatMul runs (a graph input, a
 * constant, or the result of an earlier op) and within the caps on members
 * and outside inputs.  The graph itself is not changed: the plan
 * (../fused.h) tells the lowering what to put at the template's anchors.
 */
#include "../fused.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* Whether kind is an elementwise op a fused op may take as a post-op. */
static bool eltwise_kind(enum hgc_op_kind k)
{
	switch (k) {
	case HGC_OP_ADD: case HGC_OP_SUBTRACT: case HGC_OP_MULTIPLY: case HGC_OP_DIVIDE:
	case HGC_OP_MAXIMUM: case HGC_OP_MINIMUM: case HGC_OP_RELU: case HGC_OP_LEAKY_RELU:
	case HGC_OP_GELU: case HGC_OP_SIGMOID: case HGC_OP_TANH: case HGC_OP_ELU:
	case HGC_OP_HARD_SIGMOID: case HGC_OP_SOFT_PLUS: case HGC_OP_EXP: case HGC_OP_LOG:
	case HGC_OP_SQRT: case HGC_OP_SQUARE: case HGC_OP_ABS: case HGC_OP_RECIPROCAL:
	case HGC_OP_POW: case HGC_OP_CLAMP: case HGC_OP_ROUND: case HGC_OP_TYPE_CAST:
	case HGC_OP_ERF:
		return true;
	default:
		return false;
	}
}

/* Whether t is plain, dense and row-major. */
static bool dense(const struct hgc_tensor *t)
{
	int64_t s = 1;
	int i;

	if (t->layout.kind != HGC_LAYOUT_PLAIN)
		return false;
	for (i = t->ndims - 1; i >= 0; s *= t->dims[i--])
		if (t->dims[i] > 1 && t->layout.strides[i] != s)
			return false;
	return true;
}

/* Whether a and b have the same shape. */
static bool same_shape(const struct hgc_tensor *a, const struct hgc_tensor *b)
{
	return a->ndims == b->ndims &&
	       !memcmp(a->dims, b->dims, (size_t)a->ndims * sizeof(*a->dims));
}

/* Whether t broadcasts numpy-style to the shape of r (right-aligned, dims equal or 1). */
static bool broadcasts_to(const struct hgc_tensor *t, const struct hgc_tensor *r)
{
	int i, k = r->ndims - t->ndims;

	if (k < 0)
		return false;
	for (i = 0; i < t->ndims; i++)
		if (t->dims[i] != 1 && t->dims[i] != r->dims[i + k])
			return false;
	return true;
}

/* The position of op in g's op list, or -1. */
static long position(const struct hgc_graph *g, const struct hgc_op *op)
{
	size_t i;

	for (i = 0; i < g->ops.len; i++)
		if (HGC_GRAPH_OP(g, i) == op)
			return (long)i;
	return -1;
}

/* Whether t is one of the fused op's tensors (the anchor's result or a member's). */
static bool inside(const struct hgc_fused_op *fo, const struct hgc_tensor *t)
{
	int i;

	if (t == fo->anchor->out[0])
		return true;
	for (i = 0; i < fo->nmembers; i++)
		if (t == fo->member[i]->out[0])
			return true;
	return false;
}

/* Whether op (at position at) can join fo, whose anchor is at position apos;
   *extra gets the outside inputs it adds. */
static bool joins(const struct hgc_graph *g, const struct hgc_fused_op *fo, long apos,
		  const struct hgc_op *op, int *extra)
{
	const struct hgc_tensor *t, *r = fo->anchor->out[0];
	bool linked = false;
	int i;

	*extra = 0;
	if (!eltwise_kind(op->kind) || op->nout != 1 || !same_shape(op->out[0], r) ||
	    !dense(op->out[0]))
		return false;
	for (i = 0; i < op->nin; i++) {
		t = op->in[i];
		if (inside(fo, t)) {
			linked = true;
			continue;
		}
		if (!broadcasts_to(t, r))
			return false;
		if (t->producer && position(g, t->producer) >= apos)
			return false;
		++*extra;
	}
	return linked;
}

/* Grow the fused op of the MatMul at position apos. */
static void grow(const struct hgc_graph *g, long apos, struct hgc_fused_op *fo)
{
	size_t j;
	int extra;

	memset(fo, 0, sizeof(*fo));
	fo->anchor = HGC_GRAPH_OP(g, apos);
	for (j = (size_t)apos + 1; j < g->ops.len && fo->nmembers < HGC_FUSE_MAX_MEMBERS; j++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, j);

		if (!joins(g, fo, apos, op, &extra) || fo->nextra + extra > HGC_FUSE_MAX_EXTRA)
			continue;
		fo->member[fo->nmembers++] = op;
		fo->nextra += extra;
	}
}

/* Whether op anchors a fused op: a MatMul with one plain dense result. */
static bool anchor_op(const struct hgc_op *op)
{
	return op->kind == HGC_OP_MATMUL && op->nout == 1 && op->out[0]->ndims >= 2 &&
	       dense(op->out[0]);
}

/* Plan fusion: a fused op per MatMul with at least one member. */
void hgc_fusion_plan(const struct hgc_graph *g, struct hgc_fusion *f)
{
	struct hgc_fused_op fo;
	size_t i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < g->ops.len; i++) {
		if (!anchor_op(HGC_GRAPH_OP(g, i)) || hgc_fusion_is_member(f, HGC_GRAPH_OP(g, i)))
			continue;
		grow(g, (long)i, &fo);
		if (!fo.nmembers)
			continue;
		f->ops = hgc_xrealloc(f->ops, (size_t)(f->n + 1) * sizeof(*f->ops));
		f->ops[f->n++] = fo;
	}
}

/* Free the plan. */
void hgc_fusion_release(struct hgc_fusion *f)
{
	free(f->ops);
	memset(f, 0, sizeof(*f));
}

/* The fused op anchored at op. */
const struct hgc_fused_op *hgc_fusion_of(const struct hgc_fusion *f, const struct hgc_op *op)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (f->ops[i].anchor == op)
			return &f->ops[i];
	return NULL;
}

/* Whether op is a member of a fused op. */
bool hgc_fusion_is_member(const struct hgc_fusion *f, const struct hgc_op *op)
{
	int i, j;

	for (i = 0; i < f->n; i++)
		for (j = 0; j < f->ops[i].nmembers; j++)
			if (f->ops[i].member[j] == op)
				return true;
	return false;
}

/* "Kind name" of an op's result for listings. */
static void op_name(FILE *out, const struct hgc_op *op)
{
	const struct hgc_tensor *t = op->out[0];

	if (t->name && *t->name)
		fprintf(out, "%s %s", hgc_op_table[op->kind].name, t->name);
	else
		fprintf(out, "%s %%%d", hgc_op_table[op->kind].name, t->id);
}

/* Print the plan. */
void hgc_fusion_print(FILE *out, const struct hgc_fusion *f)
{
	int i, j;

	for (i = 0; i < f->n; i++) {
		fprintf(out, "fused op %d: ", i);
		op_name(out, f->ops[i].anchor);
		fprintf(out, " +");
		for (j = 0; j < f->ops[i].nmembers; j++) {
			fputc(' ', out);
			op_name(out, f->ops[i].member[j]);
			if (j + 1 < f->ops[i].nmembers)
				fputc(',', out);
		}
		fputc('\n', out);
	}
}

/* The pass as the pipeline lists it: the plan is made at lowering time (the
   graph is not rewritten), so this only counts the fused ops it would make. */
int hgc_pass_fuse(struct hgc_graph *g, const struct hgc_pass_switches *sw, struct hgc_diag *d)
{
	struct hgc_fusion f;

	(void)sw;
	(void)d;
	hgc_fusion_plan(g, &f);
	hgc_fusion_release(&f);
	return 0;
}
