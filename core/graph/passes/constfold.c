/*
 * constfold.c: constant folding.  An op whose inputs all hold data known
 * at compile time (embedded constants, and constant inputs a caller gave
 * data: hgc_tensor_is_known) is evaluated with its reference function into
 * a new embedded constant, so transposes and reorders of constant weights,
 * and the scale and zero-point arithmetic of the other passes, cost nothing
 * at run time.  Spec constants carry no data when a graph is compiled
 * (dsl/spec.c makes them graph inputs whose data a generator fills at run
 * time), so for them folding waits for the constant-weight preprocessing
 * at first execution; see docs/passes.md.  One walk in order folds chains.
 * Dequantize does not fold: it is what lowprec looks for (folded, the int8
 * weights would become f32); decompose_quant makes it a cast and a multiply
 * that the constfold after it folds.
 */
#include "passes_int.h"

#include <stdlib.h>

/* Largest result folded, in bytes, and a bound on the work of a folded tunable op. */
#define MAX_BYTES ((size_t)64 << 20)
#define MAX_WORK ((int64_t)1 << 32)

/* Can op be folded: known inputs, a result and a work bound that stay reasonable? */
static bool foldable(const struct hgc_graph *g, const struct hgc_op *op)
{
	int64_t out = hgc_tensor_nelems(op->out[0]);
	int k;

	if (op->nin == 0 || op->nout != 1 || hgc_tensor_nbytes(op->out[0]) > MAX_BYTES ||
	    op->kind == HGC_OP_DEQUANTIZE)
		return false;
	for (k = 0; k < op->nin; k++)
		if (!hgc_tensor_is_known(g, op->in[k]))
			return false;
	if (hgc_op_table[op->kind].category == HGC_CAT_TUNABLE) {
		int64_t w = hgc_tensor_nelems(op->in[1]);

		if (w > 0 && out > MAX_WORK / w)
			return false;
	}
	return true;
}

/* Evaluate op on its known inputs into a new embedded constant. */
static struct hgc_tensor *fold(struct hgc_graph *g, struct hgc_op *op)
{
	const void *in[64];
	struct hgc_tensor *o = op->out[0], *t;
	void *out[1];
	int k;

	for (k = 0; k < op->nin; k++)
		in[k] = op->in[k]->data;
	out[0] = hgc_xcalloc(hgc_tensor_nbytes(o) + 1, 1);
	hgc_op_table[op->kind].ref(op, in, out);
	t = hgc_graph_add_const(g, o->dtype, o->ndims, o->dims, out[0], &op->loc);
	t->name = o->name;
	free(out[0]);
	return t;
}

/* Fold every op on known data; the number folded. */
int hgc_pass_constfold(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		       struct hgc_diag *d)
{
	size_t n = g->ops.len, i;
	bool *dead = hgc_xcalloc(n + 1, sizeof(*dead));
	struct hgc_graph_uses u;
	struct hgc_pb b;
	int folded = 0, r;

	(void)sw;
	hgc_graph_uses_init(&u, g);
	for (i = 0; i < n; i++) {
		struct hgc_op *op = HGC_GRAPH_OP(g, i);

		if (op->nin > 64 || !foldable(g, op))
			continue;
		hgc_graph_uses_replace(&u, g, op->out[0], fold(g, op));
		dead[i] = true;
		folded++;
	}
	hgc_graph_uses_release(&u);
	hgc_pb_init(&b, g, d);
	r = hgc_pb_finish(&b, dead, n);
	free(dead);
	return r ? -1 : folded;
}
