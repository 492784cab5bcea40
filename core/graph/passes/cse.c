/*
 * cse.c: common subexpression elimination.  Two ops are the same when they
 * have the same kind, read the same tensors in the same order, store the
 * same output type and have equal attributes (a default equals the same
 * value set explicitly); every op is pure, so the later one goes and its
 * readers use the earlier one's output.  Embedded constants with the same
 * type, shape and bytes merge too (the decompositions make many equal
 * scalars).  Graph inputs never merge: they are the graph's interface.
 * One walk in graph order with a hash table, so chains collapse at once.
 */
#include "passes_int.h"

#include <stdlib.h>
#include <string.h>

/* An open-addressing set of ops or constants, keyed by a caller's hash. */
struct table {
	void **slot;
	uint64_t *hash;
	size_t cap;		/* a power of two, at least twice the entries */
};

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n--)
		h = (h ^ *s++) * 1099511628211u;
	return h;
}

/* A table for up to n entries. */
static void table_init(struct table *t, size_t n)
{
	t->cap = 16;
	while (t->cap < 2 * n + 2)
		t->cap *= 2;
	t->slot = hgc_xcalloc(t->cap, sizeof(*t->slot));
	t->hash = hgc_xcalloc(t->cap, sizeof(*t->hash));
}

/* Free the table. */
static void table_release(struct table *t)
{
	free(t->slot);
	free(t->hash);
}

/* Equality of two entries. */
typedef bool entry_eq(const void *, const void *);

