/*
 * template.c: checking a template block.  The header (the op it serves,
 * its operands and their dims), the declarations (parameters with their
 * domains and constraints, lets, layouts), the loop nest (template_stmt.c),
 * then what needs the whole template: constraints and costs may name
 * anything declared at the top level, every anchor needs a cost, and a
 * constraint that no value of a constant domain meets is an error.  Every
 * error is reported, as file:line:col, up to the diag's cap.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dsl/template.h"
#include "grammar.h"

/*
 * The operand forms of the tunable ops: canonical dim ids of A, B and the
 * result (the same id means the same dim).  Instantiation (tmpl_bind.c)
 * binds graph ops in this canonical order.  A region of fusible ops
 * (Region) has one operand, its domain as blocks B of R rows of length L,
 * and a result of the same shape, where its anchors put the members.
 */
static const struct form {
	enum hgc_op_kind op;
	int rank;
	int ids[3][HGC_MAX_DIMS];
	const char *sig;
} forms[] = {
	{HGC_TMPL_REGION, 3, {{0, 1, 2}, {0, 1, 2}}, "X:[B, R, L] -> Y:[B, R, L]"},
	{HGC_OP_MATMUL, 2, {{0, 1}, {1, 2}, {0, 2}}, "A:[M, K], B:[K, N] -> C:[M, N]"},
	{HGC_OP_MATMUL, 3, {{3, 0, 1}, {3, 1, 2}, {3, 0, 2}},
	 "A:[BT, M, K], B:[BT, K, N] -> C:[BT, M, N]"},
	{HGC_OP_CONVOLUTION, 4, {{0, 1, 2, 3}, {4, 1, 5, 6}, {0, 4, 7, 8}},
	 "X:[N, IC, IH, IW], W:[OC, IC, KH, KW] -> Y:[N, OC, OH, OW]"},
};

#define NFORMS ((int)(sizeof(forms) / sizeof(forms[0])))

/* Report an error in the template being checked. */
int hgc_tck_error(struct hgc_tck *c, const struct hgc_loc *loc, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->s->nerr++;
	hgc_dsl_error(c->ld, loc, "%s", buf);
	return HGC_TTY_NONE;
}

/* A note after an error. */
void hgc_tck_note(struct hgc_tck *c, const struct hgc_loc *loc, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hgc_dsl_note(c->ld, loc, "%s", buf);
}

/* Release the vectors of a checked template. */
void hgc_tsem_free(struct hgc_tmpl_sem *s)
{
	if (!s)
		return;
	hgc_vec_release(&s->statics);
	hgc_vec_release(&s->params);
	hgc_vec_release(&s->steps);
	hgc_vec_release(&s->constraints);
	hgc_vec_release(&s->anchors);
}

/* A built-in name as a token at the template's place. */
static struct hgc_tsym *builtin(struct hgc_tck *c, const char *name, enum hgc_tsym_kind kind)
{
	struct hgc_tok t = {name, (int)strlen(name), c->s->loc.line, c->s->loc.col};
	struct hgc_tsym *s = hgc_tck_sym(c, &t, &c->s->loc, kind);

	if (s)
		hgc_tck_define(c, s);
	return s;
}

/* The op a template serves: a tunable op, named case-insensitively. */
static int find_op(struct hgc_tck *c, const struct hgc_ast *o)
{
	const char *names[HGC_OP_COUNT];
	int i;

	if (o->tok.n == 6 && !strncasecmp(o->tok.z, "Region", 6)) {
		c->s->op = HGC_TMPL_REGION;
		return 0;
	}
	for (i = 0; i < HGC_OP_COUNT; i++) {
		names[i] = hgc_op_table[i].name;
		if ((int)strlen(names[i]) == o->tok.n && !strncasecmp(names[i], o->tok.z,
								       (size_t)o->tok.n))
			break;
	}
	if (i == HGC_OP_COUNT) {
		c->s->nerr++;
		return hgc_dsl_unknown(c->ld, &o->loc, "op", o->tok.z, (size_t)o->tok.n, names,
				       HGC_OP_COUNT);
	}
	if (hgc_op_table[i].category != HGC_CAT_TUNABLE)
		return hgc_tck_error(c, &o->loc, "templates serve the tunable ops (MatMul, "
				     "Convolution), not %s", hgc_op_table[i].name) - 1;
	c->s->op = (enum hgc_op_kind)i;
	return 0;
}

/* Count a list. */
static int count(const struct hgc_ast *l)
{
	int n = 0;

	for (; l; l = l->next)
		n++;
	return n;
}

/* One operand: its name, optional dtype, dims that are names; its rank or -1. */
static int operand(struct hgc_tck *c, struct hgc_ast *o, int i, bool input)
{
	struct hgc_tsym *s;
	struct hgc_ast *d;
	int bad = 0;

	c->s->operand_ast[i] = o;
	c->s->operand_dtype[i] = HGC_DT_UNDEF;
	if (o->a) {
		c->s->operand_dtype[i] = hgc_dtype_parse(o->a->tok.z, (size_t)o->a->tok.n);
		if (c->s->operand_dtype[i] == HGC_DT_UNDEF)
			bad = hgc_tck_error(c, &o->a->loc, "unknown dtype '%.*s'", o->a->tok.n,
					    o->a->tok.z) - 1;
	}
	for (d = o->b; d; d = d->next) {
		struct hgc_loc at = hgc_tsem_loc(d);

		if (d->kind != HGC_AST_NAME)
			bad = hgc_tck_error(c, &at, "the dims of an operand are names, not "
					    "expressions") - 1;
	}
	s = hgc_tck_sym(c, &o->tok, &o->loc, HGC_TSYM_OPERAND);
	if (!s)
		return -1;
	s->index = i;
	s->input = input;
	s->rank = count(o->b);
	c->s->operand[i] = s;
	hgc_tck_define(c, s);
	return bad ? -1 : s->rank;
}

