/*
 * template_stmt.c: the statements of a template's loop nest: parallel and
 * serial loops, ifs, lets, temporaries, elementwise assignments, brgemm
 * calls and anchors.  Declarations (param, layout, cost) belong to the top
 * level; template.c checks them.
 */
#include <string.h>

#include "dsl/template.h"
#include "grammar.h"

/* A loop range lo..hi [step s]: integers; a static step must be positive. */
static int iter_range(struct hgc_tck *c, struct hgc_ast *it, const char *what)
{
	int64_t v;
	int bad = 0;

	bad |= hgc_tck_want(c, it->a, HGC_TTY_INT, false, "the start of a loop") < 0;
	bad |= hgc_tck_want(c, it->b, HGC_TTY_INT, false, "the end of a loop") < 0;
	if (it->c && hgc_tck_want(c, it->c, HGC_TTY_INT, true, "the step of a loop") == 0 &&
	    hgc_tsem_eval(it->c, NULL, 0, &v) && v <= 0) {
		hgc_tck_error(c, &it->c->loc, "the step of %s must be positive, not %lld", what,
			      (long long)v);
		bad = 1;
	}
	return bad ? -1 : 0;
}

/* Define the variable of an iterator (a loop variable). */
static void iter_var(struct hgc_tck *c, struct hgc_ast *it)
{
	struct hgc_tsym *s = hgc_tck_sym(c, &it->tok, &it->loc, HGC_TSYM_LOOP);

	if (s) {
		it->sym = s;
		hgc_tck_define(c, s);
	}
}

/* parallel v in lo..hi, ... { body }: ranges first, then the variables. */
static void parallel(struct hgc_tck *c, struct hgc_ast *p)
{
	struct hgc_tsym *mark;
	struct hgc_ast *it;

	if (c->par)
		hgc_tck_error(c, &p->loc, "parallel loops cannot nest");
	for (it = p->a; it; it = it->next)
		iter_range(c, it, "a parallel loop");
	mark = hgc_tck_enter(c);
	for (it = p->a; it; it = it->next)
		iter_var(c, it);
	c->par++;
	hgc_tck_stmts(c, p->b, false);
	c->par--;
	hgc_tck_leave(c, mark);
}

/* for v in lo..hi [step s] { body } */
static void loop(struct hgc_tck *c, struct hgc_ast *f)
{
	struct hgc_tsym *mark;

	iter_range(c, f->a, "a loop");
	mark = hgc_tck_enter(c);
	iter_var(c, f->a);
	hgc_tck_stmts(c, f->b, false);
	hgc_tck_leave(c, mark);
}

/* if cond { } [else { }] */
static void cond(struct hgc_tck *c, struct hgc_ast *s)
{
	struct hgc_tsym *mark;

	hgc_tck_want(c, s->a, HGC_TTY_BOOL, false, "the condition of 'if'");
	mark = hgc_tck_enter(c);
	hgc_tck_stmts(c, s->b, false);
	hgc_tck_leave(c, mark);
	mark = hgc_tck_enter(c);
	hgc_tck_stmts(c, s->c, false);
	hgc_tck_leave(c, mark);
}

/* let x = e, ...: top level: static integers (environment slots). */
static void let(struct hgc_tck *c, struct hgc_ast *l, bool top)
{
	struct hgc_tmpl_step *st;
	struct hgc_ast *n;
	struct hgc_tsym *s;
	int t;

	for (n = l->a; n; n = n->next) {
		t = top ? (hgc_tck_want(c, n->a, HGC_TTY_INT, true, "a top-level let") < 0
				   ? HGC_TTY_NONE : HGC_TTY_INT)
			: hgc_tck_expr(c, n->a, -1);
		if (t == HGC_TTY_ELEM) {
			hgc_tck_error(c, &n->loc, "a let must be an integer or a condition");
			t = HGC_TTY_NONE;
		}
		s = hgc_tck_sym(c, &n->tok, &n->loc, top ? HGC_TSYM_LET : HGC_TSYM_BLET);
		if (!s)
			continue;
		s->def = n->a;
		s->ty = (uint8_t)(t ? t : HGC_TTY_INT);
		s->dyn = n->a->dyn;
		n->sym = s;
		hgc_tck_define(c, s);
		if (top) {
			st = hgc_vec_push(&c->s->steps);
			st->param = false;
			st->index = s->slot;
		}
	}
}

