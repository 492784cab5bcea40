/*
 * onednn_graph.c: a spec's graph run with oneDNN 2.6 primitives op by op,
 * as a framework runs them: one primitive per op in graph order on plain
 * (row-major) tensors, except that a MatMul takes a following bias
 * (BiasAdd, or Add of a 1-D constant) as its bias and a following eltwise
 * op (ReLU, Sigmoid, GELU, Tanh) as a post-op, which is what frameworks ask
 * oneDNN for.  Scale and mask (binary ops), SoftMax and LayerNorm are their
 * own primitives (binary, softmax_v2, layer_normalization).  An op whose
 * src has no other use writes in place, as frameworks' in-place ops do, so
 * the footprint stays that of one score tensor.  With `packed`, the
 * weights of a MatMul that are a constant graph input take oneDNN's
 * preferred layout (format tag any), reordered once at preparation.
 */
#include "bench/onednn_int.h"

#include <oneapi/dnnl/dnnl_debug.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Arguments of one primitive at most. */
#define MAX_ARGS 6

/* One primitive and its arguments. */
struct step {
	dnnl_primitive_t p;
	int nargs;
	dnnl_exec_arg_t args[MAX_ARGS];
};

/* The prepared graph: every step, every memory, by tensor id. */
struct net {
	const struct hgc_graph *g;
	const struct hgc_bench_io *io;
	dnnl_engine_t engine;
	dnnl_stream_t stream;
	int packed;
	struct hgc_vec steps;		/* struct step */
	struct hgc_vec mems;		/* dnnl_memory_t: every memory created, to destroy */
	dnnl_memory_t *tmem;		/* per tensor id: its plain memory, or NULL */
	int *uses;			/* per tensor id: ops reading it (+1 for a graph output) */
	bool *done;			/* per op position: folded into an earlier primitive */
	char impl[96];			/* the implementations, for the table */
};

/* Shorthand for the shared check. */
static int ck(dnnl_status_t s, const char *what, struct hgc_diag *d)
{
	return hgc_bench_dnnl_check(s, what, d);
}

/* A plain md of t with rank nd (leading 1s; a scalar is [1]), or its own rank for nd 0. */
static int md_of(const struct hgc_tensor *t, int nd, dnnl_memory_desc_t *md, struct hgc_diag *d)
{
	dnnl_dims_t dims, st;
	int i, k = nd > t->ndims ? nd - t->ndims : 0;

	if (!nd)
		nd = t->ndims ? t->ndims : 1;
	for (i = 0; i < nd; i++)
		dims[i] = i < k ? 1 : (t->ndims ? t->dims[i - k] : 1);
	for (i = nd - 1; i >= 0; i--)
		st[i] = i == nd - 1 ? 1 : st[i + 1] * dims[i + 1];
	if (t->dtype != HGC_DT_F32)
		return hgc_error(d, NULL, "onednn: only f32 graphs are run op by op"), HGC_BENCH_NA;
	return ck(dnnl_memory_desc_init_by_strides(md, nd, dims, dnnl_f32, st), "memory desc", d);
}

/* Remember m for destruction; returns it. */
static dnnl_memory_t keep(struct net *n, dnnl_memory_t m)
{
	*(dnnl_memory_t *)hgc_vec_push(&n->mems) = m;
	return m;
}

/* A memory over handle (DNNL_MEMORY_ALLOCATE: oneDNN's own). */
static int mem(struct net *n, const dnnl_memory_desc_t *md, void *handle, dnnl_memory_t *m,
	       struct hgc_diag *d)
{
	int r = ck(dnnl_memory_create(m, md, n->engine, handle), "memory", d);

	if (!r)
		keep(n, *m);
	return r;
}

/* The data pointer of t's memory. */
static void *handle_of(const struct net *n, const struct hgc_tensor *t)
{
	void *h = NULL;

	dnnl_memory_get_data_handle(n->tmem[t->id], &h);
	return h;
}

/* Memory for t seen through md (its own buffer, another shape or rank). */
static int view(struct net *n, const struct hgc_tensor *t, const dnnl_memory_desc_t *md,
		dnnl_memory_t *m, struct hgc_diag *d)
{
	if (!n->tmem[t->id])
		return hgc_error(d, NULL, "onednn: tensor %s has no memory", t->name ? t->name : "?");
	return mem(n, md, handle_of(n, t), m, d);
}

