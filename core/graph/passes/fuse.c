/*
 * fuse.c: fine-grained fusion, planned.  From each MatMul (in graph order)
 * a fused op grows over the fusible elementwise and broadcast binary ops
 * that consume its result or a member's, in graph order, while every other
 * input they read is ready before the MatMul runs (a graph input, a
 * constant, or the result of an earlier op) and within the caps on members
 * and outside inputs.  One reduction site may join: reductions with
 * keep_dims over the same trailing axes of the result (softmax's max and
 * sum, layernorm's two means), and elementwise ops on their row-shaped
 * results; the lowering then needs an anchor covering whole rows.  The graph itself is not changed: the plan
 * (../fused.h) tells the lowering what to put at the template's anchors.
 */
#include "../fused.h"
#include "../graph_int.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

#define MAX_IN 8		/* inputs of a member op */

/* Whether kind is an elementwise op a fused op may take as a post-op: each output
   element from the inputs' elements at the same index (broadcast inputs aside). */
bool hgc_fusion_eltwise_kind(enum hgc_op_kind k)
{
	switch (k) {
	case HGC_OP_ADD: case HGC_OP_SUBTRACT: case HGC_OP_MULTIPLY: case HGC_OP_DIVIDE:
	case HGC_OP_MAXIMUM: case HGC_OP_MINIMUM: case HGC_OP_RELU: case HGC_OP_LEAKY_RELU:
	case HGC_OP_GELU: case HGC_OP_SIGMOID: case HGC_OP_TANH: case HGC_OP_ELU:
	case HGC_OP_HARD_SIGMOID: case HGC_OP_SOFT_PLUS: case HGC_OP_EXP: case HGC_OP_LOG:
	case HGC_OP_SQRT: case HGC_OP_SQUARE: case HGC_OP_ABS: case HGC_OP_RECIPROCAL:
	case HGC_OP_POW: case HGC_OP_CLAMP: case HGC_OP_ROUND: case HGC_OP_TYPE_CAST:
	case HGC_OP_ERF: case HGC_OP_ADD_ROUND:
		return true;
	default:
		return false;
	}
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

	if (fo->anchor && t == fo->anchor->out[0])
		return true;
	for (i = 0; i < fo->nmembers; i++)
		if (t == fo->member[i]->out[0])
			return true;
	return false;
}

/* Whether kind is a reduction a fused op may take at its reduction site. */
static bool reduce_kind(enum hgc_op_kind k)
{
	return k == HGC_OP_REDUCE_SUM || k == HGC_OP_REDUCE_MEAN || k == HGC_OP_REDUCE_MAX ||
	       k == HGC_OP_REDUCE_MIN || k == HGC_OP_REDUCE_PROD;
}

/* Whether t is a constant of one element: an immediate, not an outside input. */
static bool const_scalar(const struct hgc_tensor *t)
{
	return t->data && !t->producer && hgc_dims_prod(t->ndims, t->dims) == 1;
}

/* Whether t has the row shape of fo's reduction site: the result with the
   reduced axes of extent 1. */
static bool row_shape(const struct hgc_fused_op *fo, const struct hgc_tensor *t)
{
	const struct hgc_tensor *r = fo->domain;
	int i;

	if (!fo->reduces || t->ndims != r->ndims)
		return false;
	for (i = 0; i < r->ndims; i++)
		if (t->dims[i] != (fo->reduced[i] ? 1 : r->dims[i]))
			return false;
	return true;
}

/* The axes reduction op folds, as a mask over its input's dims; false
   unless keep_dims is set and they are a trailing run (the last axis, the
   contiguous one, included), which an anchor covering whole rows holds. */
static bool trailing_axes(const struct hgc_op *op, bool *mask)
{
	const int64_t *axes;
	int n = hgc_op_ints(op, "axes", &axes), rank = op->in[0]->ndims, i, a;

	if (!hgc_op_bool(op, "keep_dims") || n <= 0 || rank < 1)
		return false;
	memset(mask, 0, HGC_MAX_DIMS * sizeof(*mask));
	for (i = 0; i < n; i++) {
		if (hgc_norm_axis(axes[i], rank, &a))
			return false;
		mask[a] = true;
	}
	for (i = rank - 1; i >= 0 && mask[i]; i--)
		;
	if (i == rank - 1)
		return false;
	for (; i >= 0; i--)
		if (mask[i])
			return false;
	return true;
}

/* Whether reduction op joins fo at its reduction site (opening it when fo
   has none: its axes go to site). */
static bool joins_reduce(const struct hgc_fused_op *fo, const struct hgc_op *op, bool *site)
{
	if (!reduce_kind(op->kind) || op->nin != 1 || !inside(fo, op->in[0]) ||
	    !same_shape(op->in[0], fo->domain) || !trailing_axes(op, site))
		return false;
	return !fo->reduces || !memcmp(site, fo->reduced, sizeof(fo->reduced));
}

/* Whether t is among the first n of list. */
static bool listed(const struct hgc_tensor *const *list, int n, const struct hgc_tensor *t)
{
	while (n-- > 0)
		if (list[n] == t)
			return true;
	return false;
}

