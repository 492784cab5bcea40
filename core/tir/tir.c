/* tir.c: modules, functions, variables, tensors and their unique names. */
#include "tir.h"
#include "tir_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Words a name may not take: C keywords and the types and macros emitted C uses. */
static const char *const reserved[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
	"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
	"register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
	"switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool",
	"_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert",
	"_Thread_local", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
	"int64_t", "uint64_t", "intptr_t", "uintptr_t", "size_t", "main", "asm", "NULL",
	"malloc", "free", "aligned_alloc", "omp_get_thread_num", "omp_get_num_threads",
};

/* FNV-1a, for the name set. */
static size_t hash(const char *s)
{
	size_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot of name in the set: where it is, or the empty one it would go to. */
static struct hgc_tir_name *slot(struct hgc_tir_module *m, const char *name)
{
	size_t i = hash(name) & (m->capnames - 1);

	while (m->names[i].s && strcmp(m->names[i].s, name))
		i = (i + 1) & (m->capnames - 1);
	return &m->names[i];
}

/* Add a name (arena-owned) to the set, growing it at half load. */
static void name_add(struct hgc_tir_module *m, const char *name)
{
	struct hgc_tir_name *old = m->names;
	size_t i, oldcap = m->capnames;

	if (2 * (m->nnames + 1) > m->capnames) {
		m->capnames = oldcap ? 2 * oldcap : 256;
		m->names = hgc_xcalloc(m->capnames, sizeof(*m->names));
		for (i = 0; i < oldcap; i++)
			if (old[i].s)
				*slot(m, old[i].s) = old[i];
		free(old);
	}
	*slot(m, name) = (struct hgc_tir_name){ name, 1 };
	m->nnames++;
}

/* The entry of a name in use (or reserved), or NULL. */
static struct hgc_tir_name *name_used(struct hgc_tir_module *m, const char *name)
{
	struct hgc_tir_name *e = m->capnames ? slot(m, name) : NULL;

	return e && e->s ? e : NULL;
}

/*
 * A unique name made from want: non-identifier characters become '_', a
 * leading digit or "hgc_" (the emitter's prefix) gets a "v" in front, and a
 * taken name gets "_1", "_2" ... appended: the first one free.  Names are
 * never given back, so the search resumes where the last one for the same
 * base ended (the base's own entry keeps the next suffix): trying "_1" up
 * every time made n names from one base (a chain of 1600 Adds lowers to
 * thousands of "x" and "i") cost n^2 / 2 lookups and printfs, 20% of that
 * compile in strcmp alone.
 */
const char *hgc_tir_unique_name(struct hgc_tir_module *m, const char *want)
{
	size_t n = strlen(want && *want ? want : "t"), i;
	char *base = hgc_arena_alloc(&m->arena, n + 2), *s = base;
	const char *name;
	struct hgc_tir_name *taken;
	int k;

	want = want && *want ? want : "t";
	if (isdigit((unsigned char)want[0]) || !strncmp(want, "hgc_", 4) || want[0] == '_')
		*s++ = 'v';
	for (i = 0; i < n; i++)
		*s++ = isalnum((unsigned char)want[i]) ? want[i] : '_';
	*s = 0;
	name = base;
	if ((taken = name_used(m, base))) {
		for (k = taken->next; name_used(m, name = hgc_arena_printf(&m->arena, "%s_%d", base, k));
		     k++)
			;
		taken->next = k + 1;	/* before name_add, which may move the entries */
	}
	name_add(m, name);
	return name;
}

/* A new empty module; its arena owns everything built in it. */
struct hgc_tir_module *hgc_tir_module_new(const char *name)
{
	struct hgc_arena a;
	struct hgc_tir_module *m;
	size_t i;

	hgc_arena_init(&a);
	m = hgc_arena_calloc(&a, 1, sizeof(*m));
	m->arena = a;
	hgc_vec_init(&m->funcs, sizeof(struct hgc_tir_func *));
	hgc_vec_init(&m->consts, sizeof(struct hgc_tir_tensor *));
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		name_add(m, reserved[i]);
	m->name = hgc_arena_strdup(&m->arena, name ? name : "module");
	return m;
}

/* Free a module and everything in it. */
void hgc_tir_module_free(struct hgc_tir_module *m)
{
	struct hgc_arena a;

	if (!m)
		return;
	hgc_vec_release(&m->funcs);
	hgc_vec_release(&m->consts);
	free(m->names);
	a = m->arena;
	hgc_arena_release(&a);
}

/* A new function with an empty body, appended to the module. */
struct hgc_tir_func *hgc_tir_func_new(struct hgc_tir_module *m, const char *name,
				      struct hgc_tir_type ret)
{
	struct hgc_tir_func *f = hgc_arena_calloc(&m->arena, 1, sizeof(*f));

	f->mod = m;
	f->name = hgc_tir_unique_name(m, name);
	f->ret = ret;
	f->body = hgc_tir_block(m, NULL);
	f->id = (int)m->funcs.len;
	*(struct hgc_tir_func **)hgc_vec_push(&m->funcs) = f;
	return f;
}

/* Look a function up by name. */
struct hgc_tir_func *hgc_tir_module_func(const struct hgc_tir_module *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->funcs.len; i++)
		if (!strcmp(HGC_TIR_FUNC(m, i)->name, name))
			return HGC_TIR_FUNC(m, i);
	return NULL;
}

