/*
 * emit_build.c: the build function of a template: its loop nest as calls of
 * the hgc_tmpl_* builders (core/lower/tmpl.h).  Template blocks become C
 * blocks, so the C names of loop variables, lets and temporaries follow
 * the template's scopes; static lets and ifs are decided while building
 * (an if whose condition is static emits only the branch taken).
 */
#include <string.h>

#include "dsl/tmplc/tmplc.h"
#include "grammar.h"

static void stmts(struct em *em, const struct hgc_ast *s, const char *blk);

/* Start a line at the current indentation. */
static void tabs(struct em *em)
{
	int i;

	for (i = 0; i < em->indent; i++)
		fputc('\t', em->out);
}

/* Open a C block. */
static void open_(struct em *em)
{
	em_line(em, "{");
	em->indent++;
}

/* Close a C block. */
static void close_(struct em *em)
{
	em->indent--;
	em_line(em, "}");
}

/* Build the slice of an INDEX node into sl<n>; returns n. */
static int slice(struct em *em, const struct hgc_ast *ix)
{
	const struct hgc_tsym *t = ix->sym;
	const struct hgc_ast *s;
	int n = ++em->n, i = 0;

	em_line(em, "struct hgc_tmpl_slice sl%d;", n);
	tabs(em);
	fprintf(em->out, "hgc_tmpl_slice(b, &sl%d, ", n);
	if (t->kind == HGC_TSYM_OPERAND)
		fprintf(em->out, "b->buf[%d], %d", t->index, t->index);
	else
		em_sym(em, t), fputs(", -1", em->out);
	fprintf(em->out, ", %d, ", t->rank);
	em_loc(em, &ix->loc);
	fputs(");\n", em->out);
	for (s = ix->a; s; s = s->next, i++) {
		tabs(em);
		if (!s->op) {
			fprintf(em->out, "hgc_tmpl_at(b, &sl%d, %d, ", n, i);
			em_dx(em, s->a);
		} else if (!s->a) {
			fprintf(em->out, "hgc_tmpl_all(b, &sl%d, %d", n, i);
		} else {
			fprintf(em->out, "hgc_tmpl_range(b, &sl%d, %d, ", n, i);
			em_dx(em, s->a);
			fputs(", ", em->out);
			em_sx(em, s->b);
			fputs(", ", em->out);
			if (s->c)
				em_sx(em, s->c);
			else
				fputs("1", em->out);
		}
		fputs(");\n", em->out);
	}
	return n;
}

/* Declare the variables of iterators (loops and brgemm batches). */
static void iter_vars(struct em *em, const struct hgc_ast *it, enum hgc_ast_kind only)
{
	for (; it; it = it->next) {
		if (it->kind != only)
			continue;
		tabs(em);
		fputs("struct hgc_tir_var *", em->out);
		em_sym(em, it->sym);
		fprintf(em->out, " = hgc_tmpl_var(b, \"%s\");\n", it->sym->name);
	}
}

/* An array literal of the variables, starts, ends or steps of iterators. */
static void iter_array(struct em *em, const struct hgc_ast *it, int what)
{
	bool first = true;

	fputs(what ? "(struct hgc_tir_expr *[]){" : "(struct hgc_tir_var *[]){", em->out);
	for (; it; it = it->next) {
		if (it->kind != HGC_AST_ITER)
			continue;
		fputs(first ? "" : ", ", em->out);
		first = false;
		if (what == 0)
			em_sym(em, it->sym);
		else if (what == 3 && !it->c)
			fputs("NULL", em->out);
		else
			em_dx(em, what == 1 ? it->a : what == 2 ? it->b : it->c);
	}
	fputs(first ? "NULL}" : "}", em->out);
}

/* Whether any iterator has a step. */
static bool has_step(const struct hgc_ast *it)
{
	for (; it; it = it->next)
		if (it->kind == HGC_AST_ITER && it->c)
			return true;
	return false;
}

