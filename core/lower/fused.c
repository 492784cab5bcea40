/*
 * fused.c: a fused op into Tensor IR.  The anchor op (MatMul) takes its
 * template as hgc_tmpl_lower_tunable would (a `use` rule, else the first
 * that applies; pins; the default choice); the instantiation writes the
 * result back at its innermost post-op anchor.  Each post-op anchor that
 * encloses the write-back and whose slice is a box of the result lying
 * inside it (its working set times its calls is the result's size) is a
 * candidate; the members go to the cheapest (see anchor_cost), each as
 * hgc_lower_op over slices of its operands, in graph order.  With a row
 * reduction among the members the anchor's box must also span the reduced
 * axes, and NPN = 1 is asked of the template first.  Without a template or
 * a candidate they follow the op over whole tensors.  A region (fusible
 * ops alone) is lowered by region.c.
 */
#include "fused_int.h"
#include "runtime/runtime.h"
#include "../../heuristics/heuristics.h"
#include "../tir/passes/tir_passes.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CALL_COST 64		/* an anchor invocation, in element accesses */
#define ROWS_BYTES (128 << 10)	/* a block of rows of a fused reduction, at most (L2) */
#define ROW_MIN 64		/* elements a row needs for the members to go row by row */
#define L2_BYTES (512 << 10)	/* a result larger than this comes from memory */

/* Whether the rules switch pass name off. */
bool hgc_fused_pass_off(const struct hgc_tmpl_rule *r, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(r[i].kind, "pass") && !strcmp(r[i].key, name))
			return !strcmp(r[i].value, "off");
	return false;
}

/* Add a line to the template log. */
void hgc_fused_log(struct hgc_tmpl_opts *o, const char *text)
{
	*(char **)hgc_vec_push(&o->log) = strdup(text);
}

/* Bind and choose template t for op: 1, 0 (does not apply), -1 (a pin fails).
   With rows set (a fused row reduction), NPN is pinned to 1 unless the
   config pins it, so that each thread's post-op slices hold whole rows; the
   caller retries without when that leaves no candidate.  With split > 0 (a
   layer of a chain split by rows jointly into split parts: the threads, or
   a multiple of them when the chain is chunked), MPN = split and NPN = 1,
   the template bound for split threads (its grid): a template without
   them does not apply. */
static int choose(struct hgc_tmpl_opts *o, const struct hgc_tmpl *t, const struct hgc_op *op,
		  bool rows, int split, int64_t mb, struct hgc_tmpl_bind *bind,
		  struct hgc_tmpl_env *env, struct hgc_diag *d)
{
	struct hgc_tmpl_pin pins[36];
	int threads = o->threads > 0 ? o->threads : omp_get_max_threads(), npins, rc, i, n;
	int npn = t ? hgc_tmpl_sym(t, "NPN") : -1, smb = t ? hgc_tmpl_sym(t, "MB") : -1;
	int mpn = t ? hgc_tmpl_sym(t, "MPN") : -1;
	struct hgc_diag tmp;

	if (split)
		threads = split;
	if (!t || t->op != op->kind || (split && (mpn < 0 || npn < 0)) ||
	    hgc_tmpl_bind(t, op, threads, bind) < 0)
		return 0;
	npins = hgc_tmpl_pins_of(o, t, pins, 32);
	for (i = 0; i < npins; i++) {
		if (pins[i].sym == npn)
			rows = false;
		if (pins[i].sym == smb)
			mb = 0;
	}
	n = npins;
	if ((rows || split) && npn >= 0)
		pins[n++] = (struct hgc_tmpl_pin){ .sym = npn, .value = 1, .rule = NULL };
	if (split)
		pins[n++] = (struct hgc_tmpl_pin){ .sym = mpn, .value = threads, .rule = NULL };
	if (mb > 0 && smb >= 0)
		pins[n++] = (struct hgc_tmpl_pin){ .sym = smb, .value = mb, .rule = NULL };
	hgc_diag_init(&tmp);
	rc = hgc_tmpl_choose(bind, pins, n, env, npins ? d : &tmp);
	hgc_diag_release(&tmp);
	return rc < 0 ? (npins ? -1 : 0) : 1;
}

/* The bytes of one row of fo's reduction site (its reduced dims), or 0. */
static int64_t row_bytes(const struct hgc_fused_op *fo)
{
	const struct hgc_tensor *r = fo->anchor->out[0];
	int64_t n = 4;

	if (!fo->reduces)
		return 0;
	for (int i = 0; i < r->ndims; i++)
		if (fo->reduced[i])
			n *= r->dims[i];
	return n;
}

/*
 * With a row reduction on a batched template (attention's scores), the rows of
 * one iteration (MB of them) are what the members pass over and, once the next
 * MatMul's loop is merged in, what stays per thread: when the default MB makes
 * them larger than ROWS_BYTES, the largest MB of these that keeps them within
 * it and that the template accepts: 1, or 0 (keep the default).
 */
static int fit_rows(struct hgc_tmpl_opts *o, const struct hgc_fused_op *fo,
		    const struct hgc_op *op, struct hgc_tmpl_bind *bind, struct hgc_tmpl_env *env,
		    struct hgc_diag *d)
{
	static const int64_t mbs[] = { 128, 96, 64, 48, 32, 24, 16 };
	int smb = hgc_tmpl_sym(bind->t, "MB");
	int64_t rb = row_bytes(fo);
	const struct hgc_tmpl *t = bind->t;

	if (!rb || smb < 0 || hgc_tmpl_sym(t, "BT") < 0 || env->v[smb] * rb <= ROWS_BYTES)
		return 0;
	for (size_t i = 0; i < sizeof(mbs) / sizeof(*mbs); i++)
		if (mbs[i] * rb <= ROWS_BYTES && choose(o, t, op, true, false, mbs[i], bind, env, d) > 0)
			return 1;
	return choose(o, t, op, true, false, 0, bind, env, d) > 0 ? 0 : -1;
}

/* Whether B of a bound batched MatMul is its graph tensor's dense rows in
   [BT, K, N] order: the leading graph dims fold into BT row-major (a dim of
   1 may be left out), K and N are the last two, unbroadcast and not
   transposed (what the TIR reads in place). */
static bool b_dense(const struct hgc_tmpl_bind *bind)
{
	const struct hgc_tmpl_map *mp = &bind->map[1];
	const struct hgc_tensor *b = bind->op->in[1];
	int n = mp->n, j;
	int64_t fold = 1;

	if (n < 3 || b->ndims != n)
		return false;
	for (j = n - 2; j < n; j++)
		if (mp->d[j].c != j - (n - 3) || mp->d[j].div > 1 || mp->d[j].mod)
			return false;
	for (j = n - 3; j >= 0; j--) {
		if (b->dims[j] == 1)
			continue;
		if (mp->d[j].c != 0 || mp->d[j].div != fold ||
		    (mp->d[j].mod && mp->d[j].mod != b->dims[j]))
			return false;
		fold *= b->dims[j];
	}
	return true;
}

/* Whether the config has a `use` or `pin` rule (any template). */
static bool config_chooses(const struct hgc_tmpl_opts *o)
{
	for (int i = 0; i < o->nrules; i++)
		if (!strcmp(o->rules[i].kind, "use") || !strcmp(o->rules[i].kind, "pin"))
			return true;
	return false;
}

/*
 * Attention's scores (a batched MatMul with a row reduction among its
 * members, B a variable tensor dense as [BT, K, N]: K^T given as [B, H, D,
 * S]) take IN_PLACE_B, which reads B where it is, when it applies and the
 * config chooses nothing.  matmul_batch_plain, which the estimates rank
 * first (about 10% ahead, on IN_PLACE_B's strided B), packs B on every run
 * in a parallel loop of its own before the merged one: one more fork and
 * join, and the packed copy of all of K^T in the scratch (48 MiB at BERT-
 * large batch 32, 192 KiB without).  Measured alternated in one process
 * (docs/fusion.md), the run times are the same within this machine's noise.
 * 1 when taken (bind and env set), 0 otherwise, -1 when fit_rows fails.
 */
#define IN_PLACE_B "matmul_batch_inb"
static int choose_in_place_b(struct hgc_tmpl_opts *o, const struct hgc_fused_op *fo,
			     const struct hgc_op *op, struct hgc_tmpl_bind *bind,
			     struct hgc_tmpl_env *env, struct hgc_diag *d)
{
	const struct hgc_tmpl *t = hgc_tmpl_find(IN_PLACE_B);
	int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
	char line[256];

