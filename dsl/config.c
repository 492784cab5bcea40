/*
 * config.c: config blocks.  Known keys are checked and stored in struct
 * hgc_config; use/pin/pass entries are kept as text for later stages.  A
 * config with errors is still registered, so that specs naming it do not
 * get a second, spurious error.
 */
#include <string.h>

#include "dsl/dsl_int.h"

static const char *const keys[] = {"threads", "backend", "dump", "cache"};
/* ORDER: enum hgc_backend, from HGC_BACKEND_INTERP on. */
static const char *const backends[] = {"interp", "c", "jit"};
/* ORDER: HGC_DUMP_* bits, lowest first. */
static const char *const dumps[] = {"graph", "fused", "tir", "llvm"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Index of word in names[0..n), or -1. */
static int lookup(const char *word, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(word, names[i]))
			return i;
	return -1;
}

/* `threads = N;`: a non-negative integer (0: the machine's cores). */
static void threads(struct hgc_load *ld, struct hgc_config *c, const struct hgc_ast *v)
{
	int64_t n;

	if (hgc_dsl_int(ld, v, "'threads'", &n) < 0)
		return;
	if (n < 0 || n > 4096) {
		hgc_dsl_error(ld, &v->loc, "'threads' must be between 0 and 4096, not %lld",
			      (long long)n);
		return;
	}
	c->threads = (int)n;
}

/* `backend = interp|c|jit;` */
static void backend(struct hgc_load *ld, struct hgc_config *c, const struct hgc_ast *v)
{
	const char *w = hgc_dsl_word(ld, v);
	int i;

	if (!w) {
		hgc_dsl_error(ld, &v->loc, "'backend' must be interp, c or jit");
		return;
	}
	i = lookup(w, backends, COUNT(backends));
	if (i < 0)
		hgc_dsl_unknown(ld, &v->loc, "backend", w, strlen(w), backends, COUNT(backends));
	else
		c->backend = (enum hgc_backend)(HGC_BACKEND_INTERP + i);
}

/* `cache = on|off;`: whether compiled graphs are kept on disk. */
static void cache(struct hgc_load *ld, struct hgc_config *c, const struct hgc_ast *v)
{
	const char *w = hgc_dsl_word(ld, v);

	if (!w || (strcmp(w, "on") && strcmp(w, "off")))
		hgc_dsl_error(ld, &v->loc, "'cache' must be on or off");
	else
		c->cache_off = !strcmp(w, "off");
}

/* One name of `dump = NAME;` or `dump = [NAME, ...];`. */
static void dump1(struct hgc_load *ld, struct hgc_config *c, const struct hgc_ast *v)
{
	const char *w = hgc_dsl_word(ld, v);
	int i;

	if (!w) {
		hgc_dsl_error(ld, &v->loc, "'dump' takes graph, fused, tir or llvm");
		return;
	}
	i = lookup(w, dumps, COUNT(dumps));
	if (i < 0)
		hgc_dsl_unknown(ld, &v->loc, "dump", w, strlen(w), dumps, COUNT(dumps));
	else
		c->dumps |= 1u << i;
}

/* `key = value;`: one of the known keys, each at most once (seen: bits of keys[]). */
static void setting(struct hgc_load *ld, struct hgc_config *c, unsigned *seen,
		    const struct hgc_ast *s)
{
	const struct hgc_ast *v = s->a;
	int k;

	for (k = 0; k < COUNT(keys) && !hgc_dsl_tok_is(&s->tok, keys[k]); k++)
		;
	if (k == COUNT(keys)) {
		hgc_dsl_unknown(ld, &s->loc, "config key", s->tok.z, (size_t)s->tok.n, keys,
				COUNT(keys));
		return;
	}
	if (*seen & 1u << k) {
		hgc_dsl_error(ld, &s->loc, "duplicate config key '%s'", keys[k]);
		return;
	}
	*seen |= 1u << k;
	if (k == 0)
		threads(ld, c, v);
	else if (k == 1)
		backend(ld, c, v);
	else if (k == 3)
		cache(ld, c, v);
	else if (v->kind == HGC_AST_LIST)
		for (v = v->a; v; v = v->next)
			dump1(ld, c, v);
	else
		dump1(ld, c, v);
}

/* The text of a pin or pass value: a number, a name or a string. */
static const char *value_text(struct hgc_load *ld, const struct hgc_ast *v)
{
	if (v->kind == HGC_AST_INT || v->kind == HGC_AST_FLOAT)
		return hgc_arena_printf(&ld->p->arena, "%s%.*s", v->neg ? "-" : "", v->tok.n,
					v->tok.z);
	if (v->kind == HGC_AST_BOOL)
		return hgc_dsl_tok_str(&ld->p->arena, &v->tok);
	return hgc_dsl_word(ld, v);
}

