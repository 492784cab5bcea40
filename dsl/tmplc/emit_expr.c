/*
 * emit_expr.c: template expressions as C.  Static expressions (no loop
 * variable) become int64_t arithmetic over the environment `e`, through
 * the checked helpers of core/lower/tmpl.h; dynamic ones become calls of
 * the Tensor IR builders (constants folded as they are built); element
 * values of assignments become element loads and arithmetic.
 */
#include <stdarg.h>
#include <string.h>

#include "dsl/tmplc/tmplc.h"
#include "grammar.h"

/* Print a line at the current indentation. */
void em_line(struct em *em, const char *fmt, ...)
{
	va_list ap;
	int i;

	for (i = 0; i < em->indent; i++)
		fputc('\t', em->out);
	va_start(ap, fmt);
	vfprintf(em->out, fmt, ap);
	va_end(ap);
	fputc('\n', em->out);
}

/* A C string literal. */
void em_str(struct em *em, const char *s)
{
	fputc('"', em->out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', em->out);
		if (*s == '\n')
			fputs("\\n", em->out);
		else
			fputc(*s, em->out);
	}
	fputc('"', em->out);
}

/* A template location. */
void em_loc(struct em *em, const struct hgc_loc *loc)
{
	fprintf(em->out, "HGC_TMPL_LOC(file_, %d, %d)", loc->line, loc->col);
}

/* The C name of a symbol of the nest. */
void em_sym(struct em *em, const struct hgc_tsym *s)
{
	char c = s->kind == HGC_TSYM_TENSOR ? 't' : s->kind == HGC_TSYM_BLET && !s->dyn ? 'l' : 'x';

	fprintf(em->out, "%c%d_%s", c, s->uid, s->name);
}

/* The helper of a static binary operator, or NULL for a plain C operator. */
static const char *static_fn(int op)
{
	switch (op) {
	case HGC_TK_PLUS: return "hgc_tmpl_add";
	case HGC_TK_MINUS: return "hgc_tmpl_sub";
	case HGC_TK_STAR: return "hgc_tmpl_mul";
	case HGC_TK_SLASH: return "hgc_tmpl_div";
	case HGC_TK_PERCENT: return "hgc_tmpl_mod";
	default: return NULL;
	}
}

/* min(a, b, c) as nested calls of fn; ceildiv(a, b). */
static void calls(struct em *em, const struct hgc_ast *x,
		  void (*arg)(struct em *, const struct hgc_ast *), const char *fn, const char *extra)
{
	const struct hgc_ast *a;

	for (a = x->a; a->next; a = a->next)
		fprintf(em->out, "%s(%s", fn, extra);
	arg(em, x->a);
	for (a = x->a->next; a; a = a->next) {
		fputs(", ", em->out);
		arg(em, a);
		fputc(')', em->out);
	}
}

/* A static call: min, max, ceildiv. */
static void static_call(struct em *em, const struct hgc_ast *x)
{
	if (hgc_dsl_tok_is(&x->tok, "ceildiv"))
		calls(em, x, em_sx, "hgc_tmpl_cdiv", "e, ");
	else if (hgc_dsl_tok_is(&x->tok, "min"))
		calls(em, x, em_sx, "hgc_tmpl_min", "");
	else
		calls(em, x, em_sx, "hgc_tmpl_max", "");
}

/* A static name: an environment slot, or a static let of the nest. */
static void static_name(struct em *em, const struct hgc_tsym *s)
{
	if (s->slot >= 0)
		fprintf(em->out, "e->v[%d]", s->slot);
	else
		em_sym(em, s);
}

/* A static expression as int64_t C. */
void em_sx(struct em *em, const struct hgc_ast *x)
{
	const char *fn;

	switch (x->kind) {
	case HGC_AST_INT:
		fprintf(em->out, "INT64_C(%.*s)", x->tok.n, x->tok.z);
		return;
	case HGC_AST_BOOL:
		fputs(x->tok.z[0] == 't' ? "1" : "0", em->out);
		return;
	case HGC_AST_NAME:
		static_name(em, x->sym);
		return;
	case HGC_AST_UNARY:
		fputs(x->op == HGC_TK_NOT ? "(int64_t)!(" : "hgc_tmpl_neg(e, ", em->out);
		em_sx(em, x->a);
		fputc(')', em->out);
		return;
	case HGC_AST_CALL:
		static_call(em, x);
		return;
	case HGC_AST_BINARY:
		break;
	default:
		hgc_bug("tmplc: static expression of kind %d", (int)x->kind);
	}
	fn = static_fn(x->op);
	if (fn)
		fprintf(em->out, "%s(e, ", fn);
	else
		fputs("(int64_t)(", em->out);
	em_sx(em, x->a);
	if (fn)
		fputs(", ", em->out);
	else
		fprintf(em->out, " %s ", hgc_dsl_token_name(x->op));
	em_sx(em, x->b);
	fputc(')', em->out);
}