/* The form of the op with operands of this rank, or NULL after reporting. */
static const struct form *find_form(struct hgc_tck *c, const int *ranks)
{
	const char *sigs = c->s->op == HGC_OP_MATMUL ? "[M, K] (2 dims) or [BT, M, K] (3 dims)"
			   : c->s->op == HGC_TMPL_REGION ? "[B, R, L] (3 dims)"
							 : "[N, C, H, W] (4 dims)";
	int i, j;

	for (i = 0; i < NFORMS; i++) {
		if (forms[i].op != c->s->op)
			continue;
		for (j = 0; j < c->s->noperands && ranks[j] == forms[i].rank; j++)
			;
		if (j == c->s->noperands)
			return &forms[i];
	}
	hgc_tck_error(c, &c->s->operand_ast[0]->loc, "the operands of a %s template are %s, "
		      "all of the same rank", hgc_tmpl_op_name(c->s->op), sigs);
	return NULL;
}

/* Bind the dim names: one name per canonical dim, and the same dim everywhere. */
static void shapes(struct hgc_tck *c, const struct form *f)
{
	const struct hgc_ast *byid[HGC_MAX_DIMS * 3] = {NULL};
	struct hgc_tsym *s;
	struct hgc_ast *d;
	int i, j, id;

	for (i = 0; i < c->s->noperands; i++) {
		for (j = 0, d = c->s->operand_ast[i]->b; d; d = d->next, j++) {
			id = f->ids[i][j];
			c->s->canon[i][j] = id;
			s = hgc_tck_lookup(c, d->tok.z, d->tok.n);
			if (byid[id] && !hgc_dsl_tok_is(&byid[id]->tok, s ? s->name : "")) {
				hgc_tck_error(c, &d->loc, "'%.*s' must be '%.*s' here: the dims of %s are %s",
					      d->tok.n, d->tok.z, byid[id]->tok.n, byid[id]->tok.z,
					      hgc_tmpl_op_name(c->s->op), f->sig);
				continue;
			}
			if (s && s->kind == HGC_TSYM_SHAPE && !byid[id]) {
				hgc_tck_error(c, &d->loc, "'%s' names two different dims: the dims of %s are "
					      "%s",
					      s->name, hgc_tmpl_op_name(c->s->op), f->sig);
				continue;
			}
			if (byid[id])
				continue;
			byid[id] = d;
			s = hgc_tck_sym(c, &d->tok, &d->loc, HGC_TSYM_SHAPE);
			if (!s)
				continue;
			s->operand = i, s->dim = j;
			hgc_tck_define(c, s);
		}
	}
}

static void builtins(struct hgc_tck *c);

/* The header: the op (then its and the built-in symbols), operands, dims. */
static int header(struct hgc_tck *c)
{
	const struct hgc_ast *blk = c->s->blk;
	int nin = count(blk->b), nres = count(blk->c), ranks[3], i, bad = 0;
	const struct form *f;
	struct hgc_ast *o;

	if (find_op(c, blk->a) < 0)
		return -1;
	builtins(c);
	if (c->s->op == HGC_TMPL_REGION && (nin != 1 || nres != 1))
		return hgc_tck_error(c, &blk->b->loc, "a Region template takes 1 operand (the "
				     "region's domain) and 1 result, not %d and %d", nin, nres) - 1;
	if (c->s->op != HGC_TMPL_REGION && (nin != 2 || nres != 1))
		return hgc_tck_error(c, &blk->b->loc, "a %s template takes 2 operands and 1 result "
				     "(the instantiation adds the bias), not %d and %d",
				     hgc_op_table[c->s->op].name, nin, nres) - 1;
	c->s->ninputs = nin, c->s->noperands = nin + 1;
	for (i = 0, o = blk->b; o; o = o->next, i++)
		bad |= (ranks[i] = operand(c, o, i, true)) < 0;
	bad |= (ranks[nin] = operand(c, blk->c, nin, false)) < 0;
	if (bad || !(f = find_form(c, ranks)))
		return -1;
	shapes(c, f);
	return 0;
}

/* Define the op symbols of the template's op and the built-ins. */
static void builtins(struct hgc_tck *c)
{
#define X(kind, name, what) if (c->s->op == HGC_OP_##kind) builtin(c, #name, HGC_TSYM_OPSYM);
	HGC_TMPL_OP_SYMS(X)
#undef X
#define X(name, what) builtin(c, #name, HGC_TSYM_BUILTIN);
	HGC_TMPL_BUILTINS(X)
#undef X
}

