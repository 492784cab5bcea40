/*
 * onednn.c: the oneDNN 2.6 columns (Debian's libdnnl, OpenMP runtime, so it
 * follows omp_set_num_threads; primitives are created after the thread
 * count is set because oneDNN partitions work at creation).
 *
 * "onednn" is what a framework gets when it hands over its own plain
 * tensors: row-major matmul operands, NHWC activations and HWIO weights.
 * "onednn_packed" lets oneDNN choose its preferred weight layout (format
 * tag any), the comparison the issue sets: the weights are reordered once
 * before the timed runs, the activations stay as the framework has them.
 * "onednn_blocked" (conv only) lets it choose every layout, as a network
 * kept in oneDNN's blocked layouts from end to end would run: src is
 * reordered once before the timed runs and dst back only to check it.
 * Only primitive execution is timed.
 */
#include "bench/onednn_int.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One engine and stream for the process. */
static dnnl_engine_t engine;
static dnnl_stream_t stream;

/* A prepared primitive and everything it owns. */
struct prim {
	dnnl_primitive_t p;
	dnnl_memory_t mem[3];		/* src, weights, dst as the primitive sees them */
	dnnl_memory_t user_dst;		/* io->dst when the primitive writes elsewhere */
	dnnl_exec_arg_t args[3];
	char impl[64];
};

/* A failed oneDNN call as a diagnostic; "unimplemented" means not available (1). */
static int check(dnnl_status_t s, const char *what, struct hgc_diag *d)
{
	if (s == dnnl_success)
		return 0;
	hgc_error(d, NULL, "onednn: %s: %s", what, dnnl_status2str(s));
	return s == dnnl_unimplemented ? HGC_BENCH_NA : -1;
}

