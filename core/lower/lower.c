/*
 * lower.c: the per-op dispatcher and the lowering of a whole graph into a
 * module whose entry function computes it.  The entry takes one tensor per
 * graph input then one per graph output, dense row-major in the graph's
 * types (a scalar as a one-element tensor); intermediates are local tensors
 * defined just before the op that computes them.
 */
#include "lower_int.h"

#include <string.h>

/* The lowering of each op kind; complex ops lower directly too. */
static hgc_lower_fn *const lowerers[HGC_OP_COUNT] = {
	[HGC_OP_MATMUL] = hgc_lower_matmul,
	[HGC_OP_CONVOLUTION] = hgc_lower_conv,
	[HGC_OP_BIAS_ADD] = hgc_lower_bias_add,
	[HGC_OP_ADD] = hgc_lower_binary,
	[HGC_OP_SUBTRACT] = hgc_lower_binary,
	[HGC_OP_MULTIPLY] = hgc_lower_binary,
	[HGC_OP_DIVIDE] = hgc_lower_binary,
	[HGC_OP_MAXIMUM] = hgc_lower_binary,
	[HGC_OP_MINIMUM] = hgc_lower_binary,
	[HGC_OP_ADD_ROUND] = hgc_lower_binary,
	[HGC_OP_RELU] = hgc_lower_unary,
	[HGC_OP_LEAKY_RELU] = hgc_lower_unary,
	[HGC_OP_GELU] = hgc_lower_unary,
	[HGC_OP_SIGMOID] = hgc_lower_unary,
	[HGC_OP_TANH] = hgc_lower_unary,
	[HGC_OP_ELU] = hgc_lower_unary,
	[HGC_OP_HARD_SWISH] = hgc_lower_unary,
	[HGC_OP_HARD_SIGMOID] = hgc_lower_unary,
	[HGC_OP_SOFT_PLUS] = hgc_lower_unary,
	[HGC_OP_MISH] = hgc_lower_unary,
	[HGC_OP_EXP] = hgc_lower_unary,
	[HGC_OP_LOG] = hgc_lower_unary,
	[HGC_OP_SQRT] = hgc_lower_unary,
	[HGC_OP_SQUARE] = hgc_lower_unary,
	[HGC_OP_ABS] = hgc_lower_unary,
	[HGC_OP_RECIPROCAL] = hgc_lower_unary,
	[HGC_OP_POW] = hgc_lower_unary,
	[HGC_OP_CLAMP] = hgc_lower_unary,
	[HGC_OP_ROUND] = hgc_lower_unary,
	[HGC_OP_SOFTMAX] = hgc_lower_softmax,
	[HGC_OP_LOG_SOFTMAX] = hgc_lower_softmax,
	[HGC_OP_LAYER_NORM] = hgc_lower_layer_norm,
	[HGC_OP_BATCH_NORM_INFERENCE] = hgc_lower_batch_norm,
	[HGC_OP_REDUCE_SUM] = hgc_lower_reduce,
	[HGC_OP_REDUCE_MEAN] = hgc_lower_reduce,
	[HGC_OP_REDUCE_MAX] = hgc_lower_reduce,
	[HGC_OP_REDUCE_MIN] = hgc_lower_reduce,
	[HGC_OP_REDUCE_PROD] = hgc_lower_reduce,
	[HGC_OP_REDUCE_L1] = hgc_lower_reduce,
	[HGC_OP_REDUCE_L2] = hgc_lower_reduce,
	[HGC_OP_MAX_POOL] = hgc_lower_pool,
	[HGC_OP_AVG_POOL] = hgc_lower_pool,
	[HGC_OP_STATIC_TRANSPOSE] = hgc_lower_transpose,
	[HGC_OP_STATIC_RESHAPE] = hgc_lower_reshape,
	[HGC_OP_REORDER] = hgc_lower_reorder,
	[HGC_OP_CONCAT] = hgc_lower_concat,
	[HGC_OP_SELECT] = hgc_lower_select,
	[HGC_OP_QUANTIZE] = hgc_lower_quantize,
	[HGC_OP_DEQUANTIZE] = hgc_lower_dequantize,
	[HGC_OP_TYPE_CAST] = hgc_lower_type_cast,
	[HGC_OP_ERF] = hgc_lower_unary,
};