/* Collect the names the top level defines, to tell "used before" from "unknown". */
static void collect_names(struct hgc_tck *c, const struct hgc_ast *s)
{
	const struct hgc_ast *n;

	for (; s; s = s->next) {
		if (s->kind == HGC_AST_PARAM)
			for (n = s->a; n; n = n->next)
				*(const struct hgc_ast **)hgc_vec_push(&c->later) = n;
		else if (s->kind == HGC_AST_LET)
			for (n = s->a; n; n = n->next)
				*(const struct hgc_ast **)hgc_vec_push(&c->later) = n;
		else if (s->kind == HGC_AST_TENSOR)
			*(const struct hgc_ast **)hgc_vec_push(&c->later) = s;
	}
}

/* The domain kind of a constraint keyword, or -1 for a plain constraint. */
static int domain_kind(const struct hgc_ast *k)
{
	if (k->kind != HGC_AST_CONSTRAINT)
		return -1;
	switch (k->op) {
	case HGC_TK_ONE_OF: return HGC_TMPL_ONE_OF;
	case HGC_TK_RANGE: return HGC_TMPL_RANGE;
	case HGC_TK_DIVISOR_OF: return HGC_TMPL_DIVISOR_OF;
	case HGC_TK_GRID: return HGC_TMPL_GRID;
	default: return -1;
	}
}

/* Check the arguments of a domain or of divides/multiple_of (count, static
   integers); the count range is [lo, hi]. */
static int keyword_args(struct hgc_tck *c, struct hgc_ast *k, int lo, int hi,
			const char *usage)
{
	struct hgc_ast *a;
	int n = count(k->a), bad = 0;

	if (n < lo || n > hi)
		return hgc_tck_error(c, &k->loc, "%s, not %d argument%s", usage, n,
				     n == 1 ? "" : "s") - 1;
	for (a = k->a; a; a = a->next)
		bad |= hgc_tck_want(c, a, HGC_TTY_INT, true, "an argument of a domain") < 0;
	return bad ? -1 : 0;
}

/* The domain among a parameter's constraints (the first; a second is an error). */
static struct hgc_ast *find_domain(struct hgc_tck *c, struct hgc_ast *p)
{
	struct hgc_ast *k, *dom = NULL;

	for (k = p->b; k; k = k->next) {
		if (domain_kind(k) < 0)
			continue;
		if (dom) {
			hgc_tck_error(c, &k->loc, "parameter '%.*s' has two domains: %s and %s",
				      p->a->tok.n, p->a->tok.z, hgc_tsem_text(c->arena, dom),
				      hgc_tsem_text(c->arena, k));
			continue;
		}
		dom = k;
	}
	if (!dom)
		hgc_tck_error(c, &p->a->loc, "parameter '%.*s' has no domain: give one_of(...), "
			      "range(lo, hi), divisor_of(n) or grid(n)", p->a->tok.n, p->a->tok.z);
	return dom;
}

/* Check a domain's arguments in the scope before the parameter. */
static int domain_args(struct hgc_tck *c, struct hgc_ast *dom, int nnames)
{
	switch (domain_kind(dom)) {
	case HGC_TMPL_ONE_OF:
		return keyword_args(c, dom, 1, 1000, "one_of takes values");
	case HGC_TMPL_RANGE:
		return keyword_args(c, dom, 2, 3, "range takes lo, hi and an optional step");
	case HGC_TMPL_DIVISOR_OF:
		return keyword_args(c, dom, 1, 1, "divisor_of takes 1 argument");
	default:
		if (nnames > HGC_TMPL_MAX_GRID)
			return hgc_tck_error(c, &dom->loc, "a grid has at most %d names",
					     HGC_TMPL_MAX_GRID) - 1;
		return keyword_args(c, dom, 1, 1, "grid takes 1 argument");
	}
}

/* A new parameter declaration over syms[0..n). */
static struct hgc_tparam *declare(struct hgc_tck *c, struct hgc_ast *p, struct hgc_ast *dom,
				  struct hgc_tsym **syms, int n)
{
	struct hgc_tparam *d = hgc_arena_calloc(c->arena, 1, sizeof(*d));
	struct hgc_tmpl_step *st;
	int i;

	d->nsyms = n;
	for (i = 0; i < n; i++) {
		d->syms[i] = syms[i];
		syms[i]->index = (int)c->s->params.len;
	}
	d->decl = p;
	d->domain = dom;
	d->kind = (enum hgc_tmpl_domain)domain_kind(dom);
	d->index = (int)c->s->params.len;
	*(struct hgc_tparam **)hgc_vec_push(&c->s->params) = d;
	st = hgc_vec_push(&c->s->steps);
	st->param = true;
	st->index = d->index;
	return d;
}

/* Record a constraint (resolved once the whole template is read). */
static void constraint(struct hgc_tck *c, struct hgc_ast *k, struct hgc_tsym *of, int decl)
{
	struct hgc_tconstraint *t = hgc_arena_calloc(c->arena, 1, sizeof(*t));

	t->c = k;
	t->of = of;
	t->param = decl;
	t->loc = hgc_tsem_loc(k);
	*(struct hgc_tconstraint **)hgc_vec_push(&c->s->constraints) = t;
}

