/*
 * transpose.c: the OneFlow layout transform.
 *
 * channels_last (opt-in): every 4-D Convolution, MaxPool, AvgPool,
 * BatchNormInference and BiasAdd that runs NCX becomes the NXC op between
 * a transpose of its src to NHWC (order 0,2,3,1) and one of its result
 * back (order 0,3,1,2).  Inserting around as many ops as possible is what
 * lets the next pass leave one transpose at each end of a chain.
 *
 * transpose, to a fixed point:
 * - a transpose of a transpose is one transpose (the composed order), and
 *   nothing when the orders are inverse; an identity transpose goes;
 * - a reshape of a reshape is one reshape, a reshape to the same shape
 *   goes, and so does a Reorder (graphs are plain before layout
 *   propagation, so a Reorder is a copy);
 * - a transpose read only by a layout-agnostic op (elementwise, binary with
 *   an operand that can follow, reduction keeping its dims) moves after it:
 *   op(T(x)) = T(op'(x)), so transposes sink until they meet their inverse.
 * Transposes of constants are left to constfold, which runs after.
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

static const int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

/* Is op one channels_last converts: NCX data and a 4-D src? */
static bool nchw_op(const struct hgc_op *op)
{
	switch (op->kind) {
	case HGC_OP_CONVOLUTION:
	case HGC_OP_MAX_POOL:
	case HGC_OP_AVG_POOL:
	case HGC_OP_BATCH_NORM_INFERENCE:
	case HGC_OP_BIAS_ADD:
		return op->in[0]->ndims == 4 && !strcmp(hgc_op_string(op, "data_format"), "NCX");
	default:
		return false;
	}
}

/* T(op_nxc(T(x), ...)): the NXC form of op between transposes. */
static struct hgc_tensor *to_channels_last(struct hgc_pb *b, const struct hgc_op *op)
{
	struct hgc_tensor *in[8];
	struct hgc_op *n;
	int k;

	in[0] = hgc_pb_transpose(b, op->in[0], to_nhwc);
	for (k = 1; k < op->nin; k++)
		in[k] = op->in[k];
	n = hgc_pb_begin(b, op->kind, op->out[0]->dtype, op->nin, in);
	hgc_pb_copy_attrs(b, n, op);
	hgc_pb_string(b, n, "data_format", "NXC");
	return hgc_pb_transpose(b, hgc_pb_end(b, n), to_nchw);
}

/* The channels-last form of an NCX op between transposes, or NULL. */
static struct hgc_tensor *channels_last(struct hgc_pb *b, struct hgc_op *op, void *ctx)
{
	(void)ctx;
	return nchw_op(op) ? to_channels_last(b, op) : NULL;
}

/* Insert the transposes around every NCX op; the number converted. */
int hgc_pass_channels_last(struct hgc_graph *g, const struct hgc_pass_switches *sw,
			   struct hgc_diag *d)
{
	(void)sw;
	return hgc_pb_rewrite(g, channels_last, NULL, d);
}

/* One round of the transpose pass: use counts kept current as ops come and go. */
struct tp {
	struct hgc_graph *g;
	struct hgc_pb b;
	struct hgc_graph_uses u;	/* readers at the start of the round */
	size_t n;			/* ops at the start of the round */
	struct hgc_vec cnt;		/* int by tensor id: readers plus output references */
	struct hgc_vec dead;		/* bool by op position */
	struct hgc_vec stack;		/* struct hgc_op *: ops to kill */
	int changes;
};

/* The current use count of t (grows the table for new tensors). */
static int *count(struct tp *s, const struct hgc_tensor *t)
{
	while (s->cnt.len <= (size_t)t->id)
		hgc_vec_push(&s->cnt);
	return &HGC_VEC_AT(&s->cnt, int, t->id);
}

/* Is the op at position i dead (grows the table for new ops)? */
static bool *dead_at(struct tp *s, int i)
{
	while (s->dead.len <= (size_t)i)
		hgc_vec_push(&s->dead);
	return &HGC_VEC_AT(&s->dead, bool, i);
}

/* Count the reads of the ops built since position from. */
static void account(struct tp *s, size_t from)
{
	size_t i;
	int k;

	for (i = from; i < s->g->ops.len; i++) {
		const struct hgc_op *op = HGC_GRAPH_OP(s->g, i);

		dead_at(s, (int)i);
		for (k = 0; k < op->nin; k++)
			(*count(s, op->in[k]))++;
	}
}