static const struct hgc_lower_opts default_opts;

/* A context building into f of m. */
void hgc_lower_ctx_init(struct hgc_lower_ctx *cx, struct hgc_tir_module *m,
			struct hgc_tir_func *f, const struct hgc_lower_opts *opts)
{
	memset(cx, 0, sizeof(*cx));
	cx->m = m;
	cx->f = f;
	cx->opts = opts ? opts : &default_opts;
	cx->parallel_min = cx->opts->parallel_min > 0 ? cx->opts->parallel_min : 32768;
}

/* Lower one op onto views. */
int hgc_lower_op(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		 struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		 struct hgc_diag *d)
{
	int i;

	if ((unsigned)op->kind >= HGC_OP_COUNT || !lowerers[op->kind])
		return hgc_error(d, op->loc.file ? &op->loc : NULL, "cannot lower %s yet",
				 (unsigned)op->kind < HGC_OP_COUNT ? hgc_op_table[op->kind].name
								  : "an unknown op");
	if (op->nout != 1 || !out)
		return hgc_op_error(op, d, "lowering needs exactly one output view");
	for (i = 0; i < op->nin; i++)
		if (!in || !in[i])
			return hgc_op_error(op, d, "lowering needs a view of input %d", i);
	return lowerers[op->kind](cx, op, block, in, out, d);
}

/* A name for the TIR tensor of t: its own, or a prefix and its id. */
static const char *tensor_name(struct hgc_lower_ctx *cx, const struct hgc_tensor *t,
			       const char *prefix)
{
	if (t->name && *t->name)
		return t->name;
	return hgc_arena_printf(&cx->m->arena, "%s%d", prefix, t->id);
}

/* Record the view of a plain dense TIR tensor holding graph tensor t. */
static void bind_plain(struct hgc_lower_ctx *cx, const struct hgc_tensor *t,
		       struct hgc_tir_tensor *tt)
{
	cx->views[t->id] = t->ndims ? hgc_lower_view_plain(tt) : hgc_lower_view_scalar(tt);
	cx->have[t->id] = true;
}

/* The dims of t's TIR tensor: its own, or [1] for a scalar. */
static int tir_dims(const struct hgc_tensor *t, int64_t *dims)
{
	if (!t->ndims) {
		dims[0] = 1;
		return 1;
	}
	memcpy(dims, t->dims, (size_t)t->ndims * sizeof(*dims));
	return t->ndims;
}

/* A tensor parameter of the entry for graph input or output t. */
static struct hgc_tir_tensor *add_param(struct hgc_lower_ctx *cx, const struct hgc_tensor *t,
					const char *prefix, struct hgc_diag *d)
{
	int64_t dims[HGC_MAX_DIMS];
	int n = tir_dims(t, dims);

	if (!hgc_tensor_is_dense(t)) {
		hgc_error(d, t->loc.file ? &t->loc : NULL,
			  "cannot lower graph %s %%%d with a non-dense layout yet",
			  prefix[0] == 'i' ? "input" : "output", t->id);
		return NULL;
	}
	return hgc_tir_func_add_tensor(cx->f, tensor_name(cx, t, prefix), hgc_lower_type(t->dtype),
				       n, dims);
}

/* The value 0 of a TIR element kind. */
static struct hgc_tir_expr *zero(struct hgc_lower_ctx *cx, struct hgc_tir_type t)
{
	switch (t.kind) {
	case HGC_TIR_F32: return lw_f(cx, 0);
	case HGC_TIR_BF16: return lw_cast(cx, HGC_TIR_BF16, lw_f(cx, 0));
	case HGC_TIR_BOOL: return hgc_tir_bool(cx->m, false);
	default: return hgc_tir_int(cx->m, (enum hgc_tir_kind)t.kind, 0);
	}
}

