/* attr.c: attribute access with schema defaults, and checking attributes against the schema. */
#include "graph_int.h"

#include <string.h>

static const char *const type_names[] = {
	[HGC_ATTR_NONE] = "nothing",
	[HGC_ATTR_BOOL] = "a bool",
	[HGC_ATTR_INT] = "an int",
	[HGC_ATTR_INTS] = "a list of ints",
	[HGC_ATTR_FLOAT] = "a float",
	[HGC_ATTR_FLOATS] = "a list of floats",
	[HGC_ATTR_STRING] = "a string",
};

/* The schema row of name for kind, or NULL when the schema has none. */
const struct hgc_attr_spec *hgc_op_attr_spec(enum hgc_op_kind kind, const char *name)
{
	const struct hgc_attr_spec *s;

	for (s = hgc_op_table[kind].attrs; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* The attribute set on op, or the schema default; NULL if required and not set. */
const struct hgc_attr *hgc_op_attr(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr_spec *s = hgc_op_attr_spec(op->kind, name);
	int i;

	if (!s)
		hgc_bug("%s has no attribute '%s' in its schema", hgc_op_table[op->kind].name, name);
	for (i = 0; i < op->nattr; i++)
		if (!strcmp(op->attrs[i].name, name))
			return &op->attrs[i];
	return s->required ? NULL : &s->def;
}

/* An attribute that must exist (the op was checked). */
static const struct hgc_attr *must(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr *a = hgc_op_attr(op, name);

	if (!a)
		hgc_bug("%s: required attribute '%s' is not set", hgc_op_table[op->kind].name, name);
	return a;
}

/* An INT (or BOOL) attribute. */
int64_t hgc_op_int(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr *a = must(op, name);

	if (a->type != HGC_ATTR_INT && a->type != HGC_ATTR_BOOL)
		hgc_bug("attribute '%s' is not an int", name);
	return a->v.i;
}

/* A BOOL attribute. */
bool hgc_op_bool(const struct hgc_op *op, const char *name)
{
	return hgc_op_int(op, name) != 0;
}

/* A FLOAT attribute (an INT converts). */
double hgc_op_float(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr *a = must(op, name);

	if (a->type == HGC_ATTR_INT)
		return (double)a->v.i;
	if (a->type != HGC_ATTR_FLOAT)
		hgc_bug("attribute '%s' is not a float", name);
	return a->v.f;
}

/* A STRING attribute. */
const char *hgc_op_string(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr *a = must(op, name);

	if (a->type != HGC_ATTR_STRING)
		hgc_bug("attribute '%s' is not a string", name);
	return a->v.s;
}

/* An INTS attribute: count and values. */
int hgc_op_ints(const struct hgc_op *op, const char *name, const int64_t **v)
{
	const struct hgc_attr *a = must(op, name);

	if (a->type != HGC_ATTR_INTS)
		hgc_bug("attribute '%s' is not a list of ints", name);
	*v = a->v.ints;
	return a->n;
}

/* Count of a FLOATS attribute (an INTS counts too). */
int hgc_op_nfloats(const struct hgc_op *op, const char *name)
{
	const struct hgc_attr *a = must(op, name);

	if (a->type != HGC_ATTR_FLOATS && a->type != HGC_ATTR_INTS)
		hgc_bug("attribute '%s' is not a list of floats", name);
	return a->n;
}

/* Element i of a FLOATS (or INTS) attribute. */
double hgc_op_float_at(const struct hgc_op *op, const char *name, int i)
{
	const struct hgc_attr *a = must(op, name);

	if (i < 0 || i >= a->n)
		hgc_bug("attribute '%s' has no element %d", name, i);
	return a->type == HGC_ATTR_INTS ? (double)a->v.ints[i] : a->v.floats[i];
}

/* Index of a string attribute's value in choices, or an error naming them. */
int hgc_op_choice(const struct hgc_op *op, const char *name, const char *const *choices,
		  struct hgc_diag *d)
{
	const char *v = hgc_op_string(op, name);
	char list[256] = "";
	size_t n = 0;
	int i;

	for (i = 0; choices[i]; i++)
		if (!strcmp(choices[i], v))
			return i;
	for (i = 0; choices[i]; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s\"%s\"", i ? ", " : "",
				      choices[i]);
	return hgc_op_error(op, d, "%s \"%s\" is not one of %s", name, v, list);
}

/* Is a value of type got acceptable for a schema slot of type want? */
static bool type_fits(enum hgc_attr_type want, const struct hgc_attr *a)
{
	if (a->type == want)
		return true;
	if (want == HGC_ATTR_FLOAT && a->type == HGC_ATTR_INT)
		return true;
	return want == HGC_ATTR_FLOATS && a->type == HGC_ATTR_INTS;
}

/* The location of an attribute's error: its own, or the op's. */
static const struct hgc_loc *attr_loc(const struct hgc_op *op, const struct hgc_attr *a)
{
	return a->loc.file ? &a->loc : &op->loc;
}

/* Check every attribute against the schema: unknown names, wrong types, missing ones. */
int hgc_op_check_attrs(const struct hgc_op *op, struct hgc_diag *d)
{
	const char *kind = hgc_op_table[op->kind].name;
	const struct hgc_attr_spec *s;
	int i, bad = 0;

	for (i = 0; i < op->nattr; i++) {
		const struct hgc_attr *a = &op->attrs[i];

		s = hgc_op_attr_spec(op->kind, a->name);
		if (!s)
			bad = hgc_error(d, attr_loc(op, a), "unknown attribute '%s' for %s",
					a->name, kind);
		else if (!type_fits(s->type, a))
			bad = hgc_error(d, attr_loc(op, a),
					"attribute '%s' of %s must be %s, not %s", a->name, kind,
					type_names[s->type], type_names[a->type]);
	}
	for (s = hgc_op_table[op->kind].attrs; s->name; s++) {
		if (!s->required)
			continue;
		for (i = 0; i < op->nattr && strcmp(op->attrs[i].name, s->name); i++)
			;
		if (i == op->nattr)
			bad = hgc_error(d, &op->loc, "missing required attribute '%s' for %s",
					s->name, kind);
	}
	return bad;
}