/* The entry equal to key (by eq) with hash h, or NULL after inserting key. */
static void *table_intern(struct table *t, uint64_t h, void *key, entry_eq *eq)
{
	size_t i = (size_t)h & (t->cap - 1);

	for (; t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (t->hash[i] == h && eq(t->slot[i], key))
			return t->slot[i];
	t->slot[i] = key;
	t->hash[i] = h;
	return NULL;
}

/* Hash of a constant: type, shape, bytes. */
static uint64_t const_hash(const struct hgc_tensor *t)
{
	uint64_t h = fnv(14695981039346656037u, &t->dtype, sizeof(t->dtype));

	h = fnv(h, &t->ndims, sizeof(t->ndims));
	h = fnv(h, t->dims, (size_t)t->ndims * sizeof(*t->dims));
	return fnv(h, t->data, hgc_tensor_nbytes(t));
}

/* Are two constants the same value? */
static bool const_eq(const void *pa, const void *pb)
{
	const struct hgc_tensor *a = pa, *b = pb;

	return a->dtype == b->dtype && a->ndims == b->ndims &&
	       !memcmp(a->dims, b->dims, (size_t)a->ndims * sizeof(*a->dims)) &&
	       !memcmp(a->data, b->data, hgc_tensor_nbytes(a));
}

/* Hash one attribute value. */
static uint64_t attr_hash(uint64_t h, const struct hgc_attr *a)
{
	h = fnv(h, &a->type, sizeof(a->type));
	switch (a->type) {
	case HGC_ATTR_STRING: return fnv(h, a->v.s, strlen(a->v.s));
	case HGC_ATTR_INTS: return fnv(fnv(h, &a->n, sizeof(a->n)), a->v.ints,
				       (size_t)a->n * sizeof(*a->v.ints));
	case HGC_ATTR_FLOATS: return fnv(fnv(h, &a->n, sizeof(a->n)), a->v.floats,
					 (size_t)a->n * sizeof(*a->v.floats));
	case HGC_ATTR_FLOAT: return fnv(h, &a->v.f, sizeof(a->v.f));
	default: return fnv(h, &a->v.i, sizeof(a->v.i));
	}
}

/* Do two attribute values match exactly (floats by bits)? */
static bool attr_eq(const struct hgc_attr *a, const struct hgc_attr *b)
{
	if (!a || !b || a->type != b->type)
		return a == b;
	switch (a->type) {
	case HGC_ATTR_STRING: return !strcmp(a->v.s, b->v.s);
	case HGC_ATTR_INTS: return a->n == b->n && !memcmp(a->v.ints, b->v.ints,
							  (size_t)a->n * sizeof(*a->v.ints));
	case HGC_ATTR_FLOATS: return a->n == b->n && !memcmp(a->v.floats, b->v.floats,
							    (size_t)a->n * sizeof(*a->v.floats));
	case HGC_ATTR_FLOAT: return !memcmp(&a->v.f, &b->v.f, sizeof(a->v.f));
	default: return a->v.i == b->v.i;
	}
}

/* Hash of an op: kind, output type, input ids, attributes in schema order. */
static uint64_t op_hash(const struct hgc_op *op)
{
	const struct hgc_attr_spec *s;
	uint64_t h = fnv(14695981039346656037u, &op->kind, sizeof(op->kind));
	int k;

	h = fnv(h, &op->out[0]->dtype, sizeof(op->out[0]->dtype));
	for (k = 0; k < op->nin; k++)
		h = fnv(h, &op->in[k]->id, sizeof(op->in[k]->id));
	for (s = hgc_op_table[op->kind].attrs; s->name; s++) {
		const struct hgc_attr *a = hgc_op_attr(op, s->name);

		if (a)
			h = attr_hash(h, a);
	}
	return h;
}

/* Do two ops compute the same value? */
static bool op_eq(const void *pa, const void *pb)
{
	const struct hgc_op *a = pa, *b = pb;
	const struct hgc_attr_spec *s;
	int k;

	if (a->kind != b->kind || a->nin != b->nin || a->out[0]->dtype != b->out[0]->dtype)
		return false;
	for (k = 0; k < a->nin; k++)
		if (a->in[k] != b->in[k])
			return false;
	for (s = hgc_op_table[a->kind].attrs; s->name; s++)
		if (!attr_eq(hgc_op_attr(a, s->name), hgc_op_attr(b, s->name)))
			return false;
	return true;
}

/* The walk's state: what replaces each tensor id, which constants are inputs. */
struct cse {
	struct hgc_graph *g;
	struct hgc_tensor **fwd;	/* by id: the tensor to read instead, or NULL */
	bool *input;			/* by id: a graph input */
	struct table consts, ops;
	int merged;
};

/* What a read of t becomes: a merged op's survivor, or the first equal constant. */
static struct hgc_tensor *canon(struct cse *c, struct hgc_tensor *t)
{
	struct hgc_tensor *same;

	if (c->fwd[t->id])
		return c->fwd[t->id];
	if (t->producer || !t->data || c->input[t->id])
		return t;
	same = table_intern(&c->consts, const_hash(t), t, const_eq);
	if (same) {
		c->fwd[t->id] = same;
		c->merged++;
		return same;
	}
	return t;
}

/* Drop the constants no op reads any more (a removal of nothing prunes tensors). */
static void drop_orphans(struct hgc_graph *g)
{
	bool *none = hgc_xcalloc(g->ops.len + 1, sizeof(*none));

	hgc_graph_remove_ops(g, none);
	free(none);
}

/* Eliminate common subexpressions; the number of ops and constants merged. */
int hgc_pass_cse(struct hgc_graph *g, const struct hgc_pass_switches *sw, struct hgc_diag *d)
{
	struct cse c = {g, NULL, NULL, {0}, {0}, 0};
	size_t n = g->ops.len, i;
	bool *dead = hgc_xcalloc(n + 1, sizeof(*dead));
	struct hgc_pb b;
	int k, r;

	(void)sw;
	c.fwd = hgc_xcalloc((size_t)g->next_id + 1, sizeof(*c.fwd));
	c.input = hgc_xcalloc((size_t)g->next_id + 1, sizeof(*c.input));
	for (i = 0; i < g->inputs.len; i++)
		c.input[HGC_GRAPH_INPUT(g, i)->id] = true;
	table_init(&c.consts, g->tensors.len);
	table_init(&c.ops, n);
	for (i = 0; i < n; i++) {
		struct hgc_op *op = HGC_GRAPH_OP(g, i), *same;

		for (k = 0; k < op->nin; k++)
			op->in[k] = canon(&c, op->in[k]);
		same = table_intern(&c.ops, op_hash(op), op, op_eq);
		if (same) {
			c.fwd[op->out[0]->id] = same->out[0];
			dead[i] = true;
			c.merged++;
		}
	}
	for (i = 0; i < g->outputs.len; i++)
		HGC_GRAPH_OUTPUT(g, i) = canon(&c, HGC_GRAPH_OUTPUT(g, i));
	hgc_pb_init(&b, g, d);
	r = hgc_pb_finish(&b, dead, n);
	if (!r && c.merged)
		drop_orphans(g);
	table_release(&c.consts);
	table_release(&c.ops);
	free(c.fwd);
	free(c.input);
	free(dead);
	return r ? -1 : c.merged;
}