/* The constraints of a declaration: divides/multiple_of per name, expressions once. */
static void constraints(struct hgc_tck *c, struct hgc_ast *p, struct hgc_tsym **syms, int n,
			int first_decl)
{
	struct hgc_ast *k;
	int i;

	for (k = p->b; k; k = k->next) {
		if (domain_kind(k) >= 0)
			continue;
		if (k->kind != HGC_AST_CONSTRAINT) {
			constraint(c, k, NULL, first_decl);
			continue;
		}
		if (count(k->a) != 1) {
			hgc_tck_error(c, &k->loc, "%.*s takes 1 argument, not %d", k->tok.n, k->tok.z,
				      count(k->a));
			continue;
		}
		for (i = 0; i < n; i++)
			constraint(c, k, syms[i], syms[i]->index);
	}
}

/* param A, B : domain, constraints...; */
void hgc_tck_param(struct hgc_tck *c, struct hgc_ast *p)
{
	struct hgc_tsym *syms[64];
	struct hgc_ast *dom = find_domain(c, p), *n;
	int nn = 0, i, first = (int)c->s->params.len;

	if (dom && domain_args(c, dom, count(p->a)) < 0)
		dom = NULL;
	for (n = p->a; n && nn < 64; n = n->next) {
		struct hgc_tsym *s = hgc_tck_sym(c, &n->tok, &n->loc, HGC_TSYM_PARAM);

		if (!s)
			continue;
		n->sym = s;
		syms[nn++] = s;
		hgc_tck_define(c, s);
	}
	if (!dom || !nn)
		return;
	if (domain_kind(dom) == HGC_TMPL_GRID)
		declare(c, p, dom, syms, nn);
	else
		for (i = 0; i < nn; i++)
			declare(c, p, dom, &syms[i], 1);
	constraints(c, p, syms, nn, first);
}

/* "M, K": the dim names of operand i. */
static const char *dims_text(struct hgc_tck *c, int i)
{
	const struct hgc_ast *d = c->s->operand_ast[i]->b;
	char *t = "";

	for (; d; d = d->next)
		t = hgc_arena_printf(c->arena, "%s%.*s%s", t, d->tok.n, d->tok.z,
				     d->next ? ", " : "");
	return t;
}

/* The dim of operand o that name names, or -1 after reporting. */
static int dim_of(struct hgc_tck *c, const struct hgc_tsym *o, const struct hgc_ast *name)
{
	const struct hgc_ast *d = c->s->operand_ast[o->index]->b;
	int i;

	for (i = 0; d; d = d->next, i++)
		if (name->kind == HGC_AST_NAME && d->tok.n == name->tok.n &&
		    !memcmp(d->tok.z, name->tok.z, (size_t)d->tok.n))
			return i;
	return hgc_tck_error(c, &name->loc, "'%.*s' is not a dim of '%s' (%s:[%s])",
			     name->tok.n, name->tok.z, o->name, o->name, dims_text(c, o->index)) - 1;
}

/* One layout entry: D, D / E, D % E or pad(D, before, after). */
static int entry(struct hgc_tck *c, const struct hgc_tsym *o, struct hgc_ast *e,
		 struct hgc_tlentry *out)
{
	struct hgc_loc at = hgc_tsem_loc(e);
	bool blk = e->kind == HGC_AST_BINARY && e->a->kind == HGC_AST_NAME &&
		   (e->op == HGC_TK_SLASH || e->op == HGC_TK_PERCENT);
	bool pad = e->kind == HGC_AST_CALL && hgc_dsl_tok_is(&e->tok, "pad") && count(e->a) == 3;

	memset(out, 0, sizeof(*out));
	out->e = e;
	if (e->kind == HGC_AST_NAME) {
		out->kind = HGC_TMPL_WHOLE;
		return out->dim = dim_of(c, o, e);
	}
	if (!blk && !pad)
		return hgc_tck_error(c, &at, "a layout entry is D, D / E, D %% E or pad(D, before, "
				     "after), with D a dim of '%s'", o->name) - 1;
	if ((out->dim = dim_of(c, o, e->a)) < 0)
		return -1;
	if (blk) {
		out->kind = e->op == HGC_TK_SLASH ? HGC_TMPL_OUTER : HGC_TMPL_INNER;
		out->block = e->b;
		return hgc_tck_want(c, e->b, HGC_TTY_INT, true, "a block size");
	}
	out->kind = HGC_TMPL_PAD;
	out->before = e->a->next;
	out->after = e->a->next->next;
	if (hgc_tck_want(c, e->a->next, HGC_TTY_INT, true, "a padding") < 0 ||
	    hgc_tck_want(c, e->a->next->next, HGC_TTY_INT, true, "a padding") < 0)
		return -1;
	return 0;
}