/* Create the engine and stream on first use. */
static int start(struct hgc_diag *d)
{
	int r;

	if (stream)
		return 0;
	if ((r = check(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine", d)))
		return r;
	return check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "stream", d);
}

/* Destroy the engine and stream. */
void hgc_bench_onednn_shutdown(void)
{
	if (stream)
		dnnl_stream_destroy(stream);
	if (engine)
		dnnl_engine_destroy(engine);
	stream = NULL;
	engine = NULL;
}

/* Row-major memory desc of n dims. */
static int plain_md(dnnl_memory_desc_t *md, int n, const int64_t *dims, dnnl_data_type_t dt,
		    struct hgc_diag *d)
{
	dnnl_dims_t dd, st;
	int i;

	for (i = n - 1; i >= 0; i--) {
		dd[i] = dims[i];
		st[i] = i == n - 1 ? 1 : st[i + 1] * dd[i + 1];
	}
	return check(dnnl_memory_desc_init_by_strides(md, n, dd, dt, st), "memory desc", d);
}

/* Memory desc from a format tag. */
static int tag_md(dnnl_memory_desc_t *md, int n, const int64_t *dims, dnnl_data_type_t dt,
		  dnnl_format_tag_t tag, struct hgc_diag *d)
{
	dnnl_dims_t dd;
	int i;

	for (i = 0; i < n; i++)
		dd[i] = dims[i];
	return check(dnnl_memory_desc_init_by_tag(md, n, dd, dt, tag), "memory desc", d);
}

/* Run a one-off reorder from one memory to another. */
static int reorder(dnnl_memory_t from, dnnl_memory_t to, struct hgc_diag *d)
{
	const dnnl_memory_desc_t *fm, *tm;
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t p;
	dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
	int r;

	dnnl_memory_get_memory_desc(from, &fm);
	dnnl_memory_get_memory_desc(to, &tm);
	if ((r = check(dnnl_reorder_primitive_desc_create(&pd, fm, engine, tm, engine, NULL),
		       "reorder", d)))
		return r;
	r = check(dnnl_primitive_create(&p, pd), "reorder", d);
	dnnl_primitive_desc_destroy(pd);
	if (r)
		return r;
	r = check(dnnl_primitive_execute(p, stream, 2, args), "reorder", d);
	dnnl_stream_wait(stream);
	dnnl_primitive_destroy(p);
	return r;
}

/*
 * Memory for argument `what` of pd.  When the primitive wants the plain
 * layout `user`, it uses the caller's buffer; otherwise it gets its own,
 * filled from the buffer by a reorder when `in` is set.
 */
static int arg_mem(dnnl_memory_t *m, dnnl_memory_t *user_out, dnnl_primitive_desc_t pd,
		   dnnl_query_t what, const dnnl_memory_desc_t *user, void *buf, int in,
		   struct hgc_diag *d)
{
	const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, what, 0);
	dnnl_memory_t u;
	int r;

	if (dnnl_memory_desc_equal(want, user))
		return check(dnnl_memory_create(m, user, engine, buf), "memory", d);
	if ((r = check(dnnl_memory_create(m, want, engine, DNNL_MEMORY_ALLOCATE), "memory", d)))
		return r;
	if ((r = check(dnnl_memory_create(&u, user, engine, buf), "memory", d)))
		return r;
	r = in ? reorder(u, *m, d) : 0;
	if (user_out && !r)
		*user_out = u;
	else
		dnnl_memory_destroy(u);
	return r;
}

/* Time one execution (what the harness measures). */
static void run(void *ctx)
{
	struct prim *p = ctx;

	dnnl_primitive_execute(p->p, stream, 3, p->args);
	dnnl_stream_wait(stream);
}

/* Bring a dst that oneDNN wrote in its own layout back into io->dst. */
static int fetch(void *ctx, const struct hgc_bench_io *io, struct hgc_diag *d)
{
	struct prim *p = ctx;

	return p->user_dst ? reorder(p->mem[2], p->user_dst, d) : 0;
}

/* Destroy a prepared primitive. */
static void release(void *ctx)
{
	struct prim *p = ctx;
	int i;

	if (p->p)
		dnnl_primitive_destroy(p->p);
	for (i = 0; i < 3; i++)
		if (p->mem[i])
			dnnl_memory_destroy(p->mem[i]);
	if (p->user_dst)
		dnnl_memory_destroy(p->user_dst);
	free(p);
}

/* Memories, primitive and kernel from a primitive desc (takes pd). */
static int finish(dnnl_primitive_desc_t pd, const dnnl_memory_desc_t user[3],
		  const struct hgc_bench_io *io, double t0, struct hgc_bench_kernel *k,
		  struct hgc_diag *d)
{
	static const int arg[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
	static const dnnl_query_t q[3] = {dnnl_query_src_md, dnnl_query_weights_md,
					  dnnl_query_dst_md};
	void *buf[3] = {io->src, io->wei, io->dst};
	struct prim *p = hgc_xcalloc(1, sizeof(*p));
	const char *impl = "?";
	int i, r = 0;

	dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
	snprintf(p->impl, sizeof(p->impl), "%s", impl);
	for (i = 0; i < 3 && !r; i++) {
		r = arg_mem(&p->mem[i], i == 2 ? &p->user_dst : NULL, pd, q[i], &user[i], buf[i],
			    i < 2, d);
		p->args[i] = (dnnl_exec_arg_t){arg[i], p->mem[i]};
	}
	if (!r)
		r = check(dnnl_primitive_create(&p->p, pd), "primitive", d);
	dnnl_primitive_desc_destroy(pd);
	if (r) {
		release(p);
		return r;
	}
	*k = (struct hgc_bench_kernel){run, fetch, release, p, (hgc_now() - t0) * 1e3, p->impl};
	return 0;
}

/* The matmul memory descs: plain src and dst, weights plain or "any". */
static int mm_mds(const struct hgc_bench_work *w, int packed, dnnl_memory_desc_t user[3],
		  dnnl_memory_desc_t *wei, struct hgc_diag *d)
{
	const struct hgc_bench_matmul *m = &w->shape.mm;
	int i8 = w->dt == HGC_BENCH_INT8, r;

	if ((r = plain_md(&user[0], m->ndims, m->src, i8 ? dnnl_u8 : dnnl_f32, d)) ||
	    (r = plain_md(&user[1], m->ndims, m->wei, i8 ? dnnl_s8 : dnnl_f32, d)) ||
	    (r = plain_md(&user[2], m->ndims, m->dst, i8 ? dnnl_u8 : dnnl_f32, d)))
		return r;
	*wei = user[1];
	if (packed)
		r = tag_md(wei, m->ndims, m->wei, i8 ? dnnl_s8 : dnnl_f32, dnnl_format_tag_any, d);
	return r;
}

/* A matmul primitive, with per-column output scales for int8. */
static int matmul(const struct hgc_bench_work *w, const struct hgc_bench_io *io, int packed,
		  struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	const struct hgc_bench_matmul *m = &w->shape.mm;
	dnnl_memory_desc_t user[3], wei;
	dnnl_matmul_desc_t desc;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd;
	double t0 = hgc_now();
	int r;

	if ((r = start(d)) || (r = mm_mds(w, packed, user, &wei, d)))
		return r;
	if ((r = check(dnnl_matmul_desc_init(&desc, &user[0], &wei, NULL, &user[2]), "matmul", d)))
		return r;
	if (w->dt == HGC_BENCH_INT8) {
		dnnl_primitive_attr_create(&attr);
		r = check(dnnl_primitive_attr_set_output_scales(attr, m->wei[m->ndims - 1],
								1 << (m->ndims - 1), io->scales),
			  "output scales", d);
	}
	if (!r)
		r = check(dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL), "matmul", d);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return r ? r : finish(pd, user, io, t0, k, d);
}

/* Which layouts a conv primitive is given: the user's, or "any" for the weights or for all. */
enum conv_layouts { CONV_PLAIN, CONV_PACKED, CONV_BLOCKED };

/* Conv memory descs: NHWC src and dst, HWIO (HWIGO) weights; "any" as lay says. */
static int conv_mds(const struct hgc_bench_conv *c, enum conv_layouts lay,
		    dnnl_memory_desc_t user[3], dnnl_memory_desc_t use[3], struct hgc_diag *d)
{
	int64_t sd[4] = {c->mb, c->ic, c->ih, c->iw}, dd[4] = {c->mb, c->oc, c->oh, c->ow};
	int64_t wd[5] = {c->g, c->oc / c->g, c->ic / c->g, c->kh, c->kw};
	int g1 = c->g == 1, i, r;

	if ((r = tag_md(&user[0], 4, sd, dnnl_f32, dnnl_nhwc, d)) ||
	    (r = tag_md(&user[1], g1 ? 4 : 5, wd + g1, dnnl_f32, g1 ? dnnl_hwio : dnnl_hwigo, d)) ||
	    (r = tag_md(&user[2], 4, dd, dnnl_f32, dnnl_nhwc, d)))
		return r;
	for (i = 0; i < 3; i++)
		use[i] = user[i];
	if (lay != CONV_PLAIN &&
	    (r = tag_md(&use[1], g1 ? 4 : 5, wd + g1, dnnl_f32, dnnl_format_tag_any, d)))
		return r;
	if (lay == CONV_BLOCKED && ((r = tag_md(&use[0], 4, sd, dnnl_f32, dnnl_format_tag_any, d)) ||
				    (r = tag_md(&use[2], 4, dd, dnnl_f32, dnnl_format_tag_any, d))))
		return r;
	return 0;
}

/* A direct convolution primitive. */
static int conv(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		enum conv_layouts lay, struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	const struct hgc_bench_conv *c = &w->shape.conv;
	dnnl_dims_t strides = {c->sh, c->sw}, dil = {c->dh, c->dw};
	dnnl_dims_t pl = {c->ph, c->pw}, pr = {c->pr_h, c->pr_w};
	dnnl_memory_desc_t user[3], use[3];
	dnnl_convolution_desc_t desc;
	dnnl_primitive_desc_t pd;
	double t0 = hgc_now();
	int r;

	if (w->dt != HGC_BENCH_F32) {
		hgc_error(d, NULL, "onednn: only f32 convolutions are measured");
		return HGC_BENCH_NA;
	}
	if ((r = start(d)) || (r = conv_mds(c, lay, user, use, d)))
		return r;
	if ((r = check(dnnl_dilated_convolution_forward_desc_init(
			       &desc, dnnl_forward_inference, dnnl_convolution_direct, &use[0],
			       &use[1], NULL, &use[2], strides, dil, pl, pr),
		       "convolution", d)))
		return r;
	if ((r = check(dnnl_primitive_desc_create(&pd, &desc, NULL, engine, NULL), "convolution", d)))
		return r;
	return finish(pd, user, io, t0, k, d);
}

/* The plain-layout column. */
static int matmul_plain(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return matmul(w, io, 0, k, d);
}

/* The preferred-layout column. */
static int matmul_packed(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			 struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return matmul(w, io, 1, k, d);
}

/* The plain-layout column. */
static int conv_plain(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		      struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return conv(w, io, CONV_PLAIN, k, d);
}

/* The preferred-weight-layout column. */
static int conv_packed(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		       struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return conv(w, io, CONV_PACKED, k, d);
}

/* The preferred-layouts column (src, weights and dst). */
static int conv_blocked(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return conv(w, io, CONV_BLOCKED, k, d);
}

static int graph_plain(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		       struct hgc_bench_kernel *k, struct hgc_diag *d);
static int graph_packed(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			struct hgc_bench_kernel *k, struct hgc_diag *d);

const struct hgc_bench_peer hgc_bench_peer_onednn = {
	.name = "onednn",
	.prepare = {[HGC_BENCH_MATMUL] = matmul_plain, [HGC_BENCH_CONV] = conv_plain,
		    [HGC_BENCH_GRAPH] = graph_plain},
	.begin = hgc_bench_omp_threads,
};

const struct hgc_bench_peer hgc_bench_peer_onednn_packed = {
	.name = "onednn_packed",
	.prepare = {[HGC_BENCH_MATMUL] = matmul_packed, [HGC_BENCH_CONV] = conv_packed,
		    [HGC_BENCH_GRAPH] = graph_packed},
	.begin = hgc_bench_omp_threads,
};

const struct hgc_bench_peer hgc_bench_peer_onednn_blocked = {
	.name = "onednn_blocked",
	.prepare = {[HGC_BENCH_CONV] = conv_blocked},
	.begin = hgc_bench_omp_threads,
};

/* The MLP whose primitive creation is reported: DLRM top layers at batch 128. */
static const int64_t mlp_widths[] = {479, 1024, 1024, 512, 256, 1};
#define MLP_LAYERS (sizeof(mlp_widths) / sizeof(mlp_widths[0]) - 1)
#define MLP_BATCH 128

/* One f32 layer: matmul + bias, ReLU (sigmoid on the last) fused as a post-op. */
static int mlp_layer(size_t i, dnnl_primitive_t *p, struct hgc_diag *d)
{
	int64_t s[2] = {MLP_BATCH, mlp_widths[i]}, w[2] = {mlp_widths[i], mlp_widths[i + 1]};
	int64_t b[2] = {1, mlp_widths[i + 1]}, o[2] = {MLP_BATCH, mlp_widths[i + 1]};
	dnnl_memory_desc_t sm, wm, bm, om;
	dnnl_matmul_desc_t desc;
	dnnl_primitive_attr_t attr;
	dnnl_post_ops_t po;
	dnnl_primitive_desc_t pd;
	int r;

	if ((r = plain_md(&sm, 2, s, dnnl_f32, d)) || (r = plain_md(&wm, 2, w, dnnl_f32, d)) ||
	    (r = plain_md(&bm, 2, b, dnnl_f32, d)) || (r = plain_md(&om, 2, o, dnnl_f32, d)) ||
	    (r = check(dnnl_matmul_desc_init(&desc, &sm, &wm, &bm, &om), "matmul", d)))
		return r;
	dnnl_post_ops_create(&po);
	dnnl_post_ops_append_eltwise(po, 1.0f, i + 1 == MLP_LAYERS ? dnnl_eltwise_logistic
								  : dnnl_eltwise_relu, 0, 0);
	dnnl_primitive_attr_create(&attr);
	dnnl_primitive_attr_set_post_ops(attr, po);
	r = check(dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL), "matmul", d);
	dnnl_primitive_attr_destroy(attr);
	dnnl_post_ops_destroy(po);
	if (r)
		return r;
	r = check(dnnl_primitive_create(p, pd), "primitive", d);
	dnnl_primitive_desc_destroy(pd);
	return r;
}