	if (!fo->reduces || !t || t->op != op->kind || op->nin < 2 || hgc_heur_tensor_const(op->in[1]) ||
	    hgc_tmpl_used(o, op) || config_chooses(o) || hgc_tmpl_bind(t, op, threads, bind) < 0 ||
	    !b_dense(bind) || choose(o, t, op, true, false, 0, bind, env, d) <= 0)
		return 0;
	snprintf(line, sizeof(line), "%s: template %s before the estimates' order (a row "
		 "reduction after it, B read in place: no packing loop)",
		 op->out[0]->name ? op->out[0]->name : "MatMul", t->name);
	hgc_fused_log(o, line);
	return fit_rows(o, fo, op, bind, env, d) < 0 ? -1 : 1;
}

/* Choose fo's template as hgc_tmpl_lower_tunable would (a `use` rule, else
   the first that applies in hgc_tmpl_rank's order; with a row reduction,
   NPN = 1 first, then without; split: a layer of a chain split by rows, see
   choose), attention's scores first through choose_in_place_b: 1, 0
   (none), -1 (a pin fails). */
static int choose_fused(struct hgc_tmpl_opts *o, const struct hgc_fused_op *fo,
			const struct hgc_op *op, int split, struct hgc_tmpl_bind *bind,
			struct hgc_tmpl_env *env, struct hgc_diag *d)
{
	struct hgc_tmpl_rank rank[HGC_TMPL_RANK_MAX];
	const struct hgc_tmpl *c;
	int i, n, rc = 0;

	if ((rc = choose_in_place_b(o, fo, op, bind, env, d)) != 0)
		return rc;
	/* a use rule's template, else cheapest estimate first (core/lower/tmpl.c) */
	n = hgc_tmpl_rank(o, op, o->threads > 0 ? o->threads : omp_get_max_threads(), rank,
			  HGC_TMPL_RANK_MAX);
	for (i = 0; !rc && i < n; i++) {
		c = rank[i].t;
		if (fo->reduces && (rc = choose(o, c, op, true, false, 0, bind, env, d)) > 0 &&
		    fit_rows(o, fo, op, bind, env, d) < 0)
			return -1;
		if (!rc)
			rc = choose(o, c, op, false, split, 0, bind, env, d);
	}
	return rc;
}

/* The canonical box that slice s of the result's buffer (layout l) covers;
   false when it is not a box (a padded dim, a partial inner block). */
static bool slice_box(struct hgc_tir_module *m, const struct hgc_tmpl_layout *l,
		      const struct hgc_tmpl_slice *s, int rank, struct box *bx)
{
	const struct hgc_tmpl_ldim *p;
	struct hgc_tir_expr *x;
	int j, dim;

	bx->n = rank;
	for (dim = 0; dim < rank; dim++)
		bx->start[dim] = NULL, bx->ext[dim] = 1;
	for (j = 0; j < s->n && j < l->nphys; j++) {
		p = &l->phys[j];
		if (p->kind == HGC_TMPL_PAD || p->kind == HGC_TMPL_PACK || p->dim >= rank ||
		    (s->range[j] && s->step[j] != 1))
			return false;
		if (p->kind == HGC_TMPL_INNER && (!s->range[j] || s->len[j] != p->extent ||
						  p->block != p->extent))
			return false;
		if (p->kind == HGC_TMPL_INNER)
			continue;
		x = hgc_tir_expr_copy(m, s->start[j]);
		if (p->kind == HGC_TMPL_OUTER)
			x = hgc_tir_mul(m, x, hgc_tir_idx(m, p->block));
		bx->start[p->dim] = x;
		bx->ext[p->dim] = (s->range[j] ? s->len[j] : 1) *
				  (p->kind == HGC_TMPL_OUTER ? p->block : 1);
	}
	return true;
}

/* (x / div) % mod as an index expression (x is copied; NULL is 0). */
struct hgc_tir_expr *hgc_fused_fold_index(struct hgc_tir_module *m, struct hgc_tir_expr *x,
					  int64_t div, int64_t mod)
{
	if (!x)
		return NULL;
	x = hgc_tir_expr_copy(m, x);
	if (div > 1)
		x = hgc_tir_binary(m, HGC_TIR_DIV, x, hgc_tir_idx(m, div));
	if (mod)
		x = hgc_tir_binary(m, HGC_TIR_MOD, x, hgc_tir_idx(m, mod));
	return x;
}

/*
 * The box of the graph result that canonical box cb covers, through the
 * binding's output map.  A canonical dim that holds several graph dims (a
 * folded batch) must be taken as one index or whole; a canonical dim that
 * is one graph dim maps as it is.  False otherwise.
 */
static bool graph_box(struct hgc_tir_module *m, const struct hgc_tmpl_bind *bind,
		      const struct box *cb, struct box *gb)
{
	const struct hgc_tmpl_map *mp = &bind->map[bind->t->ninputs];
	const int64_t *cd = bind->dims[bind->t->ninputs];
	const struct hgc_tensor *o = bind->op->out[0];
	int g, c;

	gb->n = mp->n;
	for (g = 0; g < mp->n; g++) {
		c = mp->d[g].c;
		gb->start[g] = NULL, gb->ext[g] = 1;
		if (c < 0)
			continue;
		if (cb->ext[c] == cd[c])	/* whole (the boxes tile the result) */
			gb->ext[g] = o->dims[g];
		else if (cb->ext[c] == 1)
			gb->start[g] = hgc_fused_fold_index(m, cb->start[c], mp->d[g].div,
							    mp->d[g].mod);
		else if (mp->d[g].div == 1 && (!mp->d[g].mod || mp->d[g].mod == cd[c]) &&
			 o->dims[g] == cd[c])
			gb->start[g] = cb->start[c], gb->ext[g] = cb->ext[c];
		else
			return false;
	}
	return true;
}

/* Whether box bx holds whole rows of fo's reduction site (if it has one). */
static bool covers_rows(const struct hgc_fused_op *fo, const struct box *bx)
{
	const struct hgc_tensor *r = fo->anchor->out[0];
	int i;

	for (i = 0; fo->reduces && i < r->ndims; i++)
		if (fo->reduced[i] && bx->ext[i] != r->dims[i])
			return false;
	return true;
}

/* Whether s is, or holds, the statement x. */
static bool holds(const struct hgc_tir_stmt *s, const struct hgc_tir_stmt *x)
{
	int i;

	if (!s)
		return false;
	if (s == x)
		return true;
	switch (s->kind) {
	case HGC_TIR_S_BLOCK:
		for (i = 0; i < s->u.block.n; i++)
			if (holds(s->u.block.stmts[i], x))
				return true;
		return false;
	case HGC_TIR_S_FOR:
		return holds(s->u.loop.body, x);
	case HGC_TIR_S_PFOR:
		return holds(s->u.pfor.body, x);
	case HGC_TIR_S_IF:
		return holds(s->u.cond.then, x) || holds(s->u.cond.els, x);
	default:
		return false;
	}
}

/* Whether anchor point a is still in the nest and comes after the write-back
   point w in a block enclosing it. */
static bool after(const struct hgc_tmpl_point *a, const struct hgc_tmpl_point *w)
{
	const struct hgc_tir_stmt *par = a->parent;
	int i, k;

	if (a == w)
		return true;
	if (!par || par->kind != HGC_TIR_S_BLOCK)
		return false;
	for (i = 0; i < par->u.block.n && par->u.block.stmts[i] != a->block; i++)
		;
	if (i == par->u.block.n)	/* dropped by the instantiation: nothing went there */
		return false;
	for (k = 0; k < i; k++)
		if (holds(par->u.block.stmts[k], w->block))
			return true;
	return false;
}

/* The cost of running the members at anchor i: a call overhead per
   invocation, plus a reload of the slice when the nt tensors it touches
   there do not fit in L1, twice that when they do not fit in L2 either
   (from memory, as unfused_cost counts a pass over a large result): a
   thread's whole slice of a large result otherwise cost what its blocks
   did, and the fewer calls took it (FFN's GELU on 3 MiB per thread). */
static int64_t anchor_cost(struct hgc_tmpl_env *e, int i, int nt, int64_t *ws, int64_t *calls)
{
	int64_t bytes;

	*ws = e->t->cost(e, i, HGC_TMPL_COST_WORKING_SET);
	*calls = e->t->cost(e, i, HGC_TMPL_COST_CALLS);
	bytes = *ws * 4 * nt;
	return *calls * CALL_COST + (bytes > L2_BYTES ? 2 : bytes > L1_BYTES) * *ws * *calls;
}

/*
 * What the members cost as ops of their own after the nest, in the units of
 * anchor_cost: each is a pass over the whole result (numel elements: the
 * reload a slice leaving L1 costs at an anchor, twice that from memory when
 * the result is larger than L2) and a parallel loop's fork and join (32
 * calls).  When no anchor is cheaper, the members follow the nest.
 */