/* Each logical dim once: whole, padded, or split into blocks (outer first). */
static int coverage(struct hgc_tck *c, const struct hgc_tsym *o, const struct hgc_tlayout *l,
		    const struct hgc_ast *decl, int d)
{
	const struct hgc_tlentry *outer = NULL, *inner = NULL;
	const struct hgc_ast *dn = c->s->operand_ast[o->index]->b;
	int i, plain = 0, n = 0;

	for (i = 0; i < d; i++)
		dn = dn->next;
	for (i = 0; i < l->n; i++) {
		if (l->ent[i].dim != d)
			continue;
		n++;
		plain += l->ent[i].kind == HGC_TMPL_WHOLE || l->ent[i].kind == HGC_TMPL_PAD;
		if (l->ent[i].kind == HGC_TMPL_OUTER)
			outer = &l->ent[i];
		if (l->ent[i].kind == HGC_TMPL_INNER)
			inner = inner ? inner : &l->ent[i];
	}
	if (!n)
		return hgc_tck_error(c, &decl->loc, "dim '%.*s' of '%s' is missing from its layout",
				     dn->tok.n, dn->tok.z, o->name) - 1;
	if ((plain && n > 1) || n > 2)
		return hgc_tck_error(c, &decl->loc, "dim '%.*s' appears more than once in the "
				     "layout of '%s'", dn->tok.n, dn->tok.z, o->name) - 1;
	if (plain)
		return 0;
	if (!outer || !inner)
		return hgc_tck_error(c, &(outer ? outer : inner)->e->loc, "'%s' needs %s '%.*s %s "
				     "%s' in the layout of '%s'",
				     hgc_tsem_text(c->arena, (outer ? outer : inner)->e),
				     outer ? "its inner block" : "its blocks", dn->tok.n, dn->tok.z,
				     outer ? "%" : "/",
				     hgc_tsem_text(c->arena, (outer ? outer : inner)->block),
				     o->name) - 1;
	if (outer > inner)
		return hgc_tck_error(c, &outer->e->loc, "'%s' must come before '%s'",
				     hgc_tsem_text(c->arena, outer->e),
				     hgc_tsem_text(c->arena, inner->e)) - 1;
	if (!hgc_tsem_same(outer->block, inner->block))
		return hgc_tck_error(c, &inner->e->loc, "the blocks of dim '%.*s' differ: '%s' and "
				     "'%s'", dn->tok.n, dn->tok.z, hgc_tsem_text(c->arena, outer->e),
				     hgc_tsem_text(c->arena, inner->e)) - 1;
	return 0;
}

/* Whether operand i of s has the canonical dim id. */
static bool has_dim(const struct hgc_tmpl_sem *s, int i, int id)
{
	int k, n = count(s->operand_ast[i]->b);

	for (k = 0; k < n; k++)
		if (s->canon[i][k] == id)
			return true;
	return false;
}

/* The reduction dim of input i: shared with the other input, not in the result. */
static int reduction_dim(const struct hgc_tmpl_sem *s, int i)
{
	int j, n = count(s->operand_ast[i]->b);

	for (j = 0; j < n; j++)
		if (has_dim(s, 1 - i, s->canon[i][j]) && !has_dim(s, 2, s->canon[i][j]))
			return j;
	return -1;
}

/* `packed` or `packed(E)`: the inner block of B's reduction dim packs by E (kpack). */
static int packing(struct hgc_tck *c, struct hgc_tsym *o, struct hgc_tlayout *l,
		   struct hgc_ast *pk)
{
	struct hgc_tconstraint *t;
	const struct hgc_tlentry *in = NULL;
	int i;

	if (o->index != 1)
		return hgc_tck_error(c, &pk->loc, "only the second operand ('%s') can be packed",
				     c->s->operand[1]->name) - 1;
	if (count(pk->a) > 1)
		return hgc_tck_error(c, &pk->loc, "packed takes at most 1 argument") - 1;
	if (pk->a && hgc_tck_want(c, pk->a, HGC_TTY_INT, true, "a packing") < 0)
		return -1;
	l->packdim = reduction_dim(c->s, 1);
	for (i = 0; i < l->n; i++)
		if (l->ent[i].kind == HGC_TMPL_INNER && l->ent[i].dim == l->packdim)
			in = &l->ent[i];
	if (l->packdim < 0 || !in)
		return hgc_tck_error(c, &pk->loc, "packed needs an inner block of the reduction "
				     "dim (like K %% KB) in the layout of '%s'", o->name) - 1;
	l->packed = true;
	l->factor = pk->a;
	t = hgc_arena_calloc(c->arena, 1, sizeof(*t));
	t->pack_block = in->block;
	t->pack_factor = pk->a;
	t->param = -1;
	t->loc = pk->loc;
	t->text = hgc_arena_printf(c->arena, "%s %% %s == 0 (the packing of %s)",
				   hgc_tsem_text(c->arena, in->block),
				   pk->a ? hgc_tsem_text(c->arena, pk->a) : "kpack", o->name);
	*(struct hgc_tconstraint **)hgc_vec_push(&c->s->constraints) = t;
	return 0;
}

/* The operand a layout is for, or NULL after reporting. */
static struct hgc_tsym *layout_operand(struct hgc_tck *c, const struct hgc_ast *ld)
{
	struct hgc_tsym *o = hgc_tck_lookup(c, ld->tok.z, ld->tok.n);
	const char *names[HGC_TMPL_MAX_OPERANDS];
	int i;