/* A new variable with a unique name and the next id. */
struct hgc_tir_var *hgc_tir_var_new(struct hgc_tir_module *m, const char *name,
				    struct hgc_tir_type type)
{
	struct hgc_tir_var *v = hgc_arena_calloc(&m->arena, 1, sizeof(*v));

	v->name = hgc_tir_unique_name(m, name);
	v->type = type;
	v->id = m->nvars++;
	return v;
}

/* A new tensor; NULL dims mean 1. */
struct hgc_tir_tensor *hgc_tir_tensor_new(struct hgc_tir_module *m, const char *name,
					  struct hgc_tir_type elem, enum hgc_tir_scope scope,
					  int ndims, struct hgc_tir_expr *const *dims)
{
	struct hgc_tir_tensor *t = hgc_arena_calloc(&m->arena, 1, sizeof(*t));
	int i;

	t->name = hgc_tir_unique_name(m, name);
	t->elem = elem;
	t->scope = scope;
	t->ndims = ndims;
	t->dims = hgc_arena_calloc(&m->arena, (size_t)(ndims ? ndims : 1), sizeof(*t->dims));
	for (i = 0; i < ndims; i++)
		t->dims[i] = dims && dims[i] ? dims[i] : hgc_tir_idx(m, 1);
	t->id = m->ntensors++;
	return t;
}

/* A new tensor with constant dims. */
struct hgc_tir_tensor *hgc_tir_tensor_newc(struct hgc_tir_module *m, const char *name,
					   struct hgc_tir_type elem, enum hgc_tir_scope scope,
					   int ndims, const int64_t *dims)
{
	struct hgc_tir_tensor *t = hgc_tir_tensor_new(m, name, elem, scope, ndims, NULL);
	int i;

	for (i = 0; i < ndims; i++)
		t->dims[i] = hgc_tir_idx(m, dims[i]);
	return t;
}

/* Grow the parameter array in the arena and return the new zeroed slot. */
static struct hgc_tir_param *new_param(struct hgc_tir_func *f)
{
	struct hgc_tir_param *p;

	if (f->nparams == f->capparams) {
		f->capparams = f->capparams ? 2 * f->capparams : 8;
		p = hgc_arena_calloc(&f->mod->arena, (size_t)f->capparams, sizeof(*p));
		if (f->nparams)
			memcpy(p, f->params, (size_t)f->nparams * sizeof(*p));
		f->params = p;
	}
	p = &f->params[f->nparams++];
	memset(p, 0, sizeof(*p));
	return p;
}

/* Append a tensor parameter with constant dims. */
struct hgc_tir_tensor *hgc_tir_func_add_tensor(struct hgc_tir_func *f, const char *name,
					       struct hgc_tir_type elem, int ndims,
					       const int64_t *dims)
{
	struct hgc_tir_tensor *t =
		hgc_tir_tensor_newc(f->mod, name, elem, HGC_TIR_GLOBAL, ndims, dims);

	hgc_tir_func_add_tensor_param(f, t);
	return t;
}

/* Append a tensor built elsewhere (dynamic dims ...) as a parameter. */
void hgc_tir_func_add_tensor_param(struct hgc_tir_func *f, struct hgc_tir_tensor *t)
{
	t->is_param = true;
	new_param(f)->tensor = t;
}

/* Append a scalar parameter. */
struct hgc_tir_var *hgc_tir_func_add_scalar(struct hgc_tir_func *f, const char *name,
					    struct hgc_tir_type type)
{
	struct hgc_tir_var *v = hgc_tir_var_new(f->mod, name, type);

	new_param(f)->var = v;
	return v;
}

/* A module-level constant buffer with an optional copy of its contents. */
struct hgc_tir_tensor *hgc_tir_module_add_const(struct hgc_tir_module *m, const char *name,
						struct hgc_tir_type elem, int ndims,
						const int64_t *dims, const void *data)
{
	struct hgc_tir_tensor *t = hgc_tir_tensor_newc(m, name, elem, HGC_TIR_CONST, ndims, dims);
	int64_t n = hgc_tir_tensor_size(t);
	size_t bytes;
	void *copy;

	if (data && n > 0) {
		bytes = (size_t)n * (size_t)(elem.ptr ? 8 : hgc_tir_kind_size(elem.kind));
		copy = hgc_arena_alloc(&m->arena, bytes);
		memcpy(copy, data, bytes);
		t->data = copy;
	}
	*(struct hgc_tir_tensor **)hgc_vec_push(&m->consts) = t;
	return t;
}

/* The constant value of dim i, or -1. */
int64_t hgc_tir_tensor_dim(const struct hgc_tir_tensor *t, int i)
{
	int64_t v;

	return i >= 0 && i < t->ndims && hgc_tir_const_int(t->dims[i], &v) ? v : -1;
}

/* Number of elements when all dims are constants, else -1. */
int64_t hgc_tir_tensor_size(const struct hgc_tir_tensor *t)
{
	int64_t n = 1, d;
	int i;

	for (i = 0; i < t->ndims; i++) {
		d = hgc_tir_tensor_dim(t, i);
		if (d < 0)
			return -1;
		n *= d;
	}
	return n;
}