static int64_t unfused_cost(const struct hgc_fused_op *fo, int64_t numel)
{
	int64_t pass = numel * 4 > L2_BYTES ? 2 * numel : numel;

	return fo->nmembers * (pass + 32 * CALL_COST);
}

/* The view of graph tensor t for a member: a slice on box bx (broadcast
   dims of size 1 stay whole), or the whole view without a box. */
static struct hgc_lower_view member_view(struct hgc_lower_ctx *cx, const struct hgc_tensor *t,
					 const struct box *bx)
{
	struct hgc_tir_expr *st[HGC_MAX_DIMS];
	int64_t ext[HGC_MAX_DIMS];
	int i, k;

	if (!bx)
		return cx->views[t->id];
	k = bx->n - t->ndims;
	for (i = 0; i < t->ndims; i++) {
		st[i] = t->dims[i] == 1 ? NULL : bx->start[i + k];
		ext[i] = t->dims[i] == 1 ? 1 : bx->ext[i + k];
	}
	return hgc_lower_view_slice(cx->m, &cx->views[t->id], st, ext);
}

/* A view for graph tensor t: computed already, or a constant embedded now. */
static int ensure_view(struct hgc_lower_ctx *cx, const struct hgc_tensor *t, bool define,
		       struct hgc_diag *d)
{
	struct hgc_tir_tensor *tt;
	int64_t dims[HGC_MAX_DIMS] = {1};
	int n = t->ndims ? t->ndims : 1;
	const char *name;

	if (cx->have[t->id])
		return 0;
	if (t->ndims)
		memcpy(dims, t->dims, (size_t)n * sizeof(*dims));
	name = t->name && *t->name ? t->name : hgc_arena_printf(&cx->m->arena, "f%d", t->id);
	if (define) {
		tt = hgc_tir_tensor_newc(cx->m, name, hgc_lower_type(t->dtype), HGC_TIR_LOCAL, n,
					 dims);
		hgc_tir_def_tensor(cx->m, cx->f->body, tt);
	} else if (!t->producer && t->data) {
		tt = hgc_tir_module_add_const(cx->m, name, hgc_lower_type(t->dtype), n, dims,
					      t->data);
	} else {
		return hgc_error(d, NULL, "fusion: tensor %%%d is used before it is computed",
				 t->id);
	}
	cx->views[t->id] = t->ndims ? hgc_lower_view_plain(tt) : hgc_lower_view_scalar(tt);
	cx->have[t->id] = true;
	return 0;
}

/* Whether every op of the graph that reads u is member i of fo or a member before it. */
static bool read_only_up_to(const struct hgc_graph *g, const struct hgc_fused_op *fo, int i,
			    const struct hgc_tensor *u)
{
	for (size_t k = 0; k < g->ops.len; k++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, k);
		bool member = false;

		for (int j = 0; j <= i; j++)
			member |= fo->member[j] == op;
		for (int j = 0; j < op->nin && !member; j++)
			if (op->in[j] == u)
				return false;
	}
	return true;
}

/*
 * The input of member i whose buffer its result may take (in place), or
 * NULL: a temporary, or the graph output the members end in when the
 * anchor's result went there (result_into_output).  The members run in
 * graph order on each slice, so when every reader
 * of an input is member i or a member before it, that input is dead once
 * member i has read an element, and member i reads and writes each element
 * at the same index.  Without this every member wrote a whole-tensor
 * temporary of its own (attention's scores at batch 32 and 384 tokens: 300
 * MB each, four of them), which the TIR passes cannot always share, as the
 * indices of a folded batch are not affine.
 */
static const struct hgc_tensor *in_place_input(struct hgc_lower_ctx *cx,
					       const struct hgc_fused_op *fo, int i)
{
	const struct hgc_op *op = fo->member[i];
	const struct hgc_tensor *t = op->out[0], *u, *y = fo->member[fo->nmembers - 1]->out[0];
	const struct hgc_tir_tensor *tt;

	if (!cx->g || !hgc_fusion_eltwise_kind(op->kind) || hgc_graph_is_output(cx->g, t))
		return NULL;
	for (int j = 0; j < op->nin; j++) {
		u = op->in[j];
		tt = cx->have[u->id] ? cx->views[u->id].tensor : NULL;
		if (!tt || !u->producer || u->dtype != t->dtype ||
		    u->ndims != t->ndims || hgc_graph_is_output(cx->g, u) ||
		    memcmp(u->dims, t->dims, sizeof(int64_t) * (size_t)t->ndims) ||
		    cx->views[u->id].load || cx->views[u->id].ndims != t->ndims ||
		    (tt->scope != HGC_TIR_LOCAL && !(cx->have[y->id] && tt == cx->views[y->id].tensor &&
						     hgc_graph_is_output(cx->g, y))) ||
		    !read_only_up_to(cx->g, fo, i, u))
			continue;
		return u;
	}
	return NULL;
}

/* Views for every member's inputs and outputs, before the nest is built; a
   member's result takes the buffer of an input that dies with it. */
int hgc_fused_prepare(struct hgc_lower_ctx *cx, const struct fstate *st,
		      const struct hgc_fused_op *fo, struct hgc_diag *d)
{
	const struct hgc_tensor *u, *t;
	int i, j;

	for (i = 0; i < fo->nmembers; i++) {
		for (j = 0; j < fo->member[i]->nin; j++)
			if (ensure_view(cx, fo->member[i]->in[j], false, d))
				return -1;
		t = fo->member[i]->out[0];
		if (st->f->in_place && !cx->have[t->id] && (u = in_place_input(cx, fo, i))) {
			cx->views[t->id] = cx->views[u->id];
			cx->have[t->id] = true;
			if (st->f->in_place_bytes)
				*st->f->in_place_bytes += (int64_t)hgc_tensor_nbytes(t);
			continue;
		}
		if (ensure_view(cx, fo->member[i]->out[0], true, d))
			return -1;
	}
	return 0;
}

/* Lower the members into block, on box bx (or whole tensors). */
int hgc_fused_members(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo,
		      struct hgc_tir_stmt *block, const struct box *bx, struct hgc_diag *d)
{
	struct hgc_lower_view v[HGC_FUSE_MAX_EXTRA + 4], *in[HGC_FUSE_MAX_EXTRA + 4], out;
	const struct hgc_op *op;
	int i, j;

	for (i = 0; i < fo->nmembers; i++) {
		op = fo->member[i];
		if (op->nin > HGC_FUSE_MAX_EXTRA + 4)
			return hgc_op_error(op, d, "fusion: too many inputs");
		for (j = 0; j < op->nin; j++) {
			v[j] = member_view(cx, op->in[j], bx);
			in[j] = &v[j];
		}
		out = member_view(cx, op->out[0], bx);
		if (hgc_lower_op(cx, op, block, in, &out, d))
			return -1;
	}
	return 0;
}

/* The members on row box row, into a block of their own (detached), their
   row passes folded as lower_rows does. */
static struct hgc_tir_stmt *row_block(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo,
				      const struct box *row, struct hgc_diag *d)
{
	struct hgc_tir_stmt *b = hgc_tir_block(cx->m, NULL);

	if (hgc_fused_members(cx, fo, b, row, d))
		return NULL;
	lw_recip_rows(cx->m, b, 0);
	return b;
}

/*
 * Two rows' members into block, their statements taken in turns (the first
 * row's first, the second row's first, ...): a row of a reduction is a
 * chain of steps that each wait for the last (the max's fold across lanes,
 * then the exp pass, the sum's fold, its reciprocal), and side by side the
 * two rows' chains overlap.  Rows are independent (each member reads and
 * writes its own row), and each row keeps its own order.  The first row
 * is at row->start[dim], the second one after it.
 */
static int pair_rows(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo,
		     struct hgc_tir_stmt *block, struct box *row, int dim, struct hgc_diag *d)
{
	struct hgc_tir_stmt *a, *b;
	int k;

	if (!(a = row_block(cx, fo, row, d)))
		return -1;
	row->start[dim] = hgc_tir_add(cx->m, hgc_tir_expr_copy(cx->m, row->start[dim]),
				      hgc_tir_idx(cx->m, 1));
	if (!(b = row_block(cx, fo, row, d)))
		return -1;
	for (k = 0; k < a->u.block.n || k < b->u.block.n; k++) {
		if (k < a->u.block.n)
			hgc_tir_append(block, a->u.block.stmts[k]);
		if (k < b->u.block.n)
			hgc_tir_append(block, b->u.block.stmts[k]);
	}
	return 0;
}