/* parallel v in lo..hi, ... { body } */
static void parallel(struct em *em, const struct hgc_ast *p, const char *blk)
{
	const struct hgc_ast *it;
	char body[32];
	int n, k = 0;

	open_(em);
	iter_vars(em, p->a, HGC_AST_ITER);
	for (it = p->a; it; it = it->next)
		k++;
	n = ++em->n;
	tabs(em);
	fprintf(em->out, "struct hgc_tir_stmt *s%d = hgc_tmpl_pfor(b, %s, %d, ", n, blk, k);
	iter_array(em, p->a, 0);
	fputs(", ", em->out);
	iter_array(em, p->a, 1);
	fputs(", ", em->out);
	iter_array(em, p->a, 2);
	fputs(", ", em->out);
	if (has_step(p->a))
		iter_array(em, p->a, 3);
	else
		fputs("NULL", em->out);
	fputs(", ", em->out);
	em_loc(em, &p->loc);
	fputs(");\n", em->out);
	snprintf(body, sizeof(body), "s%d", n);
	stmts(em, p->b, body);
	em_line(em, "hgc_tmpl_pfor_end(b);");
	close_(em);
}

/* for v in lo..hi [step s] { body } */
static void loop(struct em *em, const struct hgc_ast *f, const char *blk)
{
	const struct hgc_ast *it = f->a;
	char body[32];
	int n;

	open_(em);
	iter_vars(em, it, HGC_AST_ITER);
	n = ++em->n;
	tabs(em);
	fprintf(em->out, "struct hgc_tir_stmt *s%d = hgc_tmpl_for(b, %s, ", n, blk);
	em_sym(em, it->sym);
	fputs(", ", em->out);
	em_dx(em, it->a);
	fputs(", ", em->out);
	em_dx(em, it->b);
	fputs(", ", em->out);
	if (it->c)
		em_dx(em, it->c);
	else
		fputs("NULL", em->out);
	fputs(", ", em->out);
	em_loc(em, &f->loc);
	fputs(");\n", em->out);
	snprintf(body, sizeof(body), "s%d", n);
	stmts(em, f->b, body);
	close_(em);
}

/* if: decided now when static, else a Tensor IR if. */
static void cond(struct em *em, const struct hgc_ast *s, const char *blk)
{
	char then[32], els[32];
	int n;

	if (!s->a->dyn) {
		tabs(em);
		fputs("if (", em->out);
		em_sx(em, s->a);
		fputs(") {\n", em->out);
		em->indent++;
		stmts(em, s->b, blk);
		em->indent--;
		em_line(em, "} else {");
		em->indent++;
		stmts(em, s->c, blk);
		close_(em);
		return;
	}
	open_(em);
	n = ++em->n;
	snprintf(then, sizeof(then), "s%d", n);
	snprintf(els, sizeof(els), "s%de", n);
	if (s->c)
		em_line(em, "struct hgc_tir_stmt *%s = NULL;", els);
	tabs(em);
	fprintf(em->out, "struct hgc_tir_stmt *%s = hgc_tmpl_if(b, %s, ", then, blk);
	em_dx(em, s->a);
	fprintf(em->out, ", %s%s, ", s->c ? "&" : "", s->c ? els : "NULL");
	em_loc(em, &s->loc);
	fputs(");\n", em->out);
	stmts(em, s->b, then);
	if (s->c)
		stmts(em, s->c, els);
	close_(em);
}

