/*
 * edit.c: the graph editing the passes need: embedded constants, a deep
 * copy, use replacement, op removal, a stable topological re-sort, use
 * lists and a consistency check run after every pass.
 */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* A constant the graph carries itself: no producer, not an input, data in the arena. */
struct hgc_tensor *hgc_graph_add_const(struct hgc_graph *g, enum hgc_dtype dt, int ndims,
				       const int64_t *dims, const void *data,
				       const struct hgc_loc *loc)
{
	struct hgc_tensor *t = hgc_arena_calloc(&g->arena, 1, sizeof(*t));
	size_t n;
	void *copy;

	if (ndims < 0 || ndims > HGC_MAX_DIMS || dt == HGC_DT_UNDEF || !data)
		hgc_bug("add_const: %d dims of dtype %d", ndims, (int)dt);
	t->id = g->next_id++;
	t->dtype = dt;
	t->ndims = ndims;
	if (ndims)
		memcpy(t->dims, dims, (size_t)ndims * sizeof(*dims));
	t->prop = HGC_PROP_CONSTANT;
	if (loc)
		t->loc = *loc;
	hgc_tensor_set_dense(t);
	n = hgc_tensor_nbytes(t);
	copy = hgc_arena_alloc(&g->arena, n);
	memcpy(copy, data, n);
	t->data = copy;
	*(struct hgc_tensor **)hgc_vec_push(&g->tensors) = t;
	return t;
}

/* Is t a graph output? */
bool hgc_graph_is_output(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	size_t i;

	for (i = 0; i < g->outputs.len; i++)
		if (HGC_GRAPH_OUTPUT(g, i) == t)
			return true;
	return false;
}

/* Data known now and the same on every run: a constant with data and no producer. */
bool hgc_tensor_is_known(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	(void)g;
	return !t->producer && t->data && t->prop == HGC_PROP_CONSTANT;
}

/* Replace from by to in op inputs and graph outputs. */
void hgc_graph_replace_uses(struct hgc_graph *g, const struct hgc_tensor *from,
			    struct hgc_tensor *to)
{
	size_t i;
	int k;

	for (i = 0; i < g->ops.len; i++) {
		struct hgc_op *op = HGC_GRAPH_OP(g, i);

		for (k = 0; k < op->nin; k++)
			if (op->in[k] == from)
				op->in[k] = to;
	}
	for (i = 0; i < g->outputs.len; i++)
		if (HGC_GRAPH_OUTPUT(g, i) == from)
			HGC_GRAPH_OUTPUT(g, i) = to;
}

/* Op ids are positions again. */
static void renumber(struct hgc_graph *g)
{
	size_t i;

	for (i = 0; i < g->ops.len; i++)
		HGC_GRAPH_OP(g, i)->id = (int)i;
}

/* Mark t's id as referenced. */
static void keep(bool *mark, const struct hgc_tensor *t, int n)
{
	if (t && t->id >= 0 && t->id < n)
		mark[t->id] = true;
}

/* Drop the tensors no op, input or output refers to (their ids are not reused). */
static void prune_tensors(struct hgc_graph *g)
{
	int n = g->next_id, k;
	bool *mark = hgc_xcalloc((size_t)n + 1, sizeof(*mark));
	size_t i, m = 0;

	for (i = 0; i < g->inputs.len; i++)
		keep(mark, HGC_GRAPH_INPUT(g, i), n);
	for (i = 0; i < g->outputs.len; i++)
		keep(mark, HGC_GRAPH_OUTPUT(g, i), n);
	for (i = 0; i < g->ops.len; i++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, i);

		for (k = 0; k < op->nin; k++)
			keep(mark, op->in[k], n);
		keep(mark, op->out[0], n);
	}
	for (i = 0; i < g->tensors.len; i++) {
		struct hgc_tensor *t = HGC_VEC_AT(&g->tensors, struct hgc_tensor *, i);

		if (t->id >= 0 && t->id < n && mark[t->id])
			HGC_VEC_AT(&g->tensors, struct hgc_tensor *, m++) = t;
	}
	g->tensors.len = m;
	free(mark);
}

/* Remove the marked ops (by position), then the tensors left without a reference. */
void hgc_graph_remove_ops(struct hgc_graph *g, const bool *dead)
{
	size_t i, m = 0;

	for (i = 0; i < g->ops.len; i++)
		if (!dead[i])
			HGC_GRAPH_OP(g, m++) = HGC_GRAPH_OP(g, i);
	g->ops.len = m;
	renumber(g);
	prune_tensors(g);
}