/* The TIR binary operator of a token. */
static const char *tir_op(int op)
{
	switch (op) {
	case HGC_TK_PLUS: return "HGC_TIR_ADD";
	case HGC_TK_MINUS: return "HGC_TIR_SUB";
	case HGC_TK_STAR: return "HGC_TIR_MUL";
	case HGC_TK_SLASH: return "HGC_TIR_DIV";
	case HGC_TK_PERCENT: return "HGC_TIR_MOD";
	case HGC_TK_EQ: return "HGC_TIR_EQ";
	case HGC_TK_NE: return "HGC_TIR_NE";
	case HGC_TK_LT: return "HGC_TIR_LT";
	case HGC_TK_LE: return "HGC_TIR_LE";
	case HGC_TK_GT: return "HGC_TIR_GT";
	case HGC_TK_GE: return "HGC_TIR_GE";
	case HGC_TK_ANDAND: return "HGC_TIR_AND";
	default: return "HGC_TIR_OR";
	}
}

/* min/max of dynamic values: nested binary nodes. */
static void dyn_minmax(struct em *em, const struct hgc_ast *x)
{
	const struct hgc_ast *a;
	const char *op = hgc_dsl_tok_is(&x->tok, "min") ? "HGC_TIR_MIN" : "HGC_TIR_MAX";

	for (a = x->a; a->next; a = a->next)
		fprintf(em->out, "hgc_tmpl_bin(b, %s, ", op);
	em_dx(em, x->a);
	for (a = x->a->next; a; a = a->next) {
		fputs(", ", em->out);
		em_dx(em, a);
		fputc(')', em->out);
	}
}

/* An expression as Tensor IR (static parts as constants). */
void em_dx(struct em *em, const struct hgc_ast *x)
{
	if (!x->dyn) {
		fputs(x->ty == HGC_TTY_BOOL ? "hgc_tmpl_kb(b, " : "hgc_tmpl_k(b, ", em->out);
		em_sx(em, x);
		fputc(')', em->out);
		return;
	}
	switch (x->kind) {
	case HGC_AST_NAME:
		fputs("hgc_tmpl_ref(b, ", em->out);
		em_sym(em, x->sym);
		fputc(')', em->out);
		return;
	case HGC_AST_UNARY:
		fputs(x->op == HGC_TK_NOT ? "hgc_tmpl_not_x(b, " : "hgc_tmpl_neg_x(b, ", em->out);
		em_dx(em, x->a);
		fputc(')', em->out);
		return;
	case HGC_AST_CALL:
		if (!hgc_dsl_tok_is(&x->tok, "ceildiv")) {
			dyn_minmax(em, x);
			return;
		}
		fputs("hgc_tmpl_cdiv_x(b, ", em->out);
		em_dx(em, x->a);
		fputs(", ", em->out);
		em_dx(em, x->a->next);
		fputc(')', em->out);
		return;
	case HGC_AST_BINARY:
		fprintf(em->out, "hgc_tmpl_bin(b, %s, ", tir_op(x->op));
		em_dx(em, x->a);
		fputs(", ", em->out);
		em_dx(em, x->b);
		fputc(')', em->out);
		return;
	default:
		hgc_bug("tmplc: dynamic expression of kind %d", (int)x->kind);
	}
}

/* The number of the slice built for an INDEX node of the current assignment. */
int em_slice_of(struct em *em, const struct hgc_ast *ix)
{
	int i;

	for (i = 0; i < em->nslices; i++)
		if (em->slice_node[i] == ix)
			return em->slice_id[i];
	hgc_bug("tmplc: element load without its slice");
}

/* An element value: loads through the slices built for its INDEX nodes. */
void em_ex(struct em *em, const struct hgc_ast *x, const char *w)
{
	const struct hgc_ast *a;

	if (x->ty != HGC_TTY_ELEM) {
		em_dx(em, x);
		return;
	}
	switch (x->kind) {
	case HGC_AST_FLOAT:
		fprintf(em->out, "hgc_tir_f32(b->m, %.*s)", x->tok.n, x->tok.z);
		return;
	case HGC_AST_INDEX:
		fprintf(em->out, "hgc_tmpl_eload(b, &%s, &sl%d)", w, em_slice_of(em, x));
		return;
	case HGC_AST_UNARY:
		fputs("hgc_tmpl_eneg(b, ", em->out);
		em_ex(em, x->a, w);
		fputc(')', em->out);
		return;
	case HGC_AST_CALL:
		for (a = x->a; a->next; a = a->next)
			fprintf(em->out, "hgc_tmpl_ebin(b, %s, ", hgc_dsl_tok_is(&x->tok, "min")
									   ? "HGC_TIR_MIN" : "HGC_TIR_MAX");
		em_ex(em, x->a, w);
		for (a = x->a->next; a; a = a->next) {
			fputs(", ", em->out);
			em_ex(em, a, w);
			fputc(')', em->out);
		}
		return;
	case HGC_AST_BINARY:
		fprintf(em->out, "hgc_tmpl_ebin(b, %s, ", tir_op(x->op));
		em_ex(em, x->a, w);
		fputs(", ", em->out);
		em_ex(em, x->b, w);
		fputc(')', em->out);
		return;
	default:
		hgc_bug("tmplc: element expression of kind %d", (int)x->kind);
	}
}