/* Is t a graph output?  Its index, or -1. */
static int out_index(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	size_t i;

	for (i = 0; i < g->outputs.len; i++)
		if (HGC_GRAPH_OUTPUT(g, i) == t)
			return (int)i;
	return -1;
}

/* The one op reading t when t is no graph output, else NULL. */
static const struct hgc_op *sole_consumer(const struct net *n, const struct hgc_tensor *t,
					  size_t *pos)
{
	size_t i;
	int j;

	if (n->uses[t->id] != 1 || out_index(n->g, t) >= 0)
		return NULL;
	for (i = 0; i < n->g->ops.len; i++)
		for (j = 0; j < HGC_GRAPH_OP(n->g, i)->nin; j++)
			if (HGC_GRAPH_OP(n->g, i)->in[j] == t) {
				*pos = i;
				return HGC_GRAPH_OP(n->g, i);
			}
	return NULL;
}

/*
 * The dst memory of out (plain, md): the caller's output buffer for a graph
 * output, src's memory when src dies here with the same shape (in place),
 * else a new buffer.
 */
static int dst_mem(struct net *n, const struct hgc_tensor *out, const struct hgc_tensor *src,
		   const dnnl_memory_desc_t *md, struct hgc_diag *d)
{
	int o = out_index(n->g, out);
	const struct hgc_tensor *in0 = src;

	if (o >= 0)
		return mem(n, md, n->io->out[o], &n->tmem[out->id], d);
	if (in0 && in0->producer && n->uses[in0->id] == 1 && out_index(n->g, in0) < 0 &&
	    hgc_tensor_nelems(in0) == hgc_tensor_nelems(out) && n->tmem[in0->id])
		return view(n, in0, md, &n->tmem[out->id], d);
	return mem(n, md, DNNL_MEMORY_ALLOCATE, &n->tmem[out->id], d);
}

/* Create the primitive of pd (destroyed here) as the next step. */
static int add_step(struct net *n, dnnl_primitive_desc_t pd, int nargs,
		    const dnnl_exec_arg_t *args, struct hgc_diag *d)
{
	struct step *s = hgc_vec_push(&n->steps);
	const char *impl = "?";
	int r;

	dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
	if (n->steps.len == 1)
		snprintf(n->impl, sizeof(n->impl), "%s", impl);
	r = ck(dnnl_primitive_create(&s->p, pd), "primitive", d);
	dnnl_primitive_desc_destroy(pd);
	s->nargs = nargs;
	memcpy(s->args, args, (size_t)nargs * sizeof(*args));
	return r;
}

/* A primitive desc from an op desc and attributes (attr may be NULL). */
static int make_pd(dnnl_primitive_desc_t *pd, const void *desc, dnnl_primitive_attr_t attr,
		   const struct net *n, const char *what, struct hgc_diag *d)
{
	return ck(dnnl_primitive_desc_create(pd, desc, attr, n->engine, NULL), what, d);
}

/* The eltwise algorithm of op, or 0 when it is none that oneDNN has here. */
static dnnl_alg_kind_t eltwise_alg(const struct hgc_op *op)
{
	switch (op->kind) {
	case HGC_OP_RELU:
		return dnnl_eltwise_relu;
	case HGC_OP_SIGMOID:
		return dnnl_eltwise_logistic;
	case HGC_OP_TANH:
		return dnnl_eltwise_tanh;
	case HGC_OP_GELU:
		return strcmp(hgc_op_string(op, "mode"), "gelu_tanh") ? dnnl_eltwise_gelu_erf
								      : dnnl_eltwise_gelu_tanh;
	default:
		return (dnnl_alg_kind_t)0;
	}
}