/* Add a use/pin/pass entry unless one of the same kind and key exists. */
static void entry(struct hgc_load *ld, struct hgc_vec *ents, struct hgc_names *seen,
		  const char *kind, const char *key, const char *value, const struct hgc_ast *at)
{
	struct hgc_config_entry *e;
	const char *both = hgc_arena_printf(&ld->p->arena, "%s %s", kind, key);

	if (hgc_dsl_names_get(seen, both, (int)strlen(both)) >= 0) {
		hgc_dsl_error(ld, &at->loc, "duplicate '%s' in config", both);
		return;
	}
	hgc_dsl_names_put(seen, both, (int)strlen(both), 1);
	e = hgc_vec_push(ents);
	e->kind = kind;
	e->key = key;
	e->value = value;
	e->loc = at->loc;
}

/* `use T for OP;` `pin T.P = V;` `pass NAME = on|off;` */
static void reserved(struct hgc_load *ld, struct hgc_vec *ents, struct hgc_names *seen,
		     const struct hgc_ast *s)
{
	struct hgc_arena *a = &ld->p->arena;
	const char *v;

	switch (s->kind) {
	case HGC_AST_USE:
		entry(ld, ents, seen, "use", hgc_dsl_tok_str(a, &s->a->tok), hgc_dsl_tok_str(a, &s->tok), s);
		break;
	case HGC_AST_PIN:
		v = value_text(ld, s->b);
		if (!v)
			hgc_dsl_error(ld, &s->b->loc, "a pinned value must be a number or a name");
		else
			entry(ld, ents, seen, "pin", hgc_arena_printf(a, "%.*s.%.*s", s->tok.n, s->tok.z,
								 s->a->tok.n, s->a->tok.z), v, s);
		break;
	case HGC_AST_PASS:
		v = hgc_dsl_word(ld, s->a);
		if (!v || (strcmp(v, "on") && strcmp(v, "off")))
			hgc_dsl_error(ld, &s->a->loc, "pass '%.*s' must be on or off", s->tok.n,
				      s->tok.z);
		else
			entry(ld, ents, seen, "pass", hgc_dsl_tok_str(a, &s->tok), v, s);
		break;
	default:
		hgc_bug("unexpected config node %d", (int)s->kind);
	}
}

/* Register c unless its name is taken. */
static void add_config(struct hgc_load *ld, struct hgc_config *c)
{
	int k = hgc_dsl_names_get(&ld->config_names, c->name, (int)strlen(c->name));
	const struct hgc_config *old;

	if (k >= 0) {
		old = HGC_PROGRAM_CONFIG(ld->p, k);
		hgc_dsl_error(ld, &c->loc, "redefinition of config '%s'", c->name);
		hgc_dsl_note(ld, &old->loc, "previous definition of config '%s' is here", old->name);
		return;
	}
	hgc_dsl_names_put(&ld->config_names, c->name, (int)strlen(c->name), (int)ld->p->configs.len);
	*(struct hgc_config **)hgc_vec_push(&ld->p->configs) = c;
}

/* Check a config block and add it to the program. */
void hgc_dsl_check_config(struct hgc_load *ld, const struct hgc_ast *blk)
{
	struct hgc_config *c = hgc_arena_calloc(&ld->p->arena, 1, sizeof(*c));
	const struct hgc_ast *s;
	struct hgc_vec ents;
	struct hgc_names seen_entries;
	unsigned seen_keys = 0;

	c->name = hgc_dsl_tok_str(&ld->p->arena, &blk->tok);
	c->loc = blk->loc;
	hgc_vec_init(&ents, sizeof(struct hgc_config_entry));
	hgc_dsl_names_init(&seen_entries);
	for (s = blk->a; s; s = s->next) {
		if (s->kind == HGC_AST_SETTING)
			setting(ld, c, &seen_keys, s);
		else
			reserved(ld, &ents, &seen_entries, s);
	}
	hgc_dsl_names_release(&seen_entries);
	c->nentries = (int)ents.len;
	c->entries = hgc_arena_calloc(&ld->p->arena, ents.len, sizeof(*c->entries));
	if (ents.len)
		memcpy(c->entries, ents.data, ents.len * sizeof(*c->entries));
	hgc_vec_release(&ents);
	add_config(ld, c);
}