/* Whether elementwise op joins fo: a result of the anchor's shape (or the
   row shape of the reduction site), inputs from the fused op or ready
   before the anchor runs, broadcasting to the result.  New outside inputs
   (not constant scalars) go to add[*nadd]. */
static bool joins_eltwise(const struct hgc_graph *g, const struct hgc_fused_op *fo, long apos,
			  const struct hgc_op *op, const struct hgc_tensor **add, int *nadd)
{
	const struct hgc_tensor *t, *o = op->out[0];
	bool linked = false;
	int i;

	if (!hgc_fusion_eltwise_kind(op->kind) || (!same_shape(o, fo->domain) && !row_shape(fo, o)))
		return false;
	for (i = 0; i < op->nin; i++) {
		t = op->in[i];
		if (!broadcasts_to(t, o))
			return false;
		if (inside(fo, t)) {
			linked = true;
			continue;
		}
		if (t->producer && position(g, t->producer) >= apos)
			return false;
		if (!const_scalar(t) && !listed(fo->extra, fo->nextra, t) && !listed(add, *nadd, t))
			add[(*nadd)++] = t;
	}
	return linked;
}

/* Add op to fo if it can join within the caps. */
static void try_join(const struct hgc_graph *g, struct hgc_fused_op *fo, long apos,
		     const struct hgc_op *op)
{
	const struct hgc_tensor *add[MAX_IN];
	bool site[HGC_MAX_DIMS];
	int i, nadd = 0;

	if (op->nout != 1 || !hgc_tensor_is_dense(op->out[0]) || op->nin > MAX_IN)
		return;
	if (joins_reduce(fo, op, site)) {
		fo->reduces = true;
		memcpy(fo->reduced, site, sizeof(fo->reduced));
	} else if (!joins_eltwise(g, fo, apos, op, add, &nadd) ||
		   fo->nextra + nadd > HGC_FUSE_MAX_EXTRA) {
		return;
	}
	for (i = 0; i < nadd; i++)
		fo->extra[fo->nextra++] = add[i];
	fo->member[fo->nmembers++] = op;
}

/* Grow the fused op of the MatMul at position apos. */
static void grow(const struct hgc_graph *g, long apos, struct hgc_fused_op *fo)
{
	size_t j;

	memset(fo, 0, sizeof(*fo));
	fo->anchor = HGC_GRAPH_OP(g, apos);
	fo->domain = fo->anchor->out[0];
	for (j = (size_t)apos + 1; j < g->ops.len && fo->nmembers < HGC_FUSE_MAX_MEMBERS; j++)
		try_join(g, fo, apos, HGC_GRAPH_OP(g, j));
}

/* Open a region of fusible ops at the op at position pos: an elementwise
   op with a dense result of rank 2 or more, or a row reduction of such a
   tensor.  False when op cannot start one. */
static bool seed(const struct hgc_graph *g, long pos, struct hgc_fused_op *fo)
{
	const struct hgc_op *op = HGC_GRAPH_OP(g, pos);
	bool site[HGC_MAX_DIMS];
	int i;

	memset(fo, 0, sizeof(*fo));
	if (op->nout != 1 || !hgc_tensor_is_dense(op->out[0]) || op->nin > MAX_IN)
		return false;
	if (reduce_kind(op->kind) && op->nin == 1 && op->in[0]->ndims >= 2 &&
	    hgc_tensor_is_dense(op->in[0]) && trailing_axes(op, site)) {
		fo->domain = op->in[0];
		fo->reduces = true;
		memcpy(fo->reduced, site, sizeof(fo->reduced));
	} else if (hgc_fusion_eltwise_kind(op->kind) && op->out[0]->ndims >= 2) {
		fo->domain = op->out[0];
	} else {
		return false;
	}
	for (i = 0; i < op->nin; i++)
		if (!const_scalar(op->in[i]) && !listed(fo->extra, fo->nextra, op->in[i])) {
			if (fo->nextra == HGC_FUSE_MAX_EXTRA)
				return false;
			fo->extra[fo->nextra++] = op->in[i];
		}
	fo->member[fo->nmembers++] = op;
	return true;
}

/* Grow a region from the op at position pos: its ops join as a MatMul's
   post-ops would (inputs ready before pos).  False for fewer than 2 ops. */
static bool grow_region(const struct hgc_graph *g, long pos, struct hgc_fused_op *fo)
{
	size_t j;

	if (!seed(g, pos, fo))
		return false;
	for (j = (size_t)pos + 1; j < g->ops.len && fo->nmembers < HGC_FUSE_MAX_MEMBERS; j++)
		try_join(g, fo, pos, HGC_GRAPH_OP(g, j));
	return fo->nmembers >= 2;
}

/* How many times t is used: as an op's input or a graph output. */
static int uses(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	size_t i;
	int j, n = 0;

	for (i = 0; i < g->ops.len; i++)
		for (j = 0; j < HGC_GRAPH_OP(g, i)->nin; j++)
			n += HGC_GRAPH_OP(g, i)->in[j] == t;
	for (i = 0; i < g->outputs.len; i++)
		n += HGC_GRAPH_OUTPUT(g, i) == t;
	return n;
}

