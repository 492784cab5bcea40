/*
 * load.c: loading programs.  A file is read into the program's arena,
 * parsed, and its blocks checked in order; includes are loaded where they
 * stand (relative to the including file, each file once, cycles reported).
 * After the whole load, the config names of the new specs are resolved and
 * the specs that had errors are dropped.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dsl/dsl_int.h"
#include "dsl/template.h"

/* Deeper include chains than this are surely a mistake. */
#define MAX_INCLUDE_DEPTH 32

/*
 * A file read into the program.  p->files holds pointers to `key` (the
 * canonical path, as dsl.h says: every file read); the record around it is
 * found again with offsetof, so the source stays at hand for carets.
 */
struct file_rec {
	const char *name;	/* as given: used in every message */
	const char *src;	/* NUL-terminated contents, in the arena */
	size_t len;
	char key[];		/* canonical path */
};

/* The record whose key string is key. */
static struct file_rec *rec_of(const char *key)
{
	return (struct file_rec *)(void *)((char *)key - offsetof(struct file_rec, key));
}

/* An empty program. */
void hgc_program_init(struct hgc_program *p)
{
	hgc_arena_init(&p->arena);
	hgc_vec_init(&p->specs, sizeof(struct hgc_spec *));
	hgc_vec_init(&p->configs, sizeof(struct hgc_config *));
	hgc_vec_init(&p->files, sizeof(const char *));
}

/* Free the specs' graphs, then everything in the arena. */
void hgc_program_release(struct hgc_program *p)
{
	size_t i;

	for (i = 0; i < p->specs.len; i++)
		if (HGC_PROGRAM_SPEC(p, i)->graph)
			hgc_graph_free(HGC_PROGRAM_SPEC(p, i)->graph);
	hgc_vec_release(&p->specs);
	hgc_vec_release(&p->configs);
	hgc_vec_release(&p->files);
	hgc_arena_release(&p->arena);
}

/* The config called name, or NULL. */
const struct hgc_config *hgc_program_find_config(const struct hgc_program *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->configs.len; i++)
		if (!strcmp(HGC_PROGRAM_CONFIG(p, i)->name, name))
			return HGC_PROGRAM_CONFIG(p, i);
	return NULL;
}

/* Make file's source the one carets are drawn from (the latest read of that name). */
void hgc_dsl_use_source(struct hgc_load *ld, const char *file)
{
	struct file_rec *r;
	size_t i;

	if (!file || (ld->d->src_file && !strcmp(ld->d->src_file, file)))
		return;
	for (i = ld->p->files.len; i-- > 0;) {
		r = rec_of(HGC_VEC_AT(&ld->p->files, const char *, i));
		if (!strcmp(r->name, file)) {
			hgc_diag_set_source(ld->d, r->name, r->src);
			return;
		}
	}
}

/* Report an error, its caret drawn from the file loc names. */
int hgc_dsl_error(struct hgc_load *ld, const struct hgc_loc *loc, const char *fmt, ...)
{
	va_list ap;

	if (loc)
		hgc_dsl_use_source(ld, loc->file);
	va_start(ap, fmt);
	hgc_verror(ld->d, loc, fmt, ap);
	va_end(ap);
	return -1;
}

/* A note after an error (dropped once the error cap is reached, like its error). */
void hgc_dsl_note(struct hgc_load *ld, const struct hgc_loc *loc, const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	if (loc)
		hgc_dsl_use_source(ld, loc->file);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ld->d->nerr <= (ld->d->max_err ? ld->d->max_err : HGC_DIAG_CAP))
		hgc_note(ld->d, loc, "%s", buf);
}

/* dir(base)/path, or path itself when absolute or when base has no directory. */
char *hgc_dsl_relative(struct hgc_arena *arena, const char *base, const char *path)
{
	const char *slash = strrchr(base, '/');

	if (path[0] == '/' || !slash)
		return hgc_arena_strdup(arena, path);
	return hgc_arena_printf(arena, "%.*s%s", (int)(slash - base + 1), base, path);
}

/* Whether a file with this canonical path was read already. */
static bool already_read(const struct hgc_program *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->files.len; i++)
		if (!strcmp(HGC_VEC_AT(&p->files, const char *, i), key))
			return true;
	return false;
}

/* Report an include cycle: "include cycle: a.hgc -> b.hgc -> a.hgc". */
static void cycle(struct hgc_load *ld, const struct hgc_include *hit, const char *name,
		  const struct hgc_loc *from)
{
	const struct hgc_include *f;
	char *chain = hgc_arena_strdup(&ld->p->arena, name);

	for (f = ld->stack; f; f = f->up) {
		chain = hgc_arena_printf(&ld->p->arena, "%s -> %s", f->name, chain);
		if (f == hit)
			break;
	}
	hgc_dsl_error(ld, from, "include cycle: %s", chain);
}

