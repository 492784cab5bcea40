/*
 * walk.c: the generic traversal every pass builds on.  A visitor sees each
 * statement before and after its children and each expression after its
 * operands; a mutator rewrites in place, bottom-up.
 */
#include "tir.h"
#include "tir_int.h"

#include <string.h>

/* Visit an expression tree, operands first. */
void hgc_tir_walk_expr(struct hgc_tir_expr *e, struct hgc_tir_visitor *v)
{
	int i;

	if (!e)
		return;
	for (i = 0; i < e->nops; i++)
		hgc_tir_walk_expr(e->ops[i], v);
	if (v->expr)
		v->expr(v, e);
}

/* Visit n expressions. */
static void walk_exprs(struct hgc_tir_expr **e, int n, struct hgc_tir_visitor *v)
{
	int i;

	for (i = 0; i < n; i++)
		hgc_tir_walk_expr(e[i], v);
}

/* Visit the children of a statement: expressions, then nested statements. */
static void walk_children(struct hgc_tir_stmt *s, struct hgc_tir_visitor *v)
{
	int i;

	switch (s->kind) {
	case HGC_TIR_S_BLOCK:
		for (i = 0; i < s->u.block.n; i++)
			hgc_tir_walk_stmt(s->u.block.stmts[i], v);
		break;
	case HGC_TIR_S_FOR:
		hgc_tir_walk_expr(s->u.loop.begin, v);
		hgc_tir_walk_expr(s->u.loop.end, v);
		hgc_tir_walk_expr(s->u.loop.step, v);
		hgc_tir_walk_stmt(s->u.loop.body, v);
		break;
	case HGC_TIR_S_PFOR:
		walk_exprs(s->u.pfor.begin, s->u.pfor.n, v);
		walk_exprs(s->u.pfor.end, s->u.pfor.n, v);
		walk_exprs(s->u.pfor.step, s->u.pfor.n, v);
		hgc_tir_walk_stmt(s->u.pfor.body, v);
		break;
	case HGC_TIR_S_IF:
		hgc_tir_walk_expr(s->u.cond.cond, v);
		hgc_tir_walk_stmt(s->u.cond.then, v);
		hgc_tir_walk_stmt(s->u.cond.els, v);
		break;
	case HGC_TIR_S_LET:
	case HGC_TIR_S_ASSIGN:
		hgc_tir_walk_expr(s->u.let.value, v);
		break;
	case HGC_TIR_S_STORE:
		walk_exprs(s->u.store.idx, s->u.store.n, v);
		hgc_tir_walk_expr(s->u.store.value, v);
		break;
	case HGC_TIR_S_TENSOR:
		walk_exprs(s->u.tensor->dims, s->u.tensor->ndims, v);
		break;
	case HGC_TIR_S_EVAL:
	case HGC_TIR_S_RETURN:
		hgc_tir_walk_expr(s->u.expr, v);
		break;
	}
}

/* Visit a statement tree (NULL is allowed: an absent else). */
void hgc_tir_walk_stmt(struct hgc_tir_stmt *s, struct hgc_tir_visitor *v)
{
	if (!s)
		return;
	if (v->stmt_pre && !v->stmt_pre(v, s))
		return;
	walk_children(s, v);
	if (v->stmt_post)
		v->stmt_post(v, s);
}

/* Visit every function body, then the dims of constant buffers. */
void hgc_tir_walk_module(struct hgc_tir_module *m, struct hgc_tir_visitor *v)
{
	size_t i;
	struct hgc_tir_tensor *t;

	for (i = 0; i < m->funcs.len; i++)
		hgc_tir_walk_stmt(HGC_TIR_FUNC(m, i)->body, v);
	for (i = 0; i < m->consts.len; i++) {
		t = HGC_TIR_CONST_AT(m, i);
		walk_exprs(t->dims, t->ndims, v);
	}
}

/* Rewrite an expression tree bottom-up, in place. */
struct hgc_tir_expr *hgc_tir_mutate_expr(struct hgc_tir_expr *e, struct hgc_tir_mutator *mu)
{
	int i;

	if (!e)
		return NULL;
	for (i = 0; i < e->nops; i++)
		e->ops[i] = hgc_tir_mutate_expr(e->ops[i], mu);
	return mu->expr ? mu->expr(mu, e) : e;
}