/* The binary algorithm of op, or 0. */
static dnnl_alg_kind_t binary_alg(const struct hgc_op *op)
{
	switch (op->kind) {
	case HGC_OP_ADD:
	case HGC_OP_BIAS_ADD:
		return dnnl_binary_add;
	case HGC_OP_SUBTRACT:
		return dnnl_binary_sub;
	case HGC_OP_MULTIPLY:
		return dnnl_binary_mul;
	case HGC_OP_DIVIDE:
		return dnnl_binary_div;
	case HGC_OP_MAXIMUM:
		return dnnl_binary_max;
	case HGC_OP_MINIMUM:
		return dnnl_binary_min;
	default:
		return (dnnl_alg_kind_t)0;
	}
}

/* The md of a MatMul operand: plain storage of t, the last two dims swapped if transposed. */
static int mm_md(const struct hgc_tensor *t, bool trans, int nd, dnnl_memory_desc_t *md,
		 struct hgc_diag *d)
{
	dnnl_dims_t dims, st;
	int64_t x;
	int r = md_of(t, nd, md, d), k = md->ndims;

	if (r || !trans)
		return r;
	memcpy(dims, md->dims, sizeof(dims));
	memcpy(st, md->format_desc.blocking.strides, sizeof(st));
	x = dims[k - 1], dims[k - 1] = dims[k - 2], dims[k - 2] = x;
	x = st[k - 1], st[k - 1] = st[k - 2], st[k - 2] = x;
	return ck(dnnl_memory_desc_init_by_strides(md, k, dims, dnnl_f32, st), "memory desc", d);
}

/* A bias for a MatMul producing [.., N]: a 1-D tensor of N (or [1.., N]), else NULL. */
static const struct hgc_tensor *as_bias(const struct hgc_op *op, const struct hgc_tensor *mm_out)
{
	const struct hgc_tensor *b;
	int64_t n = mm_out->dims[mm_out->ndims - 1];

	if (op->kind == HGC_OP_BIAS_ADD && !strcmp(hgc_op_string(op, "data_format"), "NXC") &&
	    op->in[0] == mm_out)
		return op->in[1];
	if (op->kind != HGC_OP_ADD)
		return NULL;
	b = op->in[0] == mm_out ? op->in[1] : op->in[0];
	if (hgc_tensor_nelems(b) != n || b->dims[b->ndims - 1] != n || b->ndims > mm_out->ndims ||
	    b->producer)
		return NULL;
	return b;
}

/* What a MatMul folds in: its bias, an eltwise post-op, and the tensor it finally writes. */
struct mm_fold {
	const struct hgc_tensor *bias, *out;
	dnnl_alg_kind_t post;
};

/* Fold the bias and the eltwise op that follow op (marking them done). */
static void mm_follow(struct net *n, const struct hgc_op *op, struct mm_fold *f)
{
	const struct hgc_op *c;
	size_t pos;

	f->bias = op->nin > 2 ? op->in[2] : NULL;
	f->out = op->out[0];
	f->post = (dnnl_alg_kind_t)0;
	if (!f->bias && (c = sole_consumer(n, f->out, &pos)) && (f->bias = as_bias(c, f->out))) {
		n->done[pos] = true;
		f->out = c->out[0];
	}
	if ((c = sole_consumer(n, f->out, &pos)) && (f->post = eltwise_alg(c))) {
		n->done[pos] = true;
		f->out = c->out[0];
	}
}

/* The weights memory: the plain one, or reordered once into what pd wants. */
static int mm_weights(struct net *n, dnnl_primitive_desc_t pd, const struct hgc_tensor *b,
		      const dnnl_memory_desc_t *plain, dnnl_memory_t *m, struct hgc_diag *d)
{
	const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	dnnl_memory_t user;
	int r;

	if ((r = view(n, b, plain, &user, d)))
		return r;
	if (dnnl_memory_desc_equal(want, plain)) {
		*m = user;
		return 0;
	}
	if ((r = mem(n, want, DNNL_MEMORY_ALLOCATE, m, d)))
		return r;
	return hgc_bench_dnnl_reorder(user, *m, d);
}

