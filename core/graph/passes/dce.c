/*
 * dce.c: dead code elimination.  An op is live when a graph output depends
 * on it; one backward walk over the ops in order marks them (the order is
 * topological, so every reader comes after what it reads).  The dead ops
 * go, and so do the embedded constants only they read.  Graph inputs stay,
 * used or not: they are the graph's interface.
 */
#include "passes_int.h"

#include <stdlib.h>

/* Remove the ops no output depends on; the number removed. */
int hgc_pass_dce(struct hgc_graph *g, const struct hgc_pass_switches *sw, struct hgc_diag *d)
{
	size_t n = g->ops.len, i;
	bool *live = hgc_xcalloc((size_t)g->next_id + 1, sizeof(*live));
	bool *dead = hgc_xcalloc(n + 1, sizeof(*dead));
	struct hgc_pb b;
	int removed = 0, k, r;

	(void)sw;
	for (i = 0; i < g->outputs.len; i++)
		live[HGC_GRAPH_OUTPUT(g, i)->id] = true;
	for (i = n; i-- > 0;) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, i);

		if (!live[op->out[0]->id]) {
			dead[i] = true;
			removed++;
			continue;
		}
		for (k = 0; k < op->nin; k++)
			live[op->in[k]->id] = true;
	}
	hgc_pb_init(&b, g, d);
	r = hgc_pb_finish(&b, dead, n);
	free(live);
	free(dead);
	return r ? -1 : removed;
}