/* Lower the members on box bx one row at a time: a loop per dim before the
   rows (the reduction site's first axis, else the last dim) and every member
   on the row's box, so that the members' passes over a row (softmax's max,
   subtract, exp, sum, divide) run while it is in L1 instead of each pass
   going over the whole block.  Rows shorter than ROW_MIN elements (too
   short to vectorize well) or a box of one row keep the block passes
   (*rows 0), unless the members are elementwise alone and the row is
   whole vectors (a multiple of 8): then the row's loops merge into one
   (hgc_fused_merge_loops), a pass of every member per vector, however
   short the row.  A block of rows of a wide result
   (GELU's 64 x 16 post_block on 3072 columns: rows 12 KiB apart, which
   share L1 sets, so the block does not stay in L1) was read from L2 once
   per member; so it is read once.  Rows of a reduction go two at a time
   when the innermost row loop has an even extent (pair_rows).  Else *rows
   and *rowlen say how the box was split. */
static int lower_rows(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo,
		      struct hgc_tir_stmt *block, const struct box *bx, int64_t *rows,
		      int64_t *rowlen, struct hgc_diag *d)
{
	struct box row = *bx;
	struct hgc_tir_var *v;
	struct hgc_tir_expr *r;
	int q = bx->n - 1, i, from, pair = -1;

	*rows = *rowlen = 1;
	for (i = 0; fo->reduces && i < bx->n; i++)
		if (fo->reduced[i] && i < q)
			q = i;
	for (i = 0; i < bx->n; i++)
		*(i < q ? rows : rowlen) *= bx->ext[i];
	if (q <= 0 || *rows < 2 || (*rowlen < ROW_MIN && (fo->reduces || *rowlen % 8))) {
		*rows = 0;
		return hgc_fused_members(cx, fo, block, bx, d);
	}
	for (i = 0; fo->reduces && i < q; i++)
		if (bx->ext[i] > 1)
			pair = bx->ext[i] % 2 ? -1 : i;
	for (i = 0; i < q; i++) {
		if (bx->ext[i] == 1)
			continue;
		v = hgc_tir_var_new(cx->m, "row", hgc_tir_ty(HGC_TIR_INDEX));
		block = hgc_tir_body(hgc_tir_for(cx->m, block, v, hgc_tir_idx(cx->m, 0),
						 hgc_tir_idx(cx->m, i == pair ? bx->ext[i] / 2
										: bx->ext[i]),
						 NULL));
		r = hgc_tir_ref(cx->m, v);
		if (i == pair)
			r = hgc_tir_mul(cx->m, r, hgc_tir_idx(cx->m, 2));
		if (bx->start[i])
			r = hgc_tir_add(cx->m, hgc_tir_expr_copy(cx->m, bx->start[i]), r);
		row.start[i] = r;
		row.ext[i] = 1;
	}
	if (pair >= 0)
		return pair_rows(cx, fo, block, &row, pair, d);
	from = block->u.block.n;
	if (hgc_fused_members(cx, fo, block, &row, d))
		return -1;
	if (!fo->reduces)
		hgc_fused_merge_loops(cx->m, block, from);
	else
		lw_recip_rows(cx->m, block, from);
	return 0;
}

/*
 * Whether fold_post (core/tir/passes/postfold.c) will likely fold the
 * members at anchor point p into the brgemm call before it: an f32 bias
 * add and at most a ReLU after it, right after a call that completes the
 * block's sums, into the result's own tensor (not a block that the
 * write-back then copies out).  Their cost there is nothing but a few vector operations
 * per register tile, so such an anchor wins (post_block over post_row:
 * no pass over the block at all).  A guess from the shapes; the pass
 * checks the nest it gets, and a nest it does not fold runs as it is.
 * bias_row: the first member adds a row (dims 1 but the last, N) to the
 * anchor's result h in place.
 */
static bool bias_row(const struct hgc_op *add, const struct hgc_tensor *h)
{
	const struct hgc_tensor *r = add->nin == 2 ? add->in[add->in[0] == h] : NULL;

	if (add->kind != HGC_OP_ADD || !r || add->out[0] != h || r->ndims < 1 ||
	    r->dims[r->ndims - 1] != h->dims[h->ndims - 1])
		return false;
	for (int i = 0; i < r->ndims - 1; i++)
		if (r->dims[i] != 1)
			return false;
	return true;
}

static bool folds(struct hgc_lower_ctx *cx, const struct hgc_tmpl_opts *o,
		  const struct hgc_fused_op *fo, const struct hgc_tmpl_point *p)
{
	const struct hgc_tir_stmt *par = p->parent;
	const struct hgc_tensor *h = fo->nmembers ? fo->member[0]->out[0] : NULL;
	int i;

	if (!h || fo->nmembers > 2 || !bias_row(fo->member[0], h) || h->dtype != HGC_DT_F32 ||
	    hgc_fused_pass_off(o->rules, o->nrules, "fold_post") || !par ||
	    par->kind != HGC_TIR_S_BLOCK)
		return false;
	/* the ReLU in place: the sum is no output and nothing else reads it */
	if (fo->nmembers == 2 && (fo->member[1]->kind != HGC_OP_RELU || !cx->g ||
				  hgc_graph_is_output(cx->g, h) ||
				  !read_only_up_to(cx->g, fo, 1, h)))
		return false;
	for (i = 0; i < par->u.block.n && par->u.block.stmts[i] != p->block; i++)
		;
	/* the call writes the result itself (not a block the write-back copies out) */
	return i > 0 && i < par->u.block.n && cx->have[h->id] &&
	       hgc_tir_post_site(par->u.block.stmts[i - 1]) == cx->views[h->id].tensor;
}

/* The candidate anchor for the members, its box in bx, and the log text of
   every candidate; -1 when none fits (the members then follow the nest). */
static int pick(struct hgc_lower_ctx *cx, const struct hgc_tmpl_opts *o,
		const struct hgc_fused_op *fo, const struct hgc_tmpl_bind *bind,
		struct hgc_tmpl_inst *inst, struct box *bx, FILE *log)
{
	const struct hgc_tmpl *t = bind->t;
	int r = t->ninputs, rank = t->operand_rank[r], i, best = -1, nt = 1 + fo->nmembers;
	int64_t numel = 1, ws, calls, cost, bcost = 0;
	struct hgc_tmpl_layout l;
	struct box cand;

	for (i = 0; i < rank; i++)
		numel *= bind->dims[r][i];
	t->layout(&inst->env, r, &l);
	if (inst->writeback < 0)
		return -1;
	for (i = 0; i < t->nanchors; i++) {
		const struct hgc_tmpl_anchor *a = &t->anchors[i];
		struct box cb;

		if (!a->post || a->operand != r || !inst->points[i].block)
			continue;
		cost = anchor_cost(&inst->env, i, nt, &ws, &calls);
		fprintf(log, " %s(ws=%lld calls=%lld", a->name, (long long)ws, (long long)calls);
		if (folds(cx, o, fo, &inst->points[i])) {
			cost = 0;
			fprintf(log, " into the call");
		}
		if (!after(&inst->points[i], &inst->points[inst->writeback]))
			fprintf(log, ": not in the nest after the write-back)");
		else if (ws * calls != numel ||
			 !slice_box(cx->m, &l, &inst->points[i].slice, rank, &cb) ||
			 !graph_box(cx->m, bind, &cb, &cand))
			fprintf(log, ": not a box inside the result)");
		else if (!covers_rows(fo, &cand))
			fprintf(log, ": does not cover whole rows of the reduction)");
		else {
			fprintf(log, " cost=%lld)", (long long)cost);
			if (best < 0 || cost < bcost)
				best = i, bcost = cost, *bx = cand;
		}
	}
	cost = unfused_cost(fo, numel);
	fprintf(log, " unfused(cost=%lld%s)", (long long)cost,
		best >= 0 && bcost >= cost ? ": cheaper than every anchor" : "");
	return best >= 0 && bcost >= cost ? -1 : best;
}

/* Whether a loop step is 1 (NULL: 1). */
static bool unit_step(const struct hgc_tir_expr *e)
{
	int64_t v;

	return !e || (hgc_tir_const_int(e, &v) && v == 1);
}

/* Whether parallel loops a and b have the same constant ranges. */
static bool same_ranges(const struct hgc_tir_stmt *a, const struct hgc_tir_stmt *b)
{
	int64_t x[4];
	int i;

	if (a->u.pfor.n != b->u.pfor.n)
		return false;
	for (i = 0; i < a->u.pfor.n; i++) {
		if (!hgc_tir_const_int(a->u.pfor.begin[i], &x[0]) ||
		    !hgc_tir_const_int(a->u.pfor.end[i], &x[1]) ||
		    !hgc_tir_const_int(b->u.pfor.begin[i], &x[2]) ||
		    !hgc_tir_const_int(b->u.pfor.end[i], &x[3]) || x[0] != x[2] || x[1] != x[3])
			return false;
		if (!unit_step(a->u.pfor.step ? a->u.pfor.step[i] : NULL) ||
		    !unit_step(b->u.pfor.step ? b->u.pfor.step[i] : NULL))
			return false;
	}
	return true;
}

