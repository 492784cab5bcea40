/* print.c: the Graph IR as stable, readable text (hgc compile --dump=graph). */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* A double in the shortest of %.15g/%.17g that reads back exactly. */
static void print_double(FILE *f, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, f);
	if (!strpbrk(buf, ".eninf"))
		fputs(".0", f);
}

/* One attribute value. */
static void print_value(FILE *f, const struct hgc_attr *a)
{
	int i;

	switch (a->type) {
	case HGC_ATTR_BOOL: fputs(a->v.i ? "true" : "false", f); break;
	case HGC_ATTR_INT: fprintf(f, "%lld", (long long)a->v.i); break;
	case HGC_ATTR_FLOAT: print_double(f, a->v.f); break;
	case HGC_ATTR_STRING: fprintf(f, "\"%s\"", a->v.s); break;
	case HGC_ATTR_INTS:
	case HGC_ATTR_FLOATS:
		fputc('[', f);
		for (i = 0; i < a->n; i++) {
			if (i)
				fputc(',', f);
			if (a->type == HGC_ATTR_INTS)
				fprintf(f, "%lld", (long long)a->v.ints[i]);
			else
				print_double(f, a->v.floats[i]);
		}
		fputc(']', f);
		break;
	default: fputs("?", f); break;
	}
}

/* A tensor reference: "%3" or "%3 name". */
static void print_ref(FILE *f, const struct hgc_tensor *t)
{
	fprintf(f, "%%%d", t->id);
	if (t->name)
		fprintf(f, " %s", t->name);
}

/* The layout when it is not dense row-major: "@strides[..]" or "@blocked[dim:block,..]". */
static void print_layout(FILE *f, const struct hgc_tensor *t)
{
	int64_t s = 1;
	int i;

	if (t->layout.kind == HGC_LAYOUT_BLOCKED) {
		fputs(" @blocked[", f);
		for (i = 0; i < t->layout.nphys; i++)
			fprintf(f, i ? ",%d:%lld" : "%d:%lld", t->layout.phys[i].dim,
				(long long)t->layout.phys[i].block);
		fputc(']', f);
		return;
	}
	for (i = t->ndims - 1; i >= 0; s *= t->dims[i--])
		if (t->layout.strides[i] != s)
			break;
	if (i < 0)
		return;
	fputs(" @strides[", f);
	for (i = 0; i < t->ndims; i++)
		fprintf(f, i ? ",%lld" : "%lld", (long long)t->layout.strides[i]);
	fputc(']', f);
}

/* "f32[32,512]" plus a layout note. */
static void print_type(FILE *f, const struct hgc_tensor *t)
{
	char buf[HGC_DIMS_BUF];

	fprintf(f, "%s%s", hgc_dtype_name(t->dtype), hgc_dims_str(buf, t->ndims, t->dims));
	print_layout(f, t);
}

/* The attributes set on op, in schema order (so the text does not depend on set order). */
static void print_attrs(FILE *f, const struct hgc_op *op)
{
	const struct hgc_attr_spec *s;
	int i, n = 0;

	for (s = hgc_op_table[op->kind].attrs; s->name; s++) {
		for (i = 0; i < op->nattr && strcmp(op->attrs[i].name, s->name); i++)
			;
		if (i == op->nattr)
			continue;
		fprintf(f, "%s%s=", n++ ? ", " : " {", s->name);
		print_value(f, &op->attrs[i]);
	}
	if (n)
		fputc('}', f);
}

/* One op: "%3 : f32[32,512] = MatMul(%0 x, %1 w0) {transpose_b=false}". */
static void print_op(FILE *f, const struct hgc_op *op)
{
	int i;

	fputs("  ", f);
	print_ref(f, op->out[0]);
	fputs(" : ", f);
	print_type(f, op->out[0]);
	fprintf(f, " = %s(", hgc_op_table[op->kind].name);
	for (i = 0; i < op->nin; i++) {
		if (i)
			fputs(", ", f);
		print_ref(f, op->in[i]);
	}
	fputc(')', f);
	print_attrs(f, op);
	fputc('\n', f);
}

/* A tensor with no producer: "input %0 x : f32[32,13]" or "const ...". */
static void print_leaf(FILE *f, const struct hgc_tensor *t, bool is_input)
{
	fputs(t->prop == HGC_PROP_CONSTANT || !is_input ? "  const " : "  input ", f);
	print_ref(f, t);
	fputs(" : ", f);
	print_type(f, t);
	if (!is_input)
		fputs(" (embedded)", f);
	fputc('\n', f);
}

/* Is t one of g's inputs? */
static bool is_graph_input(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	size_t i;

	for (i = 0; i < g->inputs.len; i++)
		if (HGC_GRAPH_INPUT(g, i) == t)
			return true;
	return false;
}

/* Inputs first, then tensors embedded by passes, then ops in order, then outputs. */
void hgc_graph_print(FILE *f, const struct hgc_graph *g)
{
	size_t i;

	fputs("graph {\n", f);
	for (i = 0; i < g->inputs.len; i++)
		print_leaf(f, HGC_GRAPH_INPUT(g, i), true);
	for (i = 0; i < g->tensors.len; i++) {
		const struct hgc_tensor *t = HGC_VEC_AT(&g->tensors, struct hgc_tensor *, i);

		if (!t->producer && !is_graph_input(g, t))
			print_leaf(f, t, false);
	}
	for (i = 0; i < g->ops.len; i++)
		print_op(f, HGC_GRAPH_OP(g, i));
	for (i = 0; i < g->outputs.len; i++) {
		fputs(i ? ", " : "  output ", f);
		print_ref(f, HGC_GRAPH_OUTPUT(g, i));
	}
	if (g->outputs.len)
		fputc('\n', f);
	fputs("}\n", f);
}