/* Kill op, then every producer left without a reader (all ops are pure). */
static void kill(struct tp *s, struct hgc_op *op)
{
	*(struct hgc_op **)hgc_vec_push(&s->stack) = op;
	while (s->stack.len) {
		struct hgc_op *o = HGC_VEC_AT(&s->stack, struct hgc_op *, --s->stack.len);
		int k;

		if (*dead_at(s, o->id))
			continue;
		*dead_at(s, o->id) = true;
		for (k = 0; k < o->nin; k++) {
			struct hgc_tensor *t = o->in[k];

			if (--*count(s, t) == 0 && t->producer)
				*(struct hgc_op **)hgc_vec_push(&s->stack) = t->producer;
		}
	}
}

/* op's output is y from now on; op goes (and what only it read). */
static void replace(struct tp *s, struct hgc_op *op, struct hgc_tensor *y, size_t built_from)
{
	account(s, built_from);
	if (!y->name && y->producer && (size_t)y->producer->id >= s->n)
		y->name = op->out[0]->name;
	hgc_graph_uses_replace(&s->u, s->g, op->out[0], y);
	*count(s, y) += *count(s, op->out[0]);
	*count(s, op->out[0]) = 0;
	kill(s, op);
	s->changes++;
}

/* The normalized order of a transpose op. */
static void order_of(const struct hgc_op *op, int *perm)
{
	const int64_t *o;
	int n = hgc_op_ints(op, "order", &o), i;

	for (i = 0; i < n; i++)
		hgc_norm_axis(o[i], op->in[0]->ndims, &perm[i]);
}

/* Is t computed by a live op of kind k? */
static const struct hgc_op *made_by(struct tp *s, const struct hgc_tensor *t,
				    enum hgc_op_kind k)
{
	const struct hgc_op *p = t->producer;

	return p && p->kind == k && !*dead_at(s, p->id) ? p : NULL;
}

/* T_q(T_p(x)) = T_c(x) with c[j] = p[q[j]]; an identity transpose is its input. */
static struct hgc_tensor *transpose_rule(struct tp *s, const struct hgc_op *op)
{
	const struct hgc_op *t1 = made_by(s, op->in[0], HGC_OP_STATIC_TRANSPOSE);
	int p[HGC_MAX_DIMS], q[HGC_MAX_DIMS], c[HGC_MAX_DIMS], j, r = op->in[0]->ndims;

	order_of(op, q);
	if (!t1)
		return hgc_pb_perm_identity(q, r) ? op->in[0] : NULL;
	order_of(t1, p);
	for (j = 0; j < r; j++)
		c[j] = p[q[j]];
	return hgc_pb_transpose(&s->b, t1->in[0], c);
}

/* Reshape(Reshape(x)) = Reshape(x); a reshape keeping the shape, or a Reorder, is its input. */
static struct hgc_tensor *reshape_rule(struct tp *s, const struct hgc_op *op)
{
	const struct hgc_tensor *o = op->out[0];
	const struct hgc_op *r1;

	if (op->kind == HGC_OP_REORDER)
		return op->in[0]->layout.kind == HGC_LAYOUT_PLAIN &&
		       o->layout.kind == HGC_LAYOUT_PLAIN ? op->in[0] : NULL;
	if (o->ndims == op->in[0]->ndims &&
	    !memcmp(o->dims, op->in[0]->dims, (size_t)o->ndims * sizeof(*o->dims)))
		return op->in[0];
	r1 = made_by(s, op->in[0], HGC_OP_STATIC_RESHAPE);
	return r1 ? hgc_pb_reshape(&s->b, r1->in[0], o->ndims, o->dims) : NULL;
}

/* How an op depends on the layout of its operands. */
enum agnostic { AG_NO, AG_UNARY, AG_BINARY, AG_REDUCE };