/* Create every primitive of the MLP; ms of wall time, or -1. */
static double mlp_create(struct hgc_diag *d)
{
	dnnl_primitive_t p[MLP_LAYERS] = {0};
	double t0 = hgc_now(), t;
	size_t i;
	int bad = 0;

	for (i = 0; i < MLP_LAYERS && !bad; i++)
		bad = mlp_layer(i, &p[i], d) != 0;
	t = (hgc_now() - t0) * 1e3;
	for (i = 0; i < MLP_LAYERS; i++)
		if (p[i])
			dnnl_primitive_destroy(p[i]);
	return bad ? -1 : t;
}

/*
 * Time the creation of all primitives of one MLP (479-1024-1024-512-256-1,
 * batch 128, bias + ReLU fused): cold, with the primitive cache off, and
 * from oneDNN's primitive cache.  For context: it is not in any row.
 */
int hgc_bench_onednn_mlp_create_ms(double *cold_ms, double *cached_ms, struct hgc_diag *d)
{
	int cap = 0;

	if (start(d) || dnnl_get_primitive_cache_capacity(&cap) != dnnl_success)
		return -1;
	dnnl_set_primitive_cache_capacity(0);
	*cold_ms = mlp_create(d);
	dnnl_set_primitive_cache_capacity(cap);
	if (*cold_ms < 0 || mlp_create(d) < 0)
		return -1;
	*cached_ms = mlp_create(d);
	return *cached_ms < 0 ? -1 : 0;
}