	if (o && o->kind == HGC_TSYM_OPERAND) {
		if (!c->s->layout[o->index] && !o->used)
			return o;
		if (o->used) {
			hgc_tck_error(c, &ld->loc, "the layout of '%s' comes after its first use",
				      o->name);
			return NULL;
		}
		hgc_tck_error(c, &ld->loc, "duplicate layout of '%s'", o->name);
		hgc_tck_note(c, &c->s->layout[o->index]->decl->loc, "the first one is here");
		return NULL;
	}
	for (i = 0; i < c->s->noperands; i++)
		names[i] = c->s->operand[i] ? c->s->operand[i]->name : "";
	c->s->nerr++;
	hgc_dsl_unknown(c->ld, &ld->loc, "operand", ld->tok.z, (size_t)ld->tok.n, names,
			c->s->noperands);
	return NULL;
}

/* layout A : [entries] [packed[(E)]]; */
void hgc_tck_layout(struct hgc_tck *c, struct hgc_ast *ld)
{
	struct hgc_tsym *o = layout_operand(c, ld);
	struct hgc_tlayout *l;
	struct hgc_ast *e;
	int bad = 0, d;

	if (!o)
		return;
	l = hgc_arena_calloc(c->arena, 1, sizeof(*l));
	l->decl = ld;
	l->packdim = -1;
	for (e = ld->a; e; e = e->next) {
		if (l->n == HGC_TMPL_MAX_PHYS - 1) {
			hgc_tck_error(c, &e->loc, "a layout has at most %d dims",
				      HGC_TMPL_MAX_PHYS - 1);
			return;
		}
		bad |= entry(c, o, e, &l->ent[l->n++]) < 0;
	}
	if (bad)
		return;
	for (d = 0; d < o->rank; d++)
		bad |= coverage(c, o, l, ld, d) < 0;
	if (bad || (ld->b && packing(c, o, l, ld->b) < 0))
		return;
	c->s->layout[o->index] = l;
	o->rank = l->n + l->packed;
	o->packed = l->packed;
}

/* Resolve the constraints: any top-level static name may appear. */
static void resolve_constraints(struct hgc_tck *c)
{
	struct hgc_tconstraint *t;
	size_t i;

	for (i = 0; i < c->s->constraints.len; i++) {
		t = HGC_TSEM_CONSTRAINT(c->s, i);
		if (!t->c)
			continue;
		if (i > 0 && HGC_TSEM_CONSTRAINT(c->s, i - 1)->c == t->c)
			;	/* the same divides/multiple_of for another name */
		else if (t->c->kind == HGC_AST_CONSTRAINT)
			hgc_tck_want(c, (struct hgc_ast *)t->c->a, HGC_TTY_INT, true,
				     "the argument of a constraint");
		else
			hgc_tck_want(c, (struct hgc_ast *)t->c, HGC_TTY_BOOL, true, "a constraint");
		t->text = t->of ? hgc_arena_printf(c->arena, "%s (of %s)",
						   hgc_tsem_text(c->arena, t->c), t->of->name)
				: hgc_tsem_text(c->arena, t->c);
	}
}

/* The anchor called name, or NULL after reporting (with a suggestion). */
static struct hgc_tanchor *anchor_named(struct hgc_tck *c, const struct hgc_ast *at)
{
	const char *names[64];
	size_t i;
	int n = 0;

	for (i = 0; i < c->s->anchors.len; i++) {
		if (hgc_dsl_tok_is(&at->tok, HGC_TSEM_ANCHOR(c->s, i)->name))
			return HGC_TSEM_ANCHOR(c->s, i);
		if (n < 64)
			names[n++] = HGC_TSEM_ANCHOR(c->s, i)->name;
	}
	c->s->nerr++;
	hgc_dsl_unknown(c->ld, &at->loc, "anchor", at->tok.z, (size_t)at->tok.n, names, n);
	return NULL;
}

/* The cost keys. */
static const char *const cost_keys[] = {
#define X(e, k) #k,
	HGC_TMPL_COSTS(X)
#undef X
};

/* One cost formula: a known key, once, a static integer. */
static void cost_entry(struct hgc_tck *c, struct hgc_tanchor *a, struct hgc_ast *kv)
{
	int k;

	for (k = 0; k < HGC_TMPL_NCOST && !hgc_dsl_tok_is(&kv->tok, cost_keys[k]); k++)
		;
	if (k == HGC_TMPL_NCOST) {
		c->s->nerr++;
		hgc_dsl_unknown(c->ld, &kv->loc, "cost key", kv->tok.z, (size_t)kv->tok.n, cost_keys,
				HGC_TMPL_NCOST);
		return;
	}
	if (a->cost[k]) {
		hgc_tck_error(c, &kv->loc, "duplicate '%s' in the cost of '%s'", cost_keys[k],
			      a->name);
		return;
	}
	if (hgc_tck_want(c, kv->a, HGC_TTY_INT, true, "a cost") == 0)
		a->cost[k] = kv->a;
}

/* cost NAME { working_set = ...; calls = ...; [accesses = ...;] } */
static void cost(struct hgc_tck *c, const struct hgc_ast *s)
{
	struct hgc_tanchor *a = anchor_named(c, s);
	struct hgc_ast *kv;

	if (!a)
		return;
	if (a->cost_decl) {
		hgc_tck_error(c, &s->loc, "duplicate cost of anchor '%s'", a->name);
		hgc_tck_note(c, &a->cost_decl->loc, "the first one is here");
		return;
	}
	a->cost_decl = s;
	for (kv = s->a; kv; kv = kv->next)
		cost_entry(c, a, kv);
	if (!a->cost[HGC_TMPL_COST_WORKING_SET] || !a->cost[HGC_TMPL_COST_CALLS])
		hgc_tck_error(c, &s->loc, "the cost of '%s' needs '%s'", a->name,
			      a->cost[HGC_TMPL_COST_WORKING_SET] ? "calls" : "working_set");
}