/* The last parallel loop among the statements of block from index from
   on, looking into nested blocks (not into loops). */
struct hgc_tir_stmt *hgc_fused_new_pfor(struct hgc_tir_stmt *block, int from)
{
	struct hgc_tir_stmt *pf = NULL, *s, *in;
	int i;

	for (i = from; i < block->u.block.n; i++) {
		s = block->u.block.stmts[i];
		if (s->kind == HGC_TIR_S_PFOR)
			pf = s;
		else if (s->kind == HGC_TIR_S_BLOCK && (in = hgc_fused_new_pfor(s, 0)))
			pf = in;
	}
	return pf;
}

/* The iterations of parallel loop pf (its ranges constant, as same_ranges
   checks), or 0. */
static int64_t iterations(const struct hgc_tir_stmt *pf)
{
	int64_t n = 1, b, e;

	for (int i = 0; i < pf->u.pfor.n; i++) {
		if (!hgc_tir_const_int(pf->u.pfor.begin[i], &b) ||
		    !hgc_tir_const_int(pf->u.pfor.end[i], &e))
			return 0;
		n *= e > b ? e - b : 0;
	}
	return n;
}

/* Coarse-grained fusion marks: when the fused op just lowered (its parallel
   loop pf, NULL if none) follows another one directly and their parallel
   loops have the same ranges, both get the same merge group (the TIR
   parallel-loop merge may join them), and the log says so.  Loops of one
   iteration (one thread's MPN = NPN = 1) are not marked: merged they would
   save no fork and keep every intermediate live at once. */
void hgc_fused_mark_merge(struct fstate *st, struct hgc_tir_stmt *pf, const char *name)
{
	char line[256];

	if (pf && st->last && same_ranges(st->last, pf) && iterations(pf) > 1) {
		if (!st->last->u.pfor.merge_group)
			st->last->u.pfor.merge_group = ++st->groups;
		pf->u.pfor.merge_group = st->last->u.pfor.merge_group;
		snprintf(line, sizeof(line), "coarse-grained: %s and %s: parallel loops over the "
			 "same ranges, merge group %d", st->last_name, name,
			 pf->u.pfor.merge_group);
		hgc_fused_log(st->o, line);
	}
	st->last = pf;
	st->last_name = name;
}

/* The name of fused op fo for the log: its anchor's result, or its first member's. */
const char *hgc_fused_name(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo)
{
	const struct hgc_tensor *t = (fo->anchor ? fo->anchor : fo->member[0])->out[0];

	if (t->name && *t->name)
		return t->name;
	return hgc_arena_printf(&cx->m->arena, "%%%d", t->id);
}

/* A fused op whose MatMul's bias went to its members (bias_member). */
struct biased {
	struct hgc_fused_op fo;
	struct hgc_op mm, add;		/* the MatMul without its bias; C + bias in place */
	struct hgc_tensor *in[2], *out[1];
};

/*
 * The bias of f32 MatMul op as the first member of fo, in arena memory (NULL when
 * it does not apply; the fused op is b->fo, the MatMul without its bias b->mm): the
 * template then writes C alone and the bias add joins the members' pass
 * over each row (hgc_fused_merge_loops: y = ReLU(C + bias) is one loop)
 * instead of being a pass of its own over the block at the write-back
 * before the members' pass.  The add is C + bias in place, as the
 * write-back computed it (one f32 rounding), so results do not change.
 * Only for elementwise members (a row reduction's members keep the
 * write-back's bias) with room for one more.  On DLRM's K = 13 layer (128
 * x 13 x 512, bias and ReLU) the passes after the brgemm take about half
 * as long as the brgemm; written as MatMul + BiasAdd (the bias a member)
 * it measured 38.9 us against 42.2 us with the bias at the write-back (one
 * thread, min of 100 runs alternated in one process, load 10).  The whole
 * bottom MLP did not move beyond the noise.  A Convolution's bias, one per
 * output channel, is a row of its result only when the channels are the
 * last dim (biased_kind: data_format NXC); there fold_post may then fold
 * bias and ReLU into the conv's brgemm calls as into a MatMul's.
 */
static bool biased_kind(const struct hgc_op *op)
{
	return op->kind == HGC_OP_MATMUL ||
	       (op->kind == HGC_OP_CONVOLUTION && !strcmp(hgc_op_string(op, "data_format"), "NXC"));
}

static struct biased *bias_member(struct hgc_lower_ctx *cx, const struct hgc_fused_op *fo,
				  const struct hgc_op *op)
{
	struct biased *b;

	if (!biased_kind(op) || op->nin != 3 || !fo->nmembers || fo->reduces ||
	    fo->nmembers >= HGC_FUSE_MAX_MEMBERS || op->out[0]->dtype != HGC_DT_F32)
		return NULL;
	for (int i = 0; i < 3; i++)
		if (op->in[i]->dtype != HGC_DT_F32)
			return NULL;
	b = hgc_arena_alloc(&cx->m->arena, sizeof(*b));
	b->mm = *op;
	b->mm.nin = 2;
	b->in[0] = b->out[0] = op->out[0];
	b->in[1] = op->in[2];
	b->add = (struct hgc_op){ .id = -1, .kind = HGC_OP_ADD, .nin = 2, .nout = 1,
				  .in = b->in, .out = b->out, .loc = op->loc };
	b->fo = *fo;
	b->fo.member[0] = &b->add;
	memcpy(&b->fo.member[1], fo->member, (size_t)fo->nmembers * sizeof(fo->member[0]));
	b->fo.nmembers = fo->nmembers + 1;
	return b;
}

/* Lower fused op fo (its anchor as op: with pre-ops folded in): the
   template's nest with the members at an anchor; split > 0: a layer of a
   chain split by rows jointly into that many parts (MPN = split, NPN = 1). */
static int lower_fused(struct hgc_lower_ctx *cx, struct fstate *st, const struct hgc_fused_op *fo,
		       const struct hgc_op *op, int split, struct hgc_tir_stmt *block,
		       struct hgc_lower_view *const *in, struct hgc_lower_view *out,
		       struct hgc_diag *d)
{
	struct biased *b = st->o->off ? NULL : bias_member(cx, fo, op);
	struct hgc_tmpl_bind bind;
	struct hgc_tmpl_env env;
	struct hgc_tmpl_inst inst;
	int i, rc = 0, at = -1, from;
	char *text = NULL;
	size_t len = 0;
	FILE *log;
	struct box bx;
	bool saved = cx->in_parallel;
	int64_t rows, rowlen;
	char line[256], why[192];

	if (b) {
		fo = &b->fo;
		op = &b->mm;
	}
	if (hgc_fused_prepare(cx, st, fo, d))
		return -1;
	if (!st->o->off)
		rc = choose_fused(st->o, fo, op, split, &bind, &env, d);
	if (rc < 0)
		return -1;
	if (!rc) {	/* naive loops, members after them */
		if (hgc_lower_op(cx, op, block, in, out, d))
			return -1;
		hgc_tmpl_why_naive(st->o, op, why, sizeof(why));
		snprintf(line, sizeof(line), "fused op: no template (%s); the post-ops follow the "
			 "naive loops", why);
		hgc_fused_log(st->o, line);
		hgc_tmpl_warn_use(st->o, op, why);
		st->last = NULL;
		return hgc_fused_members(cx, fo, block, NULL, d) ? -1 : 1;
	}
	from = block->u.block.n;
	if (hgc_tmpl_instantiate(cx, block, &bind, &env, in, out, &inst, d) < 0)
		return -1;
	if (!(log = open_memstream(&text, &len)))
		hgc_bug("open_memstream: out of memory");
	fprintf(log, "%s %s: template %s, fused (", hgc_op_table[fo->anchor->kind].name,
		fo->anchor->out[0]->name ? fo->anchor->out[0]->name : "", bind.t->name);
	hgc_tmpl_print_params(log, &inst.env);
	fprintf(log, ")");
	for (i = 0; i < 2; i++)
		if (fo->pre[i])
			fprintf(log, ", %s's StaticTranspose folded into its packing", i ? "B" : "A");
	fprintf(log, ", write-back at %s; candidates:",
		inst.writeback >= 0 ? bind.t->anchors[inst.writeback].name : "the end");
	at = pick(cx, st->o, fo, &bind, &inst, &bx, log);
	fprintf(log, "; post-ops at %s:", at >= 0 ? bind.t->anchors[at].name : "the end");
	for (i = 0; i < fo->nmembers; i++)
		fprintf(log, " %s", b && fo->member[i] == &b->add ? "bias" :
			hgc_op_table[fo->member[i]->kind].name);
	fclose(log);
	hgc_fused_log(st->o, text);
	free(text);
	if (at >= 0) {
		cx->in_parallel = saved || inst.points[at].in_parallel;
		/* codegen's prefer_zmm (llvm_intrin.c) widens this function on the same ISA */
		cx->wide_lanes = hgc_rt_isa() == HGC_ISA_AVX512;
		rc = lower_rows(cx, fo, inst.points[at].block, &bx, &rows, &rowlen, d);
		cx->in_parallel = saved;
		cx->wide_lanes = false;
		if (!rc && rows) {
			snprintf(line, sizeof(line), "%s: members row by row at %s, %lld rows of %lld",
				 hgc_fused_name(cx, fo), bind.t->anchors[at].name, (long long)rows,
				 (long long)rowlen);
			hgc_fused_log(st->o, line);
		}
	} else {
		rc = hgc_fused_members(cx, fo, block, NULL, d);
	}
	hgc_tmpl_inst_release(&inst);
	hgc_fused_mark_merge(st, hgc_fused_new_pfor(block, from), hgc_fused_name(cx, fo));
	i = hgc_tmpl_sym(bind.t, "MB");
	st->last_t = fo->reduces && i >= 0 ? bind.t : NULL;
	st->last_mb = st->last_t ? inst.env.v[i] : 0;
	return rc ? -1 : 1;
}

