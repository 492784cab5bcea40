/*
 * print.c: the Tensor IR as readable, stable C-like text, for golden tests
 * and for `--dump=tir`.  The printer never fails: malformed IR (as the
 * verifier's tests build) prints with "<null>" or "?" where parts are missing.
 */
#include "tir.h"
#include "tir_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREC_UNARY 7
#define PREC_ATOM 8

static void expr(FILE *out, const struct hgc_tir_expr *e, int prec);

/* The precedence an expression prints at: infix operators bind looser than atoms. */
static int prec_of(const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_BINARY && hgc_tir_binop_prec(e->op))
		return hgc_tir_binop_prec(e->op);
	if (e->kind == HGC_TIR_E_UNARY || e->kind == HGC_TIR_E_CAST)
		return PREC_UNARY;
	if ((e->kind == HGC_TIR_E_INT && e->u.i < 0) || (e->kind == HGC_TIR_E_FLOAT && signbit(e->u.f)))
		return PREC_UNARY;
	return PREC_ATOM;
}

/* Print a type. */
static void type(FILE *out, struct hgc_tir_type t)
{
	char buf[64];

	fputs(hgc_tir_type_str(t, buf, sizeof(buf)), out);
}

/* Print a float so that it reads back as the same f32, always with a '.' or exponent. */
static void print_float(FILE *out, double v)
{
	char buf[64];
	int p;

	if (isnan(v)) {
		fputs("nan", out);
		return;
	}
	if (isinf(v)) {
		fputs(v < 0 ? "-inf" : "inf", out);
		return;
	}
	for (p = 6; p < 9; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, v);
		if ((float)strtod(buf, NULL) == (float)v)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*g", p, v);
	fputs(buf, out);
	if (!strpbrk(buf, ".e"))
		fputs(".0", out);
	fputc('f', out);
}

/* Print a constant: plain for index, true/false for bool, s32(7) otherwise. */
static void constant(FILE *out, const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_FLOAT) {
		print_float(out, e->u.f);
		return;
	}
	if (e->type.kind == HGC_TIR_INDEX && !e->type.ptr)
		fprintf(out, "%lld", (long long)e->u.i);
	else if (e->type.kind == HGC_TIR_BOOL && !e->type.ptr)
		fputs(e->u.i ? "true" : "false", out);
	else {
		type(out, e->type);
		fprintf(out, "(%lld)", (long long)e->u.i);
	}
}

/* Print n comma-separated expressions. */
static void list(FILE *out, struct hgc_tir_expr *const *e, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		expr(out, e[i], 0);
	}
}

/* Print name[idx...], with " : extent" after indices of a slice wider than one. */
static void indexed(FILE *out, const struct hgc_tir_tensor *t, struct hgc_tir_expr *const *idx,
		    int n, const int64_t *ext)
{
	int i;

	fprintf(out, "%s[", t ? t->name : "<null>");
	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		expr(out, idx[i], 0);
		if (ext && ext[i] != 1)
			fprintf(out, " : %lld", (long long)ext[i]);
	}
	fputc(']', out);
}

/* Print a binary expression: infix with the fewest parentheses, or min(a, b). */
static void binary(FILE *out, const struct hgc_tir_expr *e)
{
	int p = hgc_tir_binop_prec(e->op);

	if (!p) {
		fprintf(out, "%s(", hgc_tir_binop_name(e->op));
		list(out, e->ops, 2);
		fputc(')', out);
		return;
	}
	expr(out, e->ops[0], p);
	fprintf(out, " %s ", hgc_tir_binop_name(e->op));
	expr(out, e->ops[1], p + 1);
}

/* Print a call-shaped expression: intrinsic, function or external symbol. */
static void call(FILE *out, const struct hgc_tir_expr *e)
{
	const char *name;

	if (e->kind == HGC_TIR_E_INTRIN) {
		name = hgc_tir_intrin_name(e->op);
		if (name)
			fputs(name, out);
		else
			fprintf(out, "intrinsic#%d", e->op);
	} else {
		fputs(e->callee ? e->callee->name : e->u.sym ? e->u.sym : "<null>", out);
	}
	fputc('(', out);
	list(out, e->ops, e->nops);
	fputc(')', out);
}

