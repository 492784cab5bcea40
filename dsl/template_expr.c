/*
 * template_expr.c: the names, types and slices of template expressions.
 * Names resolve through a chain of visible symbols (innermost first); a
 * name may not be defined twice in one template, even in an inner scope.
 * Index expressions are integers (INT), conditions booleans (BOOL); tensor
 * elements (ELEM) appear only in the value of an elementwise assignment.
 */
#include <string.h>

#include "dsl/template.h"
#include "grammar.h"

/* The leftmost place of an expression (binary nodes sit at their operator). */
struct hgc_loc hgc_tsem_loc(const struct hgc_ast *e)
{
	while (e->kind == HGC_AST_BINARY && e->a)
		e = e->a;
	return e->loc;
}

/* The visible symbol called name[0..n), or NULL. */
struct hgc_tsym *hgc_tck_lookup(struct hgc_tck *c, const char *name, int n)
{
	struct hgc_tsym *s;

	for (s = c->scope; s; s = s->next)
		if ((int)strlen(s->name) == n && !memcmp(s->name, name, (size_t)n))
			return s;
	return NULL;
}

/* The node defining a top-level name (anywhere in the template), or NULL. */
static const struct hgc_ast *later(struct hgc_tck *c, const char *name, int n)
{
	const struct hgc_ast *a;
	size_t i;

	for (i = 0; i < c->later.len; i++) {
		a = HGC_VEC_AT(&c->later, const struct hgc_ast *, i);
		if (a->tok.n == n && !memcmp(a->tok.z, name, (size_t)n))
			return a;
	}
	return NULL;
}

/* A new symbol; NULL after reporting that the name is taken. */
struct hgc_tsym *hgc_tck_sym(struct hgc_tck *c, const struct hgc_tok *name,
			     const struct hgc_loc *loc, enum hgc_tsym_kind kind)
{
	struct hgc_tsym *old = hgc_tck_lookup(c, name->z, name->n), *s;

	if (old) {
		hgc_tck_error(c, loc, "redefinition of '%.*s'", name->n, name->z);
		if (old->kind == HGC_TSYM_BUILTIN || old->kind == HGC_TSYM_OPSYM)
			hgc_tck_note(c, loc, "'%s' is a built-in name of the template", old->name);
		else
			hgc_tck_note(c, &old->loc, "previous definition of '%s' is here", old->name);
		return NULL;
	}
	s = hgc_arena_calloc(c->arena, 1, sizeof(*s));
	s->name = hgc_dsl_tok_str(c->arena, name);
	s->kind = kind;
	s->loc = *loc;
	s->slot = -1;
	s->ty = HGC_TTY_INT;
	s->uid = c->s->nuid++;
	s->depth = c->depth;
	if (HGC_TSYM_IS_STATIC(kind)) {
		s->slot = (int)c->s->statics.len;
		*(struct hgc_tsym **)hgc_vec_push(&c->s->statics) = s;
	}
	return s;
}

/* Make s visible from here to the end of the scope. */
void hgc_tck_define(struct hgc_tck *c, struct hgc_tsym *s)
{
	s->next = c->scope;
	c->scope = s;
}

/* Enter a scope: the mark to leave it with. */
struct hgc_tsym *hgc_tck_enter(struct hgc_tck *c)
{
	c->depth++;
	return c->scope;
}

/* Leave a scope: its definitions are no longer visible. */
void hgc_tck_leave(struct hgc_tck *c, struct hgc_tsym *mark)
{
	c->depth--;
	c->scope = mark;
}

/* The names visible here, for suggestions (at most cap). */
static int visible(struct hgc_tck *c, const char **names, int cap)
{
	struct hgc_tsym *s;
	int n = 0;

	for (s = c->scope; s && n < cap; s = s->next)
		names[n++] = s->name;
	return n;
}

