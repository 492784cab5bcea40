/* type.c: value types and the operator and intrinsic tables. */
#include "tir.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int size;
} kinds[] = {
#define X(e, n, s) { n, s },
	HGC_TIR_KIND_LIST(X)
#undef X
};

static const struct {
	const char *name;
	int prec;
} binops[] = {
#define X(e, s, p) { s, p },
	HGC_TIR_BINOP_LIST(X)
#undef X
};

static const struct {
	const char *name;
	int nargs;
} intrins[] = {
#define X(e, n, a) { n, a },
	HGC_TIR_INTRIN_LIST(X)
#undef X
};

/* Two types are equal when kind, pointer depth and lanes all agree. */
bool hgc_tir_type_eq(struct hgc_tir_type a, struct hgc_tir_type b)
{
	return a.kind == b.kind && a.ptr == b.ptr && a.lanes == b.lanes;
}

/* Integer values (not bool, not pointers): what arithmetic and % accept. */
bool hgc_tir_type_is_int(struct hgc_tir_type t)
{
	return !t.ptr && (t.kind == HGC_TIR_S8 || t.kind == HGC_TIR_U8 ||
			  t.kind == HGC_TIR_S32 || t.kind == HGC_TIR_INDEX);
}

/* Floating-point values. */
bool hgc_tir_type_is_float(struct hgc_tir_type t)
{
	return !t.ptr && (t.kind == HGC_TIR_F32 || t.kind == HGC_TIR_BF16);
}

/* The printed name of a scalar kind ("?" for a corrupt value). */
const char *hgc_tir_kind_name(enum hgc_tir_kind k)
{
	return (unsigned)k < HGC_TIR_KIND_COUNT ? kinds[k].name : "?";
}

/* Bytes per element of a kind. */
int hgc_tir_kind_size(enum hgc_tir_kind k)
{
	return (unsigned)k < HGC_TIR_KIND_COUNT ? kinds[k].size : 0;
}

/* Spell a type as the printer does: f32, f32x16, ptr<f32>, ptr<ptr<u8>>. */
char *hgc_tir_type_str(struct hgc_tir_type t, char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < t.ptr && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "ptr<");
	if (len < size)
		len += (size_t)snprintf(buf + len, size - len, "%s", hgc_tir_kind_name(t.kind));
	if (t.lanes != 1 && len < size)
		len += (size_t)snprintf(buf + len, size - len, "x%d", t.lanes);
	for (i = 0; i < t.ptr && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, ">");
	return buf;
}

/* The spelling of a binary operator ("+", "min" ...). */
const char *hgc_tir_binop_name(enum hgc_tir_binop op)
{
	return (unsigned)op < HGC_TIR_BINOP_COUNT ? binops[op].name : "?";
}

/* C precedence of an infix operator; 0 for those printed as calls. */
int hgc_tir_binop_prec(enum hgc_tir_binop op)
{
	return (unsigned)op < HGC_TIR_BINOP_COUNT ? binops[op].prec : 0;
}

/* The name of an intrinsic, or NULL when id is not one. */
const char *hgc_tir_intrin_name(enum hgc_tir_intrin id)
{
	return (unsigned)id < HGC_TIR_INTRIN_COUNT ? intrins[id].name : NULL;
}

/* How many arguments an intrinsic takes (-1 when id is not one). */
int hgc_tir_intrin_nargs(enum hgc_tir_intrin id)
{
	return (unsigned)id < HGC_TIR_INTRIN_COUNT ? intrins[id].nargs : -1;
}

/* Find an intrinsic by name, for front ends; -1 when unknown. */
int hgc_tir_intrin_lookup(const char *name)
{
	int i;

	for (i = 0; i < HGC_TIR_INTRIN_COUNT; i++)
		if (!strcmp(intrins[i].name, name))
			return i;
	return -1;
}