/* Position of t's producer in g->ops (ids are positions), -1 for none, -2 if stray. */
static int producer_pos(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	const struct hgc_op *p = t->producer;

	if (!p)
		return -1;
	if (p->id < 0 || (size_t)p->id >= g->ops.len || HGC_GRAPH_OP(g, p->id) != p)
		return -2;
	return p->id;
}

/* Depth-first from root: producers first, appending finished ops to order. */
static int visit(const struct hgc_graph *g, int root, char *state, int *stack,
		 struct hgc_op **order, int *norder, struct hgc_diag *d)
{
	int sp = 0;

	state[root] = 1;
	stack[sp++] = root;
	stack[sp++] = 0;
	while (sp) {
		int p = stack[sp - 2], k = stack[sp - 1], q;
		struct hgc_op *op = HGC_GRAPH_OP(g, p);

		if (k == op->nin) {
			state[p] = 2;
			order[(*norder)++] = op;
			sp -= 2;
			continue;
		}
		stack[sp - 1]++;
		q = producer_pos(g, op->in[k]);
		if (q == -2)
			return hgc_error(d, NULL, "graph: op %d reads %%%d, whose producer is not in "
					 "the graph", p, op->in[k]->id);
		if (q >= 0 && state[q] == 1)
			return hgc_error(d, NULL, "graph: a cycle through op %d (%s)", q,
					 hgc_op_table[HGC_GRAPH_OP(g, q)->kind].name);
		if (q >= 0 && !state[q]) {
			state[q] = 1;
			stack[sp++] = q;
			stack[sp++] = 0;
		}
	}
	return 0;
}

/* Stable topological order: each op right after what it reads, else where it was. */
int hgc_graph_sort(struct hgc_graph *g, struct hgc_diag *d)
{
	int n = (int)g->ops.len, i, m = 0, r = 0;
	char *state = hgc_xcalloc((size_t)n + 1, 1);
	int *stack = hgc_xmalloc(((size_t)n + 1) * 2 * sizeof(*stack));
	struct hgc_op **order = hgc_xmalloc(((size_t)n + 1) * sizeof(*order));

	renumber(g);
	for (i = 0; i < n && !r; i++)
		if (!state[i])
			r = visit(g, i, state, stack, order, &m, d);
	if (!r) {
		memcpy(g->ops.data, order, (size_t)n * sizeof(*order));
		renumber(g);
	}
	free(state);
	free(stack);
	free(order);
	return r;
}

/* Count and list the readers of every tensor. */
void hgc_graph_uses_init(struct hgc_graph_uses *u, const struct hgc_graph *g)
{
	int n = g->next_id, *fill, k;
	size_t i;

	u->n = n;
	u->first = hgc_xcalloc((size_t)n + 2, sizeof(*u->first));
	u->outputs = hgc_xcalloc((size_t)n + 1, sizeof(*u->outputs));
	for (i = 0; i < g->ops.len; i++)
		for (k = 0; k < HGC_GRAPH_OP(g, i)->nin; k++)
			u->first[HGC_GRAPH_OP(g, i)->in[k]->id + 1]++;
	for (k = 0; k < n; k++)
		u->first[k + 1] += u->first[k];
	u->op = hgc_xmalloc(((size_t)u->first[n] + 1) * sizeof(*u->op));
	fill = hgc_xmalloc(((size_t)n + 1) * sizeof(*fill));
	memcpy(fill, u->first, (size_t)n * sizeof(*fill));
	for (i = 0; i < g->ops.len; i++)
		for (k = 0; k < HGC_GRAPH_OP(g, i)->nin; k++)
			u->op[fill[HGC_GRAPH_OP(g, i)->in[k]->id]++] = HGC_GRAPH_OP(g, i);
	for (i = 0; i < g->outputs.len; i++)
		u->outputs[HGC_GRAPH_OUTPUT(g, i)->id]++;
	free(fill);
}

/* Free the use lists. */
void hgc_graph_uses_release(struct hgc_graph_uses *u)
{
	free(u->first);
	free(u->op);
	free(u->outputs);
	memset(u, 0, sizeof(*u));
}

/* Readers of t plus the times it is a graph output (0 for a tensor newer than the snapshot). */
int hgc_graph_uses_count(const struct hgc_graph_uses *u, const struct hgc_tensor *t)
{
	if (t->id < 0 || t->id >= u->n)
		return 0;
	return u->first[t->id + 1] - u->first[t->id] + u->outputs[t->id];
}