/* Read name into a new file record; NULL after reporting at from. */
static struct file_rec *read_file(struct hgc_load *ld, const char *name, const char *key,
				  const struct hgc_loc *from)
{
	struct hgc_diag scratch;
	struct file_rec *r;
	struct stat st;
	size_t len, klen = strlen(key);
	char *buf;

	if (stat(name, &st) < 0) {
		hgc_dsl_error(ld, from, "cannot read '%s': %s", name, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		hgc_dsl_error(ld, from, "cannot read '%s': %s", name,
			      S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		return NULL;
	}
	hgc_diag_init(&scratch);
	buf = hgc_read_file(name, &len, &scratch);
	hgc_diag_release(&scratch);
	if (!buf) {
		hgc_dsl_error(ld, from, "cannot read '%s'", name);
		return NULL;
	}
	r = hgc_arena_alloc(&ld->p->arena, sizeof(*r) + klen + 1);
	memcpy(r->key, key, klen + 1);
	r->name = hgc_arena_strdup(&ld->p->arena, name);
	r->src = hgc_arena_strndup(&ld->p->arena, buf, len);
	r->len = len;
	free(buf);
	return r;
}

/* Record r as read, so that includes load it once and carets find it. */
static void add_file(struct hgc_load *ld, struct file_rec *r)
{
	*(const char **)hgc_vec_push(&ld->p->files) = r->key;
}

static void load_file(struct hgc_load *ld, const char *name, const struct hgc_loc *from);

/* Check the blocks of one parsed file, loading its includes where they stand. */
static void check_items(struct hgc_load *ld, const struct file_rec *r, const struct hgc_ast *it)
{
	for (; it; it = it->next) {
		switch (it->kind) {
		case HGC_AST_INCLUDE:
			load_file(ld, hgc_dsl_relative(&ld->p->arena, r->name,
						       hgc_dsl_unquote(&ld->p->arena, &it->tok)),
				  &it->loc);
			break;
		case HGC_AST_SPEC:
			hgc_dsl_check_spec(ld, it);
			break;
		case HGC_AST_CONFIG:
			hgc_dsl_check_config(ld, it);
			break;
		case HGC_AST_TEMPLATE:
			hgc_dsl_check_template(ld, it);
			break;
		default:
			hgc_bug("unexpected top-level node %d", (int)it->kind);
		}
	}
}

/* Parse file r and check it with r on the include stack. */
static void load_rec(struct hgc_load *ld, struct file_rec *r)
{
	struct hgc_include frame = {r->key, r->name, ld->stack};
	struct hgc_ast *items;

	add_file(ld, r);
	hgc_dsl_use_source(ld, r->name);
	if (hgc_dsl_parse(&ld->p->arena, r->name, r->src, r->len, ld->d, &items) < 0)
		return;
	ld->stack = &frame;
	ld->depth++;
	check_items(ld, r, items);
	ld->depth--;
	ld->stack = frame.up;
}

/* The canonical path of name in the arena, or NULL with errno set. */
static char *canonical(struct hgc_load *ld, const char *name)
{
	char *path = realpath(name, NULL), *key;

	if (!path)
		return NULL;
	key = hgc_arena_strdup(&ld->p->arena, path);
	free(path);
	return key;
}

/* Load the file called name, included from `from` (NULL: the top file). */
static void load_file(struct hgc_load *ld, const char *name, const struct hgc_loc *from)
{
	const struct hgc_include *f;
	struct file_rec *r;
	char *key = canonical(ld, name);

	if (!key) {
		hgc_dsl_error(ld, from, "cannot %s '%s': %s", from ? "include" : "open", name,
			      strerror(errno));
		return;
	}
	for (f = ld->stack; f; f = f->up)
		if (!strcmp(f->key, key)) {
			cycle(ld, f, name, from);
			return;
		}
	if (already_read(ld->p, key))
		return;
	if (ld->depth >= MAX_INCLUDE_DEPTH) {
		hgc_dsl_error(ld, from, "includes nested more than %d deep", MAX_INCLUDE_DEPTH);
		return;
	}
	r = read_file(ld, name, key, from);
	if (r)
		load_rec(ld, r);
}

/* Resolve the config names of this load's specs; drop specs that failed. */
static void resolve_configs(struct hgc_load *ld)
{
	struct hgc_program *p = ld->p;
	struct hgc_config_ref *ref;
	struct hgc_spec *s;
	size_t i, j = ld->first_spec;
	int k;

	for (i = 0; i < ld->config_refs.len; i++) {
		ref = &HGC_VEC_AT(&ld->config_refs, struct hgc_config_ref, i);
		k = hgc_dsl_names_get(&ld->config_names, ref->spec->config_name,
				      (int)strlen(ref->spec->config_name));
		ref->spec->config = k < 0 ? NULL : HGC_PROGRAM_CONFIG(p, k);
		if (!ref->spec->config)
			hgc_dsl_error(ld, &ref->loc, "unknown config '%s'", ref->spec->config_name);
	}
	for (i = ld->first_spec; i < p->specs.len; i++) {
		s = HGC_PROGRAM_SPEC(p, i);
		if (s->config_name && !s->config) {
			if (s->graph)
				hgc_graph_free(s->graph);
			continue;
		}
		HGC_PROGRAM_SPEC(p, j++) = s;
	}
	p->specs.len = j;
}

/* Resolve, free the load's tables and give the caller its caret source back. */
static int finish_load(struct hgc_load *ld, int nerr0, const char *src_file, const char *src)
{
	resolve_configs(ld);
	hgc_vec_release(&ld->spec_locs);
	hgc_vec_release(&ld->config_refs);
	hgc_dsl_names_release(&ld->spec_names);
	hgc_dsl_names_release(&ld->config_names);
	hgc_diag_set_source(ld->d, src_file, src);
	return ld->d->nerr > nerr0 ? -1 : 0;
}

/* Start the state of one load, with the names the program already has. */
static void start_load(struct hgc_load *ld, struct hgc_program *p, struct hgc_diag *d)
{
	const struct hgc_spec *s;
	const struct hgc_config *c;
	size_t i;

	memset(ld, 0, sizeof(*ld));
	ld->p = p;
	ld->d = d;
	ld->first_spec = p->specs.len;
	hgc_vec_init(&ld->spec_locs, sizeof(const struct hgc_loc *));
	hgc_vec_init(&ld->config_refs, sizeof(struct hgc_config_ref));
	hgc_dsl_names_init(&ld->spec_names);
	hgc_dsl_names_init(&ld->config_names);
	for (i = 0; i < p->specs.len; i++) {
		s = HGC_PROGRAM_SPEC(p, i);
		hgc_dsl_names_put(&ld->spec_names, s->name, (int)strlen(s->name), (int)i);
		*(const struct hgc_loc **)hgc_vec_push(&ld->spec_locs) = &s->loc;
	}
	for (i = 0; i < p->configs.len; i++) {
		c = HGC_PROGRAM_CONFIG(p, i);
		hgc_dsl_names_put(&ld->config_names, c->name, (int)strlen(c->name), (int)i);
	}
}

int hgc_program_load(struct hgc_program *p, const char *path, struct hgc_diag *d)
{
	struct hgc_load ld;
	const char *src_file = d->src_file, *src = d->src;
	int nerr0 = d->nerr;

	start_load(&ld, p, d);
	load_file(&ld, path, NULL);
	return finish_load(&ld, nerr0, src_file, src);
}

/* Load path for the template compiler: checked templates go to out. */
int hgc_dsl_load_templates(struct hgc_program *p, const char *path, struct hgc_vec *out,
			   struct hgc_diag *d)
{
	struct hgc_load ld;
	const char *src_file = d->src_file, *src = d->src;
	int nerr0 = d->nerr;

	start_load(&ld, p, d);
	ld.templates = out;
	load_file(&ld, path, NULL);
	return finish_load(&ld, nerr0, src_file, src);
}

/* Load src as if it were the file called file (includes are relative to it). */
int hgc_program_load_string(struct hgc_program *p, const char *file, const char *src,
			    struct hgc_diag *d)
{
	struct hgc_load ld;
	const char *src_file = d->src_file, *old = d->src;
	int nerr0 = d->nerr;
	size_t len = strlen(src), klen;
	char *key;
	struct file_rec *r;

	start_load(&ld, p, d);
	key = canonical(&ld, file);
	if (!key)
		key = hgc_arena_strdup(&p->arena, file);
	klen = strlen(key);
	r = hgc_arena_alloc(&p->arena, sizeof(*r) + klen + 1);
	memcpy(r->key, key, klen + 1);
	r->name = hgc_arena_strdup(&p->arena, file);
	r->src = hgc_arena_strndup(&p->arena, src, len);
	r->len = len;
	load_rec(&ld, r);
	return finish_load(&ld, nerr0, src_file, old);
}
