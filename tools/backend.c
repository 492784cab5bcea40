/*
 * backend.c: the table of backends `hgc run` can run a spec on.  Adding a
 * backend is one row: a name and its compile/run/release/explain functions.
 * A row without functions names a backend this build does not have yet.
 * The c and jit rows compile through the driver (core/driver/driver.h),
 * which caches compiled graphs in memory and, for the JIT, on disk.
 */
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

/* The interpreter needs no compiled form: the handle is the graph itself. */
static void *interp_compile(const struct hgc_graph *g, const struct hgc_config *cfg,
			    struct hgc_diag *d)
{
	return (void *)g;
}

/* Run the reference interpreter. */
static int interp_run(void *h, const struct hgc_graph *g, const void *const *in,
		      void *const *out, struct hgc_diag *d)
{
	return hgc_interp_run(g, in, out, d);
}

/* Nothing to release: the handle is borrowed. */
static void interp_release(void *h)
{
}

/* The interpreter's plan: every op alone, in graph order. */
static void interp_explain(FILE *f, const void *h, const struct hgc_graph *g)
{
	size_t n = g->ops.len;

	fprintf(f, "  plan: no fusion yet: each of the %zu op%s runs unfused in the "
		   "interpreter,\n        in graph order, with naive loops on plain "
		   "row-major buffers\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, i);

		fprintf(f, "    step %zu: %s alone -> %s\n", i + 1, hgc_op_table[op->kind].name,
			op->out[0]->name ? op->out[0]->name : "(unnamed)");
	}
}

/* A graph compiled by the driver (core/driver), and what compiling it did. */
struct compiled {
	struct hgc_driver_graph *h;
	struct hgc_driver_info info;
};

/* The driver's options from a config: its use, pin and pass entries as rules
   (malloc'ed into *rules, the caller frees them), the disk cache switch; threads
   from OpenMP (exec.c set it). */
void hgc_tool_driver_opts(const struct hgc_config *cfg, enum hgc_driver_backend b,
			  struct hgc_driver_opts *o, struct hgc_tmpl_rule **rules)
{
	int n = cfg ? cfg->nentries : 0;

	hgc_driver_opts_init(o);
	o->backend = b;
	*rules = hgc_xcalloc((size_t)n + 1, sizeof(**rules));
	for (int i = 0; i < n; i++) {
		const struct hgc_config_entry *e = &cfg->entries[i];

		(*rules)[i] = (struct hgc_tmpl_rule){ e->kind, e->key, e->value, e->loc };
	}
	o->rules = *rules;
	o->nrules = n;
	o->disk_cache = !(cfg && cfg->cache_off);
}

/* The place of cfg's `use` rule that a plan's warning line quotes ("warning: use T for
   OP: ..."), or NULL. */
static const struct hgc_loc *use_rule_at(const struct hgc_config *cfg, const char *w, size_t n)
{
	char quote[256];

	for (int i = 0; cfg && i < cfg->nentries; i++) {
		const struct hgc_config_entry *e = &cfg->entries[i];

		if (strcmp(e->kind, "use"))
			continue;
		snprintf(quote, sizeof(quote), HGC_TMPL_USE_WARNING, e->value, e->key);
		if (n >= strlen(quote) && !strncmp(w, quote, strlen(quote)))
			return &e->loc;
	}
	return NULL;
}

/* The warnings of a plan (its lines from "warning: " on) on stderr, at the place of the
   config rule they are about. */
static void print_warnings(const char *plan, const struct hgc_config *cfg)
{
	const char *p = plan, *end, *w;
	const struct hgc_loc *at;

	while (p && *p) {
		end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		w = memmem(p, (size_t)(end - p), "warning: ", 9);
		if (w) {
			at = use_rule_at(cfg, w, (size_t)(end - w));
			if (at && at->file)
				fprintf(stderr, "%s:%d:%d: ", at->file, at->line, at->col);
			fprintf(stderr, "%.*s\n", (int)(end - w), w);
		}
		p = *end ? end + 1 : end;
	}
}

/* Compile through the driver (the cache first) for backend b. */
static void *drv_compile(const struct hgc_graph *g, const struct hgc_config *cfg,
			 enum hgc_driver_backend b, struct hgc_diag *d)
{
	struct compiled *c = hgc_xcalloc(1, sizeof(*c));
	struct hgc_driver_opts o;
	struct hgc_tmpl_rule *rules;

