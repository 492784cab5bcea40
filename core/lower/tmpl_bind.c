/*
 * tmpl_bind.c: binding a graph op to a template.  The template sees its
 * operands in canonical form (MatMul: A[M, K], B[K, N] -> C[M, N], or with a
 * leading flat batch BT; Convolution: NCHW data, OIHW weights); a map per
 * operand tells which graph index each canonical index is, so transposes,
 * data and weight formats, broadcast batch dims and batches folded into M
 * or N are all handled by the packing and the write-back.
 */
#include "lower_int.h"
#include "tmpl.h"

#include <string.h>

#include "runtime/runtime.h"

/* Set graph dim gd of map mp: (canonical[c] / div) % mod; c < 0: index 0. */
static void set(struct hgc_tmpl_map *mp, int gd, int c, int64_t div, int64_t mod)
{
	mp->d[gd].c = (int8_t)c;
	mp->d[gd].div = div;
	mp->d[gd].mod = mod;
}

/* The geometry of a MatMul: ranks, transposes, matrix dims, output batch dims. */
struct mm {
	int ra, rb, ro, nbo;
	bool ta, tb;
	int64_t m, k, n, bt;
	const int64_t *bdims;	/* the output's batch dims */
};

/* Whether operand t has a batch dim larger than 1. */
static bool batched(const struct hgc_tensor *t)
{
	int i;

	for (i = 0; i + 2 < t->ndims; i++)
		if (t->dims[i] > 1)
			return true;
	return false;
}

/* The MatMul's geometry. */
static void mm_geometry(const struct hgc_op *op, struct mm *g)
{
	const struct hgc_tensor *a = op->in[0], *b = op->in[1], *o = op->out[0];
	int i;

	g->ra = a->ndims, g->rb = b->ndims, g->ro = o->ndims;
	g->ta = hgc_op_bool(op, "transpose_a"), g->tb = hgc_op_bool(op, "transpose_b");
	g->nbo = g->ro - (g->ra > 1) - (g->rb > 1);
	g->bdims = o->dims;
	g->m = g->ra == 1 ? 1 : a->dims[g->ta ? g->ra - 1 : g->ra - 2];
	if (g->ra > 1)
		g->k = g->ta ? a->dims[g->ra - 2] : a->dims[g->ra - 1];
	else
		g->k = a->dims[0];
	g->n = g->rb == 1 ? 1 : b->dims[g->tb ? g->rb - 2 : g->rb - 1];
	for (g->bt = 1, i = 0; i < g->nbo; i++)
		g->bt *= o->dims[i];
}

/* The batch dims of graph tensor t (its first nbt dims, aligned right with the
   output's batch dims) from canonical dim c, which holds batch * unit + rest. */
static void batch_map(struct hgc_tmpl_map *mp, const struct hgc_tensor *t, int nbt,
		      const struct mm *g, int c, int64_t unit)
{
	int64_t after;
	int j, ob, k;

	for (j = 0; j < nbt; j++) {
		ob = g->nbo - nbt + j;
		for (after = unit, k = ob + 1; k < g->nbo; k++)
			after *= g->bdims[k];
		if (t->dims[j] == 1)
			set(mp, j, -1, 1, 0);
		else
			set(mp, j, c, after, g->bdims[ob]);
	}
}

/* A or B: batch dims, then the matrix dims (rows, cols) from canonical dims. */
static void operand_map(struct hgc_tmpl_map *mp, const struct hgc_tensor *t, bool trans,
			const struct mm *g, int cb, int64_t unit, int crow, int64_t rmod,
			int ccol, int64_t cmod, bool is_a)
{
	int r = t->ndims, nbt = r > 2 ? r - 2 : 0;

	mp->n = r;
	if (r == 1) {
		set(mp, 0, is_a ? ccol : crow, 1, is_a ? cmod : rmod);
		return;
	}
	batch_map(mp, t, nbt, g, cb, unit);
	set(mp, trans ? r - 1 : r - 2, crow, 1, rmod);
	set(mp, trans ? r - 2 : r - 1, ccol, 1, cmod);
}