/* Print e, in parentheses if it binds looser than the context prec. */
static void expr(FILE *out, const struct hgc_tir_expr *e, int prec)
{
	if (!e) {
		fputs("<null>", out);
		return;
	}
	if (prec_of(e) < prec) {
		fputc('(', out);
		expr(out, e, 0);
		fputc(')', out);
		return;
	}
	switch (e->kind) {
	case HGC_TIR_E_INT:
	case HGC_TIR_E_FLOAT:
		constant(out, e);
		break;
	case HGC_TIR_E_VAR:
		fputs(e->u.var ? e->u.var->name : "<null>", out);
		break;
	case HGC_TIR_E_BINARY:
		binary(out, e);
		break;
	case HGC_TIR_E_UNARY:
		fputs(e->op == HGC_TIR_NEG ? "-" : "!", out);
		expr(out, e->ops[0], PREC_ATOM);
		break;
	case HGC_TIR_E_SELECT:
		fputs("select(", out);
		list(out, e->ops, 3);
		fputc(')', out);
		break;
	case HGC_TIR_E_CAST:
		fputc('(', out);
		type(out, e->type);
		fputc(')', out);
		expr(out, e->ops[0], PREC_UNARY);
		break;
	case HGC_TIR_E_LOAD:
		indexed(out, e->u.tensor, e->ops, e->nops, NULL);
		break;
	case HGC_TIR_E_ADDR:
		fputc('&', out);
		indexed(out, e->u.tensor, e->ops, e->nops, e->extents);
		break;
	case HGC_TIR_E_INTRIN:
	case HGC_TIR_E_CALL:
		call(out, e);
		break;
	}
}

/* Print an expression at the top level. */
void hgc_tir_print_expr(FILE *out, const struct hgc_tir_expr *e)
{
	expr(out, e, 0);
}

/* Print "name: f32[13, 97]" for a tensor. */
static void tensor_decl(FILE *out, const struct hgc_tir_tensor *t)
{
	fprintf(out, "%s: ", t->name);
	type(out, t->elem);
	fputc('[', out);
	list(out, t->dims, t->ndims);
	fputc(']', out);
}

/* Print "  " per level. */
static void indent_to(FILE *out, int indent)
{
	fprintf(out, "%*s", 2 * indent, "");
}

static void stmt(FILE *out, const struct hgc_tir_stmt *s, int indent);

/* Print the statements of a block between braces; the caller printed the head. */
static void braces(FILE *out, const struct hgc_tir_stmt *b, int indent)
{
	int i;

	fputs("{\n", out);
	if (b && b->kind == HGC_TIR_S_BLOCK)
		for (i = 0; i < b->u.block.n; i++)
			stmt(out, b->u.block.stmts[i], indent + 1);
	else if (b)
		stmt(out, b, indent + 1);
	indent_to(out, indent);
	fputc('}', out);
}

/* Print "v in [begin, end) step s" (the step only when it is not 1). */
static void range(FILE *out, const struct hgc_tir_var *v, const struct hgc_tir_expr *b,
		  const struct hgc_tir_expr *e, const struct hgc_tir_expr *step)
{
	int64_t one;

	fprintf(out, "%s in [", v ? v->name : "<null>");
	expr(out, b, 0);
	fputs(", ", out);
	expr(out, e, 0);
	fputc(')', out);
	if (!hgc_tir_const_int(step, &one) || one != 1) {
		fputs(" step ", out);
		expr(out, step, 0);
	}
}

/* Print the head of a parallel for and its body. */
static void pfor(FILE *out, const struct hgc_tir_stmt *s, int indent)
{
	int i;

	fputs("parallel for (", out);
	for (i = 0; i < s->u.pfor.n; i++) {
		if (i)
			fputs(", ", out);
		range(out, s->u.pfor.vars[i], s->u.pfor.begin[i], s->u.pfor.end[i],
		      s->u.pfor.step[i]);
	}
	fputs(") ", out);
	if (s->u.pfor.merge_group)
		fprintf(out, "merge %d ", s->u.pfor.merge_group);
	braces(out, s->u.pfor.body, indent);
}

/* Print the statements that carry bodies; true if s was one of them. */
static bool compound(FILE *out, const struct hgc_tir_stmt *s, int indent)
{
	switch (s->kind) {
	case HGC_TIR_S_BLOCK:
		braces(out, s, indent);
		return true;
	case HGC_TIR_S_FOR:
		fputs("for (", out);
		range(out, s->u.loop.var, s->u.loop.begin, s->u.loop.end, s->u.loop.step);
		fputs(") ", out);
		braces(out, s->u.loop.body, indent);
		return true;
	case HGC_TIR_S_PFOR:
		pfor(out, s, indent);
		return true;
	case HGC_TIR_S_IF:
		fputs("if (", out);
		expr(out, s->u.cond.cond, 0);
		fputs(") ", out);
		braces(out, s->u.cond.then, indent);
		if (s->u.cond.els) {
			fputs(" else ", out);
			braces(out, s->u.cond.els, indent);
		}
		return true;
	default:
		return false;
	}
}

