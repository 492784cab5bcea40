/*
 * lfuse.c: loop fusion.  Lowering gives each member of a fused region its
 * own loop nest over the region's tile (docs/fusion.md), so a region of k
 * elementwise ops is k passes over a temporary: a GELU alone is six.  Two
 * neighbouring nests over the same ranges whose innermost bodies hold only
 * lets and stores become one nest that runs the first body, then the
 * second (its loop variables renamed to the first's), per iteration: values
 * stay in registers between the members and LLVM vectorizes one loop
 * instead of k (a chain of 800 Adds took 18 s in LLVM's O3 as 800 loops).
 *
 * Legal when no iteration of the second nest needs what a later iteration
 * of the first writes, nor writes what a later iteration of the first
 * reads.  The pass asks for the simple case that covers the regions: every
 * tensor one body stores to is accessed by both bodies at one index only
 * (the same expressions, up to the renaming), and distinct iterations
 * touch distinct elements at that index.  Parameters count as one tensor
 * (a caller may pass one buffer twice): when one is stored to, every
 * parameter access must be at that index, over parameters of the same
 * shape.  Blocks that define no tensor are spliced into their parent
 * first, so loops that merged parallel bodies left in nested blocks become
 * neighbours.  It runs after index_flatten, when every local index is one
 * linear expression and the buffer plan is made.
 */
#include "passes_int.h"

#include <stdlib.h>

#define MAX_DEPTH 8

/* A perfect nest of FOR loops: its loops and their variables outermost first, its
   innermost body. */
struct nest {
	int depth;
	struct hgc_tir_stmt *loops[MAX_DEPTH];
	struct hgc_tir_var *vars[MAX_DEPTH];
	struct hgc_tir_stmt *leaf;
};

/* One tensor access of a leaf body. */
struct access {
	struct hgc_tir_tensor *t;
	int n;
	struct hgc_tir_expr **idx;
	bool store;
	int side;		/* 0: the first nest, 1: the second */
};

/* The pass's state for one pair of nests. */
struct pair {
	const struct hgc_tp_vars *v;
	struct nest a, b;
	struct hgc_vec acc;	/* struct access */
	int side;		/* of the statement being walked */
	bool bad;		/* an expression the pass does not reason about */
	bool calls[2];		/* per side: a math function called per element */
	struct hgc_tir_module *m;
};

/* Whether s, with every loop of its nest, is a perfect nest with a body of lets and
   stores only; *n describes it. */
static bool nest_of(struct hgc_tir_stmt *s, struct nest *n)
{
	struct hgc_tir_stmt *body;

	n->depth = 0;
	while (s->kind == HGC_TIR_S_FOR && n->depth < MAX_DEPTH) {
		n->vars[n->depth] = s->u.loop.var;
		n->loops[n->depth++] = s;
		body = s->u.loop.body;
		if (body->u.block.n == 1 && body->u.block.stmts[0]->kind == HGC_TIR_S_FOR) {
			s = body->u.block.stmts[0];
			continue;
		}
		for (int i = 0; i < body->u.block.n; i++) {
			enum hgc_tir_stmt_kind k = body->u.block.stmts[i]->kind;

			if (k != HGC_TIR_S_LET && k != HGC_TIR_S_STORE)
				return false;
		}
		n->leaf = body;
		return true;
	}
	return false;
}

/* The first nest's variable that the second nest's var stands for, or var itself. */
static const struct hgc_tir_var *mapped(const struct pair *p, int side,
					const struct hgc_tir_var *var)
{
	return side == 1 ? hgc_tp_renamed(var, p->b.vars, p->a.vars, p->b.depth) : var;
}

/* Structural equality of x (of side sx) and y (of side sy), the second nest's loop
   variables read as the first's. */
static bool same(const struct pair *p, const struct hgc_tir_expr *x, int sx,
		 const struct hgc_tir_expr *y, int sy)
{
	if (sx == sy)
		return hgc_tp_expr_eq(x, y);
	if (sx == 1)
		return same(p, y, sy, x, sx);
	return hgc_tp_expr_eq_renamed(x, y, p->b.vars, p->a.vars, p->b.depth);
}

/* Whether the two nests run over the same ranges, level by level, and no range reads
   memory or calls (the first nest could write it: fused, the second's range would
   be read before). */