/* Element types a temporary may have. */
static const char *const elem_types[] = {"f32", "bf16", "s32", "s8", "u8", "acc"};

/* tensor T : type[dims]; a temporary of the scope it is in. */
static void tensor(struct hgc_tck *c, struct hgc_ast *t)
{
	struct hgc_ast *ty = t->a, *d;
	struct hgc_tsym *s;
	int n = 0, i, bad = 0;

	for (i = 0; i < 6 && !hgc_dsl_tok_is(&ty->tok, elem_types[i]); i++)
		;
	if (i == 6) {
		hgc_dsl_unknown(c->ld, &ty->loc, "element type", ty->tok.z, (size_t)ty->tok.n,
				elem_types, 6);
		c->s->nerr++;
		bad = 1;
	}
	for (d = ty->a; d; d = d->next, n++)
		bad |= hgc_tck_want(c, d, HGC_TTY_INT, true, "a dim of a tensor") < 0;
	if (n > HGC_TMPL_MAX_PHYS) {
		hgc_tck_error(c, &t->loc, "a tensor has at most %d dims", HGC_TMPL_MAX_PHYS);
		bad = 1;
	}
	s = hgc_tck_sym(c, &t->tok, &t->loc, HGC_TSYM_TENSOR);
	if (!s)
		return;
	s->def = ty;
	s->rank = n;
	t->sym = s;
	hgc_tck_define(c, s);
	(void)bad;
}

/* The tensor elements and slices an expression reads. */
static int loads(const struct hgc_ast *e)
{
	const struct hgc_ast *a;
	int n = 0;

	if (!e)
		return 0;
	if (e->kind == HGC_AST_INDEX)
		return 1;
	if (e->kind != HGC_AST_BINARY && e->kind != HGC_AST_UNARY && e->kind != HGC_AST_CALL)
		return 0;
	for (a = e->a; a; a = a->next)
		n += loads(a);
	return n + (e->kind == HGC_AST_BINARY ? loads(e->b) : 0);
}

/* T[...] = value: an element, or every element of the ranges. */
static void assign(struct hgc_tck *c, struct hgc_ast *a)
{
	struct hgc_ast *lhs = a->a;
	int rank;

	if (loads(a->b) > 64) {
		hgc_tck_error(c, &a->loc, "an assignment reads at most 64 tensors, not %d",
			      loads(a->b));
		return;
	}

	if (lhs->kind != HGC_AST_INDEX) {
		hgc_tck_error(c, &lhs->loc, "cannot assign to '%.*s': only tensor elements can be "
			      "assigned", lhs->tok.n, lhs->tok.z);
		return;
	}
	rank = hgc_tck_slice(c, lhs);
	if (rank >= 0 && lhs->sym->kind == HGC_TSYM_OPERAND && lhs->sym->input)
		hgc_tck_error(c, &lhs->loc, "cannot assign to input '%s'", lhs->sym->name);
	if (rank >= 0 && hgc_tck_expr(c, a->b, rank) == HGC_TTY_BOOL)
		hgc_tck_error(c, &a->b->loc, "the value of an assignment must be a number");
}

/* The range positions of a checked slice, innermost last; their count. */
static int ranges(const struct hgc_ast *ix, int *pos, const struct hgc_ast **ent)
{
	const struct hgc_ast *s;
	int i = 0, n = 0;

	for (s = ix->a; s; s = s->next, i++)
		if (s->op) {
			pos[n] = i;
			ent[n++] = s;
		}
	return n;
}

/*
 * One brgemm operand: want ranges (2, or 3 for a packed B); the last
 * `contig` ranges must be the innermost dims with no step.  A or C may
 * have 3 ranges when the first two are one run of rows (several rows of a
 * channels-last image), which the instantiation checks
 * (core/lower/tmpl_kernel.c).
 */