/* Costs name known anchors, once; every anchor has one. */
static void costs(struct hgc_tck *c)
{
	struct hgc_tanchor *a;
	size_t i;

	for (i = 0; i < c->costs.len; i++)
		cost(c, HGC_VEC_AT(&c->costs, const struct hgc_ast *, i));
	for (i = 0; i < c->s->anchors.len; i++) {
		a = HGC_TSEM_ANCHOR(c->s, i);
		if (!a->cost_decl)
			hgc_tck_error(c, &a->decl->loc, "anchor '%s' has no cost block", a->name);
	}
}

/* The values of a constant domain (no names); -1 if it has names. */
static int const_domain(const struct hgc_tparam *d, int64_t *v, int cap)
{
	const struct hgc_ast *a = d->domain->a;
	int64_t x, lo, hi, step = 1;
	int n = 0;

	switch (d->kind) {
	case HGC_TMPL_ONE_OF:
		for (; a && n < cap; a = a->next) {
			if (!hgc_tsem_eval(a, NULL, 0, &x))
				return -1;
			v[n++] = x;
		}
		return n;
	case HGC_TMPL_RANGE:
		if (!hgc_tsem_eval(a, NULL, 0, &lo) || !hgc_tsem_eval(a->next, NULL, 0, &hi) ||
		    (a->next->next && !hgc_tsem_eval(a->next->next, NULL, 0, &step)) || step <= 0)
			return -1;
		for (x = lo; x <= hi && n < cap; x += step)
			v[n++] = x;
		return n;
	case HGC_TMPL_DIVISOR_OF:
		if (!hgc_tsem_eval(a, NULL, 0, &hi) || hi <= 0)
			return -1;
		for (x = 1; x <= hi && n < cap; x++)
			if (hi % x == 0)
				v[n++] = x;
		return n;
	default:
		return -1;
	}
}

/* Whether constraint t holds for its parameter s = x: 1, 0, or -1 (other names). */
static int holds(const struct hgc_tconstraint *t, const struct hgc_tsym *s, int64_t x)
{
	int64_t y;

	if (!t->c)
		return -1;
	if (t->c->kind != HGC_AST_CONSTRAINT)
		return hgc_tsem_eval(t->c, s, x, &y) ? y != 0 : -1;
	if (t->of != s || !hgc_tsem_eval(t->c->a, s, x, &y))
		return -1;
	if (t->c->op == HGC_TK_DIVIDES)
		return x != 0 && y % x == 0;
	return y != 0 && x % y == 0;
}

/* A parameter with a constant domain: each of its own constraints (and all
   of them together) must let at least one value through. */
static void satisfiable(struct hgc_tck *c, const struct hgc_tparam *d)
{
	const struct hgc_tconstraint *t;
	int64_t v[HGC_TMPL_MAX_DOMAIN];
	bool all[HGC_TMPL_MAX_DOMAIN];
	int n = d->nsyms == 1 ? const_domain(d, v, HGC_TMPL_MAX_DOMAIN) : -1, i, any, ok;
	size_t k;

	if (n < 0)
		return;
	if (n == 0) {
		hgc_tck_error(c, &d->domain->loc, "the domain %s of '%s' is empty",
			      hgc_tsem_text(c->arena, d->domain), d->syms[0]->name);
		return;
	}
	for (i = 0; i < n; i++)
		all[i] = true;
	for (k = 0; k < c->s->constraints.len; k++) {
		t = HGC_TSEM_CONSTRAINT(c->s, k);
		if (t->param != d->index)
			continue;
		for (i = 0, any = 0, ok = 1; i < n && ok >= 0; i++) {
			ok = holds(t, d->syms[0], v[i]);
			any |= ok > 0;
			all[i] &= ok != 0;
		}
		if (ok >= 0 && !any) {
			hgc_tck_error(c, &t->loc, "no value of '%s' in %s satisfies %s",
				      d->syms[0]->name, hgc_tsem_text(c->arena, d->domain),
				      hgc_tsem_text(c->arena, t->c));
			return;
		}
	}
	for (i = 0; i < n && !all[i]; i++)
		;
	if (i == n)
		hgc_tck_error(c, &d->domain->loc, "no value of '%s' in %s satisfies all its "
			      "constraints", d->syms[0]->name, hgc_tsem_text(c->arena, d->domain));
}

/* What needs the whole template: constraints, costs, satisfiability. */
static void finish(struct hgc_tck *c)
{
	size_t i;
	int nerr = c->s->nerr;

	if (c->s->statics.len > HGC_TMPL_MAX_SYMS)
		hgc_tck_error(c, &c->s->loc, "a template has at most %d parameters, lets and "
			      "dims, not %zu", HGC_TMPL_MAX_SYMS, c->s->statics.len);
	resolve_constraints(c);
	costs(c);
	if (c->s->nerr > nerr)
		return;
	for (i = 0; i < c->s->params.len; i++)
		satisfiable(c, HGC_TSEM_PARAM(c->s, i));
}

