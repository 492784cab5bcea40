/*
 * parse.c: the parse driver (the lexer feeds the Lemon parser, SQLite's
 * tokenizer style), AST node helpers used by the grammar's actions, the
 * token-name table and small token utilities.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_int.h"
#include "grammar.h"

/* Token spellings by code (Lemon only keeps its own table in debug builds). */
static const char *const token_names[] = {
	[0] = "end of input",
#define X(t, s) [HGC_TK_##t] = s,
	HGC_DSL_PUNCT(X)
	HGC_DSL_KEYWORDS(X)
#undef X
};

/* The spelling of a token code for messages and tests. */
const char *hgc_dsl_token_name(int code)
{
	if (code < 0 || code >= (int)(sizeof(token_names) / sizeof(token_names[0])) ||
	    !token_names[code])
		return "?";
	return token_names[code];
}

/* A new node of kind at tok (tok may be NULL: no name, no place yet). */
struct hgc_ast *hgc_dsl_node(struct hgc_parse *ps, enum hgc_ast_kind kind,
			     const struct hgc_tok *tok)
{
	struct hgc_ast *n = hgc_arena_calloc(ps->arena, 1, sizeof(*n));

	n->kind = kind;
	n->height = 1;
	n->loc.file = ps->file;
	if (tok) {
		n->tok = *tok;
		n->loc.line = tok->line;
		n->loc.col = tok->col;
	}
	return n;
}

/*
 * The parser's stack bounds how deep brackets nest, but not a left-assoc
 * chain: "1 + 1 + ... + 1" reduces as it goes and leaves a tree as tall as
 * the chain is long, which the checker and the emitters then walk
 * recursively.  An expression taller than this is reported here, before
 * anything recurses into it (far more than any template needs).
 */
#define MAX_EXPR_HEIGHT 200

/* The tallest node of the list that starts at n (0 for none). */
static int list_height(const struct hgc_ast *n)
{
	int h = 0;

	for (; n; n = n->next)
		h = n->height > h ? n->height : h;
	return h;
}

/* Whether nodes of kind are (parts of) template expressions. */
static bool is_expr_kind(enum hgc_ast_kind kind)
{
	return kind == HGC_AST_UNARY || kind == HGC_AST_BINARY || kind == HGC_AST_CALL ||
	       kind == HGC_AST_INDEX || kind == HGC_AST_SLICE;
}

/* A new node with its first two children. */
struct hgc_ast *hgc_dsl_node2(struct hgc_parse *ps, enum hgc_ast_kind kind,
			      const struct hgc_tok *tok, struct hgc_ast *a, struct hgc_ast *b)
{
	struct hgc_ast *n = hgc_dsl_node(ps, kind, tok);
	int ha = list_height(a), hb = list_height(b);

	n->a = a;
	n->b = b;
	n->height = 1 + (ha > hb ? ha : hb);
	if (n->height > MAX_EXPR_HEIGHT && is_expr_kind(kind) && !ps->failed) {
		ps->failed = true;
		hgc_error(ps->d, &n->loc, "expression too deep (more than %d levels)",
			  MAX_EXPR_HEIGHT);
	}
	return n;
}

/* Append n to the list l (the grammar's lists are left-recursive). */
void hgc_dsl_list_add(struct hgc_ast_list *l, struct hgc_ast *n)
{
	n->next = NULL;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
}

/* A list of one node. */
struct hgc_ast_list hgc_dsl_list1(struct hgc_ast *n)
{
	struct hgc_ast_list l = {NULL, NULL};

	hgc_dsl_list_add(&l, n);
	return l;
}

/* Lemon's %syntax_error: "syntax error near 'tok'" or the end of input. */
void hgc_dsl_syntax_error(struct hgc_parse *ps, int code, const struct hgc_tok *tok)
{
	struct hgc_loc loc = {ps->file, tok->line, tok->col};
	int n = tok->n > 40 ? 40 : tok->n;

	if (ps->failed)
		return;
	ps->failed = true;
	if (code == 0)
		hgc_error(ps->d, &loc, "unexpected end of input");
	else
		hgc_error(ps->d, &loc, "syntax error near '%.*s%s'", n, tok->z,
			  n < tok->n ? "..." : "");
}