/* let x = e, ... in the nest: C values when static, Tensor IR lets otherwise. */
static void let(struct em *em, const struct hgc_ast *l, const char *blk)
{
	const struct hgc_ast *n;

	for (n = l->a; n; n = n->next) {
		if (!n->sym || n->sym->kind != HGC_TSYM_BLET)
			continue;
		tabs(em);
		if (!n->sym->dyn) {
			fputs("int64_t ", em->out);
			em_sym(em, n->sym);
			fputs(" = ", em->out);
			em_sx(em, n->a);
			fputs(";\n", em->out);
			continue;
		}
		fputs("struct hgc_tir_var *", em->out);
		em_sym(em, n->sym);
		fprintf(em->out, " = hgc_tmpl_let(b, %s, \"%s\", ", blk, n->sym->name);
		em_dx(em, n->a);
		fputs(", ", em->out);
		em_loc(em, &n->loc);
		fputs(");\n", em->out);
	}
}

/* tensor T : type[dims]; */
static void tensor(struct em *em, const struct hgc_ast *t, const char *blk)
{
	const struct hgc_ast *d;

	tabs(em);
	fputs("struct hgc_tir_tensor *", em->out);
	em_sym(em, t->sym);
	fprintf(em->out, " = hgc_tmpl_tensor(b, %s, \"%s\", \"%.*s\", %d, (int64_t[]){", blk,
		t->sym->name, t->a->tok.n, t->a->tok.z, t->sym->rank);
	for (d = t->a->a; d; d = d->next) {
		em_sx(em, d);
		fputs(d->next ? ", " : "", em->out);
	}
	fputs("}, ", em->out);
	em_loc(em, &t->loc);
	fputs(");\n", em->out);
}

/* Build the slices of the element loads of an assignment's value. */
static void value_slices(struct em *em, const struct hgc_ast *x)
{
	const struct hgc_ast *a;

	if (x->kind == HGC_AST_INDEX) {
		if (em->nslices == 64)
			hgc_bug("tmplc: more than 64 loads in one assignment");
		em->slice_node[em->nslices] = x;
		em->slice_id[em->nslices++] = slice(em, x);
		return;
	}
	if (x->kind != HGC_AST_BINARY && x->kind != HGC_AST_UNARY && x->kind != HGC_AST_CALL)
		return;
	for (a = x->a; a; a = a->next)
		value_slices(em, a);
	if (x->kind == HGC_AST_BINARY)
		value_slices(em, x->b);
}

/* T[...] = value, elementwise over the ranges of the left side. */
static void assign(struct em *em, const struct hgc_ast *s, const char *blk)
{
	char w[32];
	int lhs, n;

	open_(em);
	em->nslices = 0;
	lhs = slice(em, s->a);
	value_slices(em, s->b);
	n = ++em->n;
	snprintf(w, sizeof(w), "w%d", n);
	em_line(em, "struct hgc_tmpl_ew %s;", w);
	em_line(em, "if (hgc_tmpl_ew_begin(b, &%s, %s, &sl%d) == 0)", w, blk, lhs);
	tabs(em);
	fprintf(em->out, "\thgc_tmpl_ew_end(b, &%s, &sl%d, ", w, lhs);
	em_ex(em, s->b, w);
	fputs(");\n", em->out);
	close_(em);
}

/* The positional slices and the `first` argument of brgemm. */
static void brgemm_args(const struct hgc_ast *call, const struct hgc_ast **abc,
			const struct hgc_ast **first)
{
	const struct hgc_ast *a;
	int n = 0;

	*first = NULL;
	for (a = call->a; a; a = a->next)
		if (a->kind == HGC_AST_INDEX && n < 3)
			abc[n++] = a;
		else if (a->kind == HGC_AST_NAMED)
			*first = a->a;
}

