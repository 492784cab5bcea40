/*
 * c_expr.c: Tensor IR expressions as C expressions.  Operators keep C's
 * precedence (the TIR table follows it), so parentheses appear only where
 * needed; conversions C leaves undefined (float to int out of range, bf16)
 * go through helpers the emitted prelude defines.
 */
#include "c_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define PREC_UNARY 7
#define PREC_ATOM 8

/* Record an emission error ("c backend: ..."); returns -1. */
int hgc_c_err(struct cemit *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->nerr++;
	if (c->f)
		return hgc_error(c->d, NULL, "c backend: in '%s': %s", c->f->name, buf);
	return hgc_error(c->d, NULL, "c backend: %s", buf);
}

/* C value types by kind.  ORDER: HGC_TIR_KIND_LIST. */
static const char *const value_types[HGC_TIR_KIND_COUNT] = {
	[HGC_TIR_VOID] = "void", [HGC_TIR_BOOL] = "_Bool", [HGC_TIR_S8] = "int8_t",
	[HGC_TIR_U8] = "uint8_t", [HGC_TIR_S32] = "int32_t", [HGC_TIR_INDEX] = "int64_t",
	[HGC_TIR_BF16] = "uint16_t", [HGC_TIR_F32] = "float",
};

/* A type as C: value types for values, storage types behind pointers. */
static const char *ctype(struct cemit *c, struct hgc_tir_type t, bool storage, char *buf,
			 size_t size)
{
	size_t len;
	int i;

	if (t.kind >= HGC_TIR_KIND_COUNT || t.lanes != 1) {
		hgc_c_err(c, "type %s has no C form", hgc_tir_type_str(t, buf, size));
		return "?";
	}
	storage |= t.ptr > 0;
	snprintf(buf, size, "%s", storage && t.kind == HGC_TIR_BOOL ? "uint8_t" : value_types[t.kind]);
	for (i = 0; i < t.ptr; i++) {
		len = strlen(buf);
		snprintf(buf + len, size - len, "%s*", i ? "" : " ");
	}
	return buf;
}

/* Print "type name", without a space after a pointer's '*'. */
void hgc_c_decl(struct cemit *c, const char *type, const char *name)
{
	size_t n = strlen(type);

	fprintf(c->out, "%s%s%s", type, n && type[n - 1] == '*' ? "" : " ", name);
}

/* The C type of values of t. */
const char *hgc_c_type(struct cemit *c, struct hgc_tir_type t, char *buf, size_t size)
{
	return ctype(c, t, false, buf, size);
}

/* The C type elements of type t are stored as. */
const char *hgc_c_store_type(struct cemit *c, struct hgc_tir_type t, char *buf, size_t size)
{
	return ctype(c, t, true, buf, size);
}

/* An integer constant of kind k: parenthesized when negative, L when it needs 64 bits. */
static void int_const(struct cemit *c, enum hgc_tir_kind k, int64_t v)
{
	if (k == HGC_TIR_BOOL)
		fputs(v ? "1" : "0", c->out);
	else if (k == HGC_TIR_S8 || k == HGC_TIR_U8)
		fprintf(c->out, "(%s)%lld", value_types[k], (long long)v);
	else if (v == INT64_MIN)
		fputs("(-9223372036854775807L - 1)", c->out);
	else if (v < INT32_MIN + 1 || v > INT32_MAX)
		fprintf(c->out, v < 0 ? "(%lldL)" : "%lldL", (long long)v);
	else
		fprintf(c->out, v < 0 ? "(%lld)" : "%lld", (long long)v);
}

/* An f32 constant that reads back exactly. */
static void float_const(struct cemit *c, double v)
{
	char buf[64];

	if (isnan(v)) {
		fputs("__builtin_nanf(\"\")", c->out);
		return;
	}
	if (isinf(v)) {
		fputs(v < 0 ? "(-__builtin_inff())" : "__builtin_inff()", c->out);
		return;
	}
	snprintf(buf, sizeof(buf), "%.9g", v);
	fprintf(c->out, v < 0 ? "(%s%sf)" : "%s%sf", buf, strpbrk(buf, ".e") ? "" : ".0");
}

/* Print n expressions separated by commas. */
static void args(struct cemit *c, struct hgc_tir_expr *const *e, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (i)
			fputs(", ", c->out);
		hgc_c_expr(c, e[i], 0);
	}
}

/* The row-major flattening of idx[0..k] over t's dims, in a context of prec. */
static void flatten(struct cemit *c, const struct hgc_tir_tensor *t,
		    struct hgc_tir_expr *const *idx, int k, int prec)
{
	bool paren = k > 0 && prec > 5;