/* MatMul with its folded bias and eltwise post-op. */
static int op_matmul(struct net *n, const struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *a = op->in[0], *b = op->in[1];
	int nd = op->out[0]->ndims, r;
	dnnl_memory_desc_t am, bm, bplain, biasm, om;
	dnnl_matmul_desc_t desc;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t po;
	dnnl_primitive_desc_t pd;
	dnnl_exec_arg_t args[4];
	struct mm_fold f;
	int nargs = 3;

	if (a->ndims != nd || b->ndims != nd)
		return hgc_error(d, NULL, "onednn: MatMul operands of other ranks"), HGC_BENCH_NA;
	mm_follow(n, op, &f);
	if ((r = mm_md(a, hgc_op_bool(op, "transpose_a"), nd, &am, d)) ||
	    (r = mm_md(b, hgc_op_bool(op, "transpose_b"), nd, &bplain, d)) ||
	    (r = md_of(op->out[0], nd, &om, d)) || (f.bias && (r = md_of(f.bias, nd, &biasm, d))))
		return r;
	bm = bplain;
	if (n->packed && !b->producer && b->prop == HGC_PROP_CONSTANT &&
	    (r = ck(dnnl_memory_desc_init_by_tag(&bm, nd, bplain.dims, dnnl_f32,
						 dnnl_format_tag_any), "memory desc", d)))
		return r;
	if ((r = ck(dnnl_matmul_desc_init(&desc, &am, &bm, f.bias ? &biasm : NULL, &om), "matmul",
		    d)))
		return r;
	if (f.post) {
		dnnl_post_ops_create(&po);
		dnnl_post_ops_append_eltwise(po, 1.0f, f.post, 0, 0);
		dnnl_primitive_attr_create(&attr);
		dnnl_primitive_attr_set_post_ops(attr, po);
		dnnl_post_ops_destroy(po);
	}
	r = make_pd(&pd, &desc, attr, n, "matmul", d);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (r)
		return r;
	args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, NULL};
	args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, NULL};
	args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, NULL};
	if ((r = view(n, a, &am, &args[0].memory, d)) ||
	    (r = mm_weights(n, pd, b, &bplain, &args[1].memory, d)) ||
	    (r = dst_mem(n, f.out, NULL, &om, d)) ||
	    (f.bias && (r = view(n, f.bias, &biasm, &args[3].memory, d)))) {
		dnnl_primitive_desc_destroy(pd);
		return r;
	}
	args[2].memory = n->tmem[f.out->id];
	if (f.bias)
		args[3].arg = DNNL_ARG_BIAS, nargs = 4;
	return add_step(n, pd, nargs, args, d);
}

/* A binary op with numpy broadcast of src1 (src0 must have the dst's shape;
   commutative ops swap their operands when it is the other way). */
static int op_binary(struct net *n, const struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *s0 = op->in[0], *s1 = op->in[1], *out = op->out[0];
	dnnl_memory_desc_t m0, m1, mo;
	dnnl_binary_desc_t desc;
	dnnl_primitive_desc_t pd;
	dnnl_exec_arg_t args[3];
	int nd = out->ndims ? out->ndims : 1, r;

	if (hgc_tensor_nelems(s0) != hgc_tensor_nelems(out)) {
		if (op->kind == HGC_OP_SUBTRACT || op->kind == HGC_OP_DIVIDE ||
		    op->kind == HGC_OP_BIAS_ADD || hgc_tensor_nelems(s1) != hgc_tensor_nelems(out))
			return hgc_error(d, NULL, "onednn: binary src0 broadcast"), HGC_BENCH_NA;
		s0 = op->in[1], s1 = op->in[0];
	}
	if (op->kind == HGC_OP_BIAS_ADD && strcmp(hgc_op_string(op, "data_format"), "NXC"))
		return hgc_error(d, NULL, "onednn: BiasAdd NCX"), HGC_BENCH_NA;
	if ((r = md_of(s0, nd, &m0, d)) || (r = md_of(s1, nd, &m1, d)) || (r = md_of(out, nd, &mo, d)))
		return r;
	if ((r = ck(dnnl_binary_desc_init(&desc, binary_alg(op), &m0, &m1, &mo), "binary", d)) ||
	    (r = make_pd(&pd, &desc, NULL, n, "binary", d)))
		return r;
	args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC_0, NULL};
	args[1] = (dnnl_exec_arg_t){DNNL_ARG_SRC_1, NULL};
	if ((r = view(n, s0, &m0, &args[0].memory, d)) || (r = view(n, s1, &m1, &args[1].memory, d)) ||
	    (r = dst_mem(n, out, s0, &mo, d))) {
		dnnl_primitive_desc_destroy(pd);
		return r;
	}
	args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, n->tmem[out->id]};
	return add_step(n, pd, 3, args, d);
}