static bool same_ranges(const struct pair *p)
{
	if (p->a.depth != p->b.depth)
		return false;
	for (int k = 0; k < p->a.depth; k++) {
		const struct hgc_tir_stmt *x = p->a.loops[k], *y = p->b.loops[k];

		if (!hgc_tp_pure(x->u.loop.begin) || !hgc_tp_pure(x->u.loop.end) ||
		    !hgc_tp_pure(x->u.loop.step) ||
		    !same(p, x->u.loop.begin, 0, y->u.loop.begin, 1) ||
		    !same(p, x->u.loop.end, 0, y->u.loop.end, 1) ||
		    !same(p, x->u.loop.step, 0, y->u.loop.step, 1))
			return false;
	}
	return true;
}

/*
 * Whether the backends call a math function per element for e (libm's
 * logf, tanhf, powf: core/codegen/llvm_intrin.c, math(); exp and erf of f32
 * are inline code).  LLVM does not vectorize a loop with such a call, so a
 * nest with one is not fused with a nest without: GELU's six loops fused
 * with a Tanh ran 3x slower than apart.
 */
static bool called_out(const struct hgc_tir_expr *e)
{
	if (e->kind != HGC_TIR_E_INTRIN)
		return false;
	if (e->op == HGC_TIR_I_LOG || e->op == HGC_TIR_I_TANH || e->op == HGC_TIR_I_POW)
		return true;
	return (e->op == HGC_TIR_I_EXP || e->op == HGC_TIR_I_EXP_NONPOS || e->op == HGC_TIR_I_ERF) &&
	       e->type.kind != HGC_TIR_F32;
}

/* Visitor: record the loads of an expression; give up on addresses and calls. */
static void expr_access(struct hgc_tir_visitor *vis, struct hgc_tir_expr *e)
{
	struct pair *p = vis->ctx;

	p->calls[p->side] |= called_out(e);
	if (e->kind == HGC_TIR_E_ADDR || e->kind == HGC_TIR_E_CALL)
		p->bad = true;
	else if (e->kind == HGC_TIR_E_LOAD)
		*(struct access *)hgc_vec_push(&p->acc) =
			(struct access){ e->u.tensor, e->nops, e->ops, false, p->side };
}

/* Every access of the two leaf bodies into p->acc. */
static void collect(struct pair *p)
{
	struct hgc_tir_visitor vis = { .expr = expr_access, .ctx = p };

	p->acc.len = 0;
	p->calls[0] = p->calls[1] = false;
	for (p->side = 0; p->side < 2; p->side++) {
		struct hgc_tir_stmt *leaf = p->side ? p->b.leaf : p->a.leaf;

		for (int i = 0; i < leaf->u.block.n; i++) {
			struct hgc_tir_stmt *s = leaf->u.block.stmts[i];

			hgc_tir_walk_stmt(s, &vis);
			if (s->kind == HGC_TIR_S_STORE)
				*(struct access *)hgc_vec_push(&p->acc) = (struct access){
					s->u.store.tensor, s->u.store.n, s->u.store.idx, true, p->side };
		}
	}
}

/* Whether x and y are in one alias class: the same tensor, or two parameters. */
static bool one_class(const struct hgc_tir_tensor *x, const struct hgc_tir_tensor *y)
{
	return x == y || (x->is_param && y->is_param);
}

/* Whether accesses x and y are at the same index of tensors of the same shape. */
static bool same_index(const struct pair *p, const struct access *x, const struct access *y)
{
	if (x->n != y->n || x->t->ndims != y->t->ndims)
		return false;
	for (int d = 0; d < x->t->ndims; d++)
		if (x->t != y->t && (hgc_tir_tensor_dim(x->t, d) < 0 ||
				     hgc_tir_tensor_dim(x->t, d) != hgc_tir_tensor_dim(y->t, d)))
			return false;
	for (int i = 0; i < x->n; i++)
		if (!same(p, x->idx[i], x->side, y->idx[i], y->side))
			return false;
	return true;
}

/* Whether distinct iterations of the nest reach distinct elements at store s's index. */
static bool injective(const struct pair *p, const struct access *s)
{
	struct hgc_tp_aff base[HGC_TP_AFF_MAX];
	int64_t width[HGC_TP_AFF_MAX];

	if (s->n > HGC_TP_AFF_MAX)
		return false;
	for (int d = 0; d < s->n; d++) {
		base[d] = hgc_tp_affine(p->v, s->idx[d]);
		if (!base[d].ok)
			return false;
		for (int k = 0; k < base[d].n; k++)
			base[d].t[k].var = (struct hgc_tir_var *)mapped(p, s->side, base[d].t[k].var);
		width[d] = 1;
	}
	return hgc_tp_disjoint(p->v, s->n, base, width, p->a.vars, p->a.depth);
}