	hgc_tool_driver_opts(cfg, b, &o, &rules);
	c->h = hgc_driver_compile(g, &o, &c->info, d);
	free(rules);
	if (!c->h) {
		free(c);
		return NULL;
	}
	print_warnings(c->h->plan, cfg);
	return c;
}

/* The C backend: C source, cc, dlopen. */
static void *c_compile(const struct hgc_graph *g, const struct hgc_config *cfg,
		       struct hgc_diag *d)
{
	return drv_compile(g, cfg, HGC_DRIVER_C, d);
}

/* The JIT backend: LLVM O3, ORC. */
static void *jit_compile(const struct hgc_graph *g, const struct hgc_config *cfg,
			 struct hgc_diag *d)
{
	return drv_compile(g, cfg, HGC_DRIVER_JIT, d);
}

/* Run compiled code: args are the inputs, then the outputs. */
static int drv_run(void *h, const struct hgc_graph *g, const void *const *in,
		   void *const *out, struct hgc_diag *d)
{
	return hgc_driver_run(((struct compiled *)h)->h, in, out, d);
}

/* Drop our reference (the cache keeps its own). */
static void drv_release(void *h)
{
	struct compiled *c = h;

	hgc_driver_release(c->h);
	free(c);
}

/* The compiled plan: per-op loop nests, the compile time and the cache's answer. */
static void drv_explain(FILE *f, const void *h, const struct hgc_graph *g)
{
	const struct compiled *c = h;
	const struct hgc_driver_info *i = &c->info;
	size_t n = g->ops.len;

	fprintf(f, "  plan: %zu op%s after the graph passes, lowered to Tensor IR in graph order:\n"
		   "        MatMul/Convolution through templates with post-ops fused at an anchor,\n"
		   "        every other op as its own loop nest\n", n, n == 1 ? "" : "s");
	hgc_tool_print_diag(f, "    ", c->h->plan);
	fprintf(f, "  compile: %s, %.3f ms, cache %s", hgc_driver_backend_name(c->h->backend),
		i->seconds * 1e3, i->source == HGC_DRIVER_MISS ? "miss" : "hit");
	if (i->source == HGC_DRIVER_MEMORY)
		fprintf(f, " in memory (compiled in %.3f ms before)", c->h->compile_time * 1e3);
	else if (i->source == HGC_DRIVER_DISK)
		fprintf(f, " on disk: %s", i->path);
	else if (i->path[0])
		fprintf(f, ", object code stored in %s", i->path);
	fprintf(f, "\n    key %s%s%s\n", c->h->key, i->note[0] ? "; " : "", i->note);
}

/* ORDER: least to most preferred; HGC_BACKEND_DEFAULT is the last one built in. */
static const struct hgc_tool_backend backends[] = {
	{"interp", HGC_BACKEND_INTERP, "the reference interpreter (naive loops, plain layouts)",
	 interp_compile, interp_run, interp_release, interp_explain},
	{"c", HGC_BACKEND_C, "Tensor IR emitted as C, compiled by cc and loaded", c_compile,
	 drv_run, drv_release, drv_explain},
	{"jit", HGC_BACKEND_JIT, "Tensor IR through LLVM O3 and the ORC JIT", jit_compile,
	 drv_run, drv_release, drv_explain},
};

#define NBACKENDS ((int)(sizeof(backends) / sizeof(backends[0])))

/* The backend called name (available or not), or NULL. */
const struct hgc_tool_backend *hgc_tool_backend_find(const char *name)
{
	for (int i = 0; i < NBACKENDS; i++)
		if (!strcmp(backends[i].name, name))
			return &backends[i];
	return NULL;
}

/* The backend of a config's kind; HGC_BACKEND_DEFAULT is the best one built in. */
const struct hgc_tool_backend *hgc_tool_backend_of(enum hgc_backend kind)
{
	const struct hgc_tool_backend *best = &backends[0];

	for (int i = 0; i < NBACKENDS; i++) {
		if (backends[i].kind == kind)
			return &backends[i];
		if (backends[i].compile)
			best = &backends[i];
	}
	return best;
}

/* The names of every backend, for messages; returns how many were stored. */
int hgc_tool_backend_names(const char **names, int cap)
{
	int n = 0;

	for (int i = 0; i < NBACKENDS && n < cap; i++)
		names[n++] = backends[i].name;
	return n;
}