/* A unary op: eltwise or softmax (desc made by the caller's kind). */
static int op_unary(struct net *n, const struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *src = op->in[0], *out = op->out[0];
	dnnl_memory_desc_t ms, mo;
	dnnl_eltwise_desc_t ed;
	dnnl_softmax_v2_desc_t sd;
	dnnl_primitive_desc_t pd;
	dnnl_exec_arg_t args[2];
	int r, axis;

	if ((r = md_of(src, 0, &ms, d)) || (r = md_of(out, 0, &mo, d)))
		return r;
	if (op->kind == HGC_OP_SOFTMAX) {
		axis = (int)hgc_op_int(op, "axis");
		axis = axis < 0 ? axis + ms.ndims : axis;
		r = ck(dnnl_softmax_v2_forward_desc_init(&sd, dnnl_forward_inference,
							 dnnl_softmax_accurate, &ms, &mo, axis),
		       "softmax", d);
		r = r ? r : make_pd(&pd, &sd, NULL, n, "softmax", d);
	} else {
		r = ck(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, eltwise_alg(op),
						      &ms, 0, 0), "eltwise", d);
		r = r ? r : make_pd(&pd, &ed, NULL, n, "eltwise", d);
	}
	if (r)
		return r;
	args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, n->tmem[src->id]};
	if ((r = dst_mem(n, out, src, &mo, d))) {
		dnnl_primitive_desc_destroy(pd);
		return r;
	}
	args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, n->tmem[out->id]};
	return add_step(n, pd, 2, args, d);
}

/* LayerNorm over the last axis with gamma (scale) and beta (shift). */
static int op_layernorm(struct net *n, const struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_tensor *src = op->in[0], *out = op->out[0];
	bool affine = hgc_op_bool(op, "use_affine") && op->nin == 3;
	int64_t axis = hgc_op_int(op, "begin_norm_axis");
	dnnl_memory_desc_t ms, mo, mg;
	dnnl_layer_normalization_desc_t desc;
	dnnl_primitive_desc_t pd;
	dnnl_exec_arg_t args[4];
	int r;

	if (axis != -1 && axis != src->ndims - 1)
		return hgc_error(d, NULL, "onednn: LayerNorm not over the last axis"), HGC_BENCH_NA;
	if ((r = md_of(src, 0, &ms, d)) || (r = md_of(out, 0, &mo, d)) ||
	    (affine && (r = md_of(op->in[1], 0, &mg, d))))
		return r;
	if ((r = ck(dnnl_layer_normalization_forward_desc_init(
			    &desc, dnnl_forward_inference, &ms, NULL, (float)hgc_op_float(op, "epsilon"),
			    affine ? dnnl_use_scale | dnnl_use_shift : 0), "layer normalization", d)) ||
	    (r = make_pd(&pd, &desc, NULL, n, "layer normalization", d)))
		return r;
	args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, n->tmem[src->id]};
	args[2] = (dnnl_exec_arg_t){DNNL_ARG_SCALE, affine ? n->tmem[op->in[1]->id] : NULL};
	args[3] = (dnnl_exec_arg_t){DNNL_ARG_SHIFT, affine ? n->tmem[op->in[2]->id] : NULL};
	if ((r = dst_mem(n, out, src, &mo, d))) {
		dnnl_primitive_desc_destroy(pd);
		return r;
	}
	args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, n->tmem[out->id]};
	return add_step(n, pd, affine ? 4 : 2, args, d);
}

/* One op (not folded into an earlier primitive). */
static int op_any(struct net *n, const struct hgc_op *op, struct hgc_diag *d)
{
	if (op->kind == HGC_OP_MATMUL)
		return op_matmul(n, op, d);
	if (binary_alg(op))
		return op_binary(n, op, d);
	if (eltwise_alg(op) || op->kind == HGC_OP_SOFTMAX)
		return op_unary(n, op, d);
	if (op->kind == HGC_OP_LAYER_NORM)
		return op_layernorm(n, op, d);
	hgc_error(d, NULL, "onednn: no primitive for %s in the op-by-op runner",
		  hgc_op_table[op->kind].name);
	return HGC_BENCH_NA;
}