/* Copy an attribute's name and list or string payload into g's arena. */
static void copy_attr(struct hgc_graph *g, struct hgc_attr *a)
{
	a->name = hgc_arena_strdup(&g->arena, a->name);
	hgc_attr_copy_payload(g, a);
}

/* A clone's state: the copy and the old-id to new-tensor map. */
struct clone {
	const struct hgc_graph *g;
	struct hgc_graph *c;
	struct hgc_tensor **map;	/* by id */
	bool *input;			/* by id: a graph input of g */
};

/* The copy of t (made on first sight): input data shared, embedded data copied. */
static struct hgc_tensor *ctensor(struct clone *cl, const struct hgc_tensor *t)
{
	struct hgc_tensor *n;

	if (t->id < 0 || t->id >= cl->g->next_id)
		hgc_bug("clone: tensor id %d out of range", t->id);
	if (cl->map[t->id])
		return cl->map[t->id];
	n = hgc_arena_alloc(&cl->c->arena, sizeof(*n));
	*n = *t;
	n->producer = NULL;
	if (t->name)
		n->name = hgc_arena_strdup(&cl->c->arena, t->name);
	if (t->data && !cl->input[t->id]) {
		void *p = hgc_arena_alloc(&cl->c->arena, hgc_tensor_nbytes(t));

		memcpy(p, t->data, hgc_tensor_nbytes(t));
		n->data = p;
	}
	*(struct hgc_tensor **)hgc_vec_push(&cl->c->tensors) = n;
	return cl->map[t->id] = n;
}

/* The copy of op, appended to the clone's ops. */
static void cop(struct clone *cl, const struct hgc_op *op)
{
	struct hgc_graph *c = cl->c;
	struct hgc_op *n = hgc_arena_alloc(&c->arena, sizeof(*n));
	int k;

	*n = *op;
	n->in = hgc_arena_calloc(&c->arena, (size_t)op->nin + 1, sizeof(*n->in));
	for (k = 0; k < op->nin; k++)
		n->in[k] = ctensor(cl, op->in[k]);
	n->out = hgc_arena_calloc(&c->arena, (size_t)op->nout + 1, sizeof(*n->out));
	for (k = 0; k < op->nout; k++) {
		n->out[k] = ctensor(cl, op->out[k]);
		n->out[k]->producer = n;
	}
	n->attrs = hgc_arena_calloc(&c->arena, (size_t)op->nattr + 1, sizeof(*n->attrs));
	for (k = 0; k < op->nattr; k++) {
		n->attrs[k] = op->attrs[k];
		copy_attr(c, &n->attrs[k]);
	}
	*(struct hgc_op **)hgc_vec_push(&c->ops) = n;
}

/* A deep copy: same ids, tensor and op order, inputs and outputs. */
struct hgc_graph *hgc_graph_clone(const struct hgc_graph *g)
{
	struct clone cl = {g, hgc_graph_new(), NULL, NULL};
	size_t i;

	cl.map = hgc_xcalloc((size_t)g->next_id + 1, sizeof(*cl.map));
	cl.input = hgc_xcalloc((size_t)g->next_id + 1, sizeof(*cl.input));
	cl.c->next_id = g->next_id;
	for (i = 0; i < g->inputs.len; i++)
		cl.input[HGC_GRAPH_INPUT(g, i)->id] = true;
	for (i = 0; i < g->tensors.len; i++)
		ctensor(&cl, HGC_VEC_AT(&g->tensors, struct hgc_tensor *, i));
	for (i = 0; i < g->ops.len; i++)
		cop(&cl, HGC_GRAPH_OP(g, i));
	for (i = 0; i < g->inputs.len; i++)
		*(struct hgc_tensor **)hgc_vec_push(&cl.c->inputs) =
			ctensor(&cl, HGC_GRAPH_INPUT(g, i));
	for (i = 0; i < g->outputs.len; i++)
		*(struct hgc_tensor **)hgc_vec_push(&cl.c->outputs) =
			ctensor(&cl, HGC_GRAPH_OUTPUT(g, i));
	free(cl.map);
	free(cl.input);
	return cl.c;
}