/* Print one statement at the given depth, ending with a newline. */
static void stmt(FILE *out, const struct hgc_tir_stmt *s, int indent)
{
	indent_to(out, indent);
	if (!s) {
		fputs("<null>;\n", out);
		return;
	}
	if (compound(out, s, indent)) {
		fputc('\n', out);
		return;
	}
	switch (s->kind) {
	case HGC_TIR_S_LET:
		fprintf(out, "let %s: ", s->u.let.var->name);
		type(out, s->u.let.var->type);
		fputs(" = ", out);
		expr(out, s->u.let.value, 0);
		break;
	case HGC_TIR_S_ASSIGN:
		fprintf(out, "%s = ", s->u.let.var->name);
		expr(out, s->u.let.value, 0);
		break;
	case HGC_TIR_S_STORE:
		indexed(out, s->u.store.tensor, s->u.store.idx, s->u.store.n, NULL);
		fputs(" = ", out);
		expr(out, s->u.store.value, 0);
		break;
	case HGC_TIR_S_TENSOR:
		fputs("tensor ", out);
		tensor_decl(out, s->u.tensor);
		break;
	case HGC_TIR_S_EVAL:
		expr(out, s->u.expr, 0);
		break;
	case HGC_TIR_S_RETURN:
		fputs("return", out);
		if (s->u.expr) {
			fputc(' ', out);
			expr(out, s->u.expr, 0);
		}
		break;
	default:
		break;
	}
	fputs(";\n", out);
}

/* Print a statement (and its children) at the given depth. */
void hgc_tir_print_stmt(FILE *out, const struct hgc_tir_stmt *s, int indent)
{
	stmt(out, s, indent);
}

/* Print "name(params) -> ret { body }". */
static void func(FILE *out, const struct hgc_tir_func *f, int indent)
{
	int i;

	indent_to(out, indent);
	if (f == f->mod->entry)
		fputs("entry ", out);
	else if (f == f->mod->init)
		fputs("init ", out);
	fprintf(out, "func %s(", f->name);
	for (i = 0; i < f->nparams; i++) {
		if (i)
			fputs(", ", out);
		if (f->params[i].tensor) {
			tensor_decl(out, f->params[i].tensor);
		} else {
			fprintf(out, "%s: ", f->params[i].var->name);
			type(out, f->params[i].var->type);
		}
	}
	fputc(')', out);
	if (f->ret.kind != HGC_TIR_VOID || f->ret.ptr) {
		fputs(" -> ", out);
		type(out, f->ret);
	}
	fputc(' ', out);
	braces(out, f->body, indent);
	fputc('\n', out);
}

/* Print a function on its own. */
void hgc_tir_print_func(FILE *out, const struct hgc_tir_func *f)
{
	func(out, f, 0);
}

/* Print the initial contents of a constant buffer: up to 8 values, then "...". */
static void const_data(FILE *out, const struct hgc_tir_tensor *t)
{
	int64_t n = hgc_tir_tensor_size(t), i;
	const unsigned char *p = t->data;

	fputs(" = {", out);
	for (i = 0; i < n && i < 8; i++) {
		if (i)
			fputs(", ", out);
		switch (t->elem.ptr ? HGC_TIR_VOID : t->elem.kind) {
		case HGC_TIR_F32: { float v; memcpy(&v, p + 4 * i, 4); print_float(out, v); break; }
		case HGC_TIR_S32: { int32_t v; memcpy(&v, p + 4 * i, 4); fprintf(out, "%d", v); break; }
		case HGC_TIR_INDEX: { int64_t v; memcpy(&v, p + 8 * i, 8); fprintf(out, "%lld", (long long)v); break; }
		case HGC_TIR_BF16: { uint16_t v; memcpy(&v, p + 2 * i, 2); fprintf(out, "0x%04x", v); break; }
		case HGC_TIR_S8: fprintf(out, "%d", (int)(int8_t)p[i]); break;
		case HGC_TIR_U8: case HGC_TIR_BOOL: fprintf(out, "%d", p[i]); break;
		default: fputc('?', out); break;
		}
	}
	fputs(i < n ? ", ...}" : "}", out);
}

/* Print the module: constant buffers, then functions in creation order. */
void hgc_tir_print_module(FILE *out, const struct hgc_tir_module *m)
{
	const struct hgc_tir_tensor *t;
	size_t i;

	fprintf(out, "module %s {\n", m->name);
	for (i = 0; i < m->consts.len; i++) {
		t = HGC_TIR_CONST_AT(m, i);
		fputs("  const ", out);
		tensor_decl(out, t);
		if (t->data)
			const_data(out, t);
		fputs(";\n", out);
	}
	for (i = 0; i < m->funcs.len; i++) {
		if (i || m->consts.len)
			fputc('\n', out);
		func(out, HGC_TIR_FUNC(m, i), 1);
	}
	fputs("}\n", out);
}

/* The printed module as a malloc'ed string (the caller frees it). */
char *hgc_tir_module_str(const struct hgc_tir_module *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		hgc_bug("open_memstream failed");
	hgc_tir_print_module(f, m);
	fclose(f);
	return buf;
}