/* The output: batch dims, then m (unless A is 1-D) and n (unless B is 1-D). */
static void output_map(struct hgc_tmpl_map *mp, const struct hgc_tensor *o, const struct mm *g,
		       int cb, int64_t unit, int cm, int64_t mmod, int cn, int64_t nmod)
{
	int d = g->nbo;

	mp->n = o->ndims;
	batch_map(mp, o, g->nbo, g, cb, unit);
	if (g->ra > 1)
		set(mp, d++, cm, 1, mmod);
	if (g->rb > 1)
		set(mp, d, cn, 1, nmod);
}

/* A 2-D template: fold a batch of A into M or a batch of B into N. */
static int bind_mm2(struct hgc_tmpl_bind *b, const struct mm *g)
{
	const struct hgc_op *op = b->op;
	bool fa = batched(op->in[0]), fb = batched(op->in[1]);
	int64_t mm = fa ? g->bt * g->m : g->m, nn = !fa && fb ? g->bt * g->n : g->n;

	if (fa && fb) {
		snprintf(b->why, sizeof(b->why), "both operands are batched: a 2-D template cannot "
			 "take them");
		return -1;
	}
	b->dims[0][0] = mm, b->dims[0][1] = g->k;
	b->dims[1][0] = g->k, b->dims[1][1] = nn;
	b->dims[2][0] = mm, b->dims[2][1] = nn;
	operand_map(&b->map[0], op->in[0], g->ta, g, 0, g->m, 0, fa ? g->m : 0, 1, 0, true);
	operand_map(&b->map[1], op->in[1], g->tb, g, 1, g->n, 0, 0, 1, fb && !fa ? g->n : 0,
		    false);
	if (fa)
		output_map(&b->map[2], op->out[0], g, 0, g->m, 0, g->m, 1, 0);
	else
		output_map(&b->map[2], op->out[0], g, 1, g->n, 0, 0, 1, fb ? g->n : 0);
	return 0;
}

/* A 3-D template: the flat batch BT first. */
static int bind_mm3(struct hgc_tmpl_bind *b, const struct mm *g)
{
	const struct hgc_op *op = b->op;

	b->dims[0][0] = g->bt, b->dims[0][1] = g->m, b->dims[0][2] = g->k;
	b->dims[1][0] = g->bt, b->dims[1][1] = g->k, b->dims[1][2] = g->n;
	b->dims[2][0] = g->bt, b->dims[2][1] = g->m, b->dims[2][2] = g->n;
	operand_map(&b->map[0], op->in[0], g->ta, g, 0, 1, 1, 0, 2, 0, true);
	operand_map(&b->map[1], op->in[1], g->tb, g, 0, 1, 1, 0, 2, 0, false);
	output_map(&b->map[2], op->out[0], g, 0, 1, 1, 0, 2, 0);
	return 0;
}

/* The bias broadcast to the graph output: its graph dims from the output's map. */
static void bias_map(struct hgc_tmpl_bind *b)
{
	const struct hgc_tensor *bias = b->op->in[2];
	int j, ro = b->map[2].n, nb = bias->ndims;

	b->bias_map.n = nb;
	for (j = 0; j < nb; j++) {
		if (bias->dims[j] == 1)
			set(&b->bias_map, j, -1, 1, 0);
		else
			b->bias_map.d[j] = b->map[2].d[ro - nb + j];
	}
}

/* MatMul. */
static int bind_matmul(struct hgc_tmpl_bind *b)
{
	struct mm g;
	int rank = b->t->operand_rank[0], rc;

	mm_geometry(b->op, &g);
	rc = rank == 2 ? bind_mm2(b, &g) : bind_mm3(b, &g);
	if (rc == 0 && b->op->nin > 2)
		bias_map(b);
	return rc;
}

/* A 4-D tensor in NCX (identity) or NXC: graph dims from canonical N, C, H, W. */
static void nchw_map(struct hgc_tmpl_map *mp, bool nxc)
{
	static const int nxc_c[4] = {0, 2, 3, 1};
	int i;

	mp->n = 4;
	for (i = 0; i < 4; i++)
		set(mp, i, nxc ? nxc_c[i] : i, 1, 0);
}