/* "oneDNN 2.6.3 (omp runtime, avx2 ISA)". */
const char *hgc_bench_onednn_version(struct hgc_arena *a)
{
	const dnnl_version_t *v = dnnl_version();

	return hgc_arena_printf(a, "oneDNN %d.%d.%d (%s runtime, ISA %s)", v->major, v->minor,
				v->patch, dnnl_runtime2str(v->cpu_runtime),
				dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
}

/* For onednn_graph.c: check(). */
int hgc_bench_dnnl_check(dnnl_status_t s, const char *what, struct hgc_diag *d)
{
	return check(s, what, d);
}

/* For onednn_graph.c: the engine and stream. */
int hgc_bench_dnnl_start(dnnl_engine_t *e, dnnl_stream_t *s, struct hgc_diag *d)
{
	int r = start(d);

	*e = engine;
	*s = stream;
	return r;
}

/* For onednn_graph.c: reorder(). */
int hgc_bench_dnnl_reorder(dnnl_memory_t from, dnnl_memory_t to, struct hgc_diag *d)
{
	return reorder(from, to, d);
}

/* The plain-layout column of a graph. */
static int graph_plain(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		       struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return hgc_bench_onednn_graph(w, io, 0, k, d);
}

/* The preferred-layout column of a graph (constant MatMul weights packed). */
static int graph_packed(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			struct hgc_bench_kernel *k, struct hgc_diag *d)
{
	return hgc_bench_onednn_graph(w, io, 1, k, d);
}