/* The anchor op of fo with its pre-ops folded: the transposes' inputs as
   its operands, transpose_a/b flipped (ins and attrs: room for 8 and 16). */
static void fold_pre(const struct hgc_fused_op *fo, struct hgc_op *mod, struct hgc_tensor **ins,
		     struct hgc_attr *attrs)
{
	static const char *const flag[2] = { "transpose_a", "transpose_b" };
	const struct hgc_op *a = fo->anchor;
	int i, j;

	if (a->nin > 8 || a->nattr > 14)
		hgc_bug("fusion: a MatMul with %d inputs and %d attributes", a->nin, a->nattr);
	*mod = *a;
	memcpy(ins, a->in, (size_t)a->nin * sizeof(*ins));
	memcpy(attrs, a->attrs, (size_t)a->nattr * sizeof(*attrs));
	mod->in = ins;
	mod->attrs = attrs;
	for (i = 0; i < 2; i++) {
		if (!fo->pre[i])
			continue;
		ins[i] = fo->pre[i]->in[0];
		for (j = 0; j < mod->nattr && strcmp(attrs[j].name, flag[i]); j++)
			;
		if (j == mod->nattr)
			attrs[mod->nattr++] = (struct hgc_attr){ .name = flag[i], .type = HGC_ATTR_BOOL };
		attrs[j].v.i = !hgc_op_bool(a, flag[i]);
	}
}

/* Lower fused op fo whose anchor has pre-ops: the MatMul reads the
   transposes' inputs (graph entry) with its transpose flags flipped, so the
   template's packing does the transposes; the transposes are skipped. */
static int lower_with_pre(struct hgc_lower_ctx *cx, struct fstate *st,
			  const struct hgc_fused_op *fo, struct hgc_diag *d)
{
	struct hgc_lower_view *in[8];
	struct hgc_tensor *ins[8];
	struct hgc_attr attrs[16];
	struct hgc_op mod;
	int i;

	fold_pre(fo, &mod, ins, attrs);
	for (i = 0; i < mod.nin; i++) {
		if (ensure_view(cx, mod.in[i], false, d))
			return -1;
		in[i] = &cx->views[mod.in[i]->id];
	}
	if (ensure_view(cx, mod.out[0], true, d))
		return -1;
	return lower_fused(cx, st, fo, &mod, false, cx->f->body, in, &cx->views[mod.out[0]->id], d);
}

/*
 * The anchor's result of fused op fo written straight into the graph
 * output its last member computes, when the members are elementwise (each
 * reads the anchor's result, and what they computed from it, only at the
 * element it writes: no row reduction), that output has the result's shape
 * and type, and nothing else reads the result: the members then work in
 * place on the output, as they do on a temporary result (hgc_fused_prepare),
 * and the result needs no buffer of its own, nor the members a pass from it
 * into the output.  DLRM's last layers, y = ReLU(h2 + b2).
 */
static void result_into_output(struct hgc_lower_ctx *cx, const struct fstate *st,
			       const struct hgc_fused_op *fo)
{
	const struct hgc_tensor *r = fo->anchor->out[0], *y;

	if (!fo->nmembers || fo->reduces || !st->f->in_place)
		return;
	y = fo->member[fo->nmembers - 1]->out[0];
	if (cx->have[r->id] || !cx->have[y->id] || !hgc_graph_is_output(cx->g, y) ||
	    hgc_graph_is_output(cx->g, r) || y->dtype != r->dtype || y->ndims != r->ndims ||
	    memcmp(y->dims, r->dims, (size_t)r->ndims * sizeof(r->dims[0])) ||
	    cx->views[y->id].load || cx->views[y->id].ndims != r->ndims ||
	    !read_only_up_to(cx->g, fo, fo->nmembers - 1, r))
		return;
	cx->views[r->id] = cx->views[y->id];
	cx->have[r->id] = true;
}

/* hgc_lower_opts.lower_first: a region at its first member, a fused op
   with pre-ops at its anchor; a fused op's result into the graph output
   its members compute (result_into_output). */
static int first(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_diag *d)
{
	struct fstate *st = cx->opts->user;
	const struct hgc_fused_op *fo = st->f ? hgc_fusion_region_of(st->f, op) : NULL;

	if (fo)
		return hgc_fused_lower_region(cx, st, fo, d);
	fo = st->f ? hgc_fusion_of(st->f, op) : NULL;
	if (fo && fo->anchor == op)
		result_into_output(cx, st, fo);
	if (fo && (fo->pre[0] || fo->pre[1]))
		return lower_with_pre(cx, st, fo, d);
	if (hgc_op_table[op->kind].category != HGC_CAT_TUNABLE &&
	    (!st->f || !hgc_fusion_is_member(st->f, op)))
		st->last = NULL;	/* another op runs between: no merge across it */
	return 0;
}

/* Whether op, bound to template t, takes MB = mb (a pin the config does not set),
   and NB = *nb (else *nb becomes 0: no NB pin). */
static bool takes_mb(struct hgc_tmpl_opts *o, const struct hgc_tmpl *t, const struct hgc_op *op,
		     int64_t mb, int64_t *nb)
{
	struct hgc_tmpl_pin pins[32];
	struct hgc_tmpl_bind bind;
	struct hgc_tmpl_env env;
	struct hgc_diag tmp;
	int rc, snb = hgc_tmpl_sym(t, "NB"), n;

	if (hgc_tmpl_used(o, op) && hgc_tmpl_used(o, op) != t)
		return false;
	n = hgc_tmpl_pins_of(o, t, pins, 32);
	for (int i = 0; i < n; i++)
		if (pins[i].sym == snb)
			*nb = 0;
	hgc_diag_init(&tmp);
	rc = choose(o, t, op, false, false, mb, &bind, &env, &tmp);
	if (rc > 0 && *nb > 0 && snb >= 0) {
		struct hgc_tmpl_pin two[2] = { { .sym = hgc_tmpl_sym(t, "MB"), .value = mb },
					       { .sym = snb, .value = *nb } };
		struct hgc_tmpl_env e2;

		if (n || hgc_tmpl_choose(&bind, two, 2, &e2, &tmp) < 0)
			*nb = 0;
	}
	hgc_diag_release(&tmp);
	return rc > 0 && env.v[hgc_tmpl_sym(t, "MB")] == mb;
}

/*
 * A MatMul right after a fused row reduction on a batched template (the
 * scores x V after QK^T and softmax) through the templates, with that op's
 * MB pinned when its template takes it, so that both parallel loops run over
 * the same (batch, row block) ranges and merge (the rows of the scores one
 * iteration writes are the rows the next one reads); and NB = N when N fits
 * one block, so that the packed B is B's own order, which copy_forward then
 * reads in place (V of [S, 64]).
 */