/* What a Region template's nest cannot hold (its ops, not the template,
   compute and write the tensors): layouts, brgemm calls, element writes. */
static void region_stmts(struct hgc_tck *c, const struct hgc_ast *st)
{
	for (; st; st = st->next) {
		if (st->kind == HGC_AST_LAYOUT)
			hgc_tck_error(c, &st->loc, "a Region template has no layouts: its ops read "
				      "and write the graph's tensors");
		else if (st->kind == HGC_AST_EVAL)
			hgc_tck_error(c, &st->loc, "a Region template calls nothing: its anchors "
				      "take the region's ops");
		else if (st->kind == HGC_AST_ASSIGN && st->a->kind == HGC_AST_INDEX)
			hgc_tck_error(c, &st->loc, "a Region template writes no tensor: its ops "
				      "do, at its anchors");
		else if (st->kind == HGC_AST_PARALLEL || st->kind == HGC_AST_FOR)
			region_stmts(c, st->b);
		else if (st->kind == HGC_AST_IF)
			region_stmts(c, st->b), region_stmts(c, st->c);
	}
}

/* A Region template: the nest's limits, and anchors on the result only
   (at least one: the region's ops go there). */
static void region_rules(struct hgc_tck *c)
{
	const struct hgc_tanchor *a;
	size_t i;

	region_stmts(c, c->s->blk->d);
	for (i = 0; i < c->s->anchors.len; i++) {
		a = HGC_TSEM_ANCHOR(c->s, i);
		if (a->operand && !a->post)
			hgc_tck_error(c, &a->decl->loc, "anchor '%s' is on '%s': a Region "
				      "template's anchors are on its result '%s'", a->name,
				      a->operand->name, c->s->operand[1]->name);
	}
	if (!c->s->anchors.len)
		hgc_tck_error(c, &c->s->loc, "a Region template needs an anchor on its result "
			      "'%s': the region's ops go there", c->s->operand[1]->name);
}

/*
 * Names a template cannot have: hgc_tmpl_NAME (its generated struct) would
 * clash with what core/lower/tmpl.h declares (t/100-tmplc.c checks this list
 * against the header).
 */
static const char *const reserved[] = {
	"add", "all", "anchor", "at", "bin", "bind", "bind_region", "bounds", "brgemm_begin",
	"brgemm_end", "cdiv", "cdiv_x", "check_rules", "choose", "choose_padding", "div",
	"dom_divisors", "dom_grid", "dom_list", "dom_range", "ebin", "eload", "eneg",
	"enumerate", "enumerate_full", "ew_begin", "ew_end", "fail", "find", "for", "if",
	"inst_release", "instantiate", "k", "kb", "let", "lower_graph", "lower_tunable", "max",
	"min", "mod",
	"mul", "neg", "neg_x", "not_x", "op_name", "opts_init", "opts_release", "padding",
	"pfor", "pfor_end", "pins_of", "print", "print_params", "range", "rank", "rank_print",
	"ref", "registry", "slice", "sub", "sym", "tensor", "used", "var", "visit_fn", "warn_use",
	"why_naive",
};

/* Report a template name that is reserved; true if it is. */
static bool reserved_name(struct hgc_tck *c)
{
	size_t i;

	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(c->s->name, reserved[i])) {
			hgc_tck_error(c, &c->s->blk->loc, "template name '%s' is taken: "
				      "hgc_tmpl_%s is part of core/lower/tmpl.h", c->s->name,
				      c->s->name);
			return true;
		}
	return false;
}

/* Check a template block; keep it in ld->templates when it has no error. */
void hgc_dsl_check_template(struct hgc_load *ld, const struct hgc_ast *blk)
{
	struct hgc_tmpl_sem *s = hgc_arena_calloc(&ld->p->arena, 1, sizeof(*s));
	struct hgc_tck c = {ld, s, &ld->p->arena, NULL, 0, 0, {0}, {0}};

	s->name = hgc_dsl_tok_str(&ld->p->arena, &blk->tok);
	s->blk = blk;
	s->loc = blk->loc;
	hgc_vec_init(&s->statics, sizeof(struct hgc_tsym *));
	hgc_vec_init(&s->params, sizeof(struct hgc_tparam *));
	hgc_vec_init(&s->steps, sizeof(struct hgc_tmpl_step));
	hgc_vec_init(&s->constraints, sizeof(struct hgc_tconstraint *));
	hgc_vec_init(&s->anchors, sizeof(struct hgc_tanchor *));
	hgc_vec_init(&c.costs, sizeof(const struct hgc_ast *));
	hgc_vec_init(&c.later, sizeof(const struct hgc_ast *));
	if (!reserved_name(&c) && header(&c) == 0) {
		collect_names(&c, blk->d);
		hgc_tck_stmts(&c, (struct hgc_ast *)blk->d, true);
		finish(&c);
		if (s->op == HGC_TMPL_REGION)
			region_rules(&c);
	}
	hgc_vec_release(&c.costs);
	hgc_vec_release(&c.later);
	if (ld->templates && !s->nerr)
		*(struct hgc_tmpl_sem **)hgc_vec_push(ld->templates) = s;
	else
		hgc_tsem_free(s);
}
