/*
 * names.c: a small open-addressing hash table from names to ints, so that
 * symbol lookups and duplicate checks stay linear in the size of the input
 * (a spec with 50000 ops must not take minutes).
 */
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_int.h"

/* An empty table (no memory until the first name). */
void hgc_dsl_names_init(struct hgc_names *t)
{
	memset(t, 0, sizeof(*t));
}

/* Free the slots (the names belong to others). */
void hgc_dsl_names_release(struct hgc_names *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* FNV-1a over the name. */
static size_t hash(const char *z, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)z[i]) * 0x100000001b3ull;
	return (size_t)h;
}

/* The slot holding z[0..n), or the empty slot where it would go. */
static struct hgc_name_slot *slot(const struct hgc_names *t, const char *z, int n)
{
	size_t i = hash(z, n) & (t->cap - 1);
	struct hgc_name_slot *s;

	for (;; i = (i + 1) & (t->cap - 1)) {
		s = &t->slots[i];
		if (!s->z || (s->n == n && !memcmp(s->z, z, (size_t)n)))
			return s;
	}
}

/* Double the table (or make the first one) and re-insert every name. */
static void grow(struct hgc_names *t)
{
	struct hgc_name_slot *old = t->slots, *s;
	size_t i, cap = t->cap;

	t->cap = cap ? 2 * cap : 16;
	t->slots = hgc_xcalloc(t->cap, sizeof(*t->slots));
	for (i = 0; i < cap; i++)
		if (old[i].z) {
			s = slot(t, old[i].z, old[i].n);
			*s = old[i];
		}
	free(old);
}

/* The value stored for a name, or -1. */
int hgc_dsl_names_get(const struct hgc_names *t, const char *z, int n)
{
	const struct hgc_name_slot *s;

	if (!t->cap)
		return -1;
	s = slot(t, z, n);
	return s->z ? s->val : -1;
}

/* Add or update a name, keeping the table at most half full. */
void hgc_dsl_names_put(struct hgc_names *t, const char *z, int n, int val)
{
	struct hgc_name_slot *s;

	if (2 * (t->len + 1) > t->cap)
		grow(t);
	s = slot(t, z, n);
	if (!s->z) {
		s->z = z;
		s->n = n;
		t->len++;
	}
	s->val = val;
}