	if (k == 0) {
		hgc_c_expr(c, idx[0], prec);
		return;
	}
	if (paren)
		fputc('(', c->out);
	if (k == 1 && idx[0]->kind == HGC_TIR_E_INT && t->dims[1]->kind == HGC_TIR_E_INT)
		fputs("(int64_t)", c->out);
	flatten(c, t, idx, k - 1, 6);
	fputs(" * ", c->out);
	hgc_c_expr(c, t->dims[k], 7);
	fputs(" + ", c->out);
	hgc_c_expr(c, idx[k], 6);
	if (paren)
		fputc(')', c->out);
}

/* t[flattened idx]; a tensor without dims is its element 0. */
void hgc_c_element(struct cemit *c, const struct hgc_tir_tensor *t,
		   struct hgc_tir_expr *const *idx, int n)
{
	fprintf(c->out, "%s[", t->name);
	if (n)
		flatten(c, t, idx, n - 1, 0);
	else
		fputc('0', c->out);
	fputc(']', c->out);
}

/* Short kind names used in helper names (hgc_min_f32 ...). */
static const char *kname(struct hgc_tir_type t)
{
	return hgc_tir_kind_name(t.kind);
}

/* a op b, with min and max through typed helpers and literal pairs widened to
   64 bits so constant folding in C cannot overflow int. */
static void binary(struct cemit *c, const struct hgc_tir_expr *e)
{
	int p = hgc_tir_binop_prec(e->op);
	const struct hgc_tir_expr *a = e->ops[0], *b = e->ops[1];

	if (!p) {
		fprintf(c->out, "hgc_%s_%s(", hgc_tir_binop_name(e->op), kname(a->type));
		args(c, e->ops, 2);
		fputc(')', c->out);
		return;
	}
	if (a->kind == HGC_TIR_E_INT && b->kind == HGC_TIR_E_INT && a->type.kind == HGC_TIR_INDEX)
		fputs("(int64_t)", c->out);
	hgc_c_expr(c, a, p);
	fprintf(c->out, " %s ", hgc_tir_binop_name(e->op));
	hgc_c_expr(c, b, p + 1);
}

/* (to)x with the helpers for bf16 and saturating float-to-int conversions. */
static void cast(struct cemit *c, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type from = e->ops[0]->type, to = e->type;
	bool fsrc = !from.ptr && (from.kind == HGC_TIR_F32 || from.kind == HGC_TIR_BF16);
	char buf[64];

	if (hgc_tir_type_eq(from, to)) {
		hgc_c_expr(c, e->ops[0], PREC_UNARY);
		return;
	}
	if (!to.ptr && to.kind == HGC_TIR_BF16) {
		fputs(from.kind == HGC_TIR_F32 ? "hgc_f32_to_bf16(" : "hgc_f32_to_bf16((float)", c->out);
	} else if (fsrc && !to.ptr && to.kind == HGC_TIR_BOOL) {
		fputs("(0.0f != ", c->out);
		fputs(from.kind == HGC_TIR_BF16 ? "hgc_bf16_to_f32(" : "(", c->out);
		hgc_c_expr(c, e->ops[0], 0);
		fputs("))", c->out);
		return;
	} else if (fsrc && !to.ptr && to.kind != HGC_TIR_F32) {
		fprintf(c->out, "hgc_f32_to_%s(", kname(to));
		if (from.kind == HGC_TIR_BF16)
			fputs("hgc_bf16_to_f32(", c->out);
		hgc_c_expr(c, e->ops[0], 0);
		fputs(from.kind == HGC_TIR_BF16 ? "))" : ")", c->out);
		return;
	} else if (from.kind == HGC_TIR_BF16 && !from.ptr) {
		fputs("hgc_bf16_to_f32(", c->out);
	} else {
		fprintf(c->out, "(%s)", hgc_c_type(c, to, buf, sizeof(buf)));
		hgc_c_expr(c, e->ops[0], PREC_UNARY);
		return;
	}
	hgc_c_expr(c, e->ops[0], 0);
	fputc(')', c->out);
}