/* Rewrite n expressions in place. */
static void mutate_exprs(struct hgc_tir_expr **e, int n, struct hgc_tir_mutator *mu)
{
	int i;

	for (i = 0; i < n; i++)
		e[i] = hgc_tir_mutate_expr(e[i], mu);
}

/* Rewrite a body: a deleted body becomes an empty block, a non-block is wrapped. */
static struct hgc_tir_stmt *mutate_body(struct hgc_tir_stmt *s, struct hgc_tir_mutator *mu)
{
	struct hgc_tir_stmt *r = hgc_tir_mutate_stmt(s, mu), *b;

	if (r && r->kind == HGC_TIR_S_BLOCK)
		return r;
	b = hgc_tir_block(mu->m, NULL);
	return r ? hgc_tir_append(b, r) : b;
}

/* Rewrite the statements of a block, dropping those the mutator deletes. */
static void mutate_block(struct hgc_tir_stmt *s, struct hgc_tir_mutator *mu)
{
	int i, n = 0;
	struct hgc_tir_stmt *r;

	for (i = 0; i < s->u.block.n; i++) {
		r = hgc_tir_mutate_stmt(s->u.block.stmts[i], mu);
		if (r)
			s->u.block.stmts[n++] = r;
	}
	s->u.block.n = n;
}

/* Rewrite the children of a statement. */
static void mutate_children(struct hgc_tir_stmt *s, struct hgc_tir_mutator *mu)
{
	switch (s->kind) {
	case HGC_TIR_S_BLOCK:
		mutate_block(s, mu);
		break;
	case HGC_TIR_S_FOR:
		s->u.loop.begin = hgc_tir_mutate_expr(s->u.loop.begin, mu);
		s->u.loop.end = hgc_tir_mutate_expr(s->u.loop.end, mu);
		s->u.loop.step = hgc_tir_mutate_expr(s->u.loop.step, mu);
		s->u.loop.body = mutate_body(s->u.loop.body, mu);
		break;
	case HGC_TIR_S_PFOR:
		mutate_exprs(s->u.pfor.begin, s->u.pfor.n, mu);
		mutate_exprs(s->u.pfor.end, s->u.pfor.n, mu);
		mutate_exprs(s->u.pfor.step, s->u.pfor.n, mu);
		s->u.pfor.body = mutate_body(s->u.pfor.body, mu);
		break;
	case HGC_TIR_S_IF:
		s->u.cond.cond = hgc_tir_mutate_expr(s->u.cond.cond, mu);
		s->u.cond.then = mutate_body(s->u.cond.then, mu);
		if (s->u.cond.els)
			s->u.cond.els = mutate_body(s->u.cond.els, mu);
		break;
	case HGC_TIR_S_LET:
	case HGC_TIR_S_ASSIGN:
		s->u.let.value = hgc_tir_mutate_expr(s->u.let.value, mu);
		break;
	case HGC_TIR_S_STORE:
		mutate_exprs(s->u.store.idx, s->u.store.n, mu);
		s->u.store.value = hgc_tir_mutate_expr(s->u.store.value, mu);
		break;
	case HGC_TIR_S_TENSOR:
		mutate_exprs(s->u.tensor->dims, s->u.tensor->ndims, mu);
		break;
	case HGC_TIR_S_EVAL:
	case HGC_TIR_S_RETURN:
		s->u.expr = hgc_tir_mutate_expr(s->u.expr, mu);
		break;
	}
}

/* Rewrite a statement tree bottom-up; NULL means delete it. */
struct hgc_tir_stmt *hgc_tir_mutate_stmt(struct hgc_tir_stmt *s, struct hgc_tir_mutator *mu)
{
	if (!s)
		return NULL;
	mutate_children(s, mu);
	return mu->stmt ? mu->stmt(mu, s) : s;
}

/* Copy n pointers, each through copy. */
static struct hgc_tir_expr **copy_exprs(struct hgc_tir_module *m, struct hgc_tir_expr *const *e,
					int n)
{
	struct hgc_tir_expr **v = hgc_arena_calloc(&m->arena, (size_t)(n ? n : 1), sizeof(*v));
	int i;

	for (i = 0; i < n; i++)
		v[i] = hgc_tir_expr_copy(m, e[i]);
	return v;
}