/* Lemon's %stack_overflow: nesting deeper than YYSTACKDEPTH. */
void hgc_dsl_stack_overflow(struct hgc_parse *ps)
{
	struct hgc_loc loc = {ps->file, ps->last.line, ps->last.col};

	if (ps->failed)
		return;
	ps->failed = true;
	hgc_error(ps->d, &loc, "nesting too deep");
}

/*
 * Parse src[0..len) (src[len] is NUL) into its top-level blocks.  The lexer
 * feeds the parser one token at a time and everything stops at the first
 * lexical or syntax error.  The end-of-input token sits just after the last
 * real token, so that "unexpected end of input" points at the text.
 */
int hgc_dsl_parse(struct hgc_arena *arena, const char *file, const char *src, size_t len,
		  struct hgc_diag *d, struct hgc_ast **items)
{
	struct hgc_parse ps = {arena, d, file, {NULL, NULL}, false, {0}};
	struct hgc_lexer lx;
	struct hgc_tok t;
	void *parser = hgc_dsl_parserAlloc(malloc, &ps);
	int code;

	if (!parser)
		hgc_bug("out of memory");
	hgc_dsl_lex_init(&lx, file, src, len, d);
	ps.last.line = 1, ps.last.col = 1;
	do {
		code = hgc_dsl_lex(&lx, &t);
		if (code < 0) {
			ps.failed = true;
			break;
		}
		if (code == 0 && ps.last.z)
			t.line = ps.last.line, t.col = ps.last.col + ps.last.n;
		hgc_dsl_parser(parser, code, t);
		ps.last = t;
	} while (code && !ps.failed);
	hgc_dsl_parserFree(parser, free);
	*items = ps.failed ? NULL : ps.items.head;
	return ps.failed ? -1 : 0;
}

/* The value of a STRING token: quotes dropped, \" \\ \n \t resolved. */
char *hgc_dsl_unquote(struct hgc_arena *arena, const struct hgc_tok *t)
{
	char *s = hgc_arena_alloc(arena, (size_t)t->n + 1), *o = s;
	const char *p = t->z + 1, *end = t->z + t->n - 1;

	for (; p < end; p++) {
		if (*p != '\\' || p + 1 >= end) {
			*o++ = *p;
			continue;
		}
		p++;
		*o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
	}
	*o = 0;
	return s;
}

/* A NUL-terminated copy of the token's text. */
char *hgc_dsl_tok_str(struct hgc_arena *arena, const struct hgc_tok *t)
{
	return hgc_arena_strndup(arena, t->z, (size_t)t->n);
}

/* Whether the token's text is exactly s. */
bool hgc_dsl_tok_is(const struct hgc_tok *t, const char *s)
{
	return strlen(s) == (size_t)t->n && !memcmp(t->z, s, (size_t)t->n);
}

/* Edit distance between a[0..n) and b, ignoring case; stops early past 'cap'. */
static int distance(const char *a, size_t n, const char *b, int cap)
{
	size_t m = strlen(b), i, j;
	int row[64], diag_, up, best;

	if (n >= 64 || m >= 64)
		return cap + 1;
	for (j = 0; j <= m; j++)
		row[j] = (int)j;
	for (i = 1; i <= n; i++) {
		diag_ = row[0];
		row[0] = (int)i;
		best = row[0];
		for (j = 1; j <= m; j++) {
			up = row[j];
			row[j] = diag_ + (tolower((unsigned char)a[i - 1]) !=
					  tolower((unsigned char)b[j - 1]));
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag_ = up;
			if (row[j] < best)
				best = row[j];
		}
		if (best > cap)
			return cap + 1;
	}
	return row[m];
}

/*
 * The name closest to s among names[0..n): a different case counts as no
 * difference, and at most a third of the letters (at least one, at most
 * three) may differ, so that only plausible typos get a suggestion.
 */
const char *hgc_dsl_suggest(const char *s, size_t len, const char *const *names, int n)
{
	int cap = (int)len / 3, best = 1 << 30, i, dist;
	const char *pick = NULL;

	if (cap < 1)
		cap = 1;
	if (cap > 3)
		cap = 3;
	for (i = 0; i < n; i++) {
		dist = distance(s, len, names[i], cap);
		if (dist <= cap && dist < best) {
			best = dist;
			pick = names[i];
		}
	}
	return pick;
}