/* A math intrinsic as a GCC builtin (no libm header needed) or a thread query. */
static void math(struct cemit *c, const struct hgc_tir_expr *e)
{
	static const char *const fns[HGC_TIR_INTRIN_COUNT] = {
		[HGC_TIR_I_EXP] = "hgc_expf", [HGC_TIR_I_EXP_NONPOS] = "hgc_expf_nonpos",
		[HGC_TIR_I_LOG] = "__builtin_logf",
		[HGC_TIR_I_SQRT] = "__builtin_sqrtf", [HGC_TIR_I_TANH] = "__builtin_tanhf",
		[HGC_TIR_I_ERF] = "hgc_erff", [HGC_TIR_I_ABS] = "__builtin_fabsf",
		[HGC_TIR_I_FLOOR] = "__builtin_floorf", [HGC_TIR_I_ROUND] = "__builtin_nearbyintf",
		[HGC_TIR_I_POW] = "__builtin_powf",
		[HGC_TIR_I_THREAD_ID] = "(int64_t)omp_get_thread_num",
		[HGC_TIR_I_NUM_THREADS] = "(int64_t)omp_get_num_threads",
		[HGC_TIR_I_LANES_ADD] = "hgc_lanes_add", [HGC_TIR_I_LANES_MUL] = "hgc_lanes_mul",
		[HGC_TIR_I_LANES_MAX] = "hgc_lanes_max", [HGC_TIR_I_LANES_MIN] = "hgc_lanes_min",
	};

	if ((unsigned)e->op >= HGC_TIR_INTRIN_COUNT || !fns[e->op]) {
		if (hgc_tir_intrin_name(e->op))
			hgc_c_err(c, "%s is a statement, not a value", hgc_tir_intrin_name(e->op));
		else
			hgc_c_err(c, "unknown intrinsic #%d", e->op);
		fputs("0", c->out);
		return;
	}
	if (e->op == HGC_TIR_I_ABS && e->type.kind != HGC_TIR_F32)
		fprintf(c->out, "hgc_abs_%s(", kname(e->type));
	else
		fprintf(c->out, "%s(", fns[e->op]);
	args(c, e->ops, e->nops);
	fputc(')', c->out);
}

/* The precedence e prints at. */
static int prec_of(const struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_BINARY && hgc_tir_binop_prec(e->op))
		return hgc_tir_binop_prec(e->op);
	if (e->kind == HGC_TIR_E_UNARY || e->kind == HGC_TIR_E_ADDR ||
	    (e->kind == HGC_TIR_E_CAST && !hgc_tir_type_eq(e->type, e->ops[0]->type)))
		return PREC_UNARY;
	return PREC_ATOM;
}

/* Expressions that print as one C token or call, whatever their operands. */
static void atom(struct cemit *c, const struct hgc_tir_expr *e)
{
	switch (e->kind) {
	case HGC_TIR_E_INT:
		int_const(c, e->type.kind, e->u.i);
		break;
	case HGC_TIR_E_FLOAT:
		float_const(c, e->u.f);
		break;
	case HGC_TIR_E_VAR:
		fputs(e->u.var->name, c->out);
		break;
	case HGC_TIR_E_SELECT:
		fputc('(', c->out);
		hgc_c_expr(c, e->ops[0], 2);
		fputs(" ? ", c->out);
		hgc_c_expr(c, e->ops[1], 2);
		fputs(" : ", c->out);
		hgc_c_expr(c, e->ops[2], 2);
		fputc(')', c->out);
		break;
	case HGC_TIR_E_LOAD:
		if (e->type.kind == HGC_TIR_BOOL && !e->type.ptr)
			fputs("(0 != ", c->out);
		hgc_c_element(c, e->u.tensor, e->ops, e->nops);
		if (e->type.kind == HGC_TIR_BOOL && !e->type.ptr)
			fputc(')', c->out);
		break;
	case HGC_TIR_E_INTRIN:
		math(c, e);
		break;
	case HGC_TIR_E_CALL:
		fprintf(c->out, "%s(", e->callee ? e->callee->name : e->u.sym);
		args(c, e->ops, e->nops);
		fputc(')', c->out);
		break;
	default:
		hgc_c_err(c, "unknown expression kind %d", (int)e->kind);
		break;
	}
}

/* Print e in a context of precedence prec. */
void hgc_c_expr(struct cemit *c, const struct hgc_tir_expr *e, int prec)
{
	if (prec_of(e) < prec) {
		fputc('(', c->out);
		hgc_c_expr(c, e, 0);
		fputc(')', c->out);
		return;
	}
	switch (e->kind) {
	case HGC_TIR_E_BINARY:
		binary(c, e);
		break;
	case HGC_TIR_E_UNARY:
		fputs(e->op == HGC_TIR_NEG ? "-" : "!", c->out);
		hgc_c_expr(c, e->ops[0], PREC_ATOM);
		break;
	case HGC_TIR_E_CAST:
		cast(c, e);
		break;
	case HGC_TIR_E_ADDR:
		fputc('&', c->out);
		hgc_c_element(c, e->u.tensor, e->ops, e->nops);
		break;
	default:
		atom(c, e);
		break;
	}
}

/* Constants, immutable variables and arithmetic on them: safe to re-evaluate. */
bool hgc_c_pure(const struct hgc_tir_expr *e)
{
	int i;

	switch (e->kind) {
	case HGC_TIR_E_INT:
	case HGC_TIR_E_FLOAT:
		return true;
	case HGC_TIR_E_VAR:
		return e->u.var->nassign == 0;
	case HGC_TIR_E_BINARY:
	case HGC_TIR_E_UNARY:
	case HGC_TIR_E_SELECT:
	case HGC_TIR_E_CAST:
		for (i = 0; i < e->nops; i++)
			if (!hgc_c_pure(e->ops[i]))
				return false;
		return true;
	default:
		return false;
	}
}