/* Physical dims of t's blocked layout (outer parts padded up); true if any pads. */
static bool blocked_dims(const struct hgc_tensor *t, int64_t *pd)
{
	const struct hgc_layout *l = &t->layout;
	int64_t inner;
	bool padded = false;
	int j, k, dim;

	for (j = 0; j < l->nphys; j++) {
		dim = l->phys[j].dim;
		for (k = 0; k < j && l->phys[k].dim != dim; k++)
			;
		pd[j] = l->phys[j].block;
		if (k < j)
			continue;
		for (inner = 1, k = j + 1; k < l->nphys; k++)
			inner *= l->phys[k].dim == dim ? l->phys[k].block : 1;
		pd[j] = (t->dims[dim] + inner - 1) / inner;
		padded |= t->dims[dim] % inner != 0;
	}
	return padded;
}

/* Zero every element of a local tensor (the padding of a blocked one must read 0). */
static void zero_fill(struct hgc_lower_ctx *cx, struct hgc_tir_tensor *tt, int n,
		      const int64_t *dims)
{
	struct hgc_tir_expr *idx[HGC_MAX_DIMS];
	struct lw_nest nest;

	lw_loops(cx, cx->f->body, n, dims, n, lw_prod(n, dims), &nest);
	lw_index(cx, &nest, idx);
	hgc_tir_store(cx->m, nest.body, tt, n, idx, zero(cx, tt->elem));
}

/* A local tensor for the intermediate t, defined here in the entry, with its view. */
static int define_local(struct hgc_lower_ctx *cx, const struct hgc_tensor *t,
			struct hgc_diag *d)
{
	const struct hgc_loc *loc = t->loc.file ? &t->loc : NULL;
	const char *name = tensor_name(cx, t, "t");
	struct hgc_tir_type ty = hgc_lower_type(t->dtype);
	int64_t dims[HGC_MAX_DIMS];
	struct hgc_tir_tensor *tt;
	bool padded;
	int n;

	if (hgc_tensor_is_dense(t)) {
		n = tir_dims(t, dims);
		tt = hgc_tir_tensor_newc(cx->m, name, ty, HGC_TIR_LOCAL, n, dims);
		hgc_tir_def_tensor(cx->m, cx->f->body, tt);
		bind_plain(cx, t, tt);
		return 0;
	}
	if (t->layout.kind != HGC_LAYOUT_BLOCKED || t->layout.nphys > HGC_MAX_DIMS ||
	    !t->ndims)
		return hgc_error(d, loc, "cannot lower tensor %%%d with this layout yet", t->id);
	n = t->layout.nphys;
	padded = blocked_dims(t, dims);
	tt = hgc_tir_tensor_newc(cx->m, name, ty, HGC_TIR_LOCAL, n, dims);
	hgc_tir_def_tensor(cx->m, cx->f->body, tt);
	if (padded)
		zero_fill(cx, tt, n, dims);
	cx->views[t->id] = hgc_lower_view_blocked(tt, t->ndims, t->dims, &t->layout);
	cx->have[t->id] = true;
	return 0;
}

/* The view of an op input: computed already, or constant data embedded by a pass. */
static struct hgc_lower_view *use(struct hgc_lower_ctx *cx, const struct hgc_tensor *t,
				  struct hgc_diag *d)
{
	int64_t dims[HGC_MAX_DIMS];
	struct hgc_tir_tensor *tt;
	int n;

	if (cx->have[t->id])
		return &cx->views[t->id];
	if (t->producer || !t->data) {
		hgc_error(d, t->loc.file ? &t->loc : NULL, "tensor %%%d is used before it is computed",
			  t->id);
		return NULL;
	}
	n = tir_dims(t, dims);
	tt = hgc_tir_module_add_const(cx->m, tensor_name(cx, t, "c"), hgc_lower_type(t->dtype), n,
				      dims, t->data);
	bind_plain(cx, t, tt);
	return &cx->views[t->id];
}

/* Parameters: inputs, then outputs; an output computed by an op is written in place,
   any other (an input, a repeat, a constant) is copied at the end (copy[k] set). */
static int bind_params(struct hgc_lower_ctx *cx, const struct hgc_graph *g,
		       struct hgc_tir_tensor **outp, bool *copy, struct hgc_diag *d)
{
	const struct hgc_tensor *t;
	struct hgc_tir_tensor *tt;
	size_t i;