/* "unknown name 'x'", or "used before its definition", with a suggestion. */
static int unknown(struct hgc_tck *c, const struct hgc_ast *e)
{
	const char *names[256], *near;
	const struct hgc_ast *def = later(c, e->tok.z, e->tok.n);
	int n;

	if (def)
		return hgc_tck_error(c, &e->loc, "'%.*s' is used before its definition at line %d",
				     e->tok.n, e->tok.z, def->loc.line);
#define X(kind, sym, what)                                                                  \
	if (hgc_dsl_tok_is(&e->tok, #sym) && c->s->op != HGC_OP_##kind)                     \
		return hgc_tck_error(c, &e->loc, "unknown name '%s': only %s templates have it", \
				     #sym, hgc_op_table[HGC_OP_##kind].name);
	HGC_TMPL_OP_SYMS(X)
#undef X
	n = visible(c, names, 256);
	near = hgc_dsl_suggest(e->tok.z, (size_t)e->tok.n, names, n);
	if (near)
		return hgc_tck_error(c, &e->loc, "unknown name '%.*s'; did you mean '%s'?",
				     e->tok.n, e->tok.z, near);
	return hgc_tck_error(c, &e->loc, "unknown name '%.*s'", e->tok.n, e->tok.z);
}

/* A name in an expression. */
static int name(struct hgc_tck *c, struct hgc_ast *e)
{
	struct hgc_tsym *s = hgc_tck_lookup(c, e->tok.z, e->tok.n);

	if (!s)
		return unknown(c, e);
	e->sym = s;
	if (s->kind == HGC_TSYM_OPERAND || s->kind == HGC_TSYM_TENSOR)
		return hgc_tck_error(c, &e->loc, "'%s' is a tensor: index it as %s[...]", s->name,
				     s->name);
	e->dyn = s->kind == HGC_TSYM_LOOP || (s->kind == HGC_TSYM_BLET && s->dyn);
	return s->kind == HGC_TSYM_BLET ? s->ty : HGC_TTY_INT;
}

/* Spelling of an operator token for messages. */
static const char *op_name(const struct hgc_ast *e)
{
	return hgc_dsl_token_name(e->op);
}

/* A unary operator: - on integers and elements, ! on booleans. */
static int unary(struct hgc_tck *c, struct hgc_ast *e, int rank)
{
	int t = hgc_tck_expr(c, e->a, rank);

	e->dyn = e->a->dyn;
	if (!t)
		return HGC_TTY_NONE;
	if (e->op == HGC_TK_NOT && t != HGC_TTY_BOOL)
		return hgc_tck_error(c, &e->loc, "the operand of '!' must be a condition");
	if (e->op == HGC_TK_MINUS && t == HGC_TTY_BOOL)
		return hgc_tck_error(c, &e->loc, "the operand of '-' must be a number");
	return t;
}

/* Arithmetic, comparisons and logic. */
static int binary(struct hgc_tck *c, struct hgc_ast *e, int rank)
{
	int x = hgc_tck_expr(c, e->a, rank), y = hgc_tck_expr(c, e->b, rank);
	bool logic = e->op == HGC_TK_ANDAND || e->op == HGC_TK_OROR;
	bool arith = e->op == HGC_TK_PLUS || e->op == HGC_TK_MINUS || e->op == HGC_TK_STAR ||
		     e->op == HGC_TK_SLASH || e->op == HGC_TK_PERCENT;

	e->dyn = e->a->dyn || e->b->dyn;
	if (!x || !y)
		return HGC_TTY_NONE;
	if (logic && (x != HGC_TTY_BOOL || y != HGC_TTY_BOOL))
		return hgc_tck_error(c, &e->loc, "the operands of '%s' must be conditions",
				     op_name(e));
	if (logic)
		return HGC_TTY_BOOL;
	if (x == HGC_TTY_BOOL || y == HGC_TTY_BOOL)
		return hgc_tck_error(c, &e->loc, "the operands of '%s' must be numbers",
				     op_name(e));
	if (x == HGC_TTY_ELEM || y == HGC_TTY_ELEM) {
		if (!arith || e->op == HGC_TK_PERCENT)
			return hgc_tck_error(c, &e->loc, "'%s' does not apply to tensor elements",
					     op_name(e));
		return HGC_TTY_ELEM;
	}
	return arith ? HGC_TTY_INT : HGC_TTY_BOOL;
}

/* min(a, b, ...), max(a, b, ...), ceildiv(a, b). */
static int call(struct hgc_tck *c, struct hgc_ast *e, int rank)
{
	static const char *const fns[] = {"min", "max", "ceildiv"};
	bool cdiv = hgc_dsl_tok_is(&e->tok, "ceildiv");
	struct hgc_ast *a;
	int n = 0, t, ty = HGC_TTY_INT, bad = 0;

	if (!cdiv && !hgc_dsl_tok_is(&e->tok, "min") && !hgc_dsl_tok_is(&e->tok, "max")) {
		const char *near = hgc_dsl_suggest(e->tok.z, (size_t)e->tok.n, fns, 3);

		if (near)
			return hgc_tck_error(c, &e->loc, "unknown function '%.*s'; did you mean '%s'?",
					     e->tok.n, e->tok.z, near);
		return hgc_tck_error(c, &e->loc, "unknown function '%.*s' (min, max, ceildiv)",
				     e->tok.n, e->tok.z);
	}
	for (a = e->a; a; a = a->next, n++) {
		if (a->kind == HGC_AST_NAMED || a->kind == HGC_AST_ITER) {
			hgc_tck_error(c, &a->loc, "'%.*s' takes plain arguments", e->tok.n, e->tok.z);
			bad = 1;
			continue;
		}
		t = hgc_tck_expr(c, a, cdiv ? -1 : rank);
		e->dyn |= a->dyn;
		if (!t || t == HGC_TTY_BOOL) {
			if (t)
				hgc_tck_error(c, &a->loc, "the arguments of '%.*s' must be numbers",
					      e->tok.n, e->tok.z);
			bad = 1;
		} else if (t == HGC_TTY_ELEM) {
			ty = HGC_TTY_ELEM;
		}
	}
	if (bad)
		return HGC_TTY_NONE;
	if (cdiv ? n != 2 : n < 2)
		return hgc_tck_error(c, &e->loc, "'%.*s' takes %s arguments, not %d", e->tok.n,
				     e->tok.z, cdiv ? "2" : "at least 2", n);
	return ty;
}

/* A tensor element or slice inside the value of an assignment of rank. */
static int element(struct hgc_tck *c, struct hgc_ast *e, int rank)
{
	int r;

	if (rank < 0)
		return hgc_tck_error(c, &e->loc,
				     "tensor elements cannot be used here: only in the value of an "
				     "assignment");
	r = hgc_tck_slice(c, e);
	if (r < 0)
		return HGC_TTY_NONE;
	if (r && r != rank)
		return hgc_tck_error(c, &e->loc, "a slice of %d dims in an assignment to %d dims",
				     r, rank);
	return HGC_TTY_ELEM;
}

/* Check an expression of an index (rank < 0) or an assignment's value. */
int hgc_tck_expr(struct hgc_tck *c, struct hgc_ast *e, int rank)
{
	switch (e->kind) {
	case HGC_AST_INT:
		if (!hgc_tsem_eval(e, NULL, 0, &(int64_t){0}))
			return hgc_tck_error(c, &e->loc, "integer %.*s is out of range", e->tok.n,
					     e->tok.z);
		return e->ty = HGC_TTY_INT;
	case HGC_AST_BOOL:
		return e->ty = HGC_TTY_BOOL;
	case HGC_AST_FLOAT:
		if (rank >= 0)
			return e->ty = HGC_TTY_ELEM;
		return hgc_tck_error(c, &e->loc, "'%.*s' is not an integer", e->tok.n, e->tok.z);
	case HGC_AST_NAME:
		return e->ty = (uint8_t)name(c, e);
	case HGC_AST_UNARY:
		return e->ty = (uint8_t)unary(c, e, rank);
	case HGC_AST_BINARY:
		return e->ty = (uint8_t)binary(c, e, rank);
	case HGC_AST_CALL:
		return e->ty = (uint8_t)call(c, e, rank);
	case HGC_AST_INDEX:
		return e->ty = (uint8_t)element(c, e, rank);
	case HGC_AST_ITER:
		return hgc_tck_error(c, &e->loc, "'%.*s in ...' is only a brgemm argument",
				     e->tok.n, e->tok.z);
	default:
		return hgc_tck_error(c, &e->loc, "not an expression");
	}
}

/* Check e as type ty; static: no loop variable may appear. */
int hgc_tck_want(struct hgc_tck *c, struct hgc_ast *e, int ty, bool need_static,
		 const char *what)
{
	struct hgc_loc loc = hgc_tsem_loc(e);
	int t = hgc_tck_expr(c, e, -1);

	if (!t)
		return -1;
	if (t != ty)
		return hgc_tck_error(c, &loc, "%s must be %s", what,
				     ty == HGC_TTY_BOOL ? "a condition" : "an integer");
	if (need_static && e->dyn)
		return hgc_tck_error(c, &loc, "%s must not depend on loop variables", what);
	return 0;
}

/* One entry of a slice: an index, a : len [: step], or ':'. */
static int slice_entry(struct hgc_tck *c, struct hgc_ast *s)
{
	int bad = 0;

	if (s->op && !s->a)
		return 1;
	bad |= hgc_tck_want(c, s->a, HGC_TTY_INT, false, "a slice index") < 0;
	if (s->b)
		bad |= hgc_tck_want(c, s->b, HGC_TTY_INT, true, "the length of a slice") < 0;
	if (s->c)
		bad |= hgc_tck_want(c, s->c, HGC_TTY_INT, true, "the step of a slice") < 0;
	return bad ? -1 : s->op;
}

/* T[...]: a tensor with one index per physical dim; the number of ranges. */
int hgc_tck_slice(struct hgc_tck *c, struct hgc_ast *ix)
{
	struct hgc_tsym *t = hgc_tck_lookup(c, ix->tok.z, ix->tok.n);
	struct hgc_ast *s;
	int n = 0, ranges = 0, r, bad = 0;

	if (!t) {
		unknown(c, ix);
		return -1;
	}
	if (t->kind != HGC_TSYM_OPERAND && t->kind != HGC_TSYM_TENSOR) {
		hgc_tck_error(c, &ix->loc, "'%s' is not a tensor", t->name);
		return -1;
	}
	ix->sym = t;
	t->used = true;
	for (s = ix->a; s; s = s->next, n++) {
		r = slice_entry(c, s);
		if (r < 0)
			bad = 1;
		else
			ranges += r;
		if (s->a)
			ix->dyn |= s->a->dyn;
	}
	if (n != t->rank) {
		hgc_tck_error(c, &ix->loc, "'%s' has %d dims%s, not %d", t->name, t->rank,
			      t->kind == HGC_TSYM_OPERAND && c->s->layout[t->index]
				      ? " in its layout" : "", n);
		return -1;
	}
	ix->op = ranges;
	return bad ? -1 : ranges;
}