static void operand(struct hgc_tck *c, struct hgc_ast *ix, const char *role, int want,
		    int contig)
{
	const struct hgc_ast *ent[HGC_TMPL_MAX_PHYS];
	int pos[HGC_TMPL_MAX_PHYS], r = hgc_tck_slice(c, ix), n, i;

	if (r < 0)
		return;
	if (r != want && !(want == 2 && r == 3)) {
		hgc_tck_error(c, &ix->loc, "brgemm: %s must be a slice of %d dims%s, not %d", role,
			      want, want == 3 ? " (its layout is packed)" : "", r);
		return;
	}
	n = ranges(ix, pos, ent);
	for (i = n - contig; i < n; i++)
		if (pos[i] != ix->sym->rank - n + i || ent[i]->c) {
			hgc_tck_error(c, &ent[i]->loc, "brgemm: the last %s of %s must be its "
				      "innermost %s, with no step",
				      contig == 1 ? "range" : "two ranges", role,
				      contig == 1 ? "dim" : "dims");
			return;
		}
}

/* The positional arguments of brgemm (slices) and its batch and named ones. */
static int brgemm_args(struct hgc_tck *c, struct hgc_ast *call, struct hgc_ast **abc)
{
	struct hgc_ast *a;
	int n = 0;

	for (a = call->a; a; a = a->next) {
		if (a->kind == HGC_AST_ITER)
			continue;
		if (a->kind == HGC_AST_NAMED) {
			if (!hgc_dsl_tok_is(&a->tok, "first"))
				return hgc_tck_error(c, &a->loc, "unknown brgemm argument '%.*s' "
						     "(first)", a->tok.n, a->tok.z) - 1;
			continue;
		}
		if (a->kind != HGC_AST_INDEX || n == 3)
			return hgc_tck_error(c, &a->loc, "brgemm takes slices A, B and C, batch "
					     "loops 'v in lo..hi' and 'first = condition'") - 1;
		abc[n++] = a;
	}
	if (n < 3)
		return hgc_tck_error(c, &call->loc, "brgemm needs the slices A, B and C") - 1;
	return 0;
}

/* Batch iterators: ranges in the outer scope, then their variables. */
static void batch(struct hgc_tck *c, struct hgc_ast *call)
{
	struct hgc_ast *a;

	for (a = call->a; a; a = a->next)
		if (a->kind == HGC_AST_ITER)
			iter_range(c, a, "a brgemm batch");
	for (a = call->a; a; a = a->next)
		if (a->kind == HGC_AST_ITER)
			iter_var(c, a);
}

/* brgemm(A[..], B[..], C[..], v in lo..hi, ..., first = cond) */
static void brgemm(struct hgc_tck *c, struct hgc_ast *call)
{
	struct hgc_ast *abc[3], *a;
	struct hgc_tsym *mark;
	bool packed;

	for (a = call->a; a; a = a->next)
		if (a->kind == HGC_AST_NAMED && hgc_dsl_tok_is(&a->tok, "first"))
			hgc_tck_want(c, a->a, HGC_TTY_BOOL, false, "'first'");
	if (brgemm_args(c, call, abc) < 0)
		return;
	mark = hgc_tck_enter(c);
	batch(c, call);
	operand(c, abc[0], "A", 2, 1);
	a = abc[1];
	packed = (a->sym = hgc_tck_lookup(c, a->tok.z, a->tok.n)) &&
		 a->sym->kind == HGC_TSYM_OPERAND && a->sym->packed;
	operand(c, abc[1], "B", packed ? 3 : 2, packed ? 2 : 1);
	hgc_tck_leave(c, mark);
	operand(c, abc[2], "C", 2, 1);
	if (abc[2]->sym && abc[2]->sym->kind == HGC_TSYM_OPERAND && abc[2]->sym->input)
		hgc_tck_error(c, &abc[2]->loc, "brgemm cannot write input '%s'",
			      abc[2]->sym->name);
}