static int lower_after(struct hgc_lower_ctx *cx, struct fstate *st, const struct hgc_op *op,
		       struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
		       struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_tmpl_opts *o = st->o;
	const struct hgc_tmpl_rule *saved = o->rules;
	const struct hgc_tensor *r = op->out[0];
	struct hgc_tmpl_rule *rules;
	char key[2][160], value[2][32], line[256];
	int n = o->nrules, rc;
	int64_t nb = r->ndims ? r->dims[r->ndims - 1] : 0;

	if (nb > 64)
		nb = 0;		/* one block of N columns: B's packing is its own order */
	if (!st->last || !st->last_t || op->kind != st->last_t->op || o->off ||
	    !takes_mb(o, st->last_t, op, st->last_mb, &nb))
		return hgc_tmpl_lower_tunable(cx, op, block, in, out, d);
	rules = hgc_xcalloc((size_t)n + 2, sizeof(*rules));
	if (n)
		memcpy(rules, saved, (size_t)n * sizeof(*rules));
	snprintf(key[0], sizeof(key[0]), "%s.MB", st->last_t->name);
	snprintf(value[0], sizeof(value[0]), "%lld", (long long)st->last_mb);
	snprintf(key[1], sizeof(key[1]), "%s.NB", st->last_t->name);
	snprintf(value[1], sizeof(value[1]), "%lld", (long long)nb);
	rules[n] = (struct hgc_tmpl_rule){ .kind = "pin", .key = key[0], .value = value[0] };
	rules[n + 1] = (struct hgc_tmpl_rule){ .kind = "pin", .key = key[1], .value = value[1] };
	o->rules = rules;
	o->nrules = n + 1 + (nb > 0);
	snprintf(line, sizeof(line), "%s: MB = %lld as %s's rows (coarse-grained merge)%s",
		 r->name ? r->name : "MatMul", (long long)st->last_mb,
		 st->last_name ? st->last_name : "the previous op",
		 nb > 0 ? ", NB = N (B packed in its own order)" : "");
	hgc_fused_log(o, line);
	rc = hgc_tmpl_lower_tunable(cx, op, block, in, out, d);
	o->rules = saved;
	o->nrules = n;
	free(rules);
	return rc;
}

/* The number of ops of g that read tensor t. */
static int readers(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	int n = 0;

	for (size_t k = 0; k < g->ops.len; k++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, k);

		for (int j = 0; j < op->nin; j++)
			n += op->in[j] == t;
	}
	return n;
}

/*
 * The MatMul that continues a chain after MatMul op (with its post-ops, if
 * it anchors a fused op), or NULL: the next op of the graph, a 2-D MatMul
 * whose A (not transposed) is op's final result and the only reader of it,
 * which is no graph output, and without pre-ops.  Neither may hold a row
 * reduction.  Each layer's row block then needs only the same row block of
 * the layer before it.
 */
static const struct hgc_op *chain_next(const struct hgc_lower_ctx *cx, const struct fstate *st,
				       const struct hgc_op *op)
{
	const struct hgc_graph *g = cx->g;
	const struct hgc_fused_op *fo = hgc_fusion_of(st->f, op), *fn;
	const struct hgc_op *last = fo && fo->nmembers ? fo->member[fo->nmembers - 1] : op, *nx;
	const struct hgc_tensor *t = last->out[0];
	size_t k;

	if (!g || op->kind != HGC_OP_MATMUL || (fo && (fo->reduces || fo->pre[0] || fo->pre[1])) ||
	    t->ndims != 2 || op->out[0]->ndims != 2 || hgc_graph_is_output(g, t))
		return NULL;
	for (k = 0; k < g->ops.len && HGC_GRAPH_OP(g, k) != last; k++)
		;
	if (k + 1 >= g->ops.len)
		return NULL;
	nx = HGC_GRAPH_OP(g, k + 1);
	fn = hgc_fusion_of(st->f, nx);
	if (nx->kind != HGC_OP_MATMUL || nx->nin < 2 || nx->in[0] != t || nx->in[1] == t ||
	    hgc_op_bool(nx, "transpose_a") || nx->out[0]->ndims != 2 || readers(g, t) != 1 ||
	    (fn && (fn->reduces || fn->pre[0] || fn->pre[1])))
		return NULL;
	return nx;
}

/* The estimate (ns) of op through the template its lowering would take
   (choose_fused's order; split > 0: by rows into split parts, MPN = split and
   NPN = 1, the template bound for split threads), and its MPN and NPN (1
   without one) into grid[0] and grid[1]; -1 when none takes it or the
   config pins MPN or NPN. */
static double layer_cost(struct hgc_tmpl_opts *o, const struct hgc_op *op, int split,
			 int64_t grid[2])
{
	struct hgc_tmpl_rank rank[HGC_TMPL_RANK_MAX];
	struct hgc_tmpl_pin pins[36];
	struct hgc_tmpl_bind bind;
	struct hgc_heur_result *r = hgc_xcalloc(1, sizeof(*r));
	int threads = o->threads > 0 ? o->threads : omp_get_max_threads(), n, np, i, j;
	double cost = -1;

	n = hgc_tmpl_rank(o, op, threads, rank, HGC_TMPL_RANK_MAX);
	for (i = 0; i < n && cost < 0; i++) {
		const struct hgc_tmpl *t = rank[i].t;
		int mpn = hgc_tmpl_sym(t, "MPN"), npn = hgc_tmpl_sym(t, "NPN");

		if (t->op != op->kind || (split && (mpn < 0 || npn < 0)) ||
		    hgc_tmpl_bind(t, op, split ? split : threads, &bind) < 0)
			continue;
		np = hgc_tmpl_pins_of(o, t, pins, 32);
		for (j = 0; j < np; j++)
			if (pins[j].sym == mpn || pins[j].sym == npn)
				goto out;
		if (split) {
			pins[np++] = (struct hgc_tmpl_pin){ .sym = npn, .value = 1 };
			pins[np++] = (struct hgc_tmpl_pin){ .sym = mpn, .value = split };
		}
		if (hgc_heur_search(&bind, pins, np, r, NULL) == 0) {
			cost = r->top[0].est.total_ns;
			grid[0] = mpn >= 0 ? r->top[0].env.v[mpn] : 1;
			grid[1] = npn >= 0 ? r->top[0].env.v[npn] : 1;
		}
		else if (np > (split ? 2 : 0))
			break;	/* a config pin fails: the lowering reports it */
	}
out:
	free(r);
	return cost;
}

/*
 * The bytes of a chain layer's A that each thread reads although another
 * thread wrote them, with the layers split their own way: A is the result
 * of the layer before (grid prev: its MPN and NPN), the layer reads it
 * split by grid.  A thread reads the rows of its MPN slice, all K columns;
 * only when both layers split by rows alone, over the same threads, did
 * it write them itself.  Otherwise about 1 - 1 / threads of them come from
 * the other threads' caches (or L3) instead of its own L2.  Split by rows
 * jointly this is 0: the reason to split that way.
 */
static double foreign_a_bytes(const struct hgc_op *op, const int64_t prev[2],
			      const int64_t grid[2], int threads)
{
	double a = (double)hgc_tensor_nbytes(op->in[0]);

	if (prev[1] == 1 && grid[1] == 1 && prev[0] == threads && grid[0] == threads)
		return 0;
	return a / (double)(grid[0] > 0 ? grid[0] : 1) * (1 - 1.0 / threads);
}

/* The bytes of a per-thread slice that leave L2 between the layer that
   writes it and the next one, which reads it: all of it when it is more
   than half the L2 (the weights and packed blocks take the rest). */
static int64_t spilled(int64_t bytes, int64_t l2)
{
	return bytes > l2 / 2 ? bytes : 0;
}

#define CHUNKS_MAX 8		/* row chunks per thread at most */
#define CHUNK_ROWS_MIN 64	/* rows a chunk keeps at least (brgemm row blocks) */

/*
 * Chunk the chain of st (split by rows, or one thread): each thread runs
 * its rows as c chunks, every layer on a chunk before the next chunk
 * starts (MPN = threads * c: the merged parallel loop's iterations, static
 * schedule, go to the threads in contiguous runs), so that an intermediate
 * whose per-thread slice leaves L2 (written out by one layer and read back
 * by the next) stays in it, and tensor_shrink with the per-thread reuse
 * keeps one chunk of each intermediate per thread instead of whole tensors.
 * The price: every extra chunk reads all of the chain's B again.  In bytes,
 * c is taken where 2 * (the spilled bytes saved) - (c - 1) * B is largest
 * and positive, with the rows a multiple of threads * c and at least
 * CHUNK_ROWS_MIN per chunk, and every layer's template valid for it.
 * DLRM's bottom MLP at batch 512 (h0 of 1 MiB, h1 of 512 KiB, 680 KB of
 * B): 2 chunks per thread at 1 and 2 threads; the FFN (h of 1.5 MiB a chunk
 * at 128 rows) and DLRM's top MLP (8.8 MB of B) are not chunked.
 */