/* The canonical dims of a graph tensor under a map (inverse of the map). */
static void canon_dims(const struct hgc_tmpl_map *mp, const struct hgc_tensor *t, int64_t *dims)
{
	int i;

	for (i = 0; i < mp->n; i++)
		dims[mp->d[i].c] = t->dims[i];
}

/* Convolution: formats, geometry and the op symbols. */
static int bind_conv(struct hgc_tmpl_bind *b)
{
	const struct hgc_op *op = b->op;
	bool nxc = !strcmp(hgc_op_string(op, "data_format"), "NXC");
	bool xio = !strcmp(hgc_op_string(op, "weights_format"), "XIO");
	static const int xio_c[4] = {2, 3, 1, 0};
	int i;

	if (hgc_op_int(op, "groups") != 1) {
		snprintf(b->why, sizeof(b->why), "groups = %lld (templates take groups = 1)",
			 (long long)hgc_op_int(op, "groups"));
		return -1;
	}
	nchw_map(&b->map[0], nxc);
	nchw_map(&b->map[2], nxc);
	b->map[1].n = 4;
	for (i = 0; i < 4; i++)
		set(&b->map[1], i, xio ? xio_c[i] : i, 1, 0);
	for (i = 0; i < 3; i++)
		canon_dims(&b->map[i], i < 2 ? op->in[i] : op->out[0], b->dims[i]);
	if (op->nin > 2) {
		b->bias_map.n = 1;
		set(&b->bias_map, 0, 1, 1, 0);
	}
	return 0;
}

/* The value of an op symbol (HGC_TMPL_OP_SYMS) of a convolution. */
static int64_t conv_sym(const struct hgc_tmpl_bind *b, const char *name)
{
	const struct hgc_op *op = b->op;
	struct hgc_win wh, ww;

	hgc_win_setup(op, 0, b->dims[0][2], b->dims[1][2], false, &wh, NULL);
	hgc_win_setup(op, 1, b->dims[0][3], b->dims[1][3], false, &ww, NULL);
	if (!strcmp(name, "stride_h")) return wh.stride;
	if (!strcmp(name, "stride_w")) return ww.stride;
	if (!strcmp(name, "pad_top")) return wh.pad_begin;
	if (!strcmp(name, "pad_bottom")) return wh.pad_end;
	if (!strcmp(name, "pad_left")) return ww.pad_begin;
	if (!strcmp(name, "pad_right")) return ww.pad_end;
	if (!strcmp(name, "dilation_h")) return wh.dilation;
	if (!strcmp(name, "dilation_w")) return ww.dilation;
	if (!strcmp(name, "groups")) return hgc_op_int(op, "groups");
	hgc_bug("tmpl: unknown op symbol '%s'", name);
}

/* A built-in symbol. */
static int64_t builtin(const struct hgc_tmpl_bind *b, const char *name, int threads)
{
	enum hgc_isa isa = hgc_rt_isa();

	if (!strcmp(name, "threads"))
		return threads;
	if (!strcmp(name, "vlen"))
		return isa == HGC_ISA_AVX512 ? 16 : 8;
	if (!strcmp(name, "kpack"))
		return b->dtype[1] == HGC_DT_BF16 ? 2 : hgc_dtype_is_int(b->dtype[1]) ? 4 : 1;
	hgc_bug("tmpl: unknown built-in '%s'", name);
}

/* The operand types: a pair brgemm takes, and any the template asks for. */
static int bind_types(struct hgc_tmpl_bind *b)
{
	enum hgc_dtype a = b->op->in[0]->dtype, w = b->op->in[1]->dtype;
	int i;

	if (a == w && (a == HGC_DT_F32 || a == HGC_DT_BF16))
		b->acc = HGC_DT_F32;
	else if (a == HGC_DT_U8 && w == HGC_DT_S8)
		b->acc = HGC_DT_S32;
	else
		return snprintf(b->why, sizeof(b->why), "brgemm takes f32, bf16 or u8 x s8 inputs, "
				"not %s x %s", hgc_dtype_name(a), hgc_dtype_name(w)), -1;
	b->dtype[0] = a, b->dtype[1] = w, b->dtype[2] = b->acc;
	for (i = 0; i <= b->t->ninputs; i++) {
		enum hgc_dtype want = b->t->operand_dtype[i];
		enum hgc_dtype have = i < b->t->ninputs ? b->op->in[i]->dtype : b->op->out[0]->dtype;

		if (want != HGC_DT_UNDEF && want != have)
			return snprintf(b->why, sizeof(b->why), "%s is %s, the template takes %s",
					b->t->operand_names[i], hgc_dtype_name(have),
					hgc_dtype_name(want)), -1;
	}
	return 0;
}