/* brgemm(A[..], B[..], C[..], batch..., first = c) */
static void brgemm(struct em *em, const struct hgc_ast *call, const char *blk)
{
	const struct hgc_ast *abc[3], *first, *a;
	int n = ++em->n, k = 0, sa, sb, sc;

	brgemm_args(call, abc, &first);
	for (a = call->a; a; a = a->next)
		k += a->kind == HGC_AST_ITER;
	open_(em);
	em_line(em, "struct hgc_tmpl_brgemm g%d;", n);
	iter_vars(em, call->a, HGC_AST_ITER);
	tabs(em);
	fprintf(em->out, "if (hgc_tmpl_brgemm_begin(b, &g%d, %s, %d, ", n, blk, k);
	iter_array(em, call->a, 0);
	fputs(", ", em->out);
	iter_array(em, call->a, 1);
	fputs(", ", em->out);
	iter_array(em, call->a, 2);
	fputs(", ", em->out);
	em_loc(em, &call->loc);
	fputs(") == 0) {\n", em->out);
	em->indent++;
	sa = slice(em, abc[0]);
	sb = slice(em, abc[1]);
	sc = slice(em, abc[2]);
	tabs(em);
	fprintf(em->out, "hgc_tmpl_brgemm_end(b, &g%d, &sl%d, &sl%d, &sl%d, ", n, sa, sb, sc);
	if (first)
		em_dx(em, first);
	else
		fputs("hgc_tmpl_kb(b, false)", em->out);
	fputs(");\n", em->out);
	close_(em);
	close_(em);
}

/* anchor NAME : T[...]; the insertion point and the slice it exposes. */
static void anchor(struct em *em, const struct hgc_ast *an, const char *blk)
{
	const struct hgc_tanchor *a = NULL;
	size_t i;
	int n;

	for (i = 0; i < em->s->anchors.len; i++)
		if (HGC_TSEM_ANCHOR(em->s, i)->decl == an)
			a = HGC_TSEM_ANCHOR(em->s, i);
	if (!a)
		hgc_bug("tmplc: anchor '%.*s' was not recorded", an->tok.n, an->tok.z);
	open_(em);
	n = slice(em, an->a);
	em_line(em, "hgc_tmpl_anchor(b, %s, %d, &sl%d);", blk, a->index, n);
	close_(em);
}

/* One statement of the nest into the block called blk. */
static void stmt(struct em *em, const struct hgc_ast *s, const char *blk)
{
	switch (s->kind) {
	case HGC_AST_PARAM:
	case HGC_AST_LAYOUT:
	case HGC_AST_COST:
		return;
	case HGC_AST_LET:
		let(em, s, blk);
		return;
	case HGC_AST_TENSOR:
		tensor(em, s, blk);
		return;
	case HGC_AST_PARALLEL:
		parallel(em, s, blk);
		return;
	case HGC_AST_FOR:
		loop(em, s, blk);
		return;
	case HGC_AST_IF:
		cond(em, s, blk);
		return;
	case HGC_AST_ASSIGN:
		assign(em, s, blk);
		return;
	case HGC_AST_EVAL:
		brgemm(em, s->a, blk);
		return;
	case HGC_AST_ANCHOR:
		anchor(em, s, blk);
		return;
	default:
		hgc_bug("tmplc: statement of kind %d", (int)s->kind);
	}
}

/* A list of statements into blk. */
static void stmts(struct em *em, const struct hgc_ast *s, const char *blk)
{
	for (; s; s = s->next)
		stmt(em, s, blk);
}

/* The build function. */
void em_build(struct em *em)
{
	em_line(em, "/* Emit the loop nest of %s into b->block. */", em->s->name);
	em_line(em, "static int %sbuild(struct hgc_tmpl_build *b)", em->pfx);
	em_line(em, "{");
	em->indent++;
	em_line(em, "struct hgc_tmpl_env *e = &b->env;");
	em_line(em, "struct hgc_tir_stmt *s0 = b->block;");
	fputc('\n', em->out);
	stmts(em, em->s->blk->d, "s0");
	em_line(em, "(void)e, (void)s0;");
	em_line(em, "if (e->bad)");
	tabs(em);
	fputs("\treturn hgc_tmpl_fail(b, ", em->out);
	em_loc(em, &em->s->loc);
	fputs(", \"an expression of the template divides by zero or overflows\");\n", em->out);
	em_line(em, "return b->nerr ? -1 : 0;");
	em->indent--;
	em_line(em, "}");
}
