/* interp.c: the reference interpreter: each op's naive reference in graph order, plain buffers. */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* Buffers by tensor id: borrowed (inputs, embedded constants) or owned (op outputs). */
struct interp {
	const struct hgc_graph *g;
	const void **buf;	/* tensor id -> data, NULL until known */
	bool *owned;		/* tensor id -> buf was malloc'ed here */
	int n;			/* ids in use: g->next_id */
};

/* A tensor the interpreter can hold: a valid id, a type, a plain dense layout, a sane size. */
static int check_tensor(struct interp *it, const struct hgc_tensor *t, struct hgc_diag *d)
{
	if (t->id < 0 || t->id >= it->n)
		return hgc_error(d, NULL, "interp: tensor %%%d does not belong to the graph", t->id);
	if (t->dtype == HGC_DT_UNDEF)
		return hgc_error(d, NULL, "interp: tensor %%%d has no type", t->id);
	if (!hgc_tensor_is_dense(t))
		return hgc_error(d, NULL, "interp: tensor %%%d is not plain and dense", t->id);
	if (hgc_tensor_nelems(t) > ((int64_t)1 << 38))
		return hgc_error(d, NULL, "interp: tensor %%%d is too large", t->id);
	return 0;
}

/* Bind the caller's input buffers (or a constant's embedded data). */
static int bind_inputs(struct interp *it, const void *const *inputs, struct hgc_diag *d)
{
	size_t i;

	for (i = 0; i < it->g->inputs.len; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_INPUT(it->g, i);
		const void *p = inputs && inputs[i] ? inputs[i] : t->data;

		if (check_tensor(it, t, d))
			return -1;
		if (!p)
			return hgc_error(d, NULL, "interp: no data for input %zu (%%%d)", i, t->id);
		it->buf[t->id] = p;
	}
	return 0;
}

/* The buffer of op input t: computed already, or data embedded by a pass. */
static const void *input_buf(struct interp *it, const struct hgc_tensor *t, struct hgc_diag *d)
{
	if (check_tensor(it, t, d))
		return NULL;
	if (!it->buf[t->id] && !t->producer && t->data)
		it->buf[t->id] = t->data;
	if (!it->buf[t->id])
		hgc_error(d, NULL, "interp: tensor %%%d is used before it is computed", t->id);
	return it->buf[t->id];
}

/* Run one op: gather its inputs, allocate its output, call its reference. */
static int run_op(struct interp *it, const struct hgc_op *op, struct hgc_diag *d)
{
	const void *in[64];
	void *out[1];
	struct hgc_tensor *t = op->out[0];
	int i;

	if (op->nin > 64 || op->nout != 1)
		return hgc_error(d, NULL, "interp: op %d has %d inputs and %d outputs", op->id,
				 op->nin, op->nout);
	for (i = 0; i < op->nin; i++)
		if (!(in[i] = input_buf(it, op->in[i], d)))
			return -1;
	if (check_tensor(it, t, d))
		return -1;
	if (it->buf[t->id])
		return hgc_error(d, NULL, "interp: tensor %%%d is computed twice", t->id);
	out[0] = hgc_xcalloc(hgc_tensor_nbytes(t) + 1, 1);
	it->buf[t->id] = out[0];
	it->owned[t->id] = true;
	hgc_op_table[op->kind].ref(op, in, out);
	return 0;
}

/* Copy the graph's outputs to the caller. */
static int copy_outputs(struct interp *it, void *const *outputs, struct hgc_diag *d)
{
	size_t i;

	for (i = 0; i < it->g->outputs.len; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(it->g, i);
		const void *p = input_buf(it, t, d);

		if (!p)
			return -1;
		if (!outputs[i])
			return hgc_error(d, NULL, "interp: no buffer for output %zu", i);
		memcpy(outputs[i], p, hgc_tensor_nbytes(t));
	}
	return 0;
}

/* Run g on dense buffers: inputs in the order of g->inputs, outputs of g->outputs. */
int hgc_interp_run(const struct hgc_graph *g, const void *const *inputs, void *const *outputs,
		   struct hgc_diag *d)
{
	struct interp it = {g, NULL, NULL, g->next_id};
	int i, r = -1;
	size_t k;

	it.buf = hgc_xcalloc((size_t)it.n + 1, sizeof(*it.buf));
	it.owned = hgc_xcalloc((size_t)it.n + 1, sizeof(*it.owned));
	if (bind_inputs(&it, inputs, d))
		goto free_buffers;
	for (k = 0; k < g->ops.len; k++)
		if (run_op(&it, HGC_GRAPH_OP(g, k), d))
			goto free_buffers;
	r = copy_outputs(&it, outputs, d);
free_buffers:
	for (i = 0; i < it.n; i++)
		if (it.owned[i])
			free((void *)it.buf[i]);
	free(it.owned);
	free(it.buf);
	return r;
}