/* Elementwise ops see no layout; reductions that keep their dims see axes only. */
static enum agnostic agnostic(const struct hgc_op *op)
{
	switch (op->kind) {
	case HGC_OP_RELU: case HGC_OP_LEAKY_RELU: case HGC_OP_GELU: case HGC_OP_SIGMOID:
	case HGC_OP_TANH: case HGC_OP_ELU: case HGC_OP_HARD_SWISH: case HGC_OP_HARD_SIGMOID:
	case HGC_OP_SOFT_PLUS: case HGC_OP_MISH: case HGC_OP_EXP: case HGC_OP_LOG:
	case HGC_OP_SQRT: case HGC_OP_SQUARE: case HGC_OP_ABS: case HGC_OP_RECIPROCAL:
	case HGC_OP_POW: case HGC_OP_CLAMP: case HGC_OP_ROUND: case HGC_OP_TYPE_CAST:
	case HGC_OP_ERF:
		return AG_UNARY;
	case HGC_OP_QUANTIZE: case HGC_OP_DEQUANTIZE:
		return strcmp(hgc_op_string(op, "qtype"), "per_tensor") ? AG_NO : AG_UNARY;
	case HGC_OP_ADD: case HGC_OP_SUBTRACT: case HGC_OP_MULTIPLY: case HGC_OP_DIVIDE:
	case HGC_OP_MAXIMUM: case HGC_OP_MINIMUM: case HGC_OP_ADD_ROUND:
		return AG_BINARY;
	case HGC_OP_REDUCE_SUM: case HGC_OP_REDUCE_MEAN: case HGC_OP_REDUCE_MAX:
	case HGC_OP_REDUCE_MIN: case HGC_OP_REDUCE_PROD: case HGC_OP_REDUCE_L1:
	case HGC_OP_REDUCE_L2:
		return hgc_op_bool(op, "keep_dims") ? AG_REDUCE : AG_NO;
	default:
		return AG_NO;
	}
}

/* A transpose of unknown data that only one op reads (a constant's would fold instead). */
static const struct hgc_op *sinkable(struct tp *s, const struct hgc_tensor *t)
{
	const struct hgc_op *p = made_by(s, t, HGC_OP_STATIC_TRANSPOSE);

	if (!p || *count(s, t) != 1 || hgc_tensor_is_known(s->g, p->in[0]))
		return NULL;
	return p;
}

/*
 * Does undoing the transpose (inv) keep b's data as it is: do the dims of
 * e (b expanded to rank r) that are not 1 stay in their order?  Then only
 * unit dims move and a reshape (or nothing) is the whole permutation.
 * Equal sizes alone are not enough: x - T(x) on a square x must not read x.
 */
static bool keeps_order(const int64_t *e, const int *inv, int r)
{
	int i, last = -1;

	for (i = 0; i < r; i++) {
		if (e[inv[i]] == 1)
			continue;
		if (inv[i] < last)
			return false;
		last = inv[i];
	}
	return true;
}

/*
 * The operand b of a binary op whose other operand was T_p(x), in x's
 * layout: its own source if it is T_p too, b itself if it broadcasts the
 * same either way (its non-unit dims in place), a reshape if only unit
 * dims move, a transpose if b is a known constant (it folds); else NULL.
 */
static struct hgc_tensor *unpermute(struct tp *s, struct hgc_tensor *b, const int *p, int r)
{
	const struct hgc_op *t = made_by(s, b, HGC_OP_STATIC_TRANSPOSE);
	int q[HGC_MAX_DIMS], inv[HGC_MAX_DIMS], i, lead = r - b->ndims;
	int64_t e[HGC_MAX_DIMS], bd[HGC_MAX_DIMS];

	if (t && b->ndims == r) {
		order_of(t, q);
		if (!memcmp(p, q, (size_t)r * sizeof(*p)))
			return t->in[0];
	}
	if (lead < 0)
		return NULL;
	for (i = 0; i < r; i++) {
		e[i] = i < lead ? 1 : b->dims[i - lead];
		inv[p[i]] = i;
	}
	for (i = 0; i < r; i++)
		bd[i] = e[inv[i]];
	if (keeps_order(e, inv, r))
		return memcmp(e, bd, (size_t)r * sizeof(*e)) ? hgc_pb_reshape(&s->b, b, r, bd) : b;
	if (!hgc_tensor_is_known(s->g, b))
		return NULL;
	return hgc_pb_transpose(&s->b, hgc_pb_reshape(&s->b, b, r, e), inv);
}

/* op on x (the source of its transposed operand) with the same attributes and output type. */
static struct hgc_tensor *op_on(struct tp *s, const struct hgc_op *op, int nin,
				struct hgc_tensor *const *in, const int *p)
{
	struct hgc_op *n = hgc_pb_begin(&s->b, op->kind, op->out[0]->dtype, nin, in);
	int64_t axes[HGC_MAX_DIMS];
	const int64_t *a;
	int na, i, ax;