	for (i = 0; i < g->inputs.len; i++) {
		t = HGC_GRAPH_INPUT(g, i);
		if (cx->have[t->id])
			return hgc_error(d, NULL, "graph input %%%d is listed twice", t->id);
		if (!(tt = add_param(cx, t, "in", d)))
			return -1;
		bind_plain(cx, t, tt);
	}
	for (i = 0; i < g->outputs.len; i++) {
		t = HGC_GRAPH_OUTPUT(g, i);
		if (!(outp[i] = add_param(cx, t, "out", d)))
			return -1;
		copy[i] = cx->have[t->id] || !t->producer;
		if (!copy[i])
			bind_plain(cx, t, outp[i]);
	}
	return 0;
}

/* One op over whole-tensor views, offered to the template hook first if tunable. */
static int lower_one(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_diag *d)
{
	struct hgc_lower_view *in[64], *out;
	const struct hgc_tensor *t = op->out[0];
	int i, r;

	if (cx->opts->lower_first && (r = cx->opts->lower_first(cx, op, d)))
		return r < 0 ? -1 : 0;
	if (cx->opts->skip && cx->opts->skip(cx, op))
		return 0;
	if (op->nin > 64 || op->nout != 1)
		return hgc_op_error(op, d, "cannot lower an op with %d inputs and %d outputs",
				    op->nin, op->nout);
	for (i = 0; i < op->nin; i++)
		if (!(in[i] = use(cx, op->in[i], d)))
			return -1;
	if (!cx->have[t->id] && define_local(cx, t, d))
		return -1;
	out = &cx->views[t->id];
	if (hgc_op_table[op->kind].category == HGC_CAT_TUNABLE && cx->opts->lower_tunable) {
		r = cx->opts->lower_tunable(cx, op, cx->f->body, in, out, d);
		if (r)
			return r < 0 ? -1 : 0;
	}
	return hgc_lower_op(cx, op, cx->f->body, in, out, d);
}

/* Lower every op, then copy the outputs that were not written in place. */
static int lower_body(struct hgc_lower_ctx *cx, const struct hgc_graph *g,
		      struct hgc_tir_tensor **outp, const bool *copy, struct hgc_diag *d)
{
	struct hgc_lower_view *src, dst;
	size_t i;

	for (i = 0; i < g->ops.len; i++)
		if (lower_one(cx, HGC_GRAPH_OP(g, i), d))
			return -1;
	for (i = 0; i < g->outputs.len; i++) {
		if (!copy[i])
			continue;
		if (!(src = use(cx, HGC_GRAPH_OUTPUT(g, i), d)))
			return -1;
		dst = HGC_GRAPH_OUTPUT(g, i)->ndims ? hgc_lower_view_plain(outp[i])
						    : hgc_lower_view_scalar(outp[i]);
		if (hgc_lower_copy(cx, cx->f->body, src, &dst, d))
			return -1;
	}
	return 0;
}

/* The module computing g. */
struct hgc_tir_module *hgc_lower_graph(const struct hgc_graph *g, const struct hgc_lower_opts *opts,
				       struct hgc_diag *d)
{
	struct hgc_tir_module *m = hgc_tir_module_new("graph");
	size_t nout = g->outputs.len + 1, nid = (size_t)g->next_id + 1;
	struct hgc_tir_tensor **outp;
	struct hgc_lower_ctx cx;
	bool *copy;

	hgc_lower_ctx_init(&cx, m, NULL, opts);
	cx.f = hgc_tir_func_new(m, cx.opts->entry ? cx.opts->entry : "entry",
				hgc_tir_ty(HGC_TIR_VOID));
	m->entry = cx.f;
	cx.g = g;
	cx.views = hgc_arena_calloc(&m->arena, nid, sizeof(*cx.views));
	cx.have = hgc_arena_calloc(&m->arena, nid, sizeof(*cx.have));
	outp = hgc_arena_calloc(&m->arena, nout, sizeof(*outp));
	copy = hgc_arena_calloc(&m->arena, nout, sizeof(*copy));
	if (bind_params(&cx, g, outp, copy, d) || lower_body(&cx, g, outp, copy, d)) {
		hgc_tir_module_free(m);
		return NULL;
	}
	return m;
}