/* Fill the environment's shape, op and built-in symbols. */
static void bind_env(struct hgc_tmpl_bind *b, int threads)
{
	const struct hgc_tmpl_sym *s;
	int i;

	for (i = 0; i < b->t->nsyms; i++) {
		s = &b->t->syms[i];
		if (s->kind == HGC_TMPL_SHAPE)
			b->env.v[i] = b->dims[s->operand][s->dim];
		else if (s->kind == HGC_TMPL_OPSYM)
			b->env.v[i] = conv_sym(b, s->name);
		else if (s->kind == HGC_TMPL_BUILTIN)
			b->env.v[i] = builtin(b, s->name, threads);
	}
}

/* Bind op to t. */
int hgc_tmpl_bind(const struct hgc_tmpl *t, const struct hgc_op *op, int threads,
		  struct hgc_tmpl_bind *b)
{
	int rc;

	memset(b, 0, sizeof(*b));
	b->t = t;
	b->op = op;
	b->env.t = t;
	if (op->kind != t->op || op->nout != 1 || t->nsyms > HGC_TMPL_MAX_SYMS) {
		snprintf(b->why, sizeof(b->why), "%s serves %s", t->name, hgc_tmpl_op_name(t->op));
		return -1;
	}
	if (bind_types(b))
		return -1;
	rc = op->kind == HGC_OP_MATMUL ? bind_matmul(b) : bind_conv(b);
	if (rc)
		return -1;
	bind_env(b, threads > 0 ? threads : 1);
	return 0;
}

/* A region's domain (dims[0..n)) from the canonical [B, R, L]: the dims
   before k-1 fold into B, dim k-1 is R, the dims from k fold into L. */
static void region_map(struct hgc_tmpl_map *mp, const int64_t *dims, int n, int k)
{
	int64_t after = 1;
	int g;

	mp->n = n;
	for (g = n - 1; g >= k; after *= dims[g--])
		set(mp, g, 2, after, g > k ? dims[g] : 0);
	set(mp, k - 1, 1, 1, 0);
	for (after = 1, g = k - 2; g >= 0; after *= dims[g--])
		set(mp, g, 0, after, g > 0 ? dims[g] : 0);
}

/* Bind a region template to a region's domain. */
int hgc_tmpl_bind_region(const struct hgc_tmpl *t, const int64_t *dims, int n, int k,
			 int threads, struct hgc_tmpl_bind *b)
{
	int64_t c[3] = {1, 1, 1};
	int i;

	memset(b, 0, sizeof(*b));
	b->t = t;
	b->env.t = t;
	if (t->op != HGC_TMPL_REGION || t->ninputs != 1 || t->nsyms > HGC_TMPL_MAX_SYMS) {
		snprintf(b->why, sizeof(b->why), "%s serves %s", t->name, hgc_tmpl_op_name(t->op));
		return -1;
	}
	if (k < 1 || k > n || n > HGC_MAX_DIMS)
		hgc_bug("tmpl: a region's rows start at dim %d of %d", k, n);
	for (i = 0; i < n; i++)
		c[i < k - 1 ? 0 : i == k - 1 ? 1 : 2] *= dims[i];
	b->acc = HGC_DT_F32;
	for (i = 0; i < 2; i++) {
		memcpy(b->dims[i], c, sizeof(c));
		b->dtype[i] = HGC_DT_F32;
		region_map(&b->map[i], dims, n, k);
	}
	bind_env(b, threads > 0 ? threads : 1);
	return 0;
}