	hgc_pb_copy_attrs(&s->b, n, op);
	if (agnostic(op) == AG_REDUCE) {
		na = hgc_op_ints(op, "axes", &a);
		for (i = 0; i < na; i++) {
			hgc_norm_axis(a[i], op->in[0]->ndims, &ax);
			axes[i] = p[ax];
		}
		hgc_pb_ints(&s->b, n, "axes", na, axes);
	}
	return hgc_pb_end(&s->b, n);
}

/* Does t have the shape of op's output? */
static bool out_shaped(const struct hgc_op *op, const struct hgc_tensor *t)
{
	const struct hgc_tensor *o = op->out[0];

	return o->ndims == t->ndims && !memcmp(o->dims, t->dims, (size_t)o->ndims * sizeof(*o->dims));
}

/* op(T_p(x), ...) = T_p(op'(x, ...)) for a layout-agnostic op; NULL if it does not apply. */
static struct hgc_tensor *push_rule(struct tp *s, const struct hgc_op *op)
{
	enum agnostic ag = agnostic(op);
	struct hgc_tensor *in[2];
	const struct hgc_op *t;
	int p[HGC_MAX_DIMS], side;

	if (ag == AG_UNARY || ag == AG_REDUCE) {
		if (!(t = sinkable(s, op->in[0])))
			return NULL;
		order_of(t, p);
		return hgc_pb_transpose(&s->b, op_on(s, op, 1, &t->in[0], p), p);
	}
	for (side = 0; ag == AG_BINARY && side < 2; side++) {
		if (!(t = sinkable(s, op->in[side])) || !out_shaped(op, op->in[side]))
			continue;
		order_of(t, p);
		in[side] = t->in[0];
		if (!(in[1 - side] = unpermute(s, op->in[1 - side], p, op->in[side]->ndims)))
			continue;
		return hgc_pb_transpose(&s->b, op_on(s, op, 2, in, p), p);
	}
	return NULL;
}

/* The rewrite of op, or NULL. */
static struct hgc_tensor *rule(struct tp *s, const struct hgc_op *op)
{
	switch (op->kind) {
	case HGC_OP_STATIC_TRANSPOSE: return transpose_rule(s, op);
	case HGC_OP_STATIC_RESHAPE:
	case HGC_OP_REORDER: return reshape_rule(s, op);
	default: return push_rule(s, op);
	}
}

/* One walk over the ops; the number of rewrites, -1 with d set. */
static int one_round(struct hgc_graph *g, struct hgc_diag *d)
{
	struct tp s;
	size_t i;
	int r;

	memset(&s, 0, sizeof(s));
	s.g = g;
	s.n = g->ops.len;
	hgc_pb_init(&s.b, g, d);
	hgc_graph_uses_init(&s.u, g);
	hgc_vec_init(&s.cnt, sizeof(int));
	hgc_vec_init(&s.dead, sizeof(bool));
	hgc_vec_init(&s.stack, sizeof(struct hgc_op *));
	for (i = 0; i < g->tensors.len; i++) {
		const struct hgc_tensor *t = HGC_VEC_AT(&g->tensors, struct hgc_tensor *, i);

		*count(&s, t) = hgc_graph_uses_count(&s.u, t);
	}
	for (i = 0; i < s.n; i++) {
		struct hgc_op *op = HGC_GRAPH_OP(g, i);
		size_t built = g->ops.len;
		struct hgc_tensor *y;

		if (*dead_at(&s, (int)i))
			continue;
		hgc_pb_at(&s.b, op);
		if ((y = rule(&s, op)))
			replace(&s, op, y, built);
		else if (g->ops.len > built)
			hgc_bug("transpose: a rule built ops it did not use");
	}
	dead_at(&s, (int)g->ops.len);
	r = hgc_pb_finish(&s.b, s.dead.data, g->ops.len);
	hgc_graph_uses_release(&s.u);
	hgc_vec_release(&s.cnt);
	hgc_vec_release(&s.dead);
	hgc_vec_release(&s.stack);
	return r ? -1 : s.changes;
}

/* Rounds until nothing changes (each sinks every transpose at least one op). */
int hgc_pass_transpose(struct hgc_graph *g, const struct hgc_pass_switches *sw,
		       struct hgc_diag *d)
{
	int total = 0, n, round;

	(void)sw;
	for (round = 0; round < 64; round++) {
		if ((n = one_round(g, d)) < 0)
			return -1;
		if (!n)
			break;
		total += n;
	}
	return total;
}
