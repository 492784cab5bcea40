/*
 * template_text.c: template expressions as canonical text (for listings,
 * messages and the generated tables), their comparison, and the constant
 * evaluation the checks use to find constraints no domain value meets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/template.h"
#include "grammar.h"

/* A growing text buffer in the arena. */
struct buf {
	struct hgc_arena *a;
	char *s;
	size_t len, cap;
};

/* Append n bytes. */
static void put(struct buf *b, const char *s, size_t n)
{
	char *t;

	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2 + 32;
		t = hgc_arena_alloc(b->a, b->cap);
		if (b->len)
			memcpy(t, b->s, b->len);
		b->s = t;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

/* Append a NUL-terminated string. */
static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* Append a token's text. */
static void tok(struct buf *b, const struct hgc_tok *t)
{
	put(b, t->z, (size_t)t->n);
}

/* Binding strength of a binary operator (higher binds tighter). */
static int prec(int op)
{
	switch (op) {
	case HGC_TK_OROR: return 1;
	case HGC_TK_ANDAND: return 2;
	case HGC_TK_EQ: case HGC_TK_NE: return 3;
	case HGC_TK_LT: case HGC_TK_LE: case HGC_TK_GT: case HGC_TK_GE: return 4;
	case HGC_TK_PLUS: case HGC_TK_MINUS: return 5;
	default: return 6;
	}
}

static void text(struct buf *b, const struct hgc_ast *e, int ctx);

/* A comma-separated list of nodes. */
static void list(struct buf *b, const struct hgc_ast *e)
{
	for (; e; e = e->next) {
		text(b, e, 0);
		if (e->next)
			puts_(b, ", ");
	}
}

/* One slice entry: i, a : len, a : len : step or ':'. */
static void slice(struct buf *b, const struct hgc_ast *s)
{
	if (!s->op) {
		text(b, s->a, 0);
		return;
	}
	if (!s->a) {
		puts_(b, ":");
		return;
	}
	text(b, s->a, 0);
	puts_(b, " : ");
	text(b, s->b, 0);
	if (s->c) {
		puts_(b, " : ");
		text(b, s->c, 0);
	}
}

/* A binary operation, parenthesized when it binds looser than its context. */
static void binary(struct buf *b, const struct hgc_ast *e, int ctx)
{
	int p = prec(e->op);
	bool paren = p < ctx;

	int sub = e->op == HGC_TK_OROR ? p + 2 : p;	/* (a && b) || c reads better */

	if (paren)
		puts_(b, "(");
	text(b, e->a, sub);
	puts_(b, " ");
	tok(b, &e->tok);
	puts_(b, " ");
	text(b, e->b, sub + 1);
	if (paren)
		puts_(b, ")");
}

/* Any node that can appear in a template expression. */
static void text(struct buf *b, const struct hgc_ast *e, int ctx)
{
	const struct hgc_ast *s;

	if (!e)
		return;
	switch (e->kind) {
	case HGC_AST_BINARY:
		binary(b, e, ctx);
		return;
	case HGC_AST_UNARY:
		tok(b, &e->tok);
		text(b, e->a, 7);
		return;
	case HGC_AST_CALL:
	case HGC_AST_CONSTRAINT:
		tok(b, &e->tok);
		puts_(b, "(");
		list(b, e->a);
		puts_(b, ")");
		return;
	case HGC_AST_INDEX:
		tok(b, &e->tok);
		puts_(b, "[");
		for (s = e->a; s; s = s->next) {
			slice(b, s);
			if (s->next)
				puts_(b, ", ");
		}
		puts_(b, "]");
		return;
	case HGC_AST_NAMED:
		tok(b, &e->tok);
		puts_(b, " = ");
		text(b, e->a, 0);
		return;
	case HGC_AST_ITER:
		tok(b, &e->tok);
		puts_(b, " in ");
		text(b, e->a, 0);
		puts_(b, "..");
		text(b, e->b, 0);
		return;
	case HGC_AST_SLICE:
		slice(b, e);
		return;
	default:
		if (e->neg)
			puts_(b, "-");
		tok(b, &e->tok);
	}
}

/* The canonical text of e. */
char *hgc_tsem_text(struct hgc_arena *a, const struct hgc_ast *e)
{
	struct buf b = {a, NULL, 0, 0};

	put(&b, "", 0);
	text(&b, e, 0);
	return b.s;
}

static bool same_list(const struct hgc_ast *a, const struct hgc_ast *b);

/* Same node: kind, operator, token and children. */
static bool same(const struct hgc_ast *a, const struct hgc_ast *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->op != b->op || a->neg != b->neg || a->tok.n != b->tok.n ||
	    memcmp(a->tok.z, b->tok.z, (size_t)a->tok.n))
		return false;
	return same_list(a->a, b->a) && same_list(a->b, b->b) && same_list(a->c, b->c);
}