/* Rerun op's inference on a copy: the recorded output must be what it infers. */
static int check_infer(const struct hgc_op *op, struct hgc_diag *d)
{
	struct hgc_op o = *op;
	struct hgc_tensor t = *op->out[0], *outs[1] = {&t};
	const struct hgc_tensor *r = op->out[0];
	const char *name = hgc_op_table[op->kind].name;
	struct hgc_diag tmp;
	int bad;

	o.out = outs;
	hgc_diag_init(&tmp);
	bad = hgc_op_check_attrs(&o, &tmp) || hgc_op_table[op->kind].infer(&o, &tmp);
	if (bad)
		hgc_error(d, NULL, "graph: op %d (%s) does not check: %s", op->id, name,
			  hgc_diag_text(&tmp));
	hgc_diag_release(&tmp);
	if (bad)
		return -1;
	if (t.dtype != r->dtype || t.ndims != r->ndims ||
	    memcmp(t.dims, r->dims, (size_t)r->ndims * sizeof(*r->dims)))
		return hgc_error(d, NULL, "graph: op %d (%s) records an output its inputs do not "
				 "give", op->id, name);
	return 0;
}

/* Op at position i: output owned, inputs defined before it, inference agrees. */
static int check_op(const struct hgc_graph *g, size_t i, bool *defined, struct hgc_diag *d)
{
	const struct hgc_op *op = HGC_GRAPH_OP(g, i);
	int k;

	if (op->id != (int)i || op->nout != 1 || !op->out[0] || op->out[0]->producer != op)
		return hgc_error(d, NULL, "graph: op at %zu has a bad id or output", i);
	if (op->nin < hgc_op_table[op->kind].min_in || op->nin > hgc_op_table[op->kind].max_in)
		return hgc_error(d, NULL, "graph: op %zu (%s) does not check: it has %d inputs", i,
				 hgc_op_table[op->kind].name, op->nin);
	for (k = 0; k < op->nin; k++) {
		const struct hgc_tensor *t = op->in[k];

		if (!t || t->id < 0 || t->id >= g->next_id)
			return hgc_error(d, NULL, "graph: op %zu input %d is not a tensor of the "
					 "graph", i, k);
		if (!defined[t->id] && (t->producer || !t->data))
			return hgc_error(d, NULL, "graph: op %zu (%s) reads %%%d before it is "
					 "computed", i, hgc_op_table[op->kind].name, t->id);
	}
	if (op->out[0]->id < 0 || op->out[0]->id >= g->next_id || defined[op->out[0]->id])
		return hgc_error(d, NULL, "graph: op %zu computes %%%d twice or out of range", i,
				 op->out[0]->id);
	defined[op->out[0]->id] = true;
	return check_infer(op, d);
}

/* The whole graph: inputs without producers, ops in order, outputs defined. */
int hgc_graph_check(const struct hgc_graph *g, struct hgc_diag *d)
{
	bool *defined = hgc_xcalloc((size_t)g->next_id + 1, sizeof(*defined));
	size_t i;
	int r = 0;

	for (i = 0; i < g->inputs.len && !r; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_INPUT(g, i);

		if (t->producer || t->id < 0 || t->id >= g->next_id)
			r = hgc_error(d, NULL, "graph: input %zu is computed or out of range", i);
		else
			defined[t->id] = true;
	}
	for (i = 0; i < g->ops.len && !r; i++)
		r = check_op(g, i, defined, d);
	for (i = 0; i < g->outputs.len && !r; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(g, i);

		if (t->id < 0 || t->id >= g->next_id || (!defined[t->id] && !t->data))
			r = hgc_error(d, NULL, "graph: output %zu (%%%d) is never computed", i, t->id);
	}
	free(defined);
	return r;
}

/* Replace from by to in the ops the snapshot lists as its readers, and in the outputs. */
void hgc_graph_uses_replace(const struct hgc_graph_uses *u, struct hgc_graph *g,
			    const struct hgc_tensor *from, struct hgc_tensor *to)
{
	int i, k;
	size_t j;

	if (from->id < 0 || from->id >= u->n)
		hgc_bug("uses_replace: %%%d is newer than the use lists", from->id);
	for (i = u->first[from->id]; i < u->first[from->id + 1]; i++)
		for (k = 0; k < u->op[i]->nin; k++)
			if (u->op[i]->in[k] == from)
				u->op[i]->in[k] = to;
	if (!u->outputs[from->id])
		return;
	for (j = 0; j < g->outputs.len; j++)
		if (HGC_GRAPH_OUTPUT(g, j) == from)
			HGC_GRAPH_OUTPUT(g, j) = to;
}