/* Whether running the second body right after the first, per iteration, is right. */
static bool legal(struct pair *p)
{
	size_t n;
	struct access *acc;

	p->bad = false;
	collect(p);
	n = p->acc.len;
	acc = (struct access *)p->acc.data;
	if (p->bad || p->calls[0] != p->calls[1])
		return false;
	for (size_t i = 0; i < n; i++) {
		bool checked = false;

		if (!acc[i].store)
			continue;
		for (size_t j = 0; j < i && !checked; j++)	/* its class was checked already */
			checked = acc[j].store && one_class(acc[j].t, acc[i].t);
		if (checked)
			continue;
		for (size_t j = 0; j < n; j++)
			if (one_class(acc[j].t, acc[i].t) && !same_index(p, &acc[i], &acc[j]))
				return false;
		if (!injective(p, &acc[i]))
			return false;
	}
	return true;
}

/* Mutator: the second nest's loop variables renamed to the first's. */
static struct hgc_tir_expr *rename_var(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	const struct pair *p = mu->ctx;

	if (e->kind == HGC_TIR_E_VAR && mapped(p, 1, e->u.var) != e->u.var)
		return hgc_tir_ref(mu->m, (struct hgc_tir_var *)mapped(p, 1, e->u.var));
	return e;
}

/* Append the second leaf's statements, renamed, to the first leaf. */
static void fuse(struct pair *p)
{
	struct hgc_tir_mutator mu = { .expr = rename_var, .m = p->m, .ctx = p };

	for (int i = 0; i < p->b.leaf->u.block.n; i++)
		hgc_tir_append(p->a.leaf, hgc_tir_mutate_stmt(p->b.leaf->u.block.stmts[i], &mu));
}

/* Whether block s defines a tensor among its own statements. */
static bool defines_tensor(const struct hgc_tir_stmt *s)
{
	for (int i = 0; i < s->u.block.n; i++)
		if (s->u.block.stmts[i]->kind == HGC_TIR_S_TENSOR)
			return true;
	return false;
}

/* Splice the statements of b's child blocks that define no tensor into b. */
static void splice_blocks(struct hgc_tir_stmt *b)
{
	for (int i = 0; i < b->u.block.n; i++) {
		struct hgc_tir_stmt *c = b->u.block.stmts[i];

		if (c->kind != HGC_TIR_S_BLOCK || defines_tensor(c))
			continue;
		hgc_tir_remove(b, i, 1);
		for (int k = 0; k < c->u.block.n; k++)
			hgc_tir_insert(b, i + k, c->u.block.stmts[k]);
		i--;	/* look at what came in: it may be a block too */
	}
}

/* The walk's state. */
struct walk {
	struct pair p;
	int changes;
};

/* Before a block's statements are visited: splice, then fuse its neighbouring nests. */
static bool block_pre(struct hgc_tir_visitor *vis, struct hgc_tir_stmt *b)
{
	struct walk *w = vis->ctx;
	struct pair *p = &w->p;

	if (b->kind != HGC_TIR_S_BLOCK)
		return true;
	splice_blocks(b);
	for (int i = 0; i + 1 < b->u.block.n;) {
		struct hgc_tir_stmt **s = b->u.block.stmts;

		if (nest_of(s[i], &p->a) && nest_of(s[i + 1], &p->b) && same_ranges(p) &&
		    legal(p)) {
			fuse(p);
			hgc_tir_remove(b, i + 1, 1);
			w->changes++;
		} else {
			i++;
		}
	}
	return true;
}

int hgc_tir_pass_loop_fuse(struct hgc_tir_module *m, struct hgc_tir_passes *passes,
			   struct hgc_diag *d)
{
	struct walk w = { .p = { .m = m } };
	struct hgc_tir_visitor vis = { .stmt_pre = block_pre, .ctx = &w };
	struct hgc_tp_vars v;

	(void)passes;
	(void)d;
	hgc_vec_init(&w.p.acc, sizeof(struct access));
	for (size_t i = 0; i < m->funcs.len; i++) {
		struct hgc_tir_func *f = HGC_VEC_AT(&m->funcs, struct hgc_tir_func *, i);

		hgc_tp_vars_init(&v, m, f);
		w.p.v = &v;
		hgc_tir_walk_stmt(f->body, &vis);
		hgc_tp_vars_release(&v);
	}
	hgc_vec_release(&w.p.acc);
	return w.changes;
}