/* Memories of the graph inputs over io's buffers; use counts of every tensor. */
static int net_inputs(struct net *n, struct hgc_diag *d)
{
	const struct hgc_graph *g = n->g;
	dnnl_memory_desc_t md;
	size_t i;
	int j, r;

	for (i = 0; i < g->ops.len; i++)
		for (j = 0; j < HGC_GRAPH_OP(g, i)->nin; j++)
			n->uses[HGC_GRAPH_OP(g, i)->in[j]->id]++;
	for (i = 0; i < g->outputs.len; i++)
		n->uses[HGC_GRAPH_OUTPUT(g, i)->id]++;
	for (i = 0; i < g->inputs.len; i++) {
		if ((r = md_of(HGC_GRAPH_INPUT(g, i), 0, &md, d)) ||
		    (r = mem(n, &md, n->io->in[i], &n->tmem[HGC_GRAPH_INPUT(g, i)->id], d)))
			return r;
		if (out_index(g, HGC_GRAPH_INPUT(g, i)) >= 0)
			return hgc_error(d, NULL, "onednn: an input is an output"), HGC_BENCH_NA;
	}
	return 0;
}

/* The timed call: every primitive in order. */
static void run(void *ctx)
{
	struct net *n = ctx;
	size_t i;

	for (i = 0; i < n->steps.len; i++) {
		struct step *s = &HGC_VEC_AT(&n->steps, struct step, i);

		dnnl_primitive_execute(s->p, n->stream, s->nargs, s->args);
	}
	dnnl_stream_wait(n->stream);
}

/* Destroy every primitive and memory. */
static void release(void *ctx)
{
	struct net *n = ctx;
	size_t i;

	for (i = 0; i < n->steps.len; i++)
		if (HGC_VEC_AT(&n->steps, struct step, i).p)
			dnnl_primitive_destroy(HGC_VEC_AT(&n->steps, struct step, i).p);
	for (i = 0; i < n->mems.len; i++)
		dnnl_memory_destroy(HGC_VEC_AT(&n->mems, dnnl_memory_t, i));
	hgc_vec_release(&n->steps);
	hgc_vec_release(&n->mems);
	free(n->tmem);
	free(n->uses);
	free(n->done);
	free(n);
}

/*
 * Prepare w's graph op by op on io's buffers (outputs written straight into
 * io->out); weights in oneDNN's preferred layout when packed.  0,
 * HGC_BENCH_NA (an op it cannot run; d says which) or -1.
 */
int hgc_bench_onednn_graph(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			   int packed, struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	const struct hgc_graph *g = w->spec->graph;
	struct net *n = hgc_xcalloc(1, sizeof(*n));
	double t0 = hgc_now();
	size_t i;
	int r;

	n->g = g;
	n->io = io;
	n->packed = packed;
	hgc_vec_init(&n->steps, sizeof(struct step));
	hgc_vec_init(&n->mems, sizeof(dnnl_memory_t));
	n->tmem = hgc_xcalloc((size_t)g->next_id + 1, sizeof(dnnl_memory_t));
	n->uses = hgc_xcalloc((size_t)g->next_id + 1, sizeof(int));
	n->done = hgc_xcalloc(g->ops.len + 1, sizeof(bool));
	r = hgc_bench_dnnl_start(&n->engine, &n->stream, d);
	r = r ? r : net_inputs(n, d);
	for (i = 0; !r && i < g->ops.len; i++)
		if (!n->done[i])
			r = op_any(n, HGC_GRAPH_OP(g, i), d);
	if (r) {
		release(n);
		return r;
	}
	if (n->steps.len > 1)
		snprintf(n->impl + strlen(n->impl), sizeof(n->impl) - strlen(n->impl), " +%zu",
			 n->steps.len - 1);
	*k = (struct hgc_bench_kernel){run, NULL, release, n, (hgc_now() - t0) * 1e3, n->impl};
	return 0;
}