/* A call statement: brgemm is the only one. */
static void eval(struct hgc_tck *c, struct hgc_ast *e)
{
	if (hgc_dsl_tok_is(&e->tok, "brgemm"))
		brgemm(c, e->a);
	else
		hgc_tck_error(c, &e->loc, "unknown statement '%.*s': the call statement is "
			      "brgemm(...)", e->tok.n, e->tok.z);
}

/* anchor NAME : T[...]; a slice of an input (pre-op) or the result (post-op). */
static void anchor(struct hgc_tck *c, struct hgc_ast *an)
{
	struct hgc_tanchor *a, *old;
	size_t i;
	int r;

	if (an->b)
		r = hgc_tck_error(c, &an->b->loc, "anchor targets ('->') are not supported: an "
				  "anchor exposes one slice of an operand") - 1;
	else if (an->a->kind != HGC_AST_INDEX)
		r = hgc_tck_error(c, &an->a->loc, "an anchor exposes a slice of an operand, like "
				  "C[i, :, :]") - 1;
	else if ((r = hgc_tck_slice(c, an->a)) >= 0 && an->a->sym->kind != HGC_TSYM_OPERAND)
		r = hgc_tck_error(c, &an->a->loc, "anchor '%.*s' exposes '%s', a temporary: "
				  "anchors expose slices of the operands", an->tok.n, an->tok.z,
				  an->a->sym->name) - 1;
	for (i = 0; i < c->s->anchors.len; i++) {
		old = HGC_TSEM_ANCHOR(c->s, i);
		if (hgc_dsl_tok_is(&an->tok, old->name)) {
			hgc_tck_error(c, &an->loc, "duplicate anchor '%s'", old->name);
			hgc_tck_note(c, &old->decl->loc, "anchor '%s' is first defined here",
				     old->name);
			return;
		}
	}
	a = hgc_arena_calloc(c->arena, 1, sizeof(*a));
	a->name = hgc_dsl_tok_str(c->arena, &an->tok);
	a->decl = an;
	if (r >= 0) {	/* one with errors is kept too: its cost is no "unknown anchor" */
		a->operand = an->a->sym;
		a->post = !an->a->sym->input;
		a->rank = r;
	}
	a->index = (int)c->s->anchors.len;
	*(struct hgc_tanchor **)hgc_vec_push(&c->s->anchors) = a;
}

/* A declaration outside the top level. */
static void not_top(struct hgc_tck *c, struct hgc_ast *s, const char *what)
{
	hgc_tck_error(c, &s->loc, "'%s' is only allowed at the top level of a template", what);
}

/* One statement. */
static void stmt(struct hgc_tck *c, struct hgc_ast *s, bool top)
{
	switch (s->kind) {
	case HGC_AST_PARAM:
		top ? hgc_tck_param(c, s) : not_top(c, s, "param");
		break;
	case HGC_AST_LAYOUT:
		top ? hgc_tck_layout(c, s) : not_top(c, s, "layout");
		break;
	case HGC_AST_COST:
		if (top)
			*(const struct hgc_ast **)hgc_vec_push(&c->costs) = s;
		else
			not_top(c, s, "cost");
		break;
	case HGC_AST_LET: let(c, s, top); break;
	case HGC_AST_TENSOR: tensor(c, s); break;
	case HGC_AST_PARALLEL: parallel(c, s); break;
	case HGC_AST_FOR: loop(c, s); break;
	case HGC_AST_IF: cond(c, s); break;
	case HGC_AST_ASSIGN: assign(c, s); break;
	case HGC_AST_EVAL: eval(c, s); break;
	case HGC_AST_ANCHOR: anchor(c, s); break;
	default:
		hgc_bug("unexpected template statement %d", (int)s->kind);
	}
}

/* A list of statements. */
void hgc_tck_stmts(struct hgc_tck *c, struct hgc_ast *list, bool top)
{
	for (; list; list = list->next)
		stmt(c, list, top);
}
