/* arena.c: bump allocator in chunks, and the growable vector. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hgc_arena_chunk {
	struct hgc_arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char mem[];
};

void hgc_arena_init(struct hgc_arena *a)
{
	a->head = NULL;
	a->chunk_size = 64 * 1024;
}

/* Grow by a chunk big enough for n bytes; chunks double up to 4 MiB. */
static struct hgc_arena_chunk *grow(struct hgc_arena *a, size_t n)
{
	size_t size = a->chunk_size;
	struct hgc_arena_chunk *c;

	while (size < n)
		size *= 2;
	c = hgc_xmalloc(sizeof(*c) + size);
	c->next = a->head;
	c->used = 0;
	c->size = size;
	a->head = c;
	if (a->chunk_size < 4u << 20)
		a->chunk_size *= 2;
	return c;
}

void *hgc_arena_alloc(struct hgc_arena *a, size_t n)
{
	struct hgc_arena_chunk *c = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	if (!c || c->size - c->used < n)
		c = grow(a, n);
	p = c->mem + c->used;
	c->used += n;
	return p;
}

void *hgc_arena_calloc(struct hgc_arena *a, size_t count, size_t size)
{
	void *p;

	if (size && count > SIZE_MAX / size)
		hgc_bug("arena_calloc overflow");
	p = hgc_arena_alloc(a, count * size);
	memset(p, 0, count * size);
	return p;
}

char *hgc_arena_strndup(struct hgc_arena *a, const char *s, size_t n)
{
	char *p = hgc_arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *hgc_arena_strdup(struct hgc_arena *a, const char *s)
{
	return hgc_arena_strndup(a, s, strlen(s));
}

char *hgc_arena_printf(struct hgc_arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	p = hgc_arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void hgc_arena_release(struct hgc_arena *a)
{
	struct hgc_arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

void hgc_vec_init(struct hgc_vec *v, size_t elem)
{
	v->data = NULL;
	v->len = v->cap = 0;
	v->elem = elem;
}

void *hgc_vec_push(struct hgc_vec *v)
{
	void *slot;

	if (v->len == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 8;
		v->data = hgc_xrealloc(v->data, v->cap * v->elem);
	}
	slot = (char *)v->data + v->len++ * v->elem;
	memset(slot, 0, v->elem);
	return slot;
}

void hgc_vec_release(struct hgc_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}