/* Same lists, element by element. */
static bool same_list(const struct hgc_ast *a, const struct hgc_ast *b)
{
	for (; a && b; a = a->next, b = b->next)
		if (!same(a, b))
			return false;
	return !a && !b;
}

/* Whether two expressions read the same. */
bool hgc_tsem_same(const struct hgc_ast *a, const struct hgc_ast *b)
{
	return same(a, b);
}

/* The value of an INT literal (false when it does not fit). */
static bool literal(const struct hgc_ast *e, int64_t *out)
{
	char buf[32];
	unsigned long long u;

	if (e->tok.n >= (int)sizeof(buf))
		return false;
	memcpy(buf, e->tok.z, (size_t)e->tok.n);
	buf[e->tok.n] = 0;
	u = strtoull(buf, NULL, 10);
	if (u > (unsigned long long)INT64_MAX)
		return false;
	*out = e->neg ? -(int64_t)u : (int64_t)u;
	return true;
}

/* Apply a binary operator to constants; false on a zero divisor or overflow. */
static bool apply(int op, int64_t x, int64_t y, int64_t *out)
{
	switch (op) {
	case HGC_TK_PLUS: return !__builtin_add_overflow(x, y, out);
	case HGC_TK_MINUS: return !__builtin_sub_overflow(x, y, out);
	case HGC_TK_STAR: return !__builtin_mul_overflow(x, y, out);
	case HGC_TK_SLASH: if (!y || (x == INT64_MIN && y == -1)) return false; *out = x / y; return true;
	case HGC_TK_PERCENT: if (!y || (x == INT64_MIN && y == -1)) return false; *out = x % y; return true;
	case HGC_TK_EQ: *out = x == y; return true;
	case HGC_TK_NE: *out = x != y; return true;
	case HGC_TK_LT: *out = x < y; return true;
	case HGC_TK_LE: *out = x <= y; return true;
	case HGC_TK_GT: *out = x > y; return true;
	case HGC_TK_GE: *out = x >= y; return true;
	case HGC_TK_ANDAND: *out = x && y; return true;
	case HGC_TK_OROR: *out = x || y; return true;
	default: return false;
	}
}

/* min, max and ceildiv of constants. */
static bool call(const struct hgc_ast *e, const struct hgc_tsym *sym, int64_t val, int64_t *out)
{
	const struct hgc_ast *a = e->a;
	int64_t x, y;

	if (!a || !hgc_tsem_eval(a, sym, val, &x))
		return false;
	if (hgc_dsl_tok_is(&e->tok, "ceildiv")) {
		if (!a->next || !hgc_tsem_eval(a->next, sym, val, &y) || y == 0 ||
		    (x == INT64_MIN && y == -1))
			return false;
		*out = x / y + (x % y != 0 && (x < 0) == (y < 0));
		return true;
	}
	for (a = a->next; a; a = a->next) {
		if (!hgc_tsem_eval(a, sym, val, &y))
			return false;
		x = hgc_dsl_tok_is(&e->tok, "min") ? (y < x ? y : x) : (y > x ? y : x);
	}
	*out = x;
	return hgc_dsl_tok_is(&e->tok, "min") || hgc_dsl_tok_is(&e->tok, "max");
}

/* Evaluate e when its only name is sym. */
bool hgc_tsem_eval(const struct hgc_ast *e, const struct hgc_tsym *sym, int64_t val,
		   int64_t *out)
{
	int64_t x, y;

	switch (e->kind) {
	case HGC_AST_INT:
		return literal(e, out);
	case HGC_AST_BOOL:
		*out = e->tok.z[0] == 't';
		return true;
	case HGC_AST_NAME:
		if (!sym || e->sym != sym)
			return false;
		*out = val;
		return true;
	case HGC_AST_UNARY:
		if (!hgc_tsem_eval(e->a, sym, val, &x))
			return false;
		if (e->op == HGC_TK_NOT)
			*out = !x;
		else
			return !__builtin_sub_overflow((int64_t)0, x, out);
		return true;
	case HGC_AST_BINARY:
		return hgc_tsem_eval(e->a, sym, val, &x) && hgc_tsem_eval(e->b, sym, val, &y) &&
		       apply(e->op, x, y, out);
	case HGC_AST_CALL:
		return call(e, sym, val, out);
	default:
		return false;
	}
}