static void plan_chunks(struct hgc_lower_ctx *cx, struct fstate *st, int threads,
			int64_t weights, const struct hgc_heur_machine *mc)
{
	int64_t m = st->chain[0]->out[0]->dims[0], gain, best_gain = 0, grid[2];
	int best = 1, c, k;
	char line[512];
	size_t at;

	for (c = 2; c <= CHUNKS_MAX; c *= 2) {
		if (m % (threads * c) || m / (threads * c) < CHUNK_ROWS_MIN)
			break;
		for (gain = 0, k = 1; k < st->nchain; k++) {
			int64_t a = (int64_t)hgc_tensor_nbytes(st->chain[k]->in[0]) / threads;

			gain += 2 * (spilled(a, mc->l2) - spilled(a / c, mc->l2));
		}
		gain -= (c - 1) * weights;
		if (gain <= best_gain)
			continue;
		for (k = 0; k < st->nchain; k++)
			if (layer_cost(st->o, st->chain[k], threads * c, grid) < 0)
				break;
		if (k == st->nchain) {
			best = c;
			best_gain = gain;
		}
	}
	if (best == 1)
		return;
	st->chain_split = true;
	st->chain_parts = threads * best;
	at = (size_t)snprintf(line, sizeof(line), "coarse-grained: MatMuls");
	for (k = 0; k < st->nchain && at < sizeof(line); k++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, " %s",
				       hgc_fused_name(cx, &(struct hgc_fused_op){
					       .anchor = st->chain[k] }));
	if (at < sizeof(line))
		snprintf(line + at, sizeof(line) - at, " in %d row chunks per thread (MPN = %d, "
			 "NPN = 1): %.1f KiB fewer bytes through L3 (intermediates kept in L2, "
			 "B read again)", best, st->chain_parts, (double)best_gain / 1024);
	hgc_fused_log(st->o, line);
}

/*
 * Plan a chain of MatMuls from op (chain_next) split by rows jointly: each
 * layer with MPN = threads and NPN = 1, so that a thread's rows of one
 * layer need only its rows of the layer before, the parallel loops get the
 * same ranges and the TIR pass merges them (one fork and join, no barrier).
 * Taken when the estimates say the split layers, less the forks and joins
 * saved, cost no more than each layer with its own split.  The estimates of
 * one op do not see that with NPN = 1 every thread reads all of B where it
 * read 1 / NPN of it: when the chain's B operands together do not stay in
 * the threads' L2 caches from one run to the next, those extra bytes come
 * from L3 on every run and count too (DLRM's top MLP: 8.8 MB of weights).
 * The log says what was compared.  With one thread the layers are not
 * split, but the chain may still be chunked (plan_chunks); a chain of one
 * layer is not planned.
 */
static void plan_chain(struct hgc_lower_ctx *cx, struct fstate *st, const struct hgc_op *op)
{
	struct hgc_heur_machine mc;
	const struct hgc_op *nx;
	double own = 0, rows = 0, c[2], extra = 0, foreign = 0;
	int64_t grid[2][2], prev[2] = { 0, 0 }, bytes = 0, b;
	int threads = st->o->threads > 0 ? st->o->threads : omp_get_max_threads(), n = 1, k;
	char *text = NULL;
	size_t len = 0;
	FILE *log;

	st->nchain = st->chain_at = 0;
	st->chain_parts = threads;
	if (st->o->off)
		return;
	st->chain[0] = op;
	while (n < HGC_FUSE_CHAIN_MAX && (nx = chain_next(cx, st, st->chain[n - 1])))
		st->chain[n++] = nx;
	if (n < 2)
		return;		/* before the estimates: a search of every template, twice */
	for (k = 0; k < n; k++) {
		c[0] = layer_cost(st->o, st->chain[k], 0, grid[0]);
		c[1] = layer_cost(st->o, st->chain[k], threads, grid[1]);
		if (c[0] < 0 || c[1] < 0)
			break;
		own += c[0];
		rows += c[1];
		b = (int64_t)hgc_tensor_nbytes(st->chain[k]->in[1]);
		bytes += b;
		extra += (double)b * (1 - 1.0 / (double)(grid[0][1] > 0 ? grid[0][1] : 1));
		if (k > 0)
			foreign += foreign_a_bytes(st->chain[k], prev, grid[0], threads);
		prev[0] = grid[0][0];
		prev[1] = grid[0][1];
	}
	if ((n = k) < 2)
		return;
	hgc_heur_machine_host(&mc, 8);
	if (bytes <= threads * mc.l2)
		extra = 0;
	rows += extra / mc.l3_bw - (n - 1) * mc.fork_ns;
	own += foreign / mc.l3_bw;
	st->nchain = n;
	st->chain_split = false;
	if (threads < 2) {
		plan_chunks(cx, st, threads, bytes, &mc);
		return;
	}
	if (!(log = open_memstream(&text, &len)))
		hgc_bug("open_memstream: out of memory");
	fprintf(log, "coarse-grained: MatMuls");
	for (k = 0; k < n; k++)
		fprintf(log, " %s", hgc_fused_name(cx, &(struct hgc_fused_op){ .anchor = st->chain[k] }));
	fprintf(log, " %s by rows jointly (MPN = %d, NPN = 1): estimate %.1f us (%d forks and "
		"joins fewer, %.1f us of B read again from L3) against %.1f us each with its own "
		"split (%.1f us of A written by another thread)", rows <= own ? "split" : "not split",
		threads, rows / 1e3, n - 1, extra / mc.l3_bw / 1e3, own / 1e3,
		foreign / mc.l3_bw / 1e3);
	fclose(log);
	hgc_fused_log(st->o, text);
	free(text);
	st->chain_split = rows <= own;
	if (st->chain_split)
		plan_chunks(cx, st, threads, bytes, &mc);
}

/* Whether MatMul op is lowered as a layer of a chain split by rows (planned
   at its first layer). */
static bool in_chain(struct hgc_lower_ctx *cx, struct fstate *st, const struct hgc_op *op)
{
	if (!st->f || op->kind != HGC_OP_MATMUL)
		return false;
	if (st->chain_at < st->nchain && st->chain[st->chain_at] == op)
		return st->chain_at++, st->chain_split;
	plan_chain(cx, st, op);
	if (!st->nchain)
		return false;
	st->chain_at = 1;
	return st->chain_split;
}

/* hgc_lower_opts.lower_tunable: fused ops here, other ops to the templates. */
static int hook(struct hgc_lower_ctx *cx, const struct hgc_op *op, struct hgc_tir_stmt *block,
		struct hgc_lower_view *const *in, struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct fstate *st = cx->opts->user;
	const struct hgc_lower_opts *saved = cx->opts;
	const struct hgc_fused_op *fo = st->f ? hgc_fusion_of(st->f, op) : NULL;
	int rc, from = block->u.block.n;
	int split = in_chain(cx, st, op) ? st->chain_parts : 0;

	if (split && !fo) {	/* a layer without post-ops: a fused op without members */
		struct hgc_fused_op alone = { .anchor = op, .domain = op->out[0] };

		return lower_fused(cx, st, &alone, op, split, block, in, out, d);
	}
	if (fo)
		return lower_fused(cx, st, fo, op, split, block, in, out, d);
	cx->opts = &st->plain;
	rc = lower_after(cx, st, op, block, in, out, d);
	cx->opts = saved;
	st->last_t = NULL;
	if (st->f)	/* a tunable op alone is a fused op without members */
		hgc_fused_mark_merge(st, rc > 0 ? hgc_fused_new_pfor(block, from) : NULL,
				     op->out[0]->name ? op->out[0]->name :
				     hgc_arena_printf(&cx->m->arena, "%%%d", op->out[0]->id));
	return rc;
}

/* hgc_lower_opts.skip: the members, which their fused op lowered. */
static bool skip(struct hgc_lower_ctx *cx, const struct hgc_op *op)
{
	const struct fstate *st = cx->opts->user;

	return st->f && hgc_fusion_is_member(st->f, op);
}

/* The graph with templates and fusion. */
struct hgc_tir_module *hgc_fused_lower_graph(const struct hgc_graph *g,
					     const struct hgc_lower_opts *base,
					     struct hgc_tmpl_opts *o, const struct hgc_fusion *f,
					     struct hgc_diag *d)
{
	struct hgc_lower_opts lo = *base;
	struct fstate st = { .f = f, .o = o, .plain = *base };

	if (hgc_tmpl_check_rules(o->rules, o->nrules, d) < 0)
		return NULL;
	st.plain.lower_tunable = hgc_tmpl_lower_tunable;
	st.plain.user = o;
	st.plain.skip = NULL;
	lo.lower_tunable = hook;
	lo.user = &st;
	lo.skip = skip;
	lo.lower_first = first;
	return hgc_lower_graph(g, &lo, d);
}