/* The pre-op of MatMul operand t: a StaticTranspose that swaps the last
   two dims of a graph input or a constant (graph entry), used by the
   MatMul alone; NULL otherwise. */
static const struct hgc_op *pre_op(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	const struct hgc_op *op = t->producer;
	const int64_t *order;
	int n, i;

	if (!op || op->kind != HGC_OP_STATIC_TRANSPOSE || op->in[0]->producer ||
	    t->ndims < 2 || uses(g, t) != 1 || !hgc_tensor_is_dense(op->in[0]))
		return NULL;
	n = hgc_op_ints(op, "order", &order);
	if (n != t->ndims)
		return NULL;
	for (i = 0; i < n - 2; i++)
		if (order[i] != i && order[i] != i - n)
			return NULL;
	if ((order[n - 2] != n - 1 && order[n - 2] != -1) ||
	    (order[n - 1] != n - 2 && order[n - 1] != -2))
		return NULL;
	return op;
}

/* Whether op anchors a fused op: a MatMul with one plain dense result. */
static bool anchor_op(const struct hgc_op *op)
{
	return (op->kind == HGC_OP_MATMUL || op->kind == HGC_OP_CONVOLUTION) && op->nout == 1 &&
	       op->out[0]->ndims >= 2 && hgc_tensor_is_dense(op->out[0]);
}

/* Add fo to the plan. */
static void add(struct hgc_fusion *f, const struct hgc_fused_op *fo)
{
	f->ops = hgc_xrealloc(f->ops, (size_t)(f->n + 1) * sizeof(*f->ops));
	f->ops[f->n++] = *fo;
}

/* Whether op belongs to a fused op already (as a member or an anchor). */
static bool taken(const struct hgc_fusion *f, const struct hgc_op *op)
{
	return hgc_fusion_is_member(f, op) || hgc_fusion_of(f, op);
}

/* Plan fusion: a fused op per MatMul with at least one member, then regions
   of two or more fusible ops among the ops left. */
void hgc_fusion_plan(const struct hgc_graph *g, struct hgc_fusion *f)
{
	struct hgc_fused_op fo;
	size_t i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < g->ops.len; i++) {
		if (!anchor_op(HGC_GRAPH_OP(g, i)) || taken(f, HGC_GRAPH_OP(g, i)))
			continue;
		grow(g, (long)i, &fo);
		if (fo.anchor->kind == HGC_OP_MATMUL) {
			fo.pre[0] = pre_op(g, fo.anchor->in[0]);
			fo.pre[1] = pre_op(g, fo.anchor->in[1]);
		}
		if (fo.nmembers || fo.pre[0] || fo.pre[1])
			add(f, &fo);
	}
	for (i = 0; i < g->ops.len; i++)
		if (!taken(f, HGC_GRAPH_OP(g, i)) && grow_region(g, (long)i, &fo))
			add(f, &fo);
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

/* The region whose first member is op. */
const struct hgc_fused_op *hgc_fusion_region_of(const struct hgc_fusion *f,
						const struct hgc_op *op)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (!f->ops[i].anchor && f->ops[i].member[0] == op)
			return &f->ops[i];
	return NULL;
}

/* Whether op is a member of a fused op. */
bool hgc_fusion_is_member(const struct hgc_fusion *f, const struct hgc_op *op)
{
	int i, j;

	for (i = 0; i < f->n; i++) {
		if (f->ops[i].pre[0] == op || f->ops[i].pre[1] == op)
			return true;
		for (j = 0; j < f->ops[i].nmembers; j++)
			if (f->ops[i].member[j] == op)
				return true;
	}
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

/* " (rows over axes [a, b])": the reduction site of fo, if any. */
static void site_print(FILE *out, const struct hgc_fused_op *fo)
{
	const char *sep = "";
	int i;

	if (!fo->reduces)
		return;
	fprintf(out, " (rows over axes [");
	for (i = 0; i < fo->domain->ndims; i++)
		if (fo->reduced[i])
			fprintf(out, "%s%d", sep, i), sep = ", ";
	fprintf(out, "])");
}

/* Print the plan. */
void hgc_fusion_print(FILE *out, const struct hgc_fusion *f)
{
	int i, j;

	for (i = 0; i < f->n; i++) {
		fprintf(out, "fused op %d: ", i);
		if (f->ops[i].anchor) {
			op_name(out, f->ops[i].anchor);
			for (j = 0; j < 2; j++)
				if (f->ops[i].pre[j]) {
					fprintf(out, " (pre-op of %s: ", j ? "B" : "A");
					op_name(out, f->ops[i].pre[j]);
					fputc(')', out);
				}
			if (f->ops[i].nmembers)
				fprintf(out, " +");
		} else {
			fprintf(out, "region:");
		}
		for (j = 0; j < f->ops[i].nmembers; j++) {
			fputc(' ', out);
			op_name(out, f->ops[i].member[j]);
			if (j + 1 < f->ops[i].nmembers)
				fputc(',', out);
		}
		site_print(out, &f->ops[i]);
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