/* A deep copy of an expression (variables and tensors shared). */
struct hgc_tir_expr *hgc_tir_expr_copy(struct hgc_tir_module *m, const struct hgc_tir_expr *e)
{
	struct hgc_tir_expr *c;

	if (!e)
		return NULL;
	c = hgc_arena_alloc(&m->arena, sizeof(*c));
	*c = *e;
	c->ops = copy_exprs(m, e->ops, e->nops);
	if (e->extents) {
		c->extents = hgc_arena_calloc(&m->arena, (size_t)(e->nops ? e->nops : 1),
					      sizeof(*c->extents));
		memcpy(c->extents, e->extents, (size_t)e->nops * sizeof(*c->extents));
	}
	return c;
}

/* Copy the body-bearing and expression fields of a statement. */
static void copy_children(struct hgc_tir_module *m, struct hgc_tir_stmt *c,
			  const struct hgc_tir_stmt *s)
{
	int n;

	switch (s->kind) {
	case HGC_TIR_S_BLOCK:
		break;
	case HGC_TIR_S_FOR:
		c->u.loop.begin = hgc_tir_expr_copy(m, s->u.loop.begin);
		c->u.loop.end = hgc_tir_expr_copy(m, s->u.loop.end);
		c->u.loop.step = hgc_tir_expr_copy(m, s->u.loop.step);
		c->u.loop.body = hgc_tir_stmt_copy(m, s->u.loop.body);
		break;
	case HGC_TIR_S_PFOR:
		n = s->u.pfor.n;
		c->u.pfor.vars = hgc_arena_calloc(&m->arena, (size_t)n, sizeof(*c->u.pfor.vars));
		memcpy(c->u.pfor.vars, s->u.pfor.vars, (size_t)n * sizeof(*c->u.pfor.vars));
		c->u.pfor.begin = copy_exprs(m, s->u.pfor.begin, n);
		c->u.pfor.end = copy_exprs(m, s->u.pfor.end, n);
		c->u.pfor.step = copy_exprs(m, s->u.pfor.step, n);
		c->u.pfor.body = hgc_tir_stmt_copy(m, s->u.pfor.body);
		break;
	case HGC_TIR_S_IF:
		c->u.cond.cond = hgc_tir_expr_copy(m, s->u.cond.cond);
		c->u.cond.then = hgc_tir_stmt_copy(m, s->u.cond.then);
		c->u.cond.els = hgc_tir_stmt_copy(m, s->u.cond.els);
		break;
	case HGC_TIR_S_LET:
	case HGC_TIR_S_ASSIGN:
		c->u.let.value = hgc_tir_expr_copy(m, s->u.let.value);
		break;
	case HGC_TIR_S_STORE:
		c->u.store.idx = copy_exprs(m, s->u.store.idx, s->u.store.n);
		c->u.store.value = hgc_tir_expr_copy(m, s->u.store.value);
		break;
	case HGC_TIR_S_TENSOR:
		break;
	case HGC_TIR_S_EVAL:
	case HGC_TIR_S_RETURN:
		c->u.expr = hgc_tir_expr_copy(m, s->u.expr);
		break;
	}
}

/* A deep copy of a statement tree.  Lets and loops in it define the same
   variables as the original: give the copy fresh ones before both are used. */
struct hgc_tir_stmt *hgc_tir_stmt_copy(struct hgc_tir_module *m, const struct hgc_tir_stmt *s)
{
	struct hgc_tir_stmt *c;
	int i;

	if (!s)
		return NULL;
	if (s->kind == HGC_TIR_S_BLOCK) {
		c = hgc_tir_block(m, NULL);
		c->loc = s->loc;
		for (i = 0; i < s->u.block.n; i++)
			hgc_tir_append(c, hgc_tir_stmt_copy(m, s->u.block.stmts[i]));
		return c;
	}
	c = hgc_tir_stmt_alloc(m, s->kind);
	*c = *s;
	copy_children(m, c, s);
	if (s->kind == HGC_TIR_S_ASSIGN)
		s->u.let.var->nassign++;
	return c;
}
